"""Trades (issue 25): offers, accept/decline/cancel, expiry, and an accepted trade's swap that nothing can
break half-way. A process that stops after any step of the swap (``crash_after``, every step of
service/store/trades.py's STEPS), or a Redis reply lost after any script ran, leaves a trade that any reader
or the workers' sweep finishes: nothing is duplicated, nothing lost, every stone and card counted before is
there after. Also on a real Redis Cluster, with the two players' collections on different shards."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis
import redis.asyncio as aioredis

from service.store import MatchStore
from service.store.collections import attach
from service.store.errors import NotInCollection, NotYourTrade, TradeClosed, TradeFailed, TradeNotFound
from service.store.trades import COMPLETED, FAILED, STEPS, Crash

from .conftest import give, new_store_player

pytestmark = pytest.mark.anyio

A_GIVES = {"stones": [{"id": "harry-potter", "count": 1}, {"id": "holly", "count": 2}], "cards": []}
B_GIVES = {"stones": [{"id": "fluffy", "count": 1}], "cards": [{"id": "draco-malfoy", "count": 1}]}


async def pair(collections) -> tuple[str, str]:
    """Two players: A owns 1 Harry Potter and 3 Holly, B 1 Fluffy, 2 Draco Malfoy cards and 1 Mistletoe."""
    a, b = await new_store_player(collections, "A"), await new_store_player(collections, "B")
    await give(collections, a, {"harry-potter": 1, "holly": 3})
    await give(collections, b, {"fluffy": 1, "mistletoe": 1}, {"draco-malfoy": 2})
    return a, b


async def owned(collections, *players: str) -> list[dict]:
    return [await collections.items(p) for p in players]


def total(*collections_: dict) -> dict:
    """Every item summed over the collections: what must be conserved."""
    summed: dict = {}
    for items in collections_:
        for kind, counts in items.items():
            for item, n in counts.items():
                summed[(kind, item)] = summed.get((kind, item), 0) + n
    return summed


SWAPPED = [{"stones": {"holly": 1, "fluffy": 1}, "cards": {"draco-malfoy": 1}},
           {"stones": {"harry-potter": 1, "holly": 2, "mistletoe": 1}, "cards": {"draco-malfoy": 1}}]
UNTOUCHED = [{"stones": {"harry-potter": 1, "holly": 3}, "cards": {}},
             {"stones": {"fluffy": 1, "mistletoe": 1}, "cards": {"draco-malfoy": 2}}]


async def test_a_trade_swaps_exactly_and_is_in_both_histories(stores):
    _store, collections, trades = stores
    a, b = await pair(collections)
    offer = await trades.offer(a, b, A_GIVES, B_GIVES)
    assert offer["status"] == "offered" and offer["give"] == A_GIVES and offer["get"] == B_GIVES
    assert await owned(collections, a, b) == UNTOUCHED  # an offer takes nothing
    done = await trades.accept(offer["id"], b)
    assert done["status"] == COMPLETED and not done["recovered"]
    assert await owned(collections, a, b) == SWAPPED
    for player in (a, b):
        listed, _ = await trades.history(player)
        assert [t["id"] for t in listed] == [offer["id"]] and listed[0]["status"] == COMPLETED
    with pytest.raises(TradeClosed):
        await trades.accept(offer["id"], b)
    assert await owned(collections, a, b) == SWAPPED


@pytest.mark.parametrize("step", STEPS)
async def test_a_process_stopped_after_any_step_leaves_a_trade_the_sweep_finishes(stores, step):
    """The accepting process stops after ``step``; the workers' sweep takes the trade over and completes it."""
    _store, collections, trades = stores
    trades.sweep_grace = 0
    a, b = await pair(collections)
    before = total(*await owned(collections, a, b))
    offer = await trades.offer(a, b, A_GIVES, B_GIVES)
    with pytest.raises(Crash):
        await trades.accept(offer["id"], b, crash_after=step)
    assert await trades.redis.zscore(trades.live_key, offer["id"]) is not None  # the sweep will find it
    await trades.sweep()
    finished = await trades.get(offer["id"], a)
    assert finished["status"] == COMPLETED
    assert await owned(collections, a, b) == SWAPPED
    assert total(*await owned(collections, a, b)) == before
    assert await trades.redis.zscore(trades.live_key, offer["id"]) is None
    await trades.settle(offer["id"])  # once more, from the end: nothing moves
    assert await owned(collections, a, b) == SWAPPED


