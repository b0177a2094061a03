"""The rate limit's count carried on a request's first Redis command (service/store/counting.py, issue 18).

The limits themselves (429s, windows, tokens, addresses, processes) are tested in test_limits.py; here,
that the count costs no round trip of its own, and that carrying it changes nothing else: every carried
read hands back what the command alone would, nothing is written for a refused request, and a request
is counted once whatever it sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
import time
import types
import uuid

import pytest
import redis
from redis.client import NEVER_DECODE
from redis.exceptions import ResponseError
from starlette.testclient import TestClient

from service.app import create_app
from service.store.connect import match_redis
from service.store.counting import CARRIED, CountingRedis, RateLimited, RequestCount, armed
from tests.hardening.test_limits import one_window  # noqa: F401 (a fixture)


@pytest.fixture
def keys(key_prefix):
    """A namespace of this test's own, and two counters in it."""
    base = f"{key_prefix}:count-{uuid.uuid4().hex[:8]}"
    return {"base": base, "counter": f"{base}:rl:a", "token_counter": f"{base}:rl:t"}


def _client(redis_url) -> CountingRedis:
    client = match_redis(redis_url)
    assert isinstance(client, CountingRedis)
    return client


async def _seed(client, base: str) -> None:
    await client.hset(f"{base}:h", mapping={"version": "3", "state": "{}"})
    await client.set(f"{base}:s", "value")
    await client.xadd(f"{base}:log", {"seat": "0"}, id="1-0")
    await client.xadd(f"{base}:log", {"seat": "1"}, id="2-0")


#: Each carried command, once on a key that exists and once on one that does not.
CARRIED_CALLS = [
    ("HGETALL", "h"), ("HGETALL", "missing"),
    ("HGET", "h", "version"), ("HGET", "h", "absent"), ("HGET", "missing", "version"),
    ("HMGET", "h", "version", "absent", "state"), ("HMGET", "missing", "version"),
    ("GET", "s"), ("GET", "missing"),
    ("EXISTS", "h"), ("EXISTS", "missing"),
    ("XRANGE", "log", "-", "+"), ("XRANGE", "log", "(1-0", "+", "COUNT", "1"), ("XRANGE", "missing", "-", "+"),
    ("XREVRANGE", "log", "+", "-"), ("XREVRANGE", "missing", "+", "-"),
]


def test_every_carried_command_is_among_the_calls_checked():
    assert {call[0] for call in CARRIED_CALLS} == CARRIED


@pytest.mark.parametrize("protocol", ["", "?protocol=2", "?protocol=3"], ids=["default", "resp2", "resp3"])
@pytest.mark.parametrize("call", CARRIED_CALLS, ids=lambda call: " ".join(call))
def test_a_carried_read_hands_back_what_the_command_alone_does(redis_url, keys, call, protocol):
    """Carrying the count in a script must not change a reply's shape (Lua answers in RESP2's: a hash
    as a flat list), for a present key and an absent one, whichever protocol the client asked for."""
    async def scenario():
        client = _client(redis_url + protocol)
        try:
            await _seed(client, keys["base"])
            name, key, *rest = call
            command = (name, f"{keys['base']}:{key}", *rest)
            alone = await client.execute_command(*command, keys=[command[1]])
            with armed(RequestCount([(keys["counter"], 10, "address")])):
                carried = await client.execute_command(*command, keys=[command[1]])
            return alone, carried, await client.get(keys["counter"])
        finally:
            await client.aclose()

    alone, carried, counted = asyncio.run(scenario())
    assert carried == alone and type(carried) is type(alone)
    assert counted == "1"


