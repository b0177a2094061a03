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
from tests.collections.conftest import stores  # noqa: F401  (a fixture: collections and trades)
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
    open_ids = []
    for _ in range(3):  # a millisecond apart: matches listed in the same millisecond are ordered by id
        open_ids.append((await store.create("high-card")).id)
        await asyncio.sleep(0.002)
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
    # the prefix holds the test's id, whose brackets a SCAN pattern would read as a character class
    prefix = store.prefix.replace("[", "\\[").replace("]", "\\]")
    assert [k async for k in store.redis.scan_iter(match=f"{prefix}:m:*")] == []
    assert await store.redis.zcard(store.lobby_key("high-card")) == 0


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


# -- the log, read across its archive ------------------------------------------------------------------------


async def played(store, actions: int, seed: int = 7):
    """A started high-card match with ``actions`` accepted actions (it ends after 6): id, tokens, the log."""
    match = await store.create("high-card", seed=seed)
    _, _, t0 = await store.join(match.id, "Ann")
    _, _, t1 = await store.join(match.id, "Bob")
    tokens = [t0, t1]
    for _ in range(actions):
        m = await store.get(match.id)
        seat = m.acting[0]
        await store.submit(match.id, tokens[seat], m.version, GAME.legal_actions(m.state, seat)[0])
    return match.id, tokens


async def test_the_log_reads_the_same_whatever_part_of_it_is_archived(redis_url, key_prefix):
    """Every (after, limit) window of a compacted log equals the same window of the whole log: against the
    stream read alone when it does not start right after ``after``, the archive's entries cut wrong, the
    rest of the stream read from the wrong version or for too many, and a compaction archiving the wrong
    entries or at the wrong versions."""
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    whole = MatchStore(client, {GAME.id: GAME}, prefix=f"{key_prefix}:whole", compact_every=0)
    compacted = MatchStore(client, {GAME.id: GAME}, prefix=f"{key_prefix}:compacted", compact_every=2,
                           keep_recent=2)
    try:
        plain_id, _ = await played(whole, 5)
        match_id, _ = await played(compacted, 5)
        upto, archived = archive.decode(await archive.read_raw(compacted, match_id))
        assert upto == 2 and [v for v, _ in archived] == ["1-0", "2-0"]  # at version 4: all but the 2 newest
        assert [i for i, _ in await client.xrange(compacted.log_key(match_id))] == ["3-0", "4-0", "5-0"]
        reference = await whole.log_entries(plain_id, after=0, limit=100)
        strip = lambda entries: [(i, {k: v for k, v in f.items() if k != "at"}) for i, f in entries]  # noqa: E731
        assert [i for i, _ in reference] == ["1-0", "2-0", "3-0", "4-0", "5-0"]
        for after in range(0, 6):
            for limit in range(1, 7):
                got = await compacted.log_entries(match_id, after=after, limit=limit)
                assert strip(got) == strip(reference[after:after + limit]), (after, limit)
    finally:
        await client.aclose()


async def test_the_finished_match_archives_all_but_the_newest_and_history_reads_it_whole(redis_url, key_prefix):
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    store = MatchStore(client, {GAME.id: GAME}, prefix=f"{key_prefix}:finished", compact_every=4, keep_recent=1)
    try:
        match_id, tokens = await played(store, 6)
        assert (await store.get(match_id)).status == "finished"
        upto, archived = archive.decode(await archive.read_raw(store, match_id))
        assert upto == 5 and len(archived) == 5  # compacted at the end though 6 is no multiple of 4
        history = await store.history(match_id, 0)
        assert [h.version for h in history] == [1, 2, 3, 4, 5, 6]
        assert all((h.action is not None) == (h.seat == 0) for h in history)
        assert [h.version for h in await store.history(match_id, None, after=3, limit=2)] == [4, 5]
        assert 0 < await client.ttl(store.archive_key(match_id)) <= store.finished_ttl  # goes with the match
    finally:
        await client.aclose()


async def test_a_compaction_not_due_or_already_done_moves_nothing(redis_url, key_prefix):
    """Against compact() archiving at a version that does not call for it, or again over what is archived."""
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    store = MatchStore(client, {GAME.id: GAME}, prefix=f"{key_prefix}:due", compact_every=0)
    try:
        match_id, _ = await played(store, 5)
        assert not archive.due(store, 4, False) and not archive.due(store, 4, True)  # 0: never
        store.compact_every, store.keep_recent = 2, 1
        assert not await archive.compact(store, match_id, 3, False)  # 3 is no multiple of 2
        assert await archive.read_raw(store, match_id) is None
        assert await archive.compact(store, match_id, 4, False)
        assert archive.decode(await archive.read_raw(store, match_id))[0] == 3
        assert not await archive.compact(store, match_id, 4, False)  # through 3 is archived already
        assert not await archive.compact(store, match_id, 2, False)  # behind the archive
        assert not await archive.compact(store, "no-such-match", 4, False)  # no log
        assert await archive.compact(store, match_id, 5, True)  # finished: due whatever the version
        assert [v for v, _ in archive.decode(await archive.read_raw(store, match_id))[1]] == ["1-0", "2-0", "3-0",
                                                                                             "4-0"]
    finally:
        await client.aclose()


async def test_overlapping_compactions_of_one_match_lose_nothing(redis_url, key_prefix):
    """Compactions run in the background, so two of one match overlap: each rereads the archive when the
    other moved it; the log stays whole and in order."""
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    store = MatchStore(client, {GAME.id: GAME}, prefix=f"{key_prefix}:overlap", compact_every=0)
    try:
        match_id, _ = await played(store, 6)
        store.compact_every, store.keep_recent = 1, 1
        results = await asyncio.gather(*(archive.compact(store, match_id, v, False) for v in (2, 3, 4, 5, 6)))
        assert any(results)
        upto, archived = archive.decode(await archive.read_raw(store, match_id))
        assert upto == 5 and [v for v, _ in archived] == ["1-0", "2-0", "3-0", "4-0", "5-0"]
        assert [i for i, _ in await store.log_entries(match_id, after=0, limit=100)] == \
            ["1-0", "2-0", "3-0", "4-0", "5-0", "6-0"]
    finally:
        await client.aclose()


def test_an_archive_extended_by_encode_decodes_to_every_entry_in_order():
    first = archive.encode(2, [("1-0", {"a": "1"}), ("2-0", {"a": "2"})])
    assert archive.decode(first) == (2, [("1-0", {"a": "1"}), ("2-0", {"a": "2"})])
    both = archive.encode(3, [("3-0", {"a": "3"})], first)
    assert archive.decode(both) == (3, [("1-0", {"a": "1"}), ("2-0", {"a": "2"}), ("3-0", {"a": "3"})])
    assert archive.decode(archive.encode(4, [("4-0", {})], archive.encode(0, []))) == (4, [("4-0", {})])
    assert archive.decode(None) == (0, []) and archive.decode(b"") == (0, [])


def _log(count: int) -> list:
    """``count`` log entries shaped like a game's (repetitive JSON text, as a real log is)."""
    return [(f"{v}-0", {"seat": str(v % 3), "action": json.dumps({"type": "cast", "stone": f"stone-{v % 17}"}),
                        "events": json.dumps([{"type": "cast", "seat": v % 3, "power": v % 11, "turn": v}]),
                        "at": str(1764400000000 + 997 * v), "status": "active", "to_act": json.dumps([v % 3])})
            for v in range(1, count + 1)]


def _closed_whole(text: bytes) -> bytes:
    """``text`` compressed whole at level 6 in the form a compaction may append to: its blocks, then a final
    stored block holding the closing ``]``, then the checksum (zlib's own calls, not archive.py's)."""
    import zlib

    compressor = zlib.compressobj(6, zlib.DEFLATED, 15)
    blocks = compressor.compress(text[:-1]) + compressor.flush(zlib.Z_SYNC_FLUSH)
    return blocks + b"\x01\x01\x00\xfe\xff]" + zlib.adler32(text).to_bytes(4, "big")


def _text(log: list) -> bytes:
    return json.dumps([[int(i.split("-")[0]), f] for i, f in log], separators=(",", ":")).encode()


def test_a_compaction_appends_to_the_archive_which_stays_one_zlib_stream_of_the_whole_log():
    """Once the log outgrows DEFLATE's 32 KB window, each compaction adds the new entries' compressed blocks
    after the archive's own (minus its closing stored block and checksum) instead of compressing the whole
    log again; a shorter log is compressed whole. Every archive is still a zlib stream of the log's JSON list,
    as older releases write and read it. Against recompressing the whole log at every compaction, appending
    to a short log, a close that is not cut off, and a wrong checksum."""
    import zlib

    log = _log(400)
    raw, appended = None, 0
    for upto in range(8, 401, 8):
        previous = raw
        raw = archive.encode(upto, log[upto - 8:upto], raw)
        head, _, body = raw.partition(b":")
        assert head == str(upto).encode()
        if len(_text(log[:upto - 8])) >= 32 * 1024:
            assert body.startswith(previous.partition(b":")[2][:-10])  # the old blocks kept byte for byte
            assert len(body) < len(previous) + 2 * len(_text(log[upto - 8:upto]))
            appended += 1
        else:
            assert body == _closed_whole(_text(log[:upto]))
        assert zlib.decompress(body) == _text(log[:upto])  # a whole zlib stream, checksum included
        assert archive.decode(raw) == (upto, log[:upto])
    assert appended > 20


def test_appended_entries_compress_against_the_log_before_them():
    """Entries appended a few at a time compress about as well as the whole log at once (they may refer to
    the last 32 KB before them, as DEFLATE's window would). Against compressing each batch alone, which
    makes such a log three to four times larger."""
    import zlib

    log = _log(400)
    raw = None
    for upto in range(8, 401, 8):
        raw = archive.encode(upto, log[upto - 8:upto], raw)
    assert len(raw) < 1.3 * len(zlib.compress(_text(log), 6))


def test_an_archive_from_an_older_release_is_compressed_whole_once_then_appended_to():
    """An archive that does not end with this module's close (an older release compressed the whole log,
    ending with a compressed final block) cannot be cut: it is compressed again whole, then appended to.
    Against cutting its last bytes as if they were the close."""
    import zlib

    log = _log(216)
    older = b"200:" + zlib.compress(_text(log[:200]), 6)
    assert len(_text(log[:200])) > 32 * 1024
    extended = archive.encode(208, log[200:208], older)
    assert extended == b"208:" + _closed_whole(_text(log[:208]))
    again = archive.encode(216, log[208:], extended)
    assert again.partition(b":")[2].startswith(extended.partition(b":")[2][:-10])
    assert archive.decode(again) == (216, log)


def test_a_finished_match_s_archive_is_compressed_whole():
    """The last compaction (the match is over) compresses the log whole: nothing appends to it again, and
    whole it is 10 to 16% smaller. Against appending at the end too."""
    import zlib

    log = _log(240)
    raw = None
    for upto in range(8, 233, 8):
        raw = archive.encode(upto, log[upto - 8:upto], raw)
    final = archive.encode(240, log[232:], raw, whole=True)
    assert final == b"240:" + zlib.compress(_text(log), 6)


def test_an_update_shows_each_seat_its_share_and_nothing_once_the_match_is_over():
    """Against the acting seat's action shown to others, private events shown to all, the seats to act
    shown after the end, and one seat's view handed to another."""
    fields = {"seat": "1", "action": json.dumps({"type": "play", "card": 4}),
              "events": json.dumps([{"type": "played", "seat": 1},
                                    {"type": "played_card", "card": 4, "audience": [1]}]),
              "status": "active", "to_act": "[0]", "at": "1700", "auto": json.dumps({"reason": "timeout"})}
    update = archive.log_update("m1", "5-0", fields)
    mine, theirs, spectator = update.for_seat(1), update.for_seat(0), update.for_seat(None)
    assert mine == {"match_id": "m1", "version": 5, "seat": 1, "action": {"type": "play", "card": 4},
                    "events": [{"type": "played", "seat": 1}, {"type": "played_card", "card": 4}],
                    "status": "active", "to_act": [0], "at": 1700, "auto": {"reason": "timeout"}}
    assert theirs["action"] is None and theirs["events"] == [{"type": "played", "seat": 1}]
    assert spectator == {**theirs}
    assert update.for_seat(1) is mine  # shared, worked out once per seat
    over = archive.log_update("m1", "6-0", {**fields, "status": "finished"})
    assert over.for_seat(0)["to_act"] == [] and over.for_seat(0)["status"] == "finished"
    # an entry of an older log (no status, to_act or auto fields)
    old = archive.log_update("m1", "2-0", {k: fields[k] for k in ("seat", "action", "events", "at")})
    assert (old.status, old.to_act, old.auto) == ("active", [], None)


