"""The store's compare-and-set and idempotency when two submissions really overlap.

The store checks the version (and the idempotency key) twice: once in Python
on the snapshot it read, and again inside ``commit.lua``. Sequential tests only
ever exercise the first check; these hold both submissions at the commit, after
each has read its snapshot, so only the atomic script can decide.
"""

import asyncio
import json

import pytest

from service.store import VersionConflict
from tests.store.test_matches import anyio_backend, raw, started, store  # noqa: F401 (fixtures)
from tests.support.high_card import GAME

pytestmark = pytest.mark.anyio


def hold_commits(store, count: int) -> None:
    """Make ``count`` submissions wait at the commit until all of them have read their snapshot.

    The barrier sits just before ``EVALSHA``: each waiting submission has done its reads and its
    ``game.apply``, so whichever commits second does so on a snapshot that is already out of date.
    """
    barrier = asyncio.Barrier(count)
    commit = store._commit

    async def held(*args, **kwargs):
        await asyncio.wait_for(barrier.wait(), 10)  # a submission that never overlaps fails, never hangs
        return await commit(*args, **kwargs)

    store._commit = held


async def test_a_submission_read_before_a_competing_commit_is_refused_by_the_commit(store):
    """Compare-and-set: of two submissions read at the same version, the one committing second is a
    VersionConflict, and the stored match is exactly the first one's (no lost update)."""
    match, (t0, t1) = await started(store, seed=4)
    plays = [GAME.legal_actions(match.state, 0)[0], GAME.legal_actions(match.state, 1)[0]]
    hold_commits(store, 2)
    outcomes = await asyncio.gather(store.submit(match.id, t0, 0, plays[0]), store.submit(match.id, t1, 0, plays[1]),
                                    return_exceptions=True)
    won = [o for o in outcomes if not isinstance(o, Exception)]
    lost = [o for o in outcomes if isinstance(o, Exception)]
    assert len(won) == 1 and won[0].version == 1
    assert len(lost) == 1 and isinstance(lost[0], VersionConflict) and lost[0].current_version == 1
    winner = won[0].seat
    state, _ = GAME.apply(match.state, winner, plays[winner])
    stored = await store.get(match.id)
    assert (stored.version, stored.state) == (1, state)
    _, log = await raw(store, match.id)
    assert [(entry_id, int(fields["seat"])) for entry_id, fields in log] == [("1-0", winner)]


async def test_two_concurrent_submissions_with_one_idempotency_key_both_get_the_first_outcome(store):
    """Idempotency: the same request sent twice at once (a client's retry racing its original) is
    applied once, and both get the first outcome: the same version and events, one of them marked a
    duplicate -- never a version conflict for the retry."""
    match, (t0, _) = await started(store, seed=6)
    action = GAME.legal_actions(match.state, 0)[0]
    hold_commits(store, 2)
    first, second = await asyncio.gather(store.submit(match.id, t0, 0, action, "retry-1"),
                                         store.submit(match.id, t0, 0, action, "retry-1"))
    assert (first.version, first.events) == (second.version, second.events)
    assert first.version == 1 and sorted([first.duplicate, second.duplicate]) == [False, True]
    _, log = await raw(store, match.id)
    assert [entry_id for entry_id, _ in log] == ["1-0"]
    assert json.loads(log[0][1]["events"]) == first.events
