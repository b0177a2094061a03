"""The collections and trades store (service/store/collections.py, service/store/trades.py) held to what it
promises, written against the mutation run's survivors in those two modules: every problem's exact message
(messages go to the caller verbatim: service/store/errors.py), an offer's checks at their edges (counts 1 to 100,
at most 30 lines, 60 s to 7 days), saved hands (the default, the 20-hand cap, names), openings and trade history
a page at a time, bringing a saved hand (credentials, idempotency), and the workers' sweep decision by decision:
an offer whose accept stopped before its compare-and-set, a trade stopped half-way, a record gone, the grace left
to the process carrying a trade out, the accept window and expiry at their exact millisecond.

Real Redis throughout. The trade tests run in a keyspace of their own (``isolated``): the sweep works on the
keyspace's one live set and says how many trades it finished, which other tests' trades must not change. The
sweep's boundaries are tested with the trades module's clock held still (``clock``: ``trades._now_ms``, which
also stamps the ``now`` the state script gets), so that "exactly 60 s" is exactly that. Where a test needs
something to happen at one precise point of a request (a decline landing while an accept checks the
collection, a compare-and-set that never reaches Redis), it wraps the one call at that point, as
tests/collections/test_trades.py's LosesOneReply does; the store itself is never replaced."""

from __future__ import annotations

import asyncio
import dataclasses
import logging

import time
import uuid

import pytest
import redis
import redis.asyncio as aioredis

from service.engine import BOARD_SEAT, IllegalAction
from service.games.casting_stones.catalogue import STONES
from service.store import MatchStore
from service.store import trades as trades_module
from service.store.bots import create_match
from service.store.collections import MAX_HANDS, CollectionGuard, attach, describe, parse_items
from service.store.errors import (
    CollectionPrivate,
    CollectionRequired,
    HandNotFound,
    InvalidHand,
    InvalidTrade,
    NotInCollection,
    NotYourTrade,
    PlayerNotFound,
    PlayerRequired,
    TooManyHands,
    TradeClosed,
    TradeFailed,
    TradeNotFound,
    VersionConflict,
)
from service.store.players import PlayerStore
from service.store.trades import COMPLETED, FAILED, Crash, Trades

from .conftest import give, new_store_player
from .test_hands import HARRY, VOLDEMORT
from .test_trades import A_GIVES, B_GIVES, owned, pair

pytestmark = pytest.mark.anyio

#: A request for a gift: the offerer gives nothing and asks for B's Fluffy.
ASK_FLUFFY = {"stones": [{"id": "fluffy", "count": 1}], "cards": []}
NOTHING = {"stones": [], "cards": []}
SWAPPED = [{"stones": {"holly": 1, "fluffy": 1}, "cards": {"draco-malfoy": 1}},
           {"stones": {"harry-potter": 1, "holly": 2, "mistletoe": 1}, "cards": {"draco-malfoy": 1}}]
UNTOUCHED = [{"stones": {"harry-potter": 1, "holly": 3}, "cards": {}},
             {"stones": {"fluffy": 1, "mistletoe": 1}, "cards": {"draco-malfoy": 2}}]


@pytest.fixture
async def isolated(redis_url, key_prefix, games, settings):
    """(match store, collections, trades) in a keyspace of this test's own (under the session's prefix, so the
    session's cleanup deletes it): its live set of trades holds only this test's."""
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    store = MatchStore(client, games, prefix=f"{key_prefix}:m{uuid.uuid4().hex[:10]}", finished_ttl=600,
                       idle_ttl=600)
    collections, trades = attach(store, settings)
    yield store, collections, trades
    await client.aclose()


class FrozenClock:
    """The trades module's clock held still, moved by the test (ms)."""

    def __init__(self, now: int):
        self.now = now

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    frozen = FrozenClock(int(time.time() * 1000))
    monkeypatch.setattr(trades_module, "_now_ms", frozen)
    return frozen


def now_ms() -> int:
    return int(time.time() * 1000)


class NeverArrives:
    """A script call that never reaches Redis: the process stopped just before it (nothing runs)."""

    async def __call__(self, keys, args):
        raise redis.ConnectionError("the process stopped before this step")


async def accept_stopped_before_its_cas(trades, trade_id: str, player: str) -> None:
    """An accept that entered the trade in the live set and stopped before moving it to ``accepting``."""
    real = trades._state
    trades._state = NeverArrives()
    try:
        with pytest.raises(redis.ConnectionError):
            await trades.accept(trade_id, player)
    finally:
        trades._state = real


async def status_of(trades, trade_id: str) -> str:
    """The status recorded (not the one a reader is shown: an open offer past its expiry reads expired)."""
    return (await trades._read(trade_id))["status"]


# -- offers: what a side may list, and every refusal's sentence ------------------------------------------------

