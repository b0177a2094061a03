"""The players' jobs: bookkeeping when a match with players ends, rating updates, quick-match sweeps.

``match_finished(match_id)``
    Enqueued by the dispatcher (workers/dispatch.py) when a match with seats bound to players
    finishes, or when a player abandons a rated match. It moves the match to each player's
    finished matches and, for a rated match that is over (or that everyone but one player has
    abandoned), applies the rating update exactly once (service/store/ratings.py): the job may
    run twice or be killed half-way and retried, the update lands once.
``sweep_quick_matches()``
    Pairs the quick-match queues again as their windows widen, fills late groups with bots and
    makes the matches of groups whose maker died (service/store/quickmatch.py). Every
    ``grimoire worker`` runs it about once a second (workers/runtime.py); running it in several
    workers at once is safe.
"""

from __future__ import annotations

import logging
from typing import Any

from service.store import MatchNotFound
from service.store.players import PlayerStore
from service.store.quickmatch import QuickMatch
from service.store.ratings import rate_match, rateable

from .jobs import _retrying
from .runtime import runtime

log = logging.getLogger("grimoire.workers")


def match_finished(match_id: str) -> dict[str, Any]:
    return _retrying(_match_finished, match_id)


async def _match_finished(match_id: str, *, crash_after: int | None = None) -> dict[str, Any]:
    rt = runtime()
    async with rt.store() as store:
        players = PlayerStore(store)
        try:
            match = await store.get(match_id)
        except MatchNotFound:
            return {"outcome": "gone"}
        outcome: dict[str, Any] = {"outcome": "noted"}
        if rateable(match):
            plan = await rate_match(players, match, crash_after=crash_after)
            outcome = {"outcome": "rated", "players": sorted(plan["players"])}
        if match.status == "finished":
            for player_id in {s.player for s in match.seats if s.player} | set(match.abandoned.values()):
                await players.finished(player_id, match_id)
        return outcome


def sweep_quick_matches() -> int:
    return _retrying(_sweep_quick_matches)


async def _sweep_quick_matches() -> int:
    rt = runtime()
    async with rt.store() as store:
        return await QuickMatch(PlayerStore(store), rt.settings.quick_match_bot_level).sweep()
