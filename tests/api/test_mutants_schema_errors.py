"""What a client sees, and what the log says, when a GraphQL request fails (schema/errors.py), where the
mutation run (tests/mutation/run.py) found it untested: the code each of a client's own errors gets, the
masked answer to a bug, an outage, a missing rules version and an unconfirmed write (message, location,
path, code and request id, exactly), and the one log line each is worth, at its level.

All through the app, on the run's real Redis (a closed port for the outage)."""

from __future__ import annotations

import dataclasses
import logging
import re
import socket
from contextlib import contextmanager

import pytest
from starlette.testclient import TestClient

from service.app import create_app
from tests.support.high_card import HighCard

LOGGER = "grimoire.graphql"
MATCH_TYPENAME = "query($id: ID!) { match(id: $id) { __typename } }"  # `match` at line 1, column 19


@pytest.fixture(scope="module")
def prefix(key_prefix):
    """A keyspace of this module's own inside the run's: its matches stay out of the shared lobby, and the
    run's own clean-up deletes it."""
    return f"{key_prefix}:errors"


@contextmanager
def app(settings, games, **changes):
    """An app of its own, without a worker thread (nothing runs behind a test's back)."""
    with TestClient(create_app(dataclasses.replace(settings, embedded_worker=False, **changes), games=games),
                    raise_server_exceptions=False) as client:
        yield client


def logged(caplog) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == LOGGER]


