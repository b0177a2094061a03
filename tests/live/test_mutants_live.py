"""Live updates where the mutation run (tests/mutation/run.py, module ``live``) found them untested.

The live path is built to survive its own faults: a message it cannot use marks the match stale and the
log is read instead, a reader that fails reconnects and every follower re-reads. So a broken fast path
still delivers every update, only through the log, and the stream tests kept passing. These tests hold
the fast path to what service/store/live.py promises: a published update is cached and handed to the
followers with no log read, a gap or an unreadable message (and only those) sends them to the log, the
cache serves exactly the versions it holds. Behaviour only, against a real Redis; each test names the
faults it stands against.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from types import SimpleNamespace

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from schema import live as schema_live
from service.rest.streams import SendWatch
from service.settings import Settings
from service.store import MatchNotFound, MatchStore
from service.store import live as live_module
from service.store.archive import published_update
from service.store.errors import InvalidToken, TooManyStreams
from service.store.live import (
    STORE_DOWN_MESSAGE,
    LiveUpdates,
    StoreUnavailable,
    StreamLimit,
    _Channel,
    _client_timeout,
    _Follower,
    guarded,
    turns,
    within,
)
from service.store.tokens import hash_token, token_match
from tests.support.high_card import GAME

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
async def store(redis_url, key_prefix, request):
    client = aioredis.Redis.from_url(redis_url, decode_responses=True, socket_timeout=5)
    # compaction off: the log stays where the tests count its reads
    yield MatchStore(client, {GAME.id: GAME}, prefix=f"{key_prefix}:{request.node.name}", compact_every=0)
    await client.aclose()


@pytest.fixture
async def live(store):
    updates = LiveUpdates(store, timeout=3)
    await updates.start()
    yield updates
    await updates.stop()


class LogReads:
    """Counts the follower side's reads of a match's log (both ways it reads it)."""

    def __init__(self, store, monkeypatch):
        self.entries = self.newest = 0
        log_entries, xrevrange = store.log_entries, store.redis.xrevrange

        async def counted_entries(*args, **kwargs):
            self.entries += 1
            return await log_entries(*args, **kwargs)

        async def counted_newest(*args, **kwargs):
            self.newest += 1
            return await xrevrange(*args, **kwargs)

        monkeypatch.setattr(store, "log_entries", counted_entries)
        monkeypatch.setattr(store.redis, "xrevrange", counted_newest)

    @property
    def total(self) -> int:
        return self.entries + self.newest


async def new_match(store) -> tuple[str, list[str]]:
    match = await store.create(GAME.id, seed=3)
    tokens = [(await store.join(match.id, f"P{seat}", seat))[2] for seat in (0, 1)]
    return match.id, tokens


async def play(store, match_id: str, tokens: list[str], actions: int) -> int:
    """``actions`` accepted actions (the lowest card of the first seat to act); the last version."""
    version = 0
    for _ in range(actions):
        match = await store.get(match_id)
        seat = match.acting[0]
        version = (await store.submit(match_id, tokens[seat], match.version, match.legal_actions(seat)[0])).version
    return version


def message(version: int, status: str = "active", **fields) -> str:
    """A message as commit.lua publishes it."""
    return json.dumps({"version": version, "seat": 0, "status": status, "to_act": [1], "at": 1000 + version,
                       "action": {"type": "play", "card": version}, "events": [{"type": "played", "seat": 0}],
                       "auto": None, "result": None, **fields})


def channel_at(live: LiveUpdates, newest: int, *, stale: bool = False, match_id: str = "m1") -> _Channel:
    """A channel whose cache holds versions 1..newest (as published)."""
    channel = _Channel(match_id, live.store.channel(match_id))
    channel.newest, channel.stale = 0, False
    for version in range(1, newest + 1):
        live._published(channel, message(version))
    assert channel.newest == newest
    channel.stale = stale
    return channel


async def until(condition, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


async def _drain(updates) -> list:
    """Every item of ``updates``, to its end."""
    return [u async for u in updates]


def waiting(live: LiveUpdates, match_id: str) -> bool:
    """Every follower of the match subscribed and asleep until woken."""
    channel = live._channels.get(match_id)
    return channel is not None and channel.ready.is_set() and bool(channel.followers) and \
        all(f.waiter is not None for f in channel.followers)


# -- the published update: cached when it is the next version, else the log is read ---------------------------


async def test_the_next_published_version_is_cached_as_published(live):
    """Against `newest <= 0` / `< 1` (the first action of a match sent to the log), `update = None`,
    the update read with no match id, and the cache call dropped."""
    channel = channel_at(live, 0)
    live._published(channel, message(1))
    live._published(channel, message(2, status="finished", to_act=[]))
    assert (channel.stale, channel.newest, channel.finished) == (False, 2, 2)
    first = channel.recent[1]
    assert (first.match_id, first.version, first.seat, first.action, first.at) == ("m1", 1, 0,
                                                                                   {"type": "play", "card": 1}, 1001)
    assert channel.recent[2].status == "finished"


async def test_a_gap_sends_the_followers_to_the_log_and_caches_nothing_past_it(live):
    """Against a gap left trusted (`stale = None` or `False`) and the gap's update cached."""
    channel = channel_at(live, 1)
    live._published(channel, message(3))
    assert channel.stale is True and channel.newest == 1 and 3 not in channel.recent


async def test_a_version_seen_already_changes_nothing(live):
    """Against `update.version >= channel.newest` (a repeated message taken for a gap)."""
    channel = channel_at(live, 2)
    live._published(channel, message(2))
    live._published(channel, message(1))
    assert channel.stale is False and channel.newest == 2 and list(channel.recent) == [1, 2]


async def test_a_stale_channel_caches_nothing_until_the_log_is_read(live):
    """Against `stale and newest < 0 or ...` (a stale cache extended) and `stale = None` / `False`."""
    channel = channel_at(live, 1, stale=True)
    live._published(channel, message(2))
    assert channel.stale is True and 2 not in channel.recent and channel.newest == 1


async def test_a_channel_never_read_caches_nothing(live):
    """Against `newest < 0` dropped or inverted: a first message is no base for a cache."""
    channel = _Channel("m1", live.store.channel("m1"))
    live._published(channel, message(1))
    assert channel.stale is True and channel.newest == -1 and not channel.recent


async def test_an_older_process_bare_version_is_read_from_the_log_without_a_warning(live, caplog):
    """Against `... or newest < 0 and not data.startswith(...)` and `startswith(None)`: a bare version number
    (what an older release published) is expected, not an error."""
    channel = channel_at(live, 1)
    with caplog.at_level(logging.INFO, logger="grimoire.live"):
        live._published(channel, "2")
    assert channel.stale is True and 2 not in channel.recent
    assert caplog.records == []


@pytest.mark.parametrize("data", ['{"version": 2', '{"version": 2}', '{"version": "two", "seat": 0}'],
                         ids=["not json", "fields missing", "not a number"])
async def test_a_message_not_understood_is_logged_once_and_the_log_read(live, caplog, data):
    """Against the warning's text, its channel and `stale = None` / `False` after it."""
    channel = channel_at(live, 1)
    with caplog.at_level(logging.INFO, logger="grimoire.live"):
        live._published(channel, data)
    assert channel.stale is True and channel.newest == 1
    assert [r.getMessage() for r in caplog.records] == [
        f"live updates: a message on {channel.name} is not an update; reading the log"]
    assert caplog.records[0].levelno == logging.WARNING


async def test_a_channel_names_its_match_whatever_the_prefix_holds(live):
    """Against `index(None)`, `index("}")` from the start and the slice's bounds."""
    assert live._match_of(live.store.channel("a1b2")) == "a1b2"
    assert live._match_of("odd}prefix:m:{xyz}:events") == "xyz"


async def test_published_updates_reach_a_follower_with_no_log_read(store, live, monkeypatch, caplog):
    """The fast path end to end (commit.lua's message, the reader, the cache): a follower sends Redis nothing
    per update. Against every fault above that only costs a log read, a reader that fails and reconnects on
    each message, and updates handed on out of order."""
    match_id, tokens = await new_match(store)
    received = []

    async def follow():
        async with contextlib.aclosing(live.follow(match_id, 0, idle=60)) as updates:
            async for update in updates:
                if update is not None:
                    received.append(update.version)

    task = asyncio.create_task(follow())
    await until(lambda: waiting(live, match_id))
    reads = LogReads(store, monkeypatch)
    with caplog.at_level(logging.INFO, logger="grimoire.live"):
        last = await play(store, match_id, tokens, 6)
        await asyncio.wait_for(task, 5)
    assert received == list(range(1, last + 1)) and last == 6
    assert reads.total == 0
    assert caplog.records == []
    assert match_id not in live._channels  # the last follower left with the finished match


