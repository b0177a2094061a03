"""Players in Redis: records, player tokens, names, the per-player index of matches, profiles.

Keys (every key of one player shares the hash tag ``{PLAYER ID}``, so each
script and transaction on a player touches one slot of a Redis Cluster):

``<prefix>:p:{ID}``
    a hash: ``id``, ``name``, ``created`` (and ``idp`` for a player of an identity provider).
``<prefix>:p:{ID}:tokens``
    a hash: token id -> ``{"hash": sha256 of the token, "created": ms}``. A player token reads
    ``gp.<player id>.<token id>.<secret>`` (256 random bits): shown once, stored only as its hash,
    revoked by deleting its field. The ids in it route a request to the one hash to compare, so
    checking a token is one ``HGET``, sent in the same round trip as the match a request acts on.
``<prefix>:p:{ID}:matches:active`` and ``...:matches:finished``
    sorted sets of the player's match ids, scored by when the player took the seat (ms): "my
    matches", newest first, paged with a cursor. A match moves to ``finished`` when it ends (the
    worker's ``match_finished`` job, and any listing that finds one ended).
``<prefix>:p:{ID}:ratings`` and ``...:rated``
    ratings per ``<game>/<variant>`` and the rated matches already counted (service/store/ratings.py).
``<prefix>:names``
    a hash: :func:`service.players.names.name_key` -> player id. Claimed with ``HSETNX`` before
    the player is written, so two players never share a name that reads the same.

A player of an external identity provider (service/store/idp.py) has the id
``x<first 20 base32 characters of sha256(issuer, sub)>``: the JWT names its player
without a lookup, and the record is created the first time it is seen.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import secrets
import time
from dataclasses import dataclass
from typing import Any

from service.players.names import InvalidName as NameRuleBroken, check_name, name_key
from service.players.ratings import PROVISIONAL_GAMES, Rating

from .errors import (
    InvalidName, InvalidToken, MatchNotFound, NameTaken, PlayerNotFound, PlayerRequired, PlayerTokenNotFound,
    TooManyPlayerTokens,
)
from .idp import JwtVerifier, looks_like_jwt
from .matches import Match, MatchStore
from .tokens import hash_token, new_id

#: Player tokens a player may hold at once (one per device, say); revoke one to make another.
MAX_TOKENS = 20
#: Seats read per match for a listing (games have at most a handful).
_MAX_SEATS = 16
_LIST_FIELDS = ["game", "variant", "seats", "status", "to_act", "result", "created", "updated", "rated"] + [
    f"seat:{i}" for i in range(_MAX_SEATS)]

#: An identity provider's player's record, whole or not at all. KEYS[1] the record; ARGV: id, name, created (ms).
#: Returns the name already there, if another request made the record first.
_NEW_IDP_RECORD = """
local kept = redis.call('HGET', KEYS[1], 'name')
if kept then return kept end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'name', ARGV[2], 'created', ARGV[3], 'idp', 1)
return false
"""

_NEW_TOKEN = """
-- KEYS[1] the player's tokens   ARGV[1] token id   ARGV[2] record   ARGV[3] limit   ARGV[4] token id to replace
if ARGV[4] ~= '' and redis.call('HDEL', KEYS[1], ARGV[4]) == 0 then return 'missing' end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 'full' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 'ok'
"""


def _now_ms() -> int:
    return int(time.time() * 1000)


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


def player_token_parts(token: str) -> tuple[str, str] | None:
    """(player id, token id) of a token shaped like a player token, else None."""
    parts = token.split(".")
    if len(parts) == 4 and parts[0] == "gp" and parts[1] and parts[2] and parts[3]:
        return parts[1], parts[2]
    return None


def idp_player_id(issuer: str, subject: str) -> str:
    digest = hashlib.sha256(f"{issuer}\n{subject}".encode()).digest()
    return "x" + base64.b32encode(digest).decode().lower()[:20]


def encode_cursor(score: float, member: str) -> str:
    return base64.urlsafe_b64encode(_dumps([score, member]).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[float, str]:
    """Raises ValueError for a cursor this service did not make."""
    try:
        score, member = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except Exception:
        raise ValueError("cursor is not one this service gave") from None
    # NaN and infinities parse as JSON numbers here, and a NaN bound is an error in Redis: no cursor holds one
    if not isinstance(score, (int, float)) or not math.isfinite(score) or not isinstance(member, str):
        raise ValueError("cursor is not one this service gave")
    return float(score), member


async def page_desc(redis, key: str, cursor: str | None, limit: int) -> tuple[list[tuple[str, float]], str | None]:
    """One page of a sorted set, highest score first (ties: highest member first), after ``cursor``;
    returns the (member, score) pairs and the next cursor (None at the end)."""
    top, after = ("+inf", None) if cursor is None else (None, decode_cursor(cursor))
    if after is not None:
        top = repr(after[0])
    found: list[tuple[str, float]] = []
    offset = 0
    batch = limit + 1
    while len(found) <= limit:
        chunk = await redis.zrevrangebyscore(key, top, "-inf", start=offset, num=batch, withscores=True)
        for member, score in chunk:
            if after is not None and score == after[0] and member >= after[1]:
                continue  # shown on an earlier page (same score: members come in descending order)
            found.append((member, score))
        if len(chunk) < batch:
            break
        offset += batch
    page = found[:limit]
    more = len(found) > limit
    return page, (encode_cursor(page[-1][1], page[-1][0]) if more and page else None)


@dataclass
class Player:
    id: str
    name: str
    created: int


class PlayerStore:
    """Players, their tokens and their index of matches; attached to a MatchStore as ``store.players``,
    which makes every operation that takes a seat token take a player's credential too."""

    def __init__(self, store: MatchStore, verifier: JwtVerifier | None = None):
        self.store = store
        self.redis = store.redis
        self.prefix = store.prefix
        self.verifier = verifier
        self._new_token = self.redis.register_script(_NEW_TOKEN)
        self._new_record = self.redis.register_script(_NEW_IDP_RECORD)
        self._known: set[str] = set()  # identity-provider players whose record exists
        store.players = self

    # -- keys -------------------------------------------------------------------------

    def key(self, player_id: str) -> str:
        return f"{self.prefix}:p:{{{player_id}}}"

    def tokens_key(self, player_id: str) -> str:
        return f"{self.key(player_id)}:tokens"

    def matches_key(self, player_id: str, status: str) -> str:
        return f"{self.key(player_id)}:matches:{'finished' if status == 'finished' else 'active'}"

    def ratings_key(self, player_id: str) -> str:
        return f"{self.key(player_id)}:ratings"

    @property
    def names_key(self) -> str:
        return f"{self.prefix}:names"

    # -- credentials ------------------------------------------------------------------------

    def claims(self, token: str) -> bool:
        """Whether ``token`` is a player's credential (a player token, or a JWT when an issuer is set)."""
        return token.startswith("gp.") or (self.verifier is not None and looks_like_jwt(token))

    async def identify(self, token: str | None) -> str:
        """The player ``token`` proves; raises PlayerRequired (none, or a seat token) or InvalidToken."""
        if not token or not self.claims(token):
            raise PlayerRequired("Send a player token (or your identity provider's JWT) as the bearer token; "
                                 "POST /v1/players makes a player and its first token.")
        if token.startswith("gp."):
            parts = player_token_parts(token)
            record = await self.redis.hget(self.tokens_key(parts[0]), parts[1]) if parts else None
            return self._check_player_token(token, parts, record)
        return await self._idp_player(token)

    def _check_player_token(self, token: str, parts, record: str | None) -> str:
        if record is None or not hmac.compare_digest(json.loads(record)["hash"], hash_token(token)):
            raise InvalidToken("This player token is revoked or unknown.")
        return parts[0]

    async def read_match_as(self, match_id: str, token: str) -> tuple[Match, str]:
        """A match and the player ``token`` proves: for a player token, one round trip for both."""
        parts = player_token_parts(token) if token.startswith("gp.") else None
        if parts is None:
            if token.startswith("gp."):
                raise InvalidToken("This player token is revoked or unknown.")
            return await self.store.get(match_id), await self._idp_player(token)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(self.store.key(match_id))
            pipe.hget(self.tokens_key(parts[0]), parts[1])
            record, token_record = await pipe.execute()
        player = self._check_player_token(token, parts, token_record)
        if not record:
            raise MatchNotFound(f"There is no match {match_id!r} (it may have expired).")
        return self.store._match(match_id, record), player

    async def _idp_player(self, token: str) -> str:
        claims = await self.verifier.verify(token)
        player_id = idp_player_id(claims["iss"], str(claims["sub"]))
        if player_id not in self._known:
            await self._first_use(player_id, claims)
            self._known.add(player_id)
        return player_id

    async def _first_use(self, player_id: str, claims: dict) -> None:
        """Make the record of an identity provider's player on its first request: named after the first valid,
        free one of its claims, else after its id. Safe to run twice at once, and again after a process died
        half way (a name claimed, no record yet): the record is written last, with its name, in one step."""
        key = self.key(player_id)
        if await self.redis.hexists(key, "name"):
            return
        candidates = [claims.get("preferred_username"), claims.get("nickname"), claims.get("name"),
                      f"Player {player_id[1:9]}", f"Player {player_id[1:17]}"]
        name = candidates[-1]  # all taken by others: an id-derived name, shown but not claimed
        for wanted in candidates:
            try:
                wanted = check_name(wanted)
            except NameRuleBroken:
                continue
            if await self.redis.hsetnx(self.names_key, name_key(wanted), player_id) or \
                    await self.redis.hget(self.names_key, name_key(wanted)) == player_id:  # ours, from a first try
                name = wanted
                break
        kept = await self._new_record(keys=[key], args=[player_id, name, _now_ms()])
        if kept is not None and kept != name:  # another request made the record meanwhile, with another name
            await self._release_name(name, player_id)

    async def _release_name(self, name: str, player_id: str) -> None:
        """Give back a name claimed for a player who ended up with another (only if it is still theirs)."""
        if await self.redis.hget(self.names_key, name_key(name)) == player_id:
            await self.redis.hdel(self.names_key, name_key(name))

    # -- players and tokens --------------------------------------------------------------------

    async def create(self, name: Any) -> tuple[Player, str, str]:
        """A new player and its first token (shown once); returns (player, token, token id).
        Raises InvalidName or NameTaken."""
        try:
            name = check_name(name)
        except NameRuleBroken as error:
            raise InvalidName(str(error)) from None
        player_id = new_id()
        if not await self.redis.hsetnx(self.names_key, name_key(name), player_id):
            raise NameTaken(f"The name {name!r} is taken (or reads as another player's); choose another.")
        now = _now_ms()
        token_id, token = self._mint(player_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.key(player_id), mapping={"id": player_id, "name": name, "created": now})
            pipe.hset(self.tokens_key(player_id), token_id, _dumps({"hash": hash_token(token), "created": now}))
            await pipe.execute()
        return Player(player_id, name, now), token, token_id

    @staticmethod
    def _mint(player_id: str) -> tuple[str, str]:
        token_id = secrets.token_hex(6)
        return token_id, f"gp.{player_id}.{token_id}.{secrets.token_urlsafe(32)}"

    async def get(self, player_id: str) -> Player:
        record = await self.redis.hgetall(self.key(player_id)) if player_id else {}
        if not record.get("name"):
            raise PlayerNotFound(f"There is no player {player_id!r}.")
        return Player(record["id"], record["name"], int(record.get("created") or 0))

    async def issue_token(self, player_id: str, replace: str | None = None) -> tuple[str, str]:
        """A new token for the player, revoking ``replace`` (a token id) in the same step: rotation.
        Returns (token, token id); raises PlayerTokenNotFound or TooManyPlayerTokens."""
        token_id, token = self._mint(player_id)
        outcome = await self._new_token(keys=[self.tokens_key(player_id)], args=[
            token_id, _dumps({"hash": hash_token(token), "created": _now_ms()}), MAX_TOKENS, replace or ""])
        if outcome == "missing":
            raise PlayerTokenNotFound(f"You have no token {replace!r}.")
        if outcome == "full":
            raise TooManyPlayerTokens(f"A player holds at most {MAX_TOKENS} tokens; revoke one first.")
        return token, token_id

    async def list_tokens(self, player_id: str) -> list[dict[str, Any]]:
        tokens = await self.redis.hgetall(self.tokens_key(player_id))
        return sorted(({"id": tid, "created": json.loads(raw)["created"]} for tid, raw in tokens.items()),
                      key=lambda t: (t["created"], t["id"]))

    async def revoke(self, player_id: str, token_id: str) -> None:
        """Revoke a token at once (every request after this one refuses it); raises PlayerTokenNotFound."""
        if not await self.redis.hdel(self.tokens_key(player_id), token_id):
            raise PlayerTokenNotFound(f"You have no token {token_id!r}.")

    # -- seats --------------------------------------------------------------------------------------

    async def join(self, match_id: str, player_id: str, seat: int | None = None, *, entropy: str | None = None):
        """Take a seat bound to the player (see MatchStore.join), listed in the player's matches first, so
        that a seat is never held without being listed (a listing drops an entry whose seat was not taken)."""
        player = await self.get(player_id)
        added = await self.redis.zadd(self.matches_key(player_id, "active"), {match_id: _now_ms()}, nx=True)
        try:
            return await self.store.join(match_id, player.name, seat, player=player_id, entropy=entropy)
        except Exception:
            if added:
                await self.redis.zrem(self.matches_key(player_id, "active"), match_id)
            raise

    async def finished(self, player_id: str, match_id: str) -> None:
        """Move a match to the player's finished matches (idempotent), keeping its place in time."""
        active, done = self.matches_key(player_id, "active"), self.matches_key(player_id, "finished")
        score = await self.redis.zscore(active, match_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            if score is not None:
                pipe.zadd(done, {match_id: score})
            pipe.zrem(active, match_id)
            await pipe.execute()

    # -- my matches -------------------------------------------------------------------------------------

    async def matches(self, player_id: str, status: str = "active", cursor: str | None = None,
                      limit: int = 20) -> tuple[list[dict[str, Any]], str | None]:
        """The player's matches of ``status`` (``active``: not finished, ``finished``), newest first;
        returns the page and the cursor of the next one (None at the end). Raises ValueError for a bad cursor."""
        key = self.matches_key(player_id, status)
        page, next_cursor = await page_desc(self.redis, key, cursor, limit)
        if not page:
            return [], None
        async with self.redis.pipeline(transaction=False) as pipe:
            for match_id, _ in page:
                pipe.hmget(self.store.key(match_id), _LIST_FIELDS)
            records = await pipe.execute()
        entries, gone, ended = [], [], []
        for (match_id, _), values in zip(page, records):
            record = dict(zip(_LIST_FIELDS, values))
            entry = self._entry(player_id, match_id, record)
            if entry is None:
                gone.append(match_id)
            elif status != "finished" and entry["status"] == "finished":
                ended.append(match_id)  # its job has not moved it yet: shown where it belongs from now on
            else:
                entries.append(entry)
        if gone:
            await self.redis.zrem(key, *gone)
        for match_id in ended:
            await self.finished(player_id, match_id)
        return entries, next_cursor

    @staticmethod
    def _entry(player_id: str, match_id: str, record: dict[str, str | None]) -> dict[str, Any] | None:
        if record.get("seats") is None:
            return None  # expired
        seats, mine = [], []
        for i in range(min(int(record["seats"]), _MAX_SEATS)):
            raw = record.get(f"seat:{i}")
            info = json.loads(raw) if raw else {}
            seats.append({"seat": i, "name": info.get("name"), "player": info.get("player"),
                          "bot": (info.get("bot") or {}).get("level")})
            if info.get("player") == player_id:
                mine.append(i)
        if not mine:
            return None  # listed before a join that did not happen, or a seat since left
        status = record["status"]
        to_act = json.loads(record["to_act"]) if status == "active" else []
        return {"match_id": match_id, "game": record["game"], "variant": record["variant"], "status": status,
                "rated": record.get("rated") == "1", "my_seats": mine,
                "opponents": [s for s in seats if s["seat"] not in mine], "to_act": to_act,
                "your_turn": any(s in to_act for s in mine),
                "result": json.loads(record["result"]) if record.get("result") else None,
                "created": int(record["created"]), "updated": int(record["updated"] or 0)}

    async def active_seats(self, player_id: str, limit: int = 100) -> list[tuple[str, int]]:
        """(match id, seat) of the player's unfinished matches, newest first: what a turn stream follows."""
        ids = await self.redis.zrevrange(self.matches_key(player_id, "active"), 0, limit - 1)
        if not ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for match_id in ids:
                pipe.hmget(self.store.key(match_id), ["seats"] + [f"seat:{i}" for i in range(_MAX_SEATS)])
            records = await pipe.execute()
        seats = []
        for match_id, values in zip(ids, records):
            if values[0] is None:
                continue
            for i, raw in enumerate(values[1:1 + int(values[0])]):
                if raw and json.loads(raw).get("player") == player_id:
                    seats.append((match_id, i))
        return seats

    # -- profiles ------------------------------------------------------------------------------------------

    async def profile(self, player_id: str) -> dict[str, Any]:
        """The public profile: name, and per game and variant the rating and the counts of results."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(self.key(player_id))
            pipe.hgetall(self.ratings_key(player_id))
            record, ratings = await pipe.execute()
        if not record.get("name"):
            raise PlayerNotFound(f"There is no player {player_id!r}.")
        rows = []
        for where, raw in sorted(ratings.items()):
            game, _, variant = where.partition("/")
            rows.append({"game": game, "variant": variant, **rating_json(json.loads(raw))})
        return {"id": player_id, "name": record["name"], "created": int(record.get("created") or 0),
                "ratings": rows}


def rating_json(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored rating as the APIs show it: ``rating`` is the conservative ``mu - 3 sigma``."""
    rating = Rating(stored["mu"], stored["sigma"])
    games = int(stored.get("games", 0))
    return {"rating": round(rating.ordinal, 3), "mu": round(rating.mu, 3), "sigma": round(rating.sigma, 3),
            "games": games, "wins": int(stored.get("wins", 0)), "losses": int(stored.get("losses", 0)),
            "draws": int(stored.get("draws", 0)), "provisional": games < PROVISIONAL_GAMES}