@pytest.mark.parametrize("step", ["accepted", "debited_offerer"])
async def test_a_stopped_trade_whose_party_lost_its_side_meanwhile_fails_and_gives_everything_back(stores, step):
    """Stopped before the commit point, and meanwhile the recipient no longer owns its side (it traded the Fluffy
    away): the sweep calls the trade off and gives back what was taken. Reason recipient_short."""
    _store, collections, trades = stores
    trades.sweep_grace = 0
    a, b = await pair(collections)
    c = await new_store_player(collections, "C")
    before = total(*await owned(collections, a, b, c))
    offer = await trades.offer(a, b, A_GIVES, B_GIVES)
    with pytest.raises(Crash):
        await trades.accept(offer["id"], b, crash_after=step)
    away = await trades.offer(b, c, {"stones": [{"id": "fluffy"}]}, {})
    await trades.accept(away["id"], c)
    await trades.sweep()
    failed = await trades.get(offer["id"], b)
    assert failed["status"] == FAILED and failed["reason"] == "recipient_short"
    assert await owned(collections, a) == [UNTOUCHED[0]]
    assert total(*await owned(collections, a, b, c)) == before


class LosesOneReply:
    """A script whose ``n``-th run (counted over every script it wraps) loses its reply: Redis ran it, the
    caller hears a connection error -- a Redis failover or a network cut at the worst moment."""

    def __init__(self, script, counter: list[int], n: int):
        self.script, self.counter, self.n = script, counter, n

    async def __call__(self, keys, args):
        reply = await self.script(keys=keys, args=args)
        self.counter[0] += 1
        if self.counter[0] == self.n:
            raise redis.ConnectionError("the reply was lost")
        return reply


@pytest.mark.parametrize("n", range(1, 8))
async def test_a_reply_lost_after_any_script_of_the_swap_changes_nothing_twice(stores, n):
    """Redis runs the n-th script of the accept and its reply is lost: the accept fails; the player asks again (or
    anyone reads the trade) and the trade completes once."""
    _store, collections, trades = stores
    a, b = await pair(collections)
    before = total(*await owned(collections, a, b))
    offer = await trades.offer(a, b, A_GIVES, B_GIVES)
    counter = [0]
    real_side, real_state = trades._side, trades._state
    trades._side, trades._state = LosesOneReply(real_side, counter, n), LosesOneReply(real_state, counter, n)
    try:
        with pytest.raises(redis.ConnectionError):
            await trades.accept(offer["id"], b)
    finally:
        trades._side, trades._state = real_side, real_state
    again = await trades.accept(offer["id"], b) if n == 1 else await trades.get(offer["id"], b)
    assert again["status"] == COMPLETED
    assert await owned(collections, a, b) == SWAPPED and total(*await owned(collections, a, b)) == before


async def test_two_accepts_and_a_decline_at_once_settle_one_way(stores):
    """The recipient accepts twice (two devices) while also declining: the trade is completed once, or declined
    and nothing moved -- never both, never twice."""
    _store, collections, trades = stores
    for _ in range(5):
        a, b = await pair(collections)
        before = total(*await owned(collections, a, b))
        offer = await trades.offer(a, b, A_GIVES, B_GIVES)
        outcomes = await asyncio.gather(trades.accept(offer["id"], b), trades.accept(offer["id"], b),
                                        trades.decline(offer["id"], b), return_exceptions=True)
        status = (await trades.get(offer["id"], a))["status"]
        assert status in ("completed", "declined"), outcomes
        assert await owned(collections, a, b) == (SWAPPED if status == "completed" else UNTOUCHED)
        assert total(*await owned(collections, a, b)) == before
        assert all(isinstance(o, (dict, TradeClosed)) for o in outcomes), outcomes


async def test_who_may_do_what_with_a_trade(stores):
    _store, collections, trades = stores
    a, b = await pair(collections)
    outsider = await new_store_player(collections, "O")
    with pytest.raises(NotInCollection) as lacking:
        await trades.offer(a, b, {"stones": [{"id": "fluffy"}]}, {})
    assert lacking.value.missing == {"stones": [{"id": "fluffy", "count": 1}], "cards": []}
    offer = await trades.offer(a, b, A_GIVES, B_GIVES)
    with pytest.raises(TradeNotFound):
        await trades.get(offer["id"], outsider)
    with pytest.raises(TradeNotFound):
        await trades.accept(offer["id"], outsider)
    with pytest.raises(NotYourTrade):
        await trades.accept(offer["id"], a)  # the offerer cannot accept its own offer
    with pytest.raises(NotYourTrade):
        await trades.cancel(offer["id"], b)  # only the offerer takes it back
    with pytest.raises(NotYourTrade):
        await trades.decline(offer["id"], a)
    assert (await trades.cancel(offer["id"], a))["status"] == "cancelled"
    with pytest.raises(TradeClosed) as closed:
        await trades.accept(offer["id"], b)
    assert closed.value.status == "cancelled"
    assert await owned(collections, a, b) == UNTOUCHED


