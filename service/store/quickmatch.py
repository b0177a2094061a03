"""Quick match: queues of waiting players, paired atomically into new matches.

One queue per (game, variant, seats, rated, turn timer), its keys sharing the hash tag
``{qm:<game>/<variant>/<seats>/<rated|casual>/<turn seconds, 0: none>}`` (pairing.lua lists them): a
script joins, leaves and pairs in one step on one slot, so any number of service
processes and workers pairing from the same queue never put a player in two
groups or drop one. Per player (in the player's slot):

``<prefix>:p:{ID}:qm``
    the queue the player waits in (``SET NX``: one queue at a time), deleted once
    the player is in a match or has left;
``<prefix>:p:{ID}:qm:last``
    the player's latest quick match, ``{"match_id", "seat", "at"}`` (a day).

A group (the script's output) becomes a match here: created with the queue's
game, variant and seat count (``rated`` as asked), bots in the seats no player
fills, each player joined to a seat bound to them, in an order drawn from the
group id. The group record stays until every player is seated, and the match id is
claimed for the group first (``HSETNX``), so a process that dies half-way leaves
work the next sweep finishes with the same match, not a second one.

``<prefix>:qm:queues`` is the set of queues in use; the workers' sweep
(:func:`sweep`, every second) pairs them again as windows widen and fills
with bots the groups of players who asked for them after their wait.
"""

from __future__ import annotations

import json
import random
import secrets
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

from service.engine import InvalidOptions
from service.players import pairing
from service.players.ratings import DEFAULT_MU

from .bots import add_bot, check_level
from .errors import AlreadyQueued, AlreadySeated, NotQueued, SeatTaken
from .players import PlayerStore

#: Seconds a formed group may wait for its match before a sweep makes it (its maker died).
GROUP_GRACE = 10
#: Anchors a sweep tries per queue (the longest waiting first).
SWEEP_ANCHORS = 100


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Queue:
    game: str
    variant: str
    seats: int
    rated: bool
    turn_seconds: int | None = None  # the matches' turn timer (docs/bots.md), None for none

    @property
    def id(self) -> str:
        return f"{self.game}/{self.variant}/{self.seats}/{'rated' if self.rated else 'casual'}/{self.turn_seconds or 0}"

    @classmethod
    def parse(cls, queue_id: str) -> "Queue":
        game, variant, seats, rated, turn = queue_id.split("/")
        return cls(game, variant, int(seats), rated == "rated", int(turn) or None)


