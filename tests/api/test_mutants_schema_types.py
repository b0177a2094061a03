"""The GraphQL types generated from a game's JSON Schemas (schema/game_types.py): keys that are Python keywords,
and the errors an operator reads when a game's schema leaves the supported subset; the cost limit's edge and
its refusal of an anonymous operation (schema/cost.py); the websocket's allowed origins (schema/asgi.py).

Written against the survivors of the mutation run of the ``schema`` module (tests/mutation/run.py): each test
pins an answer or a message one of them changed. The game types are checked on a small game of this file's own,
whose keys are the Python keywords the module docstring promises to serve unchanged."""

import pytest
import strawberry
from strawberry.extensions import AddValidationRules
from strawberry.scalars import JSON

from schema.cost import max_cost_rule
from schema.game_types import GameTypes, SchemaNotSupported, graphql_enum
from service.engine import Catalogue, Game
from tests.api.test_mutants_schema_cost import Query as PricedQuery
from tests.hardening.test_limits import app_client

#: every key _attr must rename on the Python side, each still the GraphQL field's name
KEYWORDS = ["type", "from", "for", "in", "is", "not", "and", "or", "class", "def"]


def keyword_game(view_properties=None, action_properties=None) -> Game:
    view = view_properties or {key: {"type": "integer"} for key in KEYWORDS}
    action = action_properties or {key: {"type": "integer"} for key in KEYWORDS if key != "type"}

    class KeywordGame(Game):
        id = "keywords"
        title = "Keywords"

    game = KeywordGame()
    game.schema = {"options": {"type": "object", "properties": {}},
                   "actions": {"move": {"type": "object", "required": ["type"],
                                        "properties": {"type": {"const": "move"}, **action}}},
                   "view": {"type": "object", "properties": view}}
    return game


def test_json_keys_that_are_python_keywords_are_fields_of_the_view_and_of_actions_under_their_own_names():
    types = GameTypes(keyword_game())
    view_type, action_input = types.view_type, types.action_input
    view = {key: number for number, key in enumerate(KEYWORDS)}

    def read_view() -> view_type:
        return types.to_view(view)

    def send(action: action_input) -> JSON:
        return types.from_input(action)

    @strawberry.type
    class Query:
        view: view_type = strawberry.field(resolver=read_view)
        act: JSON = strawberry.field(resolver=send)

    fields = " ".join(KEYWORDS)
    arguments = ", ".join(f"{key}: {number}" for number, key in enumerate(KEYWORDS) if key != "type")
    result = strawberry.Schema(query=Query).execute_sync(
        f"{{ view {{ {fields} }} act(action: {{type: MOVE, {arguments}}}) }}")
    assert result.errors is None
    assert result.data["view"] == view
    # the action reaches the game under its JSON keys, as REST would send it
    assert result.data["act"] == {"type": "move", **{key: n for n, key in enumerate(KEYWORDS) if key != "type"}}


def test_two_json_strings_with_one_enum_value_name_are_refused_naming_both():
    with pytest.raises(SchemaNotSupported) as refused:
        graphql_enum("Colour", ["dark-red", "dark_red"])
    assert str(refused.value) == "Colour: 'dark_red' and 'dark-red' are both DARK_RED in GraphQL"


def test_a_view_key_that_is_no_graphql_name_is_refused_naming_the_game_and_the_view():
    with pytest.raises(SchemaNotSupported) as refused:
        GameTypes(keyword_game(view_properties={"bad-key": {"type": "integer"}}))
    assert str(refused.value) == "keywords: view: 'bad-key' is not a valid GraphQL name"


def test_an_action_key_that_is_no_graphql_name_is_refused_naming_the_game_and_the_action():
    with pytest.raises(SchemaNotSupported) as refused:
        GameTypes(keyword_game(action_properties={"bad-key": {"type": "integer"}}))
    assert str(refused.value) == "keywords: action move: 'bad-key' is not a valid GraphQL name"


