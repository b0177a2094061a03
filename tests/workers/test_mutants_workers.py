"""The workers where the mutation run (tests/mutation/run.py) found them untested: re-enqueueing the bot
moves a failover lost, the players' bookkeeping job, the embedded worker of ``grimoire serve``.

Real Redis, real RQ queues and workers; each test names the faults it stands against."""

from __future__ import annotations

import contextlib
import time

from rq import Queue
from rq.job import Job

from workers import runtime
from workers.dispatch import bot_job_id, queue_names


def create(client, game: str, **body) -> dict:
    response = client.post("/v1/matches", json={"game": game, **body})
    assert response.status_code == 201, response.text
    return response.json()


def queued_bot_jobs(rq_connection, key_prefix: str, match_id: str) -> list[str]:
    return sorted(i for i in Queue(queue_names(key_prefix)["bots"], connection=rq_connection).job_ids
                  if match_id in i)


def test_moves_a_failover_lost_are_enqueued_again_as_new_attempts(client, drain, worker_runtime, rq_connection,
                                                                 key_prefix, games):
    """enqueue_lost: every bot seat the match waits on gets a new attempt (a job id of its own, counted in the
    attempts), none for a human seat, and it says how many. Against a wrong count, a stop after the first
    seat, the attempts not counted (or counted by two), and the attempt number not passed on."""
    import asyncio

    match = create(client, "high-card", seed=4, bots=[{"seat": 0, "level": "random"}, {"seat": 1, "level": "random"}])
    match_id = match["id"]
    dispatcher = worker_runtime.dispatcher(rq_connection)
    first = [bot_job_id(key_prefix, match_id, 0, seat) for seat in (0, 1)]
    assert queued_bot_jobs(rq_connection, key_prefix, match_id) == first  # the listener's own jobs

    async def read():
        async with worker_runtime.store() as store:
            return await store.get(match_id)

    stored = asyncio.run(read())
    assert dispatcher.enqueue_lost(stored) == 2
    assert dispatcher.enqueue_lost(stored) == 2
    every = sorted(bot_job_id(key_prefix, match_id, 0, seat, attempt) for seat in (0, 1) for attempt in (0, 1, 2))
    assert queued_bot_jobs(rq_connection, key_prefix, match_id) == every
    attempts = {k.decode(): int(v) for k, v in rq_connection.hgetall(dispatcher.attempts_key).items()
                if match_id in k.decode()}
    assert attempts == {f"{match_id}|0|0": 2, f"{match_id}|0|1": 2}
    drain()
    outcomes = [Job.fetch(i, connection=rq_connection).return_value()["outcome"] for i in every]
    assert outcomes.count("played") == 1  # version 0 is played once, whatever the attempts (then it is v1's turn)

    human = create(client, "high-card", seed=4, bots=[{"seat": 1, "level": "random"}])
    client.post(f"/v1/matches/{human['id']}/seats", json={"name": "Ann"})  # both seats to act: one is a bot

    async def read_human():
        async with worker_runtime.store() as store:
            return await store.get(human["id"])

    assert dispatcher.enqueue_lost(asyncio.run(read_human())) == 1
    drain()


def test_an_embedded_worker_plays_and_stops_when_told(client, redis_url, settings, rq_connection, key_prefix):
    """``grimoire serve`` without REDIS_URL runs spawn_embedded_worker on its embedded Redis: a worker on the
    service's queues (its key prefix, its Redis as the queue's unless told otherwise), stopped with SIGTERM."""
    import dataclasses

    match = create(client, "casting-stones", seed=2, bots=[{"seat": 0, "level": "random"},
                                                      {"seat": 1, "level": "random"}])
    process = runtime.spawn_embedded_worker(redis_url, dataclasses.replace(settings, queue_redis_url=""))
    try:
        deadline = time.monotonic() + 120
        while client.get(f"/v1/matches/{match['id']}").json()["status"] != "finished":
            assert process.poll() is None, "the embedded worker exited"
            assert time.monotonic() < deadline, "the embedded worker did not play the bots"
            time.sleep(0.2)
    finally:
        started = time.monotonic()
        runtime.stop_embedded_worker(process)
    assert process.returncode is not None and time.monotonic() - started < 15
    runtime.stop_embedded_worker(process)  # stopped already: nothing to do


def test_the_watchdog_sweep_retries_lost_moves_only(worker_runtime, rq_connection, key_prefix, caplog):
    """Dispatcher.sweep, in this process, on queues of its own. A note younger than the watchdog period is
    left alone; an old one is dropped when its match is gone, has moved on, or no longer waits on that bot;
    it is only re-scored while its job still waits in the queue; a lost job is enqueued again as the next
    attempt (counted), and after MAX_ATTEMPTS the move is given up, out loud. One sweep per half period: a
    lock that expires. Against each of those checks dropped or turned around."""
    import asyncio
    import logging

    from service.store.bots import create_match
    from workers.dispatch import MAX_ATTEMPTS, Dispatcher

    prefix = f"{key_prefix}-sweep-{time.monotonic_ns()}"
    dispatcher = Dispatcher(rq_connection, prefix, watchdog_seconds=1)

    def notes() -> dict[str, float]:
        return {k.decode(): s for k, s in rq_connection.zrange(dispatcher.pending_key, 0, -1, withscores=True)}

    def age(*members: str) -> None:
        rq_connection.zadd(dispatcher.pending_key, {m: time.time() - 5 for m in members})

    async def scenario():
        async with worker_runtime.store() as store:  # no listener: this test enqueues by hand
            bots = await create_match(store, "high-card", seed=3, bots=[{"seat": 0, "level": "random"},
                                                                       {"seat": 1, "level": "random"}])
            human = await create_match(store, "high-card", seed=3, bots=[{"seat": 1, "level": "random"}])
            await store.join(human.id, "Ann")

            async def sweep() -> int:
                await asyncio.sleep(0.6)  # past the lock of the last sweep (half the watchdog period)
                return await dispatcher.sweep(store)

            waiting, lost = f"{bots.id}|0|0", f"{bots.id}|0|1"
            assert dispatcher.enqueue_bot(bots.id, 0, 0) and dispatcher.enqueue_bot(bots.id, 0, 1)
            assert await sweep() == 0 and set(notes()) == {waiting, lost}  # young notes: nothing to do

            assert await dispatcher.sweep(store) == 0  # at once: another sweep holds the lock
            lock_ms = rq_connection.pttl(f"{prefix}:bots:sweep-lock")
            assert 300 < lock_ms <= 500  # half the watchdog period, and it expires

            Job.fetch(bot_job_id(prefix, bots.id, 0, 1), connection=rq_connection).delete()  # lost with a worker
            age(waiting, lost)
            assert await sweep() == 1
            assert notes()[waiting] > time.time() - 3  # still queued: re-scored, not retried
            assert Job.fetch(bot_job_id(prefix, bots.id, 0, 1, 1), connection=rq_connection).args == (bots.id, 0, 1)
            assert int(rq_connection.hget(dispatcher.attempts_key, lost)) == 1

            moved, gone, not_a_bot = f"{bots.id}|7|0", "no-such-match|0|0", f"{human.id}|0|0"
            for member in (moved, gone, not_a_bot):
                rq_connection.zadd(dispatcher.pending_key, {member: 0})
            Job.fetch(bot_job_id(prefix, bots.id, 0, 1, 1), connection=rq_connection).delete()
            rq_connection.hset(dispatcher.attempts_key, lost, MAX_ATTEMPTS - 2)
            age(lost)
            assert await sweep() == 1  # attempt MAX_ATTEMPTS - 1: still tried
            assert set(notes()) == {waiting, lost}  # the three that cannot be played are dropped
            Job.fetch(bot_job_id(prefix, bots.id, 0, 1, MAX_ATTEMPTS - 1), connection=rq_connection).delete()
            age(lost)
            with caplog.at_level(logging.ERROR, logger="grimoire.workers"):
                assert await sweep() == 0
            assert lost not in notes() and rq_connection.hget(dispatcher.attempts_key, lost) is None
            assert f"bot move {lost} failed {MAX_ATTEMPTS} times; giving up" in caplog.text

    asyncio.run(scenario())


def test_a_turn_timer_job_plays_only_a_late_seat_and_says_what_it_did(client, worker_runtime, rq_connection,
                                                                    key_prefix):
    """workers.jobs.turn_timeout, run as RQ runs it (in this process): a match gone, over, or not waiting on
    the seat is left alone (gone, stale); a seat that acted since the timer's version is not played for
    (acted); a late seat gets its default, recorded. Against those checks dropped or turned around and the
    outcomes renamed (they are the job's result, kept by RQ)."""
    from workers import jobs

    assert jobs.turn_timeout("no-such-match", 0, 0) == {"outcome": "gone"}
    match = create(client, "high-card", seed=2)
    tokens = [client.post(f"/v1/matches/{match['id']}/seats", json={"name": n}).json()["token"] for n in "ab"]
    match_id = match["id"]
    auth = {"Authorization": f"Bearer {tokens[0]}"}
    legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth).json()["actions"]
    assert client.post(f"/v1/matches/{match_id}/actions", json={"action": legal[0]},
                       headers={**auth, "If-Match": '"0"'}).status_code == 200
    assert jobs.turn_timeout(match_id, 1, 0) == {"outcome": "stale"}  # seat 0 played: not waited on any more
    assert jobs.turn_timeout(match_id, 0, 0) == {"outcome": "stale"}
    played = jobs.turn_timeout(match_id, 0, 1)  # seat 1 has waited since version 0
    assert played == {"outcome": "played", "default": "random", "version": 2}
    history = client.get(f"/v1/matches/{match_id}/history").json()["entries"]
    assert history[-1]["seat"] == 1 and history[-1]["auto"]["reason"] == "turn_timeout"
    # version 2: both to act again; seat 0 acts, seat 1 is late again
    legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth).json()["actions"]
    client.post(f"/v1/matches/{match_id}/actions", json={"action": legal[0]}, headers={**auth, "If-Match": '"2"'})
    assert jobs.turn_timeout(match_id, 3, 1)["outcome"] == "played"  # seat 1 late again
    while (now := client.get(f"/v1/matches/{match_id}").json())["status"] == "active":
        seat = now["to_act"][0]
        assert jobs.turn_timeout(match_id, now["version"], seat)["outcome"] == "played"
    assert jobs.turn_timeout(match_id, now["version"], 0) == {"outcome": "stale"}  # over


