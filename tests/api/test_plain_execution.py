"""schema/execution.py: the games' views and actions completed without graphql-core's per-field machinery
answer exactly what graphql-core's own executor answers: every field of every game's view and legal actions
along random matches, aliases, fragments merged, ``@skip``/``@include``, ``__typename``, and the errors of a
value that is not plain (which the fast path hands back to graphql-core)."""

from __future__ import annotations

import asyncio
import contextlib
import enum
from typing import Optional

import pytest
import strawberry
from starlette.routing import Route
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from schema.execution import PlainDataExecutor
from service.engine import BOARD_SEAT, Rng
from service.games import all_games
from tests.api.test_play_through import game_fragments
from tests.support import open_collection, play_random

ACTIONS_PER_GAME = 25


def _graphql_schema(client):
    route = next(r for r in client.app.routes if isinstance(r, Route) and r.path == "/graphql")
    return route.app.schema


def _both_ways(client, schema, document, variables, token=None) -> tuple[dict, dict]:
    """The JSON answer to ``document`` with the fast executor, then with strawberry's own."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answers = []
    for executor in (PlainDataExecutor, StrawberryGraphQLCoreExecutionContext):
        schema.execution_context_class = executor
        try:
            answers.append(client.post("/graphql", json={"query": document, "variables": variables},
                                       headers=headers).json())
        finally:
            schema.execution_context_class = PlainDataExecutor
    return answers[0], answers[1]


@pytest.mark.parametrize("game", list(all_games().values()), ids=lambda g: g.id)
def test_every_view_and_legal_action_is_the_same_either_way(client, drain, game):
    schema = _graphql_schema(client)
    variant, seats = game.variants[0].id, game.min_seats
    created = client.post("/v1/matches", json={"game": game.id, "variant": variant, "seats": seats, "seed": 77,
                                               "options": open_collection(game, variant, seats)}).json()
    match_id = created["id"]
    tokens = [client.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"}).json()["token"]
              for i in range(seats)]
    view, actions = game_fragments(game)
    read = f"""query($id: ID!) {{ match(id: $id) {{ ... on Match {{ version status toAct mySeat
                 view {{ __typename {view} }} legalActions {{ __typename {actions} }} }} }} }}"""
    chooser, compared = Rng(5), 0
    for _ in range(ACTIONS_PER_GAME):
        match = client.get(f"/v1/matches/{match_id}").json()
        if match["status"] == "finished":
            break
        if BOARD_SEAT in match["to_act"]:
            drain()
            continue
        seat = chooser.choice(match["to_act"])
        for token in (None, tokens[seat]):  # the spectator's view and the seat's own
            fast, slow = _both_ways(client, schema, read, {"id": match_id}, token)
            assert "errors" not in slow, slow
            assert fast == slow
            compared += 1
        headers = {"Authorization": f"Bearer {tokens[seat]}"}
        legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=headers).json()
        client.post(f"/v1/matches/{match_id}/actions", json={"action": chooser.choice(legal["actions"])},
                    headers={**headers, "If-Match": f'"{legal["version"]}"'})
    assert compared >= 2


def test_aliases_fragments_and_directives_are_the_same_either_way(client):
    schema = _graphql_schema(client)
    created = client.post("/v1/matches", json={"game": "casting-stones", "seed": 3}).json()
    match_id = created["id"]
    for i in range(2):
        client.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"})
    document = """
        query($id: ID!, $yes: Boolean!, $no: Boolean!) { match(id: $id) { ... on Match {
          first: view { ...Hands ... on CastingStonesView { kind: __typename phase @include(if: $yes) } }
          second: view { ... on CastingStonesView { phase @skip(if: $yes) seats: players { seat } } ...Hands }
          legalActions { t: __typename ... on CastingStonesSwapGemsAction { type } ...Swap ...Swap }
          hidden: view @include(if: $no) { __typename }
        } } }
        fragment Hands on CastingStonesView { players { seat again: seat } players { ready seat } }
        fragment Swap on CastingStonesSwapGemsAction { type gems: type }
    """
    for yes in (True, False, True):  # one document, the fields its variables select changing between requests
        fast, slow = _both_ways(client, schema, document, {"id": match_id, "yes": yes, "no": not yes})
        assert "errors" not in slow, slow
        assert fast == slow
        assert list(fast["data"]["match"]["first"]) == list(slow["data"]["match"]["first"])  # key order too
        assert fast["data"]["match"]["first"]["kind"] == "CastingStonesView"
        assert ("phase" in fast["data"]["match"]["first"]) is yes and ("hidden" in fast["data"]["match"]) is not yes


@strawberry.enum
class Colour(enum.Enum):
    RED = "red"


@strawberry.type
class Leaf:
    name: str
    colour: Optional[Colour] = None


@strawberry.type
class Branch:
    leaves: list[Leaf]
    count: int


@strawberry.type
class Query:
    @strawberry.field
    def branch(self, kind: str) -> Optional[Branch]:
        if kind == "missing-name":  # a null where the schema promises a value
            return Branch(leaves=[Leaf(name="a"), Leaf(name=None)], count=2)  # type: ignore[arg-type]
        if kind == "bad-count":  # an Int that does not coerce
            return Branch(leaves=[], count="many")  # type: ignore[arg-type]
        if kind == "bad-enum":
            return Branch(leaves=[Leaf(name="a", colour="green")], count=1)  # type: ignore[arg-type]
        if kind == "wrong-class":  # not the declared type at all
            return Leaf(name="x")  # type: ignore[return-value]
        return Branch(leaves=[Leaf(name="a", colour=Colour.RED)], count=1)


@pytest.mark.parametrize("kind", ["fine", "missing-name", "bad-count", "bad-enum", "wrong-class"])
def test_a_value_that_is_not_plain_gets_graphql_cores_own_answer(kind):
    document = '{ branch(kind: "%s") { count leaves { name colour } } }' % kind
    answers = []
    for executor in (PlainDataExecutor, StrawberryGraphQLCoreExecutionContext):
        result = asyncio.run(strawberry.Schema(query=Query, execution_context_class=executor).execute(document))
        answers.append((result.data, [(e.message, e.path) for e in result.errors or []]))
    assert answers[0] == answers[1]
    assert (kind == "fine") == (not answers[0][1])


def test_followers_share_an_event_only_when_they_may_see_the_same(client):
    """Two spectators (resuming from different versions) share each update's execution; the seat's own
    subscription gets its own events, as REST's history shows them to it, never the spectators'."""
    from schema import execution

    created = client.post("/v1/matches", json={"game": "spells-and-potions", "seed": 11}).json()
    match_id = created["id"]
    tokens = [client.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"}).json()["token"]
              for i in range(2)]
    query = ("subscription($id: ID!, $after: Int!) { matchEvents(matchId: $id, after: $after) { __typename "
             "... on MatchEvent { version seat events toAct } } }")
    followers = {"spectator": (None, 0), "late spectator": (None, 1), "seat 0": (tokens[0], 0)}
    chooser = Rng(3)

    def play(count: int) -> None:
        assert play_random(client, match_id, tokens, count, chooser) > 0

    play(1)  # version 1 exists, so the late spectator starts after it
    shared_before = len(execution._SHARED_EVENTS.results)
    received = {}
    with contextlib.ExitStack() as stack:
        sockets = {}
        for name, (token, after) in followers.items():
            ws = stack.enter_context(client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]))
            ws.send_json({"type": "connection_init", "payload": {"token": token} if token else {}})
            assert ws.receive_json()["type"] == "connection_ack"
            ws.send_json({"id": "1", "type": "subscribe",
                          "payload": {"query": query, "variables": {"id": match_id, "after": after}}})
            sockets[name] = ws
        play(5)
        for name, ws in sockets.items():
            updates = []
            for _ in range(6 - followers[name][1]):  # versions after..6, one message each
                message = ws.receive_json()
                assert message["type"] == "next" and "errors" not in message["payload"], message
                updates.append(message["payload"]["data"]["matchEvents"])
            received[name] = {u["version"]: u for u in updates}
    assert sorted(received["late spectator"]) == [2, 3, 4, 5, 6]
    assert all(received["spectator"][v] == update for v, update in received["late spectator"].items())
    as_seen = {}
    for name, token in (("spectator", None), ("seat 0", tokens[0])):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        history = client.get(f"/v1/matches/{match_id}/history", headers=headers).json()["entries"]
        as_seen[name] = {entry["version"]: entry["events"] for entry in history}
        assert {v: u["events"] for v, u in received[name].items()} == as_seen[name]
    assert as_seen["spectator"] != as_seen["seat 0"]  # the seat saw something the spectators did not
    # versions 2-6 executed once for both spectators and once for the seat; version 1 for the first spectator
    # and the seat: 12 results kept, not the 17 deliveries
    assert len(execution._SHARED_EVENTS.results) - shared_before == 12