def test_an_object_inside_an_action_is_refused_naming_the_field():
    # the action's output type could carry it; its input cannot, and an action must go back verbatim
    spot = {"type": "object", "title": "Spot", "properties": {"x": {"type": "integer"}}}
    with pytest.raises(SchemaNotSupported) as refused:
        GameTypes(keyword_game(action_properties={"spot": spot}))
    assert str(refused.value) == "keywords: KeywordsMoveAction.spot: objects inside actions are not supported"


def test_a_catalogue_item_that_is_no_object_is_refused_naming_the_catalogue():
    types = GameTypes(keyword_game())
    stones = Catalogue("stones", {"title": "Stone", "type": "array", "items": {"type": "integer"}}, (), list)
    with pytest.raises(SchemaNotSupported) as refused:
        types.catalogue_type(stones)
    assert str(refused.value) == "keywords: catalogue stones must be an object schema with properties"


# -- the cost limit (docs/security.md: an operation costing more than the limit is refused) ---------------------

LIMITED = strawberry.Schema(query=PricedQuery, extensions=[lambda: AddValidationRules([max_cost_rule(4)])])


def test_an_operation_costing_exactly_the_limit_is_answered():
    assert LIMITED.execute_sync("{ shelf { id } }").errors is None  # 1 + the default three of `first`


def test_an_anonymous_operation_over_the_limit_is_refused_as_the_operation_pointing_at_it():
    [error] = LIMITED.execute_sync("{ shelf(first: 4) { id } }").errors
    assert error.message == ("the operation costs 5, more than the limit of 4: select fewer fields, or pass a "
                             "smaller limit to lists (each list is counted as 10 items unless limited).")
    assert [(location.line, location.column) for location in error.locations] == [(1, 1)]
    assert error.extensions == {"code": "query_too_costly", "cost": 5, "max_cost": 4}


# -- the websocket's origins (docs/security.md: configured origins may open it) ----------------------------------


def test_a_page_of_a_configured_origin_may_open_the_graphql_websocket(settings, games):
    with app_client(settings, games, cors_origins=("https://play.example",)) as client, \
            client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"],
                                     headers={"Origin": "https://play.example"}) as ws:
        ws.send_json({"type": "connection_init", "payload": {}})
        assert ws.receive_json()["type"] == "connection_ack"


# -- GameTypes._object and GameTypes.__init__ (survivors of a later run of the schema module) ----------------------


def serve_view(types: GameTypes, view: dict, selection: str) -> dict:
    view_type = types.view_type

    def read_view() -> view_type:
        return types.to_view(view)

    @strawberry.type
    class Query:
        view: view_type = strawberry.field(resolver=read_view)

    result = strawberry.Schema(query=Query).execute_sync(f"{{ view {{ {selection} }} }}")
    assert result.errors is None
    return result.data["view"]


def test_a_view_type_constant_is_served_as_its_json_string():
    types = GameTypes(keyword_game(view_properties={"type": {"const": "board"}, "size": {"type": "integer"}}))
    assert serve_view(types, {"type": "board", "size": 3}, "type size") == {"type": "board", "size": 3}


def test_a_view_type_constant_stays_a_string_even_where_its_schema_also_lists_it_as_a_titled_enum():
    # the discriminator of a view keeps its JSON spelling; a titled enum elsewhere would be SCREAMING_CASE
    kind = {"const": "board", "enum": ["board"], "title": "Kind"}
    types = GameTypes(keyword_game(view_properties={"type": kind, "size": {"type": "integer"}}))
    assert serve_view(types, {"type": "board", "size": 3}, "type") == {"type": "board"}


def test_a_nested_view_object_without_a_title_is_refused_naming_the_field():
    spot = {"type": "object", "properties": {"x": {"type": "integer"}}}
    with pytest.raises(SchemaNotSupported) as refused:
        GameTypes(keyword_game(view_properties={"spot": spot}))
    assert str(refused.value) == "keywords: KeywordsView.spot: nested objects need a title"


