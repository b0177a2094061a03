"""Section D, the Advanced Game: collections, the private Vault, wild Chasers, Casting Cards and Counter Spells."""

import json

import pytest

from service.engine import IllegalAction, InvalidOptions, MalformedAction, NotYourTurn, clone, events_for
from service.games.casting_stones import GAME
from service.games.casting_stones.cards import CARDS, parse_cards

from .helpers import (
    CARDS_3, CHARM, DRACO_HAND, DRACO_STONES, HARRY_HAND, HARRY_STONES, POTION, advanced, bring, settle, with_gems,
)

_ = None
#: Faces for DRACO_HAND (crabbe, draco-malfoy, eagle-owl, goyle, shield-slytherin) showing the Draco Malfoy card's
#: combination: "Draco Malfoy, the Eagle Owl and Shield Slytherin need to be picture-side up while Crabbe and
#: Goyle need to be number-side up".
DRACO_COMBINATION = "nssns"
#: Faces for HARRY_HAND (cloak-of-invisibility, harry-potter, harrys-wand, love, phoenix-feather): the Cloak (a
#: Chaser), Harry and Love symbol-up, the wand (20) and the Phoenix Feather (10) number-up.
HARRY_CLOAK_SPELL = "ssnsn"
DRACO_VAULT = ["bezoar", "cauldron", "horned-slugs", "potion-bottles", "professor-snape"]
HARRY_VAULT = ["flute", "hedwig", "shield-gryffindor", "snitch", "wingardium-leviosa"]


def _new(**options):
    return GAME.setup(GAME.check_options("advanced", options, 2), 2, 99)


def _declare_all(state, stone_type="artifact"):
    """Declare every Chaser waiting for a declaration as ``stone_type``."""
    while state["ph"] == "declare":
        seat = next(iter(GAME.to_act(state)))
        stone = GAME.legal_actions(state, seat)[0]["stone"]
        state, _events = GAME.apply(state, seat, {"type": "declare", "stone": stone, "stone_type": stone_type})
    return state


def _quoted(stone_id):
    return f'"{stone_id}"'


# -- CASTING HANDS (ADVANCED) -----------------------------------------------------------------------------

def test_both_players_bring_their_collections_at_once():
    """000: "To play an Advanced Game, you and your opponent must each have 10 Casting Stones and 3 Casting Cards in
    your Hands." Both bring at the same time (docs: "Bringing a collection"); the youngest then casts first ("Set
    up the game the same way you would for Intermediate play")."""
    state = _new()
    assert (state["ph"], GAME.to_act(state)) == ("bring", {0, 1})
    state, _events = GAME.apply(state, 1, bring(HARRY_STONES, HARRY_HAND))
    assert GAME.to_act(state) == {0} and GAME.legal_actions(state, 1) == []
    with pytest.raises(NotYourTurn):
        GAME.apply(state, 1, bring(DRACO_STONES, DRACO_HAND))
    state, _events = GAME.apply(state, 0, bring(DRACO_STONES, DRACO_HAND))
    assert (state["ph"], state["turn"], GAME.to_act(state)) == ("cast", 1, {0})
    assert state["hands"] == [DRACO_HAND, HARRY_HAND] and state["vault"] == [DRACO_VAULT, HARRY_VAULT]
    assert state["lib"] == [CARDS_3, CARDS_3]


def test_themed_hands_and_seeded_packs_are_offered():
    """000, GAME HINTS & STRATEGIES: "Perhaps you'll be interested in the Harry Potter Hand, or the Voldemort Hand,
    or maybe even give Hermione or Ron Weasley a try" -- offered ready-made, with collections opened from seeded
    Starter and Refill packs ("Refill Sets contain 4 Casting Stones and 1 Casting Card")."""
    state = _new()
    offers = GAME.legal_actions(state, 0)
    hands = [a["hand"] for a in offers]
    assert "harry-potter" in hands[0]
    assert any("voldemort" in h for h in hands) and any("hermione-granger" in h for h in hands)
    assert any("ron-weasley" in h for h in hands) and any("draco-malfoy" in h for h in hands)
    assert len(offers) >= 8
    for action in offers:
        assert GAME.is_legal(state, 0, action)
        assert len(action["stones"]) == 10 and len(action["hand"]) == 5 and len(action["cards"]) == 3
    assert GAME.legal_actions(state, 1)[:5] == offers[:5]            # the same themes for both...
    assert GAME.legal_actions(state, 1)[5:] != offers[5:]            # ...but each seat opens its own packs
    assert GAME.legal_actions(_new(), 0) == offers                   # seeded: the same match offers the same