# -- the cache -----------------------------------------------------------------------------------------------


async def test_the_cache_serves_exactly_the_versions_after_the_one_named(live):
    """Against `_cached`'s bounds: `last + 1`, `newest <= last`, the page, the stale and unread channel."""
    channel = channel_at(live, 5)
    assert [u.version for u in live._cached(channel, 2)] == [3, 4, 5]
    assert [u.version for u in live._cached(channel, 0)] == [1, 2, 3, 4, 5]
    assert live._cached(channel, 5) == [] and live._cached(channel, 9) == []
    live.page = 2
    assert [u.version for u in live._cached(channel, 1)] == [2, 3]
    channel.stale = True
    assert live._cached(channel, 2) is None
    unread = _Channel("m2", live.store.channel("m2"))
    unread.stale = False
    assert live._cached(unread, 0) is None


async def test_the_cache_does_not_serve_versions_it_no_longer_holds(live):
    """Against the cache trimmed from the wrong end, or past its size, or not at all."""
    live.cache_size = 3
    channel = channel_at(live, 5)
    assert list(channel.recent) == [3, 4, 5]
    assert live._cached(channel, 1) is None  # version 2 is gone: the log has it
    assert [u.version for u in live._cached(channel, 2)] == [3, 4, 5]


async def test_an_update_cached_twice_keeps_its_first_copy(live):
    """Against `setdefault` turned into an overwrite (followers share the first copy's encodings) and
    `newest` taken from the last update cached rather than the highest."""
    channel = channel_at(live, 2)
    first = channel.recent[1]
    live._cache(channel, published_update("m1", json.loads(message(1))))
    assert channel.recent[1] is first and channel.newest == 2 and channel.finished is None


# -- reading the log ----------------------------------------------------------------------------------------


async def test_a_first_read_takes_the_newest_of_the_log_then_only_what_follows(store, live, monkeypatch):
    """Against `_refresh`: the first read (the newest `cache_size` entries, oldest first), a full page left
    stale, later reads after `newest`, an empty log read as version 0."""
    match_id, tokens = await new_match(store)
    empty = _Channel(match_id, store.channel(match_id))
    await live._refresh(empty)
    assert (empty.newest, empty.stale, list(empty.recent)) == (0, False, [])
    await play(store, match_id, tokens, 5)
    live.cache_size = 3
    channel = _Channel(match_id, store.channel(match_id))
    reads = LogReads(store, monkeypatch)
    await live._refresh(channel)
    assert list(channel.recent) == [3, 4, 5] and channel.newest == 5
    assert channel.stale is True  # a full page: there may be more (and the cache lacks 1 and 2 anyway)
    assert (reads.newest, reads.entries) == (1, 0)
    await live._refresh(channel)
    assert (reads.newest, reads.entries) == (1, 1) and channel.stale is False and channel.newest == 5
    await play(store, match_id, tokens, 1)
    await live._refresh(channel)
    assert list(channel.recent) == [4, 5, 6] and channel.finished == 6


async def test_a_later_read_takes_a_cache_sized_page_in_order_and_leaves_a_full_one_stale(store, live):
    """Against `_refresh`'s limit: a channel read once (an empty log: version 0) that falls behind by more than
    the cache holds reads the next `cache_size` versions after its newest, oldest first, and stays stale for the
    rest, which the next read takes."""
    match_id, tokens = await new_match(store)
    channel = _Channel(match_id, store.channel(match_id))
    await live._refresh(channel)
    await play(store, match_id, tokens, 5)
    live.cache_size = 3
    await live._refresh(channel)
    assert (list(channel.recent), channel.newest, channel.stale) == ([1, 2, 3], 3, True)
    await live._refresh(channel)
    assert (list(channel.recent), channel.newest, channel.stale) == ([3, 4, 5], 5, False)

async def test_a_read_that_fails_leaves_the_channel_stale(store, live, monkeypatch):
    """Against `stale = False` kept after a failed read: the next follower must read again."""
    match_id, _ = await new_match(store)
    channel = _Channel(match_id, store.channel(match_id))

    async def down(*args, **kwargs):
        raise RedisConnectionError("down")

    monkeypatch.setattr(store.redis, "xrevrange", down)
    with pytest.raises(RedisConnectionError):
        await live._refresh(channel)
    assert channel.stale is True and channel.newest == -1


async def test_versions_older_than_the_cache_come_from_the_log(store, live, monkeypatch):
    """Against `_after`: the refresh of a stale channel, the cache used when it covers the versions, and the
    log read from `last` with the page as its limit when it does not."""
    match_id, tokens = await new_match(store)
    await play(store, match_id, tokens, 5)
    live.cache_size, live.page = 2, 3
    channel = _Channel(match_id, store.channel(match_id))
    assert [u.version for u in await live._after(channel, 0)] == [1, 2, 3]
    assert [u.version for u in await live._after(channel, 3)] == [4, 5]
    reads = LogReads(store, monkeypatch)
    channel.stale = False
    assert [u.version for u in await live._after(channel, 3)] == [4, 5] and reads.total == 0
    assert await live._after(channel, 5) == [] and reads.total == 0


async def test_an_idle_check_reads_the_match_at_most_once_per_half_keepalive(store, live, monkeypatch):
    """Against `_idle`: the half keep-alive, the check's time kept, the log marked for a read, an expired match
    noticed (and a live one not taken for expired)."""
    match_id, _ = await new_match(store)
    channel = _Channel(match_id, store.channel(match_id))
    channel.stale = False
    checks = []
    exists = store.redis.exists

    async def counted(*keys):
        checks.append(keys)
        return await exists(*keys)

    monkeypatch.setattr(store.redis, "exists", counted)
    await live._idle(channel, 10)
    assert checks == [(store.key(match_id),)] and channel.stale is True and channel.gone is False
    channel.stale = False
    await live._idle(channel, 10)  # within half the keep-alive: nothing
    assert len(checks) == 1 and channel.stale is False
    channel.checked -= 5.01
    await store.redis.delete(store.key(match_id))
    await live._idle(channel, 10)
    assert len(checks) == 2 and channel.gone is True


# -- following ----------------------------------------------------------------------------------------------


async def test_following_a_match_that_does_not_exist_is_refused_by_name(live):
    """Against the status read with the wrong key or fields, and the message."""
    with pytest.raises(MatchNotFound) as refused:
        async for _ in live.follow("nope"):
            pass
    assert refused.value.message == "There is no match 'nope' (it may have expired)."
    assert live.followers == 0 and "nope" not in live._channels


async def test_following_a_finished_match_after_its_end_yields_nothing(store, live):
    """Against `int(version) <= after` (`<`), and a follower joined (and left waiting) for an ended match."""
    match_id, tokens = await new_match(store)
    last = await play(store, match_id, tokens, 6)
    assert [u async for u in live.follow(match_id, last)] == []
    assert [u.version async for u in live.follow(match_id, last - 2) if u is not None] == [last - 1, last]
    assert live.followers == 0 and match_id not in live._channels


async def test_a_follower_reads_its_current_version_itself_when_not_given(store, live):
    """Against `current` ignored or read wrongly: a match at version 2 followed after 0."""
    match_id, tokens = await new_match(store)
    await play(store, match_id, tokens, 2)
    updates = live.follow(match_id, 0, idle=60)
    assert [(await anext(updates)).version, (await anext(updates)).version] == [1, 2]
    await updates.aclose()
    assert live.followers == 0


