"""Helpers for the player tests: players made through the API, and their auth headers."""

from __future__ import annotations

import itertools
import uuid

import pytest
import redis as sync_redis

_names = itertools.count()


def unique_name(stem: str = "P") -> str:
    """A fresh valid name (names are unique across the whole keyspace of a test run)."""
    return f"{stem}{uuid.uuid4().hex[:10]}{next(_names)}"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def new_player(client):
    """``new_player(name=None) -> (player id, token)``, made with POST /v1/players."""

    def make(name: str | None = None) -> tuple[str, str]:
        response = client.post("/v1/players", json={"name": name or unique_name()})
        assert response.status_code == 201, response.text
        body = response.json()
        return body["player"]["id"], body["token"]

    return make


def play_out(client, match_id: str, tokens: list[str], choose=lambda token, actions: actions[0]) -> dict:
    """Play the match to its end, each seat to act playing ``choose(its token, its legal actions)``."""
    for _ in range(400):  # bounded: a match that stops moving fails the test rather than hanging the run
        match = client.get(f"/v1/matches/{match_id}").json()
        if match["status"] == "finished":
            return match
        for token in tokens:
            legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=bearer(token)).json()
            if legal["actions"]:
                played = client.post(f"/v1/matches/{match_id}/actions", json={"action": choose(token, legal["actions"])},
                                     headers={**bearer(token), "If-Match": f'"{legal["version"]}"'})
                assert played.status_code == 200, played.text
                break
    raise AssertionError(f"match {match_id} did not finish: {client.get(f'/v1/matches/{match_id}').text}")


@pytest.fixture
def raw(settings):
    """A plain Redis client on the test run's Redis, to read or plant what the API cannot show or reach."""
    connection = sync_redis.Redis.from_url(settings.redis_url, decode_responses=True)
    yield connection
    connection.close()