def test_a_timer_of_a_seat_that_acted_and_is_waited_on_again_plays_nothing(client, worker_runtime):
    """A timer enqueued at version v for a seat that has acted since and is to act again (a later round):
    its default would be a second action for one lateness. It finds the seat's action after v: acted."""
    from workers import jobs

    match = create(client, "high-card", seed=5)
    tokens = [client.post(f"/v1/matches/{match['id']}/seats", json={"name": n}).json()["token"] for n in "ab"]
    match_id = match["id"]
    for seat, version in ((0, 0), (1, 1)):  # round 1: both acted; both to act again at version 2
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth).json()["actions"]
        client.post(f"/v1/matches/{match_id}/actions", json={"action": legal[0]},
                    headers={**auth, "If-Match": f'"{version}"'})
    assert jobs.turn_timeout(match_id, 0, 0) == {"outcome": "acted"}
    assert jobs.turn_timeout(match_id, 1, 1) == {"outcome": "acted"}
    assert client.get(f"/v1/matches/{match_id}").json()["version"] == 2  # nothing played


def test_a_turn_timer_is_scheduled_once_and_remembered(worker_runtime, rq_connection, key_prefix):
    """Against a second schedule of the same timer being accepted (unique), and its job not remembered for
    JOB_MEMORY (then a repeat would schedule it again)."""
    from workers.dispatch import JOB_MEMORY, Dispatcher, timer_job_id

    prefix = f"{key_prefix}-timers-{time.monotonic_ns()}"
    dispatcher = Dispatcher(rq_connection, prefix)
    assert dispatcher.schedule_timer("m-t", 3, 1, 600) is True
    assert dispatcher.schedule_timer("m-t", 3, 1, 600) is False
    job = Job.fetch(timer_job_id(prefix, "m-t", 3, 1), connection=rq_connection)
    assert (job.func_name, job.args, job.result_ttl, job.failure_ttl) == \
        ("workers.jobs.turn_timeout", ("m-t", 3, 1), JOB_MEMORY, JOB_MEMORY)
    assert job.get_status() == "scheduled"
    job.delete()


def test_a_late_seats_default_without_a_pass_is_a_random_legal_action():
    import random

    from workers.jobs import default_action

    legal = [{"type": "play", "card": c} for c in (1, 2, 3)]
    chosen = {default_action(legal, None, random.Random(seed))[0]["card"] for seed in range(30)}
    assert chosen == {1, 2, 3}
    assert default_action(legal, None, random.Random(1))[1] == "random"


# -- the second pass over the workers' survivors (issue 23) ---------------------------------------------------

def newer(game):
    """The same game at another rules version, as a newer release would ship it (a worker that lacks the
    match's version: tests/fairness/test_rules_versions.py)."""
    return type(type(game).__name__, (type(game),), {"rules_version": f"{game.rules_version}-next"})()


def own_prefix(key_prefix: str, tag: str) -> str:
    """A key prefix of one test's own, inside the session's (its RQ and store keys are deleted with it)."""
    return f"{key_prefix}-{tag}-{time.monotonic_ns()}"


def work(worker_runtime, rq_connection, key_prefix: str, games) -> None:
    """A real RQ worker in this process, its jobs run with ``games``, until the session's queues are empty."""
    from rq import SimpleWorker

    from service.logs import RequestIdJob
    from workers.dispatch import _safe

    runtime.configure(worker_runtime.settings, games)
    try:
        names = queue_names(key_prefix)
        SimpleWorker([names["bots"], names["timers"], names["replays"]], connection=rq_connection,
                     name=f"{_safe(key_prefix)}-own-{time.monotonic_ns()}",
                     job_class=RequestIdJob).work(burst=True, logging_level="WARNING")
    finally:
        runtime.configure(worker_runtime.settings, worker_runtime.games)


def scheduled(rq_connection, queue: str) -> dict[str, float]:
    """A queue's scheduled jobs: id -> when (unix seconds)."""
    from rq.registry import ScheduledJobRegistry

    registry = ScheduledJobRegistry(queue, connection=rq_connection)
    return {k.decode(): s for k, s in rq_connection.zrange(registry.key, 0, -1, withscores=True)}


def in_store(worker_runtime, body):
    """Run ``await body(store)`` on a store of the worker runtime without a listener."""
    import asyncio

    async def run():
        async with worker_runtime.store() as store:
            return await body(store)

    return asyncio.run(run())


def records(caplog, level: int, logger: str = "grimoire.workers") -> list[tuple[str, tuple]]:
    """(format, args) of the records of ``logger`` at ``level``: the text and each argument checked apart."""
    return [(r.msg, r.args) for r in caplog.records if r.name == logger and r.levelno == level]


def test_a_deferred_move_or_timer_is_enqueued_again_later_with_its_count(worker_runtime, rq_connection, key_prefix,
                                                                       caplog):
    """Dispatcher.defer, for a bot move and for a turn timer: the job enqueued again on its own queue, in
    RULES_RETRY_SECONDS, under ``<job id>-d<n+1>``, with the function and arguments it had, ``deferrals``
    n+1 in its meta, JOB_MEMORY as its result and failure lifetimes and a description that says why; after
    RULES_RETRIES deferrals it gives up (False), out loud, and enqueues nothing. Against any of those
    arguments dropped, swapped or None, the meta's count off by one or misnamed, ``>`` for ``>=``, a ``True``
    on giving up, and the error's text or arguments changed."""
    import logging

    from workers.dispatch import (
        JOB_MEMORY,
        RULES_RETRIES,
        RULES_RETRY_SECONDS,
        Dispatcher,
        timer_job_id,
    )

    prefix = own_prefix(key_prefix, "defer")
    dispatcher = Dispatcher(rq_connection, prefix)
    names = queue_names(prefix)
    cases = [("workers.jobs.play_bot", names["bots"], bot_job_id(prefix, "m-d", 4, 1), "play_bot"),
             ("workers.jobs.turn_timeout", names["timers"], timer_job_id(prefix, "m-d", 4, 1), "turn_timeout")]
    for function, queue, base, short in cases:
        before = time.time()
        assert dispatcher.defer(function, "m-d", 4, 1, RULES_RETRIES - 1) is True
        job_id = f"{base}-d{RULES_RETRIES}"
        when = scheduled(rq_connection, queue)
        assert set(when) == {job_id}
        assert int(before) + RULES_RETRY_SECONDS <= when[job_id] <= time.time() + RULES_RETRY_SECONDS  # whole seconds
        job = Job.fetch(job_id, connection=rq_connection)
        assert (job.func_name, job.args, job.kwargs) == (function, ("m-d", 4, 1), {})
        assert job.meta.get("deferrals") == RULES_RETRIES
        assert (job.result_ttl, job.failure_ttl) == (JOB_MEMORY, JOB_MEMORY)
        assert job.description == f"{short}: match m-d v4 seat 1, deferred: its rules version was missing"
        assert dispatcher.defer(function, "m-d", 5, 0, 0) is True  # the first deferral: -d1, counted 1
        assert Job.fetch(f"{base.replace('-4-1', '-5-0')}-d1", connection=rq_connection).meta.get("deferrals") == 1

        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="grimoire.workers"):
            assert dispatcher.defer(function, "m-e", 6, 0, RULES_RETRIES) is False
        assert not any("m-e" in i for i in scheduled(rq_connection, queue))
        assert records(caplog, logging.ERROR) == [
            ("%s for match %s v%d seat %d: no worker had its rules version after %d tries; giving up",
             (function, "m-e", 6, 0, RULES_RETRIES))]


def test_a_job_deferred_again_counts_on_and_says_what_the_worker_lacks(worker_runtime, rq_connection, key_prefix,
                                                                      games, caplog):
    """A bot move and a turn timer already deferred 3 times, run by a worker without the match's rules version:
    each is deferred a 4th time (``-d4``, ``deferrals`` 4, the timer on the timers queue as turn_timeout), and
    says so: the job, the match, the game, the version it plays and the versions the worker has ("none" when
    it has none). Against the count read from anywhere but the running job's meta (a fresh count of 1), the
    function's name mangled or shortened wrongly, and each argument of the warning dropped or changed."""
    import logging

    from rq import Queue

    from service.store.errors import RulesVersionUnavailable
    from workers import jobs
    from workers.dispatch import Dispatcher, timer_job_id

    async def start(store):
        match = await store.create("high-card", turn_seconds=600)
        await store.join(match.id, "Ann")
        match, _, _ = await store.join(match.id, "Bob")
        return match.id, match.version

    match_id, version = in_store(worker_runtime, start)
    names = queue_names(key_prefix)
    bot = f"{bot_job_id(key_prefix, match_id, version, 0)}-d3"
    timer = f"{timer_job_id(key_prefix, match_id, version, 1)}-d3"
    Queue(names["bots"], connection=rq_connection).enqueue_call(
        "workers.jobs.play_bot", args=(match_id, version, 0), job_id=bot, meta={"deferrals": 3})
    Queue(names["timers"], connection=rq_connection).enqueue_call(
        "workers.jobs.turn_timeout", args=(match_id, version, 1), job_id=timer, meta={"deferrals": 3})
    lacking = {**games, "high-card": newer(games["high-card"])}
    with caplog.at_level(logging.WARNING, logger="grimoire.workers"):
        work(worker_runtime, rq_connection, key_prefix, lacking)
    have = games["high-card"].rules_version
    for job_id, queue, function in ((bot, names["bots"], "workers.jobs.play_bot"),
                                    (timer, names["timers"], "workers.jobs.turn_timeout")):
        assert Job.fetch(job_id, connection=rq_connection).return_value() == {
            "outcome": "rules_version_unavailable", "rules_version": have, "deferred": True}
        again = Job.fetch(job_id[:-1] + "4", connection=rq_connection)
        assert again.func_name == function and again.meta["deferrals"] == 4
        assert job_id[:-1] + "4" in scheduled(rq_connection, queue)
    fmt = "%s: match %s plays %s rules version %s, which this worker lacks (it has %s); deferred"
    assert sorted(records(caplog, logging.WARNING)) == sorted(
        (fmt, (name, match_id, "high-card", have, f"{have}-next")) for name in ("play_bot", "turn_timeout"))

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="grimoire.workers"):
        outcome = jobs._defer(Dispatcher(rq_connection, own_prefix(key_prefix, "none")), "workers.jobs.play_bot",
                              "m-n", 2, 1, RulesVersionUnavailable("high-card", "7", []))
    assert outcome == {"outcome": "rules_version_unavailable", "rules_version": "7", "deferred": True}
    assert records(caplog, logging.WARNING) == [(fmt, ("play_bot", "m-n", "high-card", "7", "none"))]


