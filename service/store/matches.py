"""Match records in Redis and the operations both APIs share.

One match is a few keys sharing a Redis Cluster hash tag ``{ID}``:

``<prefix>:m:{ID}``
    a hash: ``game``, ``variant``, ``options``, ``seed``, ``seats``, ``state``,
    ``version``, ``status``, ``to_act``, ``result``, ``created``, ``updated``
    and one ``seat:<n>`` field per joined seat (name, token hash, entropy);
    for fair play (docs/fairness.md): ``rules_version``, ``seed_source``,
    ``secret_seed`` (never shown before the end; its SHA-256 is the public
    seed commitment), ``state_hash`` (the head of the chain of state hashes:
    the log keeps no hash per action, records.py recomputes them and checks
    them against it), ``entropies`` (fixed at the deal) and ``deal``
    (``pending`` until the last seat joins a ``commitment`` match: ``deal.lua``).
``<prefix>:m:{ID}:log``
    a stream of accepted actions; entry id ``<version>-0``.
``<prefix>:m:{ID}:idem:<seat>:<key hash>``
    the first outcome of an idempotent submission.
``<prefix>:m:{ID}:events``
    the pub/sub channel; each message is an accepted action's update as JSON (its log entry's fields,
    ``version`` and ``result``: see commit.lua), or ``seat:<n>`` on a join or leave.
``<prefix>:m:{ID}:log:z``
    the older part of the log, compressed (archive.py): the stream keeps only
    the newest entries once ``compact_every`` is set; read the log through
    :meth:`MatchStore.log_entries`, never the stream alone.
``<prefix>:lobby:<game>``
    a sorted set of the game's open matches (lobby.py); not in a match's slot.

A seat joined with a player's credential (service/store/players.py) names its
``player`` in its record; the match hash's ``rated``, ``hot_seat`` and ``unlisted``
fields (set at creation) make it a rated match, let one player hold several seats
and keep it out of the lobby, and ``abandoned:<seat>`` names the player who left
that seat of a rated match while it was played.

Versions start at 0 and grow by exactly one per accepted action, written by
``commit.lua`` in one atomic step with the log entry and the publish. A
submission is: one read (``HGETALL`` and the idempotency key), the pure
``game.apply`` in this process, one ``EVALSHA``.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import redis.asyncio as aioredis

from service.engine import Game, IllegalAction, InvalidOptions, RuleError, events_for, seeds
from service.engine.versions import LEGACY_RULES_VERSION, rules_by_version
from service.wire import loads_stored

from . import archive, lobby
from .connect import ReplicaAckTimeout, script_then_wait, then_wait
from .tokens import hash_token, new_id, new_token
from .errors import InvalidEntropy, RulesVersionUnavailable
from .errors import (
    AlreadySeated, IdempotencyKeyReused, InvalidToken, MatchFull, MatchNotFound, MatchNotStarted, NoSuchSeat,
    NotYourSeat, SeatTaken, StoreError, TokenRequired, UnknownGame, VersionConflict,
)


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


def canonical(data: Any) -> Any:
    """JSON from a client with whole floats (``3.0``) as ints, as JSON Schema's "integer" allows."""
    if isinstance(data, float) and data.is_integer():
        return int(data)
    if isinstance(data, dict):
        return {k: canonical(v) for k, v in data.items()}
    if isinstance(data, list):
        return [canonical(v) for v in data]
    return data


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Seat:
    index: int
    name: str | None
    token_hash: str | None = None
    bot: str | None = None  # the bot level playing this seat (service/store/bots.py), or None
    player: str | None = None  # the player the seat is bound to (service/store/players.py), or None

    @property
    def joined(self) -> bool:
        return self.name is not None


