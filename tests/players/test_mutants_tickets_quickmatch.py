"""Stream tickets (service/store/tickets.py), quick matches made from their groups (service/store/quickmatch.py)
and the identity provider's configuration (service/store/idp.py), held to what they promise. Written against the
mutation run's survivors (tests/mutation/run.py, module ``players``): a refusal's message changed, a ticket's
lifetime or secret moved by one, a quick match made with the wrong seat count, listing, seat order, bots or record
lifetime, or a maker that gives up too soon must each fail a test here.

Real Redis throughout, through each module's own API (StreamTickets, QuickMatch, create_app). A ticket's lifetime is
tested with the tickets module's clock held still (``clock``), so that "30 s" is exactly that. The quick-match tests
run in a keyspace of their own (``quick``: the set of queues in use holds only the test's). A group is written as the
pairing script leaves it (service/store/pairing.lua: ``{"players", "bots", "at"}`` under its group id), with a group
id chosen so that the seat order drawn from it is not the seats' own order; a maker that died half-way is what it
left (the match claimed for the group, some players seated); a concurrent maker is the one call it makes, run just
before the maker under test makes its own (as tests/collections/test_trades.py's LosesOneReply wraps one call)."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import random
import time
import uuid

import pytest
import redis.asyncio as aioredis

from service.app import create_app
from service.engine import InvalidOptions
from service.store import MatchStore, SeatTaken, TokenRequired, quickmatch, tickets
from service.store.errors import AlreadyQueued
from service.store.players import PlayerStore
from service.store.quickmatch import QuickMatch
from service.store.tickets import (
    InvalidStreamTicket,
    StreamTicketExpired,
    StreamTickets,
    StreamTicketUsed,
    StreamTicketWrongMatch,
)
from workers import runtime
from workers.players import sweep_quick_matches
from tests.store.test_matches import anyio_backend, started, store  # noqa: F401 (fixtures)

from .conftest import unique_name

pytestmark = pytest.mark.anyio

NOT_A_TICKET = "That is not a stream ticket."
UNKNOWN = "No such stream ticket (or it expired a while ago); ask for a new one."


# -- stream tickets ----------------------------------------------------------------------------------------------------


class FrozenClock:
    """The tickets module's clock held still, moved by the test (ms). It reads half a millisecond past ``ms`` so that
    ``int(time() * 1000)`` is exactly ``ms`` whatever the float's rounding."""

    def __init__(self, ms: int):
        self.ms = ms

    def time(self) -> float:
        return (self.ms + 0.5) / 1000


@pytest.fixture
def clock(monkeypatch):
    frozen = FrozenClock(1_800_000_000_000)
    monkeypatch.setattr(tickets, "time", frozen)  # the module's own reference: the store's clock is untouched
    return frozen


async def refusal(kind: type, spending) -> str:
    with pytest.raises(kind) as refused:
        await spending
    return refused.value.message


async def test_a_ticket_lasts_thirty_seconds_by_default_to_the_millisecond(store, clock):  # noqa: F811
    """Good at its 29 999th millisecond, expired at its 30 000th (and the refusal says how long tickets last)."""
    match, (t0, _) = await started(store)
    issuer = StreamTickets(store)
    last_moment, too_late = await issuer.issue(match.id, t0), await issuer.issue(match.id, t0)
    assert (last_moment.expires_in, too_late.expires_in) == (30, 30)
    clock.ms += 29_999
    holder = await issuer.spend(match.id, last_moment.ticket)
    assert (holder.match_id, holder.seat) == (match.id, 0)
    clock.ms += 1
    assert await refusal(StreamTicketExpired, issuer.spend(match.id, too_late.ticket)) == \
        "This stream ticket expired (tickets last 30 s); ask for a new one."


async def test_a_tickets_secret_is_256_bits_after_st_and_its_match_id(store):  # noqa: F811
    """The docstring's ``st.<match id>.<secret>``: only the 256-bit secret proves it."""
    match, (t0, _) = await started(store)
    issued = await StreamTickets(store).issue(match.id, t0)
    kind, match_id, secret = issued.ticket.split(".")
    assert (kind, match_id) == ("st", match.id)
    assert len(base64.urlsafe_b64decode(secret + "=" * (-len(secret) % 4))) == 32
    assert issued.events_url == f"/v1/matches/{match.id}/events?ticket={issued.ticket}"


