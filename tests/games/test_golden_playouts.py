"""Golden playouts: engine speed work must not change a single bit of any match.

For every game and variant, 50 seeded random matches (seats cycling from the game's minimum to its
maximum, seed ``i``, the chooser seeded ``i ^ 0x5EED`` as in :func:`tests.games.contract.random_playout`)
are played through ``game.apply``. Each step feeds one SHA-256 per match with, in order: the acting seat,
its legal actions, the action, the new state's JSON, the events, who acts next with each of their legal
actions, the result, and the view of every seat and of the spectator. The digests were recorded before
the engines were made faster (``golden_playouts.json`` beside this file); any later change to a state,
an event, a legal list or a view -- even a reordering -- changes them.

Regenerate only for an intended rule change, never for a speed change::

    GRIMOIRE_GOLDEN_REGENERATE=1 pytest tests/games/test_golden_playouts.py

The digests of all 50 matches are recorded; the test run checks the first 20 of each (the CI budget:
the chain alone takes a minute for 50). All 50, the local long mode::

    GRIMOIRE_GOLDEN_MATCHES=50 pytest tests/games/test_golden_playouts.py
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from service.engine.rng import Rng
from service.games import all_games

DATA = Path(__file__).with_name("golden_playouts.json")
RECORDED = 50
MATCHES = min(int(os.environ.get("GRIMOIRE_GOLDEN_MATCHES", "20")), RECORDED)
MAX_ACTIONS = 2000
GAMES = all_games()
CASES = [(game_id, variant) for game_id, game in GAMES.items() for variant in game.variant_ids()]


def _dump(data) -> bytes:
    # How the store writes states (service.store.matches._dumps), so key order is not pinned, content is.
    return json.dumps(data, separators=(",", ":"), sort_keys=True).encode()


def match_digest(game, variant: str, seed: int) -> str:
    seats = game.min_seats + seed % (game.max_seats - game.min_seats + 1)
    options = game.check_options(variant, {}, seats)
    state = game.setup(options, seats, seed)
    chooser = Rng(seed ^ 0x5EED)
    digest = hashlib.sha256(_dump(state))
    viewers = [*range(seats), None]
    for _ in range(MAX_ACTIONS):
        if game.result(state) is not None:
            break
        acting = sorted(game.to_act(state))
        seat = chooser.choice(acting)
        actions = game.legal_actions(state, seat)
        action = chooser.choice(actions)
        old, before = state, _dump(state)
        state, events = game.apply(old, seat, action)
        # the input state is untouched, and the new one is plain JSON (it goes to Redis as such)
        assert _dump(old) == before and json.loads(_dump(state)) == state
        digest.update(_dump([seat, actions, action]))
        digest.update(_dump(state))
        digest.update(_dump(events))
        waiting = sorted(game.to_act(state))
        digest.update(_dump([[s, game.legal_actions(state, s)] for s in waiting]))
        digest.update(_dump(game.result(state)))
        for viewer in viewers:
            digest.update(_dump(game.view(state, viewer)))
    return digest.hexdigest()


def _digests(game_id: str, variant: str, count: int) -> list[str]:
    game = GAMES[game_id]
    return [match_digest(game, variant, seed) for seed in range(count)]


def _recorded() -> dict:
    return json.loads(DATA.read_text()) if DATA.exists() else {}


@pytest.mark.parametrize("game_id,variant", CASES, ids=[f"{g}/{v}" for g, v in CASES])
def test_golden_playouts(game_id: str, variant: str) -> None:
    key = f"{game_id}/{variant}"
    if os.environ.get("GRIMOIRE_GOLDEN_REGENERATE"):
        recorded = _recorded()
        recorded[key] = _digests(game_id, variant, RECORDED)
        DATA.write_text(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n")
        return
    recorded = _recorded()
    assert len(recorded.get(key, [])) == RECORDED, f"no golden digests for {key}; see this module's docstring"
    digests = _digests(game_id, variant, MATCHES)
    changed = [seed for seed, (a, b) in enumerate(zip(digests, recorded[key])) if a != b]
    assert not changed, f"{key}: seeded matches {changed} no longer play bit for bit as recorded"


def test_every_variant_recorded() -> None:
    assert sorted(_recorded()) == sorted(f"{g}/{v}" for g, v in CASES)
