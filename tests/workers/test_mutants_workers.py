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
