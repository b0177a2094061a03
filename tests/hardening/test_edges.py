"""Issue #23: the edges where a careless or hostile client, or a failing store, used to get a 500,
an exception's own text, or a request the service should not have taken.

Each test names the item of the issue it holds.
"""

import dataclasses
import json
import logging
import socket

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from service.app import create_app
from service.settings import Settings
from service.wire import MAX_DEPTH, depth_exceeds, loads, MalformedJson
from tests.support.high_card import HighCard

DEEP = "[" * 600 + "]" * 600  # 1.2 kB that used to raise RecursionError: 500 and two tracebacks
GQL = "application/json"


def auth(token):
    return {"Authorization": f"Bearer {token}"}


def started(client):
    match_id = client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
    tokens = [client.post(f"/v1/matches/{match_id}/seats", json={"name": n}).json()["token"] for n in ("A", "B")]
    return match_id, tokens


def errors_logged(caplog):
    return [r for r in caplog.records if r.levelno >= logging.ERROR]


# -- 1. deep JSON is a 400, on every door ------------------------------------------------------------


def test_the_depth_bound_is_exact():
    nested = lambda depth: json.dumps(json.loads("[" * depth + "]" * depth))
    assert loads(nested(MAX_DEPTH)) is not None
    with pytest.raises(MalformedJson):
        loads(nested(MAX_DEPTH + 1))
    assert not depth_exceeds({"a": [{"b": 1}]}, 3) and depth_exceeds({"a": [{"b": []}]}, 3)
    with pytest.raises(MalformedJson):
        loads("[" * 100_000)  # the parser's own recursion, before any walk


def test_deep_json_is_400_malformed_request_on_rest_and_graphql(client, caplog):
    """Item 1: a body nested 600 deep, in an action, in options, in GraphQL variables: 400, never a 500."""
    match_id, (t0, _) = started(client)
    caplog.set_level(logging.INFO)
    version = client.get(f"/v1/matches/{match_id}").json()["version"]
    bodies = [
        ("/v1/matches", '{"game": "high-card", "options": %s}' % DEEP, {}),
        (f"/v1/matches/{match_id}/actions", '{"action": {"type": "play", "card": %s}}' % DEEP,
         {**auth(t0), "If-Match": f'"{version}"'}),
    ]
    for path, body, headers in bodies:
        response = client.post(path, content=body, headers={"content-type": "application/json", **headers})
        assert response.status_code == 400, response.text
        assert response.json()["code"] == "malformed_request" and "64" in response.json()["detail"]
    graphql = client.post("/graphql", content='{"query": "{ games { id } }", "variables": {"x": %s}}' % DEEP,
                          headers={"content-type": GQL})
    assert graphql.status_code == 400
    assert graphql.json()["errors"][0]["extensions"]["code"] == "malformed_request"
    assert client.get(f"/v1/matches/{match_id}").json()["version"] == version  # nothing changed
    assert errors_logged(caplog) == []


def test_a_deep_websocket_message_closes_the_connection_cleanly(client):
    """Item 1: on the GraphQL websocket the deep message closes the socket (4400), no unhandled exception."""
    with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        ws.send_text(json.dumps({"type": "connection_init"}))
        assert json.loads(ws.receive_text())["type"] == "connection_ack"
        ws.send_text('{"type": "subscribe", "id": "1", "payload": {"query": "x", "variables": %s}}' % DEEP)
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
    assert closed.value.code == 4400


# -- 2. GraphQL during an outage: 503, coded, nothing internal ----------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_graphql_answers_503_with_retry_after_when_redis_is_down(games, caplog):
    """Item 2: queries and mutations answer as REST does, and the Redis client's text (host, port) stays in."""
    port = _closed_port()
    settings = Settings(redis_url=f"redis://127.0.0.1:{port}/0", key_prefix="unreachable-graphql")
    caplog.set_level(logging.INFO)
    with TestClient(create_app(settings, games=games)) as client:
        for document in ('{ match(id: "abc") { __typename } }',
                         'mutation { joinMatch(input: {matchId: "abc", name: "x"}) { __typename } }'):
            response = client.post("/graphql", json={"query": document})
            assert response.status_code == 503 and response.headers["retry-after"] == "1"
            error = response.json()["errors"][0]
            assert error["extensions"]["code"] == "service_unavailable"
            assert error["extensions"]["request_id"] == response.headers["x-request-id"]
            assert str(port) not in response.text and "127.0.0.1" not in response.text
    assert errors_logged(caplog) == []  # an outage is a warning, not a bug's traceback


# -- 2 and 7. an unexpected error: masked, with the request id everywhere ------------------------------


class BrokenHighCard(HighCard):
    """High Card whose legal actions raise: a bug, as a real one would look."""

    def legal_actions(self, state, seat):
        raise RuntimeError("internal detail redis://10.1.2.3:6379 must not leak")


@pytest.fixture
def broken_client(settings, games):
    games = {**games, "high-card": BrokenHighCard()}
    with TestClient(create_app(dataclasses.replace(settings, key_prefix=settings.key_prefix + "-broken"),
                               games=games), raise_server_exceptions=False) as client:
        yield client