def test_a_catalogue_item_object_without_properties_is_refused_naming_the_catalogue():
    types = GameTypes(keyword_game())
    stones = Catalogue("stones", {"title": "Stone", "type": "object"}, (), list)
    with pytest.raises(SchemaNotSupported) as refused:
        types.catalogue_type(stones)
    assert str(refused.value) == "keywords: catalogue stones must be an object schema with properties"


def test_a_catalogue_item_without_a_type_is_refused_naming_the_catalogue():
    types = GameTypes(keyword_game())
    stones = Catalogue("stones", {"title": "Stone", "properties": {"x": {"type": "integer"}}}, (), list)
    with pytest.raises(SchemaNotSupported) as refused:
        types.catalogue_type(stones)
    assert str(refused.value) == "catalogue stones: a type is required"


def two_action_game(move_properties: dict, pass_properties: dict) -> Game:
    game = keyword_game(action_properties=move_properties)
    game.schema["actions"]["pass"] = {"type": "object", "required": ["type"],
                                      "properties": {"type": {"const": "pass"}, **pass_properties}}
    return game


@pytest.mark.parametrize("renamed", [{"type": "integer"}, {"type": "integer", "x-graphql-name": "cardIndex"}],
                         ids=["both live", "both renamed"])
def test_one_action_key_with_two_types_in_two_actions_is_refused_asking_for_a_graphql_name(renamed):
    other = {**renamed, "type": "string"}
    if "x-graphql-name" in other:
        other["x-graphql-name"] = "cardName"
    with pytest.raises(SchemaNotSupported) as refused:
        GameTypes(two_action_game({"card": renamed}, {"card": other}))
    assert str(refused.value) == ("keywords: action field 'card' has different types in different actions; "
                                  "give one an 'x-graphql-name'")


@pytest.mark.parametrize("renamed_in", ["move", "pass"])
def test_a_kept_old_name_gives_way_to_a_live_field_of_another_type_in_the_action_input(renamed_in):
    # whichever action comes first, `card` of the input is the live String and `cardIndex` the renamed Int
    renamed, live = {"type": "integer", "x-graphql-name": "cardIndex"}, {"type": "string"}
    first, second = (renamed, live) if renamed_in == "move" else (live, renamed)
    types = GameTypes(two_action_game({"card": first}, {"card": second}))
    action_input = types.action_input

    def send(action: action_input) -> JSON:
        return types.from_input(action)

    @strawberry.type
    class Query:
        act: JSON = strawberry.field(resolver=send)

    schema = strawberry.Schema(query=Query)
    fields = schema.execute_sync('{ __type(name: "KeywordsActionInput") { inputFields(includeDeprecated: true) '
                                 "{ name isDeprecated type { name } } } }")
    assert fields.errors is None
    assert {f["name"]: (f["type"]["name"], f["isDeprecated"]) for f in fields.data["__type"]["inputFields"]
            if f["name"].startswith("card")} == {"card": ("String", False), "cardIndex": ("Int", False)}
    result = schema.execute_sync('{ act(action: {type: PASS, card: "ace"}) }')
    assert result.errors is None
    assert result.data["act"] == {"type": "pass", "card": "ace"}


# -- GameTypes._field_type, _signature and the schema errors' wording (a later run, once these functions were given
# the tests that go through the schemas they build: tests/mutation/run.py, TESTS_OF) --------------------------------


def field_types(types: GameTypes) -> dict[str, str]:
    """Each field of the game's view, and its GraphQL type's name."""

    @strawberry.type
    class Query:
        view: types.view_type

    result = strawberry.Schema(query=Query).execute_sync(
        '{ __type(name: "KeywordsView") { fields { name type { name ofType { name } } } } }')
    assert result.errors is None
    return {f["name"]: f["type"]["name"] or f["type"]["ofType"]["name"] for f in result.data["__type"]["fields"]}


