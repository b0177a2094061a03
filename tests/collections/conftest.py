"""Helpers for the collections tests (issue 25): players made through the API, a store-level view of the same
keyspace (collections, trades) for the tests that stop a trade half-way, and collections filled directly."""

from __future__ import annotations

import itertools
import uuid

import pytest
import redis.asyncio as aioredis

from service.store import MatchStore
from service.store.collections import attach, field

_names = itertools.count()


def unique_name(stem: str = "C") -> str:
    return f"{stem}{uuid.uuid4().hex[:10]}{next(_names)}"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def new_player(client):
    """``new_player() -> (player id, headers)``, made with POST /v1/players."""

    def make(stem: str = "C") -> tuple[str, dict[str, str]]:
        response = client.post("/v1/players", json={"name": unique_name(stem)})
        assert response.status_code == 201, response.text
        body = response.json()
        return body["player"]["id"], bearer(body["token"])

    return make


@pytest.fixture
async def stores(redis_url, key_prefix, games, settings):
    """(match store, collections, trades) on the session's Redis and keyspace: the ones the ``client`` serves."""
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    store = MatchStore(client, games, prefix=key_prefix, finished_ttl=600, idle_ttl=600)
    collections, trades = attach(store, settings)
    yield store, collections, trades
    await client.aclose()


async def give(collections, player_id: str, stones: dict[str, int] = (), cards: dict[str, int] = ()) -> None:
    """Put items straight into a player's collection (what opened sets would have put there)."""
    mapping = {field("stones", s): n for s, n in dict(stones).items()}
    mapping.update({field("cards", c): n for c, n in dict(cards).items()})
    for name, count in mapping.items():
        await collections.redis.hincrby(collections.key(player_id), name, count)


async def new_store_player(collections, stem: str = "S") -> str:
    player, _token, _ = await collections.players.create(unique_name(stem))
    return player.id
