"""Live match updates: one Redis pub/sub connection per process, fanned out.

A follower of a match gets every accepted action after the version it names,
in order, without gaps or repeats, however many service processes there are:

* the commit script publishes the new version on the match's channel; this
  process's :class:`LiveUpdates` holds one pub/sub connection for all of its
  followers and wakes those of that match;
* a woken follower reads the match's action log after the last version it
  delivered. The log, not the message, is the source of truth, so a message
  this process missed (a pub/sub reconnect) costs only latency: followers
  also re-read the log on every idle tick;
* the newest entries of each followed match are cached here and read from
  Redis once, whatever the number of followers of that match.

Updates are the raw log entries: pass each through :meth:`Update.for_seat`
before anyone sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

from .archive import Update, log_update
from .errors import MatchNotFound, TooManyStreams
from .matches import MatchStore
from .tokens import hash_token

log = logging.getLogger("grimoire.live")


@dataclass(eq=False)
class _Follower:
    wake: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(eq=False)
class _Channel:
    match_id: str
    followers: set[_Follower] = field(default_factory=set)
    recent: OrderedDict[int, Update] = field(default_factory=OrderedDict)
    newest: int = -1  # the newest version read from the log
    stale: bool = True  # a notification came since the last read
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class LiveUpdates:
    """This process's followers of matches, woken through one pub/sub connection."""

    def __init__(self, store: MatchStore, *, cache_size: int = 256, page: int = 100):
        self.store = store
        self.cache_size = cache_size
        self.page = page
        self._channels: dict[str, _Channel] = {}
        self._pubsub = None
        self._reader: asyncio.Task | None = None
        self.closing = asyncio.Event()

    @property
    def followers(self) -> int:
        return sum(len(c.followers) for c in self._channels.values())

    async def start(self) -> None:
        self._pubsub = self.store.redis.pubsub(ignore_subscribe_messages=True)
        self._reader = asyncio.create_task(self._read(), name="grimoire-live-reader")

    def begin_shutdown(self) -> None:
        """Wake every follower to finish: streams end with the reason "shutdown"."""
        self.closing.set()
        for channel in self._channels.values():
            for follower in channel.followers:
                follower.wake.set()

    async def stop(self) -> None:
        self.begin_shutdown()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()

    async def _read(self) -> None:
        while True:
            try:
                if not self._pubsub.subscribed:
                    await asyncio.sleep(0.05)
                    continue
                message = await self._pubsub.get_message(timeout=1.0)
                if message is None:
                    continue
                channel = self._channels.get(self._match_of(message["channel"]))
                if channel is not None:
                    if not message["data"].startswith("seat:"):  # a new version, not a seat taken
                        channel.stale = True
                    for follower in channel.followers:
                        follower.wake.set()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # a dropped connection: redis-py resubscribes on reconnect
                log.warning("live updates: pub/sub read failed (%s); catching up from the logs", error)
                await asyncio.sleep(0.5)
                for channel in self._channels.values():
                    channel.stale = True
                    for follower in channel.followers:
                        follower.wake.set()

    def _match_of(self, channel_name: str) -> str:
        start = channel_name.index("{") + 1
        return channel_name[start:channel_name.index("}", start)]

    async def follow(self, match_id: str, after: int = 0, *, idle: float = 15.0) -> AsyncIterator[Update | None]:
        """Every update of ``match_id`` after version ``after``, in order.

        ``None`` is yielded on each idle tick and when a seat is taken (which
        changes the match without a log entry): streams send a keep-alive.

        Ends after the update that finishes the match, or when the process
        shuts down (``self.closing`` is set). Raises MatchNotFound first if
        the match does not exist.
        """
        if not await self.store.redis.exists(self.store.key(match_id)):
            raise MatchNotFound(f"There is no match {match_id!r} (it may have expired).")
        follower = _Follower()
        channel = await self._join(match_id, follower)
        try:
            last = after
            while not self.closing.is_set():
                follower.wake.clear()
                updates = await self._after(channel, last)
                for update in updates:
                    last = update.version
                    yield update
                    if update.status == "finished":
                        return
                if updates:
                    continue
                if await self._finished_at(match_id, last):
                    return
                try:
                    await asyncio.wait_for(follower.wake.wait(), idle)
                except asyncio.TimeoutError:
                    channel.stale = True  # in case a notification was missed
                    yield None
                else:
                    if not channel.stale:
                        yield None  # a seat was taken: no log entry, but the match changed
        finally:
            await self._leave(channel, follower)

    async def _finished_at(self, match_id: str, version: int) -> bool:
        status, current = await self.store.redis.hmget(self.store.key(match_id), "status", "version")
        return status is None or (status == "finished" and int(current) <= version)

    async def _join(self, match_id: str, follower: _Follower) -> _Channel:
        channel = self._channels.get(match_id)
        if channel is None:
            channel = self._channels[match_id] = _Channel(match_id)
            await self._pubsub.subscribe(self.store.channel(match_id))
        channel.followers.add(follower)
        return channel

    async def _leave(self, channel: _Channel, follower: _Follower) -> None:
        channel.followers.discard(follower)
        if not channel.followers and self._channels.get(channel.match_id) is channel:
            del self._channels[channel.match_id]
            with contextlib.suppress(Exception):
                await self._pubsub.unsubscribe(self.store.channel(channel.match_id))

    async def _after(self, channel: _Channel, last: int) -> list[Update]:
        """Updates after version ``last``: from the cache when it covers them, else from the log."""
        async with channel.lock:
            if channel.stale or channel.newest < 0:
                await self._refresh(channel)
        oldest = next(iter(channel.recent), None)
        if oldest is not None and oldest <= last + 1:
            return [u for v, u in channel.recent.items() if v > last][: self.page]
        if channel.newest <= last:
            return []
        entries = await self.store.log_entries(channel.match_id, after=last, limit=self.page)
        return [log_update(channel.match_id, entry_id, fields) for entry_id, fields in entries]

    async def _refresh(self, channel: _Channel) -> None:
        channel.stale = False
        if channel.newest < 0:  # first read: just the newest few
            entries = await self.store.redis.xrevrange(self.store.log_key(channel.match_id), "+", "-",
                                                       count=self.cache_size)
            entries.reverse()
        else:
            entries = await self.store.log_entries(channel.match_id, after=channel.newest, limit=self.cache_size)
        for entry_id, fields in entries:
            update = log_update(channel.match_id, entry_id, fields)
            channel.recent[update.version] = update
            channel.newest = max(channel.newest, update.version)
        if channel.newest < 0:
            channel.newest = 0
        while len(channel.recent) > self.cache_size:
            channel.recent.popitem(last=False)
        if len(entries) == self.cache_size and channel.newest >= 0:
            channel.stale = True  # more to read


