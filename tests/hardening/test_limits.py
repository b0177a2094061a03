"""Abuse limits: rate limits per token and per address held in Redis across
processes, CORS for browser front ends, and errors without internals."""

import dataclasses
import time

from starlette.testclient import TestClient

from service.app import create_app


def app_client(settings, games, **changes):
    return TestClient(create_app(dataclasses.replace(settings, **changes), games=games))


def test_requests_past_the_address_limit_get_429_with_retry_after(settings, games):
    with app_client(settings, games, rate_limit_per_address=5) as client:
        responses = [client.get("/v1/games") for _ in range(30)]  # far quicker than six one-second windows
    statuses = [r.status_code for r in responses]
    assert statuses[:5] == [200] * 5 and 429 in statuses
    limited = next(r for r in responses if r.status_code == 429)
    assert limited.headers["retry-after"] == "1" and limited.json()["code"] == "rate_limited"
    with app_client(settings, games, rate_limit_per_address=5) as client:
        assert client.get("/healthz").status_code == 200  # never limited


def test_the_token_limit_holds_across_two_processes_sharing_redis(settings, games):
    with app_client(settings, games) as setup:
        match_id = setup.post("/v1/matches", json={"game": "high-card"}).json()["id"]
        token = setup.post(f"/v1/matches/{match_id}/seats", json={"name": "Ann"}).json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    with app_client(settings, games, rate_limit_per_token=4) as a, \
            app_client(settings, games, rate_limit_per_token=4) as b:
        time.sleep(1 - time.time() % 1)  # start at a fresh one-second window
        statuses = [(a if i % 2 else b).get(f"/v1/matches/{match_id}", headers=headers).status_code
                    for i in range(6)]
    # each process saw only 3 requests, under the limit of 4: only the count shared in Redis refuses
    assert statuses[:4] == [200] * 4 and statuses[4:] == [429, 429]


def test_cors_allows_configured_origins_only(settings, games):
    with app_client(settings, games, cors_origins=("https://play.example",)) as client:
        allowed = client.options("/v1/games", headers={"Origin": "https://play.example",
                                                       "Access-Control-Request-Method": "POST",
                                                       "Access-Control-Request-Headers": "if-match"})
        assert allowed.headers["access-control-allow-origin"] == "https://play.example"
        other = client.get("/v1/games", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers
        exposed = client.get("/v1/games", headers={"Origin": "https://play.example"})
        assert "ETag" in exposed.headers["access-control-expose-headers"]


def test_open_websockets_and_streams_are_capped_per_address(settings, games):
    """Issue #10: limits on "websocket connections": anonymous long-lived connections are capped per address."""
    import pytest
    from starlette.websockets import WebSocketDisconnect

    with app_client(settings, games, max_connections_per_address=2) as client:
        match_id = client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
        first = client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"])
        second = client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"])
        with first, second:
            with pytest.raises(WebSocketDisconnect) as refused:
                with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]):
                    pass
            assert refused.value.code == 1008
            stream = client.get(f"/v1/matches/{match_id}/events", params={"format": "ndjson"})
            assert stream.status_code == 429 and stream.json()["code"] == "too_many_streams"
            assert client.get(f"/v1/matches/{match_id}").status_code == 200  # plain requests are not capped
        with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as again:
            again.send_json({"type": "connection_init"})
            assert again.receive_json()["type"] == "connection_ack"  # closed ones no longer count
