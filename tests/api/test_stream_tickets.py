"""Stream tickets (issue 19, item 3): a browser's way into its seat's SSE stream without the seat token
in a URL. A ticket opens that seat's stream once; expired, reused, another match's, unknown tickets and
tickets whose seat changed hands are refused with problem+json; two presentations at once open one
stream; tickets are stored hashed, hold the token's stream slot, and never reach a log line.

Streams run against a real uvicorn server (``live_server``); refusals need no stream."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import time
import uuid

import httpx
import pytest
import redis

from service.app import create_app
from service.store.live import StreamLimit
from service.store.tickets import REMEMBERED
from tests.api.test_rest import assert_problem, auth, new_match
from tests.live.conftest import ThreadedServer
from tests.support.processes import Service


@pytest.fixture
def http(live_server):
    with httpx.Client(base_url=live_server, timeout=30) as client:
        yield client


def played_match(http, **game) -> tuple[str, list[str]]:
    """A match (high-card: hidden hands; or ``game``/``variant``) where the first seat to act has acted:
    version 1. Returns its id and the seat tokens; seat 0 is the one that acted."""
    match_id, tokens = new_match(http, **game)
    seat = http.get(f"/v1/matches/{match_id}").json()["to_act"][0]
    assert seat == 0
    action = http.get(f"/v1/matches/{match_id}/legal-actions", headers=auth(tokens[0])).json()["actions"][0]
    played = http.post(f"/v1/matches/{match_id}/actions", json={"action": action},
                       headers={**auth(tokens[0]), "If-Match": '"0"'})
    assert played.status_code == 200, played.text
    return match_id, tokens


def issue(http, match_id: str, token: str | None) -> httpx.Response:
    return http.post(f"/v1/matches/{match_id}/stream-tickets", headers=auth(token) if token else {})


def ticket_for(http, match_id: str, token: str) -> str:
    response = issue(http, match_id, token)
    assert response.status_code == 201, response.text
    return response.json()["ticket"]


def first_action(base: str, path: str, **request) -> dict:
    """The first ``action`` frame of an SSE stream (its JSON data), then the stream is closed."""
    with httpx.stream("GET", base + path, timeout=30, **request) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        event = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "action":
                return json.loads(line[6:])
    raise AssertionError("the stream ended without an action")


def present(http, match_id: str, ticket: str) -> httpx.Response:
    """Present a ticket; a refusal's body is read, an opened stream is closed at once (status 200)."""
    with http.stream("GET", f"/v1/matches/{match_id}/events", params={"ticket": ticket}) as response:
        if response.status_code != 200:
            response.read()
        return response


def test_a_ticket_opens_its_seats_own_stream_once(http, live_server):
    match_id, (t0, t1) = played_match(http)
    issued = issue(http, match_id, t0)
    assert issued.status_code == 201 and issued.headers["cache-control"] == "no-store"
    body = issued.json()
    assert (body["match_id"], body["seat"], body["expires_in"]) == (match_id, 0, 30)
    ticket = body["ticket"]
    assert body["events_url"] == f"/v1/matches/{match_id}/events?ticket={ticket}"
    assert t0 not in json.dumps(body)

    with_ticket = first_action(live_server, body["events_url"])
    # the seat's own stream: exactly what its token's stream shows, its hidden card included
    assert with_ticket == first_action(live_server, f"/v1/matches/{match_id}/events", headers=auth(t0))
    assert any(event["type"] == "played_card" for event in with_ticket["events"])
    spectator = first_action(live_server, f"/v1/matches/{match_id}/events")
    assert not any(event["type"] == "played_card" for event in spectator["events"])
    # seat 1's ticket shows seat 1's stream, not seat 0's
    other = first_action(live_server, f"/v1/matches/{match_id}/events", params={"ticket": ticket_for(http, match_id, t1)})
    assert other == first_action(live_server, f"/v1/matches/{match_id}/events", headers=auth(t1)) != with_ticket

    assert_problem(present(http, match_id, ticket), 401, "stream_ticket_used")