class StreamLimit:
    """At most ``limit`` open streams per seat token, in this process."""

    def __init__(self, limit: int):
        self.limit = limit
        self._open: dict[str, int] = {}

    def acquire(self, tokens: list[str]) -> None:
        """Count a stream for each token; raises TooManyStreams (counting nothing) at the limit."""
        keys = [hash_token(t) for t in tokens]
        if any(self._open.get(k, 0) >= self.limit for k in keys):
            raise TooManyStreams(f"A seat token may hold at most {self.limit} open streams.")
        for k in keys:
            self._open[k] = self._open.get(k, 0) + 1

    def release(self, tokens: list[str]) -> None:
        for k in (hash_token(t) for t in tokens):
            self._open[k] -= 1
            if not self._open[k]:
                del self._open[k]


async def turns(live: LiveUpdates, seats: list[tuple[str, int]], *, idle: float = 15.0,
                buffer: int = 64) -> AsyncIterator[dict[str, Any] | None]:
    """Turn notices for several (match id, seat) pairs at once; ``None`` on idle ticks.

    A notice ``{"match_id", "seat", "version", "status", "to_act", "your_turn"}``
    comes when a followed match starts waiting on the seat, and when it ends.
    """
    queue: asyncio.Queue = asyncio.Queue(maxsize=buffer)

    async def notify(match_id: str, seat: int, version: int, status: str, to_act: list[int]) -> None:
        await queue.put({"match_id": match_id, "seat": seat, "version": version, "status": status,
                         "to_act": to_act, "your_turn": seat in to_act})

    async def watch(match_id: str, seat: int) -> None:
        store = live.store
        status, version, to_act = await store.redis.hmget(store.key(match_id), "status", "version", "to_act")
        if status is None:
            return
        version, acting = int(version), json.loads(to_act) if status == "active" else []
        if seat in acting or status == "finished":
            await notify(match_id, seat, version, status, acting)
        if status == "finished":
            return
        started = status == "active"
        async for update in live.follow(match_id, version, idle=idle):
            if update is not None:
                if seat in update.to_act or update.status == "finished":
                    await notify(match_id, seat, update.version, update.status, update.to_act)
            elif not started:  # a seat was taken: the match may have started, at version 0
                status, to_act = await store.redis.hmget(store.key(match_id), "status", "to_act")
                if status == "active":
                    started = True
                    acting = json.loads(to_act)
                    if seat in acting:
                        await notify(match_id, seat, version, status, acting)

    tasks = [asyncio.create_task(watch(m, s)) for m, s in seats]
    try:
        while not live.closing.is_set():
            try:
                yield await asyncio.wait_for(queue.get(), idle)
            except asyncio.TimeoutError:
                if all(t.done() for t in tasks) and queue.empty():
                    return
                yield None
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
