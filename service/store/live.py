"""Live match updates: one Redis pub/sub connection per process, fanned out.

A follower of a match gets every accepted action after the version it names,
in order, without gaps or repeats, however many service processes there are:

* the commit script publishes the new version on the match's channel; this
  process's :class:`LiveUpdates` holds one pub/sub connection for all of its
  followers and wakes those of that match;
* the message is the whole update (commit.lua publishes the log entry's
  fields with the version, status and seats to act): the reader appends it to
  the match's cache of newest updates when it is the next version, and a
  woken follower takes it from there. A follower sends Redis nothing per
  update: one read per follower per update exhausted the store's connection
  pool at a thousand followers, and their streams ended ``store_unavailable``;
* the log, not the message, is the source of truth: a message out of order or
  missed (a pub/sub reconnect) marks the match stale, and the next follower to
  wake reads the log once for all of them (so does an idle tick, at most once
  per match per half keep-alive), so a lost message costs only latency.

One task, the reader, owns the pub/sub connection: it alone subscribes,
unsubscribes and reads (redis-py's connection allows one reader at a time; a
follower subscribing while the reader waited was the "readuntil() called while
another coroutine is already waiting" of an outage). Followers only tell it
which matches they want, and wait for its confirmation before trusting that
no notification can be missed.

When the store fails (killed: an error at once; frozen: no pong within
``timeout``), followers re-read the log and, if Redis does not answer within
``timeout``, end with :class:`StoreUnavailable`: streams close with the reason
``store_unavailable`` and the client resumes with ``after``.

Updates are the raw log entries: pass each through :meth:`Update.for_seat`
before anyone sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable

from .archive import Update, log_update, published_update
from .connect import STORE_UNAVAILABLE
from .errors import MatchNotFound, StoreError, TooManyStreams
from .matches import MatchStore
from .tokens import hash_token, token_match

log = logging.getLogger("grimoire.live")

#: How long the reader waits for a message before it looks at new subscriptions again.
_POLL = 0.05
_PING = "grimoire-live"
_RETRY = 0.1
#: How often one task looks for followers idle past their keep-alive (instead of a timer per wait).
_TICK = 0.2


class StoreUnavailable(StoreError):
    """Redis did not answer (down, frozen, failing over): a stream ends with this reason."""

    code = "store_unavailable"


STORE_DOWN_MESSAGE = "The match store is unavailable; reconnect shortly and resume with `after`."


async def within(awaitable: Awaitable, seconds: float):
    """``await awaitable``, raising TimeoutError after ``seconds``; a cancellation of the task always wins.

    A cancellation that races a timeout (or a Redis error, see :func:`guarded`)
    must not be taken for it: a stream whose client left then ran on forever,
    holding its follower and its slot (seen under load on Python 3.11).

    Nor may a cancellation that ``awaitable`` swallowed: on Python 3.11, redis-py
    writes each command under ``asyncio.wait_for``, which returns the result and
    drops the cancellation when the write finishes in the same loop turn as the
    cancel (fixed in 3.12). The task's count of pending cancellations still shows
    it, so it is raised here: without this, about one stream in a hundred whose
    client left under load never ended (tests/live/test_soak.py).
    """
    task = asyncio.current_task()
    pending = task.cancelling()
    try:
        async with asyncio.timeout(seconds):
            result = await awaitable
    except TimeoutError:
        if task.cancelling():
            raise asyncio.CancelledError() from None
        raise
    if task.cancelling() > pending:
        raise asyncio.CancelledError()
    return result


async def guarded(call: Callable[[], Awaitable], timeout: float):
    """``call()``'s result, tried again until ``timeout`` has passed; then :class:`StoreUnavailable`.

    Tried again because after a Redis restart each pooled connection fails once
    before it reconnects: a blip shorter than ``timeout`` ends no stream. The
    Redis error itself is not passed on: its text names hosts and ports.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            return await within(call(), max(deadline - loop.time(), 0.01))
        except (*STORE_UNAVAILABLE, asyncio.TimeoutError, OSError) as error:
            if asyncio.current_task().cancelling():
                # redis-py can turn a cancellation into a ConnectionError: the task must still end
                raise asyncio.CancelledError() from None
            if loop.time() + _RETRY >= deadline:
                log.warning("live updates: the store did not answer (%s)", type(error).__name__)
                raise StoreUnavailable(STORE_DOWN_MESSAGE) from None
        await asyncio.sleep(_RETRY)


