"""The GraphQL query cost limit (schema/cost.py) counted exactly, and the edges of the GraphQL app
(schema/asgi.py), of the game types' input conversion (schema/game_types.py) and of the identity cache
(schema/identity_cache.py) that a client or operator can see.

Written against the survivors of the mutation run of the ``schema`` module (tests/mutation/run.py): each
test pins a number or an answer that one of them changed. The cost's walk is checked on a small schema of its
own (a ``first`` argument, a nested list, a union: shapes the service's schema lacks) and on the service's;
the app through the session's app, on the run's real Redis."""

from __future__ import annotations

import asyncio
from typing import Annotated

import pytest
import strawberry
from starlette.websockets import WebSocketDisconnect
from strawberry.extensions import AddValidationRules
from strawberry.subscriptions.protocols.graphql_transport_ws import (
    handlers as transport_ws,
)

from schema import build_schema
from schema.cost import max_cost_rule
from schema.identity_cache import MISSING, IdentityCache
from tests.support.high_card import GAME

# -- the cost of a document (docs/security.md: fields resolved, a list counted as its limit, else its default,
#    else 10 items; fragments expanded where spread; introspection free) ----------------------------------------


@strawberry.type
class Book:
    id: strawberry.ID
    tags: list[str]
    related: list[Book]  # no limit argument: the assumed ten


@strawberry.type
class Cell:
    x: int


Pick = Annotated[Book | Cell, strawberry.union("Pick")]


@strawberry.type
class Query:
    book: Book | None = None
    pick: Pick | None = None
    grid: list[list[Cell]] = strawberry.field(default_factory=list)

    @strawberry.field
    def shelf(self, first: int = 3) -> list[Book]:
        return []

    @strawberry.field
    def racks(self, limit: int = 1) -> list[Book]:
        return []

    @strawberry.field
    def books(self, limit: int | None = None, after: int = 0) -> list[Book]:
        return []


#: every document that costs anything is refused, so each refusal tells its cost
PRICED = strawberry.Schema(query=Query, extensions=[lambda: AddValidationRules([max_cost_rule(0)])])


def priced(document: str, schema=PRICED) -> tuple[int | None, list[str]]:
    """The document's cost (None when it is free, so not refused), and the other errors it gets."""
    errors = schema.execute_sync(document).errors or []
    costs = [e.extensions["cost"] for e in errors if (e.extensions or {}).get("code") == "query_too_costly"]
    assert len(costs) <= 1, errors
    return (costs[0] if costs else None), [e.message for e in errors
                                           if (e.extensions or {}).get("code") != "query_too_costly"]


def cost(document: str, schema=PRICED) -> int | None:
    found, others = priced(document, schema)
    assert others == []
    return found


@pytest.mark.parametrize("document, expected", [
    ("{ shelf { id } }", 1 + 3),  # the default of `first`
    ("{ shelf(first: 7) { id } }", 1 + 7),  # `first` given as a literal
    ("{ racks { id } }", 1 + 1),  # a default of one item is one item
    ("{ none: racks(limit: 0) { id } one: racks(limit: 1) { id } }", (1 + 1) + (1 + 1)),  # under one counts one
    ("{ books { id } }", 1 + 10),  # neither given nor a default: the assumption
    ("{ books(after: 500) { id } }", 1 + 10),  # another number argument is no length
    ("query($n: Int) { books(limit: $n) { id } }", 1 + 10),  # a variable is no literal
    ("{ grid { x } }", 1 + 10 * 10),  # a list of lists: each level multiplies
], ids=["first-default", "first-literal", "limit-default-one", "limit-zero-and-one", "assumed", "other-argument",
        "variable", "nested-lists"])
def test_a_list_counts_as_its_literal_limit_or_first_else_its_default_else_ten(document, expected):
    assert cost(document) == expected


def test_introspection_costs_nothing_and_does_not_hide_the_fields_beside_it():
    assert cost("{ __schema { queryType { name } } }") is None
    assert cost("{ __typename book { id } }") == 1 + 1
    assert cost("{ book { __typename id } }") == 1 + 1


