"""A request's rate-limit count, carried to Redis on the request's first command.

The rate limit (service/limits.py) counts every request in Redis, across every service process, before
anything the request does is written. Sent on its own, the count is one more round trip on every
request: on the action path, about an eighth of the server's CPU (issue 18). So the limiter *arms* the
count (:func:`armed`) and the match store's client, a :class:`CountingRedis`, settles it on the
request's first command:

* a read of one key (the match record's ``HGETALL``, a player token's ``HGET``, ...: :data:`CARRIED`)
  goes in the same script as the count (:data:`COUNT_AND_READ`): one round trip for both;
* anything else (a write, a script, a pipeline) waits for the count, sent on its own just before it,
  so nothing is ever written for a request its count refuses;
* a request that sends no command at all is counted by the limiter before its response starts.

A refused count raises :class:`RateLimited` from the command that carried it (its data is not handed
back), and every later command of the request raises it again; the limiter answers 429 whatever the
handler made of it. A count Redis fails (an outage, writes refused) lets the request go on uncounted,
as the limiter always did: its own commands say what Redis says. A count cancelled on its way is sent
again by the request's next command. Outside a request (workers, the live reader, start-up) nothing is
armed and the client is redis-py's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline
from redis.exceptions import NoScriptError, RedisError

#: KEYS: the counters of this request's window; ARGV[1]: their lifetime in seconds. Returns the counts.
COUNT_SCRIPT = """
local counts = {}
for i, key in ipairs(KEYS) do
  counts[i] = redis.call('INCR', key)
  if counts[i] == 1 then redis.call('EXPIRE', key, ARGV[1]) end
end
return counts
"""

#: The count and a read of one key in one script. KEYS: the counters, then the key read; ARGV[1]: the
#: counters' lifetime; ARGV[2]: the read command; ARGV[3...]: its other arguments. Returns the counts
#: followed by the read's reply. The read's own error (a key of another type) comes back as a value, so
#: that the counts are judged before it is raised.
COUNT_AND_READ = """
local out = {}
local counters = #KEYS - 1
for i = 1, counters do
  out[i] = redis.call('INCR', KEYS[i])
  if out[i] == 1 then redis.call('EXPIRE', KEYS[i], ARGV[1]) end