def test_the_watchdog_sweep_in_detail(worker_runtime, rq_connection, key_prefix, games, caplog):
    """Dispatcher.sweep, beyond test_the_watchdog_sweep_retries_lost_moves_only:
    - a young note is left alone even when its job is lost (against ``now + period``);
    - a job still waiting is found under its own id: version and seat apart (a note at v0 for seat 1) and
      the latest attempt (against the id built without the version or without the attempt);
    - one sweep goes on past a match this worker lacks the rules version of, past a move it gives up, and
      counts every move it retries (against ``break`` for ``continue`` and ``retried = 1``);
    - each retry and each giving up is logged with its text and its arguments;
    - a second sweep at once is refused by the lock even with work to do (against the lock's NX dropped).
    Against those faults."""
    import asyncio
    import logging

    from service.store.bots import create_match
    from workers.dispatch import MAX_ATTEMPTS, Dispatcher

    prefix = own_prefix(key_prefix, "sweep2")
    dispatcher = Dispatcher(rq_connection, prefix, watchdog_seconds=1)
    lacking = runtime.Runtime(worker_runtime.settings, {**games, "quidditch": newer(games["quidditch"])})

    def notes() -> dict[str, float]:
        return {k.decode(): s for k, s in rq_connection.zrange(dispatcher.pending_key, 0, -1, withscores=True)}

    def lose(member: str, attempt: int = 0, score: float | None = None) -> None:
        match_id, version, seat = member.split("|")
        job = bot_job_id(prefix, match_id, int(version), int(seat), attempt)
        Job.fetch(job, connection=rq_connection).delete()
        rq_connection.zadd(dispatcher.pending_key, {member: time.time() - 5 if score is None else score})

    async def scenario():
        async with worker_runtime.store() as store, lacking.store() as other:
            bots = await create_match(store, "high-card", seed=3, bots=[{"seat": 0, "level": "random"},
                                                                       {"seat": 1, "level": "random"}])
            more = await create_match(store, "high-card", seed=4, bots=[{"seat": 0, "level": "random"},
                                                                       {"seat": 1, "level": "random"}])
            b0, b1, m0, m1 = (f"{bots.id}|0|0", f"{bots.id}|0|1", f"{more.id}|0|0", f"{more.id}|0|1")

            async def sweep(on=store) -> int:
                rq_connection.delete(f"{prefix}:bots:sweep-lock")  # as if the last sweep's lock had expired
                return await dispatcher.sweep(on)

            for member in (b0, b1, m0, m1):
                match_id, _, seat = member.split("|")
                assert dispatcher.enqueue_bot(match_id, 0, int(seat))
            rq_connection.zadd(dispatcher.pending_key, {m: time.time() - 5 for m in (b1, m0, m1)})

            lose(b0, score=time.time())  # young: left alone, lost or not
            assert await sweep() == 0
            assert Job.exists(bot_job_id(prefix, bots.id, 0, 1), connection=rq_connection)  # v0 seat 1 waits
            assert rq_connection.hget(dispatcher.attempts_key, b1) is None and not rq_connection.hget(
                dispatcher.attempts_key, m0)
            assert not Job.exists(bot_job_id(prefix, bots.id, 0, 0, 1), connection=rq_connection)
            rq_connection.zrem(dispatcher.pending_key, b0)  # done with: it would age meanwhile

            # m0: lost; m1: its first retry still waits (its first job is gone)
            lose(m0)
            rq_connection.hset(dispatcher.attempts_key, m1, 1)
            dispatcher.enqueue_bot(more.id, 0, 1, 1)
            lose(m1)
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="grimoire.workers"):
                assert await sweep() == 1
            assert records(caplog, logging.WARNING) == [
                ("watchdog: bot move %s not played after %.0fs; re-enqueued (attempt %d)", (m0, 1, 2))]
            assert int(rq_connection.hget(dispatcher.attempts_key, m1)) == 1

            # a sweep while another holds the lock, with a lost move to retry: refused
            lose(m0, 1)
            rq_connection.set(f"{prefix}:bots:sweep-lock", b"1", px=5000)
            assert await dispatcher.sweep(store) == 0
            assert int(rq_connection.hget(dispatcher.attempts_key, m0)) == 1

            # two lost moves, after one given up: both retried
            lose(b1, score=1)
            rq_connection.hset(dispatcher.attempts_key, b1, MAX_ATTEMPTS - 1)
            lose(m1, 1, score=2)
            rq_connection.zadd(dispatcher.pending_key, {m0: 3})
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="grimoire.workers"):
                assert await sweep() == 2
            assert records(caplog, logging.ERROR) == [
                ("bot move %s failed %d times; giving up (see the failed job registry)", (b1, MAX_ATTEMPTS))]
            warned = "watchdog: bot move %s not played after %.0fs; re-enqueued (attempt %d)"
            assert records(caplog, logging.WARNING) == [(warned, (m1, 1, 3)), (warned, (m0, 1, 3))]

            # a note of a game whose rules version this worker lacks, first: the sweep goes on to the next one
            odd = await create_match(store, "quidditch", seed=5, bots=[{"seat": 0, "level": "random"},
                                                                      {"seat": 1, "level": "random"}])
            lose(m0, 2, score=5)
            rq_connection.zadd(dispatcher.pending_key, {f"{odd.id}|0|0": 4})
            assert await sweep(other) == 1
            assert Job.exists(bot_job_id(prefix, more.id, 0, 0, 3), connection=rq_connection)
            assert f"{odd.id}|0|0" in notes()  # left to a worker that has the version

    asyncio.run(scenario())


def test_the_sweep_lock_lasts_half_the_period_or_200_ms_and_a_finished_note_stays_gone(worker_runtime,
                                                                                    rq_connection, key_prefix):
    """The sweep lock lives exactly max(half the watchdog period, 200 ms): its expiry, read from Redis, is
    the millisecond it was set (between two readings of Redis' clock) plus that (against 501 for 500 and 201
    for 200: thirty sweeps, some of them within one millisecond of the reading). And a note removed while the sweep looks at it (its job finished meanwhile) is not written back
    by the re-scoring of a waiting job (against ``xx`` dropped, None or False)."""
    import asyncio

    from service.store.bots import create_match
    from workers.dispatch import Dispatcher

    def server_ms() -> int:
        seconds, micros = rq_connection.time()
        return (seconds * 1_000_000 + micros) // 1000

    read = rq_connection.register_script(  # Redis' clock and the lock's time to live, in one step
        "local now = redis.call('TIME') return {now[1], now[2], redis.call('PTTL', KEYS[1])}")

    async def lifetimes(dispatcher, store) -> None:
        lock = f"{dispatcher.prefix}:bots:sweep-lock"
        lifetime = max(int(dispatcher.watchdog_seconds * 500), 200)
        for _ in range(30):
            rq_connection.delete(lock)
            before = server_ms()
            await dispatcher.sweep(store)
            seconds, micros, left = read(keys=[lock])
            now = (int(seconds) * 1_000_000 + int(micros)) // 1000
            # the lock was set between ``before`` and ``now``; it expires ``lifetime`` ms after that
            assert before - 1 <= now + left - lifetime <= now

    class Finishing:
        """The worker's store, but the bot move's job finishes (and drops its note) while the sweep reads it."""

        def __init__(self, store, dispatcher):
            self.store, self.dispatcher = store, dispatcher

        async def get(self, match_id, **kwargs):
            match = await self.store.get(match_id, **kwargs)
            self.dispatcher.done(match_id, 0, 0)
            return match

    async def scenario():
        async with worker_runtime.store() as store:
            for seconds in (1.0, 0.1):
                await lifetimes(Dispatcher(rq_connection, own_prefix(key_prefix, "lock"),
                                           watchdog_seconds=seconds), store)
            dispatcher = Dispatcher(rq_connection, own_prefix(key_prefix, "gone"), watchdog_seconds=1)
            match = await create_match(store, "high-card", seed=3, bots=[{"seat": 0, "level": "random"}])
            await store.join(match.id, "Ann")
            assert dispatcher.enqueue_bot(match.id, 0, 0)  # waiting in the queue
            rq_connection.zadd(dispatcher.pending_key, {f"{match.id}|0|0": time.time() - 5})
            assert await dispatcher.sweep(Finishing(store, dispatcher)) == 0
            assert rq_connection.zscore(dispatcher.pending_key, f"{match.id}|0|0") is None

    asyncio.run(scenario())


def test_a_replays_status_through_its_life(client, worker_runtime, rq_connection, key_prefix, games):
    """Dispatcher.start_replay / replay / _replay_status, each status a replay job goes through, read by its
    id: ``-spectator`` for the spectator's; queued (waiting; and scheduled again after a worker without the
    rules version failed it), started (read from inside the running job), finished (the replay itself only
    from ``replay``, not from ``start_replay``), failed (a cancelled job), every answer naming its match and
    seat; an unknown id is refused with its message. Against the names of the statuses changed, ``failed``
    lost, the match read from the seat's argument, the result given with every status, and the spectator's
    id or the refusal's text changed."""
    import pytest

    from service.store import ReplayNotFound
    from workers.dispatch import Dispatcher

    match = create(client, "high-card", seed=6)
    match_id = match["id"]
    for name in "ab":
        client.post(f"/v1/matches/{match_id}/seats", json={"name": name})
    while (state := in_store(worker_runtime, lambda store: store.get(match_id))).status == "active":
        from workers import jobs

        jobs.turn_timeout(match_id, state.version, min(state.to_act))
    dispatcher = Dispatcher(rq_connection, key_prefix, replay_ttl=600)
    spectator_id = f"{key_prefix}-replay-{match_id}-spectator"
    assert dispatcher.start_replay(state, None) == {"id": spectator_id, "status": "queued", "match_id": match_id,
                                                    "seat": None, "replay": None}

    # a worker without the rules version fails it; RQ tries it again later: still queued
    work(worker_runtime, rq_connection, key_prefix, {**games, "high-card": newer(games["high-card"])})
    assert Job.fetch(spectator_id, connection=rq_connection).get_status() == "scheduled"
    assert dispatcher.replay(spectator_id)["status"] == "queued"

    seen = []
    base = type(games["high-card"])

    class Watched(base):
        def setup(self, options, seats, seed):  # runs inside the replay job
            seen.append(dispatcher.replay(f"{key_prefix}-replay-{match_id}-1"))
            return super().setup(options, seats, seed)

    Queue(queue_names(key_prefix)["replays"], connection=rq_connection).remove(spectator_id)
    first = dispatcher.start_replay(state, 1)
    assert first["status"] == "queued" and first["match_id"] == match_id and first["seat"] == 1
    work(worker_runtime, rq_connection, key_prefix, {**games, "high-card": Watched()})
    assert seen == [{"id": f"{key_prefix}-replay-{match_id}-1", "status": "started", "match_id": match_id,
                     "seat": 1, "replay": None}]
    done = dispatcher.replay(first["id"])
    assert (done["status"], done["match_id"], done["seat"]) == ("finished", match_id, 1)
    assert done["replay"]["match_id"] == match_id and done["replay"]["verified"] is True
    assert dispatcher.start_replay(state, 1) == {**done, "replay": None}  # found, not rebuilt: no result here

    cancelled = dispatcher.start_replay(state, 0)
    Job.fetch(cancelled["id"], connection=rq_connection).cancel()
    assert dispatcher.replay(cancelled["id"]) == {**cancelled, "status": "failed"}
    for unknown in (f"{key_prefix}-replay-nothing-0", "elsewhere"):
        with pytest.raises(ReplayNotFound) as refused:
            dispatcher.replay(unknown)
        assert str(refused.value) == "There is no such replay (it may have expired)."
    Job.fetch(spectator_id, connection=rq_connection).delete()