class QuickMatch:
    def __init__(self, players: PlayerStore, bot_level: str = "greedy"):
        self.players = players
        self.store = players.store
        self.redis = players.redis
        self.prefix = players.prefix
        self.bot_level = check_level(bot_level)
        self._script = self.redis.register_script(
            resources.files(__package__).joinpath("pairing.lua").read_text())

    # -- keys ---------------------------------------------------------------------------

    def keys(self, queue: Queue) -> list[str]:
        tag = f"{self.prefix}:qm:{{qm:{queue.id}}}"
        return [f"{tag}:queue", f"{tag}:since", f"{tag}:bots", f"{tag}:groups"]

    @property
    def queues_key(self) -> str:
        return f"{self.prefix}:qm:queues"

    def waiting_key(self, player_id: str) -> str:
        return f"{self.players.key(player_id)}:qm"

    def last_key(self, player_id: str) -> str:
        return f"{self.players.key(player_id)}:qm:last"

    def made_key(self, queue: Queue) -> str:
        return f"{self.keys(queue)[3]}:made"

    # -- operations ------------------------------------------------------------------------

    def queue(self, game: str, variant: str | None, seats: int | None, rated: bool,
              turn_seconds: int | None = None) -> Queue:
        """The queue for a request, checked as a match creation would be: raises UnknownGame or
        InvalidOptions."""
        found = self.store.game(game)
        count = found.min_seats if seats is None else seats
        if not 2 <= count <= pairing.MAX_SEATS:
            raise InvalidOptions(f"A quick match has 2 to {pairing.MAX_SEATS} seats.")
        if turn_seconds is not None and not 1 <= turn_seconds <= 86400:
            raise InvalidOptions("turn_seconds is 1 to 86400.")
        options = found.check_options(variant, None, count)
        return Queue(found.id, options["variant"], count, rated, turn_seconds)

    async def join(self, player_id: str, queue: Queue, bots_after: int | None = None) -> dict[str, Any]:
        """Wait in ``queue``; pairs at once if others fit. Returns the player's quick-match status.
        Raises AlreadyQueued if the player waits in a queue already."""
        player = await self.players.get(player_id)
        game = self.store.game(queue.game)
        for guard in self.store.guards:  # the match store's guards (owned collections: a saved hand, no bots)
            await guard.check_queue(player_id, game, game.check_options(queue.variant, None, queue.seats),
                                    queue.rated, bots_after)
        if not await self.redis.set(self.waiting_key(player_id), queue.id, nx=True):
            raise AlreadyQueued("You are already waiting for a quick match; leave that queue first.")
        try:
            raw = await self.redis.hget(self.players.ratings_key(player.id), f"{queue.game}/{queue.variant}")
            mu = json.loads(raw)["mu"] if raw else DEFAULT_MU
            await self.redis.sadd(self.queues_key, queue.id)
            formed = await self._run(queue, "join", player_id, mu, -1 if bots_after is None else bots_after)
        except Exception:
            await self.redis.delete(self.waiting_key(player_id))
            raise
        for group_id in formed:
            await self.make(queue, group_id)
        return await self.status(player_id)

    async def leave(self, player_id: str) -> None:
        """Stop waiting; raises NotQueued if the player is not waiting (or was paired meanwhile)."""
        queue_id = await self.redis.get(self.waiting_key(player_id))
        if queue_id is None:
            raise NotQueued("You are not waiting for a quick match.")
        if not await self._run(Queue.parse(queue_id), "leave", player_id):
            raise NotQueued("You were paired just now: see your matches.")
        await self.redis.delete(self.waiting_key(player_id))

    async def status(self, player_id: str) -> dict[str, Any]:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.get(self.waiting_key(player_id))
            pipe.get(self.last_key(player_id))
            queue_id, last = await pipe.execute()
        status = {"status": "waiting" if queue_id else "matched" if last else "idle", "queue": None,
                  "last": json.loads(last) if last else None}
        if queue_id:
            queue = Queue.parse(queue_id)
            since = await self.redis.hget(self.keys(queue)[1], player_id)
            status["queue"] = {"game": queue.game, "variant": queue.variant, "seats": queue.seats,
                               "rated": queue.rated, "turn_seconds": queue.turn_seconds,
                               "since": int(since) if since else None}
            if since is None:
                status["status"] = "pairing"  # in a group whose match is being made
        return status

    async def _run(self, queue: Queue, mode: str, *args) -> Any:
        return await self._script(keys=self.keys(queue), args=[
            mode, _now_ms(), queue.seats, pairing.BASE, pairing.PER_SECOND, pairing.MAX,
            secrets.token_urlsafe(6), *args])

    async def make(self, queue: Queue, group_id: str) -> str | None:
        """Turn a formed group into its match (idempotent); returns the match id, None if already done."""
        groups, made = self.keys(queue)[3], self.made_key(queue)
        raw = await self.redis.hget(groups, group_id)
        if raw is None:
            return None
        group = json.loads(raw)
        match_id = await self.redis.hget(made, group_id)
        if match_id is None:
            match = await self.store.create(queue.game, variant=queue.variant, seats=queue.seats, rated=queue.rated,
                                            turn_seconds=queue.turn_seconds, listed=False)
            await self.redis.hsetnx(made, group_id, match.id)
            match_id = await self.redis.hget(made, group_id)  # a concurrent maker's match wins; ours expires
        order = list(range(queue.seats))
        random.Random(group_id).shuffle(order)  # the same seats for every attempt at this group
        now = _now_ms()
        for player_id in group["players"]:
            seat = await self._seat(match_id, player_id, order)
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.set(self.last_key(player_id), json.dumps({"match_id": match_id, "seat": seat, "at": now}),
                         ex=24 * 3600)
                pipe.delete(self.waiting_key(player_id))
                await pipe.execute()
        if group["bots"]:
            match = await self.store.get(match_id)
            for seat in [s for s in order if not match.seats[s].joined]:
                try:
                    await add_bot(self.store, match_id, seat, self.bot_level)
                except SeatTaken:
                    pass  # a concurrent maker gave it its bot
        for guard in self.store.guards:  # e.g. each player's saved hand brought (owned collections)
            await guard.match_made(match_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hdel(groups, group_id)
            pipe.hdel(made, group_id)
            await pipe.execute()
        return match_id

    async def _seat(self, match_id: str, player_id: str, order: list[int]) -> int:
        """The player's seat in the match: the one they hold, else the first free one in ``order``."""
        for _ in order:
            match = await self.store.get(match_id)
            held = [s.index for s in match.seats if s.player == player_id]
            if held:
                return held[0]
            seat = next((s for s in order if not match.seats[s].joined), None)
            if seat is None:  # others hold every seat: the group's match is not theirs to be made
                break
            try:
                return (await self.players.join(match_id, player_id, seat))[1]
            except (SeatTaken, AlreadySeated):
                continue  # a concurrent maker seated someone there: read the match again
        raise SeatTaken("The quick match's seats were all taken.")

    async def sweep(self) -> int:
        """Pair every queue again (windows widen as players wait; bots fill late groups), and make the
        matches of groups whose maker died. Returns how many matches were made."""
        made = 0
        for queue_id in await self.redis.smembers(self.queues_key):
            queue = Queue.parse(queue_id)
            for group_id in await self._run(queue, "pair", SWEEP_ANCHORS):
                made += await self.make(queue, group_id) is not None
            groups = await self.redis.hgetall(self.keys(queue)[3])
            for group_id, raw in groups.items():
                if _now_ms() - json.loads(raw)["at"] > GROUP_GRACE * 1000:
                    made += await self.make(queue, group_id) is not None
            if not groups and not await self.redis.exists(self.keys(queue)[0]):
                await self.redis.srem(self.queues_key, queue_id)
        return made
