"""The bot levels, apart from Redis: legal choices, whole matches, strength, and what a bot may read;
and the ``board`` bot, which plays the board itself (McGonagall's chess)."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from service.engine import BOARD_SEAT
from service.games import all_games
from service.games.sorcerers_stone import GAME as SORCERERS_STONE
from service.store import UnknownBotLevel
from service.store.bots import BOT_LEVELS, check_level
from tests.games.sorcerers_stone.test_mcgonagall import state_with
from workers import bots
from workers.bots import BotInput

BOTS_DIR = Path(bots.__file__).parent
GAMES = all_games()


def play(game, levels: list[str], seed: int, seats: int | None = None, variant: str | None = None):
    seats = seats or game.min_seats
    state = game.setup(game.check_options(variant, {}, seats), seats, seed)
    rng = random.Random(seed)
    for _ in range(20000):
        if game.result(state) is not None:
            return game.result(state)
        seat = rng.choice(sorted(game.to_act(state)))
        legal = game.legal_actions(state, seat)
        level = bots.BOARD_LEVEL if seat == BOARD_SEAT else levels[seat]
        action = bots.choose(level, BotInput(game.id, seat, game.view(state, bots.viewer(seat)), legal), rng)
        assert action in legal
        state, _ = game.apply(state, seat, action)
    raise AssertionError("the match did not end")


def test_levels_agree_with_the_store():
    """Every level the store accepts has a bot, and no other; the board's bot is not a level a seat can get."""
    assert set(BOT_LEVELS) == set(bots.LEVELS)
    assert bots.BOARD_LEVEL not in BOT_LEVELS
    with pytest.raises(UnknownBotLevel):
        check_level(bots.BOARD_LEVEL)


def test_unknown_levels_are_refused():
    assert check_level("strong") == "strong"
    with pytest.raises(UnknownBotLevel, match="no bot level"):
        check_level("godlike")


@pytest.mark.parametrize("game_id", sorted(GAMES))
@pytest.mark.parametrize("level", ["random", "greedy"])  # strong plays whole games in test_strong.py
def test_every_level_plays_every_game_to_the_end(game_id, level):
    game = GAMES[game_id]
    for seats in range(game.min_seats, game.max_seats + 1):
        for seed in range(2):
            assert play(game, [level] * seats, seed, seats) is not None


#: Where greedy is measured against random: each game's default variant, but for the Sorcerer's Stone the
#: challenges a choice can win. The chain ends on the Mirror of Erised (turning cards: luck alone), and
#: Quirrell's Challenge has no choice at all; Flitwick's is mostly the spinner. 24 matches each there.
SKILL_VARIANTS = {"sorcerers-stone": ["hagrid", "sprout", "mcgonagall", "snape"]}


@pytest.mark.parametrize("game_id, variant", [(g, v) for g in sorted(GAMES) for v in SKILL_VARIANTS.get(g, [None])])
def test_greedy_beats_random(game_id, variant):
    game = GAMES[game_id]
    greedy = random_wins = 0
    for seed in range(24 if variant else 12):
        levels = ["greedy", "random"] if seed % 2 == 0 else ["random", "greedy"]
        winners = play(game, levels, seed, variant=variant)["winners"]
        if len(winners) == 1:
            greedy += levels[winners[0]] == "greedy"
            random_wins += levels[winners[0]] == "random"
    assert greedy >= 2 * max(random_wins, 1), (greedy, random_wins)


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(("." * node.level) + (node.module or ""))
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


#: Modules that search: they may use the games' rules objects, but only on states they build from the view
#: with ``Game.determinise`` (``test_strong.py`` checks that hidden cards cannot change their choice).
SEARCHERS = {"strong.py"}


@pytest.mark.parametrize("path", sorted(BOTS_DIR.glob("*.py")), ids=lambda p: p.name)
def test_bot_code_cannot_reach_hidden_state(path):
    """Bots import no store, no job, no Redis, no game rules object: their only input is the view."""
    forbidden = ("service.store", "workers.jobs", "workers.dispatch", "workers.runtime", "rq", "redis",
                 "service.games.all_games", ".rules", "GAME")
    if path.name in SEARCHERS:
        forbidden = forbidden[:6] + (".rules", "GAME")
    for name in _imports(path):
        assert not any(name.startswith(f) or name.endswith(f) or f".{f}" in name for f in forbidden), name
    source = path.read_text()
    assert ".apply(" not in source and "setup(" not in source
    if path.name in SEARCHERS:
        # the only states it plays on are its own determinisations
        assert "determinise(" in source and "bot_input.view" in source
    else:
        assert ".legal_actions(" not in source


# -- the board bot ------------------------------------------------------------------------------


def board_choices(fen: str, players, seeds=range(1), **kwargs) -> set[str]:
    """What the ``board`` bot plays, over ``seeds``, for the colour no player holds in a hand-built
    McGonagall position, given what the job gives it: the spectator's view and the board's actions."""
    state = state_with(fen, players, **kwargs)
    state["boards"]["mcgonagall"]["board_to_move"] = True
    assert SORCERERS_STONE.to_act(state) == {BOARD_SEAT}
    legal = SORCERERS_STONE.legal_actions(state, BOARD_SEAT)
    bot_input = BotInput(SORCERERS_STONE.id, BOARD_SEAT, SORCERERS_STONE.view(state, None), legal)
    chosen = set()
    for seed in seeds:
        action = bots.choose(bots.BOARD_LEVEL, bot_input, random.Random(seed))
        assert action in legal
        chosen.add(action["uci"])
    return chosen


def test_the_board_bot_takes_a_harry_first():
    """House rule (docs/rules/sorcerers-stone.md): the board takes a Harry (the complete rules: the king
    first), else the most valuable piece, else a move drawn by lot (workers/bots/board.json)."""
    assert board_choices("3q4/8/8/8/b2R4/8/8/k3K3 w - - 0 1", [("black", "a4"), ("black", None)], range(10)) == {"d4a4"}
    assert board_choices("3q4/8/8/8/b2R3k/8/8/4K3 w - - 0 1", [("black", "a4"), ("black", None)], range(10),
                         rules="complete") == {"d4h4"}
    assert board_choices("3q4/8/8/8/3R4/8/8/k3K2b w - - 0 1", [("black", "h1"), ("black", None)], range(10)) == {"d4d8"}
    assert board_choices("8/8/8/8/8/8/4P3/4K2b w - - 0 1", [("black", "h1"), ("black", None)], range(30)) == {
        "e2e3", "e2e4", "e1d1", "e1d2", "e1f1", "e1f2"}


def test_the_board_bot_counts_en_passant_as_taking_a_pawn():
    """En passant lands on an empty square but takes a pawn: the only capture here, so always played."""
    assert board_choices("4kb2/8/8/3pP3/8/8/8/4K3 w - d6 0 1", [("black", "f8"), ("black", None)], range(10),
                         rules="complete") == {"e5d6"}


def test_the_board_bot_passes_when_it_must():
    state = state_with("2b2b2/1p1p4/1P1P4/8/8/8/8/8 w - - 0 1", [("black", "c8"), ("black", "f8")])
    state["boards"]["mcgonagall"]["board_to_move"] = True
    legal = SORCERERS_STONE.legal_actions(state, BOARD_SEAT)
    bot_input = BotInput(SORCERERS_STONE.id, BOARD_SEAT, SORCERERS_STONE.view(state, None), legal)
    assert bots.choose(bots.BOARD_LEVEL, bot_input, random.Random(1)) == {"type": "mcgonagall_board_pass"}
