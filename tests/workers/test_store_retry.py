"""Issue #23, item 11: a bot job that meets an unavailable store tries again after a short backoff
instead of failing and leaving the bot still until the watchdog's sweep."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
import time

from service.store.bots import create_match
from service.store.embedded import EmbeddedRedis, free_port
from workers import jobs, runtime


def test_a_bot_job_waits_out_a_store_outage_and_plays(tmp_path, settings, games, caplog):
    port = free_port()
    server = EmbeddedRedis(tmp_path / "redis", port=port)
    previous = runtime.runtime()
    rt = runtime.configure(dataclasses.replace(settings, redis_url=server.url, queue_redis_url=""), games)

    async def new_match() -> str:
        async with rt.store() as store:
            match = await create_match(store, "high-card", bots=[{"seat": 0, "level": "random"}])
            await store.join(match.id, "Ann")
            return match.id

    try:
        match_id = asyncio.run(new_match())
        server.stop()  # the store goes away just as the bot's job starts ...
        caplog.set_level(logging.WARNING, logger="grimoire.workers")
        outcomes = []
        job = threading.Thread(target=lambda: outcomes.append(jobs.play_bot(match_id, 0, 0)))
        job.start()
        time.sleep(1.0)
        # ... and is back a second later (started from this thread: the server dies with the thread that
        # started it)
        server = EmbeddedRedis(tmp_path / "redis", port=port)
        job.join(timeout=15)
        assert outcomes and outcomes[0]["outcome"] == "played" and outcomes[0]["version"] == 1, outcomes
        assert any("store unavailable in play_bot" in r.getMessage() for r in caplog.records)
        # the retry of a move that did land is a duplicate, never a second move
        assert jobs.play_bot(match_id, 0, 0)["outcome"] == "stale"
    finally:
        runtime.configure(previous.settings, previous.games)
        server.stop()


def test_a_bot_move_lost_in_a_failover_is_played_again(client, drain, worker_runtime, rq_connection, key_prefix):
    """Issue #23, item 11: without replica acks a failover can lose an acknowledged bot move. The job its
    commit had enqueued then finds the match behind it, and enqueues the lost version's move anew (its
    own job ran and is done: neither the listener nor the watchdog would play it again)."""
    from rq import Queue

    from workers.dispatch import queue_names

    created = client.post("/v1/matches", json={"game": "high-card", "seed": 5,
                                               "bots": [{"seat": 0, "level": "random"}]}).json()
    match_id = created["id"]
    client.post(f"/v1/matches/{match_id}/seats", json={"name": "Ann"})  # starts: the bot is to act at v0
    # As if the v0 move's job had run, its write been acknowledged and then lost with its master:
    Queue(queue_names(key_prefix)["bots"], connection=rq_connection).empty()
    worker_runtime.dispatcher(rq_connection).done(match_id, 0, 0)
    outcome = jobs.play_bot(match_id, 1, 0)  # the job the lost commit enqueued for its next version
    assert outcome == {"outcome": "behind", "version": 0}
    drain()
    played = client.get(f"/v1/matches/{match_id}").json()
    assert played["version"] == 1 and 0 not in played["to_act"]
