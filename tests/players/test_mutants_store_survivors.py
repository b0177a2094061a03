"""The players', ratings', collections', trades' and rematches' stores held to what they promise, written against the
survivors of the mutation run's ``players`` module (tests/mutation/run.py) in service/store/players.py, ratings.py,
collections.py, trades.py and rematch.py: cursors (URL-safe, refused in one sentence), "my matches" and the turn
stream's seats (expired and finished matches, seats other than the first, the limit), a JWT player's name when every
name is taken or two first requests race, ratings (a second match planned from the first's ratings, the plan's
expiry, the leaderboard's score, who is rateable, a player alone), a rating as the APIs show it, the UTC day of the
daily allowance whatever the process's time zone, opening sets (a given seed, one player's idempotency key never
another's, the refusals' words), grants, the quick match's saved hands, an offer and the sweep at their exact
milliseconds, a rematch maker's grace, and the reads that span several shards of a Redis Cluster.

Real Redis throughout: the REST API where a whole flow is needed (rated matches, the worker's job, rematches), else
the stores on the test run's keyspace (``stores``) or, for the sweep, a keyspace of the test's own with the trades'
clock held still (``isolated``, ``clock``). Where a state cannot be reached on purpose (a match whose record expired,
an accept whose ``entered`` never landed, a rematch maker that started at a given millisecond), the test writes it
in the keys' documented layout."""

from __future__ import annotations

import asyncio
import base64
import datetime
import json
import logging
import time
import uuid

import pytest
import redis.asyncio as aioredis
from cryptography.hazmat.primitives import serialization

from service.players.names import name_key
from service.players.ratings import PROVISIONAL_GAMES, Rating, Standing, rate
from service.store import MatchStore
from service.store import rematch as rematch_module
from service.store.collections import (
    CollectionGuard,
    attach,
    flat,
    next_day_ms,
    totals,
    utc_day,
)
from service.store.errors import NoSetLeft, UnknownSetKind
from service.store.idp import JwtSettings, JwtVerifier
from service.store.players import (
    PlayerStore,
    decode_cursor,
    encode_cursor,
    idp_player_id,
    rating_json,
)
from service.store.ratings import _plan, leaderboard, plan_key, rate_match, rateable
from tests.collections import conftest as collection_helpers
from tests.collections import test_mutants_store_collections as collection_tests
from tests.collections.conftest import give, new_store_player
from tests.collections.test_mutants_store_collections import (
    NOTHING,
    accept_stopped_before_its_cas,
    advanced_match,
    status_of,
)
from tests.collections.test_trades import A_GIVES, B_GIVES, pair

from . import test_mutants_idp as idp_tests
from .conftest import bearer, play_out, unique_name
from .test_mutants_idp import AUDIENCE, ISSUER, token
from .test_mutants_store_players import _match_key, _player_key, _seated
from .test_ratings import _job, _play_out, _rated_match

# the neighbouring tests' fixtures, used as they are: the stores on the run's keyspace, a JWT app and its keys,
# the trades in a keyspace of the test's own and the trades module's clock held still
anyio_backend, stores = collection_helpers.anyio_backend, collection_helpers.stores
idp_app, keys = idp_tests.idp_app, idp_tests.keys
isolated, clock = collection_tests.isolated, collection_tests.clock


# -- cursors -------------------------------------------------------------------------------------------------------


def test_a_cursor_has_no_padding_and_reads_back_as_the_score_and_member_it_was_made_from():
    """A cursor travels in a query string: URL-safe base64 without its ``=`` padding, whatever its length."""
    for n in range(60):
        member = f"m{'x' * n}"
        cursor = encode_cursor(1_700_000_000_000 + n, member)
        assert "=" not in cursor and set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                        "0123456789-_")
        assert decode_cursor(cursor) == (1_700_000_000_000 + n, member)


def test_a_cursor_this_service_did_not_make_is_refused_in_one_sentence():
    """Not base64 JSON, or JSON that is not [number, string]: ValueError, "cursor is not one this service gave"
    (what the REST API and GraphQL answer)."""
    def b64(data) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    for cursor in ("%%%not-base64", b64({"a": 1}), b64(["late", "m1"]), b64([5, 7]), b64(["late", 7])):
        with pytest.raises(ValueError) as refused:
            decode_cursor(cursor)
        assert str(refused.value) == "cursor is not one this service gave", cursor


# -- a rating as the APIs show it ------------------------------------------------------------------------------------