def test_the_store_methods_read_the_same_through_a_carried_count(redis_url, keys):
    """The helpers redis-py builds on the commands (``hgetall``, ``hmget``, ``xrange``) as the store calls them."""
    async def scenario():
        client = _client(redis_url)
        try:
            await _seed(client, keys["base"])
            h, log = f"{keys['base']}:h", f"{keys['base']}:log"
            reads = [lambda: client.hgetall(h), lambda: client.hmget(h, "version", "absent"),
                     lambda: client.xrange(log, "(1-0", "+", count=5), lambda: client.exists(h)]
            outcomes = []
            for read in reads:
                alone = await read()
                with armed(RequestCount([(keys["counter"], 10, "address")])):
                    outcomes.append((alone, await read()))
            return outcomes
        finally:
            await client.aclose()

    for alone, carried in asyncio.run(scenario()):
        assert carried == alone


def test_a_refused_count_hands_back_nothing_and_refuses_every_later_command(redis_url, keys):
    async def scenario():
        client = _client(redis_url)
        try:
            await _seed(client, keys["base"])
            await client.set(keys["counter"], 5)  # the window already holds 5 requests: this one is the 6th
            count = RequestCount([(keys["counter"], 5, "address")])
            with armed(count):
                with pytest.raises(RateLimited) as refused:
                    await client.hgetall(f"{keys['base']}:h")
                with pytest.raises(RateLimited):
                    await client.set(f"{keys['base']}:written", "1")
                with pytest.raises(RateLimited):
                    async with client.pipeline(transaction=True) as pipe:
                        pipe.set(f"{keys['base']}:written", "1")
                        await pipe.execute()
            return refused.value, count, await client.exists(f"{keys['base']}:written"), \
                await client.get(keys["counter"])
        finally:
            await client.aclose()

    refusal, count, written, counted = asyncio.run(scenario())
    assert (refusal.kind, refusal.limit, str(refusal)) == ("address", 5, "More than 5 requests a second from this address.")
    assert count.refusal is refusal and count.settled
    assert written == 0
    assert counted == "6"  # counted once, by the first command only


def test_a_write_first_waits_for_the_count_and_is_never_sent_when_refused(redis_url, keys):
    """A command that is not a carried read (here SET, then a script) goes after the count, on its own."""
    async def scenario():
        client = _client(redis_url)
        try:
            outcomes = []
            for limit in (0, 1):
                count = RequestCount([(f"{keys['counter']}:{limit}", limit, "token")])
                with armed(count):
                    try:
                        outcomes.append(await client.set(f"{keys['base']}:w{limit}", "1"))
                    except RateLimited as refusal:
                        outcomes.append(refusal.kind)
                    outcomes.append(await client.exists(f"{keys['base']}:w{limit}") if count.refusal is None
                                    else None)
            return outcomes, await client.exists(f"{keys['base']}:w0")
        finally:
            await client.aclose()

    outcomes, refused_written = asyncio.run(scenario())
    assert outcomes == ["token", None, True, 1]
    assert refused_written == 0


def test_commands_sent_together_are_counted_once(redis_url, keys):
    """Two commands of one request in flight at once (GraphQL resolves root fields concurrently): one count,
    and both get their own replies."""
    async def scenario():
        client = _client(redis_url)
        try:
            await _seed(client, keys["base"])
            with armed(RequestCount([(keys["counter"], 10, "address"), (keys["token_counter"], 10, "token")])):
                replies = await asyncio.gather(client.hget(f"{keys['base']}:h", "version"),
                                               client.get(f"{keys['base']}:s"),
                                               client.set(f"{keys['base']}:t", "x"))
            return replies, await client.mget(keys["counter"], keys["token_counter"])
        finally:
            await client.aclose()

    replies, counted = asyncio.run(scenario())
    assert replies == ["3", "value", True]
    assert counted == ["1", "1"]


def test_a_pipeline_runs_after_its_request_is_counted(redis_url, keys):
    async def scenario():
        client = _client(redis_url)
        try:
            with armed(RequestCount([(keys["counter"], 10, "address")])):
                async with client.pipeline(transaction=False) as pipe:
                    pipe.get(keys["counter"])
                    pipe.set(f"{keys['base']}:p", "1")
                    return await pipe.execute()
        finally:
            await client.aclose()

    assert asyncio.run(scenario()) == ["1", True]  # the count came first: the pipeline already reads it