async def test_attach_wires_the_settings_and_the_players_given_once_per_store(redis_url, key_prefix, games, settings):
    """``attach`` (what the service and each worker call at start): the refills a day and an offer's and a finished
    trade's lifetimes come from the settings, the collections use the players' store they are given, and a second
    attach to the same store returns the first one's collections and trades and adds no second guard."""
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        store = MatchStore(client, games, prefix=key_prefix, finished_ttl=600, idle_ttl=600)
        tuned = dataclasses.replace(settings, sets_per_day=3, trade_offer_ttl=120, trade_history_ttl=7200)
        players = PlayerStore(store)
        collections, trades = attach(store, tuned, players)
        assert collections.players is players and collections.sets_per_day == 3
        assert (trades.offer_ttl, trades.history_ttl) == (120, 7200)
        again = attach(store, settings)
        assert again[0] is collections and again[1] is trades
        assert sum(isinstance(guard, CollectionGuard) for guard in store.guards) == 1
    finally:
        await client.aclose()

async def test_an_offers_sides_are_checked_and_each_refusal_names_its_side(isolated):
    """A side is a dict of known kinds, each a list of ``{id, count}`` with a string id and a whole count from 1
    to 100 (not a bool); each refusal says which side (give / get) and why, in so many words."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    by_kind = "{side} lists items by kind: stones, cards."
    each = "{side}: each item is an id and a count from 1 to 100."
    cases = [
        ([], ASK_FLUFFY, by_kind.format(side="give")),  # not a dict
        ({"hats": [{"id": "fez"}]}, ASK_FLUFFY, by_kind.format(side="give")),  # a kind the game has not
        (NOTHING, {"stones": [], "wands": []}, by_kind.format(side="get")),
        ({"stones": [{"id": "holly", "count": 0}]}, ASK_FLUFFY, each.format(side="give")),
        ({"stones": [{"id": "holly", "count": 101}]}, ASK_FLUFFY, each.format(side="give")),
        ({"stones": [{"id": "holly", "count": True}]}, ASK_FLUFFY, each.format(side="give")),
        ({"stones": [{"id": "holly", "count": "2"}]}, ASK_FLUFFY, each.format(side="give")),
        ({"stones": [{"id": 7, "count": 1}]}, ASK_FLUFFY, each.format(side="give")),
        (NOTHING, {"stones": [{"id": "fluffy", "count": 0}]}, each.format(side="get")),
        (NOTHING, {"cards": [{"id": None}]}, each.format(side="get")),
        ({"stones": [{"id": "nope-a"}, {"id": "nope-b"}]}, ASK_FLUFFY,
         "give: no such item: stone 'nope-a', stone 'nope-b'."),
        (NOTHING, {"stones": [{"id": "fluffy"}], "cards": [{"id": "nope-c"}]}, "get: no such item: card 'nope-c'."),
    ]
    for give_, get, message in cases:
        with pytest.raises(InvalidTrade) as refused:
            await trades.offer(a, b, give_, get)
        assert refused.value.message == message, (give_, get)
    assert await trades.history(a) == ([], None)  # nothing was offered


async def test_an_offer_counts_up_to_100_of_an_item_and_lists_up_to_30_items(isolated):
    """100 of one item is allowed; an item listed twice counts the sum; 30 different items are allowed on a side
    and 31 are not."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    hundred = await trades.offer(a, b, NOTHING, {"stones": [{"id": "fluffy", "count": 100}]})
    assert hundred["get"] == {"stones": [{"id": "fluffy", "count": 100}], "cards": []}
    twice = await trades.offer(a, b, {"stones": [{"id": "holly", "count": 1}, {"id": "holly", "count": 2}]},
                               ASK_FLUFFY)
    assert twice["give"] == {"stones": [{"id": "holly", "count": 3}], "cards": []}
    stones = sorted(STONES)[:31]
    thirty = await trades.offer(a, b, NOTHING, {"stones": [{"id": s} for s in stones[:30]]})
    assert sum(e["count"] for e in thirty["get"]["stones"]) == 30
    with pytest.raises(InvalidTrade) as refused:
        await trades.offer(a, b, NOTHING, {"stones": [{"id": s} for s in stones]})
    assert refused.value.message == "get lists at most 30 different items."
    with pytest.raises(InvalidTrade) as refused:
        await trades.offer(a, b, {"stones": [{"id": s} for s in stones]}, NOTHING)
    assert refused.value.message == "give lists at most 30 different items."