def test_a_rating_is_shown_to_three_decimals_with_its_counts_and_provisional_below_the_threshold():
    shown = rating_json({"mu": 25.12345678, "sigma": 1.23456789})
    assert shown == {"rating": 21.42, "mu": 25.123, "sigma": 1.235, "games": 0, "wins": 0, "losses": 0, "draws": 0,
                     "provisional": True}
    counted = rating_json({"mu": 30, "sigma": 2, "games": PROVISIONAL_GAMES, "wins": 3, "losses": 2, "draws": 1})
    assert (counted["games"], counted["wins"], counted["losses"], counted["draws"]) == (PROVISIONAL_GAMES, 3, 2, 1)
    assert counted["provisional"] is False
    assert rating_json({"mu": 30, "sigma": 2, "games": PROVISIONAL_GAMES - 1})["provisional"] is True


# -- the daily allowance's day ---------------------------------------------------------------------------------------


@pytest.fixture
def local_time_five_hours_behind_utc(monkeypatch):
    """The process's local time zone set to UTC-5 (a POSIX TZ: no zone database needed), then put back."""
    monkeypatch.setenv("TZ", "XYZ+05")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_the_allowances_day_and_its_next_midnight_are_utcs_whatever_the_local_time_zone(
        local_time_five_hours_behind_utc):
    at = int(datetime.datetime(2024, 3, 1, 2, 30, tzinfo=datetime.UTC).timestamp() * 1000)
    assert utc_day(at) == "2024-03-01"  # 21:30 on 29 February, local time
    midnight = int(datetime.datetime(2024, 3, 2, tzinfo=datetime.UTC).timestamp() * 1000)
    assert next_day_ms(at) == midnight
    assert utc_day(int(datetime.datetime(1999, 12, 31, 23, 59, tzinfo=datetime.UTC).timestamp() * 1000)) \
        == "1999-12-31"


def test_flat_and_totals_count_only_positive_counts():
    items = {"stones": {"holly": 0, "fluffy": 2}, "cards": {"charms": 1}}
    assert flat(items) == ["cards:charms", 1, "stones:fluffy", 2]
    assert totals(items) == {"stones": 2, "distinct_stones": 1, "cards": 1, "distinct_cards": 1}


# -- my matches and the turn stream's seats --------------------------------------------------------------------------


async def _joined(store, players, player_id: str, at: int, seat: int = 0) -> str:
    """A high-card match with the player at ``seat``, indexed as joined at ``at`` (ms: the order is the test's)."""
    match = await store.create("high-card")
    await store.join(match.id, "P", seat, player=player_id)
    await players.redis.zadd(players.matches_key(player_id, "active"), {match.id: at})  # as PlayerStore.join does
    return match.id


@pytest.mark.anyio
async def test_a_listing_forgets_an_expired_match_and_the_turn_stream_skips_it(stores, settings):
    store, collections, _trades = stores
    players = collections.players
    player = await new_store_player(collections)
    older = await _joined(store, players, player, 1_000)
    newer = await _joined(store, players, player, 2_000)
    await store.redis.delete(store.key(newer))  # its record expired
    assert await players.active_seats(player) == [(older, 0)]  # the expired one, newer, does not end the list
    entries, cursor = await players.matches(player, "active", None, 20)
    assert [e["match_id"] for e in entries] == [older] and cursor is None
    active = players.matches_key(player, "active")
    assert await store.redis.zrange(active, 0, -1) == [older]  # dropped from the index, not only from the page


@pytest.mark.anyio
async def test_the_turn_stream_follows_any_seat_the_player_holds_newest_first_up_to_the_limit(stores):
    store, collections, _trades = stores
    players = collections.players
    player = await new_store_player(collections)
    first = await _joined(store, players, player, 1_000, seat=1)  # seat 0 left empty
    second = await _joined(store, players, player, 2_000, seat=1)
    assert await players.active_seats(player) == [(second, 1), (first, 1)]
    assert await players.active_seats(player, limit=1) == [(second, 1)]
    assert await players.active_seats(player, limit=2) == [(second, 1), (first, 1)]


@pytest.mark.anyio
async def test_the_turn_stream_follows_a_players_100_newest_matches(stores):
    store, collections, _trades = stores
    players = collections.players
    player = await new_store_player(collections)
    ids = []
    for n in range(101):
        ids.append(await _joined(store, players, player, 1_000 + n))
    seats = await players.active_seats(player)
    assert len(seats) == 100 and seats[0] == (ids[-1], 0) and (ids[0], 0) not in seats