async def test_a_seat_change_is_checked_then_announced_with_a_keepalive(store, live):
    """Against the seat check skipped or its error swallowed, `seats_changed` never reset, and the
    keep-alive not sent; the seat is checked once the subscription is confirmed too (a seat may have
    been left before it)."""
    match_id, _ = await new_match(store)
    checked = []

    async def check():
        checked.append(time.monotonic())
        if len(checked) == 3:
            raise InvalidToken("revoked")

    updates = live.follow(match_id, 0, idle=60, seat_check=check)
    assert await asyncio.wait_for(anext(updates), 5) is None and len(checked) == 1  # subscribed
    second = asyncio.ensure_future(anext(updates))
    await until(lambda: waiting(live, match_id))
    assert not second.done() and len(checked) == 1
    await store.redis.publish(store.channel(match_id), "seat:1")
    assert await asyncio.wait_for(second, 5) is None and len(checked) == 2
    third = asyncio.ensure_future(anext(updates))
    await until(lambda: waiting(live, match_id))
    assert not third.done()
    await store.redis.publish(store.channel(match_id), "seat:0")
    with pytest.raises(InvalidToken):
        await asyncio.wait_for(third, 5)
    assert live.followers == 0


async def test_an_idle_follower_gets_a_keepalive_each_idle_period(store, live):
    """Against the ticker's keep-alive (`idle_at`, `idle`) lost or sent without waiting for it, and a follower
    whose consumer is slow to ask for the next item leaving the ticker nothing it can compare."""
    match_id, _ = await new_match(store)
    updates = live.follow(match_id, 0, idle=0.5)
    assert await asyncio.wait_for(anext(updates), 5) is None  # subscribed
    for _ in range(2):
        started = time.monotonic()
        assert await asyncio.wait_for(anext(updates), 5) is None
        assert time.monotonic() - started >= 0.45  # a whole idle period, never early
    await asyncio.sleep(0.6)  # a consumer slow to ask for the next: the ticker passes its follower by meanwhile
    assert await asyncio.wait_for(anext(updates), 5) is None
    await updates.aclose()


async def test_a_follower_of_an_expired_match_ends_at_its_idle_check(store, live):
    """Against `channel.gone` ignored: a follower of a match deleted under it waited forever."""
    match_id, _ = await new_match(store)
    seen = []

    async def follow():
        async for update in live.follow(match_id, 0, idle=0.4):
            seen.append(update)

    task = asyncio.create_task(follow())
    await until(lambda: waiting(live, match_id))
    await store.redis.delete(store.key(match_id))
    await asyncio.wait_for(task, 5)
    assert seen == [None, None]  # subscribed, then the idle check that found it gone


async def test_followers_end_at_shutdown(store, live):
    """Against `begin_shutdown` not waking them, or `closing` not ending their loop."""
    match_id, _ = await new_match(store)
    task = asyncio.create_task(_drain(live.follow(match_id, 0, idle=60)))
    await until(lambda: waiting(live, match_id))
    live.begin_shutdown()
    assert await asyncio.wait_for(task, 5) == [None]  # subscribed, then nothing
    assert live.followers == 0 and match_id not in live._channels


async def test_the_last_follower_out_unsubscribes_the_match(store, live):
    """Against `_leave` keeping the channel (or dropping it while a follower remains)."""
    match_id, _ = await new_match(store)
    one = asyncio.create_task(_drain(live.follow(match_id, 0, idle=60)))
    two = asyncio.create_task(_drain(live.follow(match_id, 0, idle=60)))
    await until(lambda: waiting(live, match_id) and live.followers == 2)
    one.cancel()
    await asyncio.gather(one, return_exceptions=True)
    assert live.followers == 1 and match_id in live._channels
    two.cancel()
    await asyncio.gather(two, return_exceptions=True)
    assert live.followers == 0 and match_id not in live._channels
    channels = await store.redis.pubsub_channels(store.channel(match_id))
    deadline = time.monotonic() + 5
    while channels and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        channels = await store.redis.pubsub_channels(store.channel(match_id))
    assert channels == []


async def test_live_updates_keep_their_documented_defaults(store):
    """Against the cache size, page, ping interval and the client's socket timeout as the store timeout."""
    updates = LiveUpdates(store)
    assert (updates.cache_size, updates.page, updates.ping_interval, updates.timeout) == (256, 100, 1.0, 5.0)
    assert LiveUpdates(store, timeout=0.5).timeout == 0.5
    assert StreamLimit(5).ttl == 60  # docs/security.md: a crashed process's stream slots expire after 60 s


async def test_stopping_ends_the_reader_and_the_ticker_and_needs_no_start(store):
    """Against `stop` leaving its tasks running, and failing on a LiveUpdates never started (a service whose
    start-up failed half way still shuts down)."""
    await LiveUpdates(store).stop()
    updates = LiveUpdates(store)
    await updates.start()
    tasks = (updates._reader, updates._ticker)
    await updates.stop()
    assert all(task.done() for task in tasks) and updates.closing.is_set()


async def test_the_store_timeout_is_the_clients_socket_timeout_else_five_seconds(redis_url):
    """Against `_client_timeout`'s lookups and its default."""
    class Poolless:
        pass

    for kwargs, expected in (({"socket_timeout": 2.5}, 2.5), ({}, 5.0)):
        client = aioredis.Redis.from_url(redis_url, **kwargs)
        assert _client_timeout(MatchStore(client, {GAME.id: GAME})) == expected
        await client.aclose()
    client = aioredis.Redis.from_url(redis_url)
    store = MatchStore(client, {GAME.id: GAME})
    store.redis = Poolless()
    assert _client_timeout(store) == 5.0 and _client_timeout(store, 7.0) == 7.0
    await client.aclose()


# -- Redis not answering ------------------------------------------------------------------------------------


async def test_a_call_that_fails_once_is_tried_again(caplog):
    """Against `guarded` giving up at the first failure (a Redis restart fails each pooled connection once)."""
    calls = []

    async def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise RedisConnectionError("reset by peer")
        return "ok"

    with caplog.at_level(logging.INFO, logger="grimoire.live"):
        assert await guarded(flaky, 2.0) == "ok"
    assert len(calls) == 2 and caplog.records == []


async def test_a_call_that_keeps_failing_ends_as_store_unavailable_without_its_text(caplog):
    """Against the error passed on (its text names hosts), the deadline and the warning."""
    calls = []

    async def down():
        calls.append(time.monotonic())
        raise RedisConnectionError("Error 111 connecting to redis.internal:6379")

    started = time.monotonic()
    with caplog.at_level(logging.INFO, logger="grimoire.live"), pytest.raises(StoreUnavailable) as ended:
        await guarded(down, 0.6)
    assert ended.value.message == STORE_DOWN_MESSAGE and ended.value.code == "store_unavailable"
    assert time.monotonic() - started >= 0.5 and len(calls) >= 3
    assert [r.getMessage() for r in caplog.records] == [
        "live updates: the store did not answer (ConnectionError)"]


async def test_a_call_that_hangs_is_cut_at_the_deadline():
    """Against `within` without its timeout."""
    with pytest.raises(StoreUnavailable):
        await guarded(lambda: asyncio.sleep(30), 0.4)
    assert await within(asyncio.sleep(0, "done"), 1) == "done"
    with pytest.raises(TimeoutError):
        await within(asyncio.sleep(30), 0.1)


# -- stream slots -------------------------------------------------------------------------------------------


async def test_a_tokens_open_streams_are_counted_without_the_expired_ones(store):
    """Against `open_count`'s key and bounds, and the key a token's slots live under."""
    match_id, tokens = await new_match(store)
    limit = StreamLimit(3)
    assert limit.key(store, tokens[0]) == f"{store.key(match_id)}:streams:{hash_token(tokens[0])[:32]}"
    first = await limit.acquire(store, [tokens[0]])
    second = await limit.acquire(store, [tokens[0]])
    assert await limit.open_count(store, tokens[0]) == 2 and await limit.open_count(store, tokens[1]) == 0
    await first.release()
    assert await limit.open_count(store, tokens[0]) == 1
    # a lease past its expiry (a crashed process's) is not counted, though it is still in the set
    await store.redis.zadd(limit.key(store, tokens[0]), {"crashed": int(time.time() * 1000) - 1})
    assert await limit.open_count(store, tokens[0]) == 1
    await second.release()
    assert await limit.open_count(store, tokens[0]) == 0 and limit.held == set()


async def test_the_slot_limit_refuses_the_next_stream_and_holds_nothing_for_it(store):
    """Against the limit's comparison and a refused acquire keeping its other tokens' slots."""
    _, tokens = await new_match(store)
    limit = StreamLimit(1)
    held = await limit.acquire(store, [tokens[0]])
    with pytest.raises(TooManyStreams) as refused:
        await limit.acquire(store, [tokens[1], tokens[0]])
    assert refused.value.message == "A token may hold at most 1 open streams at once."
    assert await limit.open_count(store, tokens[1]) == 0 and limit.held == {held}
    await held.release()