def played_log(game, seed: int) -> tuple[list[dict], dict]:
    """A high-card match played to its end by the rules alone: its log entries and final state."""
    state = game.setup({"rounds": 3}, 2, seed)
    entries = []
    while game.result(state) is None:
        seat = min(game.to_act(state))
        action = game.legal_actions(state, seat)[-1]
        state, events = game.apply(state, seat, action)
        entries.append({"version": len(entries) + 1, "seat": seat, "action": action, "events": events,
                        "status": "finished" if game.result(state) is not None else "active",
                        "to_act": sorted(game.to_act(state)), "at": len(entries)})
    return entries, state


def test_a_replay_names_each_mismatch_it_finds(games):
    """workers.replay.build_replay on a log altered four ways, each reported as it is: a missing entry
    ("log", with the versions expected and found, and the replay stops), a refused action ("action", with
    the rule's code, and it stops), other events and another ``to_act`` (each with its own detail). Against
    the mismatch's keys or words changed, a ``return`` (no replay at all) for the stop, and the log's check."""
    import copy

    from workers.replay import build_replay

    game = games["high-card"]
    entries, final = played_log(game, 8)

    def replay(log: list[dict]) -> dict:
        result = build_replay(game, match_id="m-r", options={"rounds": 3}, seats=2, seed=8, entries=log,
                              final_state=final, seat=None)
        assert result["verified"] is False and result["match_id"] == "m-r"
        return result

    gap = replay(entries[:1] + entries[2:])
    assert gap["mismatches"] == [{"version": 3, "what": "log", "detail": "expected log entry 2, found 3"}]
    assert len(gap["frames"]) == 2

    refused = copy.deepcopy(entries)
    refused[1]["action"] = {"type": "play", "card": 99}
    refused = replay(refused)
    assert refused["mismatches"] == [{"version": 2, "what": "action",
                                      "detail": "the logged action is refused on the re-computed state: "
                                                "illegal_action"}]
    assert len(refused["frames"]) == 2

    altered = copy.deepcopy(entries)
    altered[0]["events"] = []
    altered[2]["to_act"] = [0, 1] if altered[2]["to_act"] != [0, 1] else []
    assert replay(altered)["mismatches"] == [
        {"version": 1, "what": "events", "detail": "stored events differ"},
        {"version": 3, "what": "to_act", "detail": "stored to_act differs"}]


def test_a_late_seats_default_is_its_own_seeded_choice_played_once_and_timed_again(client, worker_runtime,
                                                                                  rq_connection, key_prefix):
    """A turn timer's default (no pass in high-card: the random level) is drawn from
    ``Random("<match>|<version>|<seat>|t")`` -- the same on a retry of the job --, submitted under the
    idempotency key ``timer:<version>:<seat>`` (a second submission of it is a duplicate, not a second move),
    and the move it plays goes through the dispatcher like any other: the next late seat's timer is
    scheduled. Against each part of the seed changed or dropped, the key dropped, and the store opened
    without the dispatcher as its listener."""
    import random

    from workers import bots, jobs
    from workers.dispatch import timer_job_id

    match = create(client, "high-card", seed=9, turn_seconds=600)
    match_id = match["id"]
    for name in "ab":
        client.post(f"/v1/matches/{match_id}/seats", json={"name": name})
    timers = queue_names(key_prefix)["timers"]
    played = []
    while (now := in_store(worker_runtime, lambda store: store.get(match_id))).status == "active":
        seat = min(now.to_act)
        legal = now.legal_actions(seat)
        expected = bots.choose("random", bots.BotInput("high-card", seat, now.view(seat), legal),
                               random.Random(f"{match_id}|{now.version}|{seat}|t"))
        assert jobs.turn_timeout(match_id, now.version, seat) == {"outcome": "played", "default": "random",
                                                                  "version": now.version + 1}
        entry = in_store(worker_runtime, lambda store, seat=seat, since=now.version:
                         store.history(match_id, seat, after=since))[0]
        assert (entry.seat, entry.action, entry.auto["reason"]) == (seat, expected, "turn_timeout")
        played.append((now.version, seat, expected))
        after = in_store(worker_runtime, lambda store: store.get(match_id))
        if after.status == "active":
            assert {timer_job_id(key_prefix, match_id, after.version, s) for s in after.to_act} <= \
                set(scheduled(rq_connection, timers))
    assert len(played) == 6 and len({str(action) for _, _, action in played}) > 1

    async def again(store):
        version, seat, action = played[-1]
        return await store.submit(match_id, None, version, action, f"timer:{version}:{seat}", acting_seat=seat)

    assert in_store(worker_runtime, again).duplicate is True


def test_a_timer_that_loses_the_race_plays_nothing_and_says_conflict(client, worker_runtime, games):
    """A late seat that acts between the timer's read of the match and its submission: the timer's default is
    refused by the compare-and-set and the job answers ``{"outcome": "conflict"}`` (its result, kept by RQ).
    The seat's move is made from inside the job's reading of the seat's view. Against the outcome renamed."""
    from workers import jobs

    match = create(client, "high-card", seed=10)
    match_id = match["id"]
    tokens = [client.post(f"/v1/matches/{match_id}/seats", json={"name": n}).json()["token"] for n in "ab"]
    base = type(games["high-card"])

    class Racing(base):
        raced = False

        def view(self, state, seat):
            if not Racing.raced and seat == 1:  # the timer reads seat 1's view: seat 1 acts now
                Racing.raced = True
                auth = {"Authorization": f"Bearer {tokens[1]}"}
                legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth).json()["actions"]
                assert client.post(f"/v1/matches/{match_id}/actions", json={"action": legal[0]},
                                   headers={**auth, "If-Match": '"0"'}).status_code == 200
            return super().view(state, seat)

    runtime.configure(worker_runtime.settings, {**games, "high-card": Racing()})
    try:
        assert jobs.turn_timeout(match_id, 0, 1) == {"outcome": "conflict"}
    finally:
        runtime.configure(worker_runtime.settings, worker_runtime.games)
    entries = client.get(f"/v1/matches/{match_id}/history").json()["entries"]
    assert [(e["seat"], e["auto"]) for e in entries] == [(1, None)]


def new_player(client) -> tuple[str, str]:
    response = client.post("/v1/players", json={"name": f"p{time.monotonic_ns() % 10**9}"})
    assert response.status_code == 201, response.text
    return response.json()["player"]["id"], response.json()["token"]


def quick_match(client, rated: bool) -> tuple[str, dict[str, str]]:
    """A high-card match of two new players paired by quick match, with a turn timer: (match, player by token)."""
    (a_id, a), (b_id, b) = new_player(client), new_player(client)
    ask = {"game": "high-card", "rated": rated, "turn_seconds": 600}
    assert client.post("/v1/quick-match", json=ask, headers={"Authorization": f"Bearer {a}"}).json()["status"] \
        == "waiting"
    paired = client.post("/v1/quick-match", json=ask, headers={"Authorization": f"Bearer {b}"}).json()
    assert paired["status"] == "matched", paired
    return paired["last"]["match_id"], {a: a_id, b: b_id}


def test_a_player_late_in_a_rated_match_abandons_it_and_its_bookkeeping_is_enqueued(
        client, worker_runtime, rq_connection, key_prefix):
    """In a rated match, the turn timer's default for a player's seat records that player as having abandoned
    the match (``abandoned:<seat>`` in the match's hash, the player's id) and enqueues the players' job of
    that abandonment; in an unrated one it records nothing. Against the player, the rated check or the
    abandonment check dropped or turned around, each argument of the write changed, and the players' job not
    enqueued (or enqueued for nothing)."""
    from workers import jobs

    for rated in (False, True):
        match_id, players = quick_match(client, rated)
        first = next(iter(players))
        auth = {"Authorization": f"Bearer {first}"}
        legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth).json()
        assert client.post(f"/v1/matches/{match_id}/actions", json={"action": legal["actions"][0]},
                           headers={**auth, "If-Match": f'"{legal["version"]}"'}).status_code == 200
        now = in_store(worker_runtime, lambda store, match_id=match_id: store.get(match_id))
        (late,) = now.to_act
        assert jobs.turn_timeout(match_id, now.version, late) == {"outcome": "played", "default": "random",
                                                                  "version": now.version + 1}
        stored = {k.decode(): v.decode() for k, v in
                  rq_connection.hgetall(f"{key_prefix}:m:{{{match_id}}}").items() if k.startswith(b"abandoned")}
        job_id = f"{key_prefix}-players-{match_id}-abandoned-1"
        if not rated:
            assert stored == {} and not Job.exists(job_id, connection=rq_connection)
            continue
        assert stored == {f"abandoned:{late}": now.seats[late].player}
        assert now.seats[late].player in players.values() and now.seats[late].player != players[first]
        job = Job.fetch(job_id, connection=rq_connection)
        assert (job.func_name, job.args, job.description) == \
            ("workers.players.match_finished", (match_id,), f"players: match {match_id} abandoned-1")


