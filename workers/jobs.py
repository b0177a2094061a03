"""The RQ jobs: plain functions, enqueued by name (workers/dispatch.py).

``play_bot(match_id, version, seat)``
    The bot of ``seat`` acts at ``version``. It loads the match; if the match
    has moved on (or the seat is no longer to act) there is nothing to do. Else
    it gives the bot its seat's view and legal actions -- nothing else -- and
    submits the choice through :meth:`MatchStore.submit` at ``version``, with an
    idempotency key of (version, seat): a version conflict is not an error (the
    move that won the race enqueued whatever comes next). ``seat`` may be
    ``BOARD_SEAT``: the board itself, played by the ``board`` bot from the
    spectator's view and the board's legal actions.
``turn_timeout(match_id, version, seat)``
    The turn timer: if ``seat`` has not acted since ``version`` and is still to
    act, play its default -- a ``pass`` where one is legal, else the ``random``
    bot's choice -- and record that it did, in the same log entry (its ``auto``
    field: history, live updates and replays show it).
``build_replay(match_id, seat)``
    Re-apply a finished match's log to its seed (workers/replay.py).

A worker that lacks the rules version a match was created with (a rolling deployment:
docs/operations.md) never plays, times or replays it with other rules: a bot move or turn
timer is enqueued again a little later (:meth:`Dispatcher.defer`) for a worker that has it, and
a replay job fails and is retried (its enqueue carries an RQ ``Retry``).

Each returns a short JSON-able outcome, kept by RQ as the job's result.

A job that finds the store unavailable (Redis restarting, a cluster replica
being promoted) tries again on a fresh connection after a short backoff
(:data:`STORE_RETRY_DELAYS`, about 16 s in all) rather than failing and waiting
for the watchdog: every job is idempotent (a bot's choice is a function of the
match, version and seat; its submission carries an idempotency key), so a
retry of a move that did land is answered as a duplicate.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import Any

from service.metrics import time_bot_move
from service.store import MatchNotFound, VersionConflict
from service.store.archive import log_update
from service.store.connect import STORE_UNAVAILABLE
from service.store.errors import RulesVersionUnavailable

from service.engine import BOARD_SEAT

from . import bots
from .dispatch import bot_level
from .replay import build_replay as replay_of
from .runtime import runtime

log = logging.getLogger("grimoire.workers")


#: Seconds between attempts of a job that found the store unavailable: long enough for a failover
#: (cluster-node-timeout, the election, and with replica acks the dead node's return as a replica:
#: 8 s was too short for that in tests/ops/test_failover.py).
STORE_RETRY_DELAYS = (0.25, 0.5, 1.0, 2.0, 4.0, 4.0, 4.0)


def _retrying(job, *args) -> dict[str, Any]:
    """Run the coroutine function ``job(*args)``, again on a fresh connection while the store is unavailable."""
    for delay in (*STORE_RETRY_DELAYS, None):
        try:
            return asyncio.run(job(*args))
        except STORE_UNAVAILABLE as error:
            if delay is None:
                raise
            log.warning("store unavailable in %s (%s); trying again in %.2fs", job.__name__.lstrip("_"),
                        type(error).__name__, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


def _rng(match_id: str, version: int, seat: int, salt: str) -> random.Random:
    """The bot's randomness: the same for a retry of the same move, unknown to the players."""
    return random.Random(f"{match_id}|{version}|{seat}|{salt}")


def _salt(match, seat: int) -> str:
    """A secret of the match the players cannot read: the bot seat's thrown-away token hash; for the
    board itself (no seat, no token) the match's seed, shown only once the match is over, so nobody
    foresees how the lot breaks the board's ties -- unless the creator chose the seed, which makes every
    draw of the match foreseeable anyway (as the board's lot was when the rules drew it)."""
    if seat == BOARD_SEAT:
        return str(match.seed)
    return match.seats[seat].token_hash or ""


def _deferrals() -> int:
    """How many times the running job was deferred already for want of its match's rules version."""
    from rq import get_current_job

    job = get_current_job()
    return int((job.meta if job is not None else {}).get("deferrals", 0))


def _defer(dispatcher, function: str, match_id: str, version: int, seat: int,
           error: RulesVersionUnavailable) -> dict[str, Any]:
    log.warning("%s: match %s plays %s rules version %s, which this worker lacks (it has %s); deferred",
                function.rsplit(".", 1)[1], match_id, error.game_id, error.rules_version,
                ", ".join(error.installed) or "none")
    deferred = dispatcher.defer(function, match_id, version, seat, _deferrals())
    return {"outcome": "rules_version_unavailable", "rules_version": error.rules_version, "deferred": deferred}


def play_bot(match_id: str, version: int, seat: int) -> dict[str, Any]:
    return _retrying(_play_bot, match_id, version, seat)