def test_a_watching_pipeline_waits_for_the_count(redis_url, keys):
    """A pipeline that watches keys sends WATCH (and whatever comes before MULTI) at once, before ``execute``:
    that waits for the count too, and a refused request sends nothing."""
    async def scenario():
        client = _client(redis_url)
        watched = f"{keys['base']}:watched"
        try:
            outcomes = []
            for already in (0, 10):
                await client.set(keys["counter"], already)
                await client.set(watched, "v0")
                with armed(RequestCount([(keys["counter"], 10, "address")])):
                    async with client.pipeline() as pipe:
                        step = "watch"
                        try:
                            await pipe.watch(watched)
                            step = "read"
                            before = await pipe.execute_command("GET", watched, **{NEVER_DECODE: []})
                            pipe.multi()
                            pipe.set(watched, f"after {before}")
                            step = "execute"
                            await pipe.execute()
                            outcomes.append(await client.get(watched))
                        except RateLimited as refusal:
                            outcomes.append((refusal.kind, step))
                await client.delete(watched)
            return outcomes, await client.get(keys["counter"])
        finally:
            await client.aclose()

    outcomes, counted = asyncio.run(scenario())
    assert outcomes == ["after b'v0'", ("address", "watch")]  # refused before anything was sent
    assert counted == "11"


def test_a_carried_read_loads_its_script_on_a_redis_that_forgot_it(own_redis):
    """A restarted Redis (or SCRIPT FLUSH) no longer knows the script: the read still carries the count."""
    async def scenario():
        client = _client(own_redis.url)
        try:
            await client.set("s", "value")
            with armed(RequestCount([("c", 10, "address")])):
                first = await client.get("s")
            await client.script_flush()
            with armed(RequestCount([("c", 10, "address")])):
                second = await client.get("s")
            return first, second, await client.get("c")
        finally:
            await client.aclose()

    assert asyncio.run(scenario()) == ("value", "value", "2")


def test_outside_a_request_the_client_counts_nothing(redis_url, keys):
    async def scenario():
        client = _client(redis_url)
        try:
            await client.set(f"{keys['base']}:s", "v")
            return await client.get(f"{keys['base']}:s"), await client.exists(keys["counter"])
        finally:
            await client.aclose()

    assert asyncio.run(scenario()) == ("v", 0)


def test_a_read_s_own_error_comes_after_its_count_is_judged(redis_url, keys):
    """A carried read of a key of another type raises what the command alone raises, once the count is
    known: refused first when the count refuses, and counted either way."""
    async def scenario():
        client = _client(redis_url)
        try:
            await client.set(f"{keys['base']}:s", "a string")
            with pytest.raises(ResponseError) as alone:
                await client.hgetall(f"{keys['base']}:s")
            outcomes = []
            for limit in (10, 0):
                count = RequestCount([(f"{keys['counter']}:{limit}", limit, "address")])
                with armed(count):
                    try:
                        await client.hgetall(f"{keys['base']}:s")
                    except (ResponseError, RateLimited) as error:
                        outcomes.append((type(error).__name__, str(error)))
                    outcomes.append(await client.set(f"{keys['base']}:after{limit}", "1") if count.refusal is None
                                    else count.settled)
            return str(alone.value), outcomes, await client.mget(f"{keys['counter']}:10", f"{keys['counter']}:0")
        finally:
            await client.aclose()

    alone, outcomes, counted = asyncio.run(scenario())
    assert outcomes == [("ResponseError", alone), True,
                        ("RateLimited", "More than 0 requests a second from this address."), True]
    assert counted == ["1", "1"]


@contextlib.asynccontextmanager
async def a_full_window_and_redis_paused(url: str):
    """A client and a request's count (limit 1) whose window already holds one request, with Redis answering
    no one for the next 0.3 s."""
    client, pauser = _client(url), _client(url)
    try:
        await client.set("c", 1)
        await pauser.execute_command("CLIENT", "PAUSE", 300)
        yield client, RequestCount([("c", 1, "token")])
    finally:
        await client.aclose()
        await pauser.aclose()