@pytest.mark.parametrize("document, expected", [
    ("{ book { id } ... on Query { book { tags } } }", 2 + 2),
    ("{ ... { book { id } } }", 2),  # no type condition: the enclosing type
    ("{ book { id } ...f } fragment f on Query { book { tags } }", 2 + 2),
    ("{ ...a } fragment a on Query { ...b } fragment b on Query { book { id } }", 2),  # spread within a spread
    ("{ ...a } fragment a on Query { ... on Query { book { id } } }", 2),
    # the fragment's own type, not the union it is spread in, says what `related` is: a list of ten
    ("{ pick { ...b } } fragment b on Book { related { id } }", 1 + (1 + 10)),
    ("{ pick { ... on Book { related { id } } } }", 1 + (1 + 10)),
], ids=["inline", "inline-untyped", "spread", "nested-spreads", "inline-in-spread", "spread-in-union",
        "inline-in-union"])
def test_fragments_are_counted_where_they_are_spread_besides_the_other_fields(document, expected):
    assert cost(document) == expected


@pytest.mark.parametrize("document, errors, expected", [
    ("{ nope book { id } }", ["Cannot query field 'nope' on type 'Query'."], 1 + 2),
    ("{ ...nope book { id } }", ["Unknown fragment 'nope'."], 2),
    ("{ book { id { x } } }", ["Field 'id' must not have a selection since type 'ID!' has no subfields."], 1 + 2),
    ("{ pick { id } }", ["Cannot query field 'id' on type 'Pick'. Did you mean to use an inline fragment on 'Book'?"],
     1 + 1),
    ("{ ...a } fragment a on Query { ...b } fragment b on Query { ...a book { id } }",
     ["Cannot spread fragment 'a' within itself via 'b'."], 2),
    ("{ shelf(limit: 2) { id } }", ["Unknown argument 'limit' on field 'Query.shelf'. Did you mean 'first'?"], 1 + 2),
], ids=["unknown-field", "unknown-fragment", "selection-on-a-scalar", "field-of-a-union", "fragment-cycle",
        "unknown-limit"])
def test_a_document_another_rule_refuses_is_still_costed_beside_that_error(document, errors, expected):
    """The other rules' errors come as they are: the cost walk neither fails on what they refuse nor stops
    counting at it (an unknown field counts one)."""
    assert priced(document) == (expected, errors)


@pytest.fixture(scope="module")
def service():
    """The service's schema with a limit of 0, built in the test run (not at import, before the mutation run's
    trampolines take a mutant: tests/mutation/run.py)."""
    return build_schema({GAME.id: GAME}, max_cost=0)


def test_the_services_history_counts_as_its_default_hundred_whatever_it_starts_after(service):
    match = "query($id: ID!) { match(id: $id) { %s } }"
    assert cost(match % "... on Match { history(after: 500) { version } }", service) == 1 + (1 + 100)
    assert cost(match % "... on Match { history(limit: 3) { version } }", service) == 1 + (1 + 3)
    # the limit counts wherever it stands among the field's arguments
    assert cost(match % "... on Match { history(after: 5, limit: 3) { version } }", service) == 1 + (1 + 3)
    spread = "query($id: ID!) { match(id: $id) { ...m } } fragment m on Match { history { version seat } }"
    assert cost(spread, service) == 1 + (1 + 100 * 2)  # `m` is on Match, not on the union `match` answers


def test_a_refusal_names_the_operation_its_cost_and_the_limit(service):
    [error] = service.execute_sync("query Lobby { lobby(limit: 2) { id } }").errors
    assert error.message == ("Lobby costs 3, more than the limit of 0: select fewer fields, or pass a smaller "
                             "limit to lists (each list is counted as 10 items unless limited).")
    assert error.extensions == {"code": "query_too_costly", "cost": 3, "max_cost": 0}


# -- the GraphQL app (schema/asgi.py) --------------------------------------------------------------------------


def test_a_subscription_over_http_is_refused_in_these_words(client):
    response = client.post("/graphql", json={"query": "subscription { myTurns { __typename } }"})
    assert response.status_code == 400
    assert response.json() == {"errors": [{
        "message": "Subscriptions are served over the websocket at /graphql (the graphql-transport-ws protocol), "
                   "not over HTTP.",
        "extensions": {"code": "malformed_request"}}]}


def test_a_syntax_error_in_a_document_naming_subscription_is_a_syntax_error(client):
    # only a document that parses as a subscription is sent to the websocket; the rest is graphql's to answer
    response = client.post("/graphql", json={"query": "subscription { myTurns { __typename }"})
    assert response.status_code == 200
    assert response.json()["errors"] == [{"message": "Syntax Error: Expected Name, found <EOF>.",
                                          "locations": [{"line": 1, "column": 38}],
                                          "extensions": {"code": "graphql_parse_failed"}}]