def _client_timeout(store: MatchStore, default: float = 5.0) -> float:
    pool = getattr(store.redis, "connection_pool", None)
    configured = getattr(pool, "connection_kwargs", {}).get("socket_timeout") if pool is not None else None
    return float(configured or default)


@dataclass(eq=False, slots=True)
class _Follower:
    """One follower's wake-up flag. Not an asyncio.Event: its deque of waiters weighed more than
    the rest of the follower, and a follower has one waiter at most, only while it waits."""

    woken: bool = False
    waiter: asyncio.Future | None = None
    seats_changed: bool = False
    idle_at: float = float("inf")  # when the ticker wakes it for a keep-alive, if nothing else did
    idle: bool = False  # woken by the ticker

    def wake(self) -> None:
        self.woken = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def wait(self) -> None:
        if self.woken:
            return
        self.waiter = asyncio.get_running_loop().create_future()
        try:
            await self.waiter
        finally:
            self.waiter = None


@dataclass(eq=False)
class _Channel:
    match_id: str
    name: str
    followers: set[_Follower] = field(default_factory=set)
    recent: OrderedDict[int, Update] = field(default_factory=OrderedDict)
    newest: int = -1  # the newest version cached (read from the log or published)
    stale: bool = True  # the cache may lack versions that exist: read the log before trusting it
    finished: int | None = None  # the version that finished the match, once seen
    gone: bool = False  # the match expired
    checked: float = float("-inf")  # when an idle tick last made sure of the log and the match
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    ready: asyncio.Event = field(default_factory=asyncio.Event)  # subscribed on the reader's connection