def test_a_published_update_reads_as_its_log_entry_does():
    data = {"version": "3", "seat": "0", "action": {"type": "play", "card": 2}, "events": [], "status": "active",
            "to_act": [1], "at": "99"}
    update = archive.published_update("m2", data)
    assert (update.match_id, update.version, update.seat, update.at, update.auto) == ("m2", 3, 0, 99, None)
    assert archive.published_update("m2", {**data, "auto": {"x": 1}}).auto == {"x": 1}


# -- the Redis clients and the replica-wait batch --------------------------------------------------------------


async def test_then_wait_runs_the_commands_then_counts_the_replicas_on_one_connection(redis_url, key_prefix):
    """Against the commands' replies cut or shifted (the WAIT reply among them), errors raised instead of
    returned, and a failed WAIT not reported as -1."""
    from service.store.connect import then_wait

    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    key = f"{key_prefix}:tw"
    try:
        replies, acked = await then_wait(client, key, [("SET", key, "1"), ("INCR", key), ("LPUSH", key, "x")], 0, 10)
        assert replies[:2] == [True, 2] and isinstance(replies[2], Exception)  # WRONGTYPE, as a value
        assert acked == 0  # no replica: WAIT counts none
        assert await client.get(key) == "2"
        _, acked = await then_wait(client, key, [("GET", key)], 0, -1)  # WAIT refuses a negative timeout
        assert acked == -1
    finally:
        await client.aclose()


async def test_script_then_wait_loads_a_script_the_server_lost(redis_url, key_prefix):
    """A Redis restarted (or failed over) has lost its scripts: the commit is sent again after a load."""
    from service.store.connect import script_then_wait

    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    key = f"{key_prefix}:stw"
    script = client.register_script("return redis.call('INCRBY', KEYS[1], ARGV[1])")
    try:
        assert await script_then_wait(client, script, [key], [5], 0, 10) == (5, 0)
        await client.script_flush()
        assert await script_then_wait(client, script, [key], [2], 0, 10) == (7, 0)
        broken = client.register_script("return redis.call('NOSUCHCOMMAND')")
        with pytest.raises(Exception) as refused:
            await script_then_wait(client, broken, [key], [], 0, 10)
        assert "NOSUCHCOMMAND".lower() in str(refused.value).lower() or "unknown" in str(refused.value).lower()
    finally:
        await client.aclose()


def test_a_replica_ack_timeout_says_how_many_confirmed_and_what_to_do():
    from service.store.connect import ReplicaAckTimeout

    error = ReplicaAckTimeout(2, 1, 300)
    assert (error.wanted, error.got, error.timeout_ms) == (2, 1, 300)
    assert str(error) == (
        "The action was applied, but 1 of the 2 replica(s) required confirmed it within 300 ms, so a failover "
        "could still lose it. Send the same request again with the same Idempotency-Key: the answer is its fate "
        "(its first outcome if it was kept; applied now if it was lost). Without a key, read the match and its "
        "history before acting again.")
    assert str(ReplicaAckTimeout(1, None, 5)).startswith("The action was applied, but no of the 1 replica(s)")
    assert str(ReplicaAckTimeout(1, 0, 5)).startswith("The action was applied, but 0 of the 1 replica(s)")


async def test_the_store_client_queues_a_burst_on_its_bounded_pool(redis_url, key_prefix):
    """More concurrent commands than connections wait for one (no 'too many connections' error), and the
    server never sees more connections than the bound."""
    from service.store.connect import match_redis

    client = match_redis(redis_url, max_connections=2)
    watcher = aioredis.Redis.from_url(redis_url, decode_responses=True)
    name = f"{key_prefix}-pool"
    try:
        async def slow(i):
            await client.client_setname(name)
            return await client.blpop([f"{key_prefix}:never:{i}"], timeout=0.2)

        started = time.monotonic()
        results = await asyncio.wait_for(asyncio.gather(*(slow(i) for i in range(6))), 30)
        assert results == [None] * 6 and time.monotonic() - started >= 0.5  # three rounds of two
        clients = [c for c in await watcher.client_list() if c.get("name") == name]
        assert 0 < len(clients) <= 2
        assert await client.get(f"{key_prefix}:none") is None  # decode_responses: str replies
        await client.set(f"{key_prefix}:str", "é")
        assert await client.get(f"{key_prefix}:str") == "é"
    finally:
        await client.aclose()
        await watcher.aclose()


async def test_the_bounded_pool_answers_no_connection_once_its_wait_runs_out(redis_url, key_prefix):
    """A command that finds every connection busy for the pool's whole ``timeout`` fails as the store being
    unreachable does (redis-py's ConnectionError, answered 503 by the APIs), and only after waiting."""
    from redis.exceptions import ConnectionError

    from service.store.connect import BoundedPool

    client = aioredis.Redis(connection_pool=BoundedPool.from_url(redis_url, max_connections=1, timeout=0.3,
                                                                 decode_responses=True))
    try:
        holding = asyncio.create_task(client.blpop([f"{key_prefix}:never"], timeout=1))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        with pytest.raises(ConnectionError, match="No connection available"):
            await client.get(f"{key_prefix}:other")
        assert 0.25 <= time.monotonic() - started < 0.9
        assert await holding is None
        assert await client.get(f"{key_prefix}:other") is None  # the connection came back
    finally:
        await client.aclose()


async def test_a_command_cut_off_leaves_no_reply_behind_for_the_next_one(redis_url, key_prefix):
    """The pool hands a connection out without asking whether unread data waits on it: a command cut off by
    a timeout must not leave its reply for the next command on that connection. Against a connection given
    back connected after its command was cancelled (the next GET would read BLPOP's reply)."""
    from service.store.connect import BoundedPool

    client = aioredis.Redis(connection_pool=BoundedPool.from_url(redis_url, max_connections=1,
                                                                 decode_responses=True))
    pusher = aioredis.Redis.from_url(redis_url, decode_responses=True)
    queue = f"{key_prefix}:queue"
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(client.blpop([queue], timeout=2), 0.1)
        await pusher.rpush(queue, "late")
        await client.set(f"{key_prefix}:k", "v")
        assert await client.get(f"{key_prefix}:k") == "v"
        assert await pusher.lrange(queue, 0, -1) == ["late"]  # the cut-off BLPOP never took it
    finally:
        await client.aclose()
        await pusher.aclose()


async def test_a_connection_the_server_closed_is_connected_again_before_its_next_command(redis_url, key_prefix):
    """A pooled connection the server closed (a restart, ``CLIENT KILL``) is connected again when it is next
    taken, so the command after a store's restart succeeds instead of answering 503 (CI saw a service
    answer 503 after its Redis came back). Against handing the pooled connection out as it is."""
    from service.store.connect import BoundedPool

    client = aioredis.Redis(connection_pool=BoundedPool.from_url(redis_url, max_connections=2,
                                                                 decode_responses=True))
    killer = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        assert await killer.client_kill_filter(_id=await client.client_id()) == 1
        await asyncio.sleep(0.1)  # the event loop reads the server's close
        assert await client.incr(f"{key_prefix}:after-kill") == 1
    finally:
        await client.aclose()
        await killer.aclose()