async def test_each_refused_ticket_says_why(store):  # noqa: F811
    """The messages go to the client verbatim (problem+json ``detail``, GraphQL ``message``): a ticket asked for
    without a token, something not shaped as a ticket (not ``st.<match id>.<secret>``, or longer than 200
    characters), a ticket never issued (200 characters is still a ticket's shape), one already used, one presented
    at another match."""
    match, (t0, _) = await started(store)
    other, _ = await started(store)
    issuer = StreamTickets(store)
    with pytest.raises(TokenRequired) as anonymous:
        await issuer.issue(match.id, None)
    assert anonymous.value.message == ("A stream ticket is for a seat: send its token (Authorization: Bearer ...). "
                                       "A spectator's stream needs no ticket.")
    shaped = f"st.{match.id}."
    for malformed in ("nonsense", f"gt.{match.id}.secret", f"st.{match.id}", "st..secret",
                      shaped + "A" * (201 - len(shaped))):
        assert await refusal(InvalidStreamTicket, issuer.spend(match.id, malformed)) == NOT_A_TICKET, malformed
    for never_issued in (shaped + "A" * 43, shaped + "A" * (200 - len(shaped))):
        assert await refusal(InvalidStreamTicket, issuer.spend(match.id, never_issued)) == UNKNOWN, never_issued
    used = (await issuer.issue(match.id, t0)).ticket
    await issuer.spend(match.id, used)
    assert await refusal(StreamTicketUsed, issuer.spend(match.id, used)) == \
        "This stream ticket was already used: a ticket opens one stream; ask for a new one."
    elsewhere = (await issuer.issue(match.id, t0)).ticket
    assert await refusal(StreamTicketWrongMatch, issuer.spend(other.id, elsewhere)) == \
        "This stream ticket is for another match."


# -- quick matches made from their groups ------------------------------------------------------------------------------


@pytest.fixture
async def quick(redis_url, key_prefix, games):
    """A quick-match maker (the default bot level) on a match store in a keyspace of this test's own, under the
    session's prefix so that the session's cleanup deletes it."""
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    matches = MatchStore(client, games, prefix=f"{key_prefix}:qm{uuid.uuid4().hex[:10]}", finished_ttl=600,
                         idle_ttl=600)
    yield QuickMatch(PlayerStore(matches))
    await client.aclose()


def drawn_order(group_id: str, seats: int) -> list[int]:
    """The order the module docstring promises: the seats shuffled by a generator seeded with the group id."""
    order = list(range(seats))
    random.Random(group_id).shuffle(order)
    return order


def group_ids(seats: int, count: int) -> list[str]:
    """Group ids whose drawn order does not start with seat 0 (so "the lowest free seat" is never the same)."""
    chosen = (f"grp-{i}" for i in range(1000))
    return [g for g in chosen if drawn_order(g, seats)[0] != 0][:count]


async def players(quick: QuickMatch, count: int) -> list[str]:
    return [(await quick.players.create(unique_name("Quick")))[0].id for _ in range(count)]


async def formed(quick: QuickMatch, queue, group_id: str, members: list[str], bots: int = 0) -> None:
    """The group as the pairing script leaves it: its players out of the queue, still marked as waiting."""
    await quick.redis.hset(quick.keys(queue)[3], group_id,
                           json.dumps({"players": members, "bots": bots, "at": int(time.time() * 1000)}))
    for player_id in members:
        await quick.redis.set(quick.waiting_key(player_id), queue.id)


async def match_count(quick: QuickMatch) -> int:
    return len([k async for k in quick.redis.scan_iter(match=f"{quick.store.prefix}:m:*") if k.endswith("}")])


