"""The Sorcerer's Stone match over the real boards: the engine contract of the
games in order, random chains played to the end and checked against the rule
book's turn order (independently of the match's own bookkeeping), hidden
information at match level, determinise, and the individual games' framing.

Rule book: /work/shared/seeds/002_5ac5154540885c00.txt. The chain's rules one
by one, on stand-in boards: tests/games/sorcerers_stone/test_chain.py.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from service.engine import Rng, clone, events_for
from service.games.sorcerers_stone import GAME
from service.games.sorcerers_stone.game import BOARDS, CHAIN, FACTS
from tests.games.contract import PROPERTY_GAMES, check_contract, random_playout

ORDER = [board.NAME for board in CHAIN]
#: Chains per property test: a chain is ~430 actions (~0.5 s); PROPERTY_GAMES=200 -> 25 chains.
CHAINS = max(6, PROPERTY_GAMES // 8)
#: The events the match itself emits (the boards' are prefixed with their name), and their fields.
MATCH_EVENTS = {
    "moved_on": {"type", "seat", "board", "held", "waiting"},
    "turn_began": {"type", "seat", "board"},
    "waited": {"type", "seat", "board", "left"},
    "wait_begins": {"type", "seat", "board", "waiting"},
    "goes_first": {"type", "seat", "board"},
    "spin_off": {"type", "spins"},
    "game_over": {"type", "winners"},
}


def chain(seats: int, seed: int, rules: str = "abbreviated"):
    return random_playout(GAME, "chain", seats, seed, max_actions=30000, options={"chess_rules": rules})


# -- the engine contract -------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_contract_of_the_games_in_order(seats):
    """tests/games/contract.py over whole random chains (the views of one step in
    ten are validated: a chain is some 400 actions, each view is large)."""
    check_contract(GAME, "chain", seats, range(2 if seats == 2 else 1), view_every=10)


@pytest.mark.parametrize("seats", [2, 4])
def test_contract_of_the_games_in_order_with_complete_chess(seats):
    """"NOTE: For McGonagall's Challenge, players may either play a complete game of
    Chess, or the abbreviated rules of Chess." """
    check_contract(GAME, "chain", seats, range(1), options={"chess_rules": "complete"}, view_every=10)


def test_schema_is_in_the_api_subset():
    """The GraphQL generator (schema/game_types.py) accepts the whole game's schema:
    every board's actions share one input type, so a field name means one type."""
    from schema.game_types import GameTypes
    types = GameTypes(GAME)
    assert set(types.action_types) == set(GAME.action_schemas)
    for action_schema in GAME.action_schemas.values():
        jsonschema.Draft202012Validator.check_schema(action_schema)
        assert action_schema["additionalProperties"] is False
        assert action_schema["properties"]["type"]["const"].split("_")[0] in BOARDS


def test_every_object_below_the_root_has_a_unique_title():
    titles = Counter()

    def walk(node, root):
        if isinstance(node, dict):
            if node.get("type") == "object" and not root:
                assert node.get("title", "")[:1].isupper(), node
            if "title" in node and (node.get("type") == "object" or "enum" in node):
                titles[(node["title"], json.dumps([e for e in node.get("enum", []) if e is not None]))] += 1
            for key, value in node.items():
                walk(value, False if key in ("properties", "items") or not root else root)
        elif isinstance(node, list):
            for value in node:
                walk(value, False)
    walk(GAME.view_schema, True)
    names = Counter(title for title, _enum in titles)
    # One title, one shape (the ChessRules enum appears in options and view alike).
    assert [t for t, n in names.items() if n > 1 and len({e for tt, e in titles if tt == t}) > 1] == []


def test_options_and_variants():
    assert GAME.variant_ids() == ["chain", "hagrid", "sprout", "flitwick", "mcgonagall", "mcgonagall-complete",
                                  "quirrell", "snape"]
    assert GAME.check_options("chain", {}, 3) == {"variant": "chain", "chess_rules": "abbreviated",
                                                  "quirrell_path": 20, "sprout_late_arrivals": "no_open_area"}
    state = GAME.setup(GAME.check_options("mcgonagall-complete", {}, 2), 2, 1)
    assert state["options"]["chess_rules"] == "complete"  # the variant fixes the chess rules


