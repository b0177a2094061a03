"""Casting Stones' Seconds, read exactly two casts deep: the ``strong`` level's re-casts and tips.

The greedy level scores a re-cast by its odds against the opponent's cast as it lies. When the bot
decides first ("Whoever cast first in Step 1 goes first again and decides whether or not they want to
make a second cast ... their opponent waits until they finish", SECONDS) and the opponent's first cast
failed, the opponent has not finished: they will re-cast too, knowing the bot's result. Then a Potion
is a poor aim (any Spell beats it, and Spells are the likeliest good cast) and a Charm a good one (only
a Potion or a higher Charm beats it). Here every outcome of the bot's choice is scored against the
opponent's best reply: keep, or re-cast the subset that beats it most often.

Pure functions over the seat's view and the games' cast-reading helpers; every face lands symbol or
number at even odds (a Leaner, 1 in 20 by default, is left out, as in the greedy level).
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import Any

from service.games.casting_stones.casts import BUNGLE, PENDING, read_cast, winner_of

from .greedy import _FACE, _cast, _player

Action = dict[str, Any]
View = dict[str, Any]

#: The decisions read here; a few hundred random rollouts, which lump every landing of the stones
#: into one tree node, only add noise to exact odds.
ACTIONS = frozenset({"keep", "recast", "tip"})

#: What a result is worth to the bot: a win 1, a tie between good casts 0.4 (a new hand is cast), else 0.
_TIE = 0.4


def choose(view: View, seat: int, legal: list[Action]) -> int:
    """The index in ``legal`` (``keep``, ``recast`` and ``tip`` actions) of the best decision."""
    hand, faces = _cast(_player(view, seat))
    other = _player(view, 1 - seat)
    their_hand, their_faces = _cast(other)
    hand, their_hand = tuple(hand), tuple(their_hand)
    their_faces = their_faces.replace("l", "?").replace("-", "?")
    replies = (view["first_caster"] == seat and not other["recast"]
               and read_cast(list(their_hand), their_faces)[0] == BUNGLE)
    scores = [_expected(hand, _after(faces, hand, action), their_hand, their_faces, replies) for action in legal]
    return max(range(len(legal)), key=lambda i: scores[i])


def _after(faces: str, hand: tuple[str, ...], action: Action) -> str:
    """The faces once ``action`` is taken, a ``"?"`` for every stone whose landing is not known yet."""
    chars = list(faces)
    if action["type"] == "tip":
        chars[hand.index(action["stone"])] = _FACE[action["face"]]
    for stone in action.get("stones", []):
        chars[hand.index(stone)] = "?"
    return "".join("?" if c == "l" else c for c in chars)


def _expected(hand, faces: str, their_hand, their_faces: str, replies: bool) -> float:
    """The bot's mean value over every landing of its unknown faces."""
    outcomes = _landings(faces)
    return sum(_value(read_cast(list(hand), f), their_hand, their_faces, replies) for f in outcomes) / len(outcomes)


@lru_cache(maxsize=4096)
def _landings(faces: str) -> tuple[str, ...]:
    unknown = [i for i, c in enumerate(faces) if c == "?"]
    out = []
    for landing in itertools.product("sn", repeat=len(unknown)):
        chars = list(faces)
        for position, face in zip(unknown, landing):
            chars[position] = face
        out.append("".join(chars))
    return tuple(out)


@lru_cache(maxsize=65536)
def _value(mine: tuple[str, int | None], their_hand, their_faces: str, replies: bool) -> float:
    """What the bot's cast ``mine`` is worth: against the opponent's cast as it lies or, when they are
    still to re-cast, against the reply that leaves the bot least."""
    if mine[0] == PENDING:
        return 0.0
    worst = _mean(mine, their_hand, their_faces)  # they keep (a Leaner of theirs lands either way)
    if replies:
        for size in range(1, len(their_faces) + 1):
            for subset in itertools.combinations(range(len(their_faces)), size):
                chars = list(their_faces)
                for i in subset:
                    chars[i] = "?"
                worst = min(worst, _mean(mine, their_hand, "".join(chars)))
    return worst


def _mean(mine: tuple[str, int | None], their_hand, their_faces: str) -> float:
    outcomes = _landings(their_faces)
    return sum(_against(mine, read_cast(list(their_hand), f)) for f in outcomes) / len(outcomes)


def _against(mine: tuple[str, int | None], theirs: tuple[str, int | None]) -> float:
    winner = winner_of([mine[0], theirs[0]], [mine[1], theirs[1]])
    return 1.0 if winner == 0 else 0.0 if winner == 1 else (_TIE if mine[0] != BUNGLE else 0.0)