async def test_a_write_the_server_does_not_read_times_out_and_drops_the_connection(own_redis, key_prefix):
    """A command whose write cannot finish (a frozen Redis, its socket buffers full) fails after the socket
    timeout as redis-py's TimeoutError, and the connection is dropped, so the next command, once Redis is
    back, runs on a fresh one. Against a write left without a bound (connect.py's TimedWrites)."""
    import signal

    from redis.exceptions import TimeoutError as RedisTimeoutError

    from service.store.connect import BoundedPool, TimedWrites

    pool = BoundedPool.from_url(own_redis.url, max_connections=1, socket_timeout=0.5)
    client = aioredis.Redis(connection_pool=pool)
    try:
        await client.ping()
        (connection,) = pool._available_connections
        assert isinstance(connection, TimedWrites)
        big = b"x" * (64 << 20)
        own_redis.process.send_signal(signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(RedisTimeoutError, match="Timeout writing to socket"):
                await asyncio.wait_for(client.set(f"{key_prefix}:big", big), 10)
            assert 0.4 <= time.monotonic() - started < 5
            assert not connection.is_connected
        finally:
            own_redis.process.send_signal(signal.SIGCONT)
        assert await client.ping()
        own_redis.process.send_signal(signal.SIGSTOP)
        try:  # a write cancelled halfway (the request's own deadline) drops its connection too
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(client.set(f"{key_prefix}:big", big), 0.2)
            assert not connection.is_connected
        finally:
            own_redis.process.send_signal(signal.SIGCONT)
        assert await client.ping()
    finally:
        await client.aclose()


def test_every_kind_of_store_url_gets_timed_writes():
    """TCP, TLS and Unix-socket URLs keep their own connection class, with the bounded write mixed in."""
    from redis.asyncio.connection import Connection, SSLConnection, UnixDomainSocketConnection

    from service.store.connect import BoundedPool, TimedWrites

    for url, kind in (("redis://127.0.0.1:1/0", Connection), ("rediss://127.0.0.1:1/0", SSLConnection),
                      ("unix:///tmp/none.sock", UnixDomainSocketConnection)):
        made = BoundedPool.from_url(url).make_connection()
        assert isinstance(made, kind) and isinstance(made, TimedWrites), url


async def test_a_waiter_woken_for_a_connection_that_gives_up_passes_its_turn_on(redis_url):
    """Two commands wait for the pool's one connection; it comes back and wakes the first, which is cancelled
    before it runs: the second gets the connection at once (not after the pool's timeout). Against the turn
    lost with the cancelled waiter, and a cancelled waiter left in line."""
    from service.store.connect import BoundedPool

    pool = BoundedPool.from_url(redis_url, max_connections=1, timeout=5)
    try:
        held = await pool.get_connection()
        first = asyncio.create_task(pool.get_connection())
        second = asyncio.create_task(pool.get_connection())
        await asyncio.sleep(0.01)
        await pool.release(held)  # wakes the first
        first.cancel()
        got = await asyncio.wait_for(second, 1)
        assert got is held
        third = asyncio.create_task(pool.get_connection())
        await asyncio.sleep(0.01)
        third.cancel()  # cancelled while waiting: out of the line
        await pool.release(got)
        assert await asyncio.wait_for(pool.get_connection(), 1) is held
    finally:
        await pool.disconnect()


async def test_then_wait_on_a_cluster_goes_to_the_keys_master_and_refuses_a_moved_slot(cluster, key_prefix):
    """On a cluster the batch goes straight to the master of ``key`` (redis-py would send WAIT to every
    master): its replies and WAIT's count come back as on one Redis; a command the node answers MOVED (its
    slot is served elsewhere) ran nowhere, and the batch is refused as TryAgainError, wherever in it it is."""
    from redis.asyncio.cluster import RedisCluster
    from redis.exceptions import TryAgainError

    from service.store.connect import match_redis, script_then_wait, then_wait

    client = match_redis(cluster.url, cluster=True)
    assert isinstance(client, RedisCluster)
    key = f"{key_prefix}:{{a}}:x"
    elsewhere = next(f"{key_prefix}:{{{tag}}}:y" for tag in "bcdefghijk"
                     if cluster.owner(f"{key_prefix}:{{{tag}}}:y") != cluster.owner(key))
    try:
        await client.initialize()  # as the store's first read of the match does before any commit
        replies, acked = await then_wait(client, key, [("SET", key, "1"), ("INCR", key)], 0, 10)
        assert (replies, acked) == ([True, 2], 0)
        for commands in ([("GET", key), ("GET", elsewhere)], [("GET", elsewhere), ("GET", key)]):
            with pytest.raises(TryAgainError) as moved:
                await then_wait(client, key, commands, 0, 10)
            assert str(moved.value) == "The match's shard moved; try again."
        script = client.register_script("return redis.call('INCRBY', KEYS[1], ARGV[1])")
        assert await script_then_wait(client, script, [key], [3], 0, 10) == (5, 0)
        assert await client.get(key) == "5"
    finally:
        await client.aclose()


def test_the_queue_lives_on_a_plain_redis():
    from service.store.connect import queue_url

    assert queue_url("redis://store", "", False) == "redis://store"
    assert queue_url("redis://store", "redis://queue", False) == "redis://queue"
    assert queue_url("redis://cluster", "redis://queue", True) == "redis://queue"
    with pytest.raises(RuntimeError, match="QUEUE_REDIS_URL"):
        queue_url("redis://cluster", "", True)


async def test_open_store_takes_every_setting(redis_url):
    from service.settings import Settings
    from service.store.connect import open_store

    settings = Settings(redis_url=redis_url, key_prefix="kp", finished_ttl=11, idle_ttl=12, idempotency_ttl=13,
                        lobby_ttl=14, log_compact_every=15, log_keep_recent=16, replica_acks=2, replica_wait_ms=17)
    store = open_store(settings, {GAME.id: GAME}, on_submit=print)
    try:
        assert (store.prefix, store.finished_ttl, store.idle_ttl, store.idempotency_ttl, store.lobby_ttl,
                store.compact_every, store.keep_recent, store.replica_acks, store.replica_wait_ms,
                store.on_submit) == ("kp", 11, 12, 13, 14, 15, 16, 2, 17, print)
        assert await store.ping()
        other = open_store(settings, {}, url="redis://127.0.0.1:1/0")
        assert other.redis.connection_pool.connection_kwargs["port"] == 1
        await other.redis.aclose()
    finally:
        await store.redis.aclose()


# -- tokens -----------------------------------------------------------------------------------------------------


def test_a_token_names_its_match_only_when_shaped_like_one():
    from service.store.tokens import new_token, token_match

    token = new_token("M1")
    assert token_match(token) == "M1" and token.startswith("gt.M1.") and len(token.split(".")[2]) >= 43
    assert new_token("M1") != token
    for bad in ("gt.M1", "gt..secret", "xx.M1.secret", "gt.M1.secret.more", "", "M1"):
        assert token_match(bad) is None, bad


@pytest.mark.parametrize("header, token", [
    (None, None), ("", None), ("Bearer abc", "abc"), ("bearer abc", "abc"), ("BEARER  abc ", "abc"),
    ("Basic abc", ""), ("Bearer", ""), ("Bearer    ", ""), ("Token abc", ""),
])
def test_the_bearer_token_of_an_authorization_header(header, token):
    from service.store.tokens import bearer_token

    assert bearer_token(header) == token


# -- the embedded Redis -------------------------------------------------------------------------------------------


def test_an_embedded_redis_keeps_its_writes_across_a_restart_on_its_directory(tmp_path):
    import redis as sync_redis

    from service.store.embedded import EmbeddedRedis

    first = EmbeddedRedis(tmp_path / "data")
    assert first.url == f"redis://127.0.0.1:{first.port}/0"
    sync_redis.Redis.from_url(first.url).set("kept", "yes")
    first.stop()
    assert first.process.poll() is not None
    again = EmbeddedRedis(tmp_path / "data", port=first.port)
    try:
        assert sync_redis.Redis.from_url(again.url).get("kept") == b"yes"
        assert (tmp_path / "data" / "redis.log").exists()
    finally:
        again.stop()
    volatile = EmbeddedRedis(tmp_path / "volatile", persist=False)
    sync_redis.Redis.from_url(volatile.url).set("lost", "yes")
    volatile.stop()
    again = EmbeddedRedis(tmp_path / "volatile", port=volatile.port)
    try:
        assert sync_redis.Redis.from_url(again.url).get("lost") is None
    finally:
        again.stop()


def test_stop_process_kills_what_ignores_sigterm(tmp_path):
    import subprocess
    import sys

    from service.store.embedded import stop_process

    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
                                 "signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"],
                                stdout=subprocess.PIPE)
    assert stubborn.stdout.readline() == b"ready\n"
    started = time.monotonic()
    stop_process(stubborn, timeout=0.5)
    assert stubborn.returncode == -9 and time.monotonic() - started < 10
    stop_process(stubborn)  # already gone: no error
    polite = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stop_process(polite)
    assert polite.returncode == -15


def test_an_embedded_redis_that_cannot_start_says_where_to_look(tmp_path):
    import socket

    from service.store.embedded import EmbeddedRedis

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))  # bound, not listening: the server cannot have it, a client is refused
        with pytest.raises(RuntimeError, match="redis.log"):
            EmbeddedRedis(tmp_path / "busy", port=taken.getsockname()[1])


def test_free_port_is_free():
    import socket

    from service.store.embedded import free_port

    with socket.socket() as s:
        s.bind(("127.0.0.1", free_port()))


# -- the match store's own defaults and input ---------------------------------------------------------------------


async def test_a_store_built_without_settings_uses_the_settings_defaults(redis_url):
    """MatchStore's keyword defaults (for jobs, tools and tests that build one directly) are the service's."""
    from service.settings import Settings

    defaults = Settings()
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        store = MatchStore(client, {GAME.id: GAME})
        assert (store.prefix, store.finished_ttl, store.idle_ttl, store.idempotency_ttl, store.lobby_ttl,
                store.compact_every, store.keep_recent, store.replica_acks, store.replica_wait_ms) == \
            (defaults.key_prefix, defaults.finished_ttl, defaults.idle_ttl, defaults.idempotency_ttl,
             defaults.lobby_ttl, defaults.log_compact_every, defaults.log_keep_recent, defaults.replica_acks,
             defaults.replica_wait_ms)
        assert store.on_submit is None and store.listeners == [] and not store.compact_in_background
        assert MatchStore(client, {}, keep_recent=0).keep_recent == 1  # the newest entry always stays in the stream
    finally:
        await client.aclose()


async def test_whole_floats_are_whole_numbers_and_key_order_does_not_matter(store):
    """An action sent as ``{"card": 3.0}`` is the action ``{"card": 3}`` (JSON Schema's integers): applied,
    logged and fingerprinted as such, nested too; and an idempotent repeat with its keys in another order is
    the same request."""
    from service.store.matches import canonical

    assert canonical({"a": [1.0, {"b": 2.5, "c": 4.0}], "d": True, "e": None}) == \
        {"a": [1, {"b": 2.5, "c": 4}], "d": True, "e": None}
    assert type(canonical(3.0)) is int and type(canonical([3.0])[0]) is int
    match = await store.create("high-card", seed=1)
    _, _, t0 = await store.join(match.id, "Ann")
    _, _, t1 = await store.join(match.id, "Bob")
    card = (await store.get(match.id)).state["hands"][0][0]
    first = await store.submit(match.id, t0, 0, {"type": "play", "card": float(card)}, "k")
    again = await store.submit(match.id, t0, 0, {"card": card, "type": "play"}, "k")
    assert again.duplicate and again.version == first.version == 1
    [(_, fields)] = await store.log_entries(match.id)
    assert fields["action"] == json.dumps({"card": card, "type": "play"}, separators=(",", ":"))


def test_an_embedded_redis_dies_with_the_process_that_started_it(tmp_path):
    """Even a SIGKILLed service (no atexit) leaves no redis-server behind: the kernel stops it
    (PR_SET_PDEATHSIG in the child before the exec, where mutmut cannot see a test reach it: run.py --recheck
    names this test for those mutants)."""
    import os
    import signal
    import subprocess
    import sys

    parent = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from service.store.embedded import EmbeddedRedis; "
         f"server = EmbeddedRedis({str(tmp_path / 'orphan')!r}, persist=False); "
         "print(server.process.pid, flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE)
    try:
        child = int(parent.stdout.readline())
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 10
    while True:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        try:
            with open(f"/proc/{child}/stat") as stat:  # a zombie (init reaps it) is gone too
                if stat.read().split(") ")[1].startswith("Z"):
                    break
        except FileNotFoundError:
            break
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            raise AssertionError("the embedded redis-server outlived the process that started it")
        time.sleep(0.05)


# -- history, repeats and confirmations -----------------------------------------------------------------------------


async def test_history_entries_carry_seat_time_and_the_timers_record(store):
    """Against a history entry losing its seat, time or ``auto`` record, the match id of its update, and
    the window asked for (``after``, ``limit``)."""
    match_id, tokens = await played(store, 0)
    before = lobby._now_ms()
    m = await store.get(match_id)
    await store.submit(match_id, None, 0, GAME.legal_actions(m.state, 1)[0], acting_seat=1,
                       auto={"seat": 1, "reason": "turn_timeout"})
    m = await store.get(match_id)
    await store.submit(match_id, tokens[0], 1, GAME.legal_actions(m.state, 0)[0])
    history = await store.history(match_id, 1)
    assert [(h.version, h.seat) for h in history] == [(1, 1), (2, 0)]
    assert history[0].auto == {"seat": 1, "reason": "turn_timeout"} and history[1].auto is None
    assert all(before <= h.at <= lobby._now_ms() for h in history)
    assert [h.version for h in await store.history(match_id, 1, limit=1)] == [1]
    assert [h.version for h in await store.history(match_id, 1, after=1, limit=5)] == [2]
    with pytest.raises(Exception) as missing:
        await store.history("no-such-match", None)
    assert missing.value.code == "match_not_found" and "no-such-match" in missing.value.message


async def test_a_repeat_with_another_request_says_so(store):
    match_id, tokens = await played(store, 0)
    m = await store.get(match_id)
    first, second = GAME.legal_actions(m.state, 0)[:2]
    await store.submit(match_id, tokens[0], 0, first, "k")
    from service.store import IdempotencyKeyReused

    with pytest.raises(IdempotencyKeyReused) as reused:
        await store.submit(match_id, tokens[0], 0, second, "k")
    assert reused.value.message == "This idempotency key was used for a different request."


async def test_a_repeat_of_a_move_already_archived_answers_its_events(redis_url, key_prefix):
    """The first outcome of a repeat is read back from the log, which compaction may have moved to the
    archive: the events are the original ones, read from wherever they are now."""
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    store = MatchStore(client, {GAME.id: GAME}, prefix=f"{key_prefix}:archived-repeat", compact_every=2,
                       keep_recent=1)
    try:
        match_id, tokens = await played(store, 0)
        m = await store.get(match_id)
        action = GAME.legal_actions(m.state, 0)[0]
        first = await store.submit(match_id, tokens[0], 0, action, "early")
        for _ in range(3):
            m = await store.get(match_id)
            seat = m.acting[0]
            await store.submit(match_id, tokens[seat], m.version, GAME.legal_actions(m.state, seat)[0])
        assert archive.decode(await archive.read_raw(store, match_id))[0] >= 1  # version 1 is archived now
        again = await store.submit(match_id, tokens[0], 0, action, "early")
        assert again.duplicate and (again.version, again.events) == (1, first.events)
    finally:
        await client.aclose()