def test_the_players_job_is_enqueued_once_per_ending_with_its_request(client, worker_runtime, rq_connection,
                                                                     key_prefix):
    """Dispatcher.players_job: one job per match and per step (``finished``, or ``abandoned-<n>``), a second
    enqueue of it refused (False), on the bots queue as workers.players.match_finished(match id), remembered
    JOB_MEMORY (result, failure, and its wait in the queue), described, and carrying the request id of the
    request that ended the match. Against every argument of the enqueue dropped, None or changed, the step
    turned around, and the answers swapped."""
    from service.logs import META_KEY, request_id
    from workers import jobs
    from workers.dispatch import JOB_MEMORY, Dispatcher

    match = create(client, "high-card", seed=11)
    match_id = match["id"]
    for name in "ab":
        client.post(f"/v1/matches/{match_id}/seats", json={"name": name})
    while (now := in_store(worker_runtime, lambda store: store.get(match_id))).status == "active":
        jobs.turn_timeout(match_id, now.version, min(now.to_act))
    prefix = own_prefix(key_prefix, "players")
    dispatcher = Dispatcher(rq_connection, prefix)
    token = request_id.set("req-players-1")
    try:
        assert dispatcher.players_job(now) is True
        assert dispatcher.players_job(now) is False
        now.status = "active"
        now.abandoned = {1: "someone"}
        assert dispatcher.players_job(now) is True
    finally:
        request_id.reset(token)
    assert sorted(Queue(queue_names(prefix)["bots"], connection=rq_connection).job_ids) == sorted(
        f"{prefix}-players-{match_id}-{step}" for step in ("finished", "abandoned-1"))
    for step in ("finished", "abandoned-1"):
        job = Job.fetch(f"{prefix}-players-{match_id}-{step}", connection=rq_connection)
        assert (job.func_name, job.args, job.kwargs) == ("workers.players.match_finished", (match_id,), {})
        assert (job.result_ttl, job.failure_ttl, job.ttl) == (JOB_MEMORY, JOB_MEMORY, JOB_MEMORY)
        assert job.description == f"players: match {match_id} {step}"
        assert job.meta == {META_KEY: "req-players-1"}


def observe_worker(seconds: float) -> dict:
    """A job (run by name, workers/runtime.py's worker in this process): wait ``seconds`` while the worker's
    threads work, then say which threads run beside it and under which request id the job runs."""
    import threading

    from service.logs import request_id

    time.sleep(seconds)
    return {"threads": sorted((t.name, t.daemon) for t in threading.enumerate() if t.name.startswith("grimoire-")),
            "request_id": request_id.get()}


def with_credentials(url: str) -> str:
    """``url`` with a user and password (the default user without a password takes any)."""
    scheme, rest = url.split("://", 1)
    return f"{scheme}://default:hidden-secret@{rest}"


def run_worker_on(settings, name: str, caplog) -> None:
    """runtime.run_worker in this process, in burst mode, its log records captured from INFO up."""
    import logging

    logging.getLogger("rq.worker").setLevel(logging.NOTSET)  # as in a fresh process: run_worker sets it
    with caplog.at_level(logging.INFO, logger="grimoire.workers"):
        runtime.run_worker(settings, burst=True, name=name)


def test_run_worker_works_every_queue_with_its_threads_scheduler_and_name(settings, rq_connection, key_prefix,
                                                                          worker_runtime, caplog):
    """run_worker (``grimoire worker``) in this process, in burst mode, on queues of its own: it works the bots,
    timers and replays queues, moves a due turn timer to its queue (its scheduler), runs jobs under their
    request id (RequestIdJob) and its given name, keeps RQ's own logging at WARNING, runs the watchdog, the
    quick-match and the trades sweepers as named daemon threads beside the jobs (the watchdog re-enqueues a
    lost bot move while another job runs), and says which queues it works on which Redis, without the
    password. Against every argument of the worker, its threads and its log line dropped, None or changed."""
    import asyncio
    import dataclasses
    import logging

    from service.logs import META_KEY
    from service.store.bots import create_match
    from workers.dispatch import Dispatcher

    prefix = own_prefix(key_prefix, "rw")
    mine = dataclasses.replace(settings, key_prefix=prefix, bot_watchdog_seconds=0.3,
                               queue_redis_url=with_credentials(settings.redis_url))
    rt = runtime.Runtime(mine, worker_runtime.games)
    names = queue_names(prefix)
    dispatcher = Dispatcher(rq_connection, prefix, watchdog_seconds=0.3)

    async def start():
        async with rt.store() as store:  # no listener: the jobs are enqueued (or lost) by hand below
            lost = await create_match(store, "casting-stones", seed=2, bots=[{"seat": 0, "level": "random"}])
            await store.join(lost.id, "Ann")
            timed = await store.create("casting-stones", seed=2, turn_seconds=600)
            await store.join(timed.id, "Bea")
            await store.join(timed.id, "Cid")
            return lost.id, timed.id

    lost, timed = asyncio.run(start())
    dispatcher.enqueue_bot(lost, 0, 0)
    Job.fetch(bot_job_id(prefix, lost, 0, 0), connection=rq_connection).delete()  # lost with a worker
    rq_connection.zadd(dispatcher.pending_key, {f"{lost}|0|0": 0})
    assert dispatcher.schedule_timer(timed, 0, 0, 0)
    Queue(names["replays"], connection=rq_connection).enqueue_call(
        f"{__name__}.observe_worker", args=(2.0,), job_id=f"{prefix}-observe", meta={META_KEY: "req-observe"})
    name = f"{prefix}-worker"
    try:
        run_worker_on(mine, name, caplog)
    finally:
        runtime.configure(worker_runtime.settings, worker_runtime.games)
    observed = Job.fetch(f"{prefix}-observe", connection=rq_connection)
    assert observed.return_value() == {
        "threads": [("grimoire-quick-match", True), ("grimoire-trades", True), ("grimoire-watchdog", True)],
        "request_id": "req-observe"}
    assert observed.worker_name == name
    retried = Job.fetch(bot_job_id(prefix, lost, 0, 0, 1), connection=rq_connection)
    assert retried.return_value()["outcome"] == "played" and retried.worker_name == name
    timer = Job.fetch(f"{prefix}-timer-{timed}-0-0", connection=rq_connection)
    assert timer.return_value()["outcome"] == "played"
    assert logging.getLogger("rq.worker").level == logging.WARNING
    shown = settings.redis_url.split("://", 1)[1]
    assert records(caplog, logging.INFO) == [("worker %s on %s (queues %s)",
                                              (name, shown, f"{prefix}-bots, {prefix}-timers, {prefix}-replays"))]
    for key in rq_connection.scan_iter(match=f"{prefix}:*", count=1000):
        rq_connection.delete(key)


def test_the_workers_sweepers_log_their_failures_and_try_again_each_period(settings, rq_connection, key_prefix,
                                                                          worker_runtime, caplog):
    """run_worker's three sweeper threads, each meeting a fault it cannot get past (a key of the wrong type in
    Redis: the bot-move notes, the quick-match queues, the live trades): each logs it, with its period (the
    watchdog a third of its 1.5 s, at least 0.2 s; the others 1 s), and keeps going. Against a period
    changed, a loop that never runs or never wakes, and the log's text or argument changed."""
    import dataclasses
    import logging

    from service.logs import META_KEY

    prefix = own_prefix(key_prefix, "faulty")
    mine = dataclasses.replace(settings, key_prefix=prefix, bot_watchdog_seconds=1.5)
    for key in (f"{prefix}:bots:pending", f"{prefix}:qm:queues", f"{prefix}:trades:live"):
        rq_connection.set(key, b"not what the sweeper expects")
    Queue(queue_names(prefix)["replays"], connection=rq_connection).enqueue_call(
        f"{__name__}.observe_worker", args=(2.6,), job_id=f"{prefix}-observe", meta={META_KEY: "r"})
    try:
        run_worker_on(mine, f"{prefix}-worker", caplog)
    finally:
        runtime.configure(worker_runtime.settings, worker_runtime.games)
    failures = records(caplog, logging.ERROR)
    assert set(failures) == {("watchdog sweep failed; trying again in %.1fs", (0.5,)),
                             ("quick-match sweep failed; trying again in %.1fs", (1.0,)),
                             ("trade sweep failed; trying again in %.1fs", (1.0,))}
    assert failures.count(("watchdog sweep failed; trying again in %.1fs", (0.5,))) >= 2  # it keeps going
    for key in rq_connection.scan_iter(match=f"{prefix}:*", count=1000):
        rq_connection.delete(key)


def other_db(url: str) -> str:
    """The same Redis server, another database (RQ's queues may live apart from the matches)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    db = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(db + 1) % 16}"))


def test_an_embedded_worker_takes_the_services_environment_and_queue_redis_and_dies_with_its_spawner(
        worker_runtime, settings, redis_url, key_prefix, monkeypatch):
    """spawn_embedded_worker: the child works the queues on the service's queue Redis when it has one of its
    own (here another database of the same server), inherits the service's environment (here a bot delay of
    1 s: its bot move takes at least that long), and is stopped by the kernel when the thread that spawned it
    ends (PR_SET_PDEATHSIG: the signal follows the spawning thread, the service's main thread in ``grimoire
    serve``). Against the queue URL dropped or ``and`` for ``or``, the environment not passed on, and the
    ``preexec_fn`` dropped."""
    import dataclasses
    import threading

    import redis

    from service.store.bots import create_match
    from workers.dispatch import Dispatcher

    monkeypatch.setenv("GRIMOIRE_BOT_DELAY_MS", "1000")
    queues = redis.Redis.from_url(other_db(redis_url))
    spawned, release = [], threading.Event()

    def spawner():
        spawned.append(runtime.spawn_embedded_worker(redis_url, dataclasses.replace(
            settings, queue_redis_url=other_db(redis_url))))
        release.wait(300)

    thread = threading.Thread(target=spawner, daemon=True)
    try:
        thread.start()

        async def start(store):
            match = await create_match(store, "casting-stones", seed=2, bots=[{"seat": 0, "level": "random"}])
            await store.join(match.id, "Ann")
            return match.id

        match_id = in_store(worker_runtime, start)
        assert Dispatcher(queues, key_prefix).enqueue_bot(match_id, 0, 0)
        deadline = time.monotonic() + 120
        while (job := Job.fetch(bot_job_id(key_prefix, match_id, 0, 0), connection=queues)).get_status() \
                != "finished":
            assert time.monotonic() < deadline, "the embedded worker did not play the bot on its queue Redis"
            time.sleep(0.2)
        assert job.return_value()["outcome"] == "played"
        assert (job.ended_at - job.started_at).total_seconds() >= 1.0  # GRIMOIRE_BOT_DELAY_MS reached it
        (process,) = spawned
        assert process.poll() is None
        release.set()
        thread.join(10)
        process.wait(timeout=30)  # the kernel stopped it: its spawning thread is gone
    finally:
        release.set()
        for process in spawned:
            runtime.stop_embedded_worker(process)
        for key in queues.scan_iter(match=f"*{key_prefix}*", count=1000):
            queues.delete(key)
        queues.close()


def test_stopping_an_embedded_worker_that_ignores_sigterm_kills_it_after_10_seconds():
    """stop_embedded_worker: SIGTERM, then 10 s for the job at hand, then SIGKILL (against waiting for ever
    or 11 s). A process that ignores SIGTERM stands in for a worker stuck in a job."""
    import subprocess
    import sys

    ignoring = ("import signal, time\n"
                "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                "print('ready', flush=True)\n"
                "time.sleep(120)")
    process = subprocess.Popen([sys.executable, "-c", ignoring], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "ready"
        started = time.monotonic()
        runtime.stop_embedded_worker(process)
        took = time.monotonic() - started
        assert 9.9 <= took < 10.9 and process.wait(timeout=5) == -9  # killed (not waited for: reaped here)
    finally:
        if process.poll() is None:
            process.kill()
        process.stdout.close()


def test_a_replay_says_what_it_discloses_and_shows_each_seat_only_its_events(games):
    """workers.replay.build_replay, verified and not: another stored status and another final state are each
    named with their own detail; the spectator's replay says it shows everything and gives the seed, a seat's
    says what that seat saw and keeps the seed; each frame's events are all of them for the spectator and
    only the seat's own for a seat (seat 0's card is not seat 1's to see). Against those words, the keys of
    the mismatches, the seed and the events' filter changed or turned around."""
    import copy

    from workers.replay import build_replay

    game = games["high-card"]
    entries, final = played_log(game, 12)

    def replay(log, final_state, seat):
        return build_replay(game, match_id="m-s", options={"rounds": 3}, seats=2, seed=12, entries=log,
                            final_state=final_state, seat=seat)

    spectator, seat1 = replay(entries, final, None), replay(entries, final, 1)
    assert spectator["verified"] is True and seat1["verified"] is True
    assert (spectator["disclosure"], spectator["seed"], spectator["note"]) == (
        "everything", 12, ("The match is over: this spectator replay shows every seat's view, every event and "
                           "every action."))
    assert (seat1["disclosure"], seat1["seed"], seat1["note"]) == (
        "seat", None, "What seat 1 could see at each moment: its views, the events it saw and its own actions.")
    assert entries[0]["seat"] == 0
    assert spectator["frames"][1]["events"] == entries[0]["events"]
    assert [view["hand"] is not None for view in spectator["frames"][0]["views"]] == [True, True]  # each seat's
    assert seat1["frames"][1]["events"] == [e for e in entries[0]["events"] if "audience" not in e]
    assert len(seat1["frames"][1]["events"]) < len(entries[0]["events"])

    altered = copy.deepcopy(entries)
    altered[0]["status"] = "finished"
    other_final = copy.deepcopy(final)
    other_final["wins"] = [9, 9]
    result = replay(altered, other_final, None)
    assert result["verified"] is False
    assert result["mismatches"] == [
        {"version": 1, "what": "status", "detail": "stored status finished, re-computed active"},
        {"version": len(entries), "what": "state", "detail": "the stored state differs from the re-computed one"}]