def test_a_cancelled_count_is_sent_again_by_the_next_command(own_redis):
    """A timeout around the request's first read (live streams have one) cancels the count on its way: not
    known to have happened, so the next command counts again, and is refused past the limit."""
    async def scenario():
        async with a_full_window_and_redis_paused(own_redis.url) as (client, count):
            with armed(count):
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(client.get("s"), 0.05)
                settled_after_cancel = count.settled
                with pytest.raises(RateLimited):
                    await client.set("written", "1")  # counted again, and past the limit
            return settled_after_cancel, int(await client.get("c")), await client.exists("written")

    settled_after_cancel, counted, written = asyncio.run(scenario())
    assert settled_after_cancel is False
    assert counted >= 2 and written == 0  # 3 if Redis ran the cancelled count too


def test_a_redis_refusing_writes_still_serves_a_carried_read_uncounted(own_redis):
    """Out of memory (or a read-only replica), Redis refuses the counters' INCR, and with it the script: the
    request goes on uncounted (as the limiter always let a count Redis fails), its read sent alone and
    served; a write then gets Redis's own refusal, not the limiter's."""
    async def scenario():
        client = _client(own_redis.url)
        try:
            await client.hset("h", mapping={"version": "1"})
            await client.config_set("maxmemory-policy", "noeviction")
            await client.config_set("maxmemory", 1)
            try:
                count = RequestCount([("c", 10, "address")])
                with armed(count):
                    read = await client.hgetall("h")
                write_count = RequestCount([("c", 10, "address")])
                with armed(write_count):
                    with pytest.raises(ResponseError) as refused_write:
                        await client.set("w", "1")
            finally:
                await client.config_set("maxmemory", 0)
            return read, count.settled, count.refusal, str(refused_write.value), await client.exists("c")
        finally:
            await client.aclose()

    read, settled, refusal, write_error, counted = asyncio.run(scenario())
    assert (read, settled, refusal, counted) == ({"version": "1"}, True, None, 0)
    assert write_error == "command not allowed when used memory > 'maxmemory'."  # redis-py's OutOfMemoryError


def test_a_request_that_fails_before_any_command_is_counted(redis_url, keys):
    """An unhandled error before the request sent Redis anything or answered: still one request of the
    window (the old limiter counted before the request ran); past the limit, the answer is the 429."""
    from service.limits import RateLimit

    async def failing(scope, receive, send):
        raise RuntimeError("a bug")

    async def scenario(already: int):
        client = _client(redis_url)
        sent = []

        async def send(message):
            sent.append(message)

        store = types.SimpleNamespace(prefix=keys["base"], redis=client)
        scope = {"type": "http", "path": "/v1/games", "client": (f"10.9.9.{already}", 1000), "headers": [],
                 "app": types.SimpleNamespace(state=types.SimpleNamespace(store=store))}
        counter = f"{keys['base']}:rl:a:10.9.9.{already}:{int(time.time())}"
        try:
            await client.set(counter, already, ex=2)
            try:
                await RateLimit(failing, per_token=0, per_address=5)(scope, None, send)
            except RuntimeError:
                sent.append("raised")
            return sent, await client.get(counter)
        finally:
            await client.aclose()

    assert asyncio.run(scenario(0)) == (["raised"], "1")
    sent, counted = asyncio.run(scenario(5))  # the window is full: the 429 goes out instead of the error
    assert [m["status"] for m in sent if m["type"] == "http.response.start"] == [429] and counted == "6"