@dataclass
class Match:
    """A match as read from Redis. ``state`` is secret: show it only through ``game.view``."""

    id: str
    game: Game
    variant: str
    options: dict[str, Any]
    seed: int
    seats: list[Seat]
    version: int
    status: str  # "waiting" for players, "active", or "finished"
    to_act: list[int]  # may hold BOARD_SEAT (-1): the board itself, not a seat: never index ``seats`` with it
    result: dict[str, Any] | None
    state: dict[str, Any]
    created: int
    updated: int
    turn_seconds: int | None = None  # the turn timer (workers/timers), None for none
    rated: bool = False  # ratings move when it ends (service/store/ratings.py)
    hot_seat: bool = False  # one player may hold several seats
    listed: bool = True  # shown in the lobby while seats are free
    abandoned: dict[int, str] = field(default_factory=dict)  # seat -> player who abandoned it (rated only)
    # -- fair play (docs/fairness.md) --
    rules_version: str = LEGACY_RULES_VERSION
    #: commitment, creator or server (service/engine/seeds.py): a ``creator`` seed was chosen by whoever
    #: created the match, who could foresee every draw; such a match is never rated.
    seed_source: str = "server"
    secret_seed: str | None = None  # secret until the match is finished: show it only as revealed_seed
    state_hash: str | None = None  # the latest hash of the chain; None for matches from before it
    dealt: bool = True  # False while a commitment match waits for its last seat (laid out with a placeholder)

    @property
    def acting(self) -> list[int]:
        """The seats the game waits on; none before every seat is taken or after the end."""
        return self.to_act if self.status == "active" else []

    @property
    def seed_commitment(self) -> str | None:
        """The SHA-256 of the seed, public from creation; None for a match from before commitments."""
        return seeds.commitment(self.secret_seed) if self.secret_seed else None

    @property
    def revealed_seed(self) -> str | None:
        """The committed seed's text once the match is finished; None before (and for a match without one)."""
        return self.secret_seed if self.status == "finished" else None

    def view(self, seat: int | None) -> dict[str, Any]:
        if not self.dealt:  # the placeholder layout: no hand is dealt yet, every seat sees the bare table
            return self.game.view(self.state, None)
        return self.game.view(self.state, seat)

    def legal_actions(self, seat: int | None) -> list[dict[str, Any]]:
        if seat is None or self.status != "active":
            return []
        return self.game.legal_actions(self.state, seat)


@dataclass
class Accepted:
    """An accepted action: the match after it, who acted and the events (unfiltered)."""

    match: Match
    seat: int
    version: int
    events: list[dict[str, Any]]
    duplicate: bool = False

    def events_for(self, seat: int | None) -> list[dict[str, Any]]:
        return events_for(self.events, seat)


@dataclass
class HistoryEntry:
    version: int
    seat: int  # BOARD_SEAT (-1) for the board itself
    action: dict[str, Any] | None  # shown only to the seat that acted
    events: list[dict[str, Any]]
    at: int
    #: the record of a default the service played for a late seat (turn timer), else None: public
    auto: dict[str, Any] | None = None