def test_any_valid_collection_is_accepted_not_only_those_offered():
    """000: "you will need to collect additional Casting Stones and Casting Cards to build up your Casting Hand" --
    a player brings what they own; the engine accepts any valid collection (is_legal), not only the offers."""
    state = _new()
    mine = bring(["dumbledore", "fluffy", "gold", "holly", "knut", "merlin", "music", "quills", "sickle", "troll"],
                 ["dumbledore", "fluffy", "gold", "knut", "merlin"])
    assert mine not in GAME.legal_actions(state, 0)
    state, _events = GAME.apply(state, 0, mine)
    assert state["br"][0] == mine


@pytest.mark.parametrize("change, reason", [
    (dict(stones=sorted(HARRY_STONES[:9])), "too short"),
    (dict(stones=sorted(HARRY_STONES[:9] + ["no-such-stone"])), "No such Casting Stone: no-such-stone"),
    (dict(stones=sorted(HARRY_STONES[:9] + ["flute"])), "non-unique"),
    (dict(stones=sorted(HARRY_STONES[:8] + ["no-such-stone", "voldemort", "fluffy"])), "too long"),
    (dict(cards=["charms", "double-potion"]), "too short"),
    (dict(cards=["charms", "double-potion", "elder-wand"]), "No such Casting Card: elder-wand"),
    (dict(hand=["cloak-of-invisibility", "harry-potter", "harrys-wand", "love", "voldemort"]), "voldemort"),
    (dict(hand=["harry-potter", "harrys-wand", "love", "phoenix-feather"]), "too short"),
    (dict(hand=["harry-potter", "harry-potter", "harrys-wand", "love", "phoenix-feather"]), "non-unique"),
    (dict(stones=list(reversed(HARRY_STONES))), "alphabetical"),
])
def test_an_invalid_collection_is_refused_with_the_reason(change, reason):
    """000: "each have 10 Casting Stones and 3 Casting Cards" (the same number of cards for both) and "Choose 5
    Casting Stones for your Casting Hand and place the remainder in your Vault": checked against the catalogue
    and the cards, and the refusal says what is wrong: sizes by the action's JSON Schema (malformed_action), the
    rest by the rules (illegal_action)."""
    action = dict(bring(HARRY_STONES, HARRY_HAND), **change)
    with pytest.raises((IllegalAction, MalformedAction)) as refused:
        GAME.apply(_new(), 0, action)
    assert reason in refused.value.message


def test_more_cards_only_if_the_service_has_them():
    """000: "You may play with more than 3 Casting Cards as long as you and your opponent have agreed to this and
    you both play with the same number of Cards": one match option for both, and its schema allows no more than
    the different cards the service knows (so the API documents every value it accepts, in every variant)."""
    assert GAME.options_schema["properties"]["cards_per_player"]["maximum"] == len(CARDS) == 3
    for variant in ("basic", "advanced"):
        with pytest.raises(InvalidOptions):
            GAME.check_options(variant, {"cards_per_player": 4}, 2)
    assert GAME.check_options("advanced", {"cards_per_player": 3}, 2)["cards_per_player"] == 3


# -- THE VAULT (ADVANCED) --------------------------------------------------------------------------------