async def test_a_crashed_processs_expired_lease_gives_its_slot_to_the_next_stream(store):
    """Against the lease script's cutoff (`now` in ms): at the limit, a lease past its expiry (a crashed process
    never released it) is dropped when the next stream asks, which takes the slot; the next one is refused."""
    _, tokens = await new_match(store)
    limit = StreamLimit(1)
    await store.redis.zadd(limit.key(store, tokens[0]), {"crashed": int(time.time() * 1000) - 1})
    lease = await limit.acquire(store, [tokens[0]])
    assert await store.redis.zrange(limit.key(store, tokens[0]), 0, -1) == [lease.id]
    with pytest.raises(TooManyStreams):
        await limit.acquire(store, [tokens[0]])
    await lease.release()

async def test_a_release_cancelled_midway_finishes_at_once_in_a_task_of_its_own(store, monkeypatch):
    """Against the cancelled release's follow-up (`_release_later(keys, 0.0)`): a stream cancelled while it gives
    its slots back still raises CancelledError, and its slots are given back straight away, not at the ttl."""
    _, tokens = await new_match(store)
    limit = StreamLimit(2)
    lease = await limit.acquire(store, [tokens[0]])
    each, calls = lease._each, []

    async def stuck_once(keys, command):
        calls.append(keys)
        if len(calls) == 1:
            await asyncio.Event().wait()  # the first try hangs until the stream is cancelled
        await each(keys, command)

    monkeypatch.setattr(lease, "_each", stuck_once)
    releasing = asyncio.create_task(lease.release())
    await until(lambda: calls)
    releasing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await releasing
    loop = asyncio.get_running_loop()
    cancelled_at = loop.time()
    for _ in range(80):
        if await limit.open_count(store, tokens[0]) == 0 and limit.held == set():
            break
        await asyncio.sleep(0.01)
    assert await limit.open_count(store, tokens[0]) == 0 and limit.held == set()
    assert loop.time() - cancelled_at < 0.9  # the follow-up does not wait first

# -- the GraphQL side (schema/live.py) ----------------------------------------------------------------------


@pytest.mark.parametrize(("params", "expected"), [
    (None, (None, [])),
    ({}, (None, [])),
    ({"token": "gt.a"}, ("gt.a", [])),
    ({"token": ""}, (None, [])),
    ({"authorization": "Bearer gt.b"}, ("gt.b", [])),
    ({"Authorization": "Bearer gt.c"}, ("gt.c", [])),
    ({"authorization": 7}, ("", [])),
    ({"token": "gt.a", "authorization": "Bearer gt.b"}, ("gt.a", [])),
    ({"tokens": ["gt.a", "gt.b"]}, (None, ["gt.a", "gt.b"])),
    ({"tokens": "gt.a"}, (None, ["gt.a"])),
], ids=["no params", "empty", "token", "empty token", "authorization", "Authorization", "authorization not text",
        "token first", "tokens", "one token not in a list"])
def test_a_connection_presents_its_token_and_its_list_of_tokens(params, expected):
    """Against `_presented`'s keys, its empty-token rule and its wrapping of a single listed token."""
    assert schema_live._presented({"connection_params": params}) == expected


def test_a_connections_tokens_are_all_it_presented_up_to_a_hundred():
    """Against `connection_tokens`' order, its cap and its refusals."""
    tokens = [f"gt.{i}" for i in range(120)]
    assert schema_live.connection_tokens({"connection_params": {"token": "gt.x", "tokens": tokens[:2]}}) == \
        ["gt.x", "gt.0", "gt.1"]
    assert schema_live.connection_tokens({"connection_params": {"tokens": tokens}}) == tokens[:100]
    assert schema_live.connection_tokens({"connection_params": {}}) == []
    for params in ({"tokens": ["gt.a", 5]}, {"tokens": [""]}, {"authorization": 7}):
        with pytest.raises(InvalidToken) as refused:
            schema_live.connection_tokens({"connection_params": params})
        assert refused.value.message == "A token in the connection_init payload is not a seat token."


def test_a_matchs_token_is_the_single_one_else_the_listed_one_of_that_match():
    """Against `match_token`'s precedence, its search of the list and its three refusals."""
    ours, theirs = "gt.aaaa.x", "gt.bbbb.y"
    context = {"connection_params": {"tokens": [theirs, ours]}}
    assert schema_live.match_token(context, token_match(ours)) == ours
    assert schema_live.match_token({"connection_params": {"token": theirs, "tokens": [ours]}},
                                   token_match(ours)) == theirs
    assert schema_live.match_token({"connection_params": {}}, "m") is None
    refusals = [({"token": 5}, "The connection's token is not a seat token."),
                ({"tokens": [ours, 5]}, "A token in the connection_init payload is not a seat token."),
                ({"tokens": [theirs]}, "None of the connection's tokens holds a seat in this match.")]
    for params, text in refusals:
        with pytest.raises(InvalidToken) as refused:
            schema_live.match_token({"connection_params": params}, token_match(ours))
        assert refused.value.message == text


def test_a_subscription_ends_with_its_reason_and_a_message_for_it():
    """Against `ended`'s messages and its fallback to the reason."""
    assert schema_live.ended("finished").message == "The match is over."
    assert schema_live.ended("shutdown").message.startswith("This server is shutting down")
    assert (schema_live.ended("store_unavailable", "gone").reason,
            schema_live.ended("store_unavailable", "gone").message) == ("store_unavailable", "gone")
    assert schema_live.ended("odd").message == "odd"


async def test_a_slow_consumer_is_closed_with_its_code_and_a_failing_close_is_swallowed():
    """Against `_Watched.expire`: the close code 4008 and its reason, the task kept, a close that fails."""
    closed = []

    class Socket:
        def __init__(self, fails: bool):
            self.fails = fails

        async def close(self, code: int, reason: str) -> None:
            closed.append((code, reason))
            if self.fails:
                raise RuntimeError("already closed")

    for fails in (False, True):
        watched = schema_live._Watched(Socket(fails), 1.0)
        watched.expire()
        assert isinstance(watched.closing, asyncio.Task)
        await watched.closing
        assert watched.closing.exception() is None
    assert closed == [(schema_live.SLOW_CONSUMER, "slow consumer")] * 2 and schema_live.SLOW_CONSUMER == 4008


# -- turn notices (service/store/live.py, `turns`) ----------------------------------------------------------


def notice(match_id: str, seat: int, version: int, to_act: list[int], status: str = "active") -> dict:
    return {"match_id": match_id, "seat": seat, "version": version, "status": status, "to_act": to_act,
            "your_turn": seat in to_act}


async def next_notice(stream, seconds: float = 5.0):
    return await asyncio.wait_for(anext(stream), seconds)


async def test_a_seat_is_told_when_its_turn_comes_and_not_when_another_seat_moves(store, live):
    """Against `turns`' first notice (a seat to act is told at once), the notice's fields, and a notice for
    an update that does not wait on the seat."""
    match_id, tokens = await new_match(store)
    stream = live_turns(live, [(match_id, 0)])
    assert await next_notice(stream) == notice(match_id, 0, 0, [0, 1])
    await play(store, match_id, tokens, 1)  # seat 0 plays: the match waits on seat 1 only
    pending = asyncio.ensure_future(next_notice(stream))
    await asyncio.sleep(0.3)
    assert not pending.done()
    await play(store, match_id, tokens, 1)  # seat 1 plays: a new round, both seats to act
    assert await pending == notice(match_id, 0, 2, [0, 1])
    await stream.aclose()


def live_turns(live: LiveUpdates, seats, **kwargs):
    return turns(live, seats, **{"idle": 60, **kwargs})


async def test_a_seat_not_to_act_hears_nothing_until_its_turn(store, live):
    """Against the first notice sent whatever the seat (`seat in acting` or `announce` dropped)."""
    match_id, tokens = await new_match(store)
    await play(store, match_id, tokens, 1)  # seat 0 has played this round
    stream = live_turns(live, [(match_id, 0)])
    pending = asyncio.ensure_future(next_notice(stream))
    await asyncio.sleep(0.3)
    assert not pending.done()
    await play(store, match_id, tokens, 1)
    assert await pending == notice(match_id, 0, 2, [0, 1])
    await stream.aclose()


