"""Rating updates, exactly once per rated match, and the leaderboards.

A rated match's update touches several players (each in their own hash slot) and
a leaderboard, so it cannot be one atomic script on a Redis Cluster. It is made
idempotent instead, in three steps any of which a retry may repeat:

1. **the plan** ``<prefix>:m:{ID}:rating`` (in the match's slot) is written once
   (``SET NX``): every rated player's rating before, after, and outcome, computed
   from the ratings as first read. A retry reuses the plan it finds, so a worker
   killed half-way never computes a second, different update;
2. **each player** is updated by ``rate.lua`` on the player's slot, which does
   nothing if the match is already in the player's ``...:rated`` set, else writes
   the new rating and counts the result, and adds the match to the set -- in one
   atomic step. If the player's rating moved meanwhile (another match of theirs
   was rated between the plan and this step), the plan's change is applied to the
   current rating rather than overwriting it;
3. **the leaderboard** ``<prefix>:lb:{<game>/<variant>}`` (a sorted set: player
   id -> the conservative rating ``mu - 3 sigma``) is set from the rating now
   stored: an absolute value, so repeating it changes nothing.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from service.players.ratings import DEFAULT_MU, DEFAULT_SIGMA, Rating, rate, standings

from .matches import Match
from .players import PlayerStore, page_desc, rating_json

#: How long a player remembers the rated matches already counted (a retry comes within minutes).
RATED_MEMORY_MS = 30 * 24 * 3600 * 1000


def where(match: Match) -> str:
    return f"{match.game.id}/{match.variant}"


def leaderboard_key(players: PlayerStore, game_id: str, variant: str) -> str:
    return f"{players.prefix}:lb:{{{game_id}/{variant}}}"


def plan_key(players: PlayerStore, match_id: str) -> str:
    return f"{players.store.key(match_id)}:rating"


def rateable(match: Match) -> bool:
    """Whether a rated match is ready to rate: it is over, or everyone but one player abandoned it."""
    if not match.rated:
        return False
    if match.status == "finished":
        return True
    staying = {s.player for s in match.seats if s.player} - set(match.abandoned.values())
    return bool(match.abandoned) and len(staying) <= 1


async def rate_match(players: PlayerStore, match: Match, *, crash_after: int | None = None) -> dict[str, Any]:
    """Apply a rated match's rating update once; returns the plan. Safe to call again at any point.

    ``crash_after`` (tests only) stops after that many players were updated, as a killed worker would.
    """
    redis = players.redis
    raw = await redis.get(plan_key(players, match.id))
    if raw is None:
        raw = await _plan(players, match)
    plan = json.loads(raw)
    script = redis.register_script(resources.files(__package__).joinpath("rate.lua").read_text())
    board = leaderboard_key(players, match.game.id, match.variant)
    for count, (player_id, change) in enumerate(sorted(plan["players"].items())):
        if crash_after is not None and count >= crash_after:
            raise SystemExit("killed mid-update (test)")
        stored = await script(
            keys=[players.ratings_key(player_id), f"{players.key(player_id)}:rated"],
            args=[match.id, plan["where"], change["before"], json.dumps(change["after"]), change["outcome"],
                  plan["at"], RATED_MEMORY_MS, DEFAULT_MU, DEFAULT_SIGMA])
        rating = json.loads(stored)
        await redis.zadd(board, {player_id: Rating(rating["mu"], rating["sigma"]).ordinal})
    return plan


async def _plan(players: PlayerStore, match: Match) -> str:
    seated = {s.index: s.player for s in match.seats if s.player}
    places = standings(match.result, seated, match.abandoned)
    before_raw: dict[str, str] = {}
    before: dict[str, Rating] = {}
    for place in places:
        raw = await players.redis.hget(players.ratings_key(place.player), where(match))
        before_raw[place.player] = raw or ""
        stored = json.loads(raw) if raw else {"mu": DEFAULT_MU, "sigma": DEFAULT_SIGMA}
        before[place.player] = Rating(stored["mu"], stored["sigma"])
    after = rate(before, places) if len(places) >= 2 else {}
    plan = {"where": where(match), "at": match.updated,
            "players": {p.player: {"before": before_raw[p.player], "outcome": p.outcome,
                                   "after": {"mu": after[p.player].mu, "sigma": after[p.player].sigma}}
                        for p in places if p.player in after}}
    key = plan_key(players, match.id)
    await players.redis.set(key, json.dumps(plan, sort_keys=True), nx=True, ex=players.store.finished_ttl)
    return await players.redis.get(key)  # the first plan written wins, ours or a concurrent job's


async def leaderboard(players: PlayerStore, game_id: str, variant: str, cursor: str | None = None,
                      limit: int = 20) -> tuple[list[dict[str, Any]], str | None]:
    """Top players of a game and variant by conservative rating, paged; each row with its rank."""
    key = leaderboard_key(players, game_id, variant)
    page, next_cursor = await page_desc(players.redis, key, cursor, limit)
    if not page:
        return [], None
    first_rank = await players.redis.zrevrank(key, page[0][0])
    async with players.redis.pipeline(transaction=False) as pipe:
        for player_id, _ in page:
            pipe.hget(players.key(player_id), "name")
            pipe.hget(players.ratings_key(player_id), f"{game_id}/{variant}")
        replies = await pipe.execute()
    rows = []
    for i, (player_id, _) in enumerate(page):
        name, raw = replies[2 * i], replies[2 * i + 1]
        if raw is None:
            continue
        rows.append({"rank": (first_rank or 0) + i + 1, "player_id": player_id, "name": name,
                     **rating_json(json.loads(raw))})
    return rows, next_cursor
