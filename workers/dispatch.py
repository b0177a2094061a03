"""Enqueueing work on the RQ queues, and the watchdog that recovers lost bot jobs.

Queues (on ``settings.queue_redis_url``, which defaults to the match Redis:
RQ does not support Redis Cluster) are named after the key prefix, so several
deployments or test runs can share a Redis: ``<prefix>-bots``,
``<prefix>-timers`` and ``<prefix>-replays``.

Job ids are derived from what they do, and enqueued with ``unique=True``:

* ``<prefix>-bot-<match>-<version>-<seat>[-r<attempt>]``: the bot of ``seat``
  acts at ``version``. A second enqueue of the same id is refused by RQ, and
  the job itself submits at ``version`` through the store's compare-and-set
  with an idempotency key of (version, seat): a move is never played twice.
  The board itself (``BOARD_SEAT``, -1: McGonagall's colour that no player
  holds) is played the same way by the ``board`` bot, with ``board`` in
  place of the seat number (``...-<version>-board``).
* ``<prefix>-timer-<match>-<version>-<seat>``: the turn timer of ``seat``.
* ``<prefix>-replay-<match>-<seat|spectator>``: a replay.

Every bot job enqueued is also noted in the sorted set
``<prefix>:bots:pending`` (member ``match|version|seat``, score: when). The
job removes its note when it is done; the watchdog (:func:`sweep`, run by every
``grimoire worker`` under a lock) re-enqueues, as a new attempt, every note
older than ``bot_watchdog_seconds`` whose bot still has not acted and whose
job is not simply waiting in the queue -- a job lost with a killed worker, or
one that failed.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from datetime import timedelta
from typing import Any

import redis
from rq import Queue, Retry
from rq.exceptions import DuplicateJobError, NoSuchJobError
from rq.job import Job, JobStatus

from service.engine import BOARD_SEAT
from service.logs import job_meta
from service.store import Match, MatchNotFinished, MatchNotFound, NoSuchSeat, ReplayNotFound
from service.store.errors import RulesVersionUnavailable, UnknownGame

from . import bots

log = logging.getLogger("grimoire.workers")

#: Attempts of one bot move (the first and the watchdog's retries) before it gives up and logs an error.
MAX_ATTEMPTS = 5
#: How long a finished bot or timer job is remembered (a repeat enqueue of its id is refused meanwhile).
JOB_MEMORY = 3600
#: A job whose worker lacks the match's rules version (a rolling deployment: docs/operations.md) is tried
#: again this many seconds later, up to this many times, so that a worker that has it plays it.
RULES_RETRY_SECONDS = 2
RULES_RETRIES = 150


def _safe(prefix: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", prefix)


def queue_names(prefix: str) -> dict[str, str]:
    p = _safe(prefix)
    return {"bots": f"{p}-bots", "timers": f"{p}-timers", "replays": f"{p}-replays"}


def bot_job_id(prefix: str, match_id: str, version: int, seat: int, attempt: int = 0) -> str:
    base = f"{_safe(prefix)}-bot-{match_id}-{version}-{'board' if seat == BOARD_SEAT else seat}"
    return base if attempt == 0 else f"{base}-r{attempt}"


def bot_level(match: Match, seat: int) -> str | None:
    """The bot level that plays ``seat``: the seat's bot, the ``board`` bot for the board itself
    (``BOARD_SEAT``: never ``match.seats[-1]``, which is the last seat), None for a human seat."""
    if seat == BOARD_SEAT:
        return bots.BOARD_LEVEL
    return match.seats[seat].bot


def timer_job_id(prefix: str, match_id: str, version: int, seat: int) -> str:
    return f"{_safe(prefix)}-timer-{match_id}-{version}-{seat}"


def replay_job_id(prefix: str, match_id: str, seat: int | None) -> str:
    return f"{_safe(prefix)}-replay-{match_id}-{'spectator' if seat is None else seat}"


class Dispatcher:
    """Puts bot moves, turn timers and replays on the queues. One per process.

    As a store listener (``store.listeners.append(dispatcher)``) it is called
    after every accepted action and join: it enqueues a move for each bot seat
    the match now waits on (and for the board itself, ``BOARD_SEAT``), and a
    turn timer for each human seat when the match has one. ``connection`` is a synchronous Redis client without
    ``decode_responses`` (RQ's requirement).
    """

    def __init__(self, connection: redis.Redis, prefix: str, *, replay_ttl: int = 3600,
                 watchdog_seconds: float = 30.0):
        self.connection = connection
        self.prefix = prefix
        self.replay_ttl = replay_ttl
        self.watchdog_seconds = watchdog_seconds
        names = queue_names(prefix)
        self.bots = Queue(names["bots"], connection=connection)
        self.timers = Queue(names["timers"], connection=connection)
        self.replays = Queue(names["replays"], connection=connection)
        self.pending_key = f"{prefix}:bots:pending"
        self.attempts_key = f"{prefix}:bots:attempts"

    # -- the store listener ------------------------------------------------------

    async def __call__(self, match: Match) -> None:
        if match.abandoned or (match.status == "finished" and any(s.player for s in match.seats)):
            await asyncio.to_thread(self.players_job, match)  # workers/players.py
        if match.status != "active":
            return
        played = [s for s in match.to_act if bot_level(match, s) is not None]
        timed = [s for s in match.to_act if bot_level(match, s) is None] if match.turn_seconds else []
        if played or timed:
            await asyncio.to_thread(self._enqueue, match.id, match.version, played, timed, match.turn_seconds)

    def _enqueue(self, match_id: str, version: int, bots: list[int], timed: list[int], seconds: int | None) -> None:
        for seat in bots:
            self.enqueue_bot(match_id, version, seat)
        for seat in timed:
            self.schedule_timer(match_id, version, seat, seconds)

    # -- bots ------------------------------------------------------------------------

    def enqueue_bot(self, match_id: str, version: int, seat: int, attempt: int = 0) -> bool:
        """Enqueue the bot move (match, version, seat); False if that job id exists already."""
        member = f"{match_id}|{version}|{seat}"
        self.connection.zadd(self.pending_key, {member: time.time()}, nx=attempt == 0, xx=attempt > 0)
        try:
            self.bots.enqueue_call("workers.jobs.play_bot", args=(match_id, version, seat),
                                   job_id=bot_job_id(self.prefix, match_id, version, seat, attempt), unique=True,
                                   meta=job_meta(),  # the request that led to this move names it in the logs
                                   result_ttl=JOB_MEMORY, failure_ttl=JOB_MEMORY, ttl=JOB_MEMORY,
                                   description=f"bot move: match {match_id} v{version} "
                                               f"{'the board' if seat == BOARD_SEAT else f'seat {seat}'}")
        except DuplicateJobError:
            return False
        return True

    def enqueue_lost(self, match: Match) -> int:
        """Enqueue again, as new attempts, the bot moves ``match`` waits on: after a failover lost
        acknowledged writes, their first jobs ran and are done. Returns how many were enqueued."""
        enqueued = 0
        for seat in match.to_act:
            if bot_level(match, seat) is None:
                continue
            member = f"{match.id}|{match.version}|{seat}"
            attempt = self.connection.hincrby(self.attempts_key, member, 1)
            self.connection.zadd(self.pending_key, {member: time.time()})
            enqueued += self.enqueue_bot(match.id, match.version, seat, attempt)
        return enqueued

    def defer(self, function: str, match_id: str, version: int, seat: int, deferrals: int) -> bool:
        """Enqueue a bot move or turn timer (``function``: workers.jobs.play_bot or turn_timeout) again in
        :data:`RULES_RETRY_SECONDS`: this worker lacks the match's rules version, another may have it.
        False once it has been deferred :data:`RULES_RETRIES` times (the watchdog still covers bot moves)."""
        if deferrals >= RULES_RETRIES:
            log.error("%s for match %s v%d seat %d: no worker had its rules version after %d tries; giving up",
                      function, match_id, version, seat, deferrals)
            return False
        queue, base = ((self.bots, bot_job_id(self.prefix, match_id, version, seat)) if function.endswith("play_bot")
                       else (self.timers, timer_job_id(self.prefix, match_id, version, seat)))
        queue.enqueue_in(timedelta(seconds=RULES_RETRY_SECONDS), function, match_id, version, seat,
                         job_id=f"{base}-d{deferrals + 1}", meta=job_meta({"deferrals": deferrals + 1}),
                         result_ttl=JOB_MEMORY, failure_ttl=JOB_MEMORY,
                         description=f"{function.rsplit('.', 1)[1]}: match {match_id} v{version} seat {seat}, "
                                     "deferred: its rules version was missing")
        return True

    def done(self, match_id: str, version: int, seat: int) -> None:
        """The bot move (match, version, seat) needs no more attempts."""
        member = f"{match_id}|{version}|{seat}"
        with self.connection.pipeline() as pipe:
            pipe.zrem(self.pending_key, member)
            pipe.hdel(self.attempts_key, member)
            pipe.execute()

    async def sweep(self, store) -> int:
        """The watchdog: re-enqueue bot moves not played within ``watchdog_seconds``.

        Returns how many were re-enqueued. Safe to run from several workers at once
        (a lock lets one sweep per period), and safe even if the "lost" job is only
        slow: the store's compare-and-set lets one of them play.
        """
        lock = f"{self.prefix}:bots:sweep-lock"
        if not self.connection.set(lock, b"1", nx=True, px=max(int(self.watchdog_seconds * 500), 200)):
            return 0
        now = time.time()
        retried = 0
        for raw in self.connection.zrangebyscore(self.pending_key, 0, now - self.watchdog_seconds):
            member = raw.decode()
            match_id, version, seat = member.split("|")
            version, seat = int(version), int(seat)
            try:
                match = await store.get(match_id)
            except MatchNotFound:
                self.done(match_id, version, seat)
                continue
            except (RulesVersionUnavailable, UnknownGame):  # this worker cannot judge it; one that has the
                continue                                      # version (or the game: a rolling deployment) will
            if (match.status != "active" or match.version != version or seat not in match.to_act
                    or bot_level(match, seat) is None):
                self.done(match_id, version, seat)  # it acted (or cannot any more)
                continue
            attempt = int(self.connection.hget(self.attempts_key, member) or 0)
            job = self._job(bot_job_id(self.prefix, match_id, version, seat, attempt))
            if job is not None and job.get_status(refresh=False) in (JobStatus.QUEUED, JobStatus.SCHEDULED,
                                                                     JobStatus.DEFERRED):
                self.connection.zadd(self.pending_key, {member: now}, xx=True)  # waiting for a free worker
                continue
            attempt = self.connection.hincrby(self.attempts_key, member, 1)
            if attempt >= MAX_ATTEMPTS:
                log.error("bot move %s failed %d times; giving up (see the failed job registry)", member, attempt)
                self.done(match_id, version, seat)
                continue
            log.warning("watchdog: bot move %s not played after %.0fs; re-enqueued (attempt %d)", member,
                        self.watchdog_seconds, attempt + 1)
            self.enqueue_bot(match_id, version, seat, attempt)
            retried += 1
        return retried

    # -- players -----------------------------------------------------------------------------

    def players_job(self, match: Match) -> bool:
        """Enqueue the bookkeeping of a match with players that ended, or of a rated one a player
        abandoned (workers/players.py): once per match and per abandonment, on the bots queue."""
        step = "finished" if match.status == "finished" else f"abandoned-{len(match.abandoned)}"
        try:
            self.bots.enqueue_call("workers.players.match_finished", args=(match.id,),
                                   job_id=f"{_safe(self.prefix)}-players-{match.id}-{step}", unique=True,
                                   meta=job_meta(), result_ttl=JOB_MEMORY, failure_ttl=JOB_MEMORY, ttl=JOB_MEMORY,
                                   description=f"players: match {match.id} {step}")
        except DuplicateJobError:
            return False
        return True

    # -- turn timers -------------------------------------------------------------------

    def schedule_timer(self, match_id: str, version: int, seat: int, seconds: int) -> bool:
        try:
            self.timers.enqueue_in(timedelta(seconds=seconds), "workers.jobs.turn_timeout", match_id, version, seat,
                                   job_id=timer_job_id(self.prefix, match_id, version, seat), unique=True,
                                   result_ttl=JOB_MEMORY, failure_ttl=JOB_MEMORY)
        except DuplicateJobError:
            return False
        return True

    # -- replays -------------------------------------------------------------------------

    def start_replay(self, match: Match, seat: int | None) -> dict[str, Any]:
        """Start (or find) the replay of a finished match for ``seat`` (None: the spectator)."""
        if match.status != "finished":
            raise MatchNotFinished("Only a finished match can be replayed.")
        if seat is not None and not 0 <= seat < len(match.seats):
            raise NoSuchSeat(f"This match has no seat {seat}.")
        job_id = replay_job_id(self.prefix, match.id, seat)
        job = self._job(job_id)
        if job is not None and job.get_status(refresh=False) in (JobStatus.FAILED, JobStatus.STOPPED,
                                                                 JobStatus.CANCELED):
            job.delete()
            job = None
        if job is None:
            try:
                # retried: a worker without the match's rules version fails it (RulesVersionUnavailable)
                job = self.replays.enqueue_call("workers.jobs.build_replay", args=(match.id, seat), job_id=job_id,
                                                retry=Retry(max=RULES_RETRIES // 5, interval=RULES_RETRY_SECONDS),
                                                unique=True, result_ttl=self.replay_ttl,
                                                failure_ttl=self.replay_ttl, ttl=self.replay_ttl,
                                                description=f"replay: match {match.id} seat {seat}")
            except DuplicateJobError:
                job = self._job(job_id)
        return self._replay_status(job_id, job)

    def replay(self, job_id: str) -> dict[str, Any]:
        """A replay job's status, and the replay once it is finished."""
        if not job_id.startswith(f"{_safe(self.prefix)}-replay-"):
            raise ReplayNotFound("There is no such replay (it may have expired).")
        return self._replay_status(job_id, self._job(job_id), with_result=True)

    def _replay_status(self, job_id: str, job: Job | None, *, with_result: bool = False) -> dict[str, Any]:
        if job is None:
            raise ReplayNotFound("There is no such replay (it may have expired).")
        status = job.get_status(refresh=False)
        status = {JobStatus.QUEUED: "queued", JobStatus.STARTED: "started", JobStatus.FINISHED: "finished",
                  JobStatus.SCHEDULED: "queued", JobStatus.DEFERRED: "queued"}.get(status, "failed")
        match_id, seat = job.args[0], job.args[1]
        result = job.return_value() if with_result and status == "finished" else None
        return {"id": job_id, "status": status, "match_id": match_id, "seat": seat, "replay": result}

    def _job(self, job_id: str) -> Job | None:
        try:
            return Job.fetch(job_id, connection=self.connection)
        except NoSuchJobError:
            return None