async def test_the_end_of_a_match_is_told_to_every_seat_and_the_stream_then_ends(store, live):
    """Against the finished notice (its status, an empty `to_act`), the watch ending with the match, and the
    stream ending once every match it follows has ended."""
    match_id, tokens = await new_match(store)
    await play(store, match_id, tokens, 4)
    stream = live_turns(live, [(match_id, 1)], idle=0.3)
    assert await next_notice(stream) == notice(match_id, 1, 4, [0, 1])
    await play(store, match_id, tokens, 2)
    assert await next_notice(stream) == notice(match_id, 1, 5, [1])  # every update that waits on the seat
    assert await next_notice(stream) == notice(match_id, 1, 6, [], status="finished")
    with pytest.raises(StopAsyncIteration):
        await next_notice(stream)


async def test_a_finished_match_is_told_once_at_once(store, live):
    """Against a finished match followed (its watch never ends) or not told."""
    match_id, tokens = await new_match(store)
    await play(store, match_id, tokens, 6)
    stream = live_turns(live, [(match_id, 0)], idle=0.3)
    assert await next_notice(stream) == notice(match_id, 0, 6, [], status="finished")
    with pytest.raises(StopAsyncIteration):
        await next_notice(stream)
    assert live.followers == 0


async def test_a_match_that_does_not_exist_gives_no_notice(store, live):
    """Against `status is None` not ending the watch (json.loads of nothing)."""
    stream = live_turns(live, [("gone", 0)], idle=0.3)
    with pytest.raises(StopAsyncIteration):
        await next_notice(stream)


async def test_a_waiting_match_tells_its_seat_when_the_last_seat_is_taken(store, live):
    """Against the seat-taken path: the status read again, `started`, and the notice at version 0."""
    match = await store.create(GAME.id, seed=3)
    await store.join(match.id, "P0", 0)
    stream = live_turns(live, [(match.id, 0)])
    pending = asyncio.ensure_future(next_notice(stream))
    await asyncio.sleep(0.3)
    assert not pending.done()
    await store.join(match.id, "P1", 1)
    assert await pending == notice(match.id, 0, 0, [0, 1])
    await stream.aclose()


async def test_an_idle_turn_stream_sends_keepalives(store, live):
    """Against the keep-alive (`None`) of a quiet stream, and the stream ending while a match still runs."""
    match_id, tokens = await new_match(store)
    await play(store, match_id, tokens, 1)
    stream = live_turns(live, [(match_id, 0)], idle=0.3)
    assert await next_notice(stream) is None
    assert await next_notice(stream) is None
    await stream.aclose()
    assert live.followers == 0


async def test_a_revoked_seat_ends_the_turn_stream_with_its_error(store, live):
    """Against a seat check's error swallowed by the watch or the stream."""
    match_id, tokens = await new_match(store)
    await play(store, match_id, tokens, 1)

    async def revoked():
        raise InvalidToken("revoked")

    stream = live_turns(live, [(match_id, 0)], seat_checks={(match_id, 0): revoked})
    with pytest.raises(InvalidToken):
        await next_notice(stream)


async def test_a_turn_stream_ends_at_shutdown(store, live):
    """Against the shutdown marker not waking the stream (it waited a whole keep-alive)."""
    match_id, tokens = await new_match(store)
    await play(store, match_id, tokens, 1)
    stream = live_turns(live, [(match_id, 0)])
    pending = asyncio.ensure_future(next_notice(stream))
    await until(lambda: waiting(live, match_id))
    live.begin_shutdown()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(pending, 2)


async def test_a_players_stream_follows_each_match_it_discovers_with_a_first_notice(store, live):
    """Against `discover`: asked every `rescan`, each new pair followed once with an announcement (its turn
    or not), its seat check taken from `check`, and a player's stream running on with nothing followed."""
    one, _ = await new_match(store)
    two, two_tokens = await new_match(store)
    await play(store, two, two_tokens, 1)  # seat 0 of two has played: not its turn
    found: list[list[tuple[str, int]]] = [[], [(one, 0)], [(one, 0), (two, 0)]]
    asked, checked = [], []

    async def discover():
        asked.append(time.monotonic())
        return found[min(len(asked) - 1, 2)]

    def check(match_id):
        async def seat_check():
            checked.append(match_id)
        return seat_check

    stream = live_turns(live, [], discover=discover, check=check, rescan=0.2, idle=60)
    assert await next_notice(stream) == notice(one, 0, 0, [0, 1])
    assert await next_notice(stream) == notice(two, 0, 1, [1])  # announced, though not its turn
    pending = asyncio.ensure_future(next_notice(stream))
    await asyncio.sleep(0.5)  # asked again and again while it waits; nothing followed twice
    assert not pending.done() and len(asked) >= 4 and live.followers == 2
    assert sorted(checked) == sorted([one, two])  # each seat checked once subscribed, with its match's check
    await play(store, two, two_tokens, 1)
    assert await pending == notice(two, 0, 2, [0, 1])
    await stream.aclose()
    assert live.followers == 0


# -- a subscription's items (schema/live.py: match_updates, turn_notices) -----------------------------------


def subscription_context(store, live: LiveUpdates, params: dict | None = None, *, limit: int = 2,
                         keepalive: float = 60.0, send_timeout: float = 5.0) -> dict:
    """What strawberry hands a subscription: the store, the websocket (whose app holds the live updates, the
    stream limit and the settings) and the connection_init payload."""
    settings = Settings(stream_keepalive=keepalive, stream_send_timeout=send_timeout)
    state = SimpleNamespace(live=live, stream_limit=StreamLimit(limit), settings=settings)
    return {"store": store, "request": SimpleNamespace(app=SimpleNamespace(state=state)),
            "connection_params": params}


def described(item) -> tuple:
    """An item as (kind, what it carries in short)."""
    kind, value = item[0], item[1]
    if kind == "update":
        return kind, value.version, item[2]
    if kind == "end":
        return kind, value.reason, value.message
    if kind == "problem":
        return kind, type(value).__name__, value.message
    return kind, value


async def test_a_seat_follows_its_match_from_after_holding_one_slot(store, live):
    """Against match_updates' items (each update with the seat and game it is shown for) and `after` read
    wrongly; the seat's stream holds one slot while it runs."""
    match_id, tokens = await new_match(store)
    await play(store, match_id, tokens, 4)
    context = subscription_context(store, live, {"token": tokens[1]})
    limit = context["request"].app.state.stream_limit
    items = schema_live.match_updates(context, match_id, 2)
    assert described(await anext(items)) == ("update", 3, (1, GAME.id))
    assert described(await anext(items)) == ("update", 4, (1, GAME.id))
    assert await limit.open_count(store, tokens[1]) == 1 and len(limit.held) == 1
    await items.aclose()
    assert await limit.open_count(store, tokens[1]) == 0 and limit.held == set()


async def test_a_subscription_ends_finished_after_the_last_update_and_gives_its_slot_back(store, live):
    """Against the `end` item's reason, the lease released in the `finally`, and a negative `after`."""
    match_id, tokens = await new_match(store)
    context = subscription_context(store, live, {"token": tokens[0]})
    limit = context["request"].app.state.stream_limit
    items = schema_live.match_updates(context, match_id, -5)
    collected = asyncio.create_task(_drain(items))
    await until(lambda: waiting(live, match_id))
    await play(store, match_id, tokens, 6)
    got = [described(i) for i in await asyncio.wait_for(collected, 5) if i[0] != "update" or i[1] is not None]
    assert got == [("update", v, (0, GAME.id)) for v in range(1, 7)] + [("end", "finished", "The match is over.")]
    assert await limit.open_count(store, tokens[0]) == 0 and limit.held == set()


async def test_a_spectator_follows_with_no_seat_and_holds_no_slot(store, live):
    """Against a spectator's stream given a seat, or a slot."""
    match_id, tokens = await new_match(store)
    await play(store, match_id, tokens, 1)
    context = subscription_context(store, live, None)
    items = schema_live.match_updates(context, match_id, 0)
    assert described(await anext(items)) == ("update", 1, (None, GAME.id))
    assert context["request"].app.state.stream_limit.held == set()
    await items.aclose()