class MatchStore:
    """Game-agnostic match operations over an asyncio Redis client."""

    def __init__(self, client: aioredis.Redis, games: dict[str, Game], *, prefix: str = "g",
                 finished_ttl: int = 7 * 24 * 3600, idle_ttl: int = 30 * 24 * 3600,
                 idempotency_ttl: int = 24 * 3600, lobby_ttl: int = 3600, compact_every: int = 8,
                 keep_recent: int = 2, on_submit=None, replica_acks: int = 0, replica_wait_ms: int = 500):
        self.redis = client
        self.games = games
        self.prefix = prefix
        self.finished_ttl = finished_ttl
        self.idle_ttl = idle_ttl
        self.idempotency_ttl = idempotency_ttl
        #: Seconds a waiting match stays in the lobby (lobby.py); log compaction (archive.py).
        self.lobby_ttl = lobby_ttl
        self.compact_every = compact_every
        self.keep_recent = max(keep_recent, 1)
        #: ``on_submit(game id | None, code | None)`` after every submission: code None
        #: when accepted (service/metrics.py counts them).
        self.on_submit = on_submit
        #: An accepted action is acknowledged only once this many replicas of its master have it
        #: (``WAIT``, up to ``replica_wait_ms``); else ReplicaAckTimeout. 0: on the master's word.
        self.replica_acks = replica_acks
        self.replica_wait_ms = replica_wait_ms
        #: Every (game id, rules version) this process can play: the current games and older versions
        #: installed beside them (service/engine/versions.py).
        self.rules = rules_by_version(games)
        scripts = resources.files(__package__)
        self._deal = client.register_script(scripts.joinpath("deal.lua").read_text())
        self._commit = client.register_script(scripts.joinpath("commit.lua").read_text())
        self._join = client.register_script(scripts.joinpath("join.lua").read_text())
        self._compact = client.register_script(scripts.joinpath("compact.lua").read_text())
        self._leave = client.register_script(scripts.joinpath("leave.lua").read_text())
        #: Compact the log in a task of its own instead of before answering (archive.py): the
        #: service sets it; jobs run each in an ``asyncio.run`` that would cancel such a task.
        self.compact_in_background = False
        self._background: set = set()
        #: ``async def listener(match)`` called after every accepted action and join
        #: (the bot and timer dispatcher, workers/dispatch.py); a failing one is logged.
        self.listeners: list = []
        #: Player credentials (player tokens, an identity provider's JWTs): service/store/players.py
        #: sets it; without it only seat tokens act.
        self.players = None
        #: Checks that may refuse a match's creation, a join or an accepted action before it is written:
        #: ``check_create(game, options, rated)``, ``check_bots(game, options)`` (service/store/bots.py),
        #: ``async check_join(match_id, player, bot)`` and
        #: ``async check_action(match, seat, action)``; quick match (quickmatch.py) asks them too,
        #: ``async check_queue(player, game, options, rated, bots_after)`` and ``async match_made(match_id)``
        #: (service/store/collections.py: owned collections).
        self.guards: list = []

    async def _notify(self, match: "Match") -> None:
        for listener in self.listeners:
            try:
                await listener(match)
            except Exception:  # an accepted action stays accepted; the bot watchdog recovers
                logging.getLogger("grimoire.store").exception("match listener failed for %s", match.id)

    # -- keys ------------------------------------------------------------------

    def key(self, match_id: str) -> str:
        return f"{self.prefix}:m:{{{match_id}}}"

    def log_key(self, match_id: str) -> str:
        return f"{self.key(match_id)}:log"

    def archive_key(self, match_id: str) -> str:
        return f"{self.key(match_id)}:log:z"

    def channel(self, match_id: str) -> str:
        return f"{self.key(match_id)}:events"

    def lobby_key(self, game_id: str) -> str:
        return f"{self.prefix}:lobby:{game_id}"

    def idempotency_key(self, match_id: str, seat: int, key: str) -> str:
        return f"{self.key(match_id)}:idem:{seat}:{hashlib.sha256(key.encode()).hexdigest()[:32]}"

    # -- operations ------------------------------------------------------------

    def game(self, game_id: str) -> Game:
        try:
            return self.games[game_id]
        except KeyError:
            raise UnknownGame(f"There is no game {game_id!r}; see the list of games.") from None

    def rules_for(self, game_id: str, rules_version: str | None) -> Game:
        """The game that plays a match of ``game_id`` recorded with ``rules_version`` (None: a match from
        before versions were recorded); RulesVersionUnavailable when this process does not have it."""
        version = rules_version or LEGACY_RULES_VERSION
        game = self.rules.get((game_id, version))
        if game is None:
            if game_id not in self.games:
                raise UnknownGame(f"There is no game {game_id!r}; see the list of games.")
            raise RulesVersionUnavailable(game_id, version, sorted(v for g, v in self.rules if g == game_id))
        return game

    async def create(self, game_id: str, *, variant: str | None = None, options: dict | None = None,
                     seats: int | None = None, seed: int | None = None, turn_seconds: int | None = None,
                     rated: bool = False, hot_seat: bool = False, listed: bool = True) -> Match:
        """Create a match; raises UnknownGame or InvalidOptions (a RuleError). ``rated``: players' ratings
        move when it ends; ``hot_seat``: one player may hold several of its seats; ``listed``: shown in
        the lobby while seats are free (a quick match or a rematch is not: its seats are spoken for)."""
        game = self.game(game_id)
        seats = game.min_seats if seats is None else seats
        full_options = game.check_options(variant, canonical(options), seats)
        for guard in self.guards:
            guard.check_create(game, full_options, rated)
        # Fair play (docs/fairness.md): without a seed the match commits to a fresh server seed and is
        # dealt when its last seat joins (_deal_if_due); a creator's seed sets it up now, and it says so.
        if seed is not None and rated:  # whoever fixed the seed could foresee every draw
            raise InvalidOptions("A match whose seed its creator fixed is never rated (docs/fairness.md).")
        if seed is None:
            source, secret, seed = "commitment", seeds.new_server_seed(), seeds.PLACEHOLDER_SEED
        else:
            source, secret = "creator", seeds.creator_seed_text(seed)
        commitment = seeds.commitment(secret)
        state = game.setup(full_options, seats, seed)
        state_json = _dumps(state)
        match_id = new_id()
        now = _now_ms()
        fields = {
            "game": game.id, "variant": full_options["variant"], "options": _dumps(full_options),
            "seed": seed, "seats": seats, "state": state_json, "version": 0, "status": "waiting",
            "to_act": _dumps(sorted(game.to_act(state))), "result": "", "created": now, "updated": now,
            "rules_version": game.rules_version, "seed_source": source, "secret_seed": secret,
        }
        if source == "commitment":
            fields["deal"] = "pending"
        else:
            fields["state_hash"] = seeds.state_hash(secret, commitment, state_json.encode())
        if turn_seconds is not None:
            fields["turn_seconds"] = turn_seconds
        fields.update({name: 1 for name, on in (("rated", rated), ("hot_seat", hot_seat), ("unlisted", not listed))
                       if on})
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.key(match_id), mapping=fields)
            pipe.expire(self.key(match_id), self.idle_ttl)
            await pipe.execute()
        if listed:
            await lobby.listed(self, game.id, match_id, now)
        return self._match(match_id, {k: str(v) for k, v in fields.items()})

    async def get(self, match_id: str, *, notify_deal: bool = True) -> Match:
        """The match; RulesVersionUnavailable if this process lacks its rules version. A ``commitment``
        match whose seats are all taken but which is not dealt yet (its last joiner's process stopped in
        between) is dealt here first; ``notify_deal``: tell the listeners when that happens."""
        record = await self.redis.hgetall(self.key(match_id))
        if not record:
            raise MatchNotFound(f"There is no match {match_id!r} (it may have expired).")
        if "deal" in record and await self._deal_if_due(match_id, record):
            record = await self.redis.hgetall(self.key(match_id))
            if notify_deal:
                await self._notify(self._match(match_id, record))
        return self._match(match_id, record)

    async def _deal_if_due(self, match_id: str, record: dict[str, str]) -> bool:
        """Deal a ``commitment`` match once every seat has joined: derive the RNG seed from the server seed
        and the seats' entropies, set the match up from it, start the chain of state hashes and make the
        match active, in one step (``deal.lua``) that checks the seats are still the ones read. True when
        this call (or a concurrent one) dealt it."""
        seats = int(record["seats"])
        raw_seats = [record.get(f"seat:{i}") for i in range(seats)]
        if record.get("status") != "waiting" or not all(raw_seats):
            return False
        game = self.rules_for(record["game"], record.get("rules_version"))
        infos = [json.loads(raw) for raw in raw_seats]
        entropies = [info.get("entropy", "") for info in infos]
        secret = record["secret_seed"]
        commitment = seeds.commitment(secret)
        seed = seeds.derive_rng_seed(secret, entropies)
        state = game.setup(json.loads(record["options"]), seats, seed)
        state_json = _dumps(state)
        first_hash = seeds.state_hash(secret, commitment, state_json.encode())
        fixed = _dumps([{"seat": i, "entropy": e, "generated": bool(info.get("entropy_generated"))}
                        for i, (e, info) in enumerate(zip(entropies, infos))])
        reply = await self._deal(keys=[self.key(match_id)],
                                 args=[state_json, seed, _dumps(sorted(game.to_act(state))), first_hash, fixed,
                                       _now_ms(), self.channel(match_id), *raw_seats])
        return reply[0] in ("ok", "done")

    async def join(self, match_id: str, name: str, seat: int | None = None, *,
                   bot: dict | None = None, player: str | None = None,
                   entropy: str | None = None) -> tuple[Match, int, str]:
        """Claim a seat; return the match, the seat and its bearer token (shown once).

        ``bot`` (``{"level": ...}``) makes it a bot seat: see service/store/bots.py.
        ``player`` (a player id) binds the seat to that player: their credential acts for it too, and
        they get no second seat of the match unless it is a hot-seat match (AlreadySeated).
        A negative ``seat`` is no seat (``BOARD_SEAT`` is the board's): NoSuchSeat.
        ``entropy``: the seat's contribution to the match's RNG seed (docs/fairness.md), generated
        when None; InvalidEntropy when it is not acceptable. The last seat to join a ``commitment``
        match deals it. RulesVersionUnavailable, with nothing written, when this process lacks the
        match's rules version.
        """
        if seat is not None and seat < 0:
            raise NoSuchSeat(f"This match has no seat {seat}.")
        for guard in self.guards:
            await guard.check_join(match_id, player, bot)
        entropy, generated = await self._entropy(match_id, entropy)
        token = new_token(match_id)
        info = {"name": name, "token": hash_token(token), "joined": _now_ms(), "entropy": entropy}
        if generated:
            info["entropy_generated"] = True
        if bot is not None:
            info["bot"] = bot
        if player is not None:
            info["player"] = player
        record = _dumps(info)
        reply = await self._join(keys=[self.key(match_id)],
                                 args=[-1 if seat is None else seat, record, _now_ms(), self.channel(match_id),
                                       player or ""])
        outcome = reply[0]
        if outcome == "missing":
            raise MatchNotFound(f"There is no match {match_id!r} (it may have expired).")
        if outcome == "taken":
            raise SeatTaken(f"Seat {seat} is already taken.")
        if outcome == "full":
            raise MatchFull("Every seat of this match is taken.")
        if outcome == "no_such_seat":
            raise NoSuchSeat(f"This match has no seat {seat}.")
        if outcome == "already_seated":
            raise AlreadySeated(f"You already hold seat {reply[1]} of this match; a player holds one seat of a "
                                "match (unless it is a hot-seat match).")
        match = await self.get(match_id, notify_deal=False)  # deals the match if this was its last seat
        if match.status == "waiting" and not all(s.joined for s in match.seats) and match.listed:
            await lobby.listed(self, match.game.id, match_id)
        else:
            await lobby.delisted(self, match.game.id, match_id)
        await self._notify(match)
        return match, int(reply[1]), token

    async def _entropy(self, match_id: str, entropy: str | None) -> tuple[str, bool]:
        """A joining seat's entropy (checked, or generated when None) and whether it was generated; first
        checks that this process has the match's rules version (nothing is written otherwise)."""
        if entropy is None:
            entropy, generated = seeds.new_entropy(), True
        else:
            try:
                entropy, generated = seeds.check_entropy(entropy), False
            except seeds.EntropyError as error:
                raise InvalidEntropy(str(error)) from None
        game_id, rules_version = await self.redis.hmget(self.key(match_id), "game", "rules_version")
        if game_id is not None:
            self.rules_for(game_id, rules_version)
        return entropy, generated

    async def leave(self, match_id: str, token: str | None, seat: int | None = None, *,
                    bot: dict | None = None) -> tuple[Match, int]:
        """Give up the token's seat: the token stops working at once (revocation).

        The seat is freed for anyone to join, or, with ``bot`` (``{"level": ...}``),
        handed to a bot in the same atomic step, which then plays it (also mid-match).
        ``seat``, when given, must be the token's. Returns the match after it and
        the seat. Raises TokenRequired, InvalidToken, NotYourSeat or MatchNotFound.
        """
        if token is None:
            raise TokenRequired("Send the seat's bearer token to give the seat up.")
        match, held = await self.read_as(match_id, token)
        if seat is not None and seat != held:
            raise NotYourSeat(f"This token holds seat {held}, not seat {seat}.")
        seat = held
        record = ""
        if bot is not None:
            record = _dumps({"name": f"{bot['level']} bot", "token": hash_token(new_token(match_id)),
                             "joined": _now_ms(), "bot": bot})
        # the seat's own token hash as read: a player's credential holds the seat through its binding
        reply = await self._leave(keys=[self.key(match_id)],
                                  args=[seat, match.seats[seat].token_hash or "", _now_ms(), self.channel(match_id),
                                        record, (match.seats[seat].player or "") if match.rated else ""])
        if reply[0] == "missing":
            raise MatchNotFound(f"There is no match {match_id!r} (it may have expired).")
        if reply[0] == "invalid":
            raise InvalidToken("This token does not hold a seat in this match.")
        match = await self.get(match_id)
        if match.status == "waiting" and match.listed:
            await lobby.listed(self, match.game.id, match_id)
        await self._notify(match)
        return match, seat

    async def read_as(self, match_id: str, token: str | None) -> tuple[Match, int | None]:
        """A match and the seat ``token`` holds in it (None: a spectator).

        ``token`` is a seat token, or a player's credential (a player token or an identity provider's
        JWT: service/store/players.py), which holds the seats bound to its player. A seat token costs
        one read, as ever; a player token is checked in the same round trip as the match is read.
        """
        if token is not None and self.players is not None and self.players.claims(token):
            match, player = await self.players.read_match_as(match_id, token)
            return match, self.player_seat(match, player)
        match = await self.get(match_id)
        return match, self.authenticate(match, token)

    @staticmethod
    def player_seat(match: Match, player: str) -> int:
        """The seat a player acts for: theirs; in a hot-seat match, the first of theirs the game waits on."""
        held = [s.index for s in match.seats if s.player == player]
        if not held:
            raise InvalidToken("This player holds no seat in this match.")
        return next((s for s in held if s in match.acting), held[0])

    def authenticate(self, match: Match, token: str | None) -> int | None:
        """The seat a seat ``token`` acts for; None for no token (a spectator). Player credentials go
        through :meth:`read_as`."""
        if token is None:
            return None
        presented = hash_token(token)
        found = None
        for seat in match.seats:  # compare against every seat: constant time in the token
            if seat.token_hash is not None and hmac.compare_digest(seat.token_hash, presented):
                found = seat.index
        if found is None:
            raise InvalidToken("This token does not hold a seat in this match.")
        return found

    async def submit(self, match_id: str, token: str | None, expected_version: int, action: Any,
                     idempotency_key: str | None = None, *, game_id: str | None = None,
                     acting_seat: int | None = None, auto: dict[str, Any] | None = None) -> Accepted:
        """See :meth:`_submit`; reports each outcome to ``on_submit``."""
        try:
            accepted = await self._submit(match_id, token, expected_version, action, idempotency_key,
                                          game_id=game_id, acting_seat=acting_seat, auto=auto)
        except (RuleError, StoreError) as error:
            if self.on_submit is not None:
                self.on_submit(None, error.code)
            raise
        if self.on_submit is not None and not accepted.duplicate:
            self.on_submit(accepted.match.game.id, None)
        return accepted

    async def _submit(self, match_id: str, token: str | None, expected_version: int, action: Any,
                      idempotency_key: str | None = None, *, game_id: str | None = None,
                      acting_seat: int | None = None, auto: dict[str, Any] | None = None) -> Accepted:
        """Apply ``action`` for the token's seat if the match is at ``expected_version``.

        ``game_id``, when given, is the game the caller believes it plays; an action
        for another game is malformed. Raises a RuleError (refused by the rules),
        VersionConflict, MatchNotFound,
        TokenRequired, InvalidToken, MatchNotStarted or IdempotencyKeyReused.
        Nothing is written unless the action is accepted.

        ``acting_seat`` (instead of a token) is for trusted server-side callers only,
        the bot and timer jobs in workers/; the APIs never pass it. It is the only way
        to act as the board itself (``BOARD_SEAT``): no token maps to it. ``auto``, from
        the timer job only, records in the same log entry that the service played the
        action for a late seat; history, live updates and replays show it.
        """
        action = canonical(action)
        if token is None and acting_seat is None:
            raise TokenRequired("Acting needs the bearer token you got when you joined a seat.")
        if acting_seat is None:
            match, seat = await self.read_as(match_id, token)
        else:
            match, seat = await self.get(match_id), acting_seat
        idem_key = fingerprint = None
        if idempotency_key is not None:
            idem_key = self.idempotency_key(match_id, seat, idempotency_key)
            fingerprint = hashlib.sha256(_dumps([expected_version, action]).encode()).hexdigest()
            seen = await self.redis.get(idem_key)
            if seen is not None:
                return await self._replay_outcome(match, seat, json.loads(seen), fingerprint, idem_key)
        if game_id is not None and game_id != match.game.id:
            raise IllegalAction(f"This is a {match.game.title} match, not {game_id}.")
        if match.status == "waiting":
            raise MatchNotStarted("The match starts when every seat is taken.")
        if expected_version != match.version:
            raise VersionConflict(
                f"The match is at version {match.version}, not {expected_version}; read it again.", match.version)
        try:
            state, events = match.game.apply(match.state, seat, action)
        except RuleError as error:
            if idem_key is not None:
                record = {"fingerprint": fingerprint, "code": error.code, "message": error.message}
                await self.redis.set(idem_key, _dumps(record), ex=self.idempotency_ttl, nx=True)
            raise
        for guard in self.guards:  # the rules accepted it; a guard may still refuse it (nothing is written)
            await guard.check_action(match, seat, action)
        result = match.game.result(state)
        status = "finished" if result is not None else "active"
        now = _now_ms()
        state_json = _dumps(state).encode()  # written as it is and hashed as it is: serialised once
        state_hash = (seeds.state_hash(match.secret_seed, match.state_hash, state_json)
                      if match.state_hash and match.secret_seed else "")
        keys = [self.key(match_id), self.log_key(match_id), self.archive_key(match_id)] + ([idem_key] if idem_key else [])
        args = [expected_version, state_json, status, _dumps(sorted(match.game.to_act(state))),
                _dumps(result) if result is not None else "", seat, _dumps(action), _dumps(events), now,
                self.channel(match_id), self.finished_ttl if result is not None else self.idle_ttl,
                fingerprint or "", self.idempotency_ttl, _dumps(auto) if auto else "", state_hash]
        acked = None
        if self.replica_acks:
            reply, acked = await script_then_wait(self.redis, self._commit, keys, args, self.replica_acks,
                                                  self.replica_wait_ms)
        else:
            reply = await self._commit(keys=keys, args=args)
        outcome = reply[0]
        if outcome == "conflict":
            current = int(reply[1])
            raise VersionConflict(
                f"The match moved on to version {current} before your action landed; read it again.", current)
        if outcome == "missing":
            raise MatchNotFound(f"There is no match {match_id!r} (it may have expired).")
        if outcome == "duplicate":
            return await self._replay_outcome(match, seat, json.loads(reply[1]), fingerprint, idem_key)
        version = int(reply[1])
        match.state, match.version, match.status, match.result, match.updated = state, version, status, result, now
        match.state_hash = state_hash or match.state_hash
        match.to_act = sorted(match.game.to_act(state))
        if archive.due(self, version, status == "finished"):
            if self.compact_in_background:  # the client's answer never waits for it
                task = asyncio.get_running_loop().create_task(self._compact_log(match_id, version, status))
                self._background.add(task)  # held: the loop keeps only a weak reference to a task
                task.add_done_callback(self._background.discard)
            else:
                await self._compact_log(match_id, version, status)
        await self._notify(match)  # before a ReplicaAckTimeout too: the match did move on, bots follow it
        if acked is not None and acked < self.replica_acks:
            raise ReplicaAckTimeout(self.replica_acks, max(acked, 0), self.replica_wait_ms)
        return Accepted(match, seat, version, events)

    async def _compact_log(self, match_id: str, version: int, status: str) -> None:
        try:
            await archive.compact(self, match_id, version, status == "finished")
        except Exception:  # the action stays accepted; a later compaction catches up
            logging.getLogger("grimoire.store").exception("log compaction failed for %s", match_id)

    async def settle(self) -> None:
        """Wait for the log compactions running in the background (at shutdown, and in tests)."""
        while self._background:
            await asyncio.gather(*self._background)

    async def _replay_outcome(self, match: Match, seat: int, record: dict, fingerprint: str,
                              idem_key: str) -> Accepted:
        """The first outcome of an idempotent submission, for a repeat of it.

        With replica acks on, a repeated success is answered only once the replicas have it: the
        first answer may have been a ReplicaAckTimeout, and this one must not acknowledge less.
        """
        if record["fingerprint"] != fingerprint:
            raise IdempotencyKeyReused("This idempotency key was used for a different request.")
        if "code" in record:
            raise RuleError(record["message"], code=record["code"])
        version = record["version"]
        if self.replica_acks:
            await self._replicated(idem_key)
        entries = await archive.entries(self, match.id, version - 1, 1)
        events = json.loads(entries[0][1]["events"]) if entries else []
        return Accepted(await self.get(match.id), seat, version, events, duplicate=True)

    async def _replicated(self, idem_key: str) -> None:
        """Return once the replicas have everything the master had, or raise ReplicaAckTimeout.

        WAIT covers only its own connection's writes: refreshing the idempotency record (in the
        match's slot) first makes it cover everything before, the recorded action included.
        """
        _, acked = await then_wait(self.redis, idem_key, [("EXPIRE", idem_key, self.idempotency_ttl)],
                                   self.replica_acks, self.replica_wait_ms)
        if acked < self.replica_acks:
            raise ReplicaAckTimeout(self.replica_acks, max(acked, 0), self.replica_wait_ms)

    async def confirm(self, match_id: str, seat: int, idempotency_key: str) -> bool:
        """Whether an idempotent submission was accepted; with replica acks on, only once they have it
        (else ReplicaAckTimeout). For a job retrying after a ReplicaAckTimeout, which finds the match
        moved on by its own move: that move may still be lost in a failover."""
        idem_key = self.idempotency_key(match_id, seat, idempotency_key)
        seen = await self.redis.get(idem_key)
        if seen is None or "code" in json.loads(seen):
            return False
        if self.replica_acks:
            await self._replicated(idem_key)
        return True

    async def history(self, match_id: str, seat: int | None, *, after: int = 0, limit: int = 100) -> list[HistoryEntry]:
        """Accepted actions after version ``after``, as ``seat`` may see them."""
        if not await self.redis.exists(self.key(match_id)):
            raise MatchNotFound(f"There is no match {match_id!r} (it may have expired).")
        entries = await self.log_entries(match_id, after=after, limit=limit)
        history = []
        for entry_id, fields in entries:
            shown = archive.log_update(match_id, entry_id, fields).for_seat(seat)
            history.append(HistoryEntry(version=shown["version"], seat=shown["seat"], action=shown["action"],
                                        events=shown["events"], at=shown["at"], auto=shown["auto"]))
        return history

    async def log_entries(self, match_id: str, *, after: int = 0, limit: int = 100) -> list[tuple[str, dict]]:
        """Raw log entries (``("<version>-0", fields)``, unfiltered: secret) after version ``after``."""
        return await archive.entries(self, match_id, after, limit)

    async def lobby(self, game_id: str | None = None, *, limit: int = 50) -> list[dict[str, Any]]:
        """Open matches (waiting, with a free seat) of one game or all: see lobby.py."""
        return await lobby.open_matches(self, game_id, limit=limit)

    async def ping(self) -> bool:
        return bool(await self.redis.ping())

    # -- decoding --------------------------------------------------------------

    def _match(self, match_id: str, record: dict[str, str]) -> Match:
        n = int(record["seats"])
        seats = []
        for i in range(n):
            raw = record.get(f"seat:{i}")
            info = loads_stored(raw) if raw else {}
            seats.append(Seat(i, info.get("name"), info.get("token"), (info.get("bot") or {}).get("level"),
                              info.get("player")))
        return Match(
            id=match_id,
            game=self.rules_for(record["game"], record.get("rules_version")),
            variant=record["variant"],
            options=loads_stored(record["options"]),
            seed=int(record["seed"]),
            seats=seats,
            version=int(record["version"]),
            status=record["status"],
            to_act=loads_stored(record["to_act"]),
            result=loads_stored(record["result"]) if record.get("result") else None,
            state=loads_stored(record["state"]),
            created=int(record["created"]),
            updated=int(record["updated"]),
            turn_seconds=int(record["turn_seconds"]) if record.get("turn_seconds") else None,
            rules_version=record.get("rules_version") or LEGACY_RULES_VERSION,
            seed_source=record.get("seed_source") or "server",
            secret_seed=record.get("secret_seed"),
            state_hash=record.get("state_hash"),
            dealt="deal" not in record,
            rated=record.get("rated") == "1",
            hot_seat=record.get("hot_seat") == "1",
            listed=record.get("unlisted") != "1",
            abandoned={i: record[f"abandoned:{i}"] for i in range(n) if record.get(f"abandoned:{i}")},
        )
