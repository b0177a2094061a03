"""Ratings (issue 20): exactly once per rated match, even when the job is killed half-way and run again;
concurrent updates of one player are not lost; abandoning a rated match loses it; profiles and provisional
ratings; the pure ranking rules."""

from __future__ import annotations

import asyncio
import time
import json

import pytest
import redis

from service.players.ratings import Rating, rate, standings
from workers import players as players_job

from .conftest import bearer, play_out


def _rated_match(client, first: str, second: str) -> str:
    """A rated high-card match of two players, paired by quick match."""
    ask = {"game": "high-card", "rated": True}
    assert client.post("/v1/quick-match", json=ask, headers=bearer(first)).json()["status"] == "waiting"
    paired = client.post("/v1/quick-match", json=ask, headers=bearer(second)).json()
    assert paired["status"] == "matched", paired
    return paired["last"]["match_id"]


def _play_out(client, match_id: str, tokens: list[str], lowest_first: str | None = None) -> dict:
    """Play to the end; the player ``lowest_first`` always plays its lowest card (so it tends to lose)."""
    def choose(token: str, actions: list[dict]) -> dict:
        ranked = sorted(actions, key=lambda a: a["card"])
        return ranked[0] if token == lowest_first else ranked[-1]

    return play_out(client, match_id, tokens, choose)


def _rating(client, player_id: str) -> dict | None:
    ratings = client.get(f"/v1/players/{player_id}").json()["ratings"]
    return ratings[0] if ratings else None


def _job(match_id: str, crash_after: int | None = None):
    return asyncio.run(players_job._match_finished(match_id, crash_after=crash_after))


def test_a_job_killed_half_way_and_run_again_rates_each_player_exactly_once(client, new_player, worker_runtime):
    (a_id, a), (b_id, b) = new_player(), new_player()
    match_id = _rated_match(client, a, b)
    _play_out(client, match_id, [a, b])
    with pytest.raises(SystemExit):
        _job(match_id, crash_after=1)  # the worker dies after the first player's update
    updated = [p for p in (a_id, b_id) if _rating(client, p)]
    assert len(updated) == 1
    first = _rating(client, updated[0])
    assert first["games"] == 1
    assert _job(match_id)["outcome"] == "rated"  # the retry
    assert _job(match_id)["outcome"] == "rated"  # and a duplicate notice
    after = {p: _rating(client, p) for p in (a_id, b_id)}
    assert all(r["games"] == 1 and r["wins"] + r["losses"] + r["draws"] == 1 for r in after.values())
    assert after[updated[0]] == first  # not applied a second time
    assert all(r["provisional"] for r in after.values())


def test_two_rated_matches_of_one_player_rated_in_either_order_both_count(client, new_player, worker_runtime,
                                                                          settings):
    (a_id, a), (b_id, b), (c_id, c) = new_player(), new_player(), new_player()
    for _ in range(5):  # a decisive first match, so that a's rating moves (a draw of equals moves no mu)
        m1 = _rated_match(client, a, b)
        if _play_out(client, m1, [a, b], lowest_first=b)["result"]["winners"]:
            break
    m2 = _rated_match(client, a, c)
    _play_out(client, m2, [a, c], lowest_first=c)
    with pytest.raises(SystemExit):
        _job(m2, crash_after=0)  # m2's plan is written from a's rating before m1 counted
    _job(m1)
    after_m1 = _rating(client, a_id)
    assert after_m1["mu"] != 25
    _job(m2)
    after_both = _rating(client, a_id)
    assert after_both["games"] == 2
    raw = redis.Redis.from_url(settings.redis_url, decode_responses=True)
    plan = json.loads(raw.get(f"{settings.key_prefix}:m:{{{m2}}}:rating"))["players"][a_id]
    assert plan["before"] == ""  # planned from the default rating: m1 had not counted yet
    # m2's change lands on top of m1's, not over it
    assert after_both["mu"] == pytest.approx(after_m1["mu"] + plan["after"]["mu"] - 25, abs=1e-3)
    assert _rating(client, b_id)["games"] == 1 and _rating(client, c_id)["games"] == 1


def test_abandoning_a_rated_match_loses_it_and_rates_at_once(client, new_player, drain):
    (a_id, a), (b_id, b) = new_player(), new_player()
    match_id = _rated_match(client, a, b)
    match = client.get(f"/v1/matches/{match_id}", headers=bearer(a)).json()
    assert match["status"] == "active"
    left = client.delete(f"/v1/matches/{match_id}/seats/{match['my_seat']}", headers=bearer(a))
    assert left.status_code == 200, left.text
    drain()
    quitter, stayer = _rating(client, a_id), _rating(client, b_id)
    assert quitter["losses"] == 1 and stayer["wins"] == 1
    assert quitter["mu"] < 25 < stayer["mu"]
    board = client.get("/v1/leaderboards/high-card").json()
    ranks = {row["player_id"]: row["rank"] for row in board["players"]}
    assert ranks[b_id] < ranks[a_id]


def test_standings_rules():
    assert [(s.player, s.rank, s.outcome) for s in standings({"winners": [1]}, {0: "a", 1: "b"}, {})] == [
        ("a", 2, "loss"), ("b", 1, "win")]
    assert {s.outcome for s in standings({"winners": []}, {0: "a", 1: "b"}, {})} == {"draw"}
    # the abandoner loses whatever the board says, even if the board had it winning
    places = standings({"winners": [0]}, {1: "b"}, {0: "a"})
    assert {(s.player, s.outcome) for s in places} == {("a", "loss"), ("b", "win")}
    # partners who win together share first place (a 4-seat partnership game)
    places = standings({"winners": [0, 2]}, {0: "a", 1: "b", 2: "c", 3: "d"}, {})
    assert {s.player: s.rank for s in places} == {"a": 1, "b": 2, "c": 1, "d": 2}
    new = rate({p: Rating() for p in "abcd"}, places)
    assert new["a"].mu > 25 and new["c"].mu > 25 and new["b"].mu < 25 and new["d"].mu < 25
    assert new["a"].ordinal < new["a"].mu  # the conservative rating leaderboards rank on


def test_losing_on_time_in_a_rated_match_loses_it(client, new_player, drain):
    (a_id, a), (b_id, b) = new_player(), new_player()
    ask = {"game": "high-card", "rated": True, "turn_seconds": 1}
    assert client.post("/v1/quick-match", json=ask, headers=bearer(a)).json()["status"] == "waiting"
    match_id = client.post("/v1/quick-match", json=ask, headers=bearer(b)).json()["last"]["match_id"]
    legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=bearer(a)).json()
    client.post(f"/v1/matches/{match_id}/actions", json={"action": legal["actions"][0]},
                headers={**bearer(a), "If-Match": f'"{legal["version"]}"'})
    time.sleep(1.5)  # b lets the turn time out
    drain(scheduler=True)  # the timer plays b's default, records b abandoned, and the players job rates
    late, waiting = _rating(client, b_id), _rating(client, a_id)
    assert late is not None and late["losses"] == 1 and waiting["wins"] == 1
