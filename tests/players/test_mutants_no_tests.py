"""Code the mutation run saw no test reach (tests/mutation/run.py, module ``players``), held to its exact behaviour
in this process: ``grimoire grant-refill`` (service/store/collections.py ``grant_refill``, which the other tests
run as a command), the quick-match sweep a worker runs every second (service/store/quickmatch.py
``QuickMatch.sweep``, in a ``grimoire worker`` elsewhere) and the name given back when another request made an
identity provider's player first (service/store/players.py ``PlayerStore._release_name``, a race no other test
loses on purpose).

Everything runs on the test run's Redis. The sweep runs on a keyspace of its own (its count covers every queue
of the keyspace) with a clock of the test's own (the ``_now_ms`` that service/store/quickmatch.py reads): a
group's age and the rating windows are set, never waited for. Where a state cannot be reached on purpose (a
group whose maker died, a record another request wrote between this one's check and its write), the test
writes it in the keys' documented layout."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
import uuid

import pytest
import redis.asyncio as aioredis

from service.games import all_games
from service.players.names import name_key
from service.store import MatchStore
from service.store import quickmatch as quickmatch_module
from service.store.collections import grant_refill
from service.store.players import PlayerStore, idp_player_id
from service.store.quickmatch import GROUP_GRACE, QuickMatch

from .conftest import unique_name


def _now_ms() -> int:
    return int(time.time() * 1000)


# -- grimoire grant-refill ------------------------------------------------------------------------------------


def _refill_grants(raw, settings, player_id: str) -> str | None:
    return raw.hget(f"{settings.key_prefix}:p:{{{player_id}}}:coll:casting-stones:meta", "grants:refill")


def test_grant_refill_grants_refill_sets_says_how_many_the_player_holds_and_exits_0(settings, new_player, raw,
                                                                                     capsys):
    """``grant_refill(settings, player, count)`` adds ``count`` granted Refill Sets (the kind not once per
    player) and prints, on stdout only, what it granted and how many granted sets the player now holds. A count
    of 1 is allowed."""
    player_id, _ = new_player()
    assert grant_refill(settings, player_id, 3) == 0
    out, err = capsys.readouterr()
    assert (out, err) == (f"granted 3 refill set(s) to {player_id}: 3 granted set(s) to open\n", "")
    assert grant_refill(settings, player_id, 1) == 0
    out, err = capsys.readouterr()
    assert (out, err) == (f"granted 1 refill set(s) to {player_id}: 4 granted set(s) to open\n", "")
    assert _refill_grants(raw, settings, player_id) == "4"


def test_grant_refill_to_no_player_says_so_on_stderr_and_exits_2(settings, capsys):
    assert grant_refill(settings, "no-such-player", 2) == 2
    assert capsys.readouterr() == ("", "There is no player 'no-such-player'.\n")


def test_grant_refill_without_redis_url_or_with_a_count_below_1_says_why_on_stderr_and_exits_2(settings, new_player,
                                                                                              raw, capsys):
    player_id, _ = new_player()
    assert grant_refill(dataclasses.replace(settings, redis_url=""), player_id, 3) == 2
    assert capsys.readouterr() == ("", "grimoire grant-refill needs REDIS_URL: the Redis the service uses.\n")
    for count in (0, -1):
        assert grant_refill(settings, player_id, count) == 2
        assert capsys.readouterr() == ("", "--count is 1 or more.\n")
    assert _refill_grants(raw, settings, player_id) is None


def test_grant_refill_where_no_game_has_collectibles_says_so_on_stderr_and_exits_2(settings, new_player, raw,
                                                                                    capsys, monkeypatch):
    """A service whose games have no collectibles (its games as service.games.all_games lists them) has no
    Refill Sets to grant."""
    import service.games

    player_id, _ = new_player()
    without = {game_id: game for game_id, game in all_games().items() if game.collectibles is None}
    assert without and len(without) < len(all_games())
    monkeypatch.setattr(service.games, "all_games", lambda: dict(without))
    assert grant_refill(settings, player_id, 3) == 2
    assert capsys.readouterr() == ("", "No game of this service has collectibles.\n")
    assert _refill_grants(raw, settings, player_id) is None


# -- the quick-match sweep ----------------------------------------------------------------------------------------


class Clock:
    """The quick-match store's clock (ms), moved by the test."""

    def __init__(self) -> None:
        self.ms = _now_ms()

    def __call__(self) -> int:
        return self.ms


