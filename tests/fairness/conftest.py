"""Fixtures for the fair-play tests (issue 21, docs/fairness.md): a match store on the session's Redis and
key prefix, so that matches played through it here are the ones the REST and GraphQL ``client`` serves."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from service.store import MatchStore


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
async def store(redis_url, key_prefix, games):
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    yield MatchStore(client, games, prefix=key_prefix, finished_ttl=600, idle_ttl=600)
    await client.aclose()