async def test_confirm_says_whether_an_idempotent_move_was_accepted(store):
    match_id, tokens = await played(store, 0)
    m = await store.get(match_id)
    await store.submit(match_id, tokens[0], 0, GAME.legal_actions(m.state, 0)[0], "mine")
    with pytest.raises(Exception):
        await store.submit(match_id, tokens[1], 1, {"type": "play", "card": 99}, "refused")
    assert await store.confirm(match_id, 0, "mine") is True
    assert await store.confirm(match_id, 1, "mine") is False  # another seat's key
    assert await store.confirm(match_id, 1, "refused") is False  # refused: recorded, not accepted
    assert await store.confirm(match_id, 0, "never-sent") is False


async def test_confirm_with_a_frozen_replica_is_no_confirmation(tmp_path, key_prefix):
    """With replica acks on, confirm() and a repeat answer only once a replica has the move. WAIT counts only
    the writes of its own connection: on a pooled connection that wrote nothing it would count a frozen
    replica as in sync; the confirmation refreshes the record first so that it cannot."""
    from service.store.connect import ReplicaAckTimeout
    from tests.store.test_replica_acks import Frozen, pair as make_pair

    pairs = make_pair.__wrapped__(tmp_path)
    master, replica = next(pairs)
    client = aioredis.Redis.from_url(master.url, decode_responses=True)
    store = MatchStore(client, {GAME.id: GAME}, prefix=key_prefix, replica_acks=1, replica_wait_ms=200,
                       idempotency_ttl=300)
    try:
        match_id, tokens = await played(store, 0)
        m = await store.get(match_id)
        action = GAME.legal_actions(m.state, 0)[0]
        await store.submit(match_id, tokens[0], 0, action, "k")
        assert await store.confirm(match_id, 0, "k") is True
        idem_key = store.idempotency_key(match_id, 0, "k")
        other = aioredis.Redis.from_url(master.url, decode_responses=True)
        with Frozen(replica):
            await other.expire(idem_key, 100)  # a write the replica misses, on a connection of its own: the
            await other.aclose()               # store's connections last wrote what the replica had confirmed
            with pytest.raises(ReplicaAckTimeout) as timeout:
                await store.confirm(match_id, 0, "k")
            assert (timeout.value.wanted, timeout.value.got, timeout.value.timeout_ms) == (1, 0, 200)
            assert 100 < await client.ttl(idem_key) <= 300  # refreshed: the write WAIT waits for
            with pytest.raises(ReplicaAckTimeout):
                await store.submit(match_id, tokens[0], 0, action, "k")  # a repeat: no acknowledgement either
        assert (await store.submit(match_id, tokens[0], 0, action, "k")).duplicate
    finally:
        await client.aclose()
        next(pairs, None)


# -- the lobby's reads, bounded ---------------------------------------------------------------------------------


async def test_an_empty_lobby_of_one_game_does_not_hide_the_next_games(store):
    """Against the read of every game's lobby stopping at the first empty one (``break`` for ``continue``):
    high-card's lobby, read first, is empty."""
    match = await store.create("other-card")
    assert [e["id"] for e in await store.lobby()] == [match.id]


async def test_the_lobby_reads_2_x_limit_plus_10_candidates_a_time(store):
    """Against more candidates read per listing (3 x limit + 10 or 2 x limit + 11 instead of 2 x limit + 10):
    behind 13 stale entries, a listing of 1 reads and drops the 12 oldest only, and answers none; the next
    one reaches the open match."""
    key = store.lobby_key("high-card")
    now = lobby._now_ms()
    stale = [f"gone-{i:02}" for i in range(13)]
    await store.redis.zadd(key, {match_id: now - 1000 + i for i, match_id in enumerate(stale)})
    match = await store.create("high-card")
    assert await store.lobby("high-card", limit=1) == []
    assert await store.redis.zrange(key, 0, -1) == [stale[12], match.id]
    assert [e["id"] for e in await store.lobby("high-card", limit=1)] == [match.id]
    assert await store.redis.zrange(key, 0, -1) == [match.id]


async def test_the_lobby_drops_an_entry_a_second_older_than_its_ttl(store):
    """Against the cutoff computed in other units than milliseconds (lobby_ttl x 1001): with a lobby_ttl of
    an hour, an entry an hour and a second old is past it (x 1001 would keep it 2.6 s more)."""
    assert store.lobby_ttl == 3600
    match = await store.create("high-card")
    key = store.lobby_key("high-card")
    await store.redis.zadd(key, {match.id: lobby._now_ms() - 3_601_000})
    assert await store.lobby("high-card") == []
    assert await store.redis.zscore(key, match.id) is None


async def test_the_lobby_lists_50_matches_unless_asked_for_another_number(store):
    """Against the default limit of MatchStore.lobby and lobby.open_matches (51 for 50)."""
    for _ in range(51):
        await store.create("high-card")
    assert len(await store.lobby()) == 50 and len(await store.lobby("high-card")) == 50
    assert len(await lobby.open_matches(store)) == 50
    assert len(await store.lobby(limit=60)) == 51


async def test_a_started_match_with_a_seat_given_up_is_not_listed_even_if_indexed(store):
    """The match hash is the truth, the lobby index only a hint: a started match with a free seat (given up
    mid-match) found in the index is dropped, not listed. Against the status check joined to the seats
    check with ``and``."""
    match = await store.create("high-card")
    _, _, token = await store.join(match.id, "Ann")
    await store.join(match.id, "Bob")
    await store.leave(match.id, token)
    assert (await store.get(match.id)).status == "active"
    await lobby.listed(store, "high-card", match.id)  # an index entry left behind (a listing racing the start)
    assert await store.lobby("high-card") == []
    assert await store.redis.zcard(store.lobby_key("high-card")) == 0


async def test_the_lobby_works_on_a_cluster_where_each_match_has_its_own_slot(cluster, key_prefix):
    """The lobby reads each match's fields from its own slot: a pipeline, never a MULTI, which a Redis Cluster
    refuses across slots. Against the match reads made a transaction."""
    from service.store.connect import match_redis

    client = match_redis(cluster.url, cluster=True)
    store = MatchStore(client, {GAME.id: GAME}, prefix=f"{key_prefix}:cluster-lobby")
    try:
        ids = [(await store.create("high-card")).id for _ in range(8)]
        assert len({cluster.owner(store.key(match_id)) for match_id in ids}) > 1  # across shards
        assert {e["id"] for e in await store.lobby("high-card")} == set(ids)
    finally:
        await client.aclose()


# -- a seat handed to a bot, the history's default window -------------------------------------------------------


async def test_a_seat_handed_to_a_bot_mid_match_is_the_bots(store):
    """add_bot with the seat's token: the seat is the bot's at once (its name, level and a token of its own),
    the old token stops working, the match goes on. Against the bot's seat record lost, misnamed or without
    its level; and leave() without a token says what to send."""
    from service.store import InvalidToken, TokenRequired

    match_id, tokens = await played(store, 1)
    match, seat = await add_bot(store, match_id, 1, "greedy", token=tokens[1])
    assert seat == 1 and match.status == "active"
    stored = await store.get(match_id)
    bot_seat = stored.seats[1]
    assert (bot_seat.name, bot_seat.bot, bot_seat.joined) == ("greedy bot", "greedy", True)
    assert bot_seat.token_hash and bot_seat.token_hash != stored.seats[0].token_hash
    raw = json.loads(await store.redis.hget(store.key(match_id), "seat:1"))
    assert raw["bot"] == {"level": "greedy"} and raw["name"] == "greedy bot" and raw["joined"] >= stored.created
    with pytest.raises(InvalidToken):
        await store.read_as(match_id, tokens[1])
    assert await store.lobby("high-card") == []
    with pytest.raises(TokenRequired) as required:
        await store.leave(match_id, None)
    assert required.value.message == "Send the seat's bearer token to give the seat up."


async def test_history_answers_100_entries_unless_asked_for_another_number(store):
    """Against history()'s default window (101 for 100): a log of 101 entries (written as commit.lua writes
    them) answers its first 100."""
    match = await store.create("high-card", seed=1)
    now = lobby._now_ms()
    for version in range(1, 102):
        await store.redis.xadd(store.log_key(match.id), {"seat": version % 2, "action": '{"type":"play"}',
                                                         "events": "[]", "at": now}, id=f"{version}-0")
    history = await store.history(match.id, 0)
    assert [h.version for h in history] == list(range(1, 101))
    assert len(await store.history(match.id, 0, limit=200)) == 101


# -- errors: their messages and details ------------------------------------------------------------------------


async def test_a_match_of_rules_this_process_lacks_names_the_versions_it_has(store, redis_url, key_prefix,
                                                                            monkeypatch):
    """RulesVersionUnavailable's message (a 503's on both APIs) names the match's version and every version
    installed, or none. Against the message lost, the list joined wrong, 'none' said with versions
    installed or spelt otherwise, and str(error) left empty."""
    from service.engine import versions
    from service.store.errors import RulesVersionUnavailable

    class Older(HighCard):
        rules_version = "0.9"

    monkeypatch.setattr(versions, "installed_extra", lambda: (Older(),))  # an older version installed beside
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        both = MatchStore(client, {GAME.id: GAME}, prefix=f"{key_prefix}:rules-versions")
        match = await both.create("high-card", seed=1)
        await client.hset(both.key(match.id), "rules_version", "2")
        with pytest.raises(RulesVersionUnavailable) as unavailable:
            await both.get(match.id)
    finally:
        await client.aclose()
    message = ("This match plays high-card rules version 2, which this server does not have (it has 0.9, 1); "
               "try again: another server may.")
    assert unavailable.value.message == message and str(unavailable.value) == message
    assert (unavailable.value.game_id, unavailable.value.rules_version, unavailable.value.installed) == \
        ("high-card", "2", ["0.9", "1"])
    none = RulesVersionUnavailable("high-card", "7", [])  # as a worker without the game's rules says it
    assert str(none) == none.message == ("This match plays high-card rules version 7, which this server does not "
                                         "have (it has none); try again: another server may.")


def test_a_player_without_a_seat_in_the_match_is_told_so(client):
    """A player's token read in a match where the player holds no seat: 401 invalid_token, with the message
    that says why. Against the message lost or changed."""
    from tests.players.conftest import bearer, unique_name

    players = [client.post("/v1/players", json={"name": unique_name()}).json() for _ in range(2)]
    created = client.post("/v1/matches", json={"game": "casting-stones", "variant": "basic"})
    assert created.status_code == 201, created.text
    match_id = created.json()["id"]
    joined = client.post(f"/v1/matches/{match_id}/seats", json={}, headers=bearer(players[0]["token"]))
    assert joined.status_code == 201, joined.text
    refused = client.get(f"/v1/matches/{match_id}", headers=bearer(players[1]["token"]))
    assert refused.status_code == 401
    assert (refused.json()["code"], refused.json()["detail"]) == ("invalid_token",
                                                                  "This player holds no seat in this match.")


async def test_the_update_commit_publishes_reads_as_the_entry_it_logs(store):
    """What live followers are sent (the message commit.lua publishes, read by published_update) is the update
    the log holds, field for field: against the action, events, status or seats to act dropped on the way."""
    match_id, tokens = await played(store, 0)
    pubsub = store.redis.pubsub()
    await pubsub.subscribe(store.channel(match_id))
    try:
        await pubsub.get_message(timeout=5)  # the subscription's confirmation
        m = await store.get(match_id)
        accepted = await store.submit(match_id, tokens[0], 0, GAME.legal_actions(m.state, 0)[0])
        message = None
        for _ in range(50):
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.2)
            if message is not None:
                break
        assert message is not None, "nothing was published"
    finally:
        await pubsub.aclose()
    published = archive.published_update(match_id, json.loads(message["data"]))
    [(entry_id, fields)] = await store.log_entries(match_id)
    logged = archive.log_update(match_id, entry_id, fields)
    assert published == logged
    assert (published.version, published.seat, published.status, published.to_act) == (1, 0, "active", [1])
    assert published.action == GAME.legal_actions(m.state, 0)[0] and published.events == accepted.events != []


# -- the errors of collections and trades: their messages and details -------------------------------------------