# -- random chains, checked against the rule book ----------------------------------------------------


def check_chain(playout) -> Counter:
    """Walk a random chain's actions and events and check the rules of "the games in
    order" from what happened, not from the match's own counters. Returns what was
    seen, for the coverage assertions."""
    seats = playout.seats
    seen = Counter()
    where = ["hagrid"] * seats
    turn = playout.initial["turn"]   # the seat whose regular turn is under way
    assert turn == 0                  # "The youngest player goes first"
    search_from = 1                   # where the next regular turn is looked for
    first_turn: dict[str, list[int]] = {name: [] for name in ORDER}  # first turn_began per board, in order
    first_turn["hagrid"].append(0)
    waits_on: dict[tuple[int, str], list[int]] = {}                  # (seat, board) -> step index of each wait
    released: dict[tuple[int, str], int] = {}
    fire_order: list[int] = []
    final_facts = playout.final["players"]
    for index, step in enumerate(playout.steps):
        before, after = step.state_before, step.state_after
        owner = GAME._owner(before)
        if owner is not None:
            # A decision out of turn: the board asked this seat.
            assert step.seat == owner[0]
            if step.action["type"] == "flitwick_reveal":
                fire_order.append(step.seat)
        else:
            # "they continue to take their turns in the regular turn order"
            assert step.seat == turn == before["turn"], (index, step.seat, turn)
            assert step.action["type"].split("_")[0] == where[step.seat], "a seat plays the board it is on"
        for event in step.events:
            kind = event["type"]
            if kind == "moved_on":
                # "Arrange gameboards in this sequence": each seat goes through them in order.
                assert ORDER.index(event["board"]) == ORDER.index(where[event["seat"]]) + 1
                where[event["seat"]] = event["board"]
            elif kind == "goes_first":
                search_from = event["seat"]
                seen["goes_first:" + event["board"]] += 1
            elif kind == "waited":
                waits_on.setdefault((event["seat"], event["board"]), []).append(index)
                assert (event["seat"], event["board"]) in released or event["board"] == "snape", \
                    "a held seat's turns do not count"
            elif kind == "wait_begins":
                released[(event["seat"], event["board"])] = index
            elif kind == "turn_began":
                seat, board = event["seat"], event["board"]
                assert board == where[seat]
                # Every seat passed over between the last turn and this one had a reason.
                waited_now = {e["seat"] for e in step.events if e["type"] in ("waited", "wait_begins")}
                skipped = search_from
                while skipped != seat:
                    player = after["players"][skipped]
                    name = player["board"]
                    reason = (skipped in waited_now or player["held"] or name is None
                              or not BOARDS[name].can_play(after["boards"][name], skipped))
                    assert reason, (index, "seat", skipped, "was passed over")
                    skipped = (skipped + 1) % seats
                if seat not in first_turn[board]:
                    first_turn[board].append(seat)
                turn, search_from = seat, (seat + 1) % seats
            elif kind == "game_over":
                turn = None
    result = GAME.result(playout.final)
    assert result is not None, "every random chain ends"
    # "If this player reveals the Sorcerer's Stone, he/she wins the game."
    stone = [e["seat"] for s in playout.steps for e in s.events if e["type"] == "mirror_stone_found"]
    assert result["winners"] == stone and len(stone) == 1 and result["cause"] == "sorcerers_stone"
    assert playout.steps[-1].events[-1] == {"type": "game_over", "winners": stone}

    facts = [p["facts"] for p in final_facts]
    # Sprout: one Fire token each; Flitwick's opening "highest-numbered Fire token goes first".
    assert sorted(f["fire"] for f in facts) == sorted({f["fire"] for f in facts})
    fires = [facts[s]["fire"] for s in fire_order]
    assert fires == sorted(fires, reverse=True)
    # McGonagall -> Quirrell: "The last player captured must wait 1 turn after the last player to finish
    # McGonagall's Challenge starts this game. The second to last player captured must wait 2 turns, and the
    # third to last player captured must wait 3 turns."
    captured = {s: f["captured"] for s, f in enumerate(facts) if f.get("captured") is not None}
    finishers = [s for s in range(seats) if s not in captured]
    for seat, rank in captured.items():
        seen["captured"] += 1
        assert len(waits_on.get((seat, "quirrell"), [])) == 1 + sum(1 for r in captured.values() if r > rank)
        assert set(finishers) <= set(first_turn["quirrell"][:first_turn["quirrell"].index(seat)]), \
            "a captured seat begins only after every finisher has started"
    # Quirrell -> Snape: "The player who finished first in Quirrell's Challenge goes first."
    assert first_turn["snape"][0] == next(s for s, f in enumerate(facts) if f["quirrell_rank"] == 1)
    assert sorted(f["quirrell_rank"] for f in facts) == list(range(1, seats + 1))
    # Snape -> Mirror: "must wait 2 turns after the last player begins flipping over Mirror of Erised cards".
    wrong = [s for s, f in enumerate(facts) if f.get("wrong_claim")]
    right = [s for s, f in enumerate(facts) if f.get("wrong_claim") is False]
    for seat in wrong:
        seen["wrong_claim"] += 1
        waits = waits_on.get((seat, "mirror"), [])
        if seat in first_turn["mirror"]:
            assert len(waits) == 2
            assert set(right) <= set(first_turn["mirror"][:first_turn["mirror"].index(seat)])
        else:
            assert len(waits) <= 2
    # Complete chess: "The team that checkmates the other team's king goes first."
    if playout.options["chess_rules"] == "complete":
        mates = [s for s, f in enumerate(facts) if f.get("checkmated") and s not in captured]
        if mates and first_turn["quirrell"]:
            seen["checkmate_first"] += 1
            assert first_turn["quirrell"][0] in mates
    return seen


