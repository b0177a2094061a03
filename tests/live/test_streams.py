"""Live updates across two service processes (real HTTP servers, real Redis).

A client following a match on process A sees, in order and exactly once, the
actions submitted on process B, across a forced reconnect with resume; a
seat's stream never carries another seat's hidden cards; a spectator's stream
carries only the public view.
"""

import asyncio
import json
import threading

import httpx
import pytest
import websockets

from service.engine import Rng, events_for
from service.games import all_games
from tests.games.spells_and_potions.helpers import hidden_from, strings_in
from tests.support import play_random

GAME = all_games()["spells-and-potions"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


def play(base: str, match_id: str, tokens: list[str], actions: int, seed: int = 3) -> int:
    """Submit ``actions`` legal actions on ``base``; return the last version."""
    with httpx.Client(base_url=base, timeout=10) as http:
        return play_random(http, match_id, tokens, actions, Rng(seed))


def new_match(base: str, seats: int = 2, game: str = "spells-and-potions", seed: int = 77) -> tuple[str, list[str]]:
    with httpx.Client(base_url=base, timeout=10) as http:
        match_id = http.post("/v1/matches", json={"game": game, "seats": seats, "seed": seed}).json()["id"]
        tokens = [http.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"}).json()["token"]
                  for i in range(seats)]
    return match_id, tokens


def read_ndjson(base: str, match_id: str, token: str | None, after: int, until: int, stop_after: int | None = None):
    """Read update lines until version ``until`` (or ``stop_after`` updates: a forced disconnect)."""
    headers = {"Accept": "application/x-ndjson"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    updates = []
    with httpx.stream("GET", f"{base}/v1/matches/{match_id}/events", params={"after": after}, headers=headers,
                      timeout=20) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            message = json.loads(line)
            if message["type"] == "action":
                updates.append(message)
                if message["version"] >= until or (stop_after and len(updates) >= stop_after):
                    break
            elif message["type"] == "end":
                break
    return updates


def test_actions_on_b_reach_a_follower_in_order_exactly_once_across_a_reconnect(two_services):
    a, b = two_services
    match_id, tokens = new_match(a)
    received: list[dict] = []

    def follow():
        first = read_ndjson(a, match_id, None, 0, until=30, stop_after=12)   # then the connection drops
        rest = read_ndjson(a, match_id, None, first[-1]["version"], until=30)  # resume after the last seen
        received.extend(first + rest)

    reader = threading.Thread(target=follow)
    reader.start()
    last = play(b, match_id, tokens, 30)
    reader.join(timeout=30)
    assert last == 30
    assert [u["version"] for u in received] == list(range(1, 31))


def test_sse_resumes_from_last_event_id(two_services):
    a, b = two_services
    match_id, tokens = new_match(a)
    play(b, match_id, tokens, 5)
    with httpx.stream("GET", f"{a}/v1/matches/{match_id}/events", headers={"Last-Event-ID": "2"},
                      timeout=10) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        ids = []
        for line in response.iter_lines():
            if line.startswith("id: "):
                ids.append(int(line[4:]))
            if len(ids) == 3:
                break
    assert ids == [3, 4, 5]


def test_streams_filter_hidden_cards_per_seat_and_for_spectators(two_services):
    a, b = two_services
    match_id, tokens = new_match(a, seed=91)
    last = play(b, match_id, tokens, 40, seed=5)
    streams = {seat: read_ndjson(a, match_id, token, 0, until=last) for seat, token in
               [(0, tokens[0]), (1, tokens[1]), (None, None)]}
    # replay the match on its seed to know every hand at every version
    with httpx.Client(base_url=a) as http:
        history = http.get(f"/v1/matches/{match_id}/history", params={"limit": 1000},
                           headers={"Authorization": f"Bearer {tokens[0]}"}).json()["entries"]
    options = GAME.check_options(None, {}, 2)
    state = GAME.setup(options, 2, 91)
    states = {0: state}
    for entry in history:
        seat = entry["seat"]
        mine = streams[seat][entry["version"] - 1]
        assert mine["action"] is not None  # the actor sees its own action
        state, events = GAME.apply(state, seat, mine["action"])
        states[entry["version"]] = state
        for viewer in (0, 1, None):
            sent = streams[viewer][entry["version"] - 1]
            assert sent["events"] == events_for(events, viewer)
            if viewer != seat:
                assert sent["action"] is None
    for viewer in (0, 1):
        for update in streams[viewer]:
            secret = hidden_from(states[update["version"]], viewer)
            assert secret and not secret & strings_in(update), f"seat {viewer} saw another's card"


@pytest.mark.anyio
async def test_graphql_subscription_on_a_sees_actions_from_b(two_services):
    a, b = two_services
    match_id, tokens = new_match(a)
    query = """subscription($id: ID!) { matchEvents(matchId: $id, after: 0) { __typename
               ... on MatchEvent { version seat events toAct action { __typename } } ... on Problem { code } } }"""
    versions = []
    async with websockets.connect(a.replace("http", "ws") + "/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": {"token": tokens[0]}}))
        assert json.loads(await ws.recv())["type"] == "connection_ack"
        await ws.send(json.dumps({"id": "1", "type": "subscribe",
                                  "payload": {"query": query, "variables": {"id": match_id}}}))
        player = asyncio.get_running_loop().run_in_executor(None, play, b, match_id, tokens, 10)
        while len(versions) < 10:
            message = json.loads(await asyncio.wait_for(ws.recv(), 20))
            assert message["type"] == "next", message
            event = message["payload"]["data"]["matchEvents"]
            assert event["__typename"] == "MatchEvent"
            versions.append(event["version"])
            assert (event["action"] is not None) == (event["seat"] == 0)
        await player
    assert versions == list(range(1, 11))