@pytest.fixture
def clock(monkeypatch) -> Clock:
    now = Clock()
    monkeypatch.setattr(quickmatch_module, "_now_ms", now)
    return now


def _sweeping(settings, games, scenario):
    """Run ``scenario(quick match, prefix)`` on a keyspace of its own (under the test run's, deleted with it)."""
    prefix = f"{settings.key_prefix}:sweep-{uuid.uuid4().hex[:10]}"

    async def run():
        client = aioredis.Redis.from_url(settings.redis_url, decode_responses=True)
        try:
            players = PlayerStore(MatchStore(client, games, prefix=prefix, finished_ttl=600, idle_ttl=600))
            return await scenario(QuickMatch(players), prefix)
        finally:
            await client.aclose()

    return asyncio.run(run())


async def _new_player(quick: QuickMatch) -> str:
    player, _token, _ = await quick.players.create(unique_name("Sw"))
    return player.id


def test_a_sweep_with_no_queues_makes_nothing_and_says_0(settings, games, clock):
    async def scenario(quick, prefix):
        assert await quick.sweep() == 0

    _sweeping(settings, games, scenario)


def test_a_sweep_pairs_as_the_windows_widen_counts_every_match_and_forgets_the_emptied_queue(settings, games, clock):
    """Four players of ratings 10 apart at the closest wait in one queue: nobody is paired at first, nor by a
    sweep a second later (the windows are 3.5 points wide), and the queue stays listed while they wait. A minute
    on, the windows are at their widest: one sweep pairs the closest two and the other two, makes both matches
    (and says 2), and, the queue empty and no group left, takes the queue off the list of queues in use."""

    async def scenario(quick, prefix):
        queue = quick.queue("casting-stones", "basic", 2, False)
        queues = f"{prefix}:qm:queues"
        mu = {}
        for rating in (5.0, 15.0, 35.0, 45.0):
            player_id = await _new_player(quick)
            mu[player_id] = rating
            await quick.redis.hset(f"{prefix}:p:{{{player_id}}}:ratings", "casting-stones/basic",
                                   json.dumps({"mu": rating, "sigma": 3.0, "games": 20}))
            assert (await quick.join(player_id, queue))["status"] == "waiting"
        assert await quick.redis.smembers(queues) == {queue.id}

        clock.ms += 1000
        assert await quick.sweep() == 0
        assert await quick.redis.smembers(queues) == {queue.id}  # players wait in it
        assert all([(await quick.status(p))["status"] == "waiting" for p in mu])

        clock.ms += 60_000
        assert await quick.sweep() == 2
        last = {p: (await quick.status(p))["last"] for p in mu}
        by_match = {}
        for player_id, made in last.items():
            by_match.setdefault(made["match_id"], set()).add(mu[player_id])
        assert sorted(map(sorted, by_match.values())) == [[5.0, 15.0], [35.0, 45.0]]
        for match_id in by_match:
            match = await quick.store.get(match_id)
            assert {s.player for s in match.seats} == {p for p in mu if last[p]["match_id"] == match_id}
        assert await quick.redis.smembers(queues) == set()  # emptied: no longer in use
        assert await quick.sweep() == 0

    _sweeping(settings, games, scenario)