def test_neither_player_sees_what_the_other_brought_until_both_have():
    """000, THE VAULT (ADVANCED): "What is stored in your Vault is for you and you alone." While seat 0 waits for
    seat 1, seat 1 and spectators see only that seat 0 is ready; seat 0 sees its own collection."""
    state, events = GAME.apply(_new(), 0, bring(DRACO_STONES, DRACO_HAND))
    secret = [s for s in DRACO_STONES if s not in HARRY_STONES]
    for seat in (None, 1):
        shown = json.dumps(GAME.view(state, seat)) + json.dumps(events_for(events, seat))
        assert not [s for s in secret if _quoted(s) in shown]
        assert GAME.view(state, seat)["players"][0]["ready"] is True
        assert GAME.view(state, seat)["players"][1]["ready"] is False
    mine = GAME.view(state, 0)["players"][0]
    assert [s["id"] for s in mine["hand"]] == DRACO_HAND and [s["id"] for s in mine["vault"]] == DRACO_VAULT
    assert events_for(events, 0)[0]["stones"] == DRACO_STONES
    assert events_for(events, 1) == [{"type": "brought", "seat": 0}]


def test_a_private_vault_is_shown_to_its_owner_only():
    """000: "each player gets their own private Vault. This Vault is not shared with your opponent ... What is stored
    in your Vault is for you and you alone." The Casting Hands are on the table; each Vault's contents are in its
    owner's view only, its size in every view; the set-up events name them to their owner only."""
    state = _new()
    state, _events = GAME.apply(state, 0, bring(DRACO_STONES, DRACO_HAND))
    state, events = GAME.apply(state, 1, bring(HARRY_STONES, HARRY_HAND))
    for seat, vault, other_vault in ((0, DRACO_VAULT, HARRY_VAULT), (1, HARRY_VAULT, DRACO_VAULT)):
        view = GAME.view(state, seat)
        assert [s["id"] for s in view["players"][seat]["vault"]] == vault
        assert view["players"][1 - seat]["vault"] == [] and view["players"][1 - seat]["vault_size"] == 5
        shown = json.dumps(view) + json.dumps(events_for(events, seat))
        assert not [s for s in other_vault if _quoted(s) in shown]
    spectator = json.dumps(GAME.view(state, None)) + json.dumps(events_for(events, None))
    assert not [s for s in DRACO_VAULT + HARRY_VAULT if _quoted(s) in spectator]
    assert [[s["id"] for s in p["hand"]] for p in GAME.view(state, None)["players"]] == [DRACO_HAND, HARRY_HAND]
    assert GAME.view(state, None)["vault"] == []


def test_a_potion_swaps_with_its_owners_own_vault_only():
    """000, POTION: "Swap one of the Casting Stones in your Casting Hand for any Casting Stone in the Vault" -- in
    the Advanced Game your own Vault: "Your opponent cannot touch anything you keep there"."""
    state, _events = settle(advanced(), CHARM, "sssss")
    state = _declare_all(state)
    assert state["vic"] == {"seat": 1, "kind": "potion"}
    takes = {a["take"] for a in GAME.legal_actions(state, 1) if a["type"] == "swap_stone"}
    assert takes == set(HARRY_VAULT)
    with pytest.raises(IllegalAction):
        GAME.apply(state, 1, {"type": "swap_stone", "stone": "love", "take": "bezoar"})
    state, _events = GAME.apply(state, 1, {"type": "swap_stone", "stone": "love", "take": "hedwig"})
    assert "hedwig" in state["hands"][1] and "love" in state["vault"][1] and state["vault"][0] == DRACO_VAULT