async def test_collection_and_trade_refusals_carry_their_message_and_details(stores):
    """What the APIs answer a refusal with: the message, the attribute GraphQL reads and the details REST
    sends (``missing``, ``next_at``, ``trade_status``, ``trade``). Against any of them lost or renamed."""
    from service.store.errors import NoSetLeft, NotInCollection, TradeClosed, TradeFailed
    from tests.collections.conftest import give, new_store_player

    _store, collections, trades = stores
    a, b, c = [await new_store_player(collections, stem) for stem in "ABC"]
    await give(collections, a, {"harry-potter": 1})
    with pytest.raises(NotInCollection) as lacking:
        await trades.offer(a, b, {"stones": [{"id": "fluffy", "count": 2}]}, {})
    missing = {"stones": [{"id": "fluffy", "count": 2}], "cards": []}
    assert (lacking.value.message, lacking.value.missing, lacking.value.details) == \
        ("You do not own 2 x fluffy (stones).", missing, {"missing": missing})
    offer = await trades.offer(a, b, {"stones": [{"id": "harry-potter"}]}, {})
    away = await trades.offer(a, c, {"stones": [{"id": "harry-potter"}]}, {})
    await trades.accept(away["id"], c)
    with pytest.raises(TradeFailed) as failed:  # a no longer owns what it offered b
        await trades.accept(offer["id"], b)
    assert failed.value.trade["id"] == offer["id"] and failed.value.trade["status"] == "failed"
    assert failed.value.details == {"trade": failed.value.trade} and failed.value.message == str(failed.value) != ""
    with pytest.raises(TradeClosed) as closed:
        await trades.accept(offer["id"], b)
    assert (closed.value.message, closed.value.status, closed.value.details) == \
        ("This trade is failed.", "failed", {"trade_status": "failed"})
    collections.sets_per_day = 0
    with pytest.raises(NoSetLeft) as none_left:
        await collections.open_set(a, "refill")
    assert none_left.value.next_at % 86_400_000 == 0 and none_left.value.next_at > lobby._now_ms()
    assert none_left.value.details == {"next_at": none_left.value.next_at}
    assert none_left.value.message == ("You have opened the 0 refill set(s) a day allows, and have no granted one; "
                                       "the allowance comes back at midnight UTC.") == str(none_left.value)


# -- giving a seat up: races with the script, abandonment, the lobby ---------------------------------------------


async def test_a_seat_that_changed_hands_or_a_match_gone_since_the_read_is_not_given_up(store, monkeypatch):
    """leave() reads the match, then its script checks the seat's token again: a seat given up and retaken
    by someone else in between is not given up by the old token (InvalidToken, the new holder keeps it),
    and a match gone in between is MatchNotFound. Against the script's "invalid" reply not recognised (the
    call would succeed) and the two refusals' messages lost or changed."""
    from service.store import InvalidToken, MatchNotFound

    read_as = store.read_as
    between = []  # what another request does between this one's read and its script

    async def racing(match_id, token):
        read = await read_as(match_id, token)
        for step in between:
            await step(match_id)
        return read

    monkeypatch.setattr(store, "read_as", racing)
    match = await store.create("high-card")
    _, _, ann = await store.join(match.id, "Ann", 0)
    taken = []

    async def given_up_and_retaken(match_id):
        between.clear()
        await store.leave(match_id, ann)  # the same token, in another request that got there first
        taken.append(await store.join(match_id, "Eve", 0))

    between.append(given_up_and_retaken)
    with pytest.raises(InvalidToken) as invalid:
        await store.leave(match.id, ann)
    assert invalid.value.message == "This token does not hold a seat in this match."
    stored = await store.get(match.id)
    assert stored.seats[0].name == "Eve" and store.authenticate(stored, taken[0][2]) == 0

    async def expired(match_id):
        await store.redis.delete(store.key(match_id))

    between.append(expired)
    with pytest.raises(MatchNotFound) as missing:
        await store.leave(match.id, taken[0][2])
    assert missing.value.message == f"There is no match {match.id!r} (it may have expired)."
    assert await store.redis.exists(store.key(match.id)) == 0  # the script wrote nothing


async def test_leaving_a_rated_match_in_play_abandons_it_and_an_unrated_one_does_not(store):
    """A rated match's seat given up while it is played is recorded as abandoned by its player (a loss for
    the rating); an unrated match records nothing, nor does a rated one not started. Against the
    abandonment never recorded, recorded for every match, or recorded under another name (or for a seat
    that has no player)."""
    rated = await store.create("high-card", rated=True)
    _, _, ann = await store.join(rated.id, "Ann", 0, player="p-ann")
    await store.join(rated.id, "Bob", 1, player="p-bob")
    match, seat = await store.leave(rated.id, ann)
    assert seat == 0 and match.abandoned == {0: "p-ann"}
    assert await store.redis.hget(store.key(rated.id), "abandoned:0") == "p-ann"

    unrated = await store.create("high-card")
    _, _, ann = await store.join(unrated.id, "Ann", 0, player="p-ann")
    await store.join(unrated.id, "Bob", 1, player="p-bob")
    match, _ = await store.leave(unrated.id, ann)
    assert match.abandoned == {}
    assert [f for f in await store.redis.hkeys(store.key(unrated.id)) if f.startswith("abandoned")] == []

    waiting = await store.create("high-card", rated=True)
    _, _, ann = await store.join(waiting.id, "Ann", 0, player="p-ann")
    match, _ = await store.leave(waiting.id, ann)
    assert match.status == "waiting" and match.abandoned == {}

    anonymous = await store.create("high-card", rated=True)  # a seat with no player: nobody to blame
    _, _, anon = await store.join(anonymous.id, "Anon", 0)
    await store.join(anonymous.id, "Bob", 1, player="p-bob")
    match, _ = await store.leave(anonymous.id, anon)
    assert match.status == "active" and match.abandoned == {}


async def test_a_seat_given_up_lists_only_a_waiting_match_that_is_listed(store):
    """leave() lists the match again only when it waits for players and is a lobby match: a quick match or a
    rematch (unlisted) never shows, and a match in play is not put back in the index. Against ``or`` for
    ``and`` there (the lobby's read would drop the started one, so the index is looked at right away)."""
    unlisted = await store.create("high-card", listed=False)
    _, _, ann = await store.join(unlisted.id, "Ann")
    await store.leave(unlisted.id, ann)
    assert await store.redis.zscore(store.lobby_key("high-card"), unlisted.id) is None
    assert await store.lobby("high-card") == []
    started = await store.create("high-card")
    _, _, ann = await store.join(started.id, "Ann")
    await store.join(started.id, "Bob")
    await store.leave(started.id, ann)
    assert await store.redis.zscore(store.lobby_key("high-card"), started.id) is None


# -- the deal of a committed seed -------------------------------------------------------------------------------


async def test_the_deal_records_each_seats_entropy_and_whether_it_was_generated(store):
    """The deal derives the seed from every seat's entropy and records them (docs/fairness.md): a seat handed
    to a bot before the deal brings none (""), a seat joined without one had it generated, a seat that sent
    one did not. Against a missing entropy read as None or as another string, and the generated flag lost."""
    from service.engine import seeds

    match = await store.create("three-card", seats=3)
    _, _, ann = await store.join(match.id, "Ann", 0)
    await add_bot(store, match.id, 0, "random", token=ann)  # a leave's bot record: no entropy
    await store.join(match.id, "Bob", 1)
    _, _, _ = await store.join(match.id, "Cid", 2, entropy="cid's own")
    raw = await store.redis.hgetall(store.key(match.id))
    generated = json.loads(raw["seat:1"])["entropy"]
    assert json.loads(raw["entropies"]) == [{"seat": 0, "entropy": "", "generated": False},
                                            {"seat": 1, "entropy": generated, "generated": True},
                                            {"seat": 2, "entropy": "cid's own", "generated": False}]
    assert int(raw["seed"]) == seeds.derive_rng_seed(raw["secret_seed"], ["", generated, "cid's own"])
    assert raw["status"] == "active" and "deal" not in raw


async def test_reading_a_match_not_yet_dealt_deals_nothing_and_tells_nobody(store):
    """get() of a committed match still waiting for a seat neither deals it nor calls the listeners (they
    hear of a deal, a join or an action). Against the check "not every seat taken yet" answering "dealt"."""
    heard = []

    async def listener(match):
        heard.append((match.id, match.status, match.version))

    store.listeners.append(listener)
    match = await store.create("high-card")
    await store.join(match.id, "Ann")
    assert len(heard) == 1  # the join
    again = await store.get(match.id)
    assert again.status == "waiting" and not again.dealt and len(heard) == 1
    await store.join(match.id, "Bob")
    assert heard[-1][:2] == (match.id, "active") and len(heard) == 2


# -- the Redis clients: retries, messages, a cluster -------------------------------------------------------------


async def test_a_script_the_server_never_has_is_sent_twice_then_refused(tmp_path):
    """script_then_wait sends a script again once after loading it, not more: a script whose sha is not its
    text's (the server never has it) is sent twice and loaded twice, then refused with NoScriptError and
    its message. A Redis of the test's own, whose command counts are this test's alone. Against a third
    attempt and the message lost or changed."""
    from redis.exceptions import NoScriptError

    from service.store.connect import script_then_wait
    from service.store.embedded import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "scripts", persist=False)
    client = aioredis.Redis.from_url(server.url, decode_responses=True)
    try:
        script = client.register_script("return 1")
        script.sha = "0" * 40
        with pytest.raises(NoScriptError) as refused:
            await script_then_wait(client, script, ["k"], [], 0, 10)
        assert str(refused.value) == "The commit script could not be loaded."
        stats = await client.info("commandstats")
        assert (stats["cmdstat_evalsha"]["calls"], stats["cmdstat_script"]["calls"]) == (2, 2)
    finally:
        await client.aclose()
        server.stop()


def test_a_cluster_without_a_queue_redis_is_refused_with_what_to_set():
    """Against the refusal's message changed (the existing test only looks for QUEUE_REDIS_URL in it)."""
    from service.store.connect import queue_url

    with pytest.raises(RuntimeError) as refused:
        queue_url("redis://cluster", "", True)
    assert str(refused.value) == ("REDIS_CLUSTER=1 needs QUEUE_REDIS_URL: the RQ queues need a plain Redis, "
                                  "not a cluster")


async def test_a_store_error_reads_as_its_message(store):
    """str() of a store error is its message (tracebacks, logs, pytest's ``match``): against the exception
    made without it."""
    from service.store import MatchNotFound

    with pytest.raises(MatchNotFound) as missing:
        await store.get("no-such-match")
    assert str(missing.value) == missing.value.message == "There is no match 'no-such-match' (it may have expired)."
    assert missing.value.args == (missing.value.message,)


async def test_a_confirmation_on_a_cluster_waits_on_the_master_of_the_match(cluster, key_prefix):
    """With replica acks on a cluster, confirm() refreshes the idempotency record and WAITs on the master of
    the match's slot (routed by the record's key): with no replica there, ReplicaAckTimeout (wanted 1,
    got 0). Against the WAIT sent without the key that routes it."""
    from service.store.connect import ReplicaAckTimeout, match_redis

    client = match_redis(cluster.url, cluster=True)
    store = MatchStore(client, {GAME.id: GAME}, prefix=f"{key_prefix}:cluster-acks", replica_acks=1,
                       replica_wait_ms=50, idempotency_ttl=300)
    try:
        match_id, tokens = await played(store, 0)
        m = await store.get(match_id)
        with pytest.raises(ReplicaAckTimeout) as applied:  # applied, but no replica confirmed it
            await store.submit(match_id, tokens[0], 0, GAME.legal_actions(m.state, 0)[0], "k")
        assert (applied.value.wanted, applied.value.got, applied.value.timeout_ms) == (1, 0, 50)
        idem_key = store.idempotency_key(match_id, 0, "k")
        await client.expire(idem_key, 100)
        with pytest.raises(ReplicaAckTimeout) as timeout:
            await store.confirm(match_id, 0, "k")
        assert (timeout.value.wanted, timeout.value.got, timeout.value.timeout_ms) == (1, 0, 50)
        assert 100 < await client.ttl(idem_key) <= 300  # refreshed on the match's master
    finally:
        await client.aclose()


