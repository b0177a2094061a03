"""What generated GraphQL clients rely on (issue 24): one document may cover every game, a legal action
goes back as input verbatim, each game has its own types beside the global unions, problem codes and all
enum values are SCREAMING_CASE enums."""

import re

import pytest
from graphql import (
    GraphQLEnumType, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLUnionType, OperationDefinitionNode,
    get_named_type, parse, validate,
)
from graphql.execution.values import get_variable_values

from schema import build_schema
from schema.game_types import GameTypes, pascal, screaming
from service.engine import BOARD_SEAT, MalformedAction, Rng, RuleError
from service.games import all_games
from service.rest.problems import STATUS

GAMES = all_games()


@pytest.fixture(scope="module")
def schema():
    return build_schema(GAMES)._schema


def camel(game_id: str) -> str:
    return pascal(game_id)[0].lower() + pascal(game_id)[1:]


def every_field(graphql_type, *, typename: bool = True) -> str:
    """A selection set asking for every field that is not deprecated, and every member of a union."""
    named = get_named_type(graphql_type)
    if isinstance(named, GraphQLUnionType):
        members = " ".join(f"... on {m.name} {every_field(m, typename=typename)}" for m in named.types)
        return "{ " + ("__typename " if typename else "") + members + " }"
    if not isinstance(named, GraphQLObjectType):
        return ""
    return "{ " + " ".join(f"{name} {every_field(field.type, typename=typename)}"
                           for name, field in named.fields.items() if not field.deprecation_reason) + " }"


def test_one_document_selects_every_field_of_every_game(schema):
    """A field name with two types in two members of a union fails validation ("fields conflict"): every
    member of GameView and GameAction, every field, in one document, validates."""
    view, actions = every_field(schema.type_map["GameView"]), every_field(schema.type_map["GameAction"])
    document = parse(f"query Everything($id: ID!) {{ match(id: $id) {{ ... on Match {{ view {view} "
                     f"legalActions {actions} history {{ action {actions} }} }} }} }}")
    errors = validate(schema, document)
    assert not errors, ("give one of the fields an x-graphql-name in the game's schema.json: "
                        + "; ".join(e.message for e in errors[:5]))


def assignable(output, input_type) -> bool:
    """Whether a value of the output type always fits the input type, as a strict type checker sees it."""
    if isinstance(input_type, GraphQLNonNull):
        return isinstance(output, GraphQLNonNull) and assignable(output.of_type, input_type.of_type)
    if isinstance(output, GraphQLNonNull):
        return assignable(output.of_type, input_type)
    if isinstance(output, GraphQLList) or isinstance(input_type, GraphQLList):
        return (isinstance(output, GraphQLList) and isinstance(input_type, GraphQLList)
                and assignable(output.of_type, input_type.of_type))
    return output.name == input_type.name


def test_a_legal_action_type_checks_as_the_games_input(schema):
    """The type a generated client gives a legal action fits `<Game>ActionInput` with no cast (the action's
    `type` was `String!` out and an enum in)."""
    for game in GAMES.values():
        prefix = pascal(game.id)
        input_fields = schema.type_map[f"{prefix}ActionInput"].fields
        for action_type in game.action_schemas:
            member = schema.type_map[f"{prefix}{pascal(action_type)}Action"]
            for name, field in member.fields.items():
                if not field.deprecation_reason:
                    wanted = input_fields[name].type if name in input_fields else None
                    assert wanted is not None and assignable(field.type, wanted), \
                        f"{member.name}.{name}: {field.type} does not fit {wanted}"


def test_a_renamed_field_takes_its_old_name_for_one_release():
    """Quidditch's play_special names its `ball` targetBall in GraphQL (play_card's `ball` is required, its
    own is not): the old input name is accepted too, both give the same JSON action, and disagreeing
    values are refused."""
    types = GameTypes(GAMES["quidditch"])
    kind = types.action_type("play_special")

    def action(**fields):
        return types.from_input(types.action_input(type_=kind, card="c1", **fields))

    expected = {"type": "play_special", "card": "c1", "ball": "quaffle", "target": "c9"}
    assert action(targetBall="quaffle", targetCard="c9") == expected
    assert action(ball="quaffle", target="c9") == expected
    assert action(ball="quaffle", targetBall="quaffle", targetCard="c9") == expected
    with pytest.raises(MalformedAction):
        action(ball="quaffle", targetBall="snitch")
    answer = types.to_action(expected)
    assert (answer.targetBall, answer.targetCard, answer.ball, answer.target) == ("quaffle", "c9", "quaffle", "c9")


