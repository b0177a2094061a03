"""Worker guarantees whose tests had holes, through real RQ workers (``drain``) on the suite's Redis:
a bot decides from exactly its seat's view, a strong bot plays its own moves, a bot's randomness
hangs on its seat's secret, and a replay reports a tampered log entry."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from rq.job import Job

from service.store.archive import decode, encode
from tests.workers.test_jobs import create, get, human_moves, log_entries, replay
from workers import bots, jobs
from workers.bots import strong
from workers.dispatch import bot_job_id


def record_inputs(monkeypatch, levels, then=None) -> list[tuple[bots.BotInput, tuple]]:
    """Record every bot input (and the initial state of the rng it is given) of ``levels``; ``then``
    replaces the level's choice (default: the real one)."""
    seen: list[tuple[bots.BotInput, tuple]] = []
    for level in levels:
        real = bots._PLAYERS[level]

        def recorder(bot_input, rng, real=real):
            seen.append((bot_input, rng.getstate()))
            return (then or real)(bot_input, rng)

        monkeypatch.setitem(bots._PLAYERS, level, recorder)
    return seen


def replayed_states(game, match: dict, entries: list[dict]) -> list:
    """The state before each logged action, re-computed from the seed."""
    state = game.setup(match["options"], len(match["seats"]), int(match["seed"]))
    states = [state]
    for entry in entries:
        state, _ = game.apply(state, int(entry["seat"]), json.loads(entry["action"]))
        states.append(state)
    return states


def norm(data):
    """Compared as JSON: the job built its view from the stored (JSON) state, the test from one re-computed
    in memory, where a tuple may stand for a list."""
    return json.loads(json.dumps(data))


def stored_match(worker_runtime, match_id: str):
    async def read():
        async with worker_runtime.store() as store:
            return await store.get(match_id)

    return asyncio.run(read())


def test_a_bot_job_decides_from_exactly_its_seats_view_and_legal_actions(client, drain, games, monkeypatch,
                                                                        rq_connection, key_prefix):
    """What a bot job hands the bot is its own seat's view and legal actions at the version it plays --
    not the spectator's view, another seat's, or the state -- for every move of a match of bots."""
    seen = record_inputs(monkeypatch, ["greedy", "random"])
    match = create(client, "high-card", seed=12, bots=[{"seat": 0, "level": "greedy"}, {"seat": 1, "level": "random"}])
    drain()
    final = get(client, match["id"])
    assert final["status"] == "finished"
    game = games["high-card"]
    entries = log_entries(rq_connection, key_prefix, match["id"])
    states = replayed_states(game, final, entries)
    # one worker runs the jobs one at a time: each move's job chose once, at the version it then committed
    # (a job for a seat whose turn has passed finds its version stale and does not ask its bot)
    assert len(seen) == len(entries) == 6
    for (bot_input, _), entry, state in zip(seen, entries, states):
        seat = int(entry["seat"])
        assert (bot_input.game, bot_input.seat) == ("high-card", seat)
        # the hands are hidden: the seat's view differs from the other seat's and the spectator's
        assert norm(bot_input.view) == norm(game.view(state, seat)), f"v{entry['version']}: not seat {seat}'s view"
        assert norm(bot_input.legal_actions) == norm(game.legal_actions(state, seat))


@pytest.fixture
def cheap_strong(monkeypatch):
    """A small search with no clock, so the strong move depends only on its input and seed (strong.Budget)."""
    monkeypatch.setenv("GRIMOIRE_STRONG_ITERATIONS", "8")
    monkeypatch.setenv("GRIMOIRE_STRONG_TIME_MS", "0")


def test_a_strong_bot_plays_its_own_moves_never_random_ones(client, drain, games, worker_runtime, cheap_strong,
                                                            rq_connection, key_prefix):
    """A strong seat's every move is what the strong search chooses from that seat's view with the job's
    seed, and its job says it played as strong: it never quietly plays the random level instead."""
    game = games["quidditch"]
    match = create(client, "quidditch", seed=31, bots=[{"seat": 0, "level": "strong"}])
    match_id = match["id"]
    human = client.post(f"/v1/matches/{match_id}/seats", json={"name": "ann"}).json()["token"]
    salt = jobs._salt(stored_match(worker_runtime, match_id), 0)
    checked = moves = told_apart = 0
    # play on until the strong seat has made a move that the random level would not have made with the
    # same seed (else this match could not tell the two apart), and a few more: usually a dozen plies
    for _ in range(60):  # more than a match's plies: a stalled match ends the loop too
        if moves >= 5 and told_apart:
            break
        drain()
        current = get(client, match_id)
        entries = log_entries(rq_connection, key_prefix, match_id)
        states = replayed_states(game, {**current, "seed": 31}, entries)
        for entry, state in list(zip(entries, states))[checked:]:
            checked += 1
            if int(entry["seat"]) != 0:
                continue
            version = entry["version"] - 1
            bot_input = bots.BotInput("quidditch", 0, game.view(state, 0), game.legal_actions(state, 0))
            expected = strong.choose(bot_input, jobs._rng(match_id, version, 0, salt))
            assert json.loads(entry["action"]) == expected, f"v{version}: not the strong move"
            job = Job.fetch(bot_job_id(key_prefix, match_id, version, 0), connection=rq_connection)
            assert job.return_value() == {"outcome": "played", "level": "strong", "version": version + 1}
            moves += 1
            told_apart += expected != bots.choose("random", bot_input, jobs._rng(match_id, version, 0, salt))
        if current["status"] != "active":
            break
        if 1 in current["to_act"]:
            human_moves(client, match_id, human)
    assert moves >= 5 and told_apart > 0, "random would have played the same moves: the check proved nothing"