def test_a_finished_match_its_job_has_not_moved_yet_is_listed_as_finished(client, new_player):
    """The match ends; the worker's job that moves it has not run: "my matches" shows it under finished, not
    active, and from then on the index holds it there."""
    (_a_id, a), (_b_id, b) = new_player(), new_player()
    match_id = _rated_match(client, a, b)
    _play_out(client, match_id, [a, b])
    active = client.get("/v1/me/matches", params={"status": "active"}, headers=bearer(a)).json()
    assert match_id not in [m["match_id"] for m in active["matches"]]
    finished = client.get("/v1/me/matches", params={"status": "finished"}, headers=bearer(a)).json()
    assert [m["match_id"] for m in finished["matches"]][:1] == [match_id]
    assert finished["matches"][0]["status"] == "finished"


# -- a JWT player's first use ----------------------------------------------------------------------------------------


def test_a_jwt_player_whose_every_name_is_taken_is_shown_the_long_id_name_without_claiming_it(idp_app, keys, raw,
                                                                                              settings):
    names = f"{settings.key_prefix}:names"
    subject = f"user-{uuid.uuid4().hex}"
    player_id = idp_player_id(ISSUER, subject)
    taken = unique_name("Taken")
    for name in (taken, f"Player {player_id[1:9]}", f"Player {player_id[1:17]}"):
        raw.hset(names, name_key(name), "someone-else")
    me = idp_app.get("/v1/players/me", headers=bearer(token(keys["one"], sub=subject, nickname=taken)))
    assert me.status_code == 200, me.text
    assert me.json()["name"] == f"Player {player_id[1:17]}"
    assert raw.hget(names, name_key(f"Player {player_id[1:17]}")) == "someone-else"