async def test_the_recipient_lacking_its_side_is_told_what_and_the_offer_stays_open(stores):
    _store, collections, trades = stores
    a, b = await pair(collections)
    offer = await trades.offer(a, b, A_GIVES, {"stones": [{"id": "mistletoe", "count": 2}], "cards": []})
    with pytest.raises(NotInCollection) as lacking:
        await trades.accept(offer["id"], b)
    assert lacking.value.missing == {"stones": [{"id": "mistletoe", "count": 1}], "cards": []}
    assert (await trades.get(offer["id"], b))["status"] == "offered"


async def test_an_offer_whose_offerer_no_longer_owns_it_fails_and_moves_nothing(stores):
    _store, collections, trades = stores
    a, b = await pair(collections)
    c = await new_store_player(collections, "C")
    offer = await trades.offer(a, b, A_GIVES, B_GIVES)
    away = await trades.offer(a, c, {"stones": [{"id": "harry-potter"}]}, {})
    await trades.accept(away["id"], c)
    with pytest.raises(TradeFailed) as failed:
        await trades.accept(offer["id"], b)
    assert failed.value.trade["status"] == FAILED and failed.value.trade["reason"] == "offerer_short"
    assert await owned(collections, b) == [UNTOUCHED[1]]


async def test_a_late_step_of_a_called_off_trade_takes_nothing(stores):
    """A process that read the trade while it was being accepted, and was held up until after another called it
    off, then takes its next step (the recipient's debit): the side was marked void by the abort, so the late
    step takes nothing, and a late credit gives nothing."""
    _store, collections, trades = stores
    a, b = await pair(collections)
    c = await new_store_player(collections, "C")
    offer = await trades.offer(a, b, A_GIVES, B_GIVES)
    stale = await trades._read(offer["id"])
    away = await trades.offer(a, c, {"stones": [{"id": "harry-potter"}]}, {})
    await trades.accept(away["id"], c)
    with pytest.raises(TradeFailed):
        await trades.accept(offer["id"], b)
    assert await trades._step(stale, "to", "debit", stale["get"]) == "void"
    assert await trades._step(stale, "from", "credit", stale["get"]) != "credited"
    assert await owned(collections, b) == [UNTOUCHED[1]]


async def test_offers_expire(stores):
    """An offer lasts `expires_in` seconds (60 at least): past it, it reads expired and cannot be accepted."""
    _store, collections, trades = stores
    a, b = await pair(collections)
    offer = await trades.offer(a, b, A_GIVES, B_GIVES, expires_in=60)
    await trades.redis.hset(trades.key(offer["id"]), "expires", int(time.time() * 1000) - 1)  # a minute on
    assert (await trades.get(offer["id"], b))["status"] == "expired"
    with pytest.raises(TradeClosed) as closed:
        await trades.accept(offer["id"], b)
    assert closed.value.status == "expired"
    assert await owned(collections, a, b) == UNTOUCHED


# -- a real Redis Cluster -------------------------------------------------------------------------------------



@pytest.mark.parametrize("step", [None, *STEPS])
async def test_on_a_cluster_the_two_collections_on_different_shards_swap_and_survive_a_stop(
        cluster, games, settings, key_prefix, step):
    client = aioredis.RedisCluster.from_url(cluster.url, decode_responses=True)
    try:
        store = MatchStore(client, games, prefix=key_prefix)
        collections, trades = attach(store, settings)
        trades.sweep_grace = 0
        while True:  # two players whose collections live on different masters
            a, b = await pair(collections)
            slots = [client.keyslot(collections.key(p)) for p in (a, b)]
            nodes = [client.nodes_manager.get_node_from_slot(slot).name for slot in slots]
            if nodes[0] != nodes[1]:
                break
        before = total(*await owned(collections, a, b))
        offer = await trades.offer(a, b, A_GIVES, B_GIVES)
        if step is None:
            await trades.accept(offer["id"], b)
        else:
            with pytest.raises(Crash):
                await trades.accept(offer["id"], b, crash_after=step)
            await trades.sweep()
        assert (await trades.get(offer["id"], a))["status"] == COMPLETED
        assert await owned(collections, a, b) == SWAPPED and total(*await owned(collections, a, b)) == before
    finally:
        await client.aclose()