@pytest.mark.parametrize("case", ["another match's token", "not a token", "no such match", "no slot left"])
async def test_a_subscription_refused_yields_only_its_problem(store, live, case):
    """Against match_updates' refusals: the token, the match, the stream limit (one problem item, nothing held)."""
    match_id, tokens = await new_match(store)
    _, other_tokens = await new_match(store)
    params, target = {"token": tokens[0]}, match_id
    context = subscription_context(store, live, params, limit=1)
    if case == "another match's token":
        params["token"] = other_tokens[0]
    elif case == "not a token":
        params["token"] = "not-a-token"
    elif case == "no such match":
        target = "nosuchmatch"
    else:
        await context["request"].app.state.stream_limit.acquire(store, [tokens[0]])
    items = [described(i) async for i in schema_live.match_updates(context, target, 0)]
    expected = {"another match's token": "InvalidToken", "not a token": "InvalidToken",
                "no such match": "MatchNotFound", "no slot left": "TooManyStreams"}[case]
    assert [(kind, name) for kind, name, _ in items] == [("problem", expected)]
    assert live.followers == 0


async def test_a_subscription_opened_while_the_store_is_down_ends_store_unavailable(store, live, monkeypatch):
    """Against the outage at the start taken for a refusal (a problem) or let through."""
    match_id, tokens = await new_match(store)
    live.timeout = 0.3

    async def down(*args, **kwargs):
        raise RedisConnectionError("down")

    monkeypatch.setattr(store, "read_as", down)
    for items in (schema_live.match_updates(subscription_context(store, live, {"token": tokens[0]}), match_id, 0),
                  schema_live.turn_notices(subscription_context(store, live, {"tokens": [tokens[0]]}))):
        assert [described(i) async for i in items] == [("end", "store_unavailable", STORE_DOWN_MESSAGE)]


async def test_a_seat_revoked_mid_subscription_ends_it_with_that_reason(store, live):
    """Against a StoreError during the stream ending it as `finished`, or escaping; keep-alives are not items."""
    match_id, tokens = await new_match(store)
    context = subscription_context(store, live, {"token": tokens[0]})
    task = asyncio.create_task(_drain(schema_live.match_updates(context, match_id, 0)))
    await until(lambda: waiting(live, match_id))
    await store.leave(match_id, tokens[0])
    assert [described(i) for i in await asyncio.wait_for(task, 5)] == [
        ("end", "invalid_token", "This token does not hold a seat in this match.")]
    assert await context["request"].app.state.stream_limit.open_count(store, tokens[0]) == 0


async def test_a_subscription_ends_shutdown_when_the_server_stops(store, live):
    """Against the shutdown taken for the end of the match."""
    match_id, tokens = await new_match(store)
    items = schema_live.match_updates(subscription_context(store, live, {"token": tokens[0]}), match_id, 0)
    task = asyncio.create_task(_drain(items))
    await until(lambda: waiting(live, match_id))
    live.begin_shutdown()
    got = [described(i) for i in await asyncio.wait_for(task, 5)]
    assert got[-1] == ("end", "shutdown",
                       "This server is shutting down: subscribe again (another server answers) with `after`.")
    turns_task = asyncio.create_task(_drain(schema_live.turn_notices(
        subscription_context(store, live, {"tokens": [tokens[1]]}))))
    assert [described(i) for i in await asyncio.wait_for(turns_task, 5)][-1][:2] == ("end", "shutdown")


async def test_turn_notices_of_a_connections_tokens_end_finished(store, live):
    """Against turn_notices' items (each notice, the last `end`) and its slots kept after the end."""
    match_id, tokens = await new_match(store)
    context = subscription_context(store, live, {"tokens": [tokens[0]]}, keepalive=0.3)
    task = asyncio.create_task(_drain(schema_live.turn_notices(context)))
    await until(lambda: waiting(live, match_id))
    await play(store, match_id, tokens, 6)
    got = [described(i) for i in await asyncio.wait_for(task, 5) if i[1] is not None]
    assert got[0] == ("notice", notice(match_id, 0, 0, [0, 1]))
    assert got[-2:] == [("notice", notice(match_id, 0, 6, [], status="finished")),
                        ("end", "finished", "The match is over.")]
    assert await context["request"].app.state.stream_limit.open_count(store, tokens[0]) == 0


@pytest.mark.parametrize(("params", "problem"), [
    ({}, ("TokenRequired", 'Send your seat tokens in the connection_init payload: {"tokens": [...]}.')),
    ({"tokens": ["gt.nope"]}, ("InvalidToken", "A listed token is not a seat token.")),
    ({"tokens": [5]}, ("InvalidToken", "A token in the connection_init payload is not a seat token.")),
], ids=["no tokens", "not shaped as a token", "not a string"])
async def test_turn_notices_refuse_a_connection_without_usable_tokens(store, live, params, problem):
    """Against turn_notices' refusals and their messages."""
    items = [described(i) async for i in schema_live.turn_notices(subscription_context(store, live, params))]
    assert items == [("problem", *problem)]


async def test_turn_notices_refuse_a_token_of_no_seat(store, live):
    """Against a token of no seat followed as a spectator's."""
    match_id, _ = await new_match(store)
    fake = f"gt.{match_id}.{'x' * 43}"
    items = [described(i) async for i in schema_live.turn_notices(subscription_context(store, live, {"tokens": [fake]}))]
    assert [(kind, name) for kind, name, _ in items] == [("problem", "InvalidToken")]


# -- slots given back, kept alive, and given back late --------------------------------------------------------


class Outage:
    """The store's pipelines fail (a Redis that is down, as the lease sees it) until ``up()``."""

    def __init__(self, store, monkeypatch):
        self.down, self.failures = True, 0
        pipeline = store.redis.pipeline

        def failing(*args, **kwargs):
            if self.down:
                self.failures += 1
                raise RedisConnectionError("Error 111 connecting to redis.internal:6379")
            return pipeline(*args, **kwargs)

        monkeypatch.setattr(store.redis, "pipeline", failing)

    def up(self) -> None:
        self.down = False


async def test_a_release_that_meets_an_outage_finishes_once_redis_answers_again(store, monkeypatch):
    """Against `_release_later`: its retries (the wait between them, the deadline), the ZREM of this lease's
    member of each key, the outage of one retry swallowed, and the lease dropped from `held` at the end."""
    _, tokens = await new_match(store)
    limit = StreamLimit(2)
    lease = await limit.acquire(store, [tokens[0], tokens[1]])
    other = await limit.acquire(store, [tokens[0]])
    keys = [limit.key(store, tokens[0]), limit.key(store, tokens[1])]
    outage = Outage(store, monkeypatch)
    await lease.release()  # gives up after guarded's 2 s and leaves the rest to a task
    assert lease._later is not None and not lease._later.done() and lease in limit.held
    failures = outage.failures
    await until(lambda: outage.failures > failures, 3)  # the task's first try, 0.5 s on, fails too
    await asyncio.sleep(2.2)  # that try's own 2 s run out (swallowed), then the next wait begins
    assert not lease._later.done()
    outage.up()
    await asyncio.wait_for(lease._later, 3)
    assert lease._later.exception() is None and limit.held == {other}
    assert [await store.redis.zscore(key, lease.id) for key in keys] == [None, None]
    assert await store.redis.zscore(keys[0], other.id) is not None  # another stream's slot stays
    await other.release()


async def test_a_release_gives_up_when_its_lease_has_expired_by_itself(store, monkeypatch):
    """Against `_release_later` retrying past the lease's ttl, or failing instead of ending quietly."""
    _, tokens = await new_match(store)
    limit = StreamLimit(1, ttl=1.0)
    lease = await limit.acquire(store, [tokens[0]], keepalive=0.2)
    assert lease.ttl == 1.0
    Outage(store, monkeypatch)
    await lease.release()
    # one try (0.5 s wait + guarded's 2 s), then the ttl has passed: a release retrying on would time out here
    await asyncio.wait_for(lease._later, 6)
    assert lease._later.exception() is None and limit.held == set()


