"""The engine contract (tests/games/contract.py) for every variant and seat
count, and the schema subset the APIs generate types from."""

import jsonschema
import pytest

from service.games.spells_and_potions import GAME
from tests.games.contract import check_contract

# A Ritual is ~170 actions and check_contract validates five views per action,
# so Ritual runs get fewer seeds; the property tests play many more games.
SEEDS = {"ritual": range(1), "practice-1": range(1), "practice-2": range(1), "practice-3": range(2),
         "practice-rounds": range(1)}


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("variant", ["ritual", "practice-1", "practice-2", "practice-3", "practice-rounds"])
def test_contract(variant, seats):
    check_contract(GAME, variant, seats, SEEDS[variant])


def test_contract_with_the_other_options():
    """Every rule option flipped from its default keeps the contract."""
    for seats in (2, 4):
        check_contract(GAME, "practice-3", seats, [5],
                       options={"reverse_keeps_trumps": True, "blast_helps_under_reverse": True})


def test_blast_stacks_is_accepted_and_ignored():
    """"Merlin's Power Blast (2) Adds 2 1/2 points to the rank of your team's
    Element Cards", and "In clockwise order, everyone takes turns laying a
    card": each hand lays one card a trick, so a team that lays both Blasts has
    no Element Card left in the trick, and whether two Blasts add up can never
    matter. The retired blast_stacks option is still accepted (older clients
    send it) and changes nothing: the same seeds play the same matches, and
    neither the state nor the view keeps it."""
    from tests.games.contract import random_playout
    for seats, seed in ((2, 1), (3, 2), (4, 3)):
        on, off = (random_playout(GAME, "practice-3", seats, seed, options={"blast_stacks": value})
                   for value in (True, False))
        assert [(s.seat, s.action) for s in on.steps] == [(s.seat, s.action) for s in off.steps]
        assert on.final == off.final and GAME.result(on.final) == GAME.result(off.final)
        assert "blast_stacks" not in on.final["opts"]
        assert "blast_stacks" not in GAME.view(off.final, None)["options"]
    assert GAME.options_schema["properties"]["blast_stacks"]["deprecated"] is True


def test_a_match_stored_before_the_option_changes_still_plays():
    """A state saved with the retired blast_stacks and without
    blast_helps_under_reverse plays on by the defaults, and its view shows only
    the current options."""
    from tests.games.contract import random_playout
    playout = random_playout(GAME, "practice-3", 4, 7, max_actions=10)
    old = dict(playout.final, opts={"blast_stacks": True, "reverse_keeps_trumps": False})
    del old["last"]
    assert GAME.view(old, 0)["options"] == {"reverse_keeps_trumps": False, "blast_helps_under_reverse": False}
    seat = sorted(GAME.to_act(old))[0]
    GAME.apply(old, seat, GAME.legal_actions(old, seat)[0])


def test_identity():
    assert (GAME.id, GAME.title, GAME.min_seats, GAME.max_seats) == ("spells-and-potions", "Spells and Potions", 2, 4)
    assert GAME.variant_ids() == ["ritual", "practice-1", "practice-2", "practice-3", "practice-rounds"]


def test_options_all_have_defaults_and_unknown_options_are_refused():
    from service.engine import InvalidOptions
    for prop in GAME.options_schema["properties"].values():
        assert "default" in prop
    assert GAME.check_options(None, {}, 4) == {"variant": "ritual", "blast_stacks": True,
                                               "reverse_keeps_trumps": False, "blast_helps_under_reverse": False}
    with pytest.raises(InvalidOptions):
        GAME.check_options("ritual", {"blast": 1}, 4)
    with pytest.raises(InvalidOptions):
        GAME.check_options("ritual", {}, 5)


def test_schema_is_in_the_api_subset():
    """The GraphQL generator (schema/game_types.py) accepts the schema."""
    from schema.game_types import GameTypes
    types = GameTypes(GAME)
    assert set(types.action_types) == {"arrange", "choose_leader", "play", "choose_trump", "name_leader"}
    for action_schema in GAME.action_schemas.values():
        jsonschema.Draft202012Validator.check_schema(action_schema)
        assert action_schema["additionalProperties"] is False


def test_every_nested_object_has_a_title():
    def walk(node, root):
        if isinstance(node, dict):
            if node.get("type") == "object" and not root:
                assert node.get("title", "")[:1].isupper(), node
            for key, value in node.items():
                walk(value, False if key in ("properties", "items") or not root else root)
        elif isinstance(node, list):
            for value in node:
                walk(value, False)
    walk(GAME.view_schema, True)
