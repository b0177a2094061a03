"""The engine contract and property tests over seeded random matches."""

import json
from collections import Counter

import jsonschema

from service.games.casting_stones import GAME
from service.games.casting_stones.catalogue import GEMS_PER_PLAYER, TURRETS, set_stones
from service.games.casting_stones.rules import holds_run
from tests.games.casting_stones.helpers import assert_match_ended, assert_winner_casts_first
from tests.games.contract import PROPERTY_GAMES, check_contract, random_playout

STARTER = Counter(set_stones("starter"))
VIEW = jsonschema.Draft202012Validator(GAME.view_schema)


#: The action types of the Basic Game (the Intermediate and Advanced games add theirs: test_variants_contract.py).
BASIC_ACTIONS = {"pick", "cast", "tip", "keep", "recast", "place", "swap_gems", "swap_stone", "knock_gem",
                 "knock_stone", "replace"}


def _covering_seed(limit=200):
    """The first seed whose random match (under 400 actions) uses every Basic Game action type."""
    for seed in range(limit):
        playout = random_playout(GAME, "basic", 2, seed)
        if len(playout.steps) < 400 and {s.action["type"] for s in playout.steps} == BASIC_ACTIONS:
            return seed
    raise AssertionError("no seed below the limit plays every action type")


def test_engine_contract_basic_game():
    """tests/games/contract.py over whole random matches. It validates three views per action (a few ms each),
    so it runs on two complete matches: seed 1 and the first seed whose match plays all eleven action types
    (pick to replace); PROPERTY_GAMES more matches are checked below."""
    check_contract(GAME, "basic", 2, [1, _covering_seed()])


def test_schema_declares_every_action_the_game_offers():
    """The actions schema names exactly the action types the rules produce (contract: actions are typed)."""
    assert set(GAME.action_schemas) == BASIC_ACTIONS | {"take_card", "bring", "declare", "swap_card", "knock_card"}
    assert all(prop.get("default") is not None for prop in GAME.options_schema["properties"].values())


def _check_invariants(state, options):
    """The invariants of the brief: stones conserved, one gem a turret, 6 gems a player, 5-stone hands."""
    stones = Counter(state["pool"] + state["hands"][0] + state["hands"][1] + state["vault"][0])
    assert stones == STARTER, "the 12 starter stones are always all somewhere, once"
    assert len(state["gems"]) == TURRETS and all(g in (None, 0, 1) for g in state["gems"])
    for seat in (0, 1):
        placed = sum(1 for g in state["gems"] if g == seat)
        assert placed + state["line"][seat] == GEMS_PER_PLAYER
        if state["turn"] >= 1:
            knocked_out = state["ph"] == "replace" and state["act"] == seat
            assert len(state["hands"][seat]) == (4 if knocked_out else 5)
            assert len(state["faces"][seat]) == len(state["hands"][seat])
    if state["ph"] != "over":
        assert len(GAME.to_act(state)) == 1
    cap = options["max_turns"]
    assert not cap or state["turn"] <= cap


def test_property_random_matches_keep_the_invariants_and_end():
    """PROPERTY_GAMES seeded random matches, played to their end (four adjacent turrets, or the turn limit of
    docs "Turn limit" with no winner), keep the invariants in every state; the winner of a turn casts first
    on the next (000: "Whoever won the turn casts first on the following turn")."""
    endings = Counter()
    for seed in range(PROPERTY_GAMES):
        playout = random_playout(GAME, "basic", 2, seed, max_actions=50_000)
        options = playout.options
        _check_invariants(playout.initial, options)
        for step in playout.steps:
            before, after = step.state_before, step.state_after
            _check_invariants(after, options)
            assert all("audience" not in event for event in step.events), "everything on the table is public"
            assert_winner_casts_first(before, after)
        result = GAME.result(playout.final)
        final = playout.final
        assert_match_ended(result, final, options["max_turns"], seed)
        if not result["winners"]:
            assert not holds_run(final["gems"], 0) and not holds_run(final["gems"], 1)
        VIEW.validate(GAME.view(final, seed % 2))
        for seat in (None, 0, 1):
            assert str(final["rng"]) not in json.dumps(GAME.view(final, seat)), "the RNG state never leaves the state"
        endings[result["cause"]] += 1
    assert endings["four_turrets"] > endings["turn_limit"]


def test_every_seat_and_spectators_see_the_same_table():
    """Nothing is hidden in Casting Stones (docs: "Hidden information"): views differ only in "seat"."""
    playout = random_playout(GAME, "basic", 2, 11)
    for step in playout.steps[::20]:
        views = [GAME.view(step.state_after, seat) for seat in (None, 0, 1)]
        for view in views:
            view.pop("seat")
        assert views[0] == views[1] == views[2]


def test_the_same_seed_and_actions_replay_to_the_same_match():
    """Engine contract: "Same seed + same actions => identical states, bit for bit"; a different seed casts
    differently."""
    first = random_playout(GAME, "basic", 2, 42)
    again = random_playout(GAME, "basic", 2, 42)
    assert [s.state_after for s in first.steps] == [s.state_after for s in again.steps]
    other = random_playout(GAME, "basic", 2, 43, chooser_seed=42 ^ 0x5EED)
    assert [s.state_after["faces"] for s in other.steps[:30]] != [s.state_after["faces"] for s in first.steps[:30]]