async def test_an_offer_gives_or_gets_something_with_another_player_for_60_s_to_7_days(isolated):
    """Nothing for nothing is refused, asking for a gift is not; a player trades with another, existing one; an
    offer lasts ``expires_in`` seconds (default a day) from 60 to 604,800; its times are the server's (ms)."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    for give_, get in ((NOTHING, NOTHING), ({}, {})):
        with pytest.raises(InvalidTrade) as refused:
            await trades.offer(a, b, give_, get)
        assert refused.value.message == "A trade gives or gets something."
    with pytest.raises(InvalidTrade) as refused:
        await trades.offer(a, a, A_GIVES, NOTHING)
    assert refused.value.message == "Trade with another player."
    with pytest.raises(PlayerNotFound) as nobody:
        await trades.offer(a, "nobody-here", A_GIVES, NOTHING)
    assert nobody.value.message == "There is no player 'nobody-here' to trade with."
    for seconds in (59, 7 * 24 * 3600 + 1):
        with pytest.raises(InvalidTrade) as refused:
            await trades.offer(a, b, A_GIVES, B_GIVES, expires_in=seconds)
        assert refused.value.message == "An offer lasts 60 to 604800 seconds."

    before = now_ms()
    gift = await trades.offer(a, b, NOTHING, ASK_FLUFFY)  # asking for a gift: allowed
    after = now_ms()
    assert before <= gift["created"] <= after and gift["updated"] == gift["created"]
    assert gift["expires"] - gift["created"] == 24 * 3600 * 1000 and gift["status"] == "offered"
    minute = await trades.offer(a, b, A_GIVES, B_GIVES, expires_in=60)
    assert minute["expires"] - minute["created"] == 60_000
    week = await trades.offer(a, b, A_GIVES, B_GIVES, expires_in=7 * 24 * 3600)
    assert week["expires"] - week["created"] == 7 * 24 * 3600 * 1000


async def test_who_may_act_on_a_trade_is_told_so_in_words(isolated):
    """An outsider hears the trade is none of theirs (reading, accepting, declining, cancelling); the offerer
    cannot accept or decline, the recipient cannot cancel; each refusal is its own sentence."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    outsider = await new_store_player(collections, "O")
    offer = await trades.offer(a, b, A_GIVES, B_GIVES)
    not_yours = f"There is no trade {offer['id']!r} of yours."
    for act in (trades.get, trades.accept, trades.decline, trades.cancel):
        with pytest.raises(TradeNotFound) as refused:
            await act(offer["id"], outsider)
        assert refused.value.message == not_yours, act
    for act, player, message in ((trades.accept, a, "Only the player offered the trade accepts it."),
                                 (trades.decline, a, "Only the player offered the trade declines it."),
                                 (trades.cancel, b, "Only the player who offered it cancels it.")):
        with pytest.raises(NotYourTrade) as refused:
            await act(offer["id"], player)
        assert refused.value.message == message
    assert (await trades.get(offer["id"], b))["status"] == "offered"
    assert await owned(collections, a, b) == UNTOUCHED


# -- accepting ------------------------------------------------------------------------------------------------

async def test_a_failed_trade_says_whose_side_was_short_naming_the_items(isolated):
    """The offerer's side short: "its offerer no longer owns <give>"; the recipient's short (it traded its
    Fluffy away while its accept was stopped half-way, then accepted again): "you no longer own <get>". Items
    are named kind by kind, in the order the trade records them (kinds sorted), separated by commas."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    c = await new_store_player(collections, "C")
    await give(collections, a, cards={"charms": 1})
    offer = await trades.offer(a, b, {**A_GIVES, "cards": [{"id": "charms"}]}, B_GIVES)
    away = await trades.offer(a, c, {"stones": [{"id": "harry-potter"}]}, NOTHING)
    await trades.accept(away["id"], c)
    with pytest.raises(TradeFailed) as failed:
        await trades.accept(offer["id"], b)
    assert failed.value.message == ("The trade could not be made: its offerer no longer owns 1 x charms (cards), "
                                    "1 x harry-potter (stones), 2 x holly (stones) (or not all of it). Nothing moved.")
    assert failed.value.trade["status"] == FAILED and failed.value.trade["reason"] == "offerer_short"

    a, b = await pair(collections)
    offer = await trades.offer(a, b, A_GIVES, B_GIVES)
    with pytest.raises(Crash) as crashed:
        await trades.accept(offer["id"], b, crash_after="accepted")
    assert crashed.value.args == ("accepted",)  # the step it stopped after
    away = await trades.offer(b, c, {"stones": [{"id": "fluffy"}]}, NOTHING)
    await trades.accept(away["id"], c)
    with pytest.raises(TradeFailed) as failed:
        await trades.accept(offer["id"], b)  # the retry carries the trade on, and it fails
    assert failed.value.message == ("The trade could not be made: you no longer own 1 x draco-malfoy (cards), "
                                    "1 x fluffy (stones). Nothing moved.")
    assert failed.value.trade["reason"] == "recipient_short"
    assert await owned(collections, a) == [UNTOUCHED[0]]


async def test_an_offer_declined_while_its_accept_checks_the_collection_is_closed_for_that_accept(
        isolated, monkeypatch):
    """The recipient declines from another device while its accept is checking its collection: the accept's
    compare-and-set finds the trade declined, so the accept answers TradeClosed (declined), leaves the live set
    as it found it, and nothing moves."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    offer = await trades.offer(a, b, A_GIVES, B_GIVES)
    real_require = collections.require

    async def require_while_declined(player_id, needed):
        await real_require(player_id, needed)
        await trades.decline(offer["id"], b)

    monkeypatch.setattr(collections, "require", require_while_declined)
    with pytest.raises(TradeClosed) as closed:
        await trades.accept(offer["id"], b)
    assert closed.value.status == "declined"
    assert closed.value.message == "This trade is declined: it is no longer open."
    assert await trades.redis.zscore(trades.live_key, offer["id"]) is None
    assert await owned(collections, a, b) == UNTOUCHED