def test_a_players_credential_gets_a_ticket_for_its_bound_seat(http, live_server):
    """Issue 20: a player token acts for the seats bound to its player, a stream ticket included; the
    ticket stands for the seat (its token's hash is recorded), so it opens that seat's stream."""
    created = http.post("/v1/players", json={"name": f"T{uuid.uuid4().hex[:12]}"})
    assert created.status_code == 201, created.text
    player_token = created.json()["token"]
    match_id = http.post("/v1/matches", json={"game": "high-card", "seed": "42"}).json()["id"]
    joined = http.post(f"/v1/matches/{match_id}/seats", json={}, headers=auth(player_token))
    assert joined.status_code == 201, joined.text
    assert joined.json()["seat"] == 0
    seat_token = joined.json()["token"]
    assert http.post(f"/v1/matches/{match_id}/seats", json={"name": "Bob"}).status_code == 201
    action = http.get(f"/v1/matches/{match_id}/legal-actions", headers=auth(player_token)).json()["actions"][0]
    played = http.post(f"/v1/matches/{match_id}/actions", json={"action": action},
                       headers={**auth(player_token), "If-Match": '"0"'})
    assert played.status_code == 200, played.text

    issued = issue(http, match_id, player_token)
    assert issued.status_code == 201, issued.text
    assert (issued.json()["seat"], player_token in issued.text) == (0, False)
    with_ticket = first_action(live_server, issued.json()["events_url"])
    assert with_ticket == first_action(live_server, f"/v1/matches/{match_id}/events", headers=auth(seat_token))
    assert any(event["type"] == "played_card" for event in with_ticket["events"])  # the seat's hidden card
    # a player who holds no seat of the match gets no ticket for it
    stranger = http.post("/v1/players", json={"name": f"S{uuid.uuid4().hex[:12]}"}).json()["token"]
    assert_problem(issue(http, match_id, stranger), 401, "invalid_token")


def test_a_ticket_for_another_match_is_refused_and_spent(http):
    match_a, (a0, _) = new_match(http)
    match_b, _ = new_match(http)
    ticket = ticket_for(http, match_a, a0)
    assert_problem(present(http, match_b, ticket), 401, "stream_ticket_wrong_match")
    assert_problem(present(http, match_a, ticket), 401, "stream_ticket_used")


@pytest.mark.parametrize("how", ["left", "handed to a bot"])
def test_a_ticket_whose_seat_changed_hands_is_refused(http, how):
    match_id, (t0, _) = new_match(http)
    ticket = ticket_for(http, match_id, t0)
    if how == "left":
        assert http.delete(f"/v1/matches/{match_id}/seats/0", headers=auth(t0)).status_code == 200
        joined = http.post(f"/v1/matches/{match_id}/seats", json={"name": "Eve", "seat": 0})  # someone else's now
        assert joined.status_code == 201
    else:
        handed = http.post(f"/v1/matches/{match_id}/bots", json={"level": "random", "seat": 0}, headers=auth(t0))
        assert handed.status_code in (200, 201), handed.text
    assert_problem(present(http, match_id, ticket), 401, "invalid_token")


def test_unknown_and_malformed_tickets_are_refused(http):
    match_id, (t0, _) = new_match(http)
    real = ticket_for(http, match_id, t0)
    forged = real[:-4] + ("AAAA" if not real.endswith("AAAA") else "BBBB")
    for ticket in (forged, f"st.{match_id}.nope", "nonsense", "", "x" * 300, t0):
        assert_problem(present(http, match_id, ticket), 401, "invalid_stream_ticket")
    # the real one was not spent by its forgeries
    with http.stream("GET", f"/v1/matches/{match_id}/events", params={"ticket": real}) as response:
        assert response.status_code == 200


def test_issuing_needs_the_seats_token(http):
    match_id, (t0, _) = new_match(http)
    assert_problem(issue(http, match_id, None), 401, "token_required")
    assert_problem(issue(http, match_id, "gt.x.y"), 401, "invalid_token")
    other_match, (o0, _) = new_match(http)
    assert_problem(issue(http, match_id, o0), 401, "invalid_token")
    assert_problem(issue(http, "nosuchmatch", t0), 404, "match_not_found")


def test_a_ticket_and_a_token_together_are_refused(http):
    match_id, (t0, _) = new_match(http)
    ticket = ticket_for(http, match_id, t0)
    refused = http.get(f"/v1/matches/{match_id}/events", params={"ticket": ticket}, headers=auth(t0))
    assert_problem(refused, 400, "malformed_request")


def test_an_expired_ticket_is_refused(settings, games):
    server = ThreadedServer(create_app(dataclasses.replace(settings, stream_ticket_ttl=1), games=games))
    try:
        with httpx.Client(base_url=server.base, timeout=30) as client:
            match_id, (t0, _) = new_match(client)
            fresh, old = ticket_for(client, match_id, t0), ticket_for(client, match_id, t0)
            assert present(client, match_id, fresh).status_code == 200  # within its second
            time.sleep(1.2)
            assert_problem(present(client, match_id, old), 401, "stream_ticket_expired")
            assert_problem(present(client, match_id, old), 401, "stream_ticket_used")
    finally:
        server.stop()


def test_two_presentations_at_once_open_one_stream(http, live_server):
    match_id, (t0, _) = played_match(http)
    for _ in range(5):
        ticket = ticket_for(http, match_id, t0)

        async def open_it(client: httpx.AsyncClient) -> int:
            async with client.stream("GET", f"/v1/matches/{match_id}/events", params={"ticket": ticket}) as response:
                return response.status_code

        async def race() -> list[int]:
            async with httpx.AsyncClient(base_url=live_server, timeout=30) as client:
                return await asyncio.gather(*(open_it(client) for _ in range(4)))

        assert sorted(asyncio.run(race())) == [200, 401, 401, 401]


