"""The engine contract (tests/games/contract.py) and the published schemas."""

import jsonschema
import pytest

from service.engine import InvalidOptions
from service.games.quidditch import GAME
from tests.games.contract import check_contract

#: Each seeded contract run validates three views per action against the view schema (slow in jsonschema),
#: so a few whole games cover it; the property tests play many more without the schema checks.
CONTRACT_GAMES = 2


def test_contract_holds_over_random_games():
    check_contract(GAME, "standard", 2, range(CONTRACT_GAMES))


def test_contract_holds_with_a_short_round_cap():
    """The round cap is the other way a match ends; its final states must satisfy the contract too."""
    from tests.games.contract import random_playout

    validator = jsonschema.Draft202012Validator(GAME.view_schema)
    for seed in range(5):
        playout = random_playout(GAME, None, 2, seed, options={"max_rounds": 3})
        assert GAME.result(playout.final) is not None
        for seat in (None, 0, 1):
            validator.validate(GAME.view(playout.final, seat))


def test_identity_and_seats():
    assert GAME.id == "quidditch" and GAME.title == "Quidditch"
    assert (GAME.min_seats, GAME.max_seats) == (2, 2)
    assert GAME.variant_ids() == ["standard"]
    with pytest.raises(InvalidOptions):
        GAME.check_options(None, {}, 3)


def test_options_have_defaults_and_bounds():
    """docs/rules/quidditch.md: the round cap is a match option, default 100."""
    assert GAME.check_options(None, {}, 2) == {"max_rounds": 100, "variant": "standard"}
    for schema in GAME.options_schema["properties"].values():
        assert "default" in schema
    with pytest.raises(InvalidOptions):
        GAME.check_options(None, {"max_rounds": 0}, 2)
    with pytest.raises(InvalidOptions):
        GAME.check_options(None, {"hand_size": 9}, 2)


def test_schema_builds_graphql_types():
    """schema.json keeps to the subset the GraphQL generator accepts (schema/game_types.py)."""
    from schema.game_types import GameTypes

    types = GameTypes(GAME)
    assert sorted(types.action_types) == ["done", "pass", "pitch", "play_card", "play_special", "reveal"]
    state = GAME.setup(GAME.check_options(None, {}, 2), 2, 7)
    types.to_view(GAME.view(state, 0))
    for action in GAME.legal_actions(state, 1):
        types.to_action(action)


def test_every_action_schema_is_a_closed_object():
    for name, schema in GAME.action_schemas.items():
        assert schema["properties"]["type"] == {"const": name}
        assert schema["additionalProperties"] is False


def test_card_kind_descriptions_follow_the_data():
    """The card texts live in kinds.json; schema.json repeats them in every CardKind enum's description for
    clients, so the two must not drift apart (a text changed in one place only)."""
    import json

    from service.games.quidditch.cards import KINDS

    descriptions = set()

    def walk(node):
        if isinstance(node, dict):
            if node.get("title") == "CardKind" and "enum" in node:
                descriptions.add(node["description"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(GAME.schema)
    assert descriptions
    for description in descriptions:
        for kind in KINDS.values():
            assert f"{kind['kind']}: {kind['name']} ({kind['family']}) -- {kind['text']}" in description, \
                (kind["kind"], json.dumps(description)[:80])
