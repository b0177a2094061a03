"""Rematch: after a finished match any seat offers, the others accept, and a new match is made.

The new match has the same game, variant, options, seat count, rating and hot-seat setting, a
fresh seed, and the first seat rotated: the holder of seat ``i`` sits at ``i - 1`` (the second
player leads). Bots come back as bots of their level. A seat bound to a player is bound to
them again (their credential acts for it at once); an anonymous seat gets a new seat token,
kept for its old seat's holder to collect once (its next offer or status read).

Keys, in the old match's slot: ``<match key>:rematch`` (a hash: ``accepted:<seat>``, ``making``
and, once made, ``match``; it expires with the old match) and ``<match key>:rematch:token:<seat>`` (a new seat token, a day).
Accepting is one script: the last acceptance, and only it, is told to make the match.
"""

from __future__ import annotations

import time
from typing import Any

from .bots import add_bot
from .errors import RematchUnavailable, TokenRequired
from .matches import Match, MatchStore
from .players import PlayerStore

#: Seconds a maker may take before another acceptance or status read makes the match instead.
MAKING_GRACE = 30
TOKEN_TTL = 24 * 3600

_ACCEPT = """
-- KEYS[1] the rematch hash   KEYS[2] the old match   ARGV[1] seat accepting, or -1 to only read
-- ARGV[2] now (ms)   ARGV[3] grace (ms)   ARGV[4..] the seats that must accept
-- Returns {"make" | "wait" | "made", match id or ''}
local function expire_with_match()  -- the rematch goes when its match goes
  local ttl = redis.call('PTTL', KEYS[2])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
end
if ARGV[1] ~= '-1' then
  redis.call('HSET', KEYS[1], 'accepted:' .. ARGV[1], 1)
  expire_with_match()
end
local made = redis.call('HGET', KEYS[1], 'match')
if made then return {'made', made} end
for i = 4, #ARGV do
  if redis.call('HEXISTS', KEYS[1], 'accepted:' .. ARGV[i]) == 0 then return {'wait', ''} end
end
local making = tonumber(redis.call('HGET', KEYS[1], 'making') or '0')
if making > 0 and tonumber(ARGV[2]) - making < tonumber(ARGV[3]) then return {'wait', ''} end
redis.call('HSET', KEYS[1], 'making', ARGV[2])
expire_with_match()
return {'make', ''}
"""


def _now_ms() -> int:
    return int(time.time() * 1000)


def rotated(seat: int, seats: int) -> int:
    """The seat in the rematch of whoever held ``seat``."""
    return (seat - 1) % seats


class Rematches:
    def __init__(self, store: MatchStore, players: PlayerStore | None):
        self.store = store
        self.players = players
        self.redis = store.redis
        self._accept = self.redis.register_script(_ACCEPT)

    def key(self, match_id: str) -> str:
        return f"{self.store.key(match_id)}:rematch"

    def token_key(self, match_id: str, seat: int) -> str:
        return f"{self.key(match_id)}:token:{seat}"

    async def offer(self, match_id: str, token: str | None, *, accept: bool = True) -> dict[str, Any]:
        """Offer (or accept) a rematch as the caller's seat, or with ``accept=False`` only read its state.
        Raises TokenRequired, InvalidToken, MatchNotFound or RematchUnavailable."""
        if token is None:
            raise TokenRequired("Offer or accept a rematch with your seat token or player token.")
        match, seat = await self.store.read_as(match_id, token)
        if match.status != "finished":
            raise RematchUnavailable("A rematch is offered once the match is finished.")
        humans = [s.index for s in match.seats if s.joined and s.bot is None]
        reply = await self._accept(keys=[self.key(match_id), self.store.key(match_id)], args=[
            seat if accept else -1, _now_ms(), MAKING_GRACE * 1000, *humans])
        outcome, new_id = reply[0], reply[1] or None
        if outcome == "make":
            new_id = await self._make(match)
        return await self._status(match, seat, new_id)

    async def _status(self, match: Match, seat: int, new_id: str | None) -> dict[str, Any]:
        record = await self.redis.hgetall(self.key(match.id))
        accepted = sorted(int(k.split(":")[1]) for k in record if k.startswith("accepted:"))
        humans = [s.index for s in match.seats if s.joined and s.bot is None]
        new_id = new_id or record.get("match")
        token = await self.redis.getdel(self.token_key(match.id, seat)) if new_id else None
        return {"match_id": match.id, "rematch_id": new_id, "accepted": accepted,
                "waiting_for": [s for s in humans if s not in accepted],
                "seat": rotated(seat, len(match.seats)) if new_id else None, "token": token}

    async def _make(self, match: Match) -> str:
        options = {k: v for k, v in match.options.items() if k != "variant"}
        new = await self.store.create(match.game.id, variant=match.variant, options=options,
                                      seats=len(match.seats), turn_seconds=match.turn_seconds, rated=match.rated,
                                      hot_seat=match.hot_seat, listed=False)
        for old in match.seats:
            seat = rotated(old.index, len(match.seats))
            if not old.joined:
                continue
            if old.bot is not None:
                await add_bot(self.store, new.id, seat, old.bot)
            elif old.player is not None and self.players is not None:
                await self.players.join(new.id, old.player, seat)
            else:
                _match, _seat, token = await self.store.join(new.id, old.name, seat)
                await self.redis.set(self.token_key(match.id, old.index), token, ex=TOKEN_TTL)
        await self.redis.hset(self.key(match.id), "match", new.id)
        return new.id