def test_a_knocked_out_stone_goes_to_its_owners_vault_and_is_replaced_from_it():
    """000, CHARM: "Knock one of your opponent's Casting Stones into the Vault. Your opponent must choose a new
    Casting Stone from the Vault (players may not choose the Casting Stone that was just knocked into the
    Vault)" -- with private Vaults, the owner's: only they choose, from their own stones, not the one knocked."""
    state, _events = settle(advanced(), CHARM, HARRY_CLOAK_SPELL)
    state = _declare_all(state)
    state, events = GAME.apply(state, 0, {"type": "knock_stone", "stone": "harry-potter"})
    assert "harry-potter" in state["vault"][1] and state["vault"][0] == DRACO_VAULT
    assert (state["ph"], GAME.to_act(state)) == ("replace", {1})
    offered = [a["stone"] for a in GAME.legal_actions(state, 1)]
    assert offered == HARRY_VAULT                                  # not harry-potter, not seat 0's stones
    with pytest.raises(IllegalAction):
        GAME.apply(state, 1, {"type": "replace", "stone": "harry-potter"})
    with pytest.raises(IllegalAction):
        GAME.apply(state, 1, {"type": "replace", "stone": "bezoar"})
    assert GAME.legal_actions(state, 0) == []
    state, events = GAME.apply(state, 1, {"type": "replace", "stone": "hedwig"})
    assert "hedwig" in state["hands"][1] and GAME.view(state, 0)["players"][1]["vault_size"] == 5
    remaining = [s for s in HARRY_VAULT if s != "hedwig"]
    shown = json.dumps(GAME.view(state, 0))
    assert not [s for s in remaining if _quoted(s) in shown]


# -- Chasers -------------------------------------------------------------------------------------------

def test_a_symbol_up_chaser_is_declared_by_its_caster():
    """000: "In Advanced Games, Chasers are wild – they can become Character, Artifact or Element Stones as the
    player wishes." The caster declares a symbol-up Chaser, like tipping a Leaner, before the Seconds; until then
    the cast is not readable (docs: "Chasers")."""
    state, events = settle(advanced(), POTION, HARRY_CLOAK_SPELL)
    assert (state["ph"], GAME.to_act(state)) == ("declare", {1})
    assert GAME.legal_actions(state, 1) == [
        {"type": "declare", "stone": "cloak-of-invisibility", "stone_type": t}
        for t in ("character", "artifact", "element")]
    assert GAME.view(state, None)["players"][1]["conjured"] == {"kind": "pending", "power": None}
    as_artifact, events = GAME.apply(state, 1, {"type": "declare", "stone": "cloak-of-invisibility",
                                                "stone_type": "artifact"})
    assert events[0] == {"type": "declared", "seat": 1, "stone": "cloak-of-invisibility", "stone_type": "artifact"}
    assert as_artifact["last"]["kinds"] == ["potion", "spell"] and as_artifact["last"]["powers"][1] == 20 + 10
    assert GAME.view(as_artifact, 0)["players"][1]["hand"][0]["declared"] == "artifact"
    as_character, _events = GAME.apply(state, 1, {"type": "declare", "stone": "cloak-of-invisibility",
                                                  "stone_type": "character"})
    assert as_character["last"]["kinds"] == ["potion", "bungle"]    # two characters: no Spell


def test_the_first_caster_declares_its_chasers_before_the_other_casts():
    """000, step 5: the winner casts first so that the loser may "see what their opponent casts before they cast
    their own Stones"; a wild Chaser is read as its caster declares it ("they can become Character, Artifact or
    Element Stones as the player wishes"), so the first caster declares before the second throws (docs: "Order of
    a turn", "Chasers")."""
    state = clone(advanced())
    state["first"] = 1
    state["faces"] = ["-----", "ssnsl"]
    state["ph"], state["act"] = "tip", 1
    state, _events = GAME.apply(state, 1, {"type": "tip", "stone": "phoenix-feather", "face": "number"})
    assert (state["ph"], GAME.to_act(state), state["faces"][0]) == ("declare", {1}, "-----")
    state, _events = GAME.apply(state, 1, {"type": "declare", "stone": "cloak-of-invisibility",
                                           "stone_type": "artifact"})
    assert (state["ph"], GAME.to_act(state)) == ("cast", {0})
    assert GAME.view(state, 0)["players"][1]["conjured"] == {"kind": "spell", "power": 20 + 10}


