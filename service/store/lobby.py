"""The lobby: open matches (status waiting, with a free seat), per game.

One sorted set per game, ``<prefix>:lobby:<game>``: member = match id, score
= when the match was created or last had a seat taken (ms). It is an index,
not the truth: the match hash is. So it needs no cross-slot command and works
on a Redis Cluster (the lobby key and each match key live in their own slots):

* a match is added when created and re-scored when a seat is taken while
  others stay free; it is removed when its last seat is taken;
* an entry older than ``lobby_ttl`` seconds expires (it is trimmed when the
  lobby is read), and the lobby key itself expires when nobody creates matches;
* listing reads the candidates, then each match's few public fields
  (one pipelined ``HMGET`` per match) and drops, from the answer and from the
  set, whatever is no longer open (full, started, or expired).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .matches import MatchStore

MAX_SEATS = 16  # seat fields read per match; games have at most a handful
_FIELDS = ["game", "variant", "seats", "status", "created", "updated"] + [f"seat:{i}" for i in range(MAX_SEATS)]


def _now_ms() -> int:
    return int(time.time() * 1000)


async def listed(store: "MatchStore", game_id: str, match_id: str, at_ms: int | None = None) -> None:
    """Show ``match_id`` in its game's lobby (again), as of ``at_ms``."""
    key = store.lobby_key(game_id)
    async with store.redis.pipeline(transaction=False) as pipe:
        pipe.zadd(key, {match_id: at_ms or _now_ms()})
        pipe.expire(key, max(store.lobby_ttl * 2, 60))
        await pipe.execute()


async def delisted(store: "MatchStore", game_id: str, match_id: str) -> None:
    await store.redis.zrem(store.lobby_key(game_id), match_id)


async def open_matches(store: "MatchStore", game_id: str | None = None, *, limit: int = 50) -> list[dict[str, Any]]:
    """Open matches, longest waiting first: ``{id, game, variant, seats, open_seats, created, updated}``.

    ``seats`` lists each seat's number, player name (None when free) and whether
    it is taken. Raises UnknownGame for a game that is not hosted.
    """
    games = [store.game(game_id).id] if game_id is not None else sorted(store.games)
    cutoff = _now_ms() - store.lobby_ttl * 1000
    found: list[dict[str, Any]] = []
    for gid in games:
        key = store.lobby_key(gid)
        async with store.redis.pipeline(transaction=False) as pipe:
            pipe.zremrangebyscore(key, "-inf", f"({cutoff}")
            pipe.zrange(key, 0, limit * 2 + 9)
            _, ids = await pipe.execute()
        if not ids:
            continue
        async with store.redis.pipeline(transaction=False) as pipe:
            for match_id in ids:
                pipe.hmget(store.key(match_id), _FIELDS)
            records = await pipe.execute()
        stale = []
        for match_id, values in zip(ids, records):
            entry = _entry(match_id, dict(zip(_FIELDS, values)))
            if entry is None or entry["game"] != gid:
                stale.append(match_id)
            else:
                found.append(entry)
        if stale:
            await store.redis.zrem(key, *stale)
    found.sort(key=lambda e: (e["updated"], e["id"]))
    return found[:limit]


def _entry(match_id: str, record: dict[str, str | None]) -> dict[str, Any] | None:
    if record.get("status") != "waiting" or record.get("seats") is None:
        return None
    seats = []
    for i in range(min(int(record["seats"]), MAX_SEATS)):
        raw = record.get(f"seat:{i}")
        info = json.loads(raw) if raw else {}
        seats.append({"seat": i, "name": info.get("name"), "joined": raw is not None,
                      "bot": (info.get("bot") or {}).get("level")})
    free = sum(not s["joined"] for s in seats)
    if not free:
        return None
    return {"id": match_id, "game": record["game"], "variant": record["variant"], "seats": seats,
            "open_seats": free, "created": int(record["created"]), "updated": int(record["updated"] or 0)}