@pytest.mark.anyio
async def test_two_first_requests_of_one_jwt_player_at_once_keep_one_name_and_free_the_other(keys, stores, raw,
                                                                                            settings):
    """Both requests find no record and each claims the name its token asks for; the record is written once, and
    the request that lost gives its name back (free for anyone), while the kept one stays the player's."""
    store, _collections, _trades = stores
    pem = keys["one"].public_key().public_bytes(serialization.Encoding.PEM,
                                                serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    names = f"{settings.key_prefix}:names"
    for _ in range(3):
        players = PlayerStore(store, JwtVerifier(JwtSettings(ISSUER, AUDIENCE, public_key=pem)))
        subject = f"user-{uuid.uuid4().hex}"
        wanted = [unique_name("Race"), unique_name("Race")]
        ids = await asyncio.gather(*(players.identify(token(keys["one"], sub=subject, preferred_username=name))
                                     for name in wanted))
        kept = (await players.get(ids[0])).name
        assert ids[0] == ids[1] and kept in wanted
        lost = next(name for name in wanted if name != kept)
        assert raw.hget(names, name_key(kept)) == ids[0]
        assert raw.hget(names, name_key(lost)) is None


# -- ratings -------------------------------------------------------------------------------------------------------


def test_a_second_rated_match_is_planned_from_the_ratings_the_first_left(client, new_player, worker_runtime, raw,
                                                                         settings):
    """The plan records each player's stored rating as its ``before`` ("" for none yet) and rates from it (not from
    the default); the plan expires; the leaderboard scores each player's conservative rating."""
    (a_id, a), (_b_id, b), (c_id, c) = new_player(), new_player(), new_player()
    where = "high-card/standard"
    first = _rated_match(client, a, b)
    _play_out(client, first, [a, b], lowest_first=b)
    assert _job(first)["outcome"] == "rated"
    stored = {a_id: raw.hget(f"{_player_key(settings, a_id)}:ratings", where), c_id: ""}
    second = _rated_match(client, a, c)
    _play_out(client, second, [a, c], lowest_first=a)
    assert _job(second)["outcome"] == "rated"
    plan_key = f"{_match_key(settings, second)}:rating"
    plan = json.loads(raw.get(plan_key))
    assert 0 < raw.ttl(plan_key) <= raw.ttl(_match_key(settings, second)) + 5
    assert {p: change["before"] for p, change in plan["players"].items()} == stored
    before = {a_id: Rating(**{k: json.loads(stored[a_id])[k] for k in ("mu", "sigma")}), c_id: Rating()}
    places = [Standing(p, 2 if change["outcome"] == "loss" else 1, change["outcome"])
              for p, change in plan["players"].items()]
    expected = rate(before, places)
    board = f"{settings.key_prefix}:lb:{{{where}}}"
    for p, games in ((a_id, 2), (c_id, 1)):
        now = json.loads(raw.hget(f"{_player_key(settings, p)}:ratings", where))
        assert now["games"] == games
        assert (now["mu"], now["sigma"]) == (pytest.approx(expected[p].mu), pytest.approx(expected[p].sigma))
        assert raw.zscore(board, p) == pytest.approx(Rating(now["mu"], now["sigma"]).ordinal)


@pytest.mark.anyio
async def test_who_is_rateable_an_unrated_match_never_a_rated_one_once_over_or_left_to_one_player(stores):
    store, collections, _trades = stores
    unrated = await store.create("high-card")
    assert not rateable(unrated)
    players = [await new_store_player(collections) for _ in range(3)]
    waiting = await store.create("high-card", rated=True)
    await store.join(waiting.id, "A", 0, player=players[0])
    assert not rateable(await store.get(waiting.id))  # one player seated, nobody left: not over
    three = await store.create("sorcerers-stone", seats=3, rated=True)
    tokens = [(await store.join(three.id, f"P{i}", i, player=p))[2] for i, p in enumerate(players)]
    await store.leave(three.id, tokens[0])
    assert not rateable(await store.get(three.id))  # two still play
    await store.leave(three.id, tokens[1])
    assert rateable(await store.get(three.id))


async def one_rated_player(stores) -> tuple:
    """A rated match with one player seated: (its store, the players' store, the player, the match)."""
    store, collections, _trades = stores
    alone = await new_store_player(collections)
    match = await store.create("high-card", rated=True)
    await store.join(match.id, "A", 0, player=alone)
    return store, collections.players, alone, match


@pytest.mark.anyio
async def test_a_rated_match_with_one_rated_player_rates_nobody(stores):
    store, players, alone, match = await one_rated_player(stores)
    plan = await rate_match(players, await store.get(match.id))
    assert plan["players"] == {}
    assert (await players.profile(alone))["ratings"] == []


@pytest.mark.anyio
async def test_a_plan_a_concurrent_job_wrote_first_is_the_one_applied(stores):
    """Against the plan written without `nx`: two jobs rating one match at once would each apply their own."""
    store, players, _alone, match = await one_rated_player(stores)
    theirs = json.dumps({"where": "theirs", "at": 1, "players": {}}, sort_keys=True)
    await players.redis.set(plan_key(players, match.id), theirs)
    assert json.loads(await _plan(players, await store.get(match.id))) == json.loads(theirs)
    assert json.loads(await players.redis.get(plan_key(players, match.id))) == json.loads(theirs)


# -- sets, grants, what a player lacks -------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_set_opened_with_a_given_seed_holds_that_seeds_contents_and_they_are_counted_in(stores):
    _store, collections, _trades = stores
    rules = collections.rules
    seed = 4_242_424_242
    player = await new_store_player(collections)
    opening, repeated = await collections.open_set(player, "starter", seed=seed)
    assert not repeated and opening["seed"] == str(seed)
    contents = rules.open_set(seed, "starter")
    assert {k: opening[k] for k in contents} == contents
    owned = await collections.items(player)
    for kind, items in contents.items():
        assert owned[kind] == {item: items.count(item) for item in items}


@pytest.mark.anyio
async def test_one_idempotency_key_used_by_two_players_opens_a_set_for_each(stores):
    _store, collections, _trades = stores
    key = f"same-key-{uuid.uuid4().hex}"
    first, second = await new_store_player(collections), await new_store_player(collections)
    mine, mine_repeated = await collections.open_set(first, "starter", key)
    theirs, theirs_repeated = await collections.open_set(second, "starter", key)
    assert not mine_repeated and not theirs_repeated and mine["id"] != theirs["id"]
    again, repeated = await collections.open_set(second, "starter", key)
    assert repeated and again["id"] == theirs["id"]
    held = (await collections.collection(second))["totals"]
    assert held["stones"] == len(theirs["stones"]) and held["cards"] == len(theirs["cards"])


@pytest.mark.anyio
async def test_sets_refused_in_so_many_words_and_a_grant_is_available_at_once(stores):
    _store, collections, _trades = stores
    player = await new_store_player(collections)
    with pytest.raises(UnknownSetKind) as unknown:
        await collections.open_set(player, "booster")
    assert unknown.value.message == "There is no set 'booster'; sets: starter, refill."
    await collections.open_set(player, "refill")
    with pytest.raises(NoSetLeft) as none_left:
        await collections.open_set(player, "refill")
    assert none_left.value.message == ("You have opened the 1 refill set(s) a day allows, and have no granted one; "
                                       "the allowance comes back at midnight UTC.")
    for kind in ("starter", "booster"):
        with pytest.raises(UnknownSetKind) as refused:
            await collections.grant(player, kind)
        assert refused.value.message == f"Only refill sets can be granted, not {kind!r}."
    assert await collections.grant(player, "refill") == 1  # one, unless told how many
    refill = next(s for s in (await collections.collection(player))["sets"] if s["kind"] == "refill")
    assert (refill["available"], refill["opened_today"], refill["granted"], refill["next_at"]) == (1, 1, 1, None)
    fresh = await new_store_player(collections)
    await collections.grant(fresh, "refill")
    refill = next(s for s in (await collections.collection(fresh))["sets"] if s["kind"] == "refill")
    assert (refill["available"], refill["opened_today"], refill["granted"], refill["next_at"]) == (2, 0, 1, None)


@pytest.mark.anyio
async def test_what_a_player_lacks_keeps_a_kind_the_game_does_not_list(stores):
    _store, collections, _trades = stores
    player = await new_store_player(collections)
    await give(collections, player, {"holly": 1})
    short = await collections.missing(player, {"stones": {"holly": 3}, "badges": {"gold": 1}})
    assert short == {"stones": {"holly": 2}, "cards": {}, "badges": {"gold": 1}}


# -- the quick match's saved hands -----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_made_match_brings_the_saved_hand_of_each_seat_that_has_not_brought_yet(stores, caplog):
    """Ann brought her hand herself before the guard ran: Bob's saved hand is still brought, and nothing is logged
    as not brought (Ann's seat had nothing left to bring)."""
    store, collections, _trades = stores
    guard = next(g for g in store.guards if isinstance(g, CollectionGuard))
    match_id, (_ann, ann_token), _bob = await advanced_match(store, collections)
    version = (await store.get(match_id)).version
    await collections.bring_hand(match_id, ann_token, version, "Ann")
    with caplog.at_level(logging.INFO, logger="grimoire.collections"):
        await guard.match_made(match_id)
    match = await store.get(match_id)
    assert match.version == version + 2  # Ann's bring, then Bob's
    assert "was not brought" not in caplog.text


@pytest.mark.anyio
async def test_an_open_collection_match_made_brings_no_saved_hand(stores, caplog):
    store, collections, _trades = stores
    guard = next(g for g in store.guards if isinstance(g, CollectionGuard))
    _owned, (ann, _), (bob, _) = await advanced_match(store, collections)
    match = await store.create("casting-stones", variant="advanced", options={"open_collection": True})
    for player in (ann, bob):
        await store.join(match.id, "x", player=player)
    version = (await store.get(match.id)).version
    with caplog.at_level(logging.INFO, logger="grimoire.collections"):
        await guard.match_made(match.id)
    assert (await store.get(match.id)).version == version
    assert "was not brought" not in caplog.text


# -- an offer at its expiry ------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_an_offer_reads_offered_at_its_expiry_and_expired_a_millisecond_later(stores):
    store, collections, trades = stores
    offerer, recipient = await new_store_player(collections), await new_store_player(collections)
    await give(collections, recipient, {"fluffy": 1})
    offer = await trades.offer(offerer, recipient, NOTHING, {"stones": [{"id": "fluffy", "count": 1}], "cards": []})
    record = await store.redis.hgetall(trades.key(offer["id"]))
    assert trades.public(record, offer["expires"])["status"] == "offered"
    assert trades.public(record, offer["expires"] + 1)["status"] == "expired"


# -- the sweep of trades at its exact milliseconds -------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_sweep_looks_again_at_an_offer_at_its_exact_expiry_its_accept_still_young(isolated, clock):
    """Due at the offer's very expiry (accepted 50 s before): not expired yet, and looked at again in 5 s."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    t0 = clock.now
    offer = await trades.offer(a, b, A_GIVES, B_GIVES, expires_in=60)
    clock.now = t0 + 10_000
    await accept_stopped_before_its_cas(trades, offer["id"], b)
    clock.now = t0 + 60_000
    assert await trades.sweep() == 0
    assert await status_of(trades, offer["id"]) == "offered"
    assert await trades.redis.zscore(trades.live_key, offer["id"]) == t0 + 65_000


@pytest.mark.anyio
async def test_an_entry_without_its_accepts_time_counts_the_window_from_its_score_less_the_grace(isolated, clock):
    """A stopped accept whose ``entered`` never landed (its pipeline cut after the live set's entry): the accept is
    taken to have entered the trade ``sweep_grace`` before the entry's due time, and the 60 s window counts from
    there, to the millisecond."""
    _store, collections, trades = isolated
    a, b = await pair(collections)
    windows = []
    for looked_after in (60_000, 59_999):
        offer = await trades.offer(a, b, A_GIVES, B_GIVES, expires_in=600)
        entered = clock.now
        await accept_stopped_before_its_cas(trades, offer["id"], b)
        await trades.redis.hdel(trades.key(offer["id"]), "entered")
        clock.now = entered + looked_after
        assert await trades.sweep() == 0
        windows.append(await trades.redis.zscore(trades.live_key, offer["id"]))
        assert await status_of(trades, offer["id"]) == "offered"
    assert windows == [None, clock.now + 5000]  # a minute after: gone; a millisecond less: looked at again


# -- a rematch's maker ---------------------------------------------------------------------------------------------


def test_a_rematch_maker_is_waited_for_30_seconds_to_the_millisecond(client, new_player, raw, settings, monkeypatch):
    (_, alice), (_, bob) = new_player(), new_player()
    match_id, _ = _seated(client, {"game": "high-card", "options": {"rounds": 1}}, [None, None], {0: alice, 1: bob})
    play_out(client, match_id, [alice, bob])
    now = int(time.time() * 1000)
    monkeypatch.setattr(rematch_module, "_now_ms", lambda: now)  # the clock the acceptance script is given
    rematch_key = f"{_match_key(settings, match_id)}:rematch"
    raw.hset(rematch_key, mapping={"accepted:0": 1, "accepted:1": 1, "making": now - 29_999})
    assert client.get(f"/v1/matches/{match_id}/rematch", headers=bearer(alice)).json()["rematch_id"] is None
    raw.hset(rematch_key, "making", now - 30_000)
    assert client.get(f"/v1/matches/{match_id}/rematch", headers=bearer(alice)).json()["rematch_id"]


# -- a real Redis Cluster --------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_on_a_cluster_my_matches_openings_and_a_leaderboard_read_keys_on_several_shards(cluster, games,
                                                                                              settings, key_prefix):
    """Each match, and each player's ratings, live in their own slot: a listing reads them on several shards at once
    (no cross-slot transaction); a player's openings and their records share the player's slot."""
    client = aioredis.RedisCluster.from_url(cluster.url, decode_responses=True)

    def node(key: str) -> str:
        return client.nodes_manager.get_node_from_slot(client.keyslot(key)).name

    try:
        store = MatchStore(client, games, prefix=key_prefix)
        collections, _trades = attach(store, settings)
        players = collections.players
        player = await new_store_player(collections)
        ids: list[str] = []
        while len({node(store.key(m)) for m in ids}) < 2:  # until two of the matches are on different masters
            ids.append(await _joined(store, players, player, 1_000 + len(ids)))
        entries, _ = await players.matches(player, "active", None, 20)
        assert [e["match_id"] for e in entries] == ids[::-1]
        assert await players.active_seats(player) == [(m, 0) for m in ids[::-1]]
        opening, _ = await collections.open_set(player, "starter", f"key-{uuid.uuid4().hex}")
        assert [o["id"] for o in (await collections.openings(player))[0]] == [opening["id"]]
        ranked = [player]
        while len({node(players.key(p)) for p in ranked}) < 2:
            ranked.append(await new_store_player(collections))
        where = f"cluster-game-{uuid.uuid4().hex[:8]}/standard"
        for score, p in enumerate(ranked):
            await client.hset(players.ratings_key(p), where, json.dumps({"mu": 25 + score, "sigma": 8, "games": 1}))
            await client.zadd(f"{key_prefix}:lb:{{{where}}}", {p: Rating(25 + score, 8).ordinal})
        rows, _ = await leaderboard(players, *where.split("/"))
        assert [row["player_id"] for row in rows] == ranked[::-1]
    finally:
        await client.aclose()