def test_a_chaser_number_up_needs_no_declaration_and_a_recast_one_is_declared_again():
    """000: a Chaser "can become" another type as a symbol -- number-up it just shows its number (50). A declaration
    holds while the stone lies; a Chaser cast again is declared again (docs: "Chasers")."""
    state, _events = settle(advanced(), POTION, "nnnnn")
    assert state["last"]["kinds"] == ["potion", "charm"] and state["last"]["powers"][1] == 50 + 25 + 20 + 10 + 10
    state, _events = settle(advanced(), "sssss", "ssnnn", done=(0, 0))   # seat 1's first cast is a Bungle
    assert (state["ph"], GAME.to_act(state)) == ("declare", {1})
    state, _events = GAME.apply(state, 1, {"type": "declare", "stone": "cloak-of-invisibility",
                                           "stone_type": "element"})
    assert state["ph"] == "seconds"
    rng_faces = clone(state)
    rng_faces["opt"]["leaner_one_in"] = 0
    for _attempt in range(40):                                        # re-cast until the Cloak lands symbol-up
        after, _events = GAME.apply(rng_faces, 1, {"type": "recast", "stones": ["cloak-of-invisibility"]})
        if after["faces"][1][0] == "s":
            assert after["decl"][1] == {} and (after["ph"], GAME.to_act(after)) == ("declare", {1})
            break
        rng_faces["rng"] = after["rng"]
    else:
        pytest.fail("the Cloak never landed symbol-up")


# -- CASTING CARDS (ADVANCED) and Counter Spells ------------------------------------------------------------

def test_the_draco_malfoy_counter_spell_scores_as_a_spell_and_its_bonus_takes_the_slytherin_turret():
    """000: "COUNTER SPELLS on Casting Cards play just like SPELLS, even if the Casting Stones pictured are different
    than a normal spell." The Draco Malfoy card: "Draco Malfoy, the Eagle Owl and Shield Slytherin need to be
    picture-side up while Crabbe and Goyle need to be number-side up" -- two characters and an artifact, a Bungle
    without the card. Won, it gives the Spell's victory action, then the card's bonus (DESIGN.md): "place a Turret
    Gem on the Slytherin turret"; then the card is turned face-down. The bonus leaves no choice, and "you will gain
    the benefits listed on those Cards": it is taken at once, without asking its owner (docs: "Bonuses")."""
    state, events = settle(advanced(), DRACO_COMBINATION, "sssss")
    state = _declare_all(state)
    assert state["last"]["kinds"][0] == "spell" and state["last"]["powers"][0] == 15 + 15
    assert state["last"]["counter"] == ["draco-malfoy", None]
    assert (state["ph"], GAME.to_act(state), state["vic"]) == ("victory", {0}, {"seat": 0, "kind": "spell"})
    assert state["lib"][0] == ["charms", "double-potion"] and state["down"][0] == ["draco-malfoy"]
    state, events = GAME.apply(state, 0, {"type": "place", "turret": 0})
    assert {"type": "bonus_auto", "seat": 0, "card": "draco-malfoy", "action": {"type": "place", "turret": 4}} in events
    assert (state["ph"], state["turn"], GAME.to_act(state)) == ("cast", 2, {0})
    assert state["gems"][0] == state["gems"][4] == 0 and state["line"][0] == 4
    last = GAME.view(state, 1)["last_turn"]
    assert last["cards"] == [{"seat": 0, "card": "draco-malfoy", "name": "Draco Malfoy"}]
    assert last["counter_spells"] == ["draco-malfoy", None] and "Draco Malfoy card" in last["summary"]
    assert [(a["type"], a["turret"]) for a in last["bonus_actions"]] == [("place", 4)]


def test_the_draco_malfoy_bonus_sends_the_opposing_gem_on_slytherin_back_to_its_line():
    """DESIGN.md: "if the opponent holds it, their gem goes back to their line and yours takes its place."
    """
    start = with_gems(advanced(), [_, _, _, _, 1, 1, _, _])
    state, _events = settle(start, DRACO_COMBINATION, "sssss")
    state = _declare_all(state)
    state, events = GAME.apply(state, 0, {"type": "place", "turret": 0})
    assert state["gems"][4] == 0 and state["line"] == [4, 5]
    displaced = events.index({"type": "gem_displaced", "seat": 0, "turret": 4, "owner": 1})
    assert events[displaced:displaced + 2] == [{"type": "gem_displaced", "seat": 0, "turret": 4, "owner": 1},
                          {"type": "gem_placed", "seat": 0, "turret": 4}]