def test_enums_without_a_title_or_with_values_that_are_no_graphql_names_are_served_as_their_json_values():
    """docs/api.md: a titled enum of GraphQL names becomes a GraphQL enum; any other enum stays the JSON scalar
    its `type` names (a string without one), served as its JSON value."""
    properties = {"mood": {"enum": ["calm", "wild"]}, "rank": {"type": "integer", "enum": [1, 2, 3]},
                  "colour": {"type": "string", "title": "Colour", "enum": ["dark-red", "blue"]}}
    types = GameTypes(keyword_game(view_properties=properties))
    assert field_types(types) == {"mood": "String", "rank": "Int", "colour": "String"}
    view = {"mood": "calm", "rank": 2, "colour": "dark-red"}
    assert serve_view(types, view, "mood rank colour") == view


def test_a_constant_field_is_served_as_its_string():
    types = GameTypes(keyword_game(view_properties={"kind": {"const": "fixed"}, "size": {"type": "integer"}}))
    assert field_types(types) == {"kind": "String", "size": "Int"}
    assert serve_view(types, {"kind": "fixed", "size": 1}, "kind size") == {"kind": "fixed", "size": 1}


SPOT = {"type": "object", "title": "Spot", "properties": {"x": {"type": "integer"}}}


@pytest.mark.parametrize("properties, message", [
    ({"x": {"type": ["integer", "string"]}}, "KeywordsView.x: union types are not supported"),
    ({"x": {"type": ["integer", "string"], "enum": [1, "a"]}}, "KeywordsView.x: union types are not supported"),
    ({"x": {"type": "array"}}, "KeywordsView.x[]: a type is required"),
    ({"x": {"type": "null"}}, "keywords: KeywordsView.x: unsupported schema {'type': 'null'}"),
    ({"x": {"type": "object", "title": "Spot"}}, "keywords: KeywordsView.x must be an object schema with properties"),
    ({"x": {"type": "string", "title": "Colour", "enum": ["red", "blue"]},
      "y": {"type": "string", "title": "Colour", "enum": ["red"]}},
     "keywords: KeywordsView.y: enum 'Colour' has other values elsewhere"),
    ({"x": {"type": "integer"}, "y": {"type": "integer", "x-graphql-name": "x"}},
     "keywords: view: two fields are named 'x'"),
], ids=["union", "union enum", "array without items", "null", "object without properties", "one enum, two lists",
        "one name, two fields"])
def test_a_view_outside_the_supported_subset_is_refused_naming_the_field(properties, message):
    with pytest.raises(SchemaNotSupported) as refused:
        GameTypes(keyword_game(view_properties=properties))
    assert str(refused.value) == message


def test_a_list_of_objects_inside_an_action_is_refused_naming_the_items():
    with pytest.raises(SchemaNotSupported) as refused:
        GameTypes(keyword_game(action_properties={"spots": {"type": "array", "items": SPOT}}))
    assert str(refused.value) == "keywords: KeywordsMoveAction.spots[]: objects inside actions are not supported"


@pytest.mark.parametrize("first, second", [
    ({"type": "integer", "title": "Card"}, {"type": "integer", "title": "Index"}),
    ({"type": "integer", "description": "a card", "minimum": 0}, {"type": "integer", "maximum": 9}),
    ({"type": "string", "enum": ["a", "b"]}, {"type": "string", "enum": ["a", "c"]}),
    ({"type": "array", "items": {"type": "integer"}, "uniqueItems": True, "minItems": 1},
     {"type": "array", "items": {"type": "integer"}, "maxItems": 3}),
], ids=["title", "description and bounds", "enum", "uniqueItems and length"])
def test_one_action_key_whose_schemas_differ_only_in_what_graphql_does_not_type_is_one_input_field(first, second):
    """What GraphQL's type does not carry (a title without an enum, words, bounds, values of an untitled enum,
    uniqueness) does not make two fields: both actions send `card` through one input field."""
    types = GameTypes(two_action_game({"card": first}, {"card": second}))
    assert [name for name in types._input_fields if name.startswith("card")] == ["card"]