async def test_a_group_becomes_an_unlisted_match_of_its_queues_seats_in_the_order_drawn_from_its_id(quick):
    """Four players of a four-seat queue (the game's least is two) get a match that is not in the lobby, each in the
    seat the group id's order gives in turn, the same whoever makes it; each player's latest quick match is kept for
    a day; the group is gone once made."""
    queue = quick.queue("spells-and-potions", "practice-1", 4, False)
    for group_id in group_ids(4, 2):  # two groups: a shuffle not drawn from the id matches both by chance 1 in 576
        members = await players(quick, 4)
        await formed(quick, queue, group_id, members)
        match_id = await quick.make(queue, group_id)
        match = await quick.store.get(match_id)
        assert (len(match.seats), match.listed, match.status) == (4, False, "active")
        order = drawn_order(group_id, 4)
        assert [match.seats[seat].player for seat in order] == members
        for player_id, seat in zip(members, order):
            status = await quick.status(player_id)
            assert (status["status"], status["last"]["match_id"], status["last"]["seat"]) == \
                ("matched", match_id, seat)
            assert 86_400 - 60 < await quick.redis.ttl(quick.last_key(player_id)) <= 86_400
        assert await quick.make(queue, group_id) is None


async def test_a_group_whose_maker_died_half_way_is_finished_in_the_claimed_match_without_a_second(quick):
    """The dead maker claimed a match and seated the first player: the next attempt makes no other match, leaves
    that player in their seat and seats the others in the group's order."""
    queue = quick.queue("spells-and-potions", "practice-1", 4, False)
    [group_id] = group_ids(4, 1)
    order, members = drawn_order(group_id, 4), await players(quick, 4)
    await formed(quick, queue, group_id, members)
    claimed = await quick.store.create(queue.game, variant=queue.variant, seats=4, listed=False)
    await quick.redis.hset(quick.made_key(queue), group_id, claimed.id)
    await quick.players.join(claimed.id, members[0], order[0])
    assert await match_count(quick) == 1

    assert await quick.make(queue, group_id) == claimed.id
    match = await quick.store.get(claimed.id)
    assert [match.seats[seat].player for seat in order] == members
    assert await match_count(quick) == 1


async def test_a_seat_a_concurrent_maker_just_took_sends_the_maker_to_the_next_one(quick, monkeypatch):
    """Two makers of one group: the other one seats the second player in the seat this one wanted for the first.
    This one reads the match again and seats the first player in the next seat of the order."""
    queue = quick.queue("spells-and-potions", "practice-1", 2, False)
    [group_id] = group_ids(2, 1)
    order, (first, second) = drawn_order(group_id, 2), await players(quick, 2)
    await formed(quick, queue, group_id, [first, second])
    join, raced = quick.players.join, []

    async def other_maker_first(match_id, player_id, seat=None, **options):
        if not raced:
            raced.append(await join(match_id, second, seat))
        return await join(match_id, player_id, seat, **options)

    monkeypatch.setattr(quick.players, "join", other_maker_first)
    match = await quick.store.get(await quick.make(queue, group_id))
    assert (match.seats[order[0]].player, match.seats[order[1]].player) == (second, first)


async def test_when_every_seat_tried_is_taken_under_the_maker_it_says_the_seats_were_all_taken(quick, monkeypatch):
    """Each seat the maker tries is taken (by a guest who had the match's id) just before its join: after trying as
    many times as there are seats it gives up with SeatTaken, and says so."""
    queue = quick.queue("spells-and-potions", "practice-1", 2, False)
    [group_id] = group_ids(2, 1)
    members = await players(quick, 2)
    await formed(quick, queue, group_id, members)
    join = quick.players.join

    async def guest_first(match_id, player_id, seat=None, **options):
        await quick.store.join(match_id, unique_name("Guest"), seat)
        return await join(match_id, player_id, seat, **options)

    monkeypatch.setattr(quick.players, "join", guest_first)
    with pytest.raises(SeatTaken) as refused:
        await quick.make(queue, group_id)
    assert refused.value.message == "The quick match's seats were all taken."