class LiveUpdates:
    """This process's followers of matches, woken through one pub/sub connection."""

    def __init__(self, store: MatchStore, *, cache_size: int = 256, page: int = 100, timeout: float | None = None,
                 ping_interval: float = 1.0):
        self.store = store
        self.cache_size = cache_size
        self.page = page
        #: how long Redis may take to answer before followers end with store_unavailable
        self.timeout = timeout if timeout is not None else _client_timeout(store)
        self.ping_interval = ping_interval
        self._channels: dict[str, _Channel] = {}
        self._changed = asyncio.Event()
        self._reader: asyncio.Task | None = None
        self._ticker: asyncio.Task | None = None
        self.closing = asyncio.Event()
        self.subscriptions = 0  # GraphQL subscriptions open on this process (:meth:`subscription`)

    @property
    def followers(self) -> int:
        return sum(len(c.followers) for c in self._channels.values())

    async def start(self) -> None:
        self._reader = asyncio.create_task(self._read(), name="grimoire-live-reader")
        self._ticker = asyncio.create_task(self._tick(), name="grimoire-live-ticker")

    def begin_shutdown(self) -> None:
        """Wake every follower to finish: streams end with the reason "shutdown"."""
        self.closing.set()
        self._wake_all()

    @contextlib.contextmanager
    def subscription(self):
        """Held by a GraphQL subscription from its start until its last message has gone out
        (:meth:`end_streams` waits for them)."""
        self.subscriptions += 1
        try:
            yield
        finally:
            self.subscriptions -= 1

    async def end_streams(self, within: float = 2.0) -> None:
        """End every stream (reason "shutdown") and return once each subscription has sent its
        end, or after ``within`` seconds. Only then may the server begin to exit: uvicorn closes
        every websocket (code 1012) as it does, and an end still on its way would be lost. (An HTTP
        stream's response is let finish.)"""
        self.begin_shutdown()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while self.subscriptions and loop.time() < deadline:
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        self.begin_shutdown()
        for task in (self._reader, self._ticker):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _tick(self) -> None:
        """Wake the followers idle past their keep-alive: one task for all, not a timer per follower per wait."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(_TICK)
            now = loop.time()
            for channel in list(self._channels.values()):
                for follower in channel.followers:
                    if now >= follower.idle_at:
                        follower.idle_at = float("inf")
                        follower.idle = True
                        follower.wake()

    def _wake_all(self, stale: bool = False) -> None:
        """``stale``: notifications may have been lost, of new versions and of seats taken or left alike."""
        for channel in self._channels.values():
            if stale:
                channel.stale = True
            for follower in channel.followers:
                follower.seats_changed |= stale
                follower.wake()

    # -- the reader: the only task that touches the pub/sub connection ----------------

    async def _read(self) -> None:
        backoff = 0.05
        while True:
            pubsub = self.store.redis.pubsub()
            try:
                await self._serve(pubsub)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the connection broke, or Redis stopped answering
                log.warning("live updates: the pub/sub connection failed (%s); followers re-read the logs",
                            type(error).__name__)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 0.5)
            else:
                backoff = 0.05
            finally:
                for channel in self._channels.values():
                    channel.ready.clear()
                self._wake_all(stale=True)
                with contextlib.suppress(Exception):
                    await within(pubsub.aclose(), 1.0)

    async def _serve(self, pubsub) -> None:
        """Keep ``pubsub`` subscribed to the followed matches and dispatch its messages; raises when it fails."""
        loop = asyncio.get_running_loop()
        subscribed: set[str] = set()  # sent
        confirmed: set[str] = set()  # acknowledged by Redis on this connection
        pong_due: float | None = None
        next_ping = loop.time()
        while True:
            wanted = {c.name for c in self._channels.values()}
            if wanted - subscribed:
                await pubsub.subscribe(*(wanted - subscribed))
                # a silent reconnect inside redis-py resubscribes, but messages of the gap are lost
                pubsub.connection.register_connect_callback(self._reconnected)
            if subscribed - wanted:
                await pubsub.unsubscribe(*(subscribed - wanted))
                # forgotten now: with nothing left subscribed its confirmation is not read before the match may be
                # followed again, and that old confirmation must not ready the new subscription
                confirmed -= subscribed - wanted
            subscribed = wanted
            for channel in self._channels.values():
                if channel.name in confirmed and not channel.ready.is_set():
                    channel.stale = True
                    for follower in channel.followers:  # a seat may have been left before the subscription
                        follower.seats_changed = True
                    channel.ready.set()
            if not subscribed:
                self._changed.clear()
                pong_due = None
                with contextlib.suppress(asyncio.TimeoutError):
                    await within(self._changed.wait(), self.ping_interval)
                continue
            now = loop.time()
            if pong_due is not None and now > pong_due:
                raise StoreUnavailable("no pong on the pub/sub connection")
            if pong_due is None and now >= next_ping:
                await pubsub.ping(_PING)
                pong_due = now + self.timeout
            response = await pubsub.parse_response(block=False, timeout=_POLL)
            if response is None:
                continue
            if response == _PING or (isinstance(response, list) and response[-1:] == [_PING]):
                # RESP3 answers a subscriber's PING with the bare payload, RESP2 with ["pong", payload]
                pong_due, next_ping = None, loop.time() + self.ping_interval
                continue
            message = await pubsub.handle_message(response)
            if message is None:
                continue
            kind, name = message["type"], message.get("channel")
            if kind == "subscribe":
                confirmed.add(name)
            elif kind == "unsubscribe":  # a subscription confirmed after it was dropped is dropped here
                confirmed.discard(name)
            elif kind == "message":
                channel = self._channels.get(self._match_of(name))
                if channel is not None:
                    data = message["data"]
                    seat_taken = data.startswith("seat:")
                    if not seat_taken:
                        self._published(channel, data)
                    for follower in channel.followers:
                        follower.seats_changed |= seat_taken
                        follower.wake()

    def _published(self, channel: _Channel, data: str) -> None:
        """Cache a published update if it is the next version; else (a gap, a message not understood: an
        older process's bare version number) have the log read."""
        if channel.stale or channel.newest < 0 or not data.startswith("{"):
            channel.stale = True
            return
        try:
            update = published_update(channel.match_id, json.loads(data))
        except (ValueError, KeyError, TypeError):
            log.warning("live updates: a message on %s is not an update; reading the log", channel.name)
            channel.stale = True
            return
        if update.version == channel.newest + 1:
            self._cache(channel, update)
        elif update.version > channel.newest:  # a message was lost: the log has the ones between
            channel.stale = True

    async def _reconnected(self, connection) -> None:
        self._wake_all(stale=True)

    def _match_of(self, channel_name: str) -> str:
        start = channel_name.index("{") + 1
        return channel_name[start:channel_name.index("}", start)]

    # -- followers ------------------------------------------------------------------

    async def follow(self, match_id: str, after: int = 0, *, idle: float = 15.0,
                     seat_check: Callable[[], Awaitable[None]] | None = None,
                     current: tuple[str, int] | None = None) -> AsyncIterator[Update | None]:
        """Every update of ``match_id`` after version ``after``, in order.

        ``None`` is yielded on each idle tick and when a seat is taken or left
        (which changes the match without a log entry): streams send a keep-alive.
        ``seat_check`` is awaited after such a seat change: it raises (e.g.
        InvalidToken) to end a stream whose token was just revoked.

        Ends after the update that finishes the match, or when the process
        shuts down (``self.closing`` is set). Raises MatchNotFound first if the
        match does not exist, and StoreUnavailable whenever Redis does not answer.

        ``current``: the match's (status, version) as the caller just read them, which spares a
        read; a thousand clients connecting at once each made one, and the pool ran dry.
        """
        if current is None:
            current = await guarded(
                lambda: self.store.redis.hmget(self.store.key(match_id), "status", "version"), self.timeout)
        status, version = current
        if status is None:
            raise MatchNotFound(f"There is no match {match_id!r} (it may have expired).")
        if status == "finished" and int(version) <= after:
            return  # nothing after the end
        follower = _Follower()
        channel = self._join(match_id, follower)
        # the loop is here, not in a generator of its own: a thousand idle followers each held both
        try:
            loop = asyncio.get_running_loop()
            last = after
            while not self.closing.is_set():
                follower.woken = False
                subscribed = channel.ready.is_set()
                updates = self._cached(channel, last)
                if updates is None:  # not all in the cache: one follower reads the log for every one
                    updates = await guarded(lambda: self._after(channel, last), self.timeout)
                for update in updates:
                    last = update.version
                    yield update
                    if update.status == "finished":
                        return
                if updates:
                    continue
                if channel.gone or (channel.finished is not None and last >= channel.finished):
                    return
                if not subscribed:
                    # read again once subscribed: an action committed before that sent no wake-up here
                    await self._until_subscribed(channel)
                    continue
                if follower.seats_changed:
                    follower.seats_changed = False
                    if seat_check is not None:
                        await guarded(seat_check, self.timeout)
                    yield None  # a seat was taken: no log entry, but the match changed
                    continue
                if follower.idle:
                    follower.idle = False
                    await self._idle(channel, idle)
                    yield None
                    continue
                follower.idle_at = loop.time() + idle
                await follower.wait()
        except StoreUnavailable:
            if not self.closing.is_set():  # at shutdown the store's client closes under the followers
                raise
        finally:
            self._leave(channel, follower)

    async def _idle(self, channel: _Channel, idle: float) -> None:
        """On a follower's idle tick, at most once per match per half keep-alive: have the log read again
        (in case a notification was missed) and make sure the match has not expired."""
        now = asyncio.get_running_loop().time()
        if now - channel.checked < idle / 2:
            return
        channel.checked = now
        channel.stale = True
        if not await guarded(lambda: self.store.redis.exists(self.store.key(channel.match_id)), self.timeout):
            channel.gone = True

    async def _until_subscribed(self, channel: _Channel) -> None:
        try:
            await within(channel.ready.wait(), self.timeout)
        except asyncio.TimeoutError:
            raise StoreUnavailable(STORE_DOWN_MESSAGE) from None

    def _join(self, match_id: str, follower: _Follower) -> _Channel:
        channel = self._channels.get(match_id)
        if channel is None:
            channel = self._channels[match_id] = _Channel(match_id, self.store.channel(match_id))
            self._changed.set()
        channel.followers.add(follower)
        return channel

    def _leave(self, channel: _Channel, follower: _Follower) -> None:
        """Synchronous, so that it runs whatever way a follower ends (cancelled, closed, failed)."""
        channel.followers.discard(follower)
        if not channel.followers and self._channels.get(channel.match_id) is channel:
            del self._channels[channel.match_id]
            self._changed.set()

    def _cached(self, channel: _Channel, last: int) -> list[Update] | None:
        """Updates after version ``last`` if the cache holds them all; None if the log must be read."""
        if channel.stale or channel.newest < 0:
            return None
        if channel.newest <= last:
            return []
        recent = channel.recent
        if last + 1 not in recent:
            return None
        # the cache holds consecutive versions: no scan of it per follower
        return [recent[v] for v in range(last + 1, min(channel.newest, last + self.page) + 1)]

    def _cache(self, channel: _Channel, update: Update) -> None:
        """Add the next version (an update read twice keeps the first copy: followers share its encodings)."""
        channel.recent.setdefault(update.version, update)
        channel.newest = max(channel.newest, update.version)
        if update.status == "finished":
            channel.finished = update.version
        while len(channel.recent) > self.cache_size:
            channel.recent.popitem(last=False)

    async def _after(self, channel: _Channel, last: int) -> list[Update]:
        """Updates after version ``last``: from the cache when it covers them, else from the log."""
        async with channel.lock:
            if channel.stale or channel.newest < 0:
                await self._refresh(channel)
        cached = self._cached(channel, last)
        if cached is not None:
            return cached
        if channel.newest <= last:
            return []
        entries = await self.store.log_entries(channel.match_id, after=last, limit=self.page)
        return [log_update(channel.match_id, entry_id, fields) for entry_id, fields in entries]

    async def _refresh(self, channel: _Channel) -> None:
        channel.stale = False  # before the read: a notification during it must leave the channel stale
        try:
            if channel.newest < 0:  # first read: just the newest few
                entries = await self.store.redis.xrevrange(self.store.log_key(channel.match_id), "+", "-",
                                                           count=self.cache_size)
                entries.reverse()
            else:
                entries = await self.store.log_entries(channel.match_id, after=channel.newest,
                                                       limit=self.cache_size)
        except BaseException:  # failed or timed out: the next follower must read again
            channel.stale = True
            raise
        for entry_id, fields in entries:
            self._cache(channel, log_update(channel.match_id, entry_id, fields))
        if channel.newest < 0:
            channel.newest = 0
        if len(entries) == self.cache_size and channel.newest >= 0:
            channel.stale = True  # more to read



LEASE_SCRIPT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1
"""


@dataclass(eq=False)
class Lease:
    """Open-stream slots held by one stream: released on every way out, else they expire."""

    limit: "StreamLimit | None"
    store: MatchStore | None
    keys: list[str]
    id: str
    ttl: float
    renewed: float = field(default_factory=time.monotonic)
    _later: asyncio.Task | None = None

    async def renew(self) -> None:
        """Push the expiry back (cheap to call often: it talks to Redis once a third of the ttl)."""
        if not self.keys or time.monotonic() - self.renewed < self.ttl / 3:
            return
        self.renewed = time.monotonic()
        expires = int((time.time() + self.ttl) * 1000)
        with contextlib.suppress(StoreUnavailable):  # the stream itself will notice the outage
            await self._each(self.keys, lambda pipe, key: (pipe.zadd(key, {self.id: expires}),
                                                            pipe.pexpireat(key, expires)))

    async def release(self) -> None:
        """Give the slots back; idempotent. If Redis does not answer, a task tries again until it
        does or the lease has expired by itself (``ttl``)."""
        keys, self.keys = self.keys, []
        if not keys:
            if self.limit is not None:
                self.limit.held.discard(self)
            return
        try:
            await self._each(keys, lambda pipe, key: pipe.zrem(key, self.id))
        except StoreUnavailable:
            self._later = asyncio.get_running_loop().create_task(self._release_later(keys, 0.5))  # held: not GC'd
            return
        except asyncio.CancelledError:
            # the stream was cancelled while giving its slots back (a server stopping, a client
            # leaving): finish the release in a task of its own rather than hold the slots to the ttl
            self._later = asyncio.get_running_loop().create_task(self._release_later(keys, 0.0))
            raise
        if self.limit is not None:
            self.limit.held.discard(self)

    async def _release_later(self, keys: list[str], first_wait: float) -> None:
        give_up = time.monotonic() + self.ttl
        wait = first_wait
        try:
            while time.monotonic() < give_up:
                await asyncio.sleep(wait)
                wait = 0.5
                with contextlib.suppress(StoreUnavailable):
                    await self._each(keys, lambda pipe, key: pipe.zrem(key, self.id))
                    return
        finally:
            if self.limit is not None:
                self.limit.held.discard(self)

    async def _each(self, keys: list[str], command: Callable) -> None:
        async def run():
            async with self.store.redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    command(pipe, key)
                await pipe.execute()

        await guarded(run, 2.0)


class StreamLimit:
    """At most ``limit`` open streams per seat token, across every process sharing the Redis.

    Each token's open streams are a sorted set of leases scored by their expiry
    (``<match key>:streams:<token hash>``, in the match's hash slot). A stream
    renews its lease as it runs and releases it in a ``finally``; a lease of a
    process that crashed, or whose release met an outage, expires after ``ttl``
    seconds, so nothing holds a slot forever.
    """

    def __init__(self, limit: int, *, ttl: float = 60.0):
        self.limit = limit
        self.ttl = ttl
        self.held: set[Lease] = set()  # this process's leases not yet given back to Redis

    def key(self, store: MatchStore, token: str) -> str:
        return self.hashed_key(store, token_match(token) or "", hash_token(token))

    def hashed_key(self, store: MatchStore, match_id: str, token_hash: str) -> str:
        """The key of a token known by its hash only (a stream ticket's: service/store/tickets.py)."""
        return f"{store.key(match_id)}:streams:{token_hash[:32]}"

    async def acquire(self, store: MatchStore, tokens: list[str], *, keepalive: float = 15.0,
                      hashed: tuple[tuple[str, str], ...] = ()) -> Lease:
        """A lease on one slot for each token (and each ``(match id, token hash)`` of ``hashed``: the
        same slots as the tokens'); raises TooManyStreams (holding nothing) at the limit,
        StoreUnavailable if Redis does not answer. ``keepalive``: how often the stream renews it."""
        ttl = max(self.ttl, 3 * keepalive)
        lease = Lease(self, store, [], uuid.uuid4().hex, ttl)
        if not self.limit:
            return lease
        keys = [self.key(store, t) for t in tokens] + [self.hashed_key(store, m, h) for m, h in hashed]
        try:
            for key in dict.fromkeys(keys):  # a token listed twice counts once
                now = time.time()
                taken = await guarded(lambda: store.redis.eval(LEASE_SCRIPT, 1, key, int(now * 1000),
                                                               int((now + ttl) * 1000), self.limit, lease.id), 5.0)
                if not taken:
                    raise TooManyStreams(f"A token may hold at most {self.limit} open streams at once.")
                lease.keys.append(key)
        except BaseException:
            await lease.release()
            raise
        if lease.keys:  # a spectator's stream holds no slot
            self.held.add(lease)
        return lease

    async def open_count(self, store: MatchStore, token: str) -> int:
        """The token's slots in use now, expired leases left out."""
        return await store.redis.zcount(self.key(store, token), int(time.time() * 1000), "+inf")


_SHUTTING_DOWN = object()  # a turn stream's queue item: the process is shutting down


async def turns(live: LiveUpdates, seats: list[tuple[str, int]], *, idle: float = 15.0, buffer: int = 64,
                seat_checks: dict[tuple[str, int], Callable[[], Awaitable[None]]] | None = None,
                discover: Callable[[], Awaitable[list[tuple[str, int]]]] | None = None,
                check: Callable[[str], Callable[[], Awaitable[None]] | None] | None = None,
                rescan: float = 2.0) -> AsyncIterator[dict[str, Any] | None]:
    """Turn notices for several (match id, seat) pairs at once; ``None`` on idle ticks.

    A notice ``{"match_id", "seat", "version", "status", "to_act", "your_turn"}``
    comes when a followed match starts waiting on the seat, and when it ends.
    Raises the first StoreError of any match followed (StoreUnavailable, or
    InvalidToken from its ``seat_checks`` entry when a token is revoked).

    ``discover`` (a player's stream: service/rest/players.py) is asked every ``rescan``
    seconds for the pairs to follow now: each new one is followed from then on, with a
    first notice at once (a match just made for the player, its turn or not), its seat
    check from ``check(match id)``; the stream then runs until it is closed.
    """
    queue: asyncio.Queue = asyncio.Queue(maxsize=buffer)
    store = live.store

    async def notify(match_id: str, seat: int, version: int, status: str, to_act: list[int]) -> None:
        await queue.put({"match_id": match_id, "seat": seat, "version": version, "status": status,
                         "to_act": to_act, "your_turn": seat in to_act})

    async def read(match_id: str, *fields: str) -> list:
        return await guarded(lambda: store.redis.hmget(store.key(match_id), *fields), live.timeout)

    async def watch(match_id: str, seat: int, announce: bool = False) -> None:
        status, version, to_act = await read(match_id, "status", "version", "to_act")
        if status is None:
            return
        version, acting = int(version), json.loads(to_act) if status == "active" else []
        if seat in acting or status == "finished" or (announce and status == "active"):
            await notify(match_id, seat, version, status, acting)
        if status == "finished":
            return
        started = status == "active"
        check = (seat_checks or {}).get((match_id, seat))
        async with contextlib.aclosing(live.follow(match_id, version, idle=idle, seat_check=check,
                                                   current=(status, version))) as updates:
            async for update in updates:
                if update is not None:
                    if seat in update.to_act or update.status == "finished":
                        await notify(match_id, seat, update.version, update.status, update.to_act)
                elif not started:  # a seat was taken: the match may have started, at version 0
                    status, to_act = await read(match_id, "status", "to_act")
                    if status == "active":
                        started = True
                        acting = json.loads(to_act)
                        if seat in acting or announce:
                            await notify(match_id, seat, version, status, acting)

    async def watched(match_id: str, seat: int, announce: bool = False) -> None:
        try:
            await watch(match_id, seat, announce)
        except StoreError as error:
            await queue.put(error)
        if live.closing.is_set():  # wake the loop below: it would wait for the queue up to a keep-alive
            await queue.put(_SHUTTING_DOWN)

    tasks = [asyncio.create_task(watched(m, s)) for m, s in seats]
    followed = set(seats)
    loop = asyncio.get_running_loop()
    quiet_since = scanned = loop.time()
    try:
        while not live.closing.is_set():
            if discover is not None and loop.time() - scanned >= rescan:
                scanned = loop.time()
                for pair in await guarded(discover, live.timeout):
                    if pair not in followed:
                        followed.add(pair)
                        if check is not None:
                            seat_checks = {**(seat_checks or {}), pair: check(pair[0])}
                        tasks.append(asyncio.create_task(watched(*pair, announce=True)))
            try:
                item = await within(queue.get(), idle if discover is None else min(idle, rescan))
            except asyncio.TimeoutError:
                if discover is None and all(t.done() for t in tasks) and queue.empty():
                    return
                if loop.time() - quiet_since >= idle or discover is None:
                    quiet_since = loop.time()
                    yield None
                continue
            quiet_since = loop.time()
            if item is _SHUTTING_DOWN:
                continue
            if isinstance(item, StoreError):
                raise item
            yield item
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
