"""The workers where the mutation run (tests/mutation/run.py) found them untested: re-enqueueing the bot
moves a failover lost, the players' bookkeeping job, the embedded worker of ``grimoire serve``.

Real Redis, real RQ queues and workers; each test names the faults it stands against."""

from __future__ import annotations

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