def test_a_read_asked_for_raw_bytes_keeps_them_in_and_out_of_a_request(redis_url, keys):
    """A command with options beyond ``keys`` (the archive's raw read: ``NEVER_DECODE``) is never carried in
    the count's script, and keeps its options whether it is a request's first command, a later one, or
    outside any request."""
    async def scenario():
        client = _client(redis_url)
        raw = f"{keys['base']}:raw"
        try:
            await client.set(raw, b"\x00bytes")
            outside = await client.execute_command("GET", raw, **{NEVER_DECODE: []})
            with armed(RequestCount([(keys["counter"], 10, "address")])):
                first = await client.execute_command("GET", raw, **{NEVER_DECODE: []})
                later = await client.execute_command("GET", raw, **{NEVER_DECODE: []})
            return outside, first, later, await client.get(keys["counter"])
        finally:
            await client.aclose()

    assert asyncio.run(scenario()) == (b"\x00bytes", b"\x00bytes", b"\x00bytes", "1")


def test_the_client_s_pipelines_are_redis_py_s(redis_url, keys):
    """A transaction unless asked otherwise, the shard hint kept, and a failed command raised by default
    (returned as a value when asked), in a request and out of one."""
    async def scenario():
        client = _client(redis_url)
        text = f"{keys['base']}:text"
        try:
            await client.set(text, "not a number")
            shapes = [(p.is_transaction, p.shard_hint) for p in (client.pipeline(), client.pipeline(False, "hint"))]
            outcomes = []
            for count in (None, RequestCount([(keys["counter"], 10, "address")])):
                with armed(count) if count else contextlib.nullcontext():
                    async with client.pipeline() as pipe:
                        pipe.incr(text)
                        with pytest.raises(ResponseError):
                            await pipe.execute()
                    async with client.pipeline() as pipe:
                        pipe.incr(text)
                        [error] = await pipe.execute(raise_on_error=False)
                        outcomes.append(type(error).__name__)
            return shapes, outcomes
        finally:
            await client.aclose()

    shapes, outcomes = asyncio.run(scenario())
    assert shapes == [(True, None), (False, "hint")]
    assert outcomes == ["ResponseError", "ResponseError"]


def test_a_command_waiting_on_a_cancelled_count_counts_itself(own_redis):
    """Two commands of one request: the first's count is cancelled on its way while the second waits for it;
    the second then counts (the cancelled one may never have reached Redis) and is refused past the limit."""
    async def scenario():
        async with a_full_window_and_redis_paused(own_redis.url) as (client, count):
            with armed(count):
                first = asyncio.create_task(client.get("s"))
                await asyncio.sleep(0.02)  # the first is counting, Redis paused
                second = asyncio.create_task(client.set("written", "1"))
                await asyncio.sleep(0.02)  # the second waits for the first's count
                first.cancel()
                with pytest.raises(RateLimited):
                    await second
            return int(await client.get("c")), await client.exists("written")

    counted, written = asyncio.run(scenario())
    assert counted >= 2 and written == 0


# -- through the app: what Redis sees -------------------------------------------------------------------


class Monitor:
    """The commands Redis runs while the block is open (MONITOR on a connection of its own), with who sent
    each: ``tcp`` for a client's, ``lua`` for a script's own calls."""

    def __init__(self, redis_url: str):
        self.client = redis.Redis.from_url(redis_url, decode_responses=True)
        self.marker = uuid.uuid4().hex
        self.seen: list[tuple[str, str]] = []
        self._ready = threading.Event()

    def _listen(self):
        with self.client.monitor() as monitor:
            self._ready.set()
            for entry in monitor.listen():
                if f"stop-{self.marker}" in entry["command"]:
                    return
                self.seen.append((entry["client_type"], entry["command"]))

    def __enter__(self):
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()
        self._ready.wait(5)
        return self

    def __exit__(self, *exc):
        self.client.echo(f"stop-{self.marker}")
        self._thread.join(5)
        self.client.close()

    def of(self, text: str) -> list[tuple[str, str]]:
        return [(who, command.split()[0].upper()) for who, command in self.seen if text in command]


