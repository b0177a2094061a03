"""Trades between players' collections: offers, accept/decline/cancel, expiry, and an atomic swap that
survives a process or Redis failure at any step, with the two collections on any Redis Cluster shards.

No one Redis command can touch two players' collections: on a Redis Cluster they may live on different
shards. A trade is therefore a record with a status, moved by compare-and-set (``trade_state.lua``, in the
trade's own slot), and each player's side is changed by idempotent steps in that player's slot
(``trade_side.lua``), each recording a marker of what it did. The protocol:

1. ``offered``: the offer. Nothing is taken from anyone. It expires at ``expires`` (ms); the recipient
   declines, the offerer cancels, or the recipient accepts:
2. ``accepting``: set by the accept (a CAS from ``offered``, before expiry, by the recipient only).
   Then the offerer's side is debited of what it gives, then the recipient's of what it gives
   (``debit``: all or nothing; marker ``debited``, or ``short`` if the player no longer owns it).
3. Both debited: ``settling`` (the commit point). One short: ``aborting``.
4. ``settling``: each side is credited what it receives (``credit``: only from ``debited``, marker
   ``credited``), then ``completed``.
   ``aborting``: each side is given back what it gave (``refund``: from ``debited`` to ``refunded``; a side
   never debited is marked ``void`` so that no late step can debit it), then ``failed``.

Every step can be run again, by the same process or another: a marker makes a repeated side step a no-op, a
status makes a repeated CAS a no-op, and any process that reads a trade in ``accepting``, ``settling`` or
``aborting`` finishes it (:meth:`Trades.settle`). A process that dies, or a Redis call whose answer is lost,
leaves the trade where the last step put it: the accepting request's retry, any read of the trade, or the
workers' sweep (:meth:`Trades.sweep`, every second, over ``<prefix>:trades:live``) carries it on. Items are
never duplicated (a credit follows a debit of the other side, both recorded) nor lost (every debit is
followed by a credit or a refund, whoever runs it).

Keys:

``<prefix>:t:{ID}``
    the trade (hash): ``id``, ``from``, ``to``, ``give`` and ``get`` (JSON counts per kind: what the offerer
    gives and gets), ``status``, ``reason`` (why it failed), ``created``, ``updated``, ``expires`` (ms).
    Kept ``history_ttl`` seconds after it ends.
``<prefix>:p:{ID}:trades``
    a sorted set of the player's trades (made and received) by creation time (ms): both histories.
``<prefix>:p:{ID}:coll:<game>:trade:<trade id>``
    the marker of the player's side of a trade (in the player's slot, beside the collection it guards),
    kept as long as the trade.
``<prefix>:trades:live``
    a sorted set of trades not yet finished, scored by when the sweep should look at them (ms).
"""

from __future__ import annotations

import json
import time
from importlib import resources
from typing import Any

from service.engine.collectibles import Items

from .collections import Collections, describe, flat
from .errors import InvalidTrade, NotYourTrade, PlayerNotFound, TradeClosed, TradeFailed, TradeNotFound
from .players import page_desc
from .tokens import new_id

OFFERED, ACCEPTING, SETTLING, ABORTING = "offered", "accepting", "settling", "aborting"
COMPLETED, FAILED, DECLINED, CANCELLED, EXPIRED = "completed", "failed", "declined", "cancelled", "expired"
#: Statuses of a trade being carried out: whoever reads one finishes it.
IN_PROGRESS = (ACCEPTING, SETTLING, ABORTING)
FINAL = (COMPLETED, FAILED, DECLINED, CANCELLED, EXPIRED)
#: Items one side of a trade may list (different ids) and the most of one id.
MAX_LINES, MAX_COUNT = 30, 100
#: Seconds a trade being carried out is left to the process carrying it out before the sweep takes it over.
SWEEP_GRACE = 5
#: Seconds after an accept entered a trade in the live set during which the sweep leaves an offered one there.
ACCEPT_WINDOW = 60
#: The steps of carrying out a trade, in order (``crash_after`` names them: a test stops the work there).
STEPS = ("accepted", "debited_offerer", "debited_recipient", "decided", "credited_offerer", "credited_recipient",
         "finished")