async def test_the_sweep_leaves_an_accepted_trade_to_its_process_for_the_grace_period(isolated, clock):
    """An accept enters the trade in the live set due ``sweep_grace`` (5) seconds on: the sweep leaves it to the
    accepting process until then (a millisecond before, nothing), and takes it over at that moment."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    offer = await trades.offer(a, b, A_GIVES, B_GIVES)
    accepted_at = clock.now
    with pytest.raises(Crash):
        await trades.accept(offer["id"], b, crash_after="accepted")
    assert await trades.redis.zscore(trades.live_key, offer["id"]) == accepted_at + 5000
    clock.now = accepted_at + 4999
    assert await trades.sweep() == 0
    assert await status_of(trades, offer["id"]) == "accepting"
    clock.now = accepted_at + 5000
    assert await trades.sweep() == 1
    done = await trades.get(offer["id"], a)
    assert done["status"] == COMPLETED and done["recovered"] is True
    assert await owned(collections, a, b) == SWAPPED


async def test_a_side_marker_outlives_the_trade_record_whatever_the_history_ttl(isolated):
    """A side's marker is kept as long as the trade: at least the finished trade's ``history_ttl``, also when
    history_ttl is shorter than an offer's longest life (GRIMOIRE_TRADE_HISTORY_TTL of an hour)."""
    _store, collections, _trades = isolated
    for history_ttl in (90 * 24 * 3600, 3600):
        trades = Trades(collections, history_ttl=history_ttl)
        a, b = await pair(collections)
        offer = await trades.offer(a, b, A_GIVES, B_GIVES)
        assert (await trades.accept(offer["id"], b))["status"] == COMPLETED
        record_ttl = await trades.redis.ttl(trades.key(offer["id"]))
        assert 0 < record_ttl <= history_ttl
        for player in (a, b):
            assert await trades.redis.ttl(trades.marker_key(player, offer["id"])) >= record_ttl


# -- history --------------------------------------------------------------------------------------------------

async def test_history_pages_20_at_a_time_newest_first(isolated):
    """21 trades: the first page (no limit given) has 20 and a cursor; the cursor's page the one left."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    made = [(await trades.offer(a, b, NOTHING, ASK_FLUFFY))["id"] for _ in range(21)]
    first, cursor = await trades.history(a)
    assert len(first) == 20 and cursor is not None
    second, end = await trades.history(a, cursor)
    assert end is None and len(second) == 1
    assert sorted(t["id"] for t in first + second) == sorted(made)


async def test_history_drops_a_trade_never_written_carries_on_one_in_progress_and_reads_expiry(isolated):
    """A player's history: an entry whose trade was never written (its offerer stopped between listing and
    writing it) is dropped from the listing and from the history itself, and the older entries still show; a
    trade stopped half-way is carried on (completed); an offer past its expiry reads expired."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    stale_offer = await trades.offer(a, b, NOTHING, ASK_FLUFFY, expires_in=60)
    await trades.redis.hset(trades.key(stale_offer["id"]), "expires", now_ms() - 1)  # its minute passed
    stopped = await trades.offer(a, b, A_GIVES, B_GIVES)
    with pytest.raises(Crash):
        await trades.accept(stopped["id"], b, crash_after="debited_offerer")
    never_written = "never-written"
    for player in (a, b):  # the offer's first step (listing) ran, its second (the record) never did
        await trades.redis.zadd(trades.history_key(player), {never_written: now_ms() + 60_000})
    listed, cursor = await trades.history(a)
    assert cursor is None
    assert {t["id"]: t["status"] for t in listed} == {stopped["id"]: COMPLETED, stale_offer["id"]: "expired"}
    assert await trades.redis.zscore(trades.history_key(a), never_written) is None
    assert await owned(collections, a, b) == SWAPPED


# -- the sweep ------------------------------------------------------------------------------------------------

async def test_the_sweep_finishes_stopped_trades_marks_them_recovered_and_counts_them(isolated):
    """Two trades stopped half-way and, due before them, a live entry whose trade record is gone: the sweep drops
    the entry, carries on past it, finishes both trades (marked recovered), says it finished 2, and empties the
    live set; another sweep finds nothing."""
    _store, collections, trades = isolated
    trades.sweep_grace = 0
    stopped = []
    for step in ("accepted", "debited_recipient"):
        a, b = await pair(collections)
        offer = await trades.offer(a, b, A_GIVES, B_GIVES)
        with pytest.raises(Crash):
            await trades.accept(offer["id"], b, crash_after=step)
        stopped.append((offer["id"], a, b))
    await trades.redis.zadd(trades.live_key, {"gone-trade": 1})
    assert await trades.sweep() == 2
    for trade_id, a, b in stopped:
        done = await trades.get(trade_id, b)
        assert done["status"] == COMPLETED and done["recovered"] is True
        assert await owned(collections, a, b) == SWAPPED
    assert await trades.redis.zcard(trades.live_key) == 0
    assert await trades.sweep() == 0


async def test_the_sweep_looks_at_200_trades_at_a_time(isolated):
    """201 entries due (trades whose records are gone): one sweep takes the 200 most overdue, the next the last."""
    _store, _collections, trades = isolated
    await trades.redis.zadd(trades.live_key, {f"gone-{i}": i for i in range(1, 202)})
    assert await trades.sweep() == 0
    assert await trades.redis.zrange(trades.live_key, 0, -1) == ["gone-201"]
    await trades.sweep()
    assert await trades.redis.zcard(trades.live_key) == 0


