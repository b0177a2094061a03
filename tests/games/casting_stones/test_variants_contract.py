"""The engine contract and property tests for the Intermediate and Advanced games (seeded random matches)."""

import json
from collections import Counter

import pytest

from service.engine import events_for
from service.games.casting_stones import GAME
from service.games.casting_stones.cards import CARDS
from service.games.casting_stones.catalogue import GEMS_PER_PLAYER, TURRETS, VARIANTS, set_stones
from tests.games.casting_stones.helpers import assert_match_ended, assert_winner_casts_first
from tests.games.contract import PROPERTY_GAMES, check_contract, random_playout

STARTER = Counter(set_stones("starter"))
LIBRARY = Counter(VARIANTS["intermediate"].library)
#: The Basic Game has its own PROPERTY_GAMES matches (test_contract.py); the two other variants share as many.
GAMES_PER_VARIANT = max(1, PROPERTY_GAMES // 2)


#: Seeds whose random matches (under 400 actions) between them play every action type of the game: card bonuses,
#: Chaser declarations, card swaps and knock-outs (checked below).
CONTRACT_SEEDS = {"intermediate": [18, 44], "advanced": [11, 12]}


@pytest.mark.parametrize("variant", sorted(CONTRACT_SEEDS))
def test_engine_contract(variant):
    """tests/games/contract.py over whole random matches of each new variant: schemas, views of every seat (one step
    in two), idle seats refused, apply never modifies its input, the same seed and actions replay identically."""
    check_contract(GAME, variant, 2, CONTRACT_SEEDS[variant], view_every=2)


def test_the_contract_matches_play_every_action_type():
    """The contract check above covers every action type the schema declares, in one variant or another."""
    played = set()
    for variant, seeds in CONTRACT_SEEDS.items():
        for seed in seeds:
            playout = random_playout(GAME, variant, 2, seed)
            assert len(playout.steps) < 400
            played |= {step.action["type"] for step in playout.steps}
    assert played == set(GAME.action_schemas)


def _brought(playout):
    """Each seat's bring action in an Advanced playout."""
    return {step.seat: step.action for step in playout.steps if step.action["type"] == "bring"}


def _check_invariants(state, variant, brought):
    """Stones and cards are conserved, no gem stands on two turrets, each player has at most six gems (placed plus in
    line is exactly six), Casting Hands hold five stones, a face-down card never comes back."""
    hands, gems = state["hands"], state["gems"]
    if variant == "intermediate":
        assert Counter(state["pool"] + hands[0] + hands[1] + state["vault"][0]) == STARTER
        cards = state["deck"] + sum(state["lib"], []) + sum(state["down"], [])
        assert Counter(cards) == (LIBRARY if state["ph"] != "pick" else Counter())
    elif state["turn"] >= 1:
        for seat in (0, 1):
            assert sorted(hands[seat] + state["vault"][seat]) == brought[seat]["stones"]
            assert sorted(state["lib"][seat] + state["down"][seat] + state["vc"][seat]) == brought[seat]["cards"]
    assert len(gems) == TURRETS and all(g in (None, 0, 1) for g in gems)
    for seat in (0, 1):
        placed = sum(1 for g in gems if g == seat)
        assert placed + state["line"][seat] == GEMS_PER_PLAYER and 0 <= placed <= GEMS_PER_PLAYER
        if state["turn"] >= 1:
            knocked_out = state["ph"] == "replace" and state["act"] == seat
            assert len(hands[seat]) == (4 if knocked_out else 5)
            assert len(state["faces"][seat]) == len(hands[seat])
    if state["ph"] not in ("over", "bring"):
        assert len(GAME.to_act(state)) == 1


@pytest.mark.parametrize("variant", ["intermediate", "advanced"])
def test_property_random_matches_keep_the_invariants_and_end(variant):
    """GAMES_PER_VARIANT seeded random matches per variant, played to the end (four adjacent turrets, or the turn limit
    of docs "Turn limit"), keep the invariants in every state: stones conserved across hands and Vaults, no gem on
    two turrets, at most six gems a player, one action = one step (every accepted action changes the state), cards
    used once ("they may only be used once per game") and the turn's winner casting first next turn (000: "Whoever
    won the turn casts first on the following turn")."""
    endings, used = Counter(), Counter()
    for seed in range(GAMES_PER_VARIANT):
        playout = random_playout(GAME, variant, 2, seed, max_actions=50_000)
        brought = _brought(playout)
        _check_invariants(playout.initial, variant, brought)
        for step in playout.steps:
            before, after = step.state_before, step.state_after
            assert after != before, "an accepted action is one step: it changes the match"
            _check_invariants(after, variant, brought)
            for seat in (0, 1):
                assert set(before["down"][seat]) <= set(after["down"][seat]), "a face-down card stays face-down"
            assert_winner_casts_first(before, after)
            used.update(e["card"] for e in step.events if e["type"] == "card_used")
        result = GAME.result(playout.final)
        final = playout.final
        assert_match_ended(result, final, playout.options["max_turns"], seed)
        endings[result["cause"]] += 1
    assert endings["four_turrets"] > endings["turn_limit"]
    if GAMES_PER_VARIANT >= 50:      # random play does set the cards off
        assert used["double-potion"] and used["charms"]
        assert used["draco-malfoy"] or variant == "intermediate"


def test_property_private_vaults_stay_private():
    """000, THE VAULT (ADVANCED): "What is stored in your Vault is for you and you alone." In random Advanced matches,
    no view or event a seat (or a spectator) gets names a stone of the other seat's collection that has not been on
    the table (in a Casting Hand) -- unless the viewer brought that stone too, or the same stone has been in either
    hand (both players may own one). The RNG state never shows."""
    for seed in range(max(1, PROPERTY_GAMES // 10)):
        playout = random_playout(GAME, "advanced", 2, 1000 + seed, max_actions=50_000)
        brought = _brought(playout)
        seen = [set(), set()]                     # stones each seat has had on the table
        for step in playout.steps:
            state = step.state_after
            for seat in (0, 1):
                seen[seat] |= set(state["hands"][seat])
            for viewer in (None, 0, 1):
                shown = json.dumps(GAME.view(state, viewer)) + json.dumps(events_for(step.events, viewer))
                assert str(state["rng"]) not in shown
                for owner in (0, 1):
                    if owner == viewer or owner not in brought:
                        continue
                    own = set(brought[viewer]["stones"]) if viewer is not None and viewer in brought else set()
                    # (the Draco Malfoy stone and card share the id "draco-malfoy": card ids are left out)
                    secret = set(brought[owner]["stones"]) - seen[0] - seen[1] - own - set(CARDS)
                    assert not [s for s in secret if f'"{s}"' in shown], (seed, viewer, owner)


def test_the_three_games_are_variants_of_one_game_basic_by_default():
    """000: "A Basic Game", "C INTERMEDIATE GAMES", "D ADVANCED GAME" -- one game, three variants; the Basic Game
    stays the default, and has no cards ("Set aside the Casting Cards. You don't need the Cards to play the Basic
    Game")."""
    assert GAME.variant_ids() == ["basic", "intermediate", "advanced"]
    assert GAME.check_options(None, {}, 2)["variant"] == "basic"
    playout = random_playout(GAME, None, 2, 4)
    assert playout.initial["v"] == "basic"
    for step in playout.steps[::10]:
        assert "lib" not in step.state_after and step.state_after["ph"] not in ("library", "bring", "bonus")


def test_a_basic_match_stored_before_the_new_variants_still_plays():
    """Matches live in Redis across deployments: a Basic state in the shape stored before the Intermediate and
    Advanced games existed (no bonus queue, no card fields in the last turn) still views and plays."""
    playout = random_playout(GAME, "basic", 2, 3)
    for step in playout.steps[20:200:9]:
        old = json.loads(json.dumps(step.state_before))
        old.pop("bq")
        for key in ("counter", "cards", "bonus"):
            (old["last"] or {}).pop(key, None)
        for seat in (None, 0, 1):
            assert GAME.view(old, seat)["turn"] == old["turn"]
        assert GAME.apply(old, step.seat, step.action)[0]["turn"] >= old["turn"]