async def _play_bot(match_id: str, version: int, seat: int) -> dict[str, Any]:
    rt = runtime()
    dispatcher = rt.dispatcher()
    async with rt.store(dispatcher) as store:
        try:
            match = await store.get(match_id)
        except MatchNotFound:
            dispatcher.done(match_id, version, seat)
            return {"outcome": "gone"}
        except RulesVersionUnavailable as error:  # its pending note stays: the watchdog covers it too
            return _defer(dispatcher, "workers.jobs.play_bot", match_id, version, seat, error)
        level = bot_level(match, seat)
        if match.status == "active" and match.version < version:
            # The store is behind the move that enqueued this job: a failover without replica acks lost
            # acknowledged writes. The jobs of the versions it is back at have run and are done, so neither
            # the store's listener nor the watchdog would play them again: enqueue them anew.
            log.warning("match %s is at v%d, behind this bot move's v%d: acknowledged writes were lost; "
                        "its waiting bot moves are enqueued again", match_id, match.version, version)
            dispatcher.enqueue_lost(match)
            dispatcher.done(match_id, version, seat)
            return {"outcome": "behind", "version": match.version}
        if match.status != "active" or match.version != version or seat not in match.to_act or level is None:
            if match.version > version and store.replica_acks:
                # an earlier attempt's move may stand unconfirmed (ReplicaAckTimeout): a failover could still
                # take it back, and no other job would play this version again; retry until it is confirmed
                await store.confirm(match_id, seat, f"bot:{version}:{seat}")
            dispatcher.done(match_id, version, seat)
            return {"outcome": "stale", "version": match.version}
        bot_input = bots.BotInput(game=match.game.id, seat=seat, view=match.view(bots.viewer(seat)),
                                  legal_actions=match.legal_actions(seat))
        salt = _salt(match, seat)
        try:
            with time_bot_move(match.game.id):
                action = bots.choose(level, bot_input, _rng(match_id, version, seat, salt))
        except Exception:  # a bug in a heuristic must not stall the match: play as the random level
            log.exception("bot level %s failed in match %s at v%d; playing a random move", level, match_id, version)
            level = "random"
            action = bots.choose(level, bot_input, _rng(match_id, version, seat, salt))
        if rt.settings.bot_delay_ms:
            await asyncio.sleep(rt.settings.bot_delay_ms / 1000)
        try:
            accepted = await store.submit(match_id, None, version, action, f"bot:{version}:{seat}",
                                          acting_seat=seat)
        except VersionConflict as conflict:
            dispatcher.done(match_id, version, seat)
            return {"outcome": "conflict", "version": conflict.current_version}
        dispatcher.done(match_id, version, seat)
        return {"outcome": "duplicate" if accepted.duplicate else "played", "level": level,
                "version": accepted.version}


def default_action(legal: list[dict], bot_input: bots.BotInput | None, rng: random.Random) -> tuple[dict, str]:
    """A late seat's default: a ``pass`` where one is legal, else the ``random`` bot's choice."""
    passes = [action for action in legal if action.get("type") == "pass"]
    if passes:
        return passes[0], "pass"
    return bots.choose("random", bot_input or bots.BotInput("", 0, {}, legal), rng), "random"


def turn_timeout(match_id: str, version: int, seat: int) -> dict[str, Any]:
    return _retrying(_turn_timeout, match_id, version, seat)


async def _turn_timeout(match_id: str, version: int, seat: int) -> dict[str, Any]:
    rt = runtime()
    dispatcher = rt.dispatcher()
    async with rt.store(dispatcher) as store:
        try:
            match = await store.get(match_id)
        except MatchNotFound:
            return {"outcome": "gone"}
        except RulesVersionUnavailable as error:
            return _defer(dispatcher, "workers.jobs.turn_timeout", match_id, version, seat, error)
        if match.status != "active" or seat not in match.to_act:
            return {"outcome": "stale"}
        acted = await store.history(match_id, seat, after=version, limit=1000)
        if any(entry.seat == seat for entry in acted):
            return {"outcome": "acted"}
        bot_input = bots.BotInput(game=match.game.id, seat=seat, view=match.view(seat),
                                  legal_actions=match.legal_actions(seat))
        action, default = default_action(bot_input.legal_actions, bot_input, _rng(match_id, match.version, seat, "t"))
        record = {"seat": seat, "reason": "turn_timeout", "default": default, "turn_seconds": match.turn_seconds}
        try:
            accepted = await store.submit(match_id, None, match.version, action, f"timer:{match.version}:{seat}",
                                          acting_seat=seat, auto=record)
        except VersionConflict:
            return {"outcome": "conflict"}  # someone acted meanwhile; the next version has its own timer
        player = match.seats[seat].player
        if match.rated and player and seat not in match.abandoned:
            # lost on time: in a rated match, a player whose turn timed out has abandoned it (the rating counts
            # that a loss: service/players/ratings.py), recorded once the default stands
            await store.redis.hset(store.key(match_id), f"abandoned:{seat}", player)
            accepted.match.abandoned[seat] = player
            await asyncio.to_thread(dispatcher.players_job, accepted.match)
        return {"outcome": "played", "default": default, "version": accepted.version}


def build_replay(match_id: str, seat: int | None) -> dict[str, Any]:
    return _retrying(_build_replay, match_id, seat)


async def _build_replay(match_id: str, seat: int | None) -> dict[str, Any]:
    rt = runtime()
    async with rt.store() as store:
        match = await store.get(match_id)
        raw = await store.log_entries(match_id, after=0, limit=2**31)  # the stream and its compacted archive
    entries = [vars(log_update(match_id, entry_id, fields)) for entry_id, fields in raw]
    return replay_of(match.game, match_id=match_id, options=match.options, seats=len(match.seats), seed=match.seed,
                     entries=entries, final_state=match.state, seat=seat)