async def test_an_offer_whose_accept_stopped_is_looked_at_again_while_it_is_young(isolated, clock):
    """An accept stopped between entering the trade in the live set and its compare-and-set: the offer is still
    open. When due, the sweep leaves it in the live set, due again ``sweep_grace`` seconds on, as long as the
    accept entered it less than the accept window (60 s) ago -- counted from the accept, not from the sweep's
    last look (each look moves the score on) -- and the offer has not expired (at its exact expiry it has not);
    it takes nothing and finishes nothing."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    t0 = clock.now
    offer = await trades.offer(a, b, A_GIVES, B_GIVES, expires_in=60)  # expires at t0 + 60 s
    await accept_stopped_before_its_cas(trades, offer["id"], b)
    assert await trades.redis.zscore(trades.live_key, offer["id"]) == t0 + 5000
    clock.now = t0 + 6000
    assert await trades.sweep() == 0
    assert await trades.redis.zscore(trades.live_key, offer["id"]) == t0 + 11_000
    assert await status_of(trades, offer["id"]) == "offered"
    clock.now = t0 + 59_999  # the accept 59.999 s ago, the offer still open
    assert await trades.sweep() == 0
    assert await status_of(trades, offer["id"]) == "offered"
    assert await trades.redis.zscore(trades.live_key, offer["id"]) == t0 + 64_999
    assert await owned(collections, a, b) == UNTOUCHED

    longer = await trades.offer(a, b, A_GIVES, B_GIVES, expires_in=600)
    t1 = clock.now
    await accept_stopped_before_its_cas(trades, longer["id"], b)
    for looked in range(1, 12):  # a sweep every 5 s keeps moving the score on ...
        clock.now = t1 + looked * 5000
        await trades.sweep()
        assert await trades.redis.zscore(trades.live_key, longer["id"]) == clock.now + 5000
    clock.now = t1 + 60_000  # ... but the window runs from the accept: a minute on, the entry goes
    await trades.sweep()
    assert await trades.redis.zscore(trades.live_key, longer["id"]) is None
    assert await status_of(trades, longer["id"]) == "offered"  # still open: an accept enters it again


async def test_the_sweep_expires_an_offer_past_its_expiry_and_forgets_it(isolated, clock):
    """The same stopped accept, the sweep coming after the offer expired: the offer is moved to expired (its
    ``updated`` the sweep's time) and leaves the live set."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    t0 = clock.now
    offer = await trades.offer(a, b, A_GIVES, B_GIVES, expires_in=60)
    await accept_stopped_before_its_cas(trades, offer["id"], b)
    clock.now = t0 + 60_001
    assert await trades.sweep() == 0
    assert await status_of(trades, offer["id"]) == "expired"
    seen = await trades.get(offer["id"], a)
    assert seen["status"] == "expired" and seen["updated"] == t0 + 60_001
    assert await trades.redis.zscore(trades.live_key, offer["id"]) is None
    assert await owned(collections, a, b) == UNTOUCHED


async def test_an_offer_entered_a_minute_ago_leaves_the_live_set_and_the_sweep_goes_on(isolated, clock):
    """No sweep ran for a while: a stopped accept's entry exactly 60 s past due (the accept window) leaves the
    live set, the offer still open (an accept enters it again); the sweep goes on to a stopped trade due after it
    and finishes it."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    t0 = clock.now
    offer = await trades.offer(a, b, A_GIVES, B_GIVES)  # open for a day
    await accept_stopped_before_its_cas(trades, offer["id"], b)  # due at t0 + 5 s
    c, d = await pair(collections)
    clock.now = t0 + 1
    other = await trades.offer(c, d, A_GIVES, B_GIVES)
    with pytest.raises(Crash):
        await trades.accept(other["id"], d, crash_after="debited_offerer")  # due at t0 + 5.001 s
    clock.now = t0 + 5000 + 60_000
    assert await trades.sweep() == 1
    assert await trades.redis.zscore(trades.live_key, offer["id"]) is None
    assert await status_of(trades, offer["id"]) == "offered"
    assert (await trades.get(other["id"], c))["status"] == COMPLETED
    assert await owned(collections, a, b) == UNTOUCHED
    assert await trades.redis.zcard(trades.live_key) == 0
    done = await trades.accept(offer["id"], b)  # still open: accepted now
    assert done["status"] == COMPLETED


# -- collections: visibility, openings ------------------------------------------------------------------------

async def test_a_collection_made_private_again_is_private(isolated):
    """set_public(True) lets others read the counts; set_public(False) closes them again, in those words."""
    _store, collections, _trades = isolated
    a, _b = await pair(collections)
    await collections.set_public(a, True)
    assert (await collections.public_collection(a))["totals"]["stones"] == 4
    await collections.set_public(a, False)
    with pytest.raises(CollectionPrivate) as private:
        await collections.public_collection(a)
    assert private.value.message == "This player's collection is private."
    assert (await collections.collection(a))["public"] is False


async def test_openings_page_20_at_a_time_and_an_unknown_opening_is_a_key_error(isolated):
    """21 refills opened (granted): the first page (no limit given) has 20 and a cursor, the cursor's page the one
    left; an opening id not the player's raises KeyError naming it."""
    _store, collections, _trades = isolated
    player = await new_store_player(collections, "O")
    await collections.grant(player, "refill", 21)
    opened = [(await collections.open_set(player, "refill"))[0]["id"] for _ in range(21)]
    first, cursor = await collections.openings(player)
    assert len(first) == 20 and cursor is not None
    second, end = await collections.openings(player, cursor)
    assert end is None and len(second) == 1
    assert sorted(o["id"] for o in first + second) == sorted(opened)
    with pytest.raises(KeyError) as unknown:
        await collections.opening(player, "no-such-opening")
    assert unknown.value.args == ("no-such-opening",)


def test_describe_names_items_with_commas_or_says_nothing():
    assert describe({"stones": {"holly": 2, "fluffy": 1}, "cards": {"charms": 1}}) == \
        "1 x fluffy (stones), 2 x holly (stones), 1 x charms (cards)"
    assert describe({"stones": {}, "cards": {}}) == "nothing"


async def test_not_owning_an_offers_side_names_every_item_missing(isolated):
    _store, collections, trades = isolated
    a, b = await pair(collections)
    with pytest.raises(NotInCollection) as lacking:
        await trades.offer(a, b, {"stones": [{"id": "fluffy"}, {"id": "holly", "count": 5}]}, NOTHING)
    assert lacking.value.message == "You do not own 1 x fluffy (stones), 2 x holly (stones)."


# -- saved hands ----------------------------------------------------------------------------------------------

HAND = {"stones": HARRY["stones"], "cards": ["draco-malfoy", "charms", "double-potion"], "hand": HARRY["hand"]}


async def hand_owner(collections) -> str:
    player = await new_store_player(collections, "H")
    await give(collections, player, {s: 1 for s in HAND["stones"]}, {c: 1 for c in HAND["cards"]})
    return player


async def test_a_saved_hand_is_recorded_as_saved_and_the_first_or_a_default_one_is_the_default(isolated):
    """A saved hand reads back with its (trimmed) name, sorted stones and hand, cards in the player's order and
    when it was saved; the first saved is the default, a later one only when saved with ``default``."""
    _store, collections, _trades = isolated
    player = await hand_owner(collections)
    before = now_ms()
    first = await collections.save_hand(player, "  Gryffindor ", HAND)
    after = now_ms()
    assert before <= first.pop("saved") <= after
    assert first == {"name": "Gryffindor", "stones": sorted(HAND["stones"]), "cards": HAND["cards"],
                     "hand": sorted(HAND["hand"]), "default": True}
    second = await collections.save_hand(player, "Second", HAND)
    assert second["default"] is False
    chosen = await collections.save_hand(player, "Chosen", HAND, default=True)
    assert chosen["default"] is True and chosen["name"] == "Chosen"
    third = await collections.save_hand(player, "Third", HAND)
    assert third["default"] is False
    assert (await collections.collection(player))["default_hand"] == "Chosen"
    assert [(h["name"], h["default"]) for h in await collections.hands(player)] == [
        ("Chosen", True), ("Gryffindor", False), ("Second", False), ("Third", False)]


async def test_a_player_keeps_20_hands_and_may_still_replace_one(isolated):
    _store, collections, _trades = isolated
    player = await hand_owner(collections)
    for i in range(MAX_HANDS):
        await collections.save_hand(player, f"Hand {i:02d}", HAND)
    with pytest.raises(TooManyHands) as full:
        await collections.save_hand(player, "One more", HAND)
    assert full.value.message == "A player keeps at most 20 saved hands; delete one first."
    replaced = await collections.save_hand(player, "Hand 05", {**HAND, "cards": list(reversed(HAND["cards"]))})
    assert replaced["cards"] == list(reversed(HAND["cards"]))
    assert len(await collections.hands(player)) == MAX_HANDS


async def test_saves_of_the_20th_hand_at_once_keep_20(isolated, monkeypatch):
    """The cap is checked and the hand written in one script: five saves racing for the last place, one wins.
    Each Redis command waits 10 ms first, as on a busy network, so that the five interleave command by command."""
    _store, collections, _trades = isolated
    player = await hand_owner(collections)
    for i in range(MAX_HANDS - 1):
        await collections.save_hand(player, f"Hand {i:02d}", HAND)
    execute = collections.redis.execute_command

    async def slow(*args, **options):
        await asyncio.sleep(0.01)
        return await execute(*args, **options)

    monkeypatch.setattr(collections.redis, "execute_command", slow)
    racing = await asyncio.gather(*(collections.save_hand(player, f"Last {i}", HAND) for i in range(5)),
                                  return_exceptions=True)
    assert sum(isinstance(outcome, TooManyHands) for outcome in racing) == 4
    assert len(await collections.hands(player)) == MAX_HANDS


async def test_deleting_the_default_hand_makes_the_first_by_name_the_default(isolated):
    """Deleting the default hand: the first remaining by name becomes the default; deleting another keeps it;
    deleting the last leaves none."""
    _store, collections, _trades = isolated
    player = await hand_owner(collections)
    for name in ("Beta", "Gamma", "Alpha"):
        await collections.save_hand(player, name, HAND)
    assert (await collections.collection(player))["default_hand"] == "Beta"
    await collections.delete_hand(player, "Beta")
    assert (await collections.collection(player))["default_hand"] == "Alpha"
    assert (await collections.hand(player, "Alpha"))["default"] is True
    await collections.delete_hand(player, "Gamma")
    assert (await collections.collection(player))["default_hand"] == "Alpha"
    await collections.delete_hand(player, "Alpha")
    assert (await collections.collection(player))["default_hand"] is None
    assert await collections.default_hand(player) is None


async def test_a_hands_name_is_checked_in_so_many_words(isolated):
    _store, collections, _trades = isolated
    player = await hand_owner(collections)
    for name in ("", "   ", "-dash first", "x" * 41, "semi;colon", 42, None):
        with pytest.raises(InvalidHand) as refused:
            await collections.save_hand(player, name, HAND)
        assert refused.value.message == ("A hand's name is 1 to 40 letters, digits, spaces and - _ ' . (starting "
                                         "with a letter or digit)."), name
    assert await collections.hands(player) == []


# -- bringing a saved hand ------------------------------------------------------------------------------------

async def advanced_match(store, collections) -> tuple[str, tuple[str, str], tuple[str, str]]:
    """An Advanced Game (owned collections) with Ann (a saved Harry hand) and Bob (a saved Voldemort hand) seated
    by their player ids; returns (match id, (ann, ann's player token), (bob, bob's token))."""
    seated = []
    for stem, action in (("Ann", HARRY), ("Bob", VOLDEMORT)):
        player, token, _ = await collections.players.create(f"{stem}{uuid.uuid4().hex[:10]}")
        await give(collections, player.id, {s: 1 for s in action["stones"]}, {c: 1 for c in action["cards"]})
        await collections.save_hand(player.id, stem, {k: action[k] for k in ("stones", "cards", "hand")})
        seated.append((player.id, token))
    match = await store.create("casting-stones", variant="advanced")
    for player, _token in seated:
        await store.join(match.id, "x", player=player)
    return match.id, seated[0], seated[1]


async def test_bringing_a_saved_hand_needs_a_player_credential_and_a_hand(stores):
    """No credential, or a seat token: PlayerRequired; a player with no saved hand to bring: HandNotFound; a
    saved hand brought into another game's match: IllegalAction. Each in its own words."""
    store, collections, _trades = stores
    match_id, (ann, ann_token), _bob = await advanced_match(store, collections)
    version = (await store.get(match_id)).version
    other = await store.create("high-card")
    _match, _seat, seat_token = await store.join(other.id, "Anonymous")
    needs = "Bringing a saved hand needs your player token (or identity provider's JWT)."
    for token, where in ((None, match_id), (seat_token, other.id)):
        with pytest.raises(PlayerRequired) as refused:
            await collections.bring_hand(where, token, version, "Ann")
        assert refused.value.message == needs
    await store.join(other.id, "Ann", player=ann)
    with pytest.raises(IllegalAction) as wrong_game:
        await collections.bring_hand(other.id, ann_token, 0, "Ann")
    assert wrong_game.value.message == "This is a High Card match: your saved hands are of Casting Stones."
    await collections.delete_hand(ann, "Ann")
    with pytest.raises(HandNotFound) as none:
        await collections.bring_hand(match_id, ann_token, version, None)
    assert none.value.message == "You have no saved hand to bring; save one first (POST /v1/players/me/hands)."
    assert (await store.get(match_id)).version == version


async def test_bringing_a_saved_hand_is_idempotent_by_key_with_a_token_or_for_a_seated_player(stores):
    """The same bring sent again with its idempotency key answers the first outcome (a duplicate), through a
    player token and through the quick match's trusted path (``player_id``) alike: the match moves once each."""
    store, collections, _trades = stores
    match_id, (_ann, ann_token), (bob, _bob_token) = await advanced_match(store, collections)
    version = (await store.get(match_id)).version
    first = await collections.bring_hand(match_id, ann_token, version, "Ann", "bring-ann")
    again = await collections.bring_hand(match_id, ann_token, version, "Ann", "bring-ann")
    assert not first.duplicate and again.duplicate and again.version == first.version == version + 1
    first = await collections.bring_hand(match_id, None, version + 1, None, "bring-bob", player_id=bob)
    again = await collections.bring_hand(match_id, None, version + 1, None, "bring-bob", player_id=bob)
    assert not first.duplicate and again.duplicate and again.version == first.version == version + 2
    assert (await store.get(match_id)).version == version + 2


async def test_a_match_with_bots_cannot_be_played_with_owned_collections(stores):
    """Creating an Advanced Game match with a bot seat, owned collections: refused before anything is created,
    in the words of the creation (not the later join's)."""
    store, _collections, _trades = stores
    with pytest.raises(CollectionRequired) as refused:
        await create_match(store, "casting-stones", variant="advanced", bots=[{"seat": 1, "level": "random"}])
    assert refused.value.message == ("A bot owns no collection: this match would be played with owned collections. "
                                     "Bots play open_collection matches (unrated).")


def test_a_collection_hash_reads_as_the_positive_counts_of_the_games_kinds():
    """A field of a kind the game does not list, or a count down to zero, is not an item the player has."""
    raw = {"stones:holly": "0", "badges:gold": "1", "stones:fluffy": "2", "cards:charms": "1"}
    assert parse_items(raw, ("stones", "cards")) == {"stones": {"fluffy": 2}, "cards": {"charms": 1}}


# -- the owned-collection guard (service/store/collections.py, CollectionGuard) -------------------------------


def guard_of(store) -> CollectionGuard:
    return next(g for g in store.guards if isinstance(g, CollectionGuard))


async def test_an_owned_collection_quick_match_refuses_bots_and_a_player_without_a_saved_hand_saying_why(stores):
    """An Advanced Game quick match brings each player's saved hand: waiting with bots_after, or without a saved hand,
    is refused in words that say what to do. An open-collection queue, or another game's, asks for neither."""
    store, collections, _trades = stores
    guard, game = guard_of(store), store.game("casting-stones")
    player = await new_store_player(collections)
    owned, open_collection = game.check_options("advanced", None, 2), game.check_options(
        "advanced", {"open_collection": True}, 2)
    with pytest.raises(CollectionRequired) as with_bots:
        await guard.check_queue(player, game, owned, True, 5)
    assert with_bots.value.message == ("Bots own no collection: a quick match played with owned collections waits "
                                       "for players (leave bots_after out).")
    with pytest.raises(HandNotFound) as no_hand:
        await guard.check_queue(player, game, owned, True, None)
    assert no_hand.value.message == ("A quick match of this game brings your saved hand: save one first "
                                     "(POST /v1/players/me/hands).")
    await guard.check_queue(player, game, open_collection, False, 5)
    other = store.game("quidditch")
    await guard.check_queue(player, other, other.check_options(None, None, 2), True, 5)


async def test_a_seat_that_is_no_players_brings_nothing_in_an_owned_collection_match(stores):
    """What only a player's collection can supply, a seat without a player (the board, or a seat out of range)
    cannot act with: refused before the action is applied, in these words."""
    store, collections, _trades = stores
    match_id, _ann, _bob = await advanced_match(store, collections)
    match = await store.get(match_id)
    for seat in (BOARD_SEAT, len(match.seats)):
        with pytest.raises(CollectionRequired) as refused:
            await guard_of(store).check_action(match, seat, HARRY)
        assert refused.value.message == ("This match is played with owned collections and this seat is no "
                                         "player's: it has nothing to bring."), seat


async def test_a_made_match_logs_a_seat_without_a_saved_hand_and_still_brings_the_next_seats(stores, caplog):
    """Ann deleted her saved hand: her seat brings by hand (logged, with its code); Bob's saved hand is still brought
    after it."""
    store, collections, _trades = stores
    match_id, (ann, _token), _bob = await advanced_match(store, collections)
    await collections.delete_hand(ann, "Ann")
    version = (await store.get(match_id)).version
    with caplog.at_level(logging.INFO, logger="grimoire.collections"):
        await guard_of(store).match_made(match_id)
    assert (await store.get(match_id)).version == version + 1
    assert [r.getMessage() for r in caplog.records if r.name == "grimoire.collections"] == [
        f"quick match {match_id}: seat 0's saved hand was not brought (hand_not_found)"]


async def test_a_made_match_brings_again_a_hand_whose_first_bring_met_another_seats(stores, monkeypatch):
    """Both seats bring at once: the bring that finds the match moved on (a version conflict) is tried again at the
    new version, and both hands are in."""
    store, collections, _trades = stores
    match_id, _ann, _bob = await advanced_match(store, collections)
    version = (await store.get(match_id)).version
    bring, conflicts = collections.bring_hand, []

    async def conflicting_once(*args, **kwargs):
        if not conflicts:
            conflicts.append(args)
            raise VersionConflict("Another seat brought first.", current_version=version)
        return await bring(*args, **kwargs)

    monkeypatch.setattr(collections, "bring_hand", conflicting_once)
    await guard_of(store).match_made(match_id)
    assert conflicts and (await store.get(match_id)).version == version + 2


# -- a real Redis Cluster -------------------------------------------------------------------------------------



async def test_on_a_cluster_a_history_lists_trades_kept_on_different_shards(cluster, games, settings, key_prefix):
    """Each trade's record lives in its own slot: a player's history reads records on several shards at once (no
    cross-slot transaction), and a saved hand and a public collection read the player's own slot."""
    client = aioredis.RedisCluster.from_url(cluster.url, decode_responses=True)
    try:
        store = MatchStore(client, games, prefix=key_prefix)
        collections, trades = attach(store, settings)
        a, b = await pair(collections)
        made, nodes = [], set()
        while len(nodes) < 2:  # until two of the trades' records are on different masters
            offer = await trades.offer(a, b, NOTHING, ASK_FLUFFY)
            made.append(offer["id"])
            nodes.add(client.nodes_manager.get_node_from_slot(client.keyslot(trades.key(offer["id"]))).name)
        listed, _ = await trades.history(a)
        assert sorted(t["id"] for t in listed) == sorted(made)
        await collections.set_public(b, True)
        assert (await collections.public_collection(b))["totals"]["stones"] == 2
    finally:
        await client.aclose()
