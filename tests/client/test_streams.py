"""The match stream through a restart of the service: every update once, in order, none missed."""

from __future__ import annotations

import logging
import threading

from grimoire.client import Bot, Client, Retry


def test_follow_resumes_after_the_service_restarts_mid_match(stack, caplog):
    caplog.set_level(logging.WARNING, logger="grimoire.client")
    with Client(stack.url, retry=Retry(within=300)) as grimoire:  # a restart on a loaded machine: up to a minute
        # two server bots (100 ms a move, tests/client/conftest.py): ~170 actions, some while the service is down
        match = grimoire.create_match("spells-and-potions", variant="ritual", seed=5,
                                      bots=[Bot("greedy", seat=0), Bot("random", seat=1)])
        spectator = grimoire.watch(match.id)
        restart = threading.Thread(target=stack.restart)
        restarts = stack.restarts
        updates, after_restart = [], 0
        for update in spectator.follow(after=0):
            updates.append(update)
            if update.version == 5 and restart.ident is None:
                restart.start()  # SIGTERM now, while this stream is open; a new service on the port later
            after_restart += restart.ident is not None and not restart.is_alive()
        restart.join()

        assert stack.restarts == restarts + 1
        final = spectator.view()
        assert final.status == "finished" and updates[-1].status == "finished"
        assert [u.version for u in updates] == list(range(1, final.version + 1)), "an update missed or repeated"
        assert after_restart > 0, "the match ended before the service was back: nothing was followed after it"
        history = spectator.history(limit=1000)
        assert [(u.version, u.seat, u.events) for u in updates] == [(e.version, e.seat, e.events) for e in history]
    resumed = [r.getMessage() for r in caplog.records if "resuming after" in r.getMessage()]
    assert resumed, "the stream was never opened again"
    assert all("resuming after None" not in message for message in resumed[1:])