async def test_a_lease_is_renewed_once_a_third_of_its_ttl_has_passed(store):
    """Against `renew`: its third of the ttl, the new expiry of the member and of the key, and a lease with
    no slot (a spectator's) renewed at all."""
    _, tokens = await new_match(store)
    limit = StreamLimit(1, ttl=3.0)
    lease = await limit.acquire(store, [tokens[0]], keepalive=0.5)
    key = limit.key(store, tokens[0])
    first = await store.redis.zscore(key, lease.id)
    await asyncio.sleep(0.05)
    lease.renewed -= 0.9  # 0.9 s of a 3 s ttl: not yet a third
    await lease.renew()
    assert await store.redis.zscore(key, lease.id) == first
    lease.renewed -= 0.11
    await lease.renew()
    renewed = await store.redis.zscore(key, lease.id)
    assert renewed > first and abs(renewed - (time.time() * 1000 + 3000)) < 500
    assert 2500 < await store.redis.pttl(key) <= 3000  # the key lives as long as its newest lease
    await asyncio.sleep(0.05)
    await lease.renew()  # just renewed: nothing sent
    assert await store.redis.zscore(key, lease.id) == renewed
    spectator = await limit.acquire(store, [], keepalive=0.5)
    spectator.renewed -= 10
    await spectator.renew()
    assert spectator.keys == [] and spectator not in limit.held
    await lease.release()


async def test_a_lease_takes_one_slot_per_token_for_its_ttl(store):
    """Against `acquire`: a token listed twice counted once, the ticket holders' keys, the ttl (at least three
    keep-alives), the member's expiry and a limit of 0 holding nothing."""
    match_id, tokens = await new_match(store)
    limit = StreamLimit(1, ttl=2.0)
    lease = await limit.acquire(store, [tokens[0], tokens[0]], keepalive=5.0)
    assert lease.ttl == 15.0 and lease.keys == [limit.key(store, tokens[0])] and limit.held == {lease}
    expiry = await store.redis.zscore(lease.keys[0], lease.id)
    assert abs(expiry - (time.time() + 15.0) * 1000) < 500
    await lease.release()
    hashed = await limit.acquire(store, [], hashed=((match_id, hash_token(tokens[1])),))
    assert hashed.keys == [limit.key(store, tokens[1])]
    with pytest.raises(TooManyStreams):
        await limit.acquire(store, [tokens[1]])
    await hashed.release()
    free = StreamLimit(0)
    unlimited = await free.acquire(store, [tokens[0]])
    assert unlimited.keys == [] and free.held == set()


# -- slow consumers and lost connections -------------------------------------------------------------------


class SlowSocket:
    """The websocket of a subscription whose client stopped reading."""

    def __init__(self):
        self.closed: list[tuple[int, str]] = []

    async def close(self, code: int, reason: str) -> None:
        self.closed.append((code, reason))


def watched_subscription(store, live: LiveUpdates, kind: str, match_id: str, token: str, *, keepalive: float):
    """A subscription of ``kind`` (match_updates or turn_notices) with a 0.3 s send timeout, on a websocket
    that records how it is closed: (its items, its context, the websocket)."""
    params = {"token": token} if kind == "match_updates" else {"tokens": [token]}
    context = subscription_context(store, live, params, keepalive=keepalive, send_timeout=0.3)
    socket = SlowSocket()
    context["request"].close = socket.close
    items = schema_live.match_updates(context, match_id, 0) if kind == "match_updates" \
        else schema_live.turn_notices(context)
    return items, context, socket


@pytest.mark.parametrize("kind", ["match_updates", "turn_notices"])
async def test_a_subscriber_that_stops_taking_items_is_closed_as_a_slow_consumer(store, live, kind):
    """Against the send watch of both subscriptions: the mark (its websocket, its timeout, its `since`) added,
    set while an item waits, and discarded when the subscription ends."""
    match_id, tokens = await new_match(store)
    await play(store, match_id, tokens, 1)
    items, context, socket = watched_subscription(store, live, kind, match_id, tokens[1], keepalive=60.0)
    await anext(items)  # an item handed over, and not taken for a second
    await until(lambda: socket.closed != [], 3)
    assert socket.closed == [(4008, "slow consumer")]
    await items.aclose()
    assert all(w.websocket is not context["request"] for w in SendWatch.current().watched)


@pytest.mark.parametrize("kind", ["match_updates", "turn_notices"])
async def test_a_prompt_subscriber_is_never_closed_and_leaves_no_mark(store, live, kind):
    """Against `since` left set (or set to nonsense) after the item was taken, and the mark kept in the send
    watch after the subscription ended."""
    match_id, tokens = await new_match(store)
    await play(store, match_id, tokens, 1)
    items, context, socket = watched_subscription(store, live, kind, match_id, tokens[1], keepalive=0.2)
    await anext(items)
    task = asyncio.create_task(_drain(items))
    await asyncio.sleep(1.0)  # the stream waits for the match, its last item long taken
    assert socket.closed == []
    assert any(w.websocket is context["request"] for w in SendWatch.current().watched)
    await play(store, match_id, tokens, 5)  # to the end: the subscription ends by itself
    await asyncio.wait_for(task, 5)
    assert socket.closed == []
    assert all(w.websocket is not context["request"] for w in SendWatch.current().watched)


async def test_a_pubsub_reconnect_sends_every_follower_to_the_log(live):
    """Against `_reconnected` waking followers without marking their matches stale (the messages of the gap
    are lost)."""
    follower = _Follower()
    channel = live._join("m1", follower)
    channel.stale = False
    await live._reconnected(None)
    assert channel.stale is True and follower.seats_changed is True and follower.woken is True
    live._leave(channel, follower)


async def test_a_failed_pubsub_connection_is_logged_and_tried_again_after_a_doubling_wait(store, monkeypatch, caplog):
    """Against `_read`'s reconnection: each failure of the pub/sub connection is logged by its kind (never its
    text) and the reader connects again after 0.05 s, doubling up to 0.5 s; a connection that ended cleanly
    starts the wait over. Each time, the followers are woken to read the log (the gap's messages are lost) and
    the channels subscribed again; a connection that fails to close too does not stop the reader. (No ticker:
    the reader alone, its waits recorded and cut short.)"""
    live = LiveUpdates(store, timeout=3)
    outcomes = ["fail"] * 3 + ["end"] + ["fail"] * 6
    served = []

    async def cannot_close():
        raise RedisConnectionError("closing failed too")

    async def serve(pubsub):
        served.append(pubsub)
        pubsub.aclose = cannot_close  # a broken connection may not close cleanly either: the reader goes on
        if len(served) > len(outcomes):
            await asyncio.Event().wait()  # connected for good
        if outcomes[len(served) - 1] == "fail":
            raise RedisConnectionError("the secret text of a failure")

    waits = []
    real_sleep = asyncio.sleep
    reading = []  # the reader's task: live.py's other sleepers in this loop (another test's leftovers) wait as ever

    class RecordedWaits:
        """live.py's asyncio, with the reader's sleeps recorded and cut short."""

        def __getattr__(self, name):
            return getattr(asyncio, name)

        @staticmethod
        async def sleep(delay):
            if asyncio.current_task() not in reading:
                return await real_sleep(delay)
            waits.append(delay)
            await real_sleep(0)

    monkeypatch.setattr(live, "_serve", serve)
    monkeypatch.setattr(live_module, "asyncio", RecordedWaits())
    follower = _Follower()
    channel = live._join("m1", follower)
    channel.stale = False
    channel.ready.set()
    with caplog.at_level(logging.WARNING, logger="grimoire.live"):
        reader = asyncio.create_task(live._read())
        reading.append(reader)
        await until(lambda: len(served) > len(outcomes))
        # what the gap's lost messages call for: the followers woken to read the log, the channel subscribed anew
        assert channel.stale is True and follower.woken is True and not channel.ready.is_set()
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
    live._leave(channel, follower)
    assert waits == [0.05, 0.1, 0.2, 0.05, 0.1, 0.2, 0.4, 0.5, 0.5]
    warned = [r.getMessage() for r in caplog.records if r.name == "grimoire.live"]
    assert warned == ["live updates: the pub/sub connection failed (ConnectionError); followers re-read the logs"] * 9

async def _subscribers(store, name: str) -> int:
    [(_, count)] = await store.redis.pubsub_numsub(name)
    return count


async def _until_unsubscribed(store, name: str) -> None:
    """Wait (up to 2 s) until Redis counts no subscriber of the channel ``name``."""
    for _ in range(100):
        if await _subscribers(store, name) == 0:
            return
        await asyncio.sleep(0.02)


