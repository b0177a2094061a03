"""Rate limits per seat token and per client address, kept in Redis so they
hold across every service process.

A fixed one-second window per caller: ``INCR`` of ``<prefix>:rl:<who>:<second>``
(which expires with its window). Past the limit a request gets ``429`` with
``Retry-After``. A request with a bearer token counts against that token
(its hash) and against its address; one without, against its address only.
Health checks, metrics and the docs are not limited. A limit of 0 turns it off.

The count costs no round trip of its own on a single Redis: it rides on the request's first
command, in one script with it when that command only reads (the match record's ``HGETALL``
on the action path), else just before it, and before the response starts when the request
sends none (service/store/counting.py). Nothing is written for a request the count refuses.
A Redis Cluster spreads the counters and the match over slots no script may span, so there
the count is one pipeline of its own, sent before the request runs.
"""

from __future__ import annotations

import time

from redis.exceptions import RedisError

from service.rest.problems import problem
from service.store.connect import STORE_UNAVAILABLE
from service.store.counting import COUNTER_TTL, CountingRedis, RateLimited, RequestCount, armed
from service.store.tokens import bearer_token, hash_token

UNLIMITED_PATHS = ("/healthz", "/readyz", "/metrics", "/docs", "/openapi.yaml")


class RateLimit:
    """ASGI middleware; the store (and its Redis) is read from the app state at request time."""

    def __init__(self, app, *, per_token: int, per_address: int):
        self.app = app
        self.per_token = per_token
        self.per_address = per_address

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"].startswith(UNLIMITED_PATHS) or \
                not (self.per_token or self.per_address):
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers", ()))
        token = bearer_token((headers.get(b"authorization") or b"").decode("latin-1"))
        address = (scope.get("client") or ("unknown", 0))[0]
        store = scope["app"].state.store
        second = int(time.time())
        checks = []
        if self.per_address:
            checks.append((f"{store.prefix}:rl:a:{address}:{second}", self.per_address, "address"))
        if token and self.per_token:
            checks.append((f"{store.prefix}:rl:t:{hash_token(token)[:32]}:{second}", self.per_token, "token"))
        count = RequestCount(checks)
        if not isinstance(store.redis, CountingRedis):  # a cluster: counted first, on its own
            await self._count_alone(count, store.redis)
            if count.refusal is not None:
                return await self._refuse(count.refusal, scope, receive, send)
            return await self.app(scope, receive, send)
        started = False

        async def send_counted(message):
            nonlocal started
            if message["type"] == "http.response.start":
                if not count.settled:  # the request sent Redis no command: count it before it answers
                    await self._count_alone(count, store.redis)
                if count.refusal is not None:
                    raise count.refusal
                started = True
            await send(message)

        try:
            with armed(count):
                await self.app(scope, receive, send_counted)
        except Exception:
            if not count.settled:  # failed before it sent Redis anything or answered: still a request
                await self._count_alone(count, store.redis)
            if count.refusal is None or started:
                raise
            # refused by the count: whatever the handler made of it (a GraphQL error, say), the answer is 429
            await self._refuse(count.refusal, scope, receive, send)

    @staticmethod
    async def _count_alone(count: RequestCount, client) -> None:
        try:
            if isinstance(client, CountingRedis):
                await count.settle(client)
            else:
                async with client.pipeline(transaction=False) as pipe:
                    for key, _, _ in count.checks:
                        pipe.incr(key)
                        pipe.expire(key, COUNTER_TTL)
                    count.judge((await pipe.execute())[::2])
        except RateLimited:
            pass  # count.refusal says so
        except (RedisError, *STORE_UNAVAILABLE):  # a cluster client's "cannot connect" is no RedisError
            pass  # Redis down: the request itself will say so with a 503

    @staticmethod
    async def _refuse(refusal: RateLimited, scope, receive, send):
        response = problem("rate_limited", str(refusal), headers={"Retry-After": "1"})
        await response(scope, receive, send)


#: Requests that hold a connection open: the live streams (the GraphQL websocket is counted by its scope type).
STREAM_PATHS = ("/v1/turns",)
STREAM_SUFFIX = "/events"


class ConnectionLimit:
    """ASGI middleware: at most ``per_address`` open long-lived connections (GraphQL
    websockets and live streams) per client address, in this process.

    The rate limit counts requests, not how long they stay; a live connection
    costs memory for as long as it is open, so anonymous spectators are capped
    here (seat tokens also have their own stream cap, ``max_streams_per_token``).
    A websocket over the limit is closed before it is accepted (code 1008, policy
    violation); a stream gets ``429 too_many_streams``. 0 turns it off.
    """

    def __init__(self, app, *, per_address: int):
        self.app = app
        self.per_address = per_address
        self.open: dict[str, int] = {}

    def _long_lived(self, scope) -> bool:
        if scope["type"] == "websocket":
            return True
        path = scope["path"] if scope["type"] == "http" else ""
        return path in STREAM_PATHS or (path.startswith("/v1/matches/") and path.endswith(STREAM_SUFFIX))

    async def __call__(self, scope, receive, send):
        if not self.per_address or not self._long_lived(scope):
            return await self.app(scope, receive, send)
        address = (scope.get("client") or ("unknown", 0))[0]
        if self.open.get(address, 0) >= self.per_address:
            if scope["type"] == "websocket":
                return await send({"type": "websocket.close", "code": 1008,
                                   "reason": f"more than {self.per_address} open connections from this address"})
            response = problem("too_many_streams", f"More than {self.per_address} open streams and websockets "
                                                   "from this address.", headers={"Retry-After": "5"})
            return await response(scope, receive, send)
        self.open[address] = self.open.get(address, 0) + 1
        try:
            return await self.app(scope, receive, send)
        finally:
            self.open[address] -= 1
            if not self.open[address]:
                del self.open[address]