@pytest.mark.parametrize("level", [None, "random"])
async def test_the_seats_no_player_fills_go_to_bots_of_the_makers_level(quick, level):
    """A player who waited past ``bots_after`` is grouped alone with ``bots``: the other seats are bots' of the
    maker's level (``greedy`` unless it is given one: GRIMOIRE_QUICK_MATCH_BOT_LEVEL's default)."""
    maker = quick if level is None else QuickMatch(quick.players, level)
    queue = maker.queue("spells-and-potions", "practice-1", 4, False)
    [group_id] = group_ids(4, 1)
    order, [alone] = drawn_order(group_id, 4), await players(maker, 1)
    await formed(maker, queue, group_id, [alone], bots=3)
    match = await maker.store.get(await maker.make(queue, group_id))
    assert match.seats[order[0]].player == alone and match.status == "active"
    assert [match.seats[seat].bot for seat in order[1:]] == [level or "greedy"] * 3


async def test_bots_a_concurrent_maker_already_gave_are_left_to_it(quick, monkeypatch):
    """The group's other maker gave every empty seat its bot just before this one's first: each bot this one adds
    is refused as SeatTaken, which means done, and the match is made with one bot a seat."""
    queue = quick.queue("spells-and-potions", "practice-1", 4, False)
    [group_id] = group_ids(4, 1)
    order, [alone] = drawn_order(group_id, 4), await players(quick, 1)
    await formed(quick, queue, group_id, [alone], bots=3)
    add_bot, raced = quickmatch.add_bot, []

    async def other_maker_first(matches, match_id, seat, level, token=None):
        if not raced:
            raced.append(await matches.get(match_id))
            for free in [s.index for s in raced[0].seats if not s.joined]:
                await add_bot(matches, match_id, free, level)
        return await add_bot(matches, match_id, seat, level, token)

    monkeypatch.setattr(quickmatch, "add_bot", other_maker_first)
    match = await quick.store.get(await quick.make(queue, group_id))
    assert match.seats[order[0]].player == alone and match.status == "active"
    assert [match.seats[seat].bot for seat in order[1:]] == ["greedy"] * 3


async def test_the_queues_in_use_are_kept_under_the_stores_key_prefix(quick):
    """``<prefix>:qm:queues`` names the queue a player waits in, and ``<prefix>:p:{ID}:qm`` the player's queue (the
    module docstring's layout): another keyspace's processes never pair with these."""
    queue = quick.queue("spells-and-potions", "practice-1", 3, False)
    [alone] = await players(quick, 1)
    assert (await quick.join(alone, queue))["status"] == "waiting"
    prefix = quick.store.prefix
    assert await quick.redis.smembers(f"{prefix}:qm:queues") == {queue.id}
    assert await quick.redis.get(f"{prefix}:p:{{{alone}}}:qm") == queue.id


# -- the identity provider's configuration ------------------------------------------------------------------------------


def test_an_issuer_without_an_audience_stops_the_service_from_starting_and_says_what_to_set(settings, games):
    with pytest.raises(ValueError) as refused:
        create_app(dataclasses.replace(settings, jwt_issuer="https://id.example.test/", jwt_audience=""), games=games)
    assert str(refused.value) == \
        "GRIMOIRE_JWT_ISSUER needs GRIMOIRE_JWT_AUDIENCE: tokens for any audience are refused"


async def test_a_group_whose_match_others_hold_every_seat_of_is_refused_as_seat_taken(quick):
    """Strangers who learnt the group's match id took every seat before its maker came back: the maker says the
    seats were all taken (it raised "coroutine raised StopIteration" before, a 500 through the API)."""
    queue = quick.queue("spells-and-potions", "practice-1", 2, False)
    [group_id] = group_ids(2, 1)
    await formed(quick, queue, group_id, await players(quick, 2))
    claimed = await quick.store.create(queue.game, variant=queue.variant, seats=2, listed=False)
    await quick.redis.hset(quick.made_key(queue), group_id, claimed.id)
    for guest in ("Guest1", "Guest2"):
        await quick.store.join(claimed.id, guest)
    with pytest.raises(SeatTaken) as refused:
        await quick.make(queue, group_id)
    assert refused.value.message == "The quick match's seats were all taken."