def test_a_500_carries_the_request_id_in_header_body_and_log(broken_client, caplog):
    """Item 7: the request id is set before anything can fail, and every log line of the request has it."""
    match_id, (t0, _) = started(broken_client)
    caplog.set_level(logging.INFO)
    response = broken_client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth(t0))
    assert response.status_code == 500 and response.json()["code"] == "internal_error"
    rid = response.headers["x-request-id"]
    assert response.json()["request_id"] == rid and "10.1.2.3" not in response.text
    failures = errors_logged(caplog)
    assert failures and all(record.request_id == rid for record in failures)
    assert failures[0].exc_info is not None  # a real bug keeps its traceback in the log


def test_graphql_masks_an_unexpected_error(broken_client, caplog):
    """Item 2: never an exception's own text in a response; the code and request id to correlate."""
    match_id, (t0, _) = started(broken_client)
    caplog.set_level(logging.INFO)
    response = broken_client.post("/graphql", headers=auth(t0), json={
        "query": "query($id: ID!) { match(id: $id) { ... on Match { legalActions { __typename } } } }",
        "variables": {"id": match_id}})
    error = response.json()["errors"][0]
    assert error["extensions"] == {"code": "internal_error", "request_id": response.headers["x-request-id"]}
    assert "10.1.2.3" not in response.text and "RuntimeError" not in response.text
    assert [r.request_id for r in errors_logged(caplog)] == [response.headers["x-request-id"]]


# -- 6 and 9. GraphQL documents: the spec's operation rule, and client errors are not log noise --------


def test_two_named_operations_without_operation_name_are_refused(client):
    """Item 6: the GraphQL spec's GetOperation requires an operationName here."""
    document = "query A { games { id } } query B { games { title } }"
    refused = client.post("/graphql", json={"query": document}).json()
    assert refused["data"] is None
    assert refused["errors"][0]["extensions"]["code"] == "operation_name_required"
    chosen = client.post("/graphql", json={"query": document, "operationName": "B"}).json()
    assert "title" in chosen["data"]["games"][0]


def test_invalid_documents_are_logged_at_info_without_a_traceback(client, caplog):
    """Item 9: an attacker's invalid documents must not fill the logs with ERROR tracebacks."""
    caplog.set_level(logging.INFO)
    for document in ("{ nope }", "{ games { id ", "query { games { id } } query { games { id } }"):
        assert client.post("/graphql", json={"query": document}).json()["errors"]
    refused = [r for r in caplog.records if r.name == "grimoire.graphql"]
    assert refused and all(r.levelno == logging.INFO and r.exc_info is None for r in refused)


# -- 8 and 10. headers, and what the service no longer accepts ----------------------------------------


def test_tokens_and_private_views_are_never_cached_and_nothing_is_sniffed(client):
    """Item 8: a seat token and a seat's private view carry Cache-Control: no-store; nosniff everywhere."""
    match_id = client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
    joined = client.post(f"/v1/matches/{match_id}/seats", json={"name": "A"})
    token = joined.json()["token"]
    private = client.get(f"/v1/matches/{match_id}", headers=auth(token))
    graphql = client.post("/graphql", headers=auth(token), json={"query": "{ games { id } }"})
    for response in (joined, private, graphql, client.get("/v1/games")):
        assert response.headers["cache-control"] == "no-store"
        assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("path, accept", [("/docs", "text/html"), ("/graphql", "text/html")])
def test_html_pages_refuse_to_be_framed(client, path, accept):
    """Item 8: the pages where people paste tokens carry a frame-refusing Content-Security-Policy."""
    page = client.get(path, headers={"accept": accept})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"


def test_bodies_must_be_declared_utf8_json(client):
    """Item 10: no Content-Type, or another charset, is 415; undeclared UTF-16 is not guessed."""
    body = json.dumps({"game": "high-card"})
    cases = [({}, body.encode(), 415), ({"content-type": "application/json; charset=utf-16"},
                                        body.encode("utf-16"), 415),
             ({"content-type": "application/json"}, body.encode("utf-16"), 400),
             ({"content-type": "application/json; charset=UTF-8"}, body.encode(), 201)]
    for headers, content, status in cases:
        response = client.post("/v1/matches", content=content, headers=headers)
        assert response.status_code == status, (headers, response.text)


def test_oversized_headers_are_431(client):
    """Item 10: a 70 kB header is refused whichever HTTP parser the server runs (the limit is in the app)."""
    response = client.get("/v1/games", headers={"x-padding": "a" * 70_000})
    assert response.status_code == 431 and response.json()["code"] == "headers_too_large"
    assert client.get("/v1/games", headers={"x-padding": "a" * 8_000}).status_code == 200


# -- 14. only graphql-transport-ws is served ---------------------------------------------------------


def test_the_legacy_graphql_ws_protocol_is_refused(client):
    """Item 14: the legacy ``graphql-ws`` subprotocol (CVE-2026-35523: a subscription without
    ``connection_init``) is not served at all; a client must speak graphql-transport-ws."""
    with pytest.raises(WebSocketDisconnect) as refused:
        with client.websocket_connect("/graphql", subprotocols=["graphql-ws"]) as ws:
            ws.send_text(json.dumps({"type": "start", "id": "1",
                                     "payload": {"query": "subscription { myTurns { __typename } }"}}))
            ws.receive_text()
    assert refused.value.code == 4406
    with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        ws.send_text(json.dumps({"type": "subscribe", "id": "1",  # before connection_init: refused
                                 "payload": {"query": "subscription { myTurns { __typename } }"}}))
        with pytest.raises(WebSocketDisconnect) as unauthorised:
            ws.receive_text()
    assert unauthorised.value.code == 4401