def auth(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def seated(client, game: str) -> tuple[str, list[str]]:
    match_id = client.post("/v1/matches", json={"game": game, "seats": 2}).json()["id"]
    tokens = [client.post(f"/v1/matches/{match_id}/seats", json={"name": n}).json()["token"] for n in ("A", "B")]
    return match_id, tokens


# -- a client's own errors: passed as they are, coded, logged at INFO without a traceback -----------------


@pytest.mark.parametrize("body, message, code", [
    ({"query": "{ games { id "}, "Syntax Error: Expected Name, found <EOF>.", "graphql_parse_failed"),
    ({"query": MATCH_TYPENAME},
     "Variable '$id' has invalid value: Expected a value of non-null type 'ID!' to be provided.", "bad_user_input"),
    ({"query": MATCH_TYPENAME, "variables": {"id": ["a"]}},
     "Variable '$id' has invalid value: ID cannot represent value: ['a']", "bad_user_input"),
    ({"query": "{ nope }"}, "Cannot query field 'nope' on type 'Query'.", "graphql_validation_failed"),
    # the document's own mistakes about its variables are validation errors, though they start like the above
    ({"query": "query Op($x: String) { games { id } }"}, "Variable '$x' is never used in operation 'Op'.",
     "graphql_validation_failed"),
    ({"query": "query Op { match(id: $x) { __typename } }"}, "Variable '$x' is not defined by operation 'Op'.",
     "graphql_validation_failed"),
], ids=["syntax", "missing-variable", "bad-variable", "validation", "unused-variable", "undefined-variable"])
def test_a_clients_own_error_is_coded_by_its_kind_and_logged_at_info(client, caplog, body, message, code):
    caplog.set_level(logging.INFO, logger=LOGGER)
    answer = client.post("/graphql", json=body)
    assert answer.status_code == 200
    [error] = answer.json()["errors"]
    assert error["message"] == message
    assert error["extensions"] == {"code": code}  # exactly: nothing of ours is added to a client's error
    [record] = logged(caplog)
    assert record.levelno == logging.INFO and record.exc_info is None
    assert record.getMessage() == f"graphql request refused: {message}"
    assert record.code == "invalid_request"  # uncoded when logged: the code is the client's answer's


def test_a_refusal_that_has_a_code_is_logged_with_it(client, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    answer = client.post("/graphql", json={"query": "query A { games { id } } query B { games { id } }"})
    message = "Must provide operationName if the document contains several operations."
    assert answer.json() == {"data": None, "errors": [{"message": message,
                                                      "extensions": {"code": "operation_name_required"}}]}
    [record] = logged(caplog)
    assert (record.levelno, record.getMessage(), record.code, record.exc_info) == (
        logging.INFO, f"graphql request refused: {message}", "operation_name_required", None)


# -- not the client's: masked to a code and the request id, the location and path kept --------------------


class BrokenHighCard(HighCard):
    """High Card whose legal actions raise: a bug, as a real one would look."""

    def legal_actions(self, state, seat):
        raise RuntimeError("internal detail redis://10.1.2.3:6379 must not leak")


def test_a_bug_is_masked_to_internal_error_and_logged_with_its_traceback(settings, games, prefix, caplog):
    with app(settings, {**games, "high-card": BrokenHighCard()}, key_prefix=prefix) as broken:
        match_id, (t0, _) = seated(broken, "high-card")
        caplog.set_level(logging.INFO, logger=LOGGER)
        answer = broken.post("/graphql", headers=auth(t0), json={
            "query": "query($id: ID!) {\n  match(id: $id) { ... on Match { legalActions { __typename } } } }",
            "variables": {"id": match_id}})
    assert answer.status_code == 200
    assert answer.json() == {"data": None, "errors": [{
        "message": "Something went wrong on our side; it has been logged.",
        "locations": [{"line": 2, "column": 35}], "path": ["match", "legalActions"],
        "extensions": {"code": "internal_error", "request_id": answer.headers["x-request-id"]}}]}
    [record] = logged(caplog)
    assert record.levelno == logging.ERROR
    assert record.getMessage() == "unhandled error in a GraphQL resolver"
    kind, raised, traceback = record.exc_info
    assert kind is RuntimeError and type(raised) is RuntimeError
    assert str(raised) == "internal detail redis://10.1.2.3:6379 must not leak"
    assert traceback is raised.__traceback__ and traceback is not None  # where the bug is


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_outage_is_service_unavailable_and_one_warning(settings, games, caplog):
    port = _closed_port()
    with app(settings, games, redis_url=f"redis://127.0.0.1:{port}/0", key_prefix="unreachable-errors") as down:
        caplog.set_level(logging.INFO, logger=LOGGER)
        answer = down.post("/graphql", json={"query": MATCH_TYPENAME, "variables": {"id": "abc"}})
    assert answer.status_code == 503 and answer.headers["retry-after"] == "1"
    assert answer.json() == {"data": None, "errors": [{
        "message": "The match store is unavailable; try again shortly.",
        "locations": [{"line": 1, "column": 19}], "path": ["match"],
        "extensions": {"code": "service_unavailable", "request_id": answer.headers["x-request-id"]}}]}
    [record] = logged(caplog)
    assert (record.levelno, record.getMessage(), record.exc_info) == (
        logging.WARNING, "redis unavailable: ConnectionError", None)


def _newer(game):
    """The same game at another rules version, as a newer release would ship it."""
    return type(type(game).__name__, (type(game),), {"rules_version": f"{game.rules_version}-next"})()


def test_a_missing_rules_version_is_passed_on_with_its_own_words(settings, games, prefix, caplog):
    version = games["quidditch"].rules_version
    with app(settings, games, key_prefix=prefix) as current, \
            app(settings, {**games, "quidditch": _newer(games["quidditch"])}, key_prefix=prefix) as newer:
        match_id, _ = seated(current, "quidditch")
        caplog.set_level(logging.INFO, logger=LOGGER)
        answer = newer.post("/graphql", json={"query": MATCH_TYPENAME, "variables": {"id": match_id}})
    assert answer.status_code == 503 and answer.headers["retry-after"] == "1"
    assert answer.json() == {"data": None, "errors": [{
        "message": f"This match plays quidditch rules version {version}, which this server does not have "
                   f"(it has {version}-next); try again: another server may.",
        "locations": [{"line": 1, "column": 19}], "path": ["match"],
        "extensions": {"code": "rules_version_unavailable", "request_id": answer.headers["x-request-id"]}}]}
    [record] = logged(caplog)
    assert (record.levelno, record.getMessage(), record.exc_info) == (
        logging.WARNING, f"rules version unavailable: quidditch {version}", None)


UNCONFIRMED = re.compile(re.escape("The action was applied, but ") + r"\d+" + re.escape(
    " of the 9 replica(s) required confirmed it within 20 ms, so a failover could still lose it. Send the same "
    "request again with the same idempotencyKey: the answer is its fate (its first outcome if it was kept; "
    "applied now if it was lost). Without a key, read the match and its history before acting again."))


def test_an_unconfirmed_write_names_the_graphql_idempotency_key(settings, games, prefix, caplog):
    """No replica confirms 9 acks in 20 ms: the action is applied, and the answer tells how to learn its fate
    in GraphQL's words (the ``idempotencyKey`` argument, not REST's ``Idempotency-Key`` header)."""
    with app(settings, games, key_prefix=prefix, replica_acks=9, replica_wait_ms=20) as acked:
        match_id, (t0, _) = seated(acked, "high-card")  # only an action waits for the replicas
        hand = acked.get(f"/v1/matches/{match_id}", headers=auth(t0)).json()["view"]["hand"]
        caplog.set_level(logging.INFO, logger=LOGGER)
        answer = acked.post("/graphql", headers=auth(t0), json={
            "query": "mutation($input: SubmitActionInput!) { submitAction(input: $input) { __typename } }",
            "variables": {"input": {"matchId": match_id, "expectedVersion": 0, "idempotencyKey": "k1",
                                    "action": {"highCard": {"type": "PLAY", "card": hand[0]}}}}})
    assert answer.status_code == 503 and answer.headers["retry-after"] == "1"
    body = answer.json()
    [error] = body["errors"]
    assert UNCONFIRMED.fullmatch(error["message"]), error["message"]
    assert body == {"data": None, "errors": [{
        "message": error["message"], "locations": [{"line": 1, "column": 40}], "path": ["submitAction"],
        "extensions": {"code": "service_unavailable", "request_id": answer.headers["x-request-id"]}}]}
    [record] = logged(caplog)
    assert (record.levelno, record.getMessage(), record.exc_info) == (
        logging.WARNING, "redis unavailable: ReplicaAckTimeout", None)


def test_a_bug_in_a_subscription_is_masked_in_its_message(settings, games, prefix, monkeypatch):
    """A subscription's results pass the masking extension one by one (its ``on_stream_result`` hook, which
    schema/runner.py finds once per operation): a bug's words never reach the subscriber."""
    from schema import live

    async def failing(context, match_id, after):
        raise RuntimeError("internal detail redis://10.1.2.3:6379 must not leak")
        yield  # an async generator, as the real one

    monkeypatch.setattr(live, "match_updates", failing)
    with app(settings, games, key_prefix=prefix) as client:
        match_id, _ = seated(client, "high-card")
        with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
            ws.send_json({"type": "connection_init", "payload": {}})
            assert ws.receive_json()["type"] == "connection_ack"
            ws.send_json({"id": "1", "type": "subscribe", "payload": {
                "query": "subscription($id: ID!) { matchEvents(matchId: $id) { __typename } }",
                "variables": {"id": match_id}}})
            message = ws.receive_json()
    assert message["type"] == "next" and message["payload"]["data"] is None
    [error] = message["payload"]["errors"]
    assert error["message"] == "Something went wrong on our side; it has been logged."
    assert error["extensions"]["code"] == "internal_error"