def test_a_body_without_a_query_is_a_400_naming_the_missing_query(client):
    # the app looks for a subscription in every body before strawberry runs it: a body with no query is not one
    response = client.post("/graphql", json={"variables": {}})
    assert response.status_code == 400
    assert response.json() == {"errors": [{"message": "No GraphQL query found in the request",
                                           "extensions": {"code": "malformed_request"}}]}


def test_a_query_in_the_url_is_not_run(client):
    """GraphQL is served at POST /graphql (docs/api.md): a query in a URL would be kept in logs and histories
    (docs/security.md), so GET runs none."""
    response = client.get("/graphql", params={"query": "{ games { id } }"})
    assert response.status_code == 400
    assert response.json() == {"errors": [{"message": "queries are not allowed when using GET",
                                           "extensions": {"code": "malformed_request"}}]}


class _Clock:
    """``asyncio`` as strawberry's graphql-transport-ws handler sees it, with a clock of the test's: each sleep is
    noted, and either never ends (the wait for ``connection_init`` lasts until the message comes) or, once
    ``run_out`` is set, ends at once (the wait runs out without taking its real length)."""

    def __init__(self):
        self.slept: list[float] = []
        self.run_out = False

    def __getattr__(self, name):
        return getattr(asyncio, name)

    async def sleep(self, delay, result=None):
        self.slept.append(delay)
        if not self.run_out:
            await asyncio.get_running_loop().create_future()  # cancelled when connection_init comes
        return result


def test_a_websocket_waits_ten_seconds_for_connection_init_then_closes_with_4408(client, monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(transport_ws, "asyncio", clock)
    with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        ws.send_json({"type": "connection_init", "payload": {}})
        assert ws.receive_json()["type"] == "connection_ack"
    assert clock.slept == [10]
    clock.run_out = True
    with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws, \
            pytest.raises(WebSocketDisconnect) as closed:
        ws.receive_json()
    assert (closed.value.code, closed.value.reason) == (4408, "Connection initialisation timeout")


# -- game actions in, and the identity cache ---------------------------------------------------------------------

SUBMIT = """mutation($input: SubmitActionInput!) { submitAction(input: $input) { __typename
  ... on ActionAccepted { version events } ... on Problem { code message } } }"""


def test_an_action_listing_enum_values_reaches_the_game_as_their_json_strings(client):
    """Spells and Potions' Ritual with three wizards starts with the arranger's ``arrange``: a list of posts."""
    match_id = client.post("/v1/matches", json={"game": "spells-and-potions", "variant": "ritual", "seats": 3,
                                                "seed": "5"}).json()["id"]
    tokens = [client.post(f"/v1/matches/{match_id}/seats", json={"name": n}).json()["token"] for n in "ABC"]
    [arranger] = client.get(f"/v1/matches/{match_id}").json()["to_act"]
    answer = client.post("/graphql", headers={"Authorization": f"Bearer {tokens[arranger]}"}, json={
        "query": SUBMIT, "variables": {"input": {"matchId": match_id, "expectedVersion": 0, "action": {
            "spellsAndPotions": {"type": "ARRANGE", "posts": ["SOUTH", "WEST", "EAST"]}}}}}).json()
    accepted = answer["data"]["submitAction"]
    assert accepted["__typename"] == "ActionAccepted", answer
    # the event lists the seat at each post, north (the Companion's) to west: the posts given, seat by seat
    assert accepted["events"][0] == {"type": "arranged", "by": arranger, "posts": [None, 2, 0, 1]}


def test_a_renamed_field_sent_under_both_names_with_two_values_is_refused_naming_them(client):
    answer = client.post("/graphql", json={"query": SUBMIT, "variables": {"input": {
        "matchId": "any", "expectedVersion": 0,
        "action": {"quidditch": {"type": "PLAY_SPECIAL", "card": "c1", "ball": "quaffle", "targetBall": "snitch"}}}}})
    assert answer.json()["data"]["submitAction"] == {
        "__typename": "MalformedAction", "code": "MALFORMED_ACTION",
        "message": "targetBall and another name of `ball` disagree."}


def test_the_identity_cache_remembers_the_last_maxsize_keys_and_forgets_the_oldest():
    cache = IdentityCache(2)
    first, second, third = object(), object(), object()
    assert cache.put((first,), "one") == "one"
    cache.put((second,), "two")
    assert (cache.get((first,)), cache.get((second,))) == ("one", "two")  # two keys fit in two
    cache.put((third,), "three")  # `first` was used before `second`, so it is the oldest
    assert (cache.get((first,)), cache.get((second,)), cache.get((third,))) == (MISSING, "two", "three")