def test_a_sweep_makes_the_groups_whose_maker_died_once_they_are_older_than_the_grace(settings, games, clock):
    """Groups formed but never made (their maker died): a sweep makes those older than GROUP_GRACE seconds,
    every one of them (and counts them), and leaves one exactly that old to its maker; the queue stays listed
    while a group of it waits. The next sweep, a millisecond later, makes that one too; the one after forgets the
    queue."""

    async def scenario(quick, prefix):
        queue = quick.queue("casting-stones", "basic", 2, False)
        queues = f"{prefix}:qm:queues"
        groups = f"{prefix}:qm:{{qm:{queue.id}}}:groups"
        await quick.redis.sadd(queues, queue.id)
        ages = {"young": GROUP_GRACE * 1000, "old": GROUP_GRACE * 1000 + 1, "older": 60_000}
        members = {}
        for group_id, age in ages.items():
            members[group_id] = [await _new_player(quick) for _ in range(2)]
            for player_id in members[group_id]:
                await quick.redis.set(f"{prefix}:p:{{{player_id}}}:qm", queue.id)
            await quick.redis.hset(groups, group_id, json.dumps(
                {"players": members[group_id], "bots": 0, "at": clock.ms - age}))

        assert await quick.sweep() == 2
        assert set(await quick.redis.hgetall(groups)) == {"young"}
        assert await quick.redis.smembers(queues) == {queue.id}  # a group of it still waits
        for group_id in ("old", "older"):
            made = [(await quick.status(p))["last"]["match_id"] for p in members[group_id]]
            assert len(set(made)) == 1
            assert {s.player for s in (await quick.store.get(made[0])).seats} == set(members[group_id])
        assert all([(await quick.status(p))["last"] is None for p in members["young"]])

        clock.ms += 1
        assert await quick.sweep() == 1
        assert len({(await quick.status(p))["last"]["match_id"] for p in members["young"]}) == 1
        assert await quick.redis.smembers(queues) == {queue.id}  # the group was there when the sweep looked
        assert await quick.sweep() == 0
        assert await quick.redis.smembers(queues) == set()

    _sweeping(settings, games, scenario)


# -- an identity provider's player made by two requests at once ---------------------------------------------------


class RecordMadeMeanwhile:
    """The players' Redis, where another request writes the player's record (named ``name``) just after this
    one asked whether there is one: the record ``_first_use`` finds made when it comes to write its own."""

    def __init__(self, redis, key: str, player_id: str, name: str):
        self._redis, self._key, self._player_id, self._name = redis, key, player_id, name

    def __getattr__(self, attribute):
        return getattr(self._redis, attribute)

    async def hexists(self, key, field):
        answer = await self._redis.hexists(key, field)
        await self._redis.hset(self._key, mapping={"id": self._player_id, "name": self._name, "created": 1,
                                                   "idp": 1})
        return answer


def _first_use_losing_the_race(settings, games, player_id: str, claims: dict, theirs: str) -> None:
    async def scenario():
        client = aioredis.Redis.from_url(settings.redis_url, decode_responses=True)
        try:
            players = PlayerStore(MatchStore(client, games, prefix=settings.key_prefix))
            players.redis = RecordMadeMeanwhile(client, players.key(player_id), player_id, theirs)
            await players._first_use(player_id, claims)
        finally:
            await client.aclose()

    asyncio.run(scenario())


def test_a_name_claimed_by_a_request_that_lost_the_race_is_given_back(settings, games, raw):
    """Two first requests of one identity-provider player at once, with other claims (a renamed account): the
    one that writes second keeps the record the first wrote, and gives back the name it had claimed, which is
    free again; the name the record holds stays claimed."""
    player_id = idp_player_id("https://race.example.test/", uuid.uuid4().hex)
    names = f"{settings.key_prefix}:names"
    mine, theirs = unique_name("Late"), unique_name("First")
    raw.hset(names, name_key(theirs), player_id)  # the first request's claim
    _first_use_losing_the_race(settings, games, player_id, {"preferred_username": mine}, theirs)
    assert raw.hget(f"{settings.key_prefix}:p:{{{player_id}}}", "name") == theirs
    assert raw.hget(names, name_key(mine)) is None
    assert raw.hget(names, name_key(theirs)) == player_id


def test_a_name_the_loser_of_the_race_never_claimed_stays_its_owners(settings, games, raw):
    """Every name of the claims and both names made of the id are taken by other players: the request takes the
    longer id-derived name unclaimed, loses the race, and gives back nothing: that name stays the other
    player's."""
    player_id = idp_player_id("https://race.example.test/", uuid.uuid4().hex)
    names = f"{settings.key_prefix}:names"
    taken = unique_name("Taken")
    for name in (taken, f"Player {player_id[1:9]}", f"Player {player_id[1:17]}"):
        raw.hset(names, name_key(name), "someone-else")
    theirs = unique_name("First")
    raw.hset(names, name_key(theirs), player_id)
    _first_use_losing_the_race(settings, games, player_id, {"preferred_username": taken}, theirs)
    assert raw.hget(f"{settings.key_prefix}:p:{{{player_id}}}", "name") == theirs
    for name in (taken, f"Player {player_id[1:9]}", f"Player {player_id[1:17]}"):
        assert raw.hget(names, name_key(name)) == "someone-else"
    assert raw.hget(names, name_key(theirs)) == player_id
