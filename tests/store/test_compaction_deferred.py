"""Log compaction off the request path (issue 18): with ``compact_in_background`` (the service's
setting) a submission answers without waiting for the compaction it triggers; the compaction still
happens, and the log reads the same whether it has happened yet or not."""

import asyncio

import pytest
import redis.asyncio as aioredis

from service.store import MatchStore, archive
from tests.support.high_card import GAME

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
async def store(redis_url, key_prefix):
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    store = MatchStore(client, {GAME.id: GAME}, prefix=key_prefix, finished_ttl=120, idle_ttl=600,
                       compact_every=2, keep_recent=1)
    store.compact_in_background = True
    yield store
    await store.settle()
    await client.aclose()


async def _play(store, match_id, tokens, actions: int) -> None:
    for _ in range(actions):
        m = await store.get(match_id)
        seat = m.acting[-1]
        await store.submit(match_id, tokens[seat], m.version, GAME.legal_actions(m.state, seat)[0])


async def _started(store):
    match = await store.create("high-card", seed=3)
    _, _, t0 = await store.join(match.id, "Ann")
    _, _, t1 = await store.join(match.id, "Bob")
    return match.id, [t0, t1]


async def test_a_submission_answers_before_the_compaction_it_triggers(store, monkeypatch):
    match_id, tokens = await _started(store)
    release, started = asyncio.Event(), asyncio.Event()
    real_compact = archive.compact

    async def held_compact(*args):
        started.set()
        await release.wait()
        return await real_compact(*args)

    monkeypatch.setattr(archive, "compact", held_compact)
    await _play(store, match_id, tokens, 2)  # version 2: a compaction is due, and held
    await started.wait()
    # answered while the compaction waits: nothing archived yet, the whole log still readable
    assert await archive.read_raw(store, match_id) is None
    versions = [int(i.split("-")[0]) for i, _ in await store.log_entries(match_id, after=0, limit=100)]
    assert versions == [1, 2]
    release.set()
    await store.settle()
    upto, archived = archive.decode(await archive.read_raw(store, match_id))
    assert upto == 1 and [i for i, _ in archived] == ["1-0"]
    assert [i for i, _ in await store.redis.xrange(store.log_key(match_id))] == ["2-0"]


async def test_the_finished_match_is_compacted_and_its_log_whole(store):
    match_id, tokens = await _started(store)
    await _play(store, match_id, tokens, 6)  # high card: three rounds of two plays
    assert (await store.get(match_id)).status == "finished"
    await store.settle()
    upto, _ = archive.decode(await archive.read_raw(store, match_id))
    assert upto == 5  # all but keep_recent, archived by the finishing action's compaction
    versions = [int(i.split("-")[0]) for i, _ in await store.log_entries(match_id, after=0, limit=100)]
    assert versions == [1, 2, 3, 4, 5, 6]


async def test_without_the_setting_the_compaction_is_done_when_submit_returns(redis_url, key_prefix):
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:  # the jobs' setting: each job runs in an asyncio.run that would cancel a background task
        store = MatchStore(client, {GAME.id: GAME}, prefix=key_prefix, compact_every=2, keep_recent=1)
        match_id, tokens = await _started(store)
        await _play(store, match_id, tokens, 2)
        assert not store._background
        upto, _ = archive.decode(await archive.read_raw(store, match_id))
        assert upto == 1
    finally:
        await client.aclose()