async def test_the_reader_subscribes_confirms_dispatches_pings_and_unsubscribes(store):
    """Against `_serve`, driven alone on a real pub/sub connection: a match followed before the connection is
    subscribed at once; once Redis confirms it, its channel is read again from the log and its followers check
    their seats; a seat message wakes them as a seat change; pings keep the connection across several intervals;
    the last follower out unsubscribes the match and the connection stays."""
    live = LiveUpdates(store, timeout=0.5, ping_interval=0.2)
    match_id, _ = await new_match(store)
    follower = _Follower()
    channel = live._join(match_id, follower)
    channel.stale = False
    pubsub = store.redis.pubsub()
    server = asyncio.create_task(live._serve(pubsub))
    try:
        await until(channel.ready.is_set)
        assert channel.stale is True and follower.seats_changed is True
        assert await _subscribers(store, channel.name) == 1
        follower.seats_changed = follower.woken = False
        published = []
        live._published = lambda channel, data: published.append(data)  # the update's own handling is tested above
        await store.redis.publish(channel.name, "seat:1")
        await store.redis.publish(channel.name, message(1))  # an update before the follower ran: the change stays
        await until(lambda: published)
        assert follower.woken is True and follower.seats_changed is True
        await asyncio.sleep(1.2)  # six ping intervals, each answered in time
        assert not server.done()
        live._leave(channel, follower)
        await _until_unsubscribed(store, channel.name)
        assert await _subscribers(store, channel.name) == 0 and not server.done()
    finally:
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server
        await pubsub.aclose()


async def test_a_subscription_redis_has_not_confirmed_leaves_its_channel_waiting(store, monkeypatch):
    """Against `_serve` readying a channel on its request alone, or on a confirmation of an earlier subscription
    since unsubscribed: until Redis confirms this one, a message published for the match could still be missed,
    so its followers wait (``ready`` unset)."""
    live = LiveUpdates(store, timeout=0.5, ping_interval=0.2)
    match_id, _ = await new_match(store)
    follower = _Follower()
    channel = live._join(match_id, follower)
    pubsub = store.redis.pubsub()
    handle = pubsub.handle_message

    async def unconfirmed(response, *args, **kwargs):
        message = await handle(response, *args, **kwargs)
        return None if message is not None and message["type"] == "subscribe" else message

    server = asyncio.create_task(live._serve(pubsub))
    try:
        # followed, confirmed, left (and the unsubscription confirmed), then followed again, unconfirmed
        await until(channel.ready.is_set)
        live._leave(channel, follower)
        await _until_unsubscribed(store, channel.name)
        await asyncio.sleep(0.2)
        monkeypatch.setattr(pubsub, "handle_message", unconfirmed)
        channel = live._join(match_id, follower)
        await asyncio.sleep(0.5)
        assert await _subscribers(store, channel.name) == 1  # asked for, and Redis has it
        assert not channel.ready.is_set() and not server.done()
    finally:
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server
        live._leave(channel, follower)
        await pubsub.aclose()

async def test_the_reader_gives_up_on_a_connection_that_answers_no_ping(store, monkeypatch):
    """Against `_serve`'s pong deadline: a ping left unanswered for the store's timeout ends the connection with
    StoreUnavailable (the reader then connects again), not before."""
    live = LiveUpdates(store, timeout=0.3, ping_interval=0.1)
    match_id, _ = await new_match(store)
    channel = live._join(match_id, _Follower())
    pubsub = store.redis.pubsub()

    async def lost(*args):
        """A ping that never reaches Redis."""

    monkeypatch.setattr(pubsub, "ping", lost)
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(StoreUnavailable) as ended:
        await asyncio.wait_for(live._serve(pubsub), 5)
    assert ended.value.message == "no pong on the pub/sub connection"
    assert loop.time() - started >= 0.3
    live._leave(channel, next(iter(channel.followers)))
    await pubsub.aclose()

async def test_an_idle_check_waits_exactly_half_the_keepalive(store, live):
    """Against the half keep-alive as a third, or twice the keep-alive, and `now + checked`."""
    match_id, _ = await new_match(store)
    channel = _Channel(match_id, store.channel(match_id))
    loop = asyncio.get_running_loop()
    for ago, read in ((4.0, False), (6.0, True)):
        channel.checked, channel.stale = loop.time() - ago, False
        await live._idle(channel, 10)
        assert channel.stale is read, ago


async def test_a_renewal_that_meets_an_outage_is_left_to_the_stream(store, monkeypatch):
    """Against `renew` raising StoreUnavailable (the stream's own reads notice the outage and end it)."""
    _, tokens = await new_match(store)
    limit = StreamLimit(1, ttl=3.0)
    lease = await limit.acquire(store, [tokens[0]], keepalive=0.5)
    outage = Outage(store, monkeypatch)
    lease.renewed -= 1.5
    await lease.renew()
    assert outage.failures > 0
    outage.up()
    await lease.release()


async def test_a_turn_stream_of_an_expired_match_ends_at_its_idle_check(store, live):
    """Against `turns` following a match without its keep-alive (`idle`): the watch of a match deleted under
    it must end at its idle check, and the stream with it."""
    match_id, _ = await new_match(store)
    stream = live_turns(live, [(match_id, 0)], idle=0.3)
    assert await next_notice(stream) == notice(match_id, 0, 0, [0, 1])
    await until(lambda: waiting(live, match_id))
    await store.redis.delete(store.key(match_id))

    async def rest():
        return [item async for item in stream]

    assert set(await asyncio.wait_for(rest(), 5)) <= {None}
    assert live.followers == 0


async def test_a_subscription_finds_its_seat_among_the_listed_tokens_and_holds_its_slot_three_keepalives(store, live):
    """Against match_updates asking `match_token` for no match, and the lease taken without the keep-alive
    (its ttl: at least three keep-alives, else a quiet stream's slot expired under it)."""
    match_id, tokens = await new_match(store)
    _, other_tokens = await new_match(store)
    await play(store, match_id, tokens, 1)
    context = subscription_context(store, live, {"tokens": [other_tokens[0], tokens[1]]}, keepalive=100.0)
    items = schema_live.match_updates(context, match_id, 0)
    assert described(await anext(items)) == ("update", 1, (1, GAME.id))
    [lease] = context["request"].app.state.stream_limit.held
    assert lease.ttl == 300.0
    assert abs(await store.redis.zscore(lease.keys[0], lease.id) - (time.time() + 300) * 1000) < 1000
    await items.aclose()
    turns_context = subscription_context(store, live, {"tokens": [tokens[1]]}, keepalive=100.0)
    notices = schema_live.turn_notices(turns_context)
    await anext(notices)
    [lease] = turns_context["request"].app.state.stream_limit.held
    assert lease.ttl == 300.0
    await notices.aclose()


async def test_a_subscription_of_a_match_deleted_under_it_ends_at_its_keepalive(store, live):
    """Against match_updates following without its keep-alive (`idle`): the expired match is noticed only at
    an idle check."""
    match_id, tokens = await new_match(store)
    context = subscription_context(store, live, {"token": tokens[0]}, keepalive=0.3)
    task = asyncio.create_task(_drain(schema_live.match_updates(context, match_id, 0)))
    await until(lambda: waiting(live, match_id))
    await store.redis.delete(store.key(match_id))
    assert [described(i)[:2] for i in await asyncio.wait_for(task, 5)] == [("end", "finished")]


async def test_turn_notices_end_with_the_reason_and_message_of_what_ended_them(store, live):
    """Against turn_notices' end losing the error's message (a revoked seat's, here)."""
    match_id, tokens = await new_match(store)
    await play(store, match_id, tokens, 1)
    context = subscription_context(store, live, {"tokens": [tokens[0]]})
    task = asyncio.create_task(_drain(schema_live.turn_notices(context)))
    await until(lambda: waiting(live, match_id))
    await store.leave(match_id, tokens[0])
    got = [described(i) for i in await asyncio.wait_for(task, 5) if i[1] is not None]
    assert got[-1] == ("end", "invalid_token", "This token does not hold a seat in this match.")


async def test_a_seat_change_in_a_started_match_repeats_no_notice(store, live):
    """Against `started` taken as False for an active match: each seat change read the match again and told
    the seat of its turn a second time."""
    match_id, tokens = await new_match(store)
    stream = live_turns(live, [(match_id, 0)])
    assert await next_notice(stream) == notice(match_id, 0, 0, [0, 1])
    await until(lambda: waiting(live, match_id))
    pending = asyncio.ensure_future(next_notice(stream))
    await store.redis.publish(store.channel(match_id), "seat:1")
    await asyncio.sleep(0.3)
    assert not pending.done()
    await play(store, match_id, tokens, 2)
    assert await pending == notice(match_id, 0, 2, [0, 1])
    await stream.aclose()
