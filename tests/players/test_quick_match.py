"""Quick match (issue 20): atomic pairing across service processes, rating windows that widen, bots after a
wait, team and 4-seat games; and the whole way of a rated match, from the queue to the leaderboard."""

from __future__ import annotations

import random
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import redis as sync_redis

from rq import Queue

from service.store.embedded import stop_process
from tests.support.processes import Service, start_worker
from workers.dispatch import _safe, queue_names

from .conftest import bearer, unique_name


@pytest.fixture(scope="module")
def services(redis_url, key_prefix, tmp_path_factory):
    """Two ``grimoire serve`` processes and one ``grimoire worker`` on the test run's Redis and keyspace."""
    logs = tmp_path_factory.mktemp("quick-match")
    started = [Service(redis_url, key_prefix, logs / f"service-{i}.log") for i in range(2)]
    worker = start_worker(f"{_safe(key_prefix)}-qm-{time.monotonic_ns()}", REDIS_URL=redis_url,
                          GRIMOIRE_KEY_PREFIX=key_prefix, GRIMOIRE_LOG_LEVEL="WARNING")
    yield [httpx.Client(base_url=s.base, timeout=60) for s in started]
    stop_process(worker)
    for service in started:
        service.stop()


def _player(http: httpx.Client, stem: str = "Q") -> tuple[str, str]:
    made = http.post("/v1/players", json={"name": unique_name(stem)})
    assert made.status_code == 201, made.text
    return made.json()["player"]["id"], made.json()["token"]