def test_a_bonus_with_nothing_to_do_passes_by_itself_and_the_card_is_still_used():
    """Holding the Slytherin turret already, the Draco Malfoy bonus has nothing to do: it passes, like a victory
    with nothing to do (docs: "Bonuses"), and the card stays face-down -- "Once a Casting Card has been successfully
    used, it must be turned face-down"."""
    start = with_gems(advanced(), [_, _, _, _, 0, _, _, _])
    state, _events = settle(start, DRACO_COMBINATION, "sssss")
    state = _declare_all(state)
    state, events = GAME.apply(state, 0, {"type": "place", "turret": 0})
    assert {"type": "bonus_void", "seat": 0, "card": "draco-malfoy"} in events
    assert state["ph"] == "cast" and state["down"][0] == ["draco-malfoy"]


def test_a_counter_spell_that_loses_is_still_turned_over_and_its_combination_is_spent():
    """000: "If you cast the Counter Spell shown on a Casting Card, score it just like a spell and then take the card
    out of play by turning it over. Once the Casting Card with the Counter Spell is out of play, the Counter Spell
    combination is no longer a valid spell." -- and "You must also win the turn" for its bonus."""
    state, _events = settle(advanced(), DRACO_COMBINATION, "nnnnn")
    assert state["last"]["kinds"] == ["spell", "charm"] and state["last"]["winner"] == 1   # Charm beats Spell
    assert state["down"][0] == ["draco-malfoy"] and state["bq"] == []
    state, _events = GAME.apply(state, 1, {"type": "knock_card", "card": "charms"})
    assert state["ph"] == "cast" and state["lib"][0] == ["double-potion"]
    state, _events = settle(state, DRACO_COMBINATION, "sssss")
    state = _declare_all(state)
    assert state["last"]["kinds"] == ["bungle", "potion"] and state["last"]["counter"] == [None, None]


def _draco_card_knocked_into_seat_0s_vault():
    """Seat 0 Bungles, seat 1's Charm wins and knocks the Draco Malfoy card into seat 0's Vault."""
    state, _events = settle(advanced(), "ssnnn", "nnnnn")
    knocks = [a for a in GAME.legal_actions(state, 1) if a["type"] == "knock_card"]
    assert knocks == [{"type": "knock_card", "card": c} for c in CARDS_3]
    state, events = GAME.apply(state, 1, {"type": "knock_card", "card": "draco-malfoy"})
    assert events[0] == {"type": "card_knocked", "seat": 1, "card": "draco-malfoy", "owner": 0}
    return state


def test_a_counter_spell_knocked_into_the_vault_is_no_longer_valid():
    """000, SWAPS AND KNOCK-OUTS (ADVANCED): "Knock one of your opponent's in-play (face-up) Casting Cards out of play
    and into their Vault." Out of play, its Counter Spell combination is a Bungle again. The opponent sees that the
    Vault holds a card (it was knocked in before their eyes), its owner sees which."""
    state = _draco_card_knocked_into_seat_0s_vault()
    assert state["lib"][0] == ["charms", "double-potion"] and state["vc"][0] == ["draco-malfoy"]
    assert GAME.view(state, 1)["players"][0]["vault_card_count"] == 1
    assert GAME.view(state, 1)["players"][0]["vault_cards"] == []
    assert [c["id"] for c in GAME.view(state, 0)["players"][0]["vault_cards"]] == ["draco-malfoy"]
    state, _events = settle(state, DRACO_COMBINATION, "sssss")
    state = _declare_all(state)
    assert state["last"]["kinds"][0] == "bungle" and state["last"]["counter"] == [None, None]


