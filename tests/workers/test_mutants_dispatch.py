"""What the dispatcher does after each commit (workers/dispatch.py, ``Dispatcher.__call__``), one
case per branch: the mutation run's survivors there (issue #23) changed which ending gets its players'
bookkeeping job, and whether a human seat's turn timer is scheduled."""

from __future__ import annotations

import asyncio
import copy

from rq import Queue

from tests.workers.test_mutants_workers import create, in_store, own_prefix, scheduled
from workers.dispatch import Dispatcher, queue_names


def _dispatched(rq_connection, prefix: str, match) -> tuple[list[str], list[str]]:
    """The ids of the jobs ``Dispatcher.__call__(match)`` put on the bots queue and scheduled as timers."""
    asyncio.run(Dispatcher(rq_connection, prefix)(match))
    names = queue_names(prefix)
    bots = sorted(Queue(names["bots"], connection=rq_connection).job_ids)
    return bots, sorted(scheduled(rq_connection, names["timers"]))


def test_a_match_with_players_that_ends_or_is_abandoned_gets_its_players_job_and_no_other(
        client, worker_runtime, rq_connection, key_prefix):
    match_id = create(client, "high-card", seed=5)["id"]
    for name in "ab":
        client.post(f"/v1/matches/{match_id}/seats", json={"name": name})
    active = in_store(worker_runtime, lambda store: store.get(match_id))
    assert active.status == "active" and not active.abandoned and active.turn_seconds is None

    finished = copy.deepcopy(active)
    finished.status, finished.to_act = "finished", []
    prefix = own_prefix(key_prefix, "ended-anonymous")
    assert _dispatched(rq_connection, prefix, finished) == ([], [])  # nobody's record to update

    finished.seats[1].player = "p-someone"
    prefix = own_prefix(key_prefix, "ended-player")
    assert _dispatched(rq_connection, prefix, finished) == ([f"{prefix}-players-{match_id}-finished"], [])

    abandoned = copy.deepcopy(active)
    abandoned.abandoned = {0: "p-leaver"}  # a rated match a player left: the bookkeeping runs before the end
    prefix = own_prefix(key_prefix, "abandoned")
    bots, timers = _dispatched(rq_connection, prefix, abandoned)
    assert f"{prefix}-players-{match_id}-abandoned-1" in bots and timers == []

    playing = copy.deepcopy(active)
    playing.seats[0].player = "p-someone"  # still active: nothing to book yet
    prefix = own_prefix(key_prefix, "playing")
    assert _dispatched(rq_connection, prefix, playing) == ([], [])


def test_human_seats_to_act_get_a_turn_timer_only_when_the_match_has_one(client, worker_runtime, rq_connection,
                                                                       key_prefix):
    match_id = create(client, "high-card", seed=6, turn_seconds=30)["id"]
    for name in "ab":
        client.post(f"/v1/matches/{match_id}/seats", json={"name": name})
    timed = in_store(worker_runtime, lambda store: store.get(match_id))
    assert timed.status == "active" and timed.turn_seconds == 30 and timed.to_act

    prefix = own_prefix(key_prefix, "timed")
    expected = sorted(f"{prefix}-timer-{match_id}-{timed.version}-{seat}" for seat in timed.to_act)
    assert _dispatched(rq_connection, prefix, timed) == ([], expected)

    untimed = copy.deepcopy(timed)
    untimed.turn_seconds = None
    prefix = own_prefix(key_prefix, "untimed")
    assert _dispatched(rq_connection, prefix, untimed) == ([], [])