def _monitored(settings) -> str:
    """A key prefix of the test's own app alone: what other apps and workers of this run send (a quick-match
    sweep under the run's prefix, say, or a service on a sub-prefix of it) is not in what the test reads."""
    return f"{settings.key_prefix}:monitored-{uuid.uuid4().hex[:8]}"


def test_a_read_of_a_match_is_one_round_trip_with_its_count(settings, games, redis_url):
    """The action path's read: Redis receives one script from the service, which counts and reads; the
    match's HGETALL is the script's own call, not a second command from the service."""
    limited = dataclasses.replace(settings, key_prefix=_monitored(settings), rate_limit_per_address=1000,
                                  rate_limit_per_token=1000)
    with TestClient(create_app(limited, games=games)) as client:
        match_id = client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
        token = client.post(f"/v1/matches/{match_id}/seats", json={"name": "Ann"}).json()["token"]
        with Monitor(redis_url) as seen:
            assert client.get(f"/v1/matches/{match_id}", headers={"Authorization": f"Bearer {token}"}
                              ).status_code == 200
    by_service = [command for who, command in seen.of(limited.key_prefix) if who != "lua"]
    by_script = [command for who, command in seen.of(limited.key_prefix) if who == "lua"]
    assert by_service == ["EVALSHA"]
    # the address's and the token's counters (each given its expiry when its window starts), then the match
    assert [c for c in by_script if c != "EXPIRE"] == ["INCR", "INCR", "HGETALL"]


def test_a_request_that_writes_first_is_counted_before_it_writes(settings, games, redis_url):
    limited = dataclasses.replace(settings, key_prefix=_monitored(settings), rate_limit_per_address=1000)
    with TestClient(create_app(limited, games=games)) as client:
        with Monitor(redis_url) as seen:
            assert client.post("/v1/matches", json={"game": "high-card"}).status_code == 201
    commands = [(who, command) for who, command in seen.of(limited.key_prefix)
                if command != "EXPIRE"]  # a counter gets its expiry only when its window starts
    assert commands[:2] == [("tcp", "EVALSHA"), ("lua", "INCR")]
    assert ("lua", "HGETALL") not in commands  # a create carries no read
    assert any(who == "tcp" and command in ("MULTI", "HSET", "EXEC") for who, command in commands[2:])


def test_a_refused_submission_writes_nothing_on_either_api(settings, games, one_window):
    """The count refuses on the submission's first command (its read): no action is applied, over REST
    or GraphQL, and GraphQL answers 429 too, not a 200 carrying an error."""
    with TestClient(create_app(settings, games=games)) as setup:
        match_id = setup.post("/v1/matches", json={"game": "high-card"}).json()["id"]
        tokens = [setup.post(f"/v1/matches/{match_id}/seats", json={"name": name}).json()["token"]
                  for name in ("Ann", "Bo")]
        before = setup.get(f"/v1/matches/{match_id}", headers={"Authorization": f"Bearer {tokens[0]}"}).json()
    card = before["view"]["hand"][0]
    headers = {"Authorization": f"Bearer {tokens[0]}"}
    with TestClient(create_app(dataclasses.replace(settings, rate_limit_per_token=1), games=games)) as client:
        assert client.get(f"/v1/matches/{match_id}", headers=headers).status_code == 200  # the window's one
        rest = client.post(f"/v1/matches/{match_id}/actions", headers={**headers, "If-Match": f'"{before["version"]}"'},
                           json={"action": {"type": "play", "card": card}})
        graphql = client.post("/graphql", headers=headers, json={
            "query": "mutation($input: SubmitActionInput!) { submitAction(input: $input) { __typename } }",
            "variables": {"input": {"matchId": match_id, "expectedVersion": before["version"],
                                    "action": {"highCard": {"type": "PLAY", "card": card}}}}})
        after = client.get(f"/v1/matches/{match_id}").json()  # no token: the address has no limit here
    assert (rest.status_code, rest.json()["code"]) == (429, "rate_limited")
    assert (graphql.status_code, graphql.json()["code"]) == (429, "rate_limited")
    assert after["version"] == before["version"]