def test_each_game_has_its_own_action_union_and_typed_match(schema):
    """A one-game client reads `Match.<game>` and meets only its game's types."""
    match_type = schema.type_map["Match"]
    for game in GAMES.values():
        prefix = pascal(game.id)
        typed = get_named_type(match_type.fields[camel(game.id)].type)
        assert typed.name == f"{prefix}Match" and not isinstance(match_type.fields[camel(game.id)].type,
                                                                  GraphQLNonNull)
        assert get_named_type(typed.fields["view"].type).name == f"{prefix}View"
        union = get_named_type(typed.fields["legalActions"].type)
        assert union.name == f"{prefix}Action"
        assert sorted(m.name for m in union.types) == sorted(f"{prefix}{pascal(t)}Action"
                                                             for t in game.action_schemas)


def test_problem_codes_are_an_enum_of_the_rest_codes(schema):
    code = schema.type_map["Problem"].fields["code"].type
    assert isinstance(code, GraphQLNonNull) and code.of_type.name == "ProblemCode"
    assert set(code.of_type.values) == {screaming(c) for c in STATUS}
    assert get_named_type(schema.type_map["Problem"].fields["ruleCode"].type).name == "String"


def test_a_games_own_rule_code_is_an_illegal_action_that_keeps_the_code():
    from schema.problems import problem_for

    own = problem_for(RuleError("Not next to it.", code="not_adjacent"))
    assert (type(own).__name__, own.code.name, own.rule_code) == ("IllegalAction", "ILLEGAL_ACTION", "not_adjacent")
    known = problem_for(RuleError("Over.", code="match_finished"))
    assert (type(known).__name__, known.code.name, known.rule_code) == ("MatchFinished", "MATCH_FINISHED", None)


def test_every_enum_value_is_screaming_case(schema):
    """Lowercase values clash with method names in generated Python enums (str.replace)."""
    lowercase = [f"{t.name}.{v}" for t in schema.type_map.values()
                 if isinstance(t, GraphQLEnumType) and not t.name.startswith("__")
                 for v in t.values if not re.fullmatch(r"[A-Z][A-Z0-9_]*", v)]
    assert not lowercase


SUBMIT = """mutation Submit($input: SubmitActionInput!) { submitAction(input: $input) { __typename
  ... on ActionAccepted { version events } ... on Problem { code message ruleCode } } }"""
STEPS = 25


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_every_legal_action_goes_back_verbatim(client, drain, schema, game_id):
    """Every legal action, read from the game's typed `legalActions` with every field, is a valid
    ActionInput as it is (GraphQL coerces the variables), and one of them is accepted at each step."""
    game, field = GAMES[game_id], camel(game_id)
    actions = every_field(schema.type_map[f"{pascal(game_id)}Action"], typename=False)
    others = " ".join(f"{camel(g)} {{ __typename }}" for g in GAMES if g != game_id)
    read = f"""query Read($id: ID!) {{ match(id: $id) {{ ... on Match {{ version toAct status {others}
               {field} {{ legalActions {actions} }} }} }} }}"""
    submit_operation = next(d for d in parse(SUBMIT).definitions if isinstance(d, OperationDefinitionNode))

    def gql(query, variables, token=None):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        body = client.post("/graphql", json={"query": query, "variables": variables}, headers=headers).json()
        assert "errors" not in body, body
        return body["data"]

    created = gql("mutation Create($input: CreateMatchInput!) { createMatch(input: $input) { "
                  "... on MatchCreated { match { id } } } }", {"input": {"game": game_id, "seed": "24"}})
    match_id = created["createMatch"]["match"]["id"]
    tokens = [gql("mutation Join($input: JoinMatchInput!) { joinMatch(input: $input) { ... on SeatJoined { token } } }",
                  {"input": {"matchId": match_id, "name": f"P{i}"}})["joinMatch"]["token"]
              for i in range(game.min_seats)]
    chooser, seen = Rng(24), set()
    for _ in range(STEPS):
        spectator = gql(read, {"id": match_id})["match"]
        if spectator["status"] == "FINISHED":
            break
        if BOARD_SEAT in spectator["toAct"]:
            drain()
            continue
        seat = chooser.choice(spectator["toAct"])
        match = gql(read, {"id": match_id}, tokens[seat])["match"]
        assert all(match[camel(g)] is None for g in GAMES if g != game_id)
        legal = match[field]["legalActions"]
        for action in legal:
            variables = {"input": {"matchId": match_id, "expectedVersion": match["version"],
                                   "action": {field: action}}}
            coerced = get_variable_values(schema, submit_operation.variable_definitions, variables)
            assert not isinstance(coerced, list), (action, coerced)  # a list holds the errors
            seen.add(action["type"])
        chosen = chooser.choice(legal)
        result = gql(SUBMIT, {"input": {"matchId": match_id, "expectedVersion": match["version"],
                                        "action": {field: chosen}}}, tokens[seat])["submitAction"]
        assert result["__typename"] == "ActionAccepted", (chosen, result)
        assert all(e["type"] == e["type"].lower() for e in result["events"]), "events are JSON: lowercase values"
    assert seen and all(t == screaming(t) for t in seen)