# -- the log's archive: its encoding, reads that never reach it, a log that keeps moving -------------------------


async def test_the_archive_is_compact_json_of_version_and_fields(store):
    """The archive is ``<upto>:`` and zlib of compact JSON (no spaces: it is what the memory figures of
    docs/operations.md measured), extended as text. Against the default separators."""
    import zlib

    store.compact_every, store.keep_recent = 2, 1
    match_id, _ = await played(store, 4)
    raw = await archive.read_raw(store, match_id)
    head, _, body = raw.partition(b":")
    text = zlib.decompress(body)
    entries = json.loads(text)
    assert head == b"3" and [v for v, _ in entries] == [1, 2, 3]
    assert text == json.dumps(entries, separators=(",", ":")).encode()


async def test_reading_recent_versions_reads_the_stream_alone(store):
    """When the stream holds the first version asked for, the archive is not read (the usual case:
    followers read recent versions): a damaged archive does not reach them. Against the check of the
    stream's first version (after - 1 for after + 1)."""
    store.compact_every, store.keep_recent = 2, 1
    match_id, _ = await played(store, 4)  # archived through 3; the stream holds 4
    await store.redis.set(store.archive_key(match_id), "3:not zlib")
    assert [i for i, _ in await store.log_entries(match_id, after=3)] == ["4-0"]


async def test_a_log_that_keeps_moving_is_read_8_times_and_compacted_4_times_then_given_up(tmp_path):
    """A log whose archive and stream never meet (versions missing between them: a compaction forever in
    flight) is read again 8 times, then refused with a RuntimeError naming the match; a compaction tries 4
    times and reports that nothing moved. Counted on a Redis of the test's own (one GET of the archive per
    attempt). Against fewer or more attempts (a ``break`` for the ``continue``), a compaction reporting a
    move it did not make, and the error's message."""
    from service.store.embedded import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "moving", persist=False)
    client = aioredis.Redis.from_url(server.url, decode_responses=True)
    try:
        store = MatchStore(client, {GAME.id: GAME}, prefix="moving", compact_every=0)
        match_id, _ = await played(store, 5)
        entries = await client.xrange(store.log_key(match_id))
        await client.set(store.archive_key(match_id), archive.encode(2, entries[:2]))
        await client.xdel(store.log_key(match_id), "1-0", "2-0", "3-0")  # version 3 is nowhere

        async def gets(call):
            await client.config_resetstat()
            try:
                return await call, None
            except RuntimeError as error:
                return None, error
            finally:
                stats = await client.info("commandstats")
                counted.append(stats.get("cmdstat_get", {}).get("calls", 0))

        counted = []
        _, error = await gets(store.log_entries(match_id, after=0, limit=10))
        assert str(error) == f"the log of match {match_id} kept moving while being read"
        store.compact_every, store.keep_recent = 1, 1
        moved, _ = await gets(archive.compact(store, match_id, 5, False))
        assert moved is False and archive.decode(await archive.read_raw(store, match_id))[0] == 2
        assert counted == [8, 4]
    finally:
        await client.aclose()
        server.stop()


async def test_the_log_answers_100_entries_unless_asked_for_another_number(store):
    """Against log_entries()'s default window (101 for 100)."""
    match = await store.create("high-card", seed=1)
    for version in range(1, 102):
        await store.redis.xadd(store.log_key(match.id), {"seat": 0, "action": "{}", "events": "[]", "at": 1},
                               id=f"{version}-0")
    assert len(await store.log_entries(match.id)) == 100


async def test_a_failed_compaction_is_logged_with_its_match_and_the_action_stays_accepted(store, caplog):
    """A compaction that fails (here the archive key holds a value of another type) leaves the action
    accepted and logs an ERROR with its traceback on grimoire.store naming the match. Against the log
    record's logger, message or match id lost or changed."""
    import logging

    store.compact_every, store.keep_recent = 1, 1
    match_id, tokens = await played(store, 0)
    await store.redis.rpush(store.archive_key(match_id), "not an archive")
    m = await store.get(match_id)
    with caplog.at_level(logging.ERROR, logger="grimoire.store"):
        accepted = await store.submit(match_id, tokens[0], 0, GAME.legal_actions(m.state, 0)[0])
    assert accepted.version == 1 and (await store.get(match_id)).version == 1
    [record] = [r for r in caplog.records if r.name == "grimoire.store"]
    assert (record.levelname, record.getMessage()) == ("ERROR", f"log compaction failed for {match_id}")
    assert record.exc_info is not None


# -- the Redis clients' settings, the embedded Redis --------------------------------------------------------------


def test_the_store_clients_are_configured_as_documented(redis_url, cluster):
    """A plain Redis: a blocking pool of ``max_connections`` (64 unless told) that waits 5 s for a connection,
    health checks every 10 s, socket timeouts; a cluster client likewise; open_store passes the settings'
    cluster flag and pool size. Against any of them dropped or changed."""
    from redis.asyncio.cluster import RedisCluster

    from service.settings import Settings
    from service.store.connect import TIMEOUTS, match_redis, open_store

    plain = match_redis(redis_url)
    pool = plain.connection_pool
    assert (pool.max_connections, pool.timeout) == (64, 5)
    assert {k: pool.connection_kwargs[k] for k in ("decode_responses", "health_check_interval", *TIMEOUTS)} == \
        {"decode_responses": True, "health_check_interval": 10, **TIMEOUTS}
    clustered = match_redis(cluster.url, cluster=True, max_connections=9)
    assert isinstance(clustered, RedisCluster)
    assert {k: clustered.connection_kwargs[k] for k in ("max_connections", "decode_responses",
                                                         "health_check_interval", *TIMEOUTS)} == \
        {"max_connections": 9, "decode_responses": True, "health_check_interval": 10, **TIMEOUTS}
    store = open_store(Settings(redis_url=cluster.url, redis_cluster=True, redis_max_connections=7), {})
    assert isinstance(store.redis, RedisCluster) and store.redis.connection_kwargs["max_connections"] == 7
    store = open_store(Settings(redis_url=redis_url, redis_max_connections=5), {})
    assert not isinstance(store.redis, RedisCluster) and store.redis.connection_pool.max_connections == 5


def test_an_embedded_redis_makes_its_directory_with_its_parents(tmp_path):
    """Against the data directory's parents not made (mkdir without ``parents``)."""
    from service.store.embedded import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "deep" / "er" / "data", persist=False)
    server.stop()
    assert (tmp_path / "deep" / "er" / "data" / "redis.log").exists()


def test_an_embedded_redis_that_exits_is_reported_at_once(tmp_path):
    """A redis-server that exits (its port is taken) is reported at once, not after the start-up deadline,
    with the log to read. Against the exit check joined to the deadline with ``and``, and the message."""
    import socket

    from service.store.embedded import EmbeddedRedis

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        started = time.monotonic()
        with pytest.raises(RuntimeError) as refused:
            EmbeddedRedis(tmp_path / "busy", port=taken.getsockname()[1])
    assert time.monotonic() - started < 8
    assert str(refused.value) == f"embedded redis-server did not start; see {(tmp_path / 'busy').resolve() / 'redis.log'}"


# -- what a match shows a seat, and the deal's announcements ------------------------------------------------------


async def test_legal_actions_are_for_a_seat_of_an_active_match_only(store):
    """Against a seat of a waiting match, or a spectator of an active one, being offered moves; and the events
    of an accepted action shown to the seat that acted as to a spectator."""
    match = await store.create("high-card", seed=3)
    _, _, t0 = await store.join(match.id, "Ann")
    waiting = await store.get(match.id)
    assert waiting.legal_actions(0) == [] and GAME.legal_actions(waiting.state, 0) != []
    await store.join(match.id, "Bob")
    active = await store.get(match.id)
    assert active.legal_actions(None) == [] and active.legal_actions(0) == GAME.legal_actions(active.state, 0)
    action = active.legal_actions(0)[0]
    accepted = await store.submit(match.id, t0, 0, action)
    assert accepted.events_for(0) == [{"type": "played", "seat": 0}, {"type": "played_card", "card": action["card"]}]
    assert accepted.events_for(1) == accepted.events_for(None) == [{"type": "played", "seat": 0}]


async def test_a_deal_is_announced_on_the_matchs_channel_and_a_deal_made_meanwhile_counts(store):
    """The deal publishes ``seat:dealt`` on the match's channel (followers read the match again). A get()
    that read the match before another one dealt it finds it dealt ("done": the match is read again, as
    dealt). Against the channel name lost and "done" not recognised."""
    match = await store.create("high-card")
    await store.join(match.id, "Ann")
    pubsub = store.redis.pubsub()
    await pubsub.subscribe(store.channel(match.id))
    try:
        await pubsub.get_message(timeout=5)
        stale = await store.redis.hgetall(store.key(match.id))
        await store.join(match.id, "Bob")  # the last seat: dealt
        messages = []
        for _ in range(50):
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.1)
            if message is not None:
                messages.append(message["data"])
            elif "seat:dealt" in messages:
                break
    finally:
        await pubsub.aclose()
    assert "seat:dealt" in messages
    stale["seat:1"] = (await store.redis.hgetall(store.key(match.id)))["seat:1"]  # read once Bob had joined
    assert await store._deal_if_due(match.id, stale) is True  # dealt by the other reader: "done"


# -- submitting: refusals and their messages, the metrics hook, races with the commit ----------------------------


async def test_refusals_of_an_action_say_why_and_are_counted_by_code(store):
    """Each refusal's message (the APIs send it as it is) and the metrics hook: an accepted action is counted
    with its game, a refusal with its code, a repeat not at all. Against the messages lost or changed, the
    caller's game not checked, and the hook told the wrong thing."""
    from service.engine import IllegalAction
    from service.store import InvalidToken, MatchNotStarted, TokenRequired

    counted = []
    store.on_submit = lambda game, code: counted.append((game, code))
    match = await store.create("high-card", seed=2)
    _, _, t0 = await store.join(match.id, "Ann")
    with pytest.raises(MatchNotStarted) as not_started:
        await store.submit(match.id, t0, 0, {"type": "play", "card": 1})
    assert not_started.value.message == "The match starts when every seat is taken."
    _, _, t1 = await store.join(match.id, "Bob")
    with pytest.raises(TokenRequired) as required:
        await store.submit(match.id, None, 0, {"type": "play", "card": 1})
    assert required.value.message == "Acting needs the bearer token you got when you joined a seat."
    with pytest.raises(InvalidToken) as invalid:
        await store.submit(match.id, "gt.nobody.secret", 0, {"type": "play", "card": 1})
    assert invalid.value.message == "This token does not hold a seat in this match."
    m = await store.get(match.id)
    action = GAME.legal_actions(m.state, 0)[0]
    with pytest.raises(IllegalAction) as other_game:
        await store.submit(match.id, t0, 0, action, game_id="other-card")
    assert other_game.value.message == f"This is a {GAME.title} match, not other-card."
    assert await store.submit(match.id, t0, 0, action, game_id="high-card", idempotency_key="k")
    assert (await store.submit(match.id, t0, 0, action, idempotency_key="k")).duplicate
    m = await store.get(match.id)
    await store.submit(match.id, t1, 1, GAME.legal_actions(m.state, 1)[0])
    assert counted == [(None, "match_not_started"), (None, "token_required"), (None, "invalid_token"),
                       (None, "illegal_action"), ("high-card", None), ("high-card", None)]