def test_a_failing_strong_bot_falls_back_to_random_out_loud(client, drain, monkeypatch, caplog, key_prefix,
                                                            rq_connection):
    """When the strong search fails, the move is still played (a bug must not stall the match), but never
    silently: the failure is logged as an error with its traceback, and the job reports level random."""

    def broken(bot_input, rng):
        raise RuntimeError("search blew up")

    monkeypatch.setitem(bots._PLAYERS, "strong", broken)
    match = create(client, "high-card", seed=8, bots=[{"seat": 1, "level": "strong"}])
    client.post(f"/v1/matches/{match['id']}/seats", json={"name": "ann"})
    caplog.set_level(logging.ERROR, logger="grimoire.workers")
    drain()
    outcome = Job.fetch(bot_job_id(key_prefix, match["id"], 0, 1), connection=rq_connection).return_value()
    assert outcome == {"outcome": "played", "level": "random", "version": 1}
    failures = [r for r in caplog.records if r.name == "grimoire.workers" and r.levelno >= logging.ERROR
                and match["id"] in r.getMessage()]
    assert len(failures) == 1 and "random" in failures[0].getMessage()
    assert failures[0].exc_info and "search blew up" in str(failures[0].exc_info[1])


def test_a_bots_random_choices_hang_on_its_seats_secret(client, drain, monkeypatch, worker_runtime, rq_connection,
                                                        key_prefix):
    """Players know the match id, the version and the seat; a bot's randomness must also hang on its
    seat's secret (the thrown-away token hash), or they could foresee its moves. Here the same move
    (match, version, seat, view) is tried three times: the rng is the same with the same secret (a
    retry plays the same move) and different with another."""

    def refuse(bot_input, rng):
        raise RuntimeError("recorded; the move is not played, so the same move can be tried again")

    seen = record_inputs(monkeypatch, ["random"], then=refuse)
    match = create(client, "high-card", seed=2, bots=[{"seat": 1, "level": "random"}])
    match_id = match["id"]
    client.post(f"/v1/matches/{match_id}/seats", json={"name": "ann"})
    key = f"{key_prefix}:m:{{{match_id}}}"
    seat_record = json.loads(rq_connection.hget(key, "seat:1"))
    dispatcher = worker_runtime.dispatcher(rq_connection)

    def attempt(n: int, token_hash: str) -> tuple:
        rq_connection.hset(key, "seat:1", json.dumps({**seat_record, "token": token_hash}))
        seen.clear()
        if n:
            assert dispatcher.enqueue_bot(match_id, 0, 1, attempt=n)
        drain()
        assert get(client, match_id)["version"] == 0  # the refused move was not played: the same move again
        return seen[0][1]

    try:
        first = attempt(0, seat_record["token"])
        retried = attempt(1, seat_record["token"])
        other_secret = attempt(2, "0" * 64)
    finally:
        rq_connection.hset(key, "seat:1", json.dumps(seat_record))
        dispatcher.done(match_id, 0, 1)  # nothing left for the watchdog to retry
    assert retried == first
    assert other_secret != first


@pytest.mark.parametrize("field, forged", [
    ("events", "[]"),
    ("to_act", "[7]"),
    ("status", "finished"),
])
def test_a_replay_reports_one_altered_log_entry(client, drain, rq_connection, key_prefix, field, forged):
    """A replay checks every logged entry against the re-computed one: altering one entry's events,
    to_act or status makes it unverified, with exactly that entry and field named."""
    match = create(client, "high-card", seed=14, bots=[{"seat": 0, "level": "random"}, {"seat": 1, "level": "random"}])
    drain()
    assert get(client, match["id"])["status"] == "finished"
    archive = f"{key_prefix}:m:{{{match['id']}}}:log:z"
    upto, archived = decode(rq_connection.get(archive))
    assert upto >= 2, "version 2 was expected in the log's compacted archive"
    version, fields = archived[1]
    assert version == "2-0" and fields[field] != forged
    archived[1] = (version, {**fields, field: forged})
    rq_connection.set(archive, encode(upto, archived), keepttl=True)
    r = replay(client, drain, match["id"], None)
    assert not r["verified"]
    assert [(m["version"], m["what"]) for m in r["mismatches"]] == [(2, field)]