def test_random_chains_end_with_a_winner_and_keep_the_turn_order():
    """CHAINS seeded random chains for 2, 3 and 4 players (abbreviated chess; one in
    four with complete chess) always end with the player who turned the Sorcerer's
    Stone, and keep every rule of the games in order (:func:`check_chain`)."""
    seen = Counter()
    for seed in range(CHAINS):
        seats = 2 + seed % 3
        rules = "complete" if seed % 4 == 3 else "abbreviated"
        seen += check_chain(chain(seats, seed, rules))
    # The exceptions were met on the way, not only the plain turn order.
    assert seen["captured"] and seen["goes_first:flitwick"] and seen["goes_first:snape"]


@pytest.mark.parametrize("seats", [2, 4])
def test_random_chains_with_complete_chess(seats):
    """Complete chess: "play does not begin on Quirrell's Challenge until the game is
    over"; the team that checkmates goes first; captured players wait."""
    for seed in range(max(2, CHAINS // 6)):
        check_chain(chain(seats, 1000 + seed, "complete"))


# -- hidden information and determinise --------------------------------------------------------------


def _match_part(view):
    return {k: v for k, v in view.items() if k not in ("seat", "boards")}


def test_a_seat_sees_the_match_like_everyone_and_each_board_as_that_board_shows_it():
    """"a player's view shows which board each player is on and what that player may
    see": the match adds only public things (where everyone is, turns, waits, the
    facts the rule book has announced: Fire tokens lie face up, captures, finishing
    places, claims shown to all) and each board's part is exactly that board's view
    for the seat. Match events are public and carry nothing else."""
    for seats, seed in ((2, 11), (3, 12), (4, 13)):
        playout = chain(seats, seed)
        for index, step in enumerate(playout.steps):
            for event in step.events:
                if event["type"] in MATCH_EVENTS:
                    assert set(event) <= MATCH_EVENTS[event["type"]], event
            if index % 5:
                continue
            state = step.state_after
            views = {s: GAME.view(state, s) for s in [None, *range(seats)]}
            for seat, view in views.items():
                assert _match_part(view) == _match_part(views[None])
                assert set(view["boards"]) == set(ORDER)
                for name, board_view in view["boards"].items():
                    assert board_view == BOARDS[name].view(state["boards"][name], seat)
                assert set(view["players"][0]["facts"]) == set(FACTS)
            # Each seat sees where every player is.
            assert [p["board"] for p in views[0]["players"]] == [p["board"] for p in state["players"]]
            assert all("audience" not in e for e in events_for(step.events, None))


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_determinise_rebuilds_a_match_with_the_same_view(seats):
    """Engine contract: ``view(determinise(view(s, seat), seat, rng), seat) ==
    view(s, seat)``, at every board of a chain; the rebuilt match can be played on."""
    playout = chain(seats, 40 + seats)
    rng = Rng(99)
    for index, step in enumerate(playout.steps):
        if index % 7:
            continue
        state = step.state_after
        for seat in range(seats):
            view = GAME.view(state, seat)
            rebuilt = GAME.determinise(clone(view), seat, rng)
            json.dumps(rebuilt)
            assert GAME.view(rebuilt, seat) == view, (index, seat)
            acting = sorted(GAME.to_act(rebuilt))
            assert acting == sorted(GAME.to_act(state))
            if acting:
                legal = GAME.legal_actions(rebuilt, acting[0])
                assert legal
                GAME.apply(rebuilt, acting[0], legal[0])


# -- the games one at a time -------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["hagrid", "sprout", "flitwick", "mcgonagall", "mcgonagall-complete",
                                     "quirrell", "snape"])