end
out[counters + 1] = redis.pcall(ARGV[2], KEYS[#KEYS], unpack(ARGV, 3))
return out
"""

#: Commands that only read the one key they name first: they may carry the count.
CARRIED = frozenset({"HGETALL", "HGET", "HMGET", "GET", "EXISTS", "XRANGE", "XREVRANGE"})

#: Seconds a window's counter lives (a window is one second; the spare second covers clock skew).
COUNTER_TTL = 2


class RateLimited(Exception):
    """The request is past one of its limits: ``kind`` ("token" or "address") allows ``limit`` a second."""

    def __init__(self, kind: str, limit: int):
        super().__init__(f"More than {limit} requests a second from this {kind}.")
        self.kind, self.limit = kind, limit


class RequestCount:
    """The counters of one request (``checks``: key, limit, kind), counted once.

    :meth:`settle` counts them; concurrent commands of the request wait for the one count. A count Redis
    fails (an outage, writes refused) lets the request go on uncounted, as its own commands will say what
    Redis says; a count cancelled on its way (a timeout around the request's first read) is not known to
    have happened, so the request's next command counts again.
    """

    def __init__(self, checks: list[tuple[str, int, str]]):
        self.checks = checks
        self.refusal: RateLimited | None = None
        self.settled = False  # the count is known (or was given up): every later command goes as it is
        self._counting: asyncio.Future | None = None  # a count on its way, for the request's other commands

    def judge(self, counts: list[int]) -> None:
        """Record the refusal of the first check ``counts`` (in the order of ``checks``) puts past its limit."""
        for (_, limit, kind), count in zip(self.checks, counts):
            if count > limit:
                self.refusal = RateLimited(kind, limit)
                return

    async def settle(self, client: aioredis.Redis, command: tuple = (), options: dict | None = None) -> Any:
        """Count, carrying ``command`` when it may be carried; return its reply (None without one).

        Raises :class:`RateLimited` when the count refuses. A command that cannot be carried (or one
        sent while another command of the request is counting) is sent after the count, on its own.
        """
        while not self.settled:
            if self._counting is not None:
                await asyncio.shield(self._counting)
                continue
            self._counting = asyncio.get_running_loop().create_future()
            try:
                carried, reply = await self._count(client, command, options)
            finally:
                counting, self._counting = self._counting, None
                counting.set_result(None)
            if carried and self.refusal is None:
                if isinstance(reply, Exception):  # the read's own error, as the command alone raises it
                    raise reply
                return _parsed(client, command, options, reply)
        return await self.after(client, command, options)

    async def _count(self, client: aioredis.Redis, command: tuple, options: dict | None) -> tuple[bool, Any]:
        """Send the count (with ``command`` when it may be carried): whether it was carried, and its reply."""
        keys = [key for key, _, _ in self.checks]
        carried = _carried(command, options)
        try:
            if carried:
                *counts, reply = await _evalsha(client, COUNT_AND_READ, [*keys, command[1]],
                                                [COUNTER_TTL, *command[0:1], *command[2:]])
            else:
                counts, reply = await _evalsha(client, COUNT_SCRIPT, keys, [COUNTER_TTL]), None
        except RedisError:  # Redis failed the count: the request goes on uncounted, its own command says why
            counts, carried, reply = [], False, None
        self.judge(counts)
        self.settled = True
        return carried, reply

    async def after(self, client: aioredis.Redis, command: tuple, options: dict | None) -> Any:
        """``command`` sent as it is, once the count is known (None without one)."""
        if self.refusal is not None:
            raise self.refusal
        if command:
            return await aioredis.Redis.execute_command(client, *command, **(options or {}))
        return None


_current: contextvars.ContextVar[RequestCount | None] = contextvars.ContextVar("grimoire_request_count",
                                                                                 default=None)


def _pending() -> RequestCount | None:
    """The armed count that still has a say in this request's next command: not yet known, or refused."""
    count = _current.get()
    return None if count is None or (count.settled and count.refusal is None) else count


@contextlib.contextmanager
def armed(count: RequestCount):
    """Within this block (one request), the store's first command settles ``count``."""
    reset = _current.set(count)
    try:
        yield count
    finally:
        _current.reset(reset)


def _carried(command: tuple, options: dict | None) -> bool:
    return len(command) >= 2 and str(command[0]).upper() in CARRIED and set(options or ()) <= {"keys"}


def _parsed(client: aioredis.Redis, command: tuple, options: dict | None, reply: Any) -> Any:
    """``reply`` as redis-py hands back the command's own.

    A script's reply comes in RESP2's shapes whatever the connection speaks: a hash is a flat list of
    fields and values, which is made a dict here (redis-py's own callback for it depends on the protocol
    the client asked for: a dict maker, or nothing on RESP3, where Redis sends a map); the other carried
    commands keep their client's callback.
    """
    name = str(command[0]).upper()
    if name == "HGETALL":
        return dict(zip(reply[::2], reply[1::2]))
    callback = client.response_callbacks.get(name)
    if callback is None:
        return reply
    return callback(reply, **{k: v for k, v in (options or {}).items() if k != "keys"})


async def _evalsha(client: aioredis.Redis, script: str, keys: list, args: list) -> Any:
    """EVALSHA ``script``, loading it when Redis does not know it (a new or restarted server)."""
    command = ("EVALSHA", _SHA[script], len(keys), *keys, *args)
    try:
        return await aioredis.Redis.execute_command(client, *command)
    except NoScriptError:
        await aioredis.Redis.execute_command(client, "SCRIPT", "LOAD", script)
        return await aioredis.Redis.execute_command(client, *command)


_SHA = {script: hashlib.sha1(script.encode()).hexdigest() for script in (COUNT_SCRIPT, COUNT_AND_READ)}


class CountingRedis(aioredis.Redis):
    """redis-py's asyncio client whose first command in an armed request settles the request's count."""

    async def execute_command(self, *args, **options):
        count = _pending()
        if count is None:
            return await super().execute_command(*args, **options)
        return await count.settle(self, args, options)

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> "CountingPipeline":
        pipe = CountingPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)
        pipe.counted_by = self
        return pipe


class CountingPipeline(Pipeline):
    """A pipeline that waits for its request's count before it runs (it may write), and before the commands
    it sends at once while it watches keys (``WATCH``, then reads, before ``MULTI``)."""

    counted_by: CountingRedis

    async def _counted(self) -> None:
        count = _pending()
        if count is not None:
            await count.settle(self.counted_by)

    async def execute(self, raise_on_error: bool = True):
        await self._counted()
        return await super().execute(raise_on_error)

    async def immediate_execute_command(self, *args, **options):
        await self._counted()
        return await super().immediate_execute_command(*args, **options)