async def test_a_refusal_recorded_under_an_idempotency_key_expires_with_the_others(store):
    """A refused action sent with a key is recorded for idempotency_ttl (a repeat answers the same refusal);
    without a key nothing is recorded. Against the record kept for ever."""
    from service.engine import RuleError

    match_id, tokens = await played(store, 0)
    with pytest.raises(RuleError):
        await store.submit(match_id, tokens[0], 0, {"type": "play", "card": 99}, "bad")
    key = store.idempotency_key(match_id, 0, "bad")
    assert 0 < await store.redis.ttl(key) <= store.idempotency_ttl
    assert json.loads(await store.redis.get(key))["code"]
    with pytest.raises(RuleError):
        await store.submit(match_id, tokens[0], 0, {"type": "play", "card": 99})
    assert [k async for k in store.redis.scan_iter(match=f"{store.key(match_id)}:idem:*")] == [key]


async def test_a_refusal_without_a_key_writes_no_record_anywhere(tmp_path):
    """Against a refused action without an idempotency key recorded under the key "" (on a Redis of the
    test's own, which holds nothing else)."""
    from service.engine import RuleError
    from service.store.embedded import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "refusal", persist=False)
    client = aioredis.Redis.from_url(server.url, decode_responses=True)
    try:
        store = MatchStore(client, {GAME.id: GAME}, prefix="r")
        match_id, tokens = await played(store, 0)
        before = set(await client.keys("*"))
        with pytest.raises(RuleError):
            await store.submit(match_id, tokens[0], 0, {"type": "play", "card": 99})
        assert set(await client.keys("*")) == before
    finally:
        await client.aclose()
        server.stop()


class RaceOnce:
    """A guard (MatchStore.guards) that runs another request once, after the rules accepted an action and
    before it is committed: the window in which another process may write. It records the seats it saw."""

    def __init__(self, race):
        self.race, self.seats = race, []

    async def check_action(self, match, seat, action):
        self.seats.append(seat)
        race, self.race = self.race, None
        if race is not None:
            await race(match)


async def test_an_action_racing_another_is_refused_by_the_commit(store):
    """What the commit script finds when another request got there between the read and the write: the
    match moved on (VersionConflict with the version now), gone (MatchNotFound), or the same idempotency key
    committed (the repeat answers that outcome). Against each reply not recognised or its message lost; and
    the guard not told the acting seat."""
    from service.store import MatchNotFound, VersionConflict

    match_id, tokens = await played(store, 0)
    m = await store.get(match_id)
    first, second = GAME.legal_actions(m.state, 0)[:2]

    async def other_move(match):
        await store.submit(match_id, tokens[0], 0, second)

    guard = RaceOnce(other_move)
    store.guards.append(guard)
    with pytest.raises(VersionConflict) as conflict:
        await store.submit(match_id, tokens[0], 0, first)
    assert conflict.value.message == "The match moved on to version 1 before your action landed; read it again."
    assert conflict.value.current_version == 1 and guard.seats == [0, 0]

    m = await store.get(match_id)
    action = GAME.legal_actions(m.state, 1)[0]

    async def same_key(match):
        await store.submit(match_id, tokens[1], 1, action, "k")

    guard.race = same_key
    again = await store.submit(match_id, tokens[1], 1, action, "k")
    assert again.duplicate and again.version == 2 and (await store.get(match_id)).version == 2

    async def expired(match):
        await store.redis.delete(store.key(match_id))

    guard.race = expired
    m = await store.get(match_id)
    with pytest.raises(MatchNotFound) as missing:
        await store.submit(match_id, tokens[0], 2, GAME.legal_actions(m.state, 0)[0])
    assert missing.value.message == f"There is no match {match_id!r} (it may have expired)."


async def test_a_commit_writes_the_chain_head_ttls_and_log_fields_as_documented(store):
    """After an action: the match's new state hash is returned and stored; the match and its archive expire
    after idle_ttl (finished_ttl once over); an active match's result field is empty and a log entry of a
    move nobody played for a late seat has no ``auto``. A match from before the hash chain gets none.
    Against the head not returned, TTLs mixed up or not refreshed on the archive, and fields written empty
    as "null" or "XXXX"."""
    store.compact_every, store.keep_recent = 2, 1
    store.finished_ttl, store.idle_ttl = 500, 5000
    match_id, tokens = await played(store, 2)  # archived through 1
    before = await store.redis.hget(store.key(match_id), "state_hash")
    await store.redis.expire(store.archive_key(match_id), 50)
    m = await store.get(match_id)
    accepted = await store.submit(match_id, tokens[m.acting[0]], 2, GAME.legal_actions(m.state, m.acting[0])[0])
    stored = await store.redis.hget(store.key(match_id), "state_hash")
    assert accepted.match.state_hash == stored != before and len(stored) == 64
    assert 500 < await store.redis.ttl(store.key(match_id)) <= 5000
    assert 500 < await store.redis.ttl(store.archive_key(match_id)) <= 5000
    assert await store.redis.hget(store.key(match_id), "result") == ""
    [(_, fields)] = await store.log_entries(match_id, after=2)
    assert "auto" not in fields
    for _ in range(3):
        m = await store.get(match_id)
        await store.submit(match_id, tokens[m.acting[0]], m.version, GAME.legal_actions(m.state, m.acting[0])[0])
    assert (await store.get(match_id)).status == "finished"
    assert 0 < await store.redis.ttl(store.key(match_id)) <= 500

    legacy = await store.create("high-card", seed=4)
    _, _, a = await store.join(legacy.id, "Ann")
    await store.join(legacy.id, "Bob")
    await store.redis.hdel(store.key(legacy.id), "state_hash")  # a match from before the chain
    m = await store.get(legacy.id)
    accepted = await store.submit(legacy.id, a, 0, GAME.legal_actions(m.state, 0)[0])
    assert accepted.match.state_hash is None
    assert await store.redis.hget(store.key(legacy.id), "state_hash") is None


async def test_a_finished_match_compacted_in_the_background_archives_all_but_the_newest(store):
    """The background compaction of the last action is told the match finished (due whatever the version).
    Against the status not passed to it."""
    store.compact_in_background, store.compact_every, store.keep_recent = True, 4, 1
    match_id, _ = await played(store, 6)
    await store.settle()
    assert archive.decode(await archive.read_raw(store, match_id))[0] == 5


async def test_a_repeat_racing_its_first_waits_for_the_replicas_too(store):
    """With replica acks on, a repeat that finds its first outcome in the commit script (the first landed
    between the repeat's read and its commit) is answered only once the replicas have it: with none here,
    ReplicaAckTimeout. Against the repeat's replica wait made without the idempotency record's key."""
    from service.store.connect import ReplicaAckTimeout

    match_id, tokens = await played(store, 0)
    store.replica_acks, store.replica_wait_ms = 1, 10
    m = await store.get(match_id)
    action = GAME.legal_actions(m.state, 0)[0]

    async def first(match):
        with pytest.raises(ReplicaAckTimeout):  # applied; no replica confirmed it
            await store.submit(match_id, tokens[0], 0, action, "k")

    store.guards.append(RaceOnce(first))
    with pytest.raises(ReplicaAckTimeout) as timeout:
        await store.submit(match_id, tokens[0], 0, action, "k")
    assert (timeout.value.wanted, timeout.value.got) == (1, 0)
    assert (await store.get(match_id)).version == 1


class BotGuard:
    """A guard (MatchStore.guards) that records what check_bots is shown and lets everything through."""

    def __init__(self):
        self.shown, self.created = [], []

    def check_create(self, game, options, rated):
        self.created.append((game.id, options, rated))

    def check_bots(self, game, options):
        self.shown.append((game.id, options))

    async def check_join(self, match_id, player, bot):
        pass

    async def check_action(self, match, seat, action):
        pass


async def test_guards_see_a_bots_match_in_full_before_it_is_created_and_it_is_no_hot_seat_match(redis_url,
                                                                                                 key_prefix):
    """create_match shows the guards (owned collections refuse bots) the match's options in full, its
    variant's and its own, and makes no hot-seat match unless asked; create() shows them the game, the
    options in full and whether it is rated. Against the options, the variant or the caller's options not
    passed on, and hot_seat on by default."""
    from service.engine.game import Variant

    class TwoVariants(HighCard):
        id = "two-variants"
        variants = (Variant("standard", "Standard", "Three rounds."), Variant("quick", "Quick", "Fewer."))

    game = TwoVariants()
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        store = MatchStore(client, {game.id: game}, prefix=f"{key_prefix}:bot-guard")
        guard = BotGuard()
        store.guards.append(guard)
        match = await create_match(store, game.id, variant="quick", options={"rounds": 2.0},
                                   bots=[{"seat": 1, "level": "random"}])
        assert guard.shown == [(game.id, game.check_options("quick", {"rounds": 2}, 2))]
        assert guard.created == [(game.id, game.check_options("quick", {"rounds": 2}, 2), False)]
        await store.create(game.id, rated=True)
        assert guard.created[-1] == (game.id, game.check_options(None, None, 2), True)
        assert guard.shown[0][1]["variant"] == "quick" and guard.shown[0][1]["rounds"] == 2
        stored = await store.get(match.id)
        assert stored.hot_seat is False and stored.variant == "quick"
        await store.join(match.id, "Ann", 0, player="p-ann")
        assert (await store.get(match.id)).status == "active"
    finally:
        await client.aclose()


async def test_the_last_seat_taken_takes_the_match_off_the_lobby_index_at_once(store):
    """Against the full match removed from another game's lobby key (the lobby's next read would drop it
    anyway, so the index is looked at right away)."""
    match = await store.create("high-card")
    await store.join(match.id, "Ann")
    assert await store.redis.zscore(store.lobby_key("high-card"), match.id) is not None
    await store.join(match.id, "Bob")
    assert await store.redis.zscore(store.lobby_key("high-card"), match.id) is None


async def test_a_failing_listener_is_logged_and_the_join_still_answers(store, caplog):
    """A listener (the bot and timer dispatcher) that raises is logged as an ERROR with its traceback on
    grimoire.store, naming the match; the operation succeeds and the other listeners still hear of it.
    Against the log record's logger, message or match id lost."""
    import logging

    heard = []

    async def broken(match):
        raise RuntimeError("listener bug")

    async def listening(match):
        heard.append(match.id)

    store.listeners.extend([broken, listening])
    match = await store.create("high-card")
    with caplog.at_level(logging.ERROR, logger="grimoire.store"):
        _, seat, _ = await store.join(match.id, "Ann")
    assert seat == 0 and heard == [match.id]
    [record] = [r for r in caplog.records if r.name == "grimoire.store"]
    assert (record.levelname, record.getMessage()) == ("ERROR", f"match listener failed for {match.id}")
    assert record.exc_info[1].args == ("listener bug",)


async def test_a_refusal_never_overwrites_the_outcome_another_request_recorded_under_its_key(redis_url, key_prefix):
    """Two requests with one idempotency key: the first to be recorded wins. Here another process's request
    is accepted and committed while this one is being checked by the rules (the game's apply runs it, in a
    thread with a store of its own), and this one is refused: its refusal is not recorded over the accepted
    outcome, which confirm() and a repeat still answer. Against the refusal's record written without NX."""
    import threading

    from service.engine import RuleError

    class RacyCard(HighCard):
        id = "racy-card"
        race = None

        def apply(self, state, seat, action):
            race, self.race = self.race, None
            if race is not None:
                race()
            return super().apply(state, seat, action)

    game = RacyCard()
    prefix = f"{key_prefix}:racy"
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        store = MatchStore(client, {game.id: game}, prefix=prefix)
        match = await store.create(game.id, seed=5)
        _, _, t0 = await store.join(match.id, "Ann")
        await store.join(match.id, "Bob")
        legal = game.legal_actions((await store.get(match.id)).state, 0)[0]

        async def other_process():
            other_client = aioredis.Redis.from_url(redis_url, decode_responses=True)
            try:
                await MatchStore(other_client, {game.id: game}, prefix=prefix).submit(match.id, t0, 0, legal, "k")
            finally:
                await other_client.aclose()

        def race():
            thread = threading.Thread(target=lambda: asyncio.run(other_process()))
            thread.start()
            thread.join(30)

        game.race = race
        with pytest.raises(RuleError):
            await store.submit(match.id, t0, 0, {"type": "play", "card": 99}, "k")
        assert json.loads(await client.get(store.idempotency_key(match.id, 0, "k")))["version"] == 1
        assert await store.confirm(match.id, 0, "k") is True
        assert (await store.submit(match.id, t0, 0, legal, "k")).duplicate
    finally:
        await client.aclose()