def test_the_workers_sweep_fills_late_seats_with_bots_of_the_configured_level(redis_url, key_prefix, games,
                                                                               worker_runtime):
    """GRIMOIRE_QUICK_MATCH_BOT_LEVEL chooses the level of the bots that fill a quick match (docs/operations.md),
    also those the workers' sweep adds: it made its maker without the setting, so they were always greedy."""
    settings = dataclasses.replace(worker_runtime.settings, key_prefix=f"{key_prefix}:qm{uuid.uuid4().hex[:10]}",
                                   quick_match_bot_level="random")

    async def maker(work):
        client = aioredis.Redis.from_url(redis_url, decode_responses=True)
        try:
            return await work(QuickMatch(PlayerStore(MatchStore(client, games, prefix=settings.key_prefix))))
        finally:
            await client.aclose()

    async def form(quick: QuickMatch):  # one player, grouped with a bot longer ago than its maker's grace
        queue = quick.queue("casting-stones", "basic", 2, False)
        [alone] = await players(quick, 1)
        [group_id] = group_ids(2, 1)
        await formed(quick, queue, group_id, [alone], bots=1)
        at = int(time.time() * 1000) - (quickmatch.GROUP_GRACE + 1) * 1000
        await quick.redis.hset(quick.keys(queue)[3], group_id, json.dumps({"players": [alone], "bots": 1, "at": at}))
        await quick.redis.sadd(quick.queues_key, queue.id)
        return alone

    async def bots_of(quick: QuickMatch):
        match = await quick.store.get((await quick.status(alone))["last"]["match_id"])
        return [seat.bot for seat in match.seats if seat.bot]

    alone = asyncio.run(maker(form))
    runtime.configure(settings, games)
    try:
        assert sweep_quick_matches() == 1
    finally:
        runtime.configure(worker_runtime.settings, worker_runtime.games)
    assert asyncio.run(maker(bots_of)) == ["random"]


async def test_a_player_already_waiting_is_refused_a_second_queue_saying_to_leave_first(quick):
    queue, other = quick.queue("quidditch", "standard", 2, False), quick.queue("high-card", None, 2, False)
    [player] = await players(quick, 1)
    assert (await quick.join(player, queue))["status"] == "waiting"
    message = await refusal(AlreadyQueued, quick.join(player, other))
    assert message == "You are already waiting for a quick match; leave that queue first."
    assert (await quick.status(player))["queue"]["game"] == "quidditch"


async def test_a_join_the_store_fails_half_way_leaves_the_player_free_to_join_again(quick, monkeypatch):
    """The pairing script fails after the player was marked as waiting: the mark is taken back, so the player is
    idle (not waiting for a queue that never listed them) and the next join is not refused as AlreadyQueued."""
    queue = quick.queue("quidditch", "standard", 2, False)
    [player] = await players(quick, 1)
    run = quick._run

    async def failing(*args):
        raise ConnectionError("Redis went away")

    monkeypatch.setattr(quick, "_run", failing)
    with pytest.raises(ConnectionError):
        await quick.join(player, queue)
    assert (await quick.status(player))["status"] == "idle"
    monkeypatch.setattr(quick, "_run", run)
    assert (await quick.join(player, queue))["status"] == "waiting"


async def test_a_queues_turn_timer_is_one_second_to_a_day_both_included(quick):
    assert quick.queue("high-card", None, 2, False, 1).turn_seconds == 1
    assert quick.queue("high-card", None, 2, False, 86_400).turn_seconds == 86_400
    for outside in (0, 86_401):
        with pytest.raises(InvalidOptions) as refused:
            quick.queue("high-card", None, 2, False, outside)
        assert refused.value.message == "turn_seconds is 1 to 86400."


async def test_a_player_who_accepts_bots_at_once_gets_a_match_with_bots_on_joining(quick):
    """``bots_after`` reaches the pairing script: 0 seconds, and the lone player's join makes the match, its other
    seat a bot's; without it, the player waits."""
    queue = quick.queue("quidditch", "standard", 2, False)
    patient, hasty = await players(quick, 2)
    assert (await quick.join(patient, queue))["status"] == "waiting"
    await quick.leave(patient)
    status = await quick.join(hasty, queue, bots_after=0)
    assert status["status"] == "matched", status
    match = await quick.store.get(status["last"]["match_id"])
    assert [bool(seat.player) for seat in match.seats].count(True) == 1 and sum(bool(s.bot) for s in match.seats) == 1
