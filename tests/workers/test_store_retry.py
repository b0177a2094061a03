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