def test_a_potion_swaps_an_in_play_card_for_one_in_the_owners_vault():
    """000: "Swap one of your in-play (face-up) Casting Cards for any Card that is in your Vault." With the Draco
    Malfoy card knocked into its Vault, seat 0 wins with a Potion and swaps it back in for Charms; its Counter Spell
    is valid again."""
    state = _draco_card_knocked_into_seat_0s_vault()
    state, _events = settle(state, "sssss", "nnnnn")              # seat 0's Potion beats seat 1's Charm
    swaps = [a for a in GAME.legal_actions(state, 0) if a["type"] == "swap_card"]
    assert swaps == [{"type": "swap_card", "card": "charms", "take": "draco-malfoy"},
                     {"type": "swap_card", "card": "double-potion", "take": "draco-malfoy"}]
    state, events = GAME.apply(state, 0, {"type": "swap_card", "card": "charms", "take": "draco-malfoy"})
    assert events[0] == {"type": "card_swapped", "seat": 0, "card": "charms", "take": "draco-malfoy"}
    assert state["lib"][0] == ["draco-malfoy", "double-potion"] and state["vc"][0] == ["charms"]
    assert GAME.view(state, None)["last_turn"]["action"]["card"] == "charms"
    state, _events = settle(state, DRACO_COMBINATION, "sssss")
    state = _declare_all(state)
    assert state["last"]["counter"][0] == "draco-malfoy"


def test_a_card_knock_out_needs_a_face_up_card():
    """000: "Knock one of your opponent's in-play (face-up) Casting Cards" -- a face-down (used) card is out of play
    and cannot be knocked."""
    state, _events = settle(advanced(), DRACO_COMBINATION, "nnnnn")   # Draco spent, seat 1 wins with its Charm
    state = _declare_all(state)
    knocks = {a["card"] for a in GAME.legal_actions(state, 1) if a["type"] == "knock_card"}
    assert knocks == {"charms", "double-potion"}
    with pytest.raises(IllegalAction):
        GAME.apply(state, 1, {"type": "knock_card", "card": "draco-malfoy"})


# -- an operator's card with a condition -----------------------------------------------------------------

@pytest.fixture
def gryffindor_card():
    """An operator's card (as GRIMOIRE_CASTING_CARDS would add it): Harry symbol-up and his wand number-up, holding
    the Gryffindor turret, won: knock out one Casting Card."""
    added = parse_cards({"cards": [{
        "id": "gryffindor-pride", "name": "Gryffindor Pride", "text": "Harry and his wand, holding Gryffindor.",
        "requires": {"stones": [{"stone": "harry-potter", "face": "symbol"},
                                {"stone": "harrys-wand", "face": "number"}]},
        "conditions": {"turrets_held": ["Gryffindor"]}, "needs_win": True,
        "effect": [{"do": "knock", "of": ["cards"]}]}]}, "test", CARDS)
    CARDS.update(added)
    yield "gryffindor-pride"
    for card_id in added:
        del CARDS[card_id]


def test_a_card_works_only_when_every_condition_holds_and_the_turn_is_won(gryffindor_card):
    """000: "The Cards may make other specifications as well, such as requiring you to control certain Turrets on
    the Tower Mat" and "Note: Every condition listed on the Card must be met to use the Card."; "All other Casting
    Cards require you to win the turn in order to gain the benefits of those Cards"."""
    cards = ["charms", "double-potion", gryffindor_card]
    match = advanced(second=bring(HARRY_STONES, HARRY_HAND, cards))
    without, _events = settle(match, "sssss", HARRY_CLOAK_SPELL.replace("n", "s", 0))   # Gryffindor not held
    without = _declare_all(without)
    assert gryffindor_card in without["lib"][1]
    held = with_gems(match, [1, _, _, _, _, _, _, _])
    lost, _events = settle(held, "nnnnn", HARRY_CLOAK_SPELL)                            # held, but Charm beats Spell
    lost = _declare_all(lost)
    assert lost["last"]["winner"] == 0 and gryffindor_card in lost["lib"][1]
    won, events = settle(held, "sssss", HARRY_CLOAK_SPELL)                             # held and won
    won = _declare_all(won)
    assert won["last"]["winner"] == 1 and won["down"][1] == [gryffindor_card]
    won, _events = GAME.apply(won, 1, GAME.legal_actions(won, 1)[0])
    assert won["ph"] == "bonus" and {a["type"] for a in GAME.legal_actions(won, 1)} == {"knock_card"}
