"""The engine contract (tests/games/contract.py) for every variant and seat
count, and the schema subset the APIs generate types from."""

import jsonschema
import pytest

from service.games.spells_and_potions import GAME
from tests.games.contract import check_contract

# A Ritual is ~170 actions and check_contract validates five views per action,
# so Ritual runs get fewer seeds; the property tests play many more games.
SEEDS = {"ritual": range(1), "practice-1": range(1), "practice-2": range(1), "practice-3": range(2)}


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("variant", ["ritual", "practice-1", "practice-2", "practice-3"])
def test_contract(variant, seats):
    check_contract(GAME, variant, seats, SEEDS[variant])


def test_contract_with_the_other_options():
    """Both rule options flipped from their defaults keep the contract."""
    from tests.games.contract import random_playout
    for seats in (2, 4):
        playout = random_playout(GAME, "practice-3", seats, 5,
                                 options={"blast_stacks": False, "reverse_keeps_trumps": True})
        assert GAME.result(playout.final) is not None
        assert playout.final["opts"] == {"blast_stacks": False, "reverse_keeps_trumps": True}


def test_identity():
    assert (GAME.id, GAME.title, GAME.min_seats, GAME.max_seats) == ("spells-and-potions", "Spells and Potions", 2, 4)
    assert GAME.variant_ids() == ["ritual", "practice-1", "practice-2", "practice-3"]


def test_options_all_have_defaults_and_unknown_options_are_refused():
    from service.engine import InvalidOptions
    for prop in GAME.options_schema["properties"].values():
        assert "default" in prop
    assert GAME.check_options(None, {}, 4) == {"variant": "ritual", "blast_stacks": True,
                                               "reverse_keeps_trumps": False}
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