@pytest.mark.anyio
async def test_graphql_legacy_protocol_is_off(two_services):
    a, _ = two_services
    with pytest.raises(Exception):
        async with websockets.connect(a.replace("http", "ws") + "/graphql", subprotocols=["graphql-ws"]) as ws:
            await ws.send(json.dumps({"type": "connection_init"}))
            await asyncio.wait_for(ws.recv(), 5)


def test_my_turns_stream_notices_each_turn(two_services):
    a, b = two_services
    match_id, tokens = new_match(a, game="casting-stones", seed=12)
    other_id, other_tokens = new_match(a, game="casting-stones", seed=13)
    notices, listening = [], threading.Event()

    def follow():
        with httpx.stream("GET", f"{a}/v1/turns", params={"format": "ndjson"},
                          headers={"Seat-Tokens": f"{tokens[1]}, {other_tokens[0]}"}, timeout=20) as response:
            for line in response.iter_lines():
                message = json.loads(line)
                listening.set()
                if message["type"] == "turn":
                    notices.append(message)
                    if len(notices) == 3:
                        return

    reader = threading.Thread(target=follow)
    reader.start()
    assert listening.wait(10)
    play(b, match_id, tokens, 3)  # the set-up draft alternates: seat 0 picks, then 1, then 0
    reader.join(timeout=20)
    # the other match waits on its seat 0 from the start; the first waits on seat 1 after versions 1 and 3
    assert sorted((n["match_id"], n["seat"], n["version"]) for n in notices) == sorted(
        [(other_id, 0, 0), (match_id, 1, 1), (match_id, 1, 3)])
    assert all(n["your_turn"] for n in notices)


def test_streams_per_token_are_limited(redis_url, key_prefix):
    from tests.live.conftest import start_service
    process, base = start_service(redis_url, key_prefix, GRIMOIRE_MAX_STREAMS_PER_TOKEN="1")
    try:
        match_id, tokens = new_match(base)
        headers = {"Authorization": f"Bearer {tokens[0]}", "Accept": "application/x-ndjson"}
        with httpx.stream("GET", f"{base}/v1/matches/{match_id}/events", headers=headers, timeout=10) as first:
            assert first.status_code == 200
            second = httpx.get(f"{base}/v1/matches/{match_id}/events", headers=headers, timeout=10)
            assert second.status_code == 429 and second.json()["code"] == "too_many_streams"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.anyio
async def test_a_client_that_does_not_read_is_dropped_with_a_reason():
    """The stream response itself, at the ASGI level: a send that never completes
    (a client whose buffers are full) ends the stream as a slow consumer."""
    from service.rest.streams import EventStream

    class Live:
        closing = asyncio.Event()

    async def items():
        for version in range(1, 1000):
            yield "action", {"version": version}, str(version)

    sent, closed = [], []

    async def send(message):
        sent.append(message)
        if message["type"] == "http.response.body" and len(sent) > 3:
            await asyncio.Event().wait()  # the client stopped reading

    async def receive():
        await asyncio.Event().wait()

    stream = EventStream(items(), "ndjson", send_timeout=0.2, live=Live(), on_close=lambda: closed.append(True))
    await asyncio.wait_for(stream({"type": "http"}, receive, send), 5)
    assert len(sent) == 5 and closed == [True]
    assert json.loads(sent[-1]["body"]) == {"type": "end", "reason": "slow_consumer"}