async def test_a_repeat_of_a_match_that_expired_meanwhile_says_the_match_is_gone(store):
    """A repeat finding its first outcome in the commit script while the match itself expired in between
    (its record outlives it: idempotency_ttl) is answered MatchNotFound, its log being gone too. Against
    the log's first entry read when there is none."""
    from service.store import MatchNotFound

    match_id, tokens = await played(store, 0)
    m = await store.get(match_id)
    action = GAME.legal_actions(m.state, 0)[0]

    async def first_then_expired(match):
        await store.submit(match_id, tokens[0], 0, action, "k")
        await store.redis.delete(store.key(match_id), store.log_key(match_id), store.archive_key(match_id))

    store.guards.append(RaceOnce(first_then_expired))
    with pytest.raises(MatchNotFound) as missing:
        await store.submit(match_id, tokens[0], 0, action, "k")
    assert missing.value.message == f"There is no match {match_id!r} (it may have expired)."


class JoinGuard(BotGuard):
    """A guard that records what check_join is shown."""

    def __init__(self):
        super().__init__()
        self.joins = []

    async def check_join(self, match_id, player, bot):
        self.joins.append((match_id, player, bot))


async def test_a_join_shows_the_guards_who_joins_and_records_when(store):
    """The guards are shown the match, the player and the bot of a join; the seat's record keeps when it was
    taken; a negative seat is refused saying so; a match of rules this process lacks is refused before any
    seat is written. Against the guard's arguments lost, the record's field renamed, the messages lost and
    the rules version not checked."""
    from service.store import NoSuchSeat
    from service.store.errors import RulesVersionUnavailable

    guard = JoinGuard()
    store.guards.append(guard)
    match = await store.create("three-card", seats=3)
    before = lobby._now_ms()
    await store.join(match.id, "Ann", 0, player="p-ann")
    await add_bot(store, match.id, 1, "greedy")
    assert guard.joins == [(match.id, "p-ann", None), (match.id, None, {"level": "greedy"})]
    record = json.loads(await store.redis.hget(store.key(match.id), "seat:0"))
    assert before <= record["joined"] <= lobby._now_ms()
    with pytest.raises(NoSuchSeat) as negative:
        await store.join(match.id, "Eve", -1)
    assert negative.value.message == "This match has no seat -1."
    await store.redis.hset(store.key(match.id), "rules_version", "2")
    with pytest.raises(RulesVersionUnavailable):
        await store.join(match.id, "Cid", 2)
    assert await store.redis.hget(store.key(match.id), "seat:2") is None


async def test_each_refused_join_says_why(store):
    """The messages of a join refused by the join script: a seat taken, a match full, a seat out of range,
    a player already seated, a match gone. Against each lost or changed."""
    from service.store import MatchFull, MatchNotFound, NoSuchSeat, SeatTaken
    from service.store.errors import AlreadySeated

    match = await store.create("high-card")
    await store.join(match.id, "Ann", 0, player="p-ann")
    with pytest.raises(SeatTaken) as taken:
        await store.join(match.id, "Bob", 0)
    assert taken.value.message == "Seat 0 is already taken."
    with pytest.raises(NoSuchSeat) as no_seat:
        await store.join(match.id, "Bob", 2)
    assert no_seat.value.message == "This match has no seat 2."
    with pytest.raises(AlreadySeated) as seated:
        await store.join(match.id, "Ann again", 1, player="p-ann")
    assert seated.value.message == ("You already hold seat 0 of this match; a player holds one seat of a match "
                                    "(unless it is a hot-seat match).")
    await store.join(match.id, "Bob", 1)
    with pytest.raises(MatchFull) as full:
        await store.join(match.id, "Cid")
    assert full.value.message == "Every seat of this match is taken."
    with pytest.raises(MatchNotFound) as missing:
        await store.join("no-such-match", "Cid")
    assert missing.value.message == "There is no match 'no-such-match' (it may have expired)."


async def test_an_unacceptable_entropy_is_refused_with_the_reason_and_takes_no_seat(store):
    """Against the entropy check's reason lost on the way to the caller."""
    from service.engine.seeds import ENTROPY_MAX_LENGTH
    from service.store.errors import InvalidEntropy

    match = await store.create("high-card")
    with pytest.raises(InvalidEntropy) as refused:
        await store.join(match.id, "Ann", entropy="")
    assert refused.value.message == f"entropy must be 1 to {ENTROPY_MAX_LENGTH} characters."
    assert (await store.get(match.id)).seats[0].joined is False


async def test_create_stores_the_match_as_documented(store, monkeypatch):
    """What create() writes: the match hash's fields (the creator's or the server's seed, a pending deal,
    the turn timer, rated / hot-seat / unlisted flags, an empty result), its idle TTL and its listing; and
    a creator's seed is never rated. Against any field, flag or TTL dropped or changed, and the listing made
    as of another time than the creation's."""
    from service.engine import InvalidOptions

    store.idle_ttl = 4000
    monkeypatch.setattr(lobby, "_now_ms", lambda: 1)  # the lobby's own clock: create() lists as of its own time
    plain = await store.create("high-card", seed=9, turn_seconds=30)
    monkeypatch.undo()
    assert len(plain.id) == 12  # secrets.token_urlsafe(9)
    raw = await store.redis.hgetall(store.key(plain.id))
    assert (raw["game"], raw["variant"], raw["seats"], raw["version"], raw["status"], raw["result"], raw["seed"],
            raw["seed_source"], raw["turn_seconds"], raw["created"], raw["created"] == raw["updated"]) == \
        ("high-card", "standard", "2", "0", "waiting", "", "9", "creator", "30", str(plain.created), True)
    assert not {"deal", "rated", "hot_seat", "unlisted"} & set(raw) and len(raw["state_hash"]) == 64
    assert json.loads(raw["options"]) == {"rounds": 3, "variant": "standard"}
    assert 3900 < await store.redis.ttl(store.key(plain.id)) <= 4000
    assert await store.redis.zscore(store.lobby_key("high-card"), plain.id) == plain.created
    committed = await store.create("high-card", rated=True, hot_seat=True, listed=False)
    raw = await store.redis.hgetall(store.key(committed.id))
    assert (raw["seed_source"], raw["deal"], raw["rated"], raw["hot_seat"], raw["unlisted"]) == \
        ("commitment", "pending", "1", "1", "1")
    assert "state_hash" not in raw and "turn_seconds" not in raw and len(raw["secret_seed"]) > 0
    assert (committed.rated, committed.hot_seat, committed.listed, committed.dealt) == (True, True, False, False)
    assert await store.redis.zscore(store.lobby_key("high-card"), committed.id) is None
    with pytest.raises(InvalidOptions) as fixed:
        await store.create("high-card", seed=1, rated=True)
    assert fixed.value.message == "A match whose seed its creator fixed is never rated (docs/fairness.md)."


async def test_a_join_is_announced_on_the_matchs_channel(store):
    """Followers re-read the match when a seat is taken: join.lua publishes ``seat:<n>`` on the match's
    channel. Against the channel name lost."""
    match = await store.create("high-card")
    pubsub = store.redis.pubsub()
    await pubsub.subscribe(store.channel(match.id))
    try:
        await pubsub.get_message(timeout=5)
        await store.join(match.id, "Ann", 1)
        message = None
        for _ in range(50):
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.1)
            if message is not None:
                break
    finally:
        await pubsub.aclose()
    assert message is not None and message["data"] == "seat:1"


async def test_a_match_stored_before_versions_and_seed_sources_reads_with_their_defaults(store):
    """A match hash from before rules versions, seed sources and turn timers were recorded reads as rules
    version "1" (LEGACY_RULES_VERSION), a server seed, no timer; a game not hosted, or a match of one, is
    UnknownGame saying so. Against the defaults and the messages changed."""
    from service.store import UnknownGame

    match = await store.create("high-card", seed=3)
    await store.redis.hdel(store.key(match.id), "rules_version", "seed_source")
    old = await store.get(match.id)
    assert (old.rules_version, old.seed_source, old.turn_seconds, old.game is GAME) == ("1", "server", None, True)
    assert (old.rated, old.hot_seat, old.listed, old.dealt, old.abandoned, old.result) == \
        (False, False, True, True, {}, None)
    with pytest.raises(UnknownGame) as unknown:
        await store.create("chess-boxing")
    assert unknown.value.message == "There is no game 'chess-boxing'; see the list of games."
    await store.redis.hset(store.key(match.id), "game", "chess-boxing")
    with pytest.raises(UnknownGame) as not_hosted:
        await store.get(match.id)
    assert not_hosted.value.message == "There is no game 'chess-boxing'; see the list of games."


async def test_a_full_match_left_undealt_is_dealt_by_the_next_read_which_tells_the_listeners(store):
    """The last joiner's process may stop between its seat and the deal: the next get() deals the match and
    tells the listeners once (a get() with notify_deal=False does not). Against the deal's re-read or its
    notification lost."""
    heard = []

    async def listener(match):
        heard.append((match.id, match.status))

    match = await store.create("high-card")
    await store.join(match.id, "Ann", 0)
    record = json.dumps({"name": "Bob", "token": "0" * 64, "joined": lobby._now_ms(), "entropy": "bob"})
    reply = await store._join(keys=[store.key(match.id)], args=[1, record, lobby._now_ms(),
                                                                store.channel(match.id), ""])
    assert reply[0] == "ok"  # the seat is taken, the deal not made: the process stopped here
    store.listeners.append(listener)
    quiet = await store.get(match.id, notify_deal=False)
    assert quiet.status == "active" and quiet.dealt and heard == []
    assert (await store.redis.hget(store.key(match.id), "deal")) is None
    match2 = await store.create("high-card")
    await store.join(match2.id, "Ann", 0)
    await store._join(keys=[store.key(match2.id)], args=[1, record, lobby._now_ms(), store.channel(match2.id), ""])
    heard.clear()  # Ann's join was heard
    dealt = await store.get(match2.id)
    assert dealt.status == "active" and dealt.dealt and heard == [(match2.id, "active")]
    assert json.loads((await store.redis.hgetall(store.key(match2.id)))["entropies"])[1]["entropy"] == "bob"


async def test_a_join_that_leaves_seats_free_renews_the_listing(store):
    """A join re-scores the match in its game's lobby index (its entry's age, which the lobby's TTL cutoff
    reads, starts again). Against the listing renewed under another game's key."""
    match = await store.create("three-card", seats=3)
    key = store.lobby_key("three-card")
    await store.redis.zadd(key, {match.id: match.created - 600_000})  # listed ten minutes ago
    await store.join(match.id, "Ann")
    assert await store.redis.zscore(key, match.id) >= match.created


async def test_a_listing_is_scored_at_the_time_it_is_given(store):
    """lobby.listed scores the entry at ``at_ms`` when given (a creation lists the match as of its creation
    time), else now. Against the time given being ignored."""
    match = await store.create("high-card")
    await lobby.listed(store, "high-card", match.id, 12345)
    assert await store.redis.zscore(store.lobby_key("high-card"), match.id) == 12345
    before = lobby._now_ms()
    await lobby.listed(store, "high-card", match.id)
    assert before <= await store.redis.zscore(store.lobby_key("high-card"), match.id) <= lobby._now_ms()


def test_a_seat_token_carries_a_256_bit_secret():
    """Against a secret of another size (32 random bytes: 43 URL-safe base64 characters)."""
    import base64

    from service.store.tokens import new_token

    secret = new_token("M1").split(".")[2]
    assert len(secret) == 43 and len(base64.urlsafe_b64decode(secret + "=")) == 32
