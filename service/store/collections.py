"""Collections players own, in Redis: counts, sets opened, saved hands, and the guard of owned-collection matches.

What a collection may hold and what a set contains are the game's rules (its
:class:`~service.engine.collectibles.Collectibles`, e.g. Casting Stones'); this module only keeps
counts and records. Keys, each in the player's slot (hash tag ``{PLAYER ID}``, as service/store/players.py),
``<game>`` being the game's id:

``<prefix>:p:{ID}:coll:<game>``
    a hash: ``<kind>:<item id>`` -> how many the player owns (``stones:harry-potter`` -> 2). No field: none.
``<prefix>:p:{ID}:coll:<game>:meta``
    a hash: ``public`` (``1``: others may read the counts), ``once:<set kind>`` (the opening id of a set
    a player opens once: the starter), ``grants:<set kind>`` (sets an operator granted beyond the daily
    allowance: ``grimoire grant-refill``), ``default_hand`` (the saved hand a quick match brings).
``<prefix>:p:{ID}:coll:<game>:day:<YYYY-MM-DD>``
    sets opened that day (UTC) from the daily allowance; it expires two days later.
``<prefix>:p:{ID}:coll:<game>:openings`` and ``...:opening-records``
    a sorted set of opening ids by time (ms) and a hash id -> the opening as JSON: kind, seed, contents,
    the allowance it used, when. The seed is explicit and recorded, so that anyone can open the set again
    (the game's ``open_set(seed, kind)``) and a future seed commitment can wrap it.
``<prefix>:p:{ID}:coll:<game>:opening-idem:<key hash>``
    the opening an ``Idempotency-Key`` made (a day): a repeated request answers it and opens nothing.
``<prefix>:p:{ID}:coll:<game>:hands``
    a hash: hand name -> the saved hand as JSON (``stones``, ``cards``, ``hand``, ``saved``).

Opening a set is one script (``open_set.lua``): the allowance is taken, the contents counted in and
the opening recorded in one atomic step, so a starter set is opened once however many requests race.
Trades move items between collections: service/store/trades.py.

:class:`CollectionGuard` is the match store's guard (MatchStore.guards) for owned-collection matches:
a rated match cannot be an open-collection one, every seat of an owned-collection match is a player's,
and an action that needs items (a ``bring``) is refused with ``not_in_collection`` when its player
lacks any, naming what is missing. Bringing does not use items up.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
import re
import secrets
import time
from importlib import resources
from typing import Any

from service.engine import Game, IllegalAction, InvalidOptions, RuleError
from service.engine.collectibles import Collectibles, Items

from .errors import (
    CollectionPrivate, CollectionRequired, HandNotFound, InvalidHand, NoSetLeft, NotInCollection, PlayerRequired,
    SetOpenedBefore, StoreError, TooManyHands, UnknownSetKind, VersionConflict,
)
from .players import PlayerStore, page_desc
from .tokens import new_id

#: Saved hands a player may keep.
MAX_HANDS = 20
#: A hand's name: 1 to 40 letters, digits, spaces and - _ ' . (trimmed).
HAND_NAME = re.compile(r"^[\w][\w '.\-]{0,39}$")
#: Seconds an opening's idempotency record lives.
IDEMPOTENCY_TTL = 24 * 3600
#: Seconds a day's refill counter lives (past the day itself, whatever the time zone of the reader).
DAY_COUNTER_TTL = 2 * 24 * 3600

_SCRIPTS = resources.files(__package__)
log = logging.getLogger("grimoire.collections")


def _now_ms() -> int:
    return int(time.time() * 1000)


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


def utc_day(now_ms: int) -> str:
    """The UTC day of a time, ``YYYY-MM-DD``: the day a daily allowance counts in."""
    return datetime.datetime.fromtimestamp(now_ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d")


def next_day_ms(now_ms: int) -> int:
    """The start (ms) of the UTC day after ``now_ms``'s: when the daily allowance comes back."""
    day = datetime.datetime.fromtimestamp(now_ms / 1000, datetime.timezone.utc).date()
    start = datetime.datetime.combine(day + datetime.timedelta(days=1), datetime.time(), datetime.timezone.utc)
    return int(start.timestamp() * 1000)


def field(kind: str, item: str) -> str:
    """The collection hash's field of an item."""
    return f"{kind}:{item}"