def stop_this_worker() -> str:
    """A job that asks the worker running it (in this process) to stop after it: a warm shutdown."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGINT)
    return "stopping"


def test_run_worker_without_burst_waits_for_work_until_told_to_stop(settings, rq_connection, key_prefix,
                                                                    worker_runtime):
    """run_worker's default is to keep working (``grimoire worker``): with empty queues it waits, takes a job
    enqueued a second later, and stops on a warm shutdown once that job is done (against ``burst=True`` as
    the default: it would return at once and leave the job)."""
    import dataclasses
    import threading

    prefix = own_prefix(key_prefix, "nb")
    mine = dataclasses.replace(settings, key_prefix=prefix)
    queue = Queue(queue_names(prefix)["replays"], connection=rq_connection)

    def later():
        time.sleep(1.0)
        queue.enqueue_call(f"{__name__}.stop_this_worker", job_id=f"{prefix}-stop")

    thread = threading.Thread(target=later)
    thread.start()
    started = time.monotonic()
    try:
        runtime.run_worker(mine, name=f"{prefix}-worker")
    finally:
        took = time.monotonic() - started
        thread.join()
        runtime.configure(worker_runtime.settings, worker_runtime.games)
        job = Job.fetch(f"{prefix}-stop", connection=rq_connection)
        result = job.return_value()
        job.delete()  # never left for another worker of this session to run
    assert result == "stopping" and took >= 1.0


def test_a_bot_move_is_enqueued_once_with_its_note_request_and_description(rq_connection, key_prefix):
    """Dispatcher.enqueue_bot: one job per (match, version, seat, attempt), a repeat refused (False) and its
    note's time left alone; a retry (attempt > 0) only re-times an existing note; the job runs
    workers.jobs.play_bot(match, version, seat), carries the request's id, is remembered JOB_MEMORY, and is
    described ("seat N", or "the board"). Against the note's nx/xx, the uniqueness, the arguments, the
    lifetimes and the description changed."""
    from service.engine import BOARD_SEAT
    from service.logs import META_KEY, request_id
    from workers.dispatch import JOB_MEMORY, Dispatcher

    prefix = own_prefix(key_prefix, "enqueue")
    dispatcher = Dispatcher(rq_connection, prefix)
    token = request_id.set("req-bot-1")
    try:
        assert dispatcher.enqueue_bot("m-b", 3, 1) is True
        rq_connection.zadd(dispatcher.pending_key, {"m-b|3|1": 7})
        assert dispatcher.enqueue_bot("m-b", 3, 1) is False
        assert rq_connection.zscore(dispatcher.pending_key, "m-b|3|1") == 7  # a repeat does not re-time it
        assert dispatcher.enqueue_bot("m-b", 3, BOARD_SEAT) is True
        assert dispatcher.enqueue_bot("m-c", 2, 0, 1) is True  # a retry with no note: none is made
    finally:
        request_id.reset(token)
    assert rq_connection.zscore(dispatcher.pending_key, "m-c|2|0") is None
    for seat, said in ((1, "seat 1"), (BOARD_SEAT, "the board")):
        job = Job.fetch(bot_job_id(prefix, "m-b", 3, seat), connection=rq_connection)
        assert (job.func_name, job.args, job.kwargs) == ("workers.jobs.play_bot", ("m-b", 3, seat), {})
        assert (job.result_ttl, job.failure_ttl, job.ttl) == (JOB_MEMORY, JOB_MEMORY, JOB_MEMORY)
        assert job.description == f"bot move: match m-b v3 {said}" and job.meta == {META_KEY: "req-bot-1"}
    assert bot_job_id(prefix, "m-b", 3, BOARD_SEAT).endswith("-m-b-3-board")
    assert Job.fetch(bot_job_id(prefix, "m-c", 2, 0, 1), connection=rq_connection).id.endswith("-m-c-2-0-r1")


def test_a_replay_is_enqueued_for_a_finished_match_and_seat_only_and_retried(client, worker_runtime,
                                                                           rq_connection, key_prefix):
    """Dispatcher.start_replay: refused for a match not finished and for a seat it does not have (with their
    messages); the job runs workers.jobs.build_replay(match, seat), is kept replay_ttl (result, failure, and
    its wait), is retried RULES_RETRIES // 5 times every RULES_RETRY_SECONDS (a worker without the rules
    version fails it), and is described; a failed one is enqueued anew. Against those changed."""
    import pytest

    from service.store import MatchNotFinished, NoSuchSeat
    from workers import jobs
    from workers.dispatch import RULES_RETRIES, RULES_RETRY_SECONDS, Dispatcher

    match = create(client, "high-card", seed=13)
    match_id = match["id"]
    for name in "ab":
        client.post(f"/v1/matches/{match_id}/seats", json={"name": name})
    prefix = own_prefix(key_prefix, "replay")
    dispatcher = Dispatcher(rq_connection, prefix, replay_ttl=321)
    active = in_store(worker_runtime, lambda store: store.get(match_id))
    with pytest.raises(MatchNotFinished) as refused:
        dispatcher.start_replay(active, None)
    assert str(refused.value) == "Only a finished match can be replayed."
    while (now := in_store(worker_runtime, lambda store: store.get(match_id))).status == "active":
        jobs.turn_timeout(match_id, now.version, min(now.to_act))
    for seat in (2, -1):
        with pytest.raises(NoSuchSeat) as refused:
            dispatcher.start_replay(now, seat)
        assert str(refused.value) == f"This match has no seat {seat}."
    for seat in (None, 0, 1):
        started = dispatcher.start_replay(now, seat)
        job = Job.fetch(started["id"], connection=rq_connection)
        assert (job.func_name, job.args, job.kwargs) == ("workers.jobs.build_replay", (match_id, seat), {})
        assert (job.result_ttl, job.failure_ttl, job.ttl) == (321, 321, 321)
        assert (job.retries_left, job.retry_intervals) == (RULES_RETRIES // 5, [RULES_RETRY_SECONDS])
        assert job.description == f"replay: match {match_id} seat {seat}"
    job.cancel()
    assert dispatcher.start_replay(now, 1)["status"] == "queued"  # a failed replay is enqueued anew


def test_a_job_that_finds_the_store_unavailable_says_so_and_tries_again(caplog):
    """jobs._retrying: a connection error is logged (the job's name without its underscore, the error's type,
    the delay before the next attempt) and the job is run again after that delay. Against the log's text or
    arguments changed and the first delay changed."""
    import logging

    from redis.exceptions import ConnectionError

    from workers.jobs import STORE_RETRY_DELAYS, _retrying

    calls = []

    async def _flaky(value):
        calls.append(time.monotonic())
        if len(calls) == 1:
            raise ConnectionError("gone for a moment")
        return {"value": value}

    with caplog.at_level(logging.WARNING, logger="grimoire.workers"):
        assert _retrying(_flaky, 5) == {"value": 5}
    assert records(caplog, logging.WARNING) == [
        ("store unavailable in %s (%s); trying again in %.2fs", ("flaky", "ConnectionError", STORE_RETRY_DELAYS[0]))]
    assert STORE_RETRY_DELAYS[0] <= calls[1] - calls[0] < STORE_RETRY_DELAYS[1]


def test_a_replay_started_twice_at_once_is_one_job(client, worker_runtime, rq_connection, key_prefix):
    """Two start_replay calls racing: the second does not see the job yet (its look-up comes before the
    first's enqueue), so its enqueue is refused as a duplicate and it answers with the job that is there,
    which stays queued once. Against ``unique`` dropped or False, and the job not looked up again."""
    from workers import jobs
    from workers.dispatch import Dispatcher

    class LateLook(Dispatcher):
        """A dispatcher whose first look-up comes just before another process's enqueue of the same job."""

        missed = False

        def _job(self, job_id):
            if not self.missed:
                self.missed = True
                return None
            return super()._job(job_id)

    match = create(client, "high-card", seed=14)
    match_id = match["id"]
    for name in "ab":
        client.post(f"/v1/matches/{match_id}/seats", json={"name": name})
    while (now := in_store(worker_runtime, lambda store: store.get(match_id))).status == "active":
        jobs.turn_timeout(match_id, now.version, min(now.to_act))
    prefix = own_prefix(key_prefix, "race")
    first = Dispatcher(rq_connection, prefix).start_replay(now, 0)
    enqueued_at = Job.fetch(first["id"], connection=rq_connection).enqueued_at
    assert LateLook(rq_connection, prefix).start_replay(now, 0) == first
    assert Queue(queue_names(prefix)["replays"], connection=rq_connection).job_ids == [first["id"]]
    assert Job.fetch(first["id"], connection=rq_connection).enqueued_at == enqueued_at


def test_a_bot_job_for_a_match_gone_or_behind_drops_its_note(worker_runtime, rq_connection, key_prefix, caplog):
    """play_bot for a match that is gone: ``gone``, and its pending note (match, version, seat) dropped;
    for a match whose store is behind the job's version (a failover lost writes): ``behind``, said with the
    match and both versions. Against the note's member built wrong and the outcome or the log changed."""
    import logging

    from service.store.bots import create_match
    from workers import jobs
    from workers.dispatch import Dispatcher

    dispatcher = Dispatcher(rq_connection, key_prefix)
    dispatcher.connection.zadd(dispatcher.pending_key, {"no-such-match|3|1": 1, "no-such-match|1|3": 1})
    assert jobs.play_bot("no-such-match", 3, 1) == {"outcome": "gone"}
    notes = {k.decode() for k in rq_connection.zrange(dispatcher.pending_key, 0, -1)}
    assert "no-such-match|3|1" not in notes and "no-such-match|1|3" in notes

    async def start(store):
        match = await create_match(store, "high-card", seed=3, bots=[{"seat": 0, "level": "random"}])
        await store.join(match.id, "Ann")
        return match.id

    match_id = in_store(worker_runtime, start)
    with caplog.at_level(logging.WARNING, logger="grimoire.workers"):
        assert jobs.play_bot(match_id, 3, 0) == {"outcome": "behind", "version": 0}
    said = ("match %s is at v%d, behind this bot move's v%d: acknowledged writes were lost; its waiting bot moves "
            "are enqueued again")
    assert records(caplog, logging.WARNING) == [(said, (match_id, 0, 3))]


def test_a_replay_of_a_long_match_reads_its_whole_log(worker_runtime):
    """build_replay (the job) on a match of more than a hundred moves (spells-and-potions, each seat playing
    its first legal action): every entry is replayed, and the replay verifies. Against the log read with a
    smaller limit (the store's default of 100, or 2 * 31)."""
    from workers import jobs

    async def play(store):
        match = await store.create("spells-and-potions", seed=1)
        await store.join(match.id, "Ann")
        match, _, _ = await store.join(match.id, "Bea")
        while match.status == "active":
            seat = min(match.to_act)
            match = (await store.submit(match.id, None, match.version, match.legal_actions(seat)[0],
                                        acting_seat=seat)).match
        return match.id, match.version

    match_id, version = in_store(worker_runtime, play)
    assert version > 100
    replay = jobs.build_replay(match_id, None)
    assert replay["verified"] is True and replay["mismatches"] == []
    assert [frame["version"] for frame in replay["frames"]] == list(range(version + 1))


# -- the third pass over the workers' survivors -------------------------------------------------------------------

def test_a_prefix_is_made_safe_for_rq_character_by_character():
    """_safe (the queue names and job ids of a key prefix): letters of either case, digits, '_' and '-' are
    kept; every other character becomes one '_'. Against the class matched only between literal text, the
    upper-case letters replaced, and a longer replacement."""
    from workers.dispatch import _safe

    assert _safe("Grimoire_TEST-42") == "Grimoire_TEST-42"
    assert _safe("a.b:c d/é") == "a_b_c_d__"
    assert queue_names("Team.A")["bots"] == "Team_A-bots"


def test_a_dispatcher_keeps_replays_an_hour_and_watches_bot_moves_for_30_seconds_by_default(rq_connection,
                                                                                            key_prefix):
    """Dispatcher's defaults (what a dispatcher built without the settings uses): a replay job is kept 3600 s,
    a bot move is retried by the watchdog after 30 s. Against 3601 and 31."""
    from workers.dispatch import Dispatcher

    dispatcher = Dispatcher(rq_connection, own_prefix(key_prefix, "defaults"))
    assert (dispatcher.replay_ttl, dispatcher.watchdog_seconds) == (3600, 30.0)


def test_a_workers_dispatcher_takes_the_replay_lifetime_and_watchdog_period_from_its_settings(settings,
                                                                                              rq_connection, games):
    """Runtime.dispatcher: GRIMOIRE_REPLAY_TTL and GRIMOIRE_BOT_WATCHDOG_SECONDS reach the dispatcher the jobs
    use (other values than the defaults, so that a dropped argument shows). Against ``replay_ttl`` None or
    left to its default."""
    import dataclasses

    rt = runtime.Runtime(dataclasses.replace(settings, replay_ttl=321, bot_watchdog_seconds=7.5), games)
    dispatcher = rt.dispatcher(rq_connection)
    assert (dispatcher.replay_ttl, dispatcher.watchdog_seconds) == (321, 7.5)
    assert dispatcher.connection is rq_connection


def test_the_queue_connection_times_out_after_30_s_on_a_command_and_5_s_on_connecting(settings, games):
    """Runtime.queue_connection: a worker whose queue Redis stops answering gives up a command after 30 s
    (longer than RQ's blocking dequeue would need) and a connection attempt after 5 s, rather than hanging
    for ever. Against either timeout dropped, None, or one second longer."""
    connection = runtime.Runtime(settings, games).queue_connection()
    try:
        options = connection.connection_pool.connection_kwargs
        assert (options["socket_timeout"], options["socket_connect_timeout"]) == (30, 5)
        assert connection.ping()
    finally:
        connection.close()


def test_a_seats_replay_frame_shows_the_private_events_of_its_own_action(games):
    """_frame for a seat: the events of its own action include what only it may see (the card seat 0 played,
    its audience removed), not only what a spectator is shown mid-match. Against the events filtered for a
    spectator (None) instead of the seat."""
    from workers.replay import build_replay

    game = games["high-card"]
    entries, final = played_log(game, 12)
    assert entries[0]["seat"] == 0
    private = [e for e in entries[0]["events"] if e.get("audience") == [0]]
    assert private  # seat 0's own card: the point of this test
    seat0 = build_replay(game, match_id="m-p", options={"rounds": 3}, seats=2, seed=12, entries=entries,
                         final_state=final, seat=0)
    assert seat0["frames"][1]["events"] == [{k: v for k, v in e.items() if k != "audience"}
                                            for e in entries[0]["events"]]
    assert {k: v for k, v in private[0].items() if k != "audience"} in seat0["frames"][1]["events"]


def test_the_retry_warning_names_the_job_without_its_leading_underscores_only(caplog):
    """_retrying's warning names the job as its function's name with the leading underscores stripped, and
    nothing else (a job whose name goes on with an 'X' keeps it). Against other characters stripped too.
    (Its ``AssertionError("unreachable")`` is not reachable: the last delay is None, and that attempt
    returns or raises.)"""
    import logging

    from redis.exceptions import ConnectionError

    from workers.jobs import STORE_RETRY_DELAYS, _retrying

    calls = []

    async def __Xflaky():
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("gone for a moment")
        return {"ok": True}

    with caplog.at_level(logging.WARNING, logger="grimoire.workers"):
        assert _retrying(__Xflaky) == {"ok": True}
    assert records(caplog, logging.WARNING) == [
        ("store unavailable in %s (%s); trying again in %.2fs", ("Xflaky", "ConnectionError", STORE_RETRY_DELAYS[0]))]


def test_a_deferral_lists_every_rules_version_the_worker_has(rq_connection, key_prefix, caplog):
    """_defer's warning lists the rules versions this worker has, comma and space apart (the operator reads
    which release lags). Against another separator."""
    import logging

    from service.store.errors import RulesVersionUnavailable
    from workers import jobs
    from workers.dispatch import Dispatcher

    with caplog.at_level(logging.WARNING, logger="grimoire.workers"):
        jobs._defer(Dispatcher(rq_connection, own_prefix(key_prefix, "two")), "workers.jobs.play_bot", "m-2", 2, 1,
                    RulesVersionUnavailable("high-card", "7", ["5", "6"]))
    assert [args[-1] for _, args in records(caplog, logging.WARNING)] == ["5, 6"]


def bot_match(worker_runtime, game: str, bots: list[dict], humans: tuple[str, ...] = (), seed: int = 3) -> str:
    """A match with these bot seats and humans joined, made on a store without a listener: no job enqueued."""
    from service.store.bots import create_match

    async def start(store):
        match = await create_match(store, game, seed=seed, bots=bots)
        for name in humans:
            await store.join(match.id, name)
        return match.id

    return in_store(worker_runtime, start)


def note(rq_connection, key_prefix: str, member: str) -> tuple[float | None, bytes | None]:
    """A bot move's pending note (its score) and attempts count, in the session's dispatcher keys."""
    return (rq_connection.zscore(f"{key_prefix}:bots:pending", member),
            rq_connection.hget(f"{key_prefix}:bots:attempts", member))


def noted(rq_connection, key_prefix: str, member: str) -> None:
    rq_connection.zadd(f"{key_prefix}:bots:pending", {member: 1})
    rq_connection.hset(f"{key_prefix}:bots:attempts", member, 2)


@contextlib.contextmanager
def job_settings(worker_runtime, **changes):
    """The jobs of this process run with these settings changed, until the block ends."""
    import dataclasses

    runtime.configure(dataclasses.replace(worker_runtime.settings, **changes), worker_runtime.games)
    try:
        yield
    finally:
        runtime.configure(worker_runtime.settings, worker_runtime.games)


class JobsClock:
    """The ``asyncio`` that workers.jobs sees: the real one, but with ``sleep`` (a bot's delay) of the test's
    own. Only the jobs' clock: the service's own loops (live updates' ticks) keep the real one."""

    def __init__(self, sleep):
        self.sleep = sleep

    def __getattr__(self, name):
        import asyncio

        return getattr(asyncio, name)


def test_a_bot_job_for_a_human_seat_or_a_past_version_is_stale_and_plays_nothing(worker_runtime):
    """play_bot with nothing to play: a seat the match waits on but no bot plays (a human's), or a version the
    match has moved past: ``stale`` with the match's version, and no move is made for anyone. Against the
    human-seat check joined by ``and`` (it would play the human's move as a random bot) and the answer's
    ``version`` key renamed."""
    from workers import jobs

    match_id = bot_match(worker_runtime, "high-card", [{"seat": 0, "level": "random"}], ("Ann",))
    assert jobs.play_bot(match_id, 0, 1) == {"outcome": "stale", "version": 0}  # seat 1 is Ann's, to act
    assert jobs.play_bot(match_id, 0, 0)["outcome"] == "played"
    assert jobs.play_bot(match_id, 0, 0) == {"outcome": "stale", "version": 1}
    assert jobs.play_bot(match_id, 1, 1) == {"outcome": "stale", "version": 1}  # still Ann's turn, still hers
    assert in_store(worker_runtime, lambda store: store.get(match_id)).version == 1


def test_a_bot_job_behind_the_store_drops_its_own_note(worker_runtime, rq_connection, key_prefix):
    """play_bot for a version the store is behind (a failover lost writes): the moves are enqueued again, and
    this job's own note and attempts count (match|version|seat) are dropped, so that the watchdog does not
    retry a move of a version that does not exist. Against the note dropped for another seat."""
    from workers import jobs

    match_id = bot_match(worker_runtime, "high-card", [{"seat": 0, "level": "random"}], ("Ann",))
    noted(rq_connection, key_prefix, f"{match_id}|3|0")
    assert jobs.play_bot(match_id, 3, 0) == {"outcome": "behind", "version": 0}
    assert note(rq_connection, key_prefix, f"{match_id}|3|0") == (None, None)


def test_with_replica_acks_a_bot_move_already_made_is_confirmed_before_its_job_ends(worker_runtime, rq_connection,
                                                                                   key_prefix, monkeypatch, caplog):
    """With GRIMOIRE_REPLICA_ACKS on, a bot job that finds its own move made (an earlier attempt's, perhaps
    answered ReplicaAckTimeout) confirms that move, by its match, seat and idempotency key ``bot:v:seat``:
    while no replica confirms it (this Redis has none), the job does not end (ReplicaAckTimeout, tried again,
    its note kept for the watchdog); a stale job whose seat made no move at that version ends ``stale`` at
    once. Against confirm's arguments dropped, None or shifted, and the move submitted without its key
    (nothing left to confirm)."""
    import logging

    import pytest

    from service.store.connect import ReplicaAckTimeout
    from workers import jobs

    assert rq_connection.info("replication")["connected_slaves"] == 0  # no replica: nothing is ever confirmed
    match_id = bot_match(worker_runtime, "high-card", [{"seat": 0, "level": "random"}], ("Ann",))
    assert jobs.play_bot(match_id, 0, 0)["outcome"] == "played"  # acks off: the move is made, keyed bot:0:0
    noted(rq_connection, key_prefix, f"{match_id}|0|0")
    monkeypatch.setattr(jobs, "STORE_RETRY_DELAYS", (0.01,))
    with job_settings(worker_runtime, replica_acks=1, replica_wait_ms=50):
        with caplog.at_level(logging.WARNING, logger="grimoire.workers"), pytest.raises(ReplicaAckTimeout):
            jobs.play_bot(match_id, 0, 0)
        assert [args[:2] for _, args in records(caplog, logging.WARNING)] == [("play_bot", "ReplicaAckTimeout")]
        assert note(rq_connection, key_prefix, f"{match_id}|0|0") == (1, b"2")  # not done: the watchdog retries
        assert jobs.play_bot(match_id, 0, 1) == {"outcome": "stale", "version": 1}  # Ann's seat: no bot move
    assert jobs.play_bot(match_id, 0, 0) == {"outcome": "stale", "version": 1}  # acks off: nothing to wait for
    assert note(rq_connection, key_prefix, f"{match_id}|0|0") == (None, None)


def test_a_bots_draw_is_seeded_by_match_version_seat_and_salt_on_either_path(worker_runtime):
    """A bot's move is the choice of its level with ``random.Random("match|version|seat|salt")`` (the salt: the
    seat's secret token hash): a retry plays the same move, players cannot foresee it. On both paths: a seat's
    own level (seat 0, ``random``) and the random fallback of a level this worker does not know (seat 1,
    ``grandmaster``, as a newer release could store). Moves are played until a draw with each part missing
    would have differed, for each seat. Against the version, the match, the seat or the salt left out."""
    import json

    from workers import bots, jobs

    match_id = bot_match(worker_runtime, "casting-stones", [{"seat": 0, "level": "random"},
                                                           {"seat": 1, "level": "random"}], seed=5)
    grandmaster(worker_runtime, match_id, 1)
    parts = ("match", "version", "seat", "salt")
    told_apart = {(seat, part): False for seat in (0, 1) for part in parts}
    for _ in range(40):
        match = in_store(worker_runtime, lambda store: store.get(match_id))
        if all(told_apart.values()) or match.status != "active":
            break
        (seat,) = match.to_act
        version, salt = match.version, jobs._salt(match, seat)
        bot_input = bots.BotInput(game="casting-stones", seat=seat, view=match.view(seat),
                                  legal_actions=match.legal_actions(seat))
        draw = {"all": (match_id, version, seat, salt), "match": (None, version, seat, salt),
                "version": (match_id, None, seat, salt), "seat": (match_id, version, None, salt),
                "salt": (match_id, version, seat, None)}
        chosen = {k: bots.choose("random", bot_input, jobs._rng(*args)) for k, args in draw.items()}
        assert jobs.play_bot(match_id, version, seat) == {"outcome": "played", "level": "random",
                                                          "version": version + 1}
        ((_, fields),) = in_store(worker_runtime,
                                  lambda store, after=version: store.log_entries(match_id, after=after, limit=1))
        assert (int(fields["seat"]), json.loads(fields["action"])) == (seat, chosen["all"])
        for part in parts:
            told_apart[seat, part] |= chosen[part] != chosen["all"]
    assert all(told_apart.values()), told_apart


def grandmaster(worker_runtime, match_id: str, seat: int) -> None:
    """Give ``seat``'s bot a level this worker does not know (one a newer release might add)."""
    import json

    async def change(store):
        info = json.loads(await store.redis.hget(store.key(match_id), f"seat:{seat}"))
        info["bot"]["level"] = "grandmaster"
        await store.redis.hset(store.key(match_id), f"seat:{seat}", json.dumps(info))

    in_store(worker_runtime, change)


def test_a_bot_level_that_fails_is_logged_with_its_level_match_and_version(worker_runtime, caplog):
    """A bot level that fails (here one this worker does not know) is played as ``random`` -- the match must
    not stall -- and said so as an error with its traceback, naming the level, the match and the version.
    Against the message's text changed and the level left out of it."""
    import logging

    from workers import jobs

    match_id = bot_match(worker_runtime, "casting-stones", [{"seat": 0, "level": "random"}], ("Ann",), seed=6)
    grandmaster(worker_runtime, match_id, 0)
    with caplog.at_level(logging.ERROR, logger="grimoire.workers"):
        assert jobs.play_bot(match_id, 0, 0) == {"outcome": "played", "level": "random", "version": 1}
    assert records(caplog, logging.ERROR) == [
        ("bot level %s failed in match %s at v%d; playing a random move", ("grandmaster", match_id, 0))]
    assert [r.exc_info is not None for r in caplog.records if r.name == "grimoire.workers"] == [True]


def test_bot_delay_ms_is_milliseconds(worker_runtime, monkeypatch):
    """GRIMOIRE_BOT_DELAY_MS: a bot waits that many milliseconds before it submits (250 ms: 0.25 s), read
    from a clock that only records. Against None, ``* 1000`` and ``/ 1001``."""
    from workers import jobs

    waited = []

    async def sleep(delay, result=None):
        waited.append(delay)
        return result

    match_id = bot_match(worker_runtime, "casting-stones", [{"seat": 0, "level": "random"}], ("Ann",), seed=7)
    monkeypatch.setattr(jobs, "asyncio", JobsClock(sleep))
    with job_settings(worker_runtime, bot_delay_ms=250):
        assert jobs.play_bot(match_id, 0, 0)["outcome"] == "played"
    assert waited == [0.25]


def test_the_same_bot_move_run_twice_at_once_is_played_once_and_answered_duplicate(worker_runtime, monkeypatch):
    """Two attempts of one bot move (a watchdog retry of a job that was only slow) that both read the match
    before either submits (held together in the bot's delay): the first plays it, the second is answered
    from the move's idempotency key ``bot:v:seat`` as ``duplicate`` (same level, same version), and the match
    moved once. Against the move submitted without its key (the second would be a conflict), the duplicate
    flag ignored, and the outcome's name changed."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from workers import jobs

    both_chosen = threading.Barrier(2, timeout=10)

    async def sleep(delay, result=None):
        both_chosen.wait()
        return result

    match_id = bot_match(worker_runtime, "casting-stones", [{"seat": 0, "level": "random"}], ("Ann",), seed=8)
    monkeypatch.setattr(jobs, "asyncio", JobsClock(sleep))
    with job_settings(worker_runtime, bot_delay_ms=100), ThreadPoolExecutor(2) as pool:
        attempts = [pool.submit(jobs.play_bot, match_id, 0, 0) for _ in range(2)]
        outcomes = [attempt.result(timeout=30) for attempt in attempts]
    assert sorted(outcomes, key=lambda o: o["outcome"]) == [
        {"outcome": "duplicate", "level": "random", "version": 1},
        {"outcome": "played", "level": "random", "version": 1}]
    assert in_store(worker_runtime, lambda store: store.get(match_id)).version == 1


def test_a_bot_move_that_loses_the_compare_and_set_answers_conflict_and_drops_its_note(
        worker_runtime, rq_connection, key_prefix, monkeypatch):
    """A bot move whose version another move took while the bot chose (the human of a high-card match, both
    to act at v0, plays during the bot's delay): ``{"outcome": "conflict", "version": 1}`` (the move that won
    enqueued what comes next), and its note and attempts count dropped. Against the answer's keys or outcome
    renamed and ``done`` called without the match, the version or the seat."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from workers import jobs

    match_id = bot_match(worker_runtime, "high-card", [{"seat": 0, "level": "random"}], ("Ann",), seed=9)
    noted(rq_connection, key_prefix, f"{match_id}|0|0")
    chosen, release = threading.Event(), threading.Event()

    async def sleep(delay, result=None):  # the bot's delay, held until the human has played
        chosen.set()
        release.wait(10)
        return result

    async def human_plays(store):
        match = await store.get(match_id)
        return (await store.submit(match_id, None, 0, match.legal_actions(1)[0], acting_seat=1)).version

    monkeypatch.setattr(jobs, "asyncio", JobsClock(sleep))
    with job_settings(worker_runtime, bot_delay_ms=100), ThreadPoolExecutor(1) as pool:
        attempt = pool.submit(jobs.play_bot, match_id, 0, 0)
        try:
            assert chosen.wait(10), "the bot never reached its delay"
            assert in_store(worker_runtime, human_plays) == 1
        finally:
            release.set()
        outcome = attempt.result(timeout=30)
    assert outcome == {"outcome": "conflict", "version": 1}
    assert note(rq_connection, key_prefix, f"{match_id}|0|0") == (None, None)