_SCRIPTS = resources.files(__package__)


class Crash(Exception):
    """Raised by :meth:`Trades.settle` at ``crash_after`` (tests): the process "dies" after that step."""


def _now_ms() -> int:
    return int(time.time() * 1000)


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


class Trades:
    """Trades of one game's collectibles between players (``collections``: their Collections)."""

    def __init__(self, collections: Collections, *, offer_ttl: int = 24 * 3600, max_offer_ttl: int = 7 * 24 * 3600,
                 history_ttl: int = 90 * 24 * 3600):
        self.collections = collections
        self.players = collections.players
        self.redis = collections.redis
        self.prefix = collections.prefix
        self.kinds = collections.rules.kinds
        #: Seconds an offer stays open by default, and at most; seconds a finished trade is kept.
        self.offer_ttl, self.max_offer_ttl, self.history_ttl = offer_ttl, max_offer_ttl, history_ttl
        #: Seconds the sweep leaves a trade to the process carrying it out (tests set 0).
        self.sweep_grace = SWEEP_GRACE
        self._state = self.redis.register_script(_SCRIPTS.joinpath("trade_state.lua").read_text())
        self._side = self.redis.register_script(_SCRIPTS.joinpath("trade_side.lua").read_text())

    # -- keys -------------------------------------------------------------------------------------------

    def key(self, trade_id: str) -> str:
        return f"{self.prefix}:t:{{{trade_id}}}"

    def history_key(self, player_id: str) -> str:
        return f"{self.players.key(player_id)}:trades"

    def marker_key(self, player_id: str, trade_id: str) -> str:
        return f"{self.collections.key(player_id)}:trade:{trade_id}"

    @property
    def live_key(self) -> str:
        return f"{self.prefix}:trades:live"

    # -- offers -----------------------------------------------------------------------------------------

    def check_items(self, items: Any, side: str) -> Items:
        """A side of an offer as counts per kind, checked: known kinds and items, whole counts 1 to 100."""
        if not isinstance(items, dict) or set(items) - set(self.kinds):
            raise InvalidTrade(f"{side} lists items by kind: {', '.join(self.kinds)}.")
        checked: Items = {kind: {} for kind in self.kinds}
        for kind in self.kinds:
            for entry in items.get(kind) or []:
                item, count = entry.get("id"), entry.get("count", 1)
                if not isinstance(item, str) or not isinstance(count, int) or isinstance(count, bool) \
                        or not 1 <= count <= MAX_COUNT:
                    raise InvalidTrade(f"{side}: each item is an id and a count from 1 to {MAX_COUNT}.")
                checked[kind][item] = checked[kind].get(item, 0) + count
        if sum(len(v) for v in checked.values()) > MAX_LINES:
            raise InvalidTrade(f"{side} lists at most {MAX_LINES} different items.")
        unknown = self.collections.rules.unknown_items(checked)
        if unknown:
            raise InvalidTrade(f"{side}: no such item: {', '.join(unknown)}.")
        return checked

    async def offer(self, offerer: str, recipient: str, give: Any, get: Any, expires_in: int | None = None
                    ) -> dict[str, Any]:
        """Offer ``give`` (the offerer's items) for ``get`` (the recipient's). The offerer must own ``give``
        now (NotInCollection otherwise); nothing is taken until the recipient accepts. Raises InvalidTrade,
        PlayerNotFound, NotInCollection."""
        give, get = self.check_items(give, "give"), self.check_items(get, "get")
        if not any(give.values()) and not any(get.values()):
            raise InvalidTrade("A trade gives or gets something.")
        if recipient == offerer:
            raise InvalidTrade("Trade with another player.")
        ttl = self.offer_ttl if expires_in is None else expires_in
        if not 60 <= ttl <= self.max_offer_ttl:
            raise InvalidTrade(f"An offer lasts 60 to {self.max_offer_ttl} seconds.")
        await self.players.get(offerer)
        try:
            await self.players.get(recipient)
        except PlayerNotFound:
            raise PlayerNotFound(f"There is no player {recipient!r} to trade with.") from None
        await self.collections.require(offerer, give)
        trade_id, now = new_id(), _now_ms()
        record = {"id": trade_id, "game": self.collections.game.id, "from": offerer, "to": recipient,
                  "give": _dumps(give), "get": _dumps(get), "status": OFFERED, "created": now, "updated": now,
                  "expires": now + ttl * 1000}
        # listed first, written second: a listing drops an entry whose trade was never written
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(self.history_key(offerer), {trade_id: now})
            pipe.zadd(self.history_key(recipient), {trade_id: now})
            await pipe.execute()
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.key(trade_id), mapping=record)
            pipe.expire(self.key(trade_id), ttl + self.history_ttl)
            await pipe.execute()
        return self.public(record)

    async def get(self, trade_id: str, player_id: str) -> dict[str, Any]:
        """A trade as one of its parties sees it; an unfinished one is carried on first."""
        trade = await self._read(trade_id)
        if player_id not in (trade["from"], trade["to"]):
            raise TradeNotFound(f"There is no trade {trade_id!r} of yours.")
        if trade["status"] in IN_PROGRESS:
            trade = await self.settle(trade_id)
        return self.public(trade, _now_ms())

    async def decline(self, trade_id: str, player_id: str) -> dict[str, Any]:
        """The recipient turns the offer down."""
        return await self._close(trade_id, player_id, "to", DECLINED, "Only the player offered the trade declines it.")

    async def cancel(self, trade_id: str, player_id: str) -> dict[str, Any]:
        """The offerer takes the offer back."""
        return await self._close(trade_id, player_id, "from", CANCELLED, "Only the player who offered it cancels it.")

    async def _close(self, trade_id: str, player_id: str, party: str, status: str, refusal: str) -> dict[str, Any]:
        trade = await self._read(trade_id)
        if player_id not in (trade["from"], trade["to"]):
            raise TradeNotFound(f"There is no trade {trade_id!r} of yours.")
        outcome, now = await self._move(trade_id, OFFERED, status, party, player_id)
        if outcome == "not_party":
            raise NotYourTrade(refusal)
        if outcome != "moved":
            raise await self._closed(trade_id)
        await self.redis.zrem(self.live_key, trade_id)
        return self.public(await self._read(trade_id))

    async def history(self, player_id: str, cursor: str | None = None, limit: int = 20
                      ) -> tuple[list[dict[str, Any]], str | None]:
        """The player's trades, made and received, newest first (ValueError: a cursor not ours)."""
        await self.players.get(player_id)
        key = self.history_key(player_id)
        page, next_cursor = await page_desc(self.redis, key, cursor, limit)
        if not page:
            return [], None
        async with self.redis.pipeline(transaction=False) as pipe:
            for trade_id, _ in page:
                pipe.hgetall(self.key(trade_id))
            records = await pipe.execute()
        now, trades, gone = _now_ms(), [], []
        for (trade_id, _), record in zip(page, records):
            if not record:
                gone.append(trade_id)  # never written (its offerer died), or kept past history_ttl
                continue
            if record["status"] in IN_PROGRESS:
                record = await self.settle(trade_id)
            trades.append(self.public(record, now))
        if gone:
            await self.redis.zrem(key, *gone)
        return trades, next_cursor

    # -- accepting: the swap ------------------------------------------------------------------------------

    async def accept(self, trade_id: str, player_id: str, *, crash_after: str | None = None) -> dict[str, Any]:
        """The recipient accepts: the swap is carried out to its end. Returns the completed trade; raises
        TradeFailed (a party no longer owns its side: nothing moved), NotInCollection (the recipient does
        not own what it gives: the offer stays open), TradeClosed, NotYourTrade or TradeNotFound."""
        trade = await self._read(trade_id)
        if player_id not in (trade["from"], trade["to"]):
            raise TradeNotFound(f"There is no trade {trade_id!r} of yours.")
        if player_id != trade["to"]:
            raise NotYourTrade("Only the player offered the trade accepts it.")
        if trade["status"] == OFFERED:
            await self.collections.require(player_id, trade["get"])  # a clear answer; the swap checks again
            # in the live set first: whatever happens next, the sweep finds the trade; ``entered`` starts the
            # accept window (the sweep moves the entry's score on each time it looks)
            entered = _now_ms()
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zadd(self.live_key, {trade_id: entered + self.sweep_grace * 1000})
                pipe.hset(self.key(trade_id), "entered", entered)
                await pipe.execute()
            outcome, now = await self._move(trade_id, OFFERED, ACCEPTING, "to", player_id)
            if outcome == "expired" or (outcome == "stale" and (await self._read(trade_id))["status"] in FINAL):
                await self.redis.zrem(self.live_key, trade_id)
                raise await self._closed(trade_id)
        elif trade["status"] in FINAL:
            raise TradeClosed(f"This trade is {trade['status']}.", trade["status"])
        _crash(crash_after, "accepted")
        done = await self.settle(trade_id, crash_after=crash_after)
        if done["status"] == FAILED:
            raise TradeFailed(_failure(done), self.public(done))
        return self.public(done)

    async def settle(self, trade_id: str, *, crash_after: str | None = None) -> dict[str, Any]:
        """Carry a trade on from wherever it stands to a final status (idempotent: any process, any time);
        returns the trade. ``crash_after`` (tests): raise :class:`Crash` after that step of :data:`STEPS`."""
        for _ in range(8):
            trade = await self._read(trade_id)
            status = trade["status"]
            if status == ACCEPTING:
                offerer = await self._step(trade, "from", "debit", trade["give"])
                _crash(crash_after, "debited_offerer")
                recipient = "void"
                if offerer == "debited":
                    recipient = await self._step(trade, "to", "debit", trade["get"])
                    _crash(crash_after, "debited_recipient")
                if offerer == recipient == "debited":
                    await self._move(trade_id, ACCEPTING, SETTLING)
                else:
                    reason = "offerer_short" if offerer != "debited" else "recipient_short"
                    await self._move(trade_id, ACCEPTING, ABORTING, reason=reason)
                _crash(crash_after, "decided")
            elif status == SETTLING:
                await self._step(trade, "from", "credit", trade["get"])
                _crash(crash_after, "credited_offerer")
                await self._step(trade, "to", "credit", trade["give"])
                _crash(crash_after, "credited_recipient")
                await self._move(trade_id, SETTLING, COMPLETED)
                _crash(crash_after, "finished")
            elif status == ABORTING:
                await self._step(trade, "from", "refund", trade["give"])
                await self._step(trade, "to", "refund", trade["get"])
                await self._move(trade_id, ABORTING, FAILED)
            else:
                if status != OFFERED:
                    await self.redis.zrem(self.live_key, trade_id)
                return trade
        raise RuntimeError(f"trade {trade_id} did not settle")  # each pass moves it on: unreachable

    async def sweep(self, limit: int = 200) -> int:
        """Finish the trades whose carrying out stopped (a process died): those in the live set whose time
        has come. Safe to run in any number of processes at once. Returns how many it finished."""
        due = await self.redis.zrangebyscore(self.live_key, "-inf", _now_ms(), start=0, num=limit, withscores=True)
        scores = {trade_id: score for trade_id, score in due}
        finished = 0
        for trade_id in scores:
            try:
                trade = await self._read(trade_id)
            except TradeNotFound:
                await self.redis.zrem(self.live_key, trade_id)
                continue
            if trade["status"] == OFFERED:
                # an accept between its entry here and its CAS (look again soon), or one that stopped there
                # (the offer is simply still open: an accept enters it again)
                if _now_ms() > trade["expires"]:
                    await self._move(trade_id, OFFERED, EXPIRED)
                entered = int(trade.get("entered") or scores[trade_id] - self.sweep_grace * 1000)
                if _now_ms() - entered < ACCEPT_WINDOW * 1000 and _now_ms() <= trade["expires"]:
                    await self.redis.zadd(self.live_key, {trade_id: _now_ms() + self.sweep_grace * 1000})
                else:
                    await self.redis.zrem(self.live_key, trade_id)
                continue
            if trade["status"] in IN_PROGRESS:
                await self.redis.hset(self.key(trade_id), "recovered", 1)
                await self.settle(trade_id)
                finished += 1
            else:
                await self.redis.zrem(self.live_key, trade_id)
        return finished

    # -- steps ----------------------------------------------------------------------------------------------

    def public(self, trade: dict[str, Any], now: int | None = None) -> dict[str, Any]:
        """A trade as the APIs show it: its sides listed as the game lists items; an offer past its expiry
        reads ``expired`` even before anything moved it there."""
        if isinstance(trade.get("give"), str):
            trade = _decode(trade)
        status = trade["status"]
        if status == OFFERED and now is not None and now > trade["expires"]:
            status = EXPIRED
        listed = self.collections.rules.listed
        return {"id": trade["id"], "game": trade["game"], "from": trade["from"], "to": trade["to"],
                "give": listed(trade["give"]), "get": listed(trade["get"]), "status": status,
                "reason": trade.get("reason") or None, "created": trade["created"], "updated": trade["updated"],
                "expires": trade["expires"], "recovered": bool(trade.get("recovered"))}

    async def _closed(self, trade_id: str) -> TradeClosed:
        status = (await self._read(trade_id))["status"]
        return TradeClosed(f"This trade is {status}: it is no longer open.", status)

    async def _read(self, trade_id: str) -> dict[str, Any]:
        record = await self.redis.hgetall(self.key(trade_id)) if trade_id else {}
        if not record:
            raise TradeNotFound(f"There is no trade {trade_id!r} (it may have expired).")
        return _decode(record)

    async def _move(self, trade_id: str, expected: str, new: str, party: str = "", player_id: str = "",
                    reason: str = "") -> tuple[str, int]:
        now = _now_ms()
        outcome, _status = await self._state(keys=[self.key(trade_id)], args=[
            expected, new, now, party, player_id, self.history_ttl, reason])
        return outcome, now

    async def _step(self, trade: dict[str, Any], party: str, op: str, items: Items) -> str:
        player_id = trade[party]
        return await self._side(keys=[self.collections.key(player_id), self.marker_key(player_id, trade["id"])],
                                args=[op, self.history_ttl + self.max_offer_ttl, *flat(items)])


def _crash(crash_after: str | None, step: str) -> None:
    if crash_after == step:
        raise Crash(step)


def _failure(trade: dict[str, Any]) -> str:
    if trade.get("reason") == "offerer_short":
        return ("The trade could not be made: its offerer no longer owns " + describe(trade["give"])
                + " (or not all of it). Nothing moved.")
    return "The trade could not be made: you no longer own " + describe(trade["get"]) + ". Nothing moved."


def _decode(record: dict[str, str]) -> dict[str, Any]:
    trade: dict[str, Any] = dict(record)
    for name in ("give", "get"):
        trade[name] = json.loads(record[name])
    for name in ("created", "updated", "expires"):
        trade[name] = int(record[name])
    trade["recovered"] = record.get("recovered") == "1"
    return trade


