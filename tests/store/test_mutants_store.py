"""The store where the mutation run (tests/mutation/run.py) found it untested: the lobby, bot seats given
at creation, the log read across its archive, the replica-wait batch, tokens and the embedded Redis.

Behaviour only, against a real Redis: each test names the faults it stands against."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import redis.asyncio as aioredis

from service.store import MatchStore, NoSuchSeat, SeatTaken, UnknownGame
from service.store import archive, lobby
from service.store.bots import add_bot, create_match
from service.store.errors import UnknownBotLevel
from tests.support.high_card import GAME, HighCard

pytestmark = pytest.mark.anyio


class OtherGame(HighCard):
    """A second game with its own lobby (the store reads the game's id from the game)."""

    id = "other-card"


OTHER = OtherGame()


class ThreeCard(HighCard):
    """Up to three seats (the store and the bots never look into the state)."""

    id = "three-card"
    max_seats = 3


THREE = ThreeCard()


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
async def store(redis_url, key_prefix, request):
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    # a prefix of the test's own: each test sees only its own lobby
    prefix = f"{key_prefix}:{request.node.name}"
    yield MatchStore(client, {GAME.id: GAME, OTHER.id: OTHER, THREE.id: THREE}, prefix=prefix, lobby_ttl=3600)
    await client.aclose()


# -- the lobby ----------------------------------------------------------------------------------------------


async def test_the_lobby_lists_a_waiting_match_with_its_seats_until_its_last_seat_is_taken(store):
    """Against a lobby entry's fields, the free seat count, a join's listing and the delisting of a full
    match going wrong."""
    match = await store.create("high-card", seed=1)
    [entry] = await store.lobby("high-card")
    assert entry == {"id": match.id, "game": "high-card", "variant": "standard",
                     "seats": [{"seat": 0, "name": None, "joined": False, "bot": None},
                               {"seat": 1, "name": None, "joined": False, "bot": None}],
                     "open_seats": 2, "created": match.created, "updated": match.updated}
    await store.join(match.id, "Ann", 1)
    [entry] = await store.lobby("high-card")
    assert entry["seats"] == [{"seat": 0, "name": None, "joined": False, "bot": None},
                              {"seat": 1, "name": "Ann", "joined": True, "bot": None}]
    assert entry["open_seats"] == 1 and entry["updated"] >= entry["created"]
    await add_bot(store, match.id, None, "greedy")
    assert await store.lobby("high-card") == []
    # delisted when full, not merely skipped while reading
    assert await store.redis.zcard(store.lobby_key("high-card")) == 0


async def test_a_bot_seat_shows_its_level_in_the_lobby(store):
    match = await create_match(store, "high-card", bots=[{"seat": 1, "level": "strong"}])
    [entry] = await store.lobby("high-card")
    assert entry["id"] == match.id
    assert entry["seats"][1] == {"seat": 1, "name": "strong bot", "joined": True, "bot": "strong"}


async def test_a_started_match_whose_seat_is_given_up_stays_off_the_lobby(store):
    """Against leave() listing a match that is not waiting for players."""
    match = await store.create("high-card")
    _, _, token = await store.join(match.id, "Ann")
    await store.join(match.id, "Bob")
    await store.leave(match.id, token)
    assert await store.lobby("high-card") == []
    assert await store.redis.zcard(store.lobby_key("high-card")) == 0


async def test_a_seat_given_up_before_the_start_reopens_the_match(store):
    match = await store.create("high-card")
    _, _, token = await store.join(match.id, "Ann")
    await store.redis.delete(store.lobby_key("high-card"))  # forget the listing: leave() must make it again
    await store.leave(match.id, token)
    [entry] = await store.lobby("high-card")
    assert entry["id"] == match.id and entry["open_seats"] == 2


async def test_the_lobby_is_longest_waiting_first_per_game_or_across_games_and_limited(store):
    """Against the order (oldest listing first, ids breaking ties), the game filter, every game's lobby read
    when none is named, and the limit."""
    first = await store.create("high-card")
    await asyncio.sleep(0.01)
    second = await store.create("other-card")
    await asyncio.sleep(0.01)
    third = await store.create("high-card")
    assert [e["id"] for e in await store.lobby()] == [first.id, second.id, third.id]  # three-card's is empty
    assert [e["id"] for e in await store.lobby("high-card")] == [first.id, third.id]
    assert [e["game"] for e in await store.lobby("other-card")] == ["other-card"]
    assert [e["id"] for e in await store.lobby(limit=2)] == [first.id, second.id]
    assert [e["id"] for e in await store.lobby("high-card", limit=1)] == [first.id]
    # a join re-scores a match: now it has waited least
    await store.join(first.id, "Ann")
    assert [e["id"] for e in await store.lobby()] == [second.id, third.id, first.id]
    with pytest.raises(UnknownGame):
        await store.lobby("chess-boxing")


async def test_ties_in_the_lobby_are_broken_by_id(store):
    ids = [(await store.create("high-card")).id for _ in range(4)]
    now = lobby._now_ms()
    await store.redis.zadd(store.lobby_key("high-card"), dict.fromkeys(ids, now))  # one time for all of them
    for match_id in ids:
        await store.redis.hset(store.key(match_id), "updated", now)
    assert [e["id"] for e in await store.lobby("high-card")] == sorted(ids)


async def test_the_lobby_reads_past_stale_entries_up_to_its_limit(store):
    """Against too few candidates read: up to 2 x limit + 9 ids are read, so stale ones (expired, started or
    of another game) neither fill the answer nor leave it short; they are dropped from the index."""
    key = store.lobby_key("high-card")
    now = lobby._now_ms()
    stale = [f"gone-{i}" for i in range(10)]
    await store.redis.zadd(key, {match_id: now - 1000 + i for i, match_id in enumerate(stale)})  # oldest first
    other = await store.create("other-card")
    await store.redis.zadd(key, {other.id: now - 1})  # a match of another game, listed under this one
    open_ids = [(await store.create("high-card")).id for _ in range(3)]
    listed = await store.lobby("high-card", limit=1)
    assert [e["id"] for e in listed] == open_ids[:1]
    # 11 stale ones were read with the first open one (2 x 1 + 9 = 11 ids, then the 12th... ) and dropped
    remaining = await store.redis.zrange(key, 0, -1)
    assert not set(stale) & set(remaining) and other.id not in remaining
    assert set(open_ids) <= set(remaining)
    assert [e["id"] for e in await store.lobby("other-card")] == [other.id]  # its own listing untouched


async def test_an_entry_older_than_the_lobby_ttl_is_dropped_and_the_lobby_key_expires(store):
    """Against the cutoff (lobby_ttl seconds back, exclusive) and the lobby key's expiry."""
    store.lobby_ttl = 60
    old = await store.create("high-card")
    fresh = await store.create("high-card")
    key = store.lobby_key("high-card")
    now = lobby._now_ms()
    await store.redis.zadd(key, {old.id: now - 61_000, fresh.id: now - 59_000})
    assert [e["id"] for e in await store.lobby("high-card")] == [fresh.id]
    assert await store.redis.zscore(key, old.id) is None
    assert 60 <= await store.redis.ttl(key) <= 120  # max(2 x lobby_ttl, 60)
    store.lobby_ttl = 10
    await lobby.listed(store, "high-card", fresh.id)
    assert 0 < await store.redis.ttl(key) <= 60


async def test_a_lobby_entry_whose_match_expired_is_dropped(store):
    match = await store.create("high-card")
    await store.redis.delete(store.key(match.id))
    assert await store.lobby("high-card") == []
    assert await store.redis.zcard(store.lobby_key("high-card")) == 0


async def test_a_match_with_more_seats_than_the_lobby_reads_lists_those_it_reads(store):
    """MAX_SEATS bounds the seat fields read per match; a match claiming more lists the first MAX_SEATS."""
    match = await store.create("high-card")
    await store.redis.hset(store.key(match.id), "seats", lobby.MAX_SEATS + 4)
    [entry] = await store.lobby("high-card")
    assert [s["seat"] for s in entry["seats"]] == list(range(lobby.MAX_SEATS))
    assert entry["open_seats"] == lobby.MAX_SEATS


# -- bot seats at creation -----------------------------------------------------------------------------------


async def test_create_match_seats_numbered_bots_first_then_the_lowest_free_seats(store):
    match = await create_match(store, "high-card", bots=[{"level": "random"}, {"seat": 0, "level": "greedy"}])
    stored = await store.get(match.id)
    assert [(s.name, s.bot) for s in stored.seats] == [("greedy bot", "greedy"), ("random bot", "random")]
    assert stored.status == "active" and match.version == stored.version


async def test_bots_without_a_seat_take_the_free_seats_however_many(store):
    """Two bots without a seat number are not "one seat given twice" (a seat of None was counted as taken)."""
    match = await create_match(store, "high-card", bots=[{"level": "random"}, {"level": "greedy"}])
    stored = await store.get(match.id)
    assert [s.bot for s in stored.seats] == ["random", "greedy"] and stored.status == "active"


@pytest.mark.parametrize("bots, error", [
    ([{"seat": 2, "level": "random"}], NoSuchSeat),
    ([{"seat": -1, "level": "random"}], NoSuchSeat),
    ([{"seat": 1, "level": "random"}, {"seat": 1, "level": "greedy"}], SeatTaken),
    ([{"level": "random"}] * 3, NoSuchSeat),
    ([{"seat": 0, "level": "genius"}], UnknownBotLevel),
])
async def test_create_match_checks_every_bot_before_creating_anything(store, bots, error):
    """Against a bot seat out of range, a seat given twice, more bots than seats or an unknown level being
    let through (or found only after the match exists)."""
    with pytest.raises(error) as refused:
        await create_match(store, "high-card", bots=bots)
    assert refused.value.message
    assert [k async for k in store.redis.scan_iter(match=f"{store.prefix}:m:*")] == []


async def test_create_match_seats_bots_among_the_seats_asked_for(store):
    """With ``seats`` given, the bots' seats are checked against that count, not the game's minimum; the rest
    of the request (variant, options, seed, turn timer) reaches the match."""
    match = await create_match(store, "three-card", seats=3, seed=5, turn_seconds=30, variant="standard",
                               options={"rounds": 2}, bots=[{"seat": 2, "level": "random"}])
    stored = await store.get(match.id)
    assert (len(stored.seats), stored.seats[2].bot, stored.seed, stored.turn_seconds, stored.options["rounds"]) == \
        (3, "random", 5, 30, 2)
    with pytest.raises(NoSuchSeat):
        await create_match(store, "three-card", seats=3, bots=[{"seat": 3, "level": "random"}])
    with pytest.raises(NoSuchSeat):
        await create_match(store, "three-card", bots=[{"seat": 2, "level": "random"}])  # 2 seats by default


async def test_messages_name_the_seat_and_the_levels(store):
    with pytest.raises(NoSuchSeat) as no_seat:
        await create_match(store, "high-card", bots=[{"seat": 2, "level": "random"}])
    assert no_seat.value.message == "This match has no seat 2."
    with pytest.raises(SeatTaken) as twice:
        await create_match(store, "high-card", bots=[{"seat": 1, "level": "random"}, {"seat": 1, "level": "random"}])
    assert twice.value.message == "Seat 1 is given to two bots."
    with pytest.raises(NoSuchSeat) as too_many:
        await create_match(store, "high-card", bots=[{"level": "random"}] * 3)
    assert too_many.value.message == "This match has 2 seats, not enough for 3 bots."
    with pytest.raises(UnknownBotLevel) as level:
        await add_bot(store, "any", None, "genius")
    assert level.value.message == "There is no bot level 'genius'; choose one of random, greedy, strong."