def test_an_individual_game_is_that_board_alone(variant):
    """"Rules for playing the games individually": one board, every player on it
    from the start (seat 0 "the youngest player" first), and the board's own winner
    wins the match (or, where documented, nobody)."""
    for seats in (2, 4):
        state = GAME.setup(GAME.check_options(variant, {}, seats), seats, 3)
        board = variant.split("-")[0]
        assert list(state["boards"]) == [board]
        assert [p["board"] for p in state["players"]] == [board] * seats
        view = GAME.view(state, 0)
        assert list(view["boards"]) == [board] and view["players"][0]["waiting"] == 0
        playout = random_playout(GAME, variant, seats, 3, max_actions=30000)
        result = GAME.result(playout.final)
        assert result is not None
        assert len(result["winners"]) <= 1
        assert result["cause"] in documented_causes(), result


# -- result causes -------------------------------------------------------------------------------------

#: The cause a match can end with, per variant, and whether it names a winner.
CAUSES = {
    "chain": {"sorcerers_stone": True, "mirror_empty": False},
    "hagrid": {"trapdoor": True},
    "sprout": {"largest_fire_token": True},
    "flitwick": {"silver_key": True},
    "mcgonagall": {"exited": True, "no_players": False, "cap": False},
    "mcgonagall-complete": {"checkmate": True, "king_captured": True, "board_won": False, "no_players": False,
                            "stalemate": False, "insufficient_material": False, "seventy_five_moves": False,
                            "cap": False},
    "quirrell": {"end_door": True},
    "snape": {"correct_claim": True, "no_correct_claim": False},
}
#: Any variant: the match's own safety net (never reached in play).
ANY_VARIANT = {"stalled": False}


def documented_causes() -> dict[str, str]:
    """The "Result causes" table of docs/rules/sorcerers-stone.md: cause -> meaning."""
    text = (Path(__file__).parents[3] / "docs" / "rules" / "sorcerers-stone.md").read_text()
    section = text.split("## Result causes", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([a-z_]+)` \| [^|]+ \| ([^|]+) \|$", section, re.M))


def test_every_cause_is_documented():
    """The engine contract: "``cause`` a snake_case code for programs"; the brief: every
    cause value a game can produce is listed, with its meaning, in its docs/rules file."""
    expected = set(ANY_VARIANT).union(*CAUSES.values())
    assert set(documented_causes()) == expected


@pytest.mark.parametrize("variant", sorted(CAUSES))
def test_every_match_ends_with_its_cause(variant):
    """Each variant played at random ends with one of its own causes; a cause that
    names a winner has one (a chess team: its players still in the game), the others
    none. Played alone: "SNAPE'S CHALLENGE ... 2. The game ends when one player
    collects the lowest-numbered S and lowest-numbered R Potions Cards"."""
    seen = Counter()
    for seed in range(2 if variant == "chain" else 8):
        seats = 2 + seed % 3
        playout = random_playout(GAME, variant, seats, seed, max_actions=30000)
        result = GAME.result(playout.final)
        assert result["cause"] in CAUSES[variant], (seed, result)
        assert bool(result["winners"]) is CAUSES[variant][result["cause"]], (seed, result)
        assert GAME.view(playout.final, None)["cause"] == result["cause"]
        seen[result["cause"]] += 1
    assert seen