def test_tickets_are_stored_hashed_and_hold_the_tokens_stream_slot(http, live_server, settings):
    match_id, (t0, _) = played_match(http)
    ticket = ticket_for(http, match_id, t0)
    client = redis.Redis.from_url(settings.redis_url, decode_responses=True)
    try:
        [key] = client.keys(f"{settings.key_prefix}:m:{{{match_id}}}:ticket:*")
        assert key.endswith(hashlib.sha256(ticket.encode()).hexdigest())
        record = client.hgetall(key)
        assert ticket not in json.dumps(record) and t0 not in json.dumps(record)
        assert record["token"] == hashlib.sha256(t0.encode()).hexdigest()
        assert 30 < client.ttl(key) <= 30 + REMEMBERED
        slot = StreamLimit(1).key(type("S", (), {"key": lambda self, m: f"{settings.key_prefix}:m:{{{m}}}"})(), t0)
        with httpx.stream("GET", f"{live_server}/v1/matches/{match_id}/events", params={"ticket": ticket},
                          timeout=30) as response:
            assert response.status_code == 200
            lines = response.iter_lines()  # kept: a dropped iterator closes the stream
            next(lines)
            assert client.zcard(slot) == 1  # the ticket's stream counts against its token's stream limit
        deadline = time.monotonic() + 10
        while client.zcard(slot) and time.monotonic() < deadline:  # released once the client is gone
            time.sleep(0.05)
        assert client.zcard(slot) == 0
    finally:
        client.close()


def test_a_ticket_stream_ends_when_its_seat_changes_hands(http, live_server):
    match_id, (t0, _) = played_match(http)
    ticket = ticket_for(http, match_id, t0)
    with httpx.stream("GET", f"{live_server}/v1/matches/{match_id}/events", params={"ticket": ticket},
                      timeout=30) as response:
        lines = response.iter_lines()
        assert any(line == "event: action" for line in lines)
        assert http.delete(f"/v1/matches/{match_id}/seats/0", headers=auth(t0)).status_code == 200
        ending, deadline = [], time.monotonic() + 20
        for line in lines:  # keep-alives (every 15 s) let the deadline be checked
            ending.append(line)
            if line.startswith("data: ") and ending[-2:-1] == ["event: end"]:
                break
            assert time.monotonic() < deadline, f"the stream went on after its seat was left: {ending}"
    assert json.loads(ending[-1][6:]) == {"reason": "invalid_token"}


def test_the_graphql_mutation_issues_a_ticket_the_stream_takes(http, live_server):
    match_id, (t0, _) = played_match(http)
    document = """mutation ($id: ID!) { createStreamTicket(input: {matchId: $id}) { __typename
        ... on StreamTicket { ticket matchId seat expiresIn eventsUrl } ... on Problem { code } } }"""
    answer = http.post("/graphql", json={"query": document, "variables": {"id": match_id}}, headers=auth(t0)).json()
    issued = answer["data"]["createStreamTicket"]
    assert (issued["__typename"], issued["matchId"], issued["seat"], issued["expiresIn"]) == \
        ("StreamTicket", match_id, 0, 30)
    assert first_action(live_server, issued["eventsUrl"]) == \
        first_action(live_server, f"/v1/matches/{match_id}/events", headers=auth(t0))
    refused = http.post("/graphql", json={"query": document, "variables": {"id": match_id}}).json()
    assert refused["data"]["createStreamTicket"] == {"__typename": "TokenRequired", "code": "TOKEN_REQUIRED"}


def test_tickets_and_tokens_never_reach_the_logs(redis_url, key_prefix, tmp_path):
    log = tmp_path / "service.log"
    service = Service(redis_url, f"{key_prefix}:ticketlog", log, GRIMOIRE_LOG_LEVEL="INFO")
    try:
        with httpx.Client(base_url=service.base, timeout=30) as client:
            match_id, (t0, _) = played_match(client, game="casting-stones", variant="basic")  # a hosted game
            used = ticket_for(client, match_id, t0)
            first_action(service.base, f"/v1/matches/{match_id}/events", params={"ticket": used})
            assert_problem(present(client, match_id, used), 401, "stream_ticket_used")
            other_match, _ = new_match(client, game="casting-stones", variant="basic")
            wrong = ticket_for(client, match_id, t0)
            assert_problem(present(client, other_match, wrong), 401, "stream_ticket_wrong_match")
    finally:
        service.stop()
    logged = log.read_text()
    assert f"/v1/matches/{match_id}/events" in logged  # the access log saw the requests
    for secret in (used, wrong, used.split(".")[2], wrong.split(".")[2], t0, t0.split(".")[2]):
        assert secret not in logged
