"""Parts of a Casting Stones view, built once per distinct value and shared between views.

A view is asked for after every action (the answer to a submission, every follower's update, the bots'
input), and most of it does not change from one action to the next: a hand's stones and faces, the
Libraries, the Vaults, the Tower Mat, the last compared turn. Building those lists of dicts afresh was
most of the view's time, so each part is made here by a function of plain hashable values (tuples of
ids, the faces string, the turret owners), remembered in a bounded cache, and the same list handed to
every view that shows that value.

Sharing is safe because nothing that receives a view changes it in place: the service JSON-encodes it
(REST, updates), the GraphQL converter reads it into new objects (``schema/game_types.py``), the bots
and :mod:`.determinise` read it and build their own data, replays keep it to encode later. **Don't
mutate a view's lists or dicts**; copy what you need to change (a top-level key of the view's own dict
may be set or popped: that dict is new on every call).

Each function returns exactly what the inline code it replaces built, so views are equal, key order
included, to what they were (``tests/games/test_golden_playouts.py`` hashes every view).
"""

from __future__ import annotations

import marshal
from functools import lru_cache
from typing import Any

from .cards import CARDS
from .casts import FACE_NAMES
from .catalogue import STONES, TURRET_NAMES, TURRETS

#: Distinct values remembered per part: far more than the parts a few thousand live matches show at once,
#: and small enough to bound the memory (a part is a few small dicts).
_CACHED = 4096


@lru_cache(maxsize=_CACHED)
def hand(stones: tuple[str, ...], faces: str, declared: tuple[tuple[str, str], ...]) -> list[dict[str, Any]]:
    """A Casting Hand as the view shows it: each stone's public fields, the face it shows ("uncast" past
    the faces given, e.g. during set-up) and what a wild Chaser was declared as (``declared``: the
    state's ``{stone: type}`` items)."""
    kinds = dict(declared)
    return [_stone_in_hand(x, FACE_NAMES[faces[i]] if i < len(faces) else "uncast", kinds.get(x, "none"))
            for i, x in enumerate(stones)]


@lru_cache(maxsize=_CACHED)   # holds every stone showing each face, declared as each type
def _stone_in_hand(stone: str, face: str, declared: str) -> dict[str, Any]:
    """One stone of a hand: a cast changes one hand's faces, and its other stones keep their entries."""
    return {**STONES[stone]._public, "face": face, "declared": declared}


@lru_cache(maxsize=_CACHED)
def cards(ids: tuple[str, ...]) -> list[dict[str, Any]]:
    """Casting Cards as a view shows them (``Card.public``)."""
    return [CARDS[c].public() for c in ids]


@lru_cache(maxsize=_CACHED)
def stones(ids: tuple[str, ...]) -> list[dict[str, Any]]:
    """Stones (the pool, a Vault) as full catalogue entries (``Stone.entry``)."""
    return [STONES[x].entry() for x in ids]


@lru_cache(maxsize=_CACHED)
def turrets(owners: tuple[int | None, ...]) -> list[dict[str, Any]]:
    """The Tower Mat: each turret's index, name and the seat holding it (None: empty)."""
    return [{"index": t, "name": TURRET_NAMES[t], "seat": owners[t]} for t in range(TURRETS)]


#: ``to_pick`` outside the set-up draft: nothing left to pick of any type.
NOTHING_TO_PICK = {"character": 0, "artifact": 0, "element": 0}

_last_turns: dict[bytes, dict[str, Any]] = {}


def last_turn(last: dict[str, Any], build) -> dict[str, Any]:
    """``build(last)``, the view of the last compared turn, remembered by the value of ``last``.

    ``last`` holds lists and dicts, so it is keyed by its ``marshal`` bytes (format 2, no back-references):
    equal bytes mean equal values of the same types, and an equal value written in another key order only
    misses the cache. Cleared when full rather than kept in order (a match's last turn changes once a turn).
    """
    key = marshal.dumps(last, 2)
    shown = _last_turns.get(key)
    if shown is None:
        if len(_last_turns) >= _CACHED:
            _last_turns.clear()
        shown = _last_turns[key] = build(last)
    return shown