def parse_items(raw: dict[str, str], kinds: tuple[str, ...]) -> Items:
    """A collection hash as counts per kind and id (kinds the game does not have are ignored)."""
    items: Items = {kind: {} for kind in kinds}
    for name, count in raw.items():
        kind, _, item = name.partition(":")
        if kind in items and int(count) > 0:
            items[kind][item] = int(count)
    return items


def flat(items: Items) -> list:
    """``field, count`` pairs of the positive counts in ``items``, for a script."""
    pairs: list = []
    for kind in sorted(items):
        for item, count in sorted(items[kind].items()):
            if count > 0:
                pairs += [field(kind, item), count]
    return pairs


def collectible_game(games: dict[str, Game]) -> Game | None:
    """The game whose collectibles players own (the first with any), or None."""
    return next((g for g in games.values() if g.collectibles is not None), None)


class Collections:
    """Players' collections of one game's collectibles. ``store.players`` must be set (a PlayerStore)."""

    def __init__(self, players: PlayerStore, game: Game, *, sets_per_day: int = 1):
        if game.collectibles is None:
            raise ValueError(f"{game.id} has no collectibles")
        self.players = players
        self.store = players.store
        self.redis = players.redis
        self.prefix = players.prefix
        self.game = game
        self.rules: Collectibles = game.collectibles
        #: Sets of each repeatable kind (a refill) a player may open per UTC day; an operator grants more.
        self.sets_per_day = sets_per_day
        self._open = self.redis.register_script(_SCRIPTS.joinpath("open_set.lua").read_text())
        self._save_hand = self.redis.register_script(_SCRIPTS.joinpath("save_hand.lua").read_text())

    # -- keys -------------------------------------------------------------------------------------------

    def key(self, player_id: str) -> str:
        return f"{self.players.key(player_id)}:coll:{self.game.id}"

    def meta_key(self, player_id: str) -> str:
        return f"{self.key(player_id)}:meta"

    def day_key(self, player_id: str, day: str) -> str:
        return f"{self.key(player_id)}:day:{day}"

    def openings_key(self, player_id: str) -> str:
        return f"{self.key(player_id)}:openings"

    def records_key(self, player_id: str) -> str:
        return f"{self.key(player_id)}:opening-records"

    def idem_key(self, player_id: str, idempotency_key: str | None) -> str:
        digest = hashlib.sha256((idempotency_key or "").encode()).hexdigest()[:32]
        return f"{self.key(player_id)}:opening-idem:{digest}"

    def hands_key(self, player_id: str) -> str:
        return f"{self.key(player_id)}:hands"

    # -- counts -----------------------------------------------------------------------------------------

    async def items(self, player_id: str) -> Items:
        """What the player owns: counts per kind and item id."""
        return parse_items(await self.redis.hgetall(self.key(player_id)), self.rules.kinds)

    async def missing(self, player_id: str, needed: Items) -> Items:
        """What of ``needed`` the player lacks (per kind; empty kinds kept), read in one round trip."""
        wanted = [(kind, item, count) for kind in needed for item, count in sorted(needed[kind].items())]
        have = await self.redis.hmget(self.key(player_id), [field(k, i) for k, i, _ in wanted]) if wanted else []
        short: Items = {kind: {} for kind in self.rules.kinds}
        for (kind, item, count), owned in zip(wanted, have):
            if int(owned or 0) < count:
                short.setdefault(kind, {})[item] = count - int(owned or 0)
        return short

    async def require(self, player_id: str, needed: Items) -> None:
        """Raise NotInCollection naming what of ``needed`` the player (the caller) lacks."""
        short = await self.missing(player_id, needed)
        if any(short.values()):
            raise NotInCollection(f"You do not own {describe(short)}.", self.rules.listed(short))

    async def collection(self, player_id: str) -> dict[str, Any]:
        """The owner's view: the counts, whether they are public, and the sets the player can open now."""
        await self.players.get(player_id)
        now = _now_ms()
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(self.key(player_id))
            pipe.hgetall(self.meta_key(player_id))
            pipe.get(self.day_key(player_id, utc_day(now)))
            raw, meta, used_today = await pipe.execute()
        items = parse_items(raw, self.rules.kinds)
        sets = []
        for kind in self.rules.set_kinds:
            if kind in self.rules.once_per_player:
                opened = bool(meta.get(f"once:{kind}"))
                sets.append({"kind": kind, "available": 0 if opened else 1, "per_day": None, "opened_today": None,
                             "granted": 0, "next_at": None})
            else:
                used, granted = int(used_today or 0), int(meta.get(f"grants:{kind}") or 0)
                daily_left = max(self.sets_per_day - used, 0)
                sets.append({"kind": kind, "available": daily_left + granted, "per_day": self.sets_per_day,
                             "opened_today": used, "granted": granted,
                             "next_at": None if daily_left + granted else next_day_ms(now)})
        return {"player_id": player_id, "game": self.game.id, "public": meta.get("public") == "1",
                **self.rules.listed(items), "totals": totals(items), "sets": sets,
                "default_hand": meta.get("default_hand")}

    async def public_collection(self, player_id: str) -> dict[str, Any]:
        """Another player's counts, if they made them public; else CollectionPrivate (PlayerNotFound if none)."""
        await self.players.get(player_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(self.meta_key(player_id), "public")
            pipe.hgetall(self.key(player_id))
            public, raw = await pipe.execute()
        if public != "1":
            raise CollectionPrivate("This player's collection is private.")
        items = parse_items(raw, self.rules.kinds)
        return {"player_id": player_id, "game": self.game.id, **self.rules.listed(items), "totals": totals(items)}

    async def set_public(self, player_id: str, public: bool) -> None:
        await self.players.get(player_id)
        await self.redis.hset(self.meta_key(player_id), "public", "1" if public else "0")

    async def progress(self, player_id: str, *, owner: bool) -> dict[str, Any]:
        """Collectors' view (completion per rarity, missing, duplicates); others' only if public."""
        if owner:
            await self.players.get(player_id)
            items = await self.items(player_id)
        else:
            listed = await self.public_collection(player_id)
            items = {kind: {e["id"]: e["count"] for e in listed[kind]} for kind in self.rules.kinds}
        return {"player_id": player_id, "game": self.game.id, **self.rules.progress(items)}

    # -- sets -------------------------------------------------------------------------------------------

    async def open_set(self, player_id: str, kind: str, idempotency_key: str | None = None, *,
                       seed: int | None = None) -> tuple[dict[str, Any], bool]:
        """Open a set for the player; returns (the opening, whether it repeats an earlier request's).

        The seed is drawn here (63 random bits) and recorded with the opening; its contents are the
        game's ``open_set(seed, kind)``. Raises UnknownSetKind, SetOpenedBefore (a set opened once, opened
        already), NoSetLeft (no allowance left today and no grant) or PlayerNotFound."""
        if kind not in self.rules.set_kinds:
            raise UnknownSetKind(f"There is no set {kind!r}; sets: {', '.join(self.rules.set_kinds)}.")
        await self.players.get(player_id)
        seed = secrets.randbits(63) if seed is None else seed
        contents = self.rules.open_set(seed, kind)
        opening_id, now = new_id(), _now_ms()
        record = {"id": opening_id, "kind": kind, "seed": str(seed), "at": now, **contents}
        added: Items = {k: {} for k in self.rules.kinds}
        for k, items in contents.items():
            for item in items:
                added[k][item] = added[k].get(item, 0) + 1
        once = kind in self.rules.once_per_player
        day = utc_day(now)
        reply = await self._open(
            keys=[self.key(player_id), self.meta_key(player_id), self.day_key(player_id, day),
                  self.openings_key(player_id), self.records_key(player_id), self.idem_key(player_id, idempotency_key)],
            args=[kind, "once" if once else "daily", opening_id, now, self.sets_per_day, DAY_COUNTER_TTL,
                  "1" if idempotency_key else "0", IDEMPOTENCY_TTL,
                  _dumps({**record, "allowance": "once" if once else "daily"}),
                  _dumps({**record, "allowance": "grant"}), *flat(added)])
        outcome = reply[0]
        if outcome == "repeat":
            return await self.opening(player_id, reply[1]), True
        if outcome == "opened_before":
            raise SetOpenedBefore(f"You opened your {kind} set already (opening {reply[1]}); a player opens one.")
        if outcome == "none_left":
            raise NoSetLeft(f"You have opened the {self.sets_per_day} {kind} set(s) a day allows, and have no "
                            "granted one; the allowance comes back at midnight UTC.", next_day_ms(now))
        return {**record, "allowance": reply[1]}, False

    async def opening(self, player_id: str, opening_id: str) -> dict[str, Any]:
        raw = await self.redis.hget(self.records_key(player_id), opening_id)
        if raw is None:
            raise KeyError(opening_id)
        return json.loads(raw)

    async def openings(self, player_id: str, cursor: str | None = None, limit: int = 20
                       ) -> tuple[list[dict[str, Any]], str | None]:
        """The player's openings, newest first, a page at a time (ValueError: a cursor not ours)."""
        await self.players.get(player_id)
        page, next_cursor = await page_desc(self.redis, self.openings_key(player_id), cursor, limit)
        if not page:
            return [], None
        raws = await self.redis.hmget(self.records_key(player_id), [opening_id for opening_id, _ in page])
        return [json.loads(raw) for raw in raws if raw], next_cursor

    async def grant(self, player_id: str, kind: str, count: int = 1) -> int:
        """Grant the player ``count`` more sets of ``kind`` beyond the daily allowance (an operator's
        ``grimoire grant-refill``); returns how many granted ones the player now holds."""
        if kind not in self.rules.set_kinds or kind in self.rules.once_per_player:
            raise UnknownSetKind(f"Only {', '.join(k for k in self.rules.set_kinds if k not in self.rules.once_per_player)}"
                                 f" sets can be granted, not {kind!r}.")
        await self.players.get(player_id)
        return int(await self.redis.hincrby(self.meta_key(player_id), f"grants:{kind}", count))

    # -- saved hands ------------------------------------------------------------------------------------

    async def save_hand(self, player_id: str, name: Any, hand: dict[str, Any], *, default: bool = False
                        ) -> dict[str, Any]:
        """Save (or replace) a named hand the player owns everything of; the first one saved, or one saved
        with ``default``, is what a quick match brings. Raises InvalidHand, TooManyHands, NotInCollection."""
        name = check_hand_name(name)
        problem = self.rules.hand_problem(hand)
        if problem:
            raise InvalidHand(problem)
        stones, cards, chosen = list(hand["stones"]), list(hand["cards"]), list(hand["hand"])
        await self.require(player_id, self.rules.hand_needs(hand))
        saved = {"name": name, "stones": sorted(stones), "cards": cards, "hand": sorted(chosen), "saved": _now_ms()}
        if not await self._save_hand(keys=[self.hands_key(player_id), self.meta_key(player_id)],
                                     args=[name, _dumps(saved), MAX_HANDS, "1" if default else "0"]):
            raise TooManyHands(f"A player keeps at most {MAX_HANDS} saved hands; delete one first.")
        return await self.hand(player_id, name)

    async def hand(self, player_id: str, name: str) -> dict[str, Any]:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(self.hands_key(player_id), name)
            pipe.hget(self.meta_key(player_id), "default_hand")
            raw, default = await pipe.execute()
        if raw is None:
            raise HandNotFound(f"You have no saved hand {name!r}.")
        return {**json.loads(raw), "default": default == name}

    async def hands(self, player_id: str) -> list[dict[str, Any]]:
        """The player's saved hands by name."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(self.hands_key(player_id))
            pipe.hget(self.meta_key(player_id), "default_hand")
            raws, default = await pipe.execute()
        return [{**json.loads(raws[name]), "default": default == name} for name in sorted(raws)]

    async def delete_hand(self, player_id: str, name: str) -> None:
        if not await self.redis.hdel(self.hands_key(player_id), name):
            raise HandNotFound(f"You have no saved hand {name!r}.")
        meta = self.meta_key(player_id)
        if await self.redis.hget(meta, "default_hand") == name:
            rest = sorted(await self.redis.hkeys(self.hands_key(player_id)))
            if rest:
                await self.redis.hset(meta, "default_hand", rest[0])
            else:
                await self.redis.hdel(meta, "default_hand")

    async def default_hand(self, player_id: str) -> dict[str, Any] | None:
        name = await self.redis.hget(self.meta_key(player_id), "default_hand")
        if name is None:
            return None
        try:
            return await self.hand(player_id, name)
        except HandNotFound:
            return None

    async def bring_hand(self, match_id: str, token: str | None, expected_version: int, name: str | None,
                         idempotency_key: str | None = None, *, player_id: str | None = None):
        """Bring a saved hand (``name``; None: the player's default one) into a match, as the action the
        game makes of it, through MatchStore.submit (so its guard checks the hand is still owned). With
        ``player_id`` (trusted callers: the quick match) the seat is the player's, no token needed."""
        if player_id is None:
            if not token or not self.players.claims(token):
                raise PlayerRequired("Bringing a saved hand needs your player token (or identity provider's JWT).")
            match, seat = await self.store.read_as(match_id, token)
            player_id = match.seats[seat].player
        else:
            match = await self.store.get(match_id)
            seat = self.store.player_seat(match, player_id)
        hand = await self.hand(player_id, name) if name is not None else await self.default_hand(player_id)
        if hand is None:
            raise HandNotFound("You have no saved hand to bring; save one first (POST /v1/players/me/hands).")
        if match.game.id != self.game.id:
            raise IllegalAction(f"This is a {match.game.title} match: your saved hands are of {self.game.title}.")
        action = self.rules.hand_action(match.options, hand)
        if token is not None:
            return await self.store.submit(match_id, token, expected_version, action, idempotency_key,
                                           game_id=self.game.id)
        return await self.store.submit(match_id, None, expected_version, action, idempotency_key,
                                       acting_seat=seat)


def check_hand_name(name: Any) -> str:
    if not isinstance(name, str) or not HAND_NAME.match(name.strip()):
        raise InvalidHand("A hand's name is 1 to 40 letters, digits, spaces and - _ ' . (starting with a letter "
                          "or digit).")
    return name.strip()


def totals(items: Items) -> dict[str, int]:
    """How many items of each kind, and how many different ones: ``{"<kind>": n, "distinct_<kind>": n}``."""
    out = {}
    for kind, counts in items.items():
        out[kind] = sum(counts.values())
        out[f"distinct_{kind}"] = sum(1 for n in counts.values() if n > 0)
    return out


def describe(items: Items) -> str:
    """Items for a sentence: ``2 x harry-potter (stones), 1 x charms (cards)``."""
    parts = [f"{count} x {item} ({kind})" for kind in items for item, count in sorted(items[kind].items())]
    return ", ".join(parts) or "nothing"


class CollectionGuard:
    """The match store's guard for owned-collection matches (MatchStore.guards): see the module docstring."""

    def __init__(self, collections: Collections):
        self.collections = collections
        self.store = collections.store

    def check_create(self, game: Game, options: dict[str, Any], rated: bool) -> None:
        if rated and game.collectibles is not None and game.collectibles.policy(options) == "open":
            raise InvalidOptions("A rated match is played with owned collections: open_collection is for "
                                 "unrated matches (bots and tests).")

    def check_bots(self, game: Game, options: dict[str, Any]) -> None:
        """Before a match is created with bots in some seats."""
        if game.collectibles is not None and game.collectibles.policy(options) == "owned":
            raise CollectionRequired("A bot owns no collection: this match would be played with owned "
                                     "collections. Bots play open_collection matches (unrated).")

    async def check_join(self, match_id: str, player: str | None, bot: dict | None) -> None:
        if player is not None:
            return
        game_id, rules_version, options = await self.store.redis.hmget(
            self.store.key(match_id), ["game", "rules_version", "options"])
        if game_id is None:
            return  # no such match: the join itself says so
        game = self.store.rules_for(game_id, rules_version)
        if game.collectibles is None or game.collectibles.policy(json.loads(options)) != "owned":
            return
        if bot is not None:
            raise CollectionRequired("A bot owns no collection: this match is played with owned collections. "
                                     "Bots play open_collection matches (unrated).")
        raise PlayerRequired("This match is played with owned collections: join with your player token (or "
                             "identity provider's JWT), so that you bring what you own.")

    async def check_action(self, match, seat: int, action: dict[str, Any]) -> None:
        rules = match.game.collectibles
        if rules is None:
            return
        needed = rules.needs(match.options, action)
        if not needed or not any(needed.values()):
            return
        player = match.seats[seat].player if 0 <= seat < len(match.seats) else None
        if player is None:
            raise CollectionRequired("This match is played with owned collections and this seat is no "
                                     "player's: it has nothing to bring.")
        await self.collections.require(player, needed)

    async def check_queue(self, player_id: str, game: Game, options: dict[str, Any], rated: bool,
                          bots_after: int | None) -> None:
        """Before a player waits for a quick match of ``game`` with ``options``: an owned-collection match
        brings each player's default saved hand, so the player must have one, and no bot can fill a seat."""
        if game.collectibles is None or game.collectibles.policy(options) != "owned" or game.id != self.game_id:
            return
        if bots_after is not None:
            raise CollectionRequired("Bots own no collection: a quick match played with owned collections waits "
                                     "for players (leave bots_after out).")
        if await self.collections.default_hand(player_id) is None:
            raise HandNotFound("A quick match of this game brings your saved hand: save one first "
                               "(POST /v1/players/me/hands).")

    async def match_made(self, match_id: str) -> None:
        """After a quick match seated its players: in an owned-collection match, each player's seat that has
        not brought yet brings the player's default saved hand (a player without one brings by hand)."""
        match = await self.store.get(match_id)
        rules = match.game.collectibles
        if rules is None or rules.policy(match.options) != "owned" or match.game.id != self.game_id:
            return
        for seat in match.seats:
            for _ in range(5):  # both seats bring at once: a version conflict means the other brought first
                match = await self.store.get(match_id)
                if seat.player is None or seat.index not in match.acting:
                    break
                try:
                    await self.collections.bring_hand(match_id, None, match.version, None,
                                                      f"saved-hand:{seat.index}", player_id=seat.player)
                    break
                except VersionConflict:
                    continue
                except (RuleError, StoreError) as error:  # the seat brings by hand instead
                    log.info("quick match %s: seat %d's saved hand was not brought (%s)", match_id, seat.index,
                             error.code)
                    break

    @property
    def game_id(self) -> str:
        return self.collections.game.id


def attach(store, settings, players: PlayerStore | None = None) -> tuple[Collections, "Trades"] | None:
    """Give a match store (the service's or a worker's) the collections of its collectible game and the
    guard of owned-collection matches; returns (collections, trades), None when no game has collectibles.
    ``players``: the process's PlayerStore (one without an identity provider is made if None). Attaching
    to a store that has them already returns the ones it has."""
    from .trades import Trades

    game = collectible_game(store.games)
    if game is None:
        return None
    attached = next((g for g in store.guards if isinstance(g, CollectionGuard)), None)
    if attached is not None:  # once per store
        return attached.collections, attached.trades
    players = players or store.players or PlayerStore(store)
    collections = Collections(players, game, sets_per_day=settings.sets_per_day)
    trades = Trades(collections, offer_ttl=settings.trade_offer_ttl, history_ttl=settings.trade_history_ttl)
    guard = CollectionGuard(collections)
    guard.trades = trades
    store.guards.append(guard)
    return collections, trades


def grant_refill(settings, player_id: str, count: int) -> int:
    """``grimoire grant-refill PLAYER --count N``: grant a player N Refill Sets beyond the daily allowance, on
    the Redis of REDIS_URL (REDIS_CLUSTER and GRIMOIRE_KEY_PREFIX as the service reads them). Exit status 0,
    or 2 with a sentence on stderr (no REDIS_URL, no such player, a count below 1)."""
    import asyncio
    import sys

    from service.games import all_games

    from .connect import open_store
    from .errors import PlayerNotFound

    if not settings.redis_url:
        print("grimoire grant-refill needs REDIS_URL: the Redis the service uses.", file=sys.stderr)
        return 2
    if count < 1:
        print("--count is 1 or more.", file=sys.stderr)
        return 2

    async def grant() -> int:
        store = open_store(settings, all_games())
        try:
            attached = attach(store, settings)
            if attached is None:
                print("No game of this service has collectibles.", file=sys.stderr)
                return 2
            collections, _ = attached
            kind = next(k for k in collections.rules.set_kinds if k not in collections.rules.once_per_player)
            try:
                held = await collections.grant(player_id, kind, count)
            except PlayerNotFound as error:
                print(error.message, file=sys.stderr)
                return 2
            print(f"granted {count} {kind} set(s) to {player_id}: {held} granted set(s) to open")
            return 0
        finally:
            await store.redis.aclose()

    return asyncio.run(grant())