def _until(check, timeout: float = 60.0, every: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        time.sleep(every)


def test_two_players_quick_match_through_two_processes_play_rated_to_the_end_and_are_rated_once(
        services, redis_url, key_prefix):
    one, two = services
    (alice_id, alice), (bob_id, bob) = _player(one, "Alice"), _player(two, "Bob")
    ask = {"game": "casting-stones", "variant": "basic", "rated": True}
    waiting = one.post("/v1/quick-match", json=ask, headers=bearer(alice))
    assert waiting.status_code == 202 and waiting.json()["status"] == "waiting", waiting.text
    twice = two.post("/v1/quick-match", json=ask, headers=bearer(alice))
    assert twice.status_code == 409 and twice.json()["code"] == "already_queued"
    paired = two.post("/v1/quick-match", json=ask, headers=bearer(bob))
    assert paired.status_code == 201 and paired.json()["status"] == "matched", paired.text
    match_id = paired.json()["last"]["match_id"]
    # alice learns of it through the other process: her status and her matches
    mine = one.get("/v1/quick-match", headers=bearer(alice)).json()
    assert mine["status"] == "matched" and mine["last"]["match_id"] == match_id
    listed = one.get("/v1/me/matches", headers=bearer(alice)).json()["matches"]
    assert listed[0]["match_id"] == match_id and listed[0]["rated"] and listed[0]["opponents"][0]["player"] == bob_id

    chooser, moves = random.Random(20), 0
    while True:
        match = one.get(f"/v1/matches/{match_id}").json()
        if match["status"] == "finished":
            break
        acted = False
        for http, token in ((one, alice), (two, bob)):
            legal = http.get(f"/v1/matches/{match_id}/legal-actions", headers=bearer(token)).json()
            if legal["actions"]:
                done = http.post(f"/v1/matches/{match_id}/actions", json={"action": chooser.choice(legal["actions"])},
                                 headers={**bearer(token), "If-Match": f'"{legal["version"]}"'})
                assert done.status_code in (200, 412), done.text
                acted, moves = True, moves + 1
                break
        assert acted and moves < 3000
    result = match["result"]

    def rated(player_id):
        ratings = one.get(f"/v1/players/{player_id}").json()["ratings"]
        return ratings if ratings and ratings[0]["games"] == 1 else None

    before = {p: _until(lambda p=p: rated(p)) for p in (alice_id, bob_id)}
    for player_id, seat_ratings in before.items():
        (rating,) = seat_ratings
        assert (rating["game"], rating["variant"], rating["provisional"]) == ("casting-stones", "basic", True)
        assert rating["wins"] + rating["losses"] + rating["draws"] == 1
    if result["winners"]:
        winner = alice_id if listed[0]["my_seats"][0] in result["winners"] else bob_id
        loser = bob_id if winner == alice_id else alice_id
        assert before[winner][0]["mu"] > 25 > before[loser][0]["mu"]
        assert before[winner][0]["wins"] == 1 and before[loser][0]["losses"] == 1
    # once: the players job again (a retry, or a second finish notice) changes nothing
    connection = sync_redis.Redis.from_url(redis_url)
    again = Queue(queue_names(key_prefix)["bots"], connection=connection).enqueue("workers.players.match_finished",
                                                                                  match_id)
    _until(lambda: again.get_status(refresh=True) in ("finished", "failed"))
    assert again.get_status() == "finished" and again.return_value()["outcome"] == "rated"
    assert {p: rated(p) for p in (alice_id, bob_id)} == before
    board = one.get("/v1/leaderboards/casting-stones", params={"variant": "basic"}).json()
    ranked = [row["player_id"] for row in board["players"]]
    assert alice_id in ranked and bob_id in ranked
    top = board["players"][0]
    assert top["rank"] == 1 and top["rating"] == max(r["rating"] for r in board["players"])


def _concurrent_joins(services, count: int, ask: dict) -> tuple[dict[str, str], dict[str, list[str]]]:
    """``count`` players join the queue at once, half through each process; returns player -> token and
    match -> its players, once nobody is waiting any more."""
    players = {}
    for i in range(count):
        player_id, token = _player(services[i % 2], "Crowd")
        players[player_id] = token

    def join(item):
        i, (player_id, token) = item
        answer = services[i % 2].post("/v1/quick-match", json=ask, headers=bearer(token))
        assert answer.status_code in (201, 202), answer.text
        return answer.json()

    with ThreadPoolExecutor(max_workers=32) as pool:
        list(pool.map(join, enumerate(players.items())))

    def placed():
        statuses = {p: services[0].get("/v1/quick-match", headers=bearer(t)).json() for p, t in players.items()}
        return statuses if all(s["status"] == "matched" for s in statuses.values()) else None

    statuses = _until(placed, timeout=120, every=1.0)
    matches: dict[str, list[str]] = {}
    for player_id, status in statuses.items():
        matches.setdefault(status["last"]["match_id"], []).append(player_id)
    return players, matches


def test_200_concurrent_joins_through_two_processes_make_valid_matches_with_nobody_twice_or_lost(services):
    players, matches = _concurrent_joins(services, 200, {"game": "casting-stones", "variant": "basic",
                                                         "rated": False})
    assert len(matches) == 100 and sorted(len(ps) for ps in matches.values()) == [2] * 100
    seated = Counter()
    for match_id, expected in matches.items():
        match = services[1].get(f"/v1/matches/{match_id}").json()
        assert match["status"] == "active" and all(s["joined"] and s["bot"] is None for s in match["seats"])
        holders = []
        for player_id in expected:
            mine = services[0].get(f"/v1/matches/{match_id}", headers=bearer(players[player_id])).json()
            holders.append(mine["my_seat"])
        assert sorted(holders) == [0, 1]  # each player in a seat of its own, bound to it
        seated.update(expected)
    assert set(seated) == set(players) and set(seated.values()) == {1}  # nobody twice, nobody lost
    # and nobody is left in a queue
    assert all(services[1].get("/v1/quick-match", headers=bearer(t)).json()["queue"] is None
               for t in players.values())


def test_four_seat_partnership_games_group_exactly_four(services):
    players, matches = _concurrent_joins(services, 12, {"game": "spells-and-potions", "seats": 4, "rated": True})
    assert len(matches) == 3 and all(len(ps) == 4 for ps in matches.values())
    for match_id in matches:
        match = services[0].get(f"/v1/matches/{match_id}").json()
        assert len(match["seats"]) == 4 and match["status"] == "active"


def test_ratings_far_apart_wait_until_the_window_widens_and_bots_fill_after_the_wait(services, redis_url,
                                                                                      key_prefix):
    one, two = services
    (weak_id, weak), (strong_id, strong) = _player(one, "Weak"), _player(two, "Strong")
    raw = sync_redis.Redis.from_url(redis_url, decode_responses=True)
    variant = "practice-1"
    for player_id, mu in ((weak_id, 10.0), (strong_id, 40.0)):
        raw.hset(f"{key_prefix}:p:{{{player_id}}}:ratings", f"spells-and-potions/{variant}",
                 f'{{"mu": {mu}, "sigma": 3.0, "games": 20, "wins": 0, "losses": 0, "draws": 0}}')
    ask = {"game": "spells-and-potions", "variant": variant, "seats": 2, "rated": True}
    assert one.post("/v1/quick-match", json=ask, headers=bearer(weak)).json()["status"] == "waiting"
    assert two.post("/v1/quick-match", json=ask, headers=bearer(strong)).json()["status"] == "waiting"
    time.sleep(2.5)  # the worker sweeps every second: 30 points apart is far beyond a 2 s window
    assert one.get("/v1/quick-match", headers=bearer(weak)).json()["status"] == "waiting"
    # as if they had waited a minute: the windows reach their widest, and the next sweep pairs them
    since = f"{key_prefix}:qm:{{qm:spells-and-potions/{variant}/2/rated/0}}:since"
    for player_id in (weak_id, strong_id):
        raw.hset(since, player_id, int(time.time() * 1000) - 61_000)
    status = _until(lambda: (s := one.get("/v1/quick-match", headers=bearer(weak)).json())["status"] == "matched"
                    and s)
    match = one.get(f"/v1/matches/{status['last']['match_id']}").json()
    assert sorted(s["name"] is not None for s in match["seats"]) == [True, True]

    # alone, with bots_after: after that many seconds a bot takes the empty seat
    (_, lonely) = _player(one, "Lonely")
    ask = {"game": "casting-stones", "variant": "intermediate", "rated": False, "bots_after": 1}
    assert one.post("/v1/quick-match", json=ask, headers=bearer(lonely)).json()["status"] == "waiting"
    status = _until(lambda: (s := one.get("/v1/quick-match", headers=bearer(lonely)).json())["status"] == "matched"
                    and s, timeout=30)
    match = one.get(f"/v1/matches/{status['last']['match_id']}").json()
    assert [s["bot"] for s in match["seats"] if s["bot"]] == ["greedy"] and match["status"] == "active"
    left = one.delete("/v1/quick-match", headers=bearer(lonely))
    assert left.status_code == 404 and left.json()["code"] == "not_queued"
