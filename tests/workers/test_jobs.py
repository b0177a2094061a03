"""Bots, replays and turn timers through real RQ workers on a real Redis.

Matches are made through the REST API (the session's app, whose store
listener enqueues the jobs); the jobs run in real RQ workers: ``drain()`` in
this process, or ``grimoire worker`` subprocesses.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

import pytest
from rq.job import Job

from service.engine import BOARD_SEAT, events_for
from service.store.archive import decode
from workers import runtime
from workers.dispatch import bot_job_id, timer_job_id


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(interval)


def create(client, game: str, **body) -> dict:
    response = client.post("/v1/matches", json={"game": game, **body})
    assert response.status_code == 201, response.text
    return response.json()


def get(client, match_id: str, token: str | None = None) -> dict:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return client.get(f"/v1/matches/{match_id}", headers=headers).json()


def log_entries(rq_connection, key_prefix: str, match_id: str) -> list[dict]:
    key = f"{key_prefix}:m:{{{match_id}}}:log"
    upto, archived = decode(rq_connection.get(f"{key}:z"))  # the compacted part (service/store/archive.py)
    raw = [(i.decode(), {k.decode(): v.decode() for k, v in f.items()})
           for i, f in rq_connection.xrange(key, f"({upto}-0", "+")]
    return [{"version": int(i.split("-")[0]), **f} for i, f in archived + raw]


def replay(client, drain, match_id: str, seat: int | None) -> dict:
    started = client.post(f"/v1/matches/{match_id}/replays", json={"seat": seat})
    assert started.status_code == 202, started.text
    drain()
    job = client.get(f"/v1/replays/{started.json()['id']}").json()
    assert job["status"] == "finished", job
    return job["replay"]


@pytest.mark.parametrize("game", ["casting-stones", "quidditch", "spells-and-potions"])
def test_a_match_of_bots_plays_itself_to_the_end(client, drain, game, rq_connection, key_prefix):
    seats = 4 if game == "spells-and-potions" else 2
    levels = ["greedy", "random", "greedy", "random"][:seats]
    match = create(client, game, seats=seats, seed=11, bots=[{"seat": s, "level": lv} for s, lv in enumerate(levels)])
    assert [s["bot"] for s in match["seats"]] == levels and match["status"] == "active"
    drain()
    final = get(client, match["id"])
    assert final["status"] == "finished" and final["result"] is not None
    entries = log_entries(rq_connection, key_prefix, match["id"])
    assert [e["version"] for e in entries] == list(range(1, final["version"] + 1))
    assert not rq_connection.zcard(f"{key_prefix}:bots:pending")


def test_a_bot_added_later_plays_against_a_human(client, drain):
    match = create(client, "high-card", seed=5)
    human = client.post(f"/v1/matches/{match['id']}/seats", json={"name": "ann"}).json()
    added = client.post(f"/v1/matches/{match['id']}/bots", json={"level": "greedy"})
    assert added.status_code == 201 and added.json()["seat"] == 1
    assert "token" not in added.text
    for _ in range(3):
        drain()
        state = get(client, match["id"], human["token"])
        assert 1 not in state["to_act"]  # the bot has played its card of the round
        action = client.get(f"/v1/matches/{match['id']}/legal-actions",
                            headers={"Authorization": f"Bearer {human['token']}"}).json()["actions"][0]
        response = client.post(f"/v1/matches/{match['id']}/actions", json={"action": action},
                               headers={"Authorization": f"Bearer {human['token']}",
                                        "If-Match": f'"{state["version"]}"'})
        assert response.status_code == 200, response.text
    assert get(client, match["id"])["status"] == "finished"


def test_unknown_levels_and_taken_seats_are_refused(client):
    refused = client.post("/v1/matches", json={"game": "high-card", "bots": [{"seat": 0, "level": "godlike"}]})
    assert refused.status_code == 422 and refused.json()["code"] == "unknown_bot_level"
    assert "no bot level" in refused.json()["detail"]
    match = create(client, "high-card", bots=[{"seat": 0, "level": "random"}])
    taken = client.post(f"/v1/matches/{match['id']}/bots", json={"seat": 0, "level": "random"})
    assert taken.status_code == 409 and taken.json()["code"] == "seat_taken"


def test_duplicate_enqueues_play_one_move(client, drain, worker_runtime, rq_connection, key_prefix):
    match = create(client, "high-card", seed=3, bots=[{"seat": 1, "level": "random"}])
    client.post(f"/v1/matches/{match['id']}/seats", json={"name": "ann"})  # starts: both seats to act at v0
    dispatcher = worker_runtime.dispatcher(rq_connection)
    assert dispatcher.enqueue_bot(match["id"], 0, 1) is False  # the same job id: refused by RQ
    assert dispatcher.enqueue_bot(match["id"], 0, 1, attempt=1) is True  # a watchdog retry: a second job
    assert dispatcher.enqueue_bot(match["id"], 0, 1, attempt=2) is True  # and a third
    drain()
    entries = log_entries(rq_connection, key_prefix, match["id"])
    assert [(e["version"], e["seat"]) for e in entries] == [(1, "1")]
    outcomes = sorted(Job.fetch(bot_job_id(key_prefix, match["id"], 0, 1, a), connection=rq_connection)
                      .return_value()["outcome"] for a in range(3))
    assert outcomes.count("played") == 1 and set(outcomes) <= {"played", "stale", "conflict", "duplicate"}


def test_a_killed_workers_job_is_recovered(client, spawn_worker, rq_connection, key_prefix):
    match = create(client, "quidditch", seed=8, bots=[{"seat": 0, "level": "greedy"}, {"seat": 1, "level": "random"}])
    match_id = match["id"]
    first = bot_job_id(key_prefix, match_id, 0, sorted(match["to_act"])[0])
    slow = spawn_worker(GRIMOIRE_BOT_DELAY_MS=4000)  # takes the first move, then dies while "thinking"
    wait_for(lambda: Job.fetch(first, connection=rq_connection).get_status() == "started")
    os.killpg(slow.pid, signal.SIGKILL)  # the worker and the horse thinking for it, as a dying machine
    slow.wait(timeout=10)
    time.sleep(0.5)
    assert get(client, match_id)["version"] == 0  # the move was lost with the worker
    spawn_worker(GRIMOIRE_BOT_WATCHDOG_SECONDS=1)  # its watchdog re-enqueues it; then the match plays on
    final = wait_for(lambda: (m := get(client, match_id))["status"] == "finished" and m, timeout=60)
    entries = log_entries(rq_connection, key_prefix, match_id)
    assert [e["version"] for e in entries] == list(range(1, final["version"] + 1))


def test_replays_reproduce_every_state_and_show_each_seat_only_its_own(client, drain, games, rq_connection,
                                                                       key_prefix):
    match = create(client, "spells-and-potions", seats=3, seed=21, variant="practice-3",
                   bots=[{"seat": s, "level": "greedy"} for s in range(3)])
    drain()
    final = get(client, match["id"])
    assert final["status"] == "finished"
    game = games["spells-and-potions"]
    entries = log_entries(rq_connection, key_prefix, match["id"])
    # the test's own re-computation, to compare every frame with
    state = game.setup(final["options"], 3, int(final["seed"]))
    states, events = [state], [[]]
    for e in entries:
        state, evs = game.apply(state, int(e["seat"]), json.loads(e["action"]))
        states.append(state)
        events.append(evs)
    for seat in (0, 1, 2):
        r = replay(client, drain, match["id"], seat)
        assert r["verified"] and r["mismatches"] == [] and r["disclosure"] == "seat" and r["seed"] is None
        assert len(r["frames"]) == len(states)
        for frame, s, evs, entry in zip(r["frames"], states, events, [None] + entries):
            assert frame["view"] == json.loads(json.dumps(game.view(s, seat)))
            assert frame["events"] == json.loads(json.dumps(events_for(evs, seat)))
            assert "views" not in frame
            if entry is not None and int(entry["seat"]) != seat:
                assert frame["action"] is None
    spectator = replay(client, drain, match["id"], None)
    assert spectator["disclosure"] == "everything" and "over" in spectator["note"] and spectator["verified"]
    assert spectator["frames"][-1]["view"] == final["view"]
    assert all(len(f["views"]) == 3 and (f["action"] is not None or f["version"] == 0) for f in spectator["frames"])


def test_a_replay_reports_a_tampered_state(client, drain, rq_connection, key_prefix):
    match = create(client, "high-card", seed=9, bots=[{"seat": 0, "level": "random"}, {"seat": 1, "level": "random"}])
    drain()
    key = f"{key_prefix}:m:{{{match['id']}}}"
    state = json.loads(rq_connection.hget(key, "state"))
    state["wins"] = [9, 9]
    rq_connection.hset(key, "state", json.dumps(state))
    r = replay(client, drain, match["id"], 0)
    assert not r["verified"] and [m["what"] for m in r["mismatches"]] == ["state"]


def test_replays_are_refused_before_the_end_and_unknown_ones_are_404(client):
    match = create(client, "high-card")
    refused = client.post(f"/v1/matches/{match['id']}/replays", json={"seat": None})
    assert refused.status_code == 409 and refused.json()["code"] == "match_not_finished"
    assert client.get("/v1/replays/nope").json()["code"] == "replay_not_found"


def test_graphql_add_bot_and_replay(client, drain):
    def gql(query: str, **variables) -> dict:
        response = client.post("/graphql", json={"query": query, "variables": variables})
        assert response.status_code == 200 and "errors" not in response.json(), response.text
        return response.json()["data"]

    created = gql("""mutation { createMatch(input: {game: "high-card", seed: "4", bots: [{seat: 0, level: "greedy"}]})
                  { ... on MatchCreated { match { id seats { bot } } } } }""")["createMatch"]["match"]
    assert created["seats"][0]["bot"] == "greedy"
    added = gql("""mutation($id: ID!) { addBot(input: {matchId: $id, level: "random"}) {
                   __typename ... on BotAdded { seat } ... on Problem { code } } }""", id=created["id"])["addBot"]
    assert added == {"__typename": "BotAdded", "seat": 1}
    refused = gql("""mutation($id: ID!) { addBot(input: {matchId: $id, level: "godlike"}) {
                     __typename ... on Problem { code message } } }""", id=created["id"])["addBot"]
    assert refused["code"] == "UNKNOWN_BOT_LEVEL"
    drain()
    start = """mutation($id: ID!, $seat: Int) { startReplay(input: {matchId: $id, seat: $seat}) {
               ... on ReplayJob { id status matchId seat replay { verified } } } }"""
    jobs = {seat: gql(start, id=created["id"], seat=seat)["startReplay"] for seat in (1, None)}
    # not yet built: no replay
    assert [(j["status"], j["matchId"], j["seat"], j["replay"]) for j in jobs.values()] == [
        ("queued", created["id"], 1, None), ("queued", created["id"], None, None)]
    drain()
    for seat, job in jobs.items():
        got = gql("""query($id: ID!) { replay(id: $id) { ... on ReplayJob { id status matchId seat replay {
                     matchId game seat disclosure note seed verified mismatches { version }
                     frames { version seat action { __typename ... on HighCardPlayAction { card } } events
                              view { __typename } views { __typename } toAct auto { seat } } } } } }""",
                  id=job["id"])["replay"]
        rest = client.get(f"/v1/replays/{job['id']}").json()
        replay = rest["replay"]
        assert (got["id"], got["status"], got["matchId"], got["seat"]) == (job["id"], "finished", created["id"], seat)
        assert {key: value for key, value in got["replay"].items() if key != "frames"} == {
            "matchId": replay["match_id"], "game": "high-card", "seat": seat, "disclosure": replay["disclosure"],
            "note": replay["note"], "seed": replay["seed"], "verified": True, "mismatches": []}
        assert (replay["disclosure"], replay["seed"]) == (("seat", None) if seat == 1 else ("everything", "4"))
        assert got["replay"]["frames"] == [{
            "version": f["version"], "seat": f["seat"],
            "action": f["action"] and {"__typename": "HighCardPlayAction", "card": f["action"]["card"]},
            "events": f["events"], "view": {"__typename": "HighCardView"},
            "views": None if f.get("views") is None else [{"__typename": "HighCardView"}] * 2,
            "toAct": f["to_act"], "auto": None} for f in replay["frames"]]
        assert len(replay["frames"]) == 7 and (seat is None) == all(f.get("views") for f in replay["frames"])
        # seat 1 sees its own actions only; the spectator replay shows every action
        assert {f["seat"] for f in replay["frames"] if f["action"]} == ({1} if seat == 1 else {0, 1})


def test_a_turn_timer_plays_the_late_seats_default_and_records_it(client, drain):
    """The record is in the action's own log entry: the REST and GraphQL history, the live stream and the
    replay all show it, and an action a seat played itself has none."""
    match = create(client, "high-card", seed=2, turn_seconds=1)
    tokens = [client.post(f"/v1/matches/{match['id']}/seats", json={"name": name}).json()["token"]
              for name in ("ann", "bob")]
    time.sleep(1.3)
    drain(scheduler=True)  # the scheduler moves the due timers to the queue; the worker plays them
    after = get(client, match["id"])
    assert after["version"] == 2  # both seats were late: each got its default (no pass here: a random card)
    history = client.get(f"/v1/matches/{match['id']}/history").json()["entries"]
    expected = [{"seat": s, "reason": "turn_timeout", "default": "random", "turn_seconds": 1}
                for s in (history[0]["seat"], history[1]["seat"])]
    assert [e["auto"] for e in history] == expected and sorted(e["seat"] for e in history) == [0, 1]
    gql = client.post("/graphql", json={"query": """query($id: ID!) { match(id: $id) { ... on Match { history {
        auto { seat reason default turnSeconds } } } } }""", "variables": {"id": match["id"]}}).json()
    assert [e["auto"]["turnSeconds"] for e in gql["data"]["match"]["history"]] == [1, 1]
    # the seats play the rest themselves (no worker runs between drains): their actions carry no record
    while (now := get(client, match["id"]))["status"] == "active":
        auth = {"Authorization": f"Bearer {tokens[now['to_act'][0]]}"}
        legal = client.get(f"/v1/matches/{match['id']}/legal-actions", headers=auth).json()["actions"]
        played = client.post(f"/v1/matches/{match['id']}/actions", json={"action": legal[0]},
                             headers={**auth, "If-Match": f'"{now["version"]}"'})
        assert played.status_code == 200, played.text
    later = client.get(f"/v1/matches/{match['id']}/history?after=2").json()["entries"]
    assert later and all(e["auto"] is None for e in later)
    stream = client.get(f"/v1/matches/{match['id']}/events", params={"format": "ndjson"})  # ends: the match is over
    updates = [m for m in map(json.loads, filter(None, stream.text.splitlines())) if m["type"] == "action"]
    assert [u["auto"] for u in updates] == expected + [None] * len(later)
    query = ("subscription($id: ID!) { matchEvents(matchId: $id, after: 0) { "
             "... on MatchEvent { auto { seat reason default turnSeconds } } } }")
    with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        ws.send_json({"type": "connection_init", "payload": {}})
        assert ws.receive_json()["type"] == "connection_ack"
        ws.send_json({"id": "1", "type": "subscribe", "payload": {"query": query, "variables": {"id": match["id"]}}})
        pushed = [ws.receive_json()["payload"]["data"]["matchEvents"]["auto"] for _ in range(len(updates))]
    assert [a and {"seat": a["seat"], "reason": a["reason"], "default": a["default"], "turn_seconds": a["turnSeconds"]}
            for a in pushed] == expected + [None] * len(later)
    frames = replay(client, drain, match["id"], None)["frames"]
    assert [f["auto"] for f in frames] == [None] + expected + [None] * len(later)
    job = client.post("/graphql", json={"query": """mutation($id: ID!) { startReplay(input: {matchId: $id}) {
        ... on ReplayJob { id } } }""", "variables": {"id": match["id"]}}).json()["data"]["startReplay"]
    drain()
    typed = client.post("/graphql", json={"query": """query($id: ID!) { replay(id: $id) { ... on ReplayJob {
        replay { frames { auto { seat reason default turnSeconds } } } } } }""", "variables": {"id": job["id"]}}).json()
    assert [f["auto"] and {"seat": f["auto"]["seat"], "reason": f["auto"]["reason"], "default": f["auto"]["default"],
                           "turn_seconds": f["auto"]["turnSeconds"]}
            for f in typed["data"]["replay"]["replay"]["frames"]] == [None] + expected + [None] * len(later)


def test_the_timer_default_is_a_pass_where_one_is_legal():
    from workers.jobs import default_action
    import random

    assert default_action([{"type": "play_card"}, {"type": "pass"}], None, random.Random(1)) == ({"type": "pass"},
                                                                                                   "pass")


def test_a_player_hands_its_seat_to_a_bot_mid_match(client, drain):
    """Issue #7: "Any seat can be given to a bot at match creation or later": a
    player's own seat, handed over with its token, which stops working at once."""
    match = create(client, "casting-stones", seed=8, bots=[{"seat": 1, "level": "random"}])
    human = client.post(f"/v1/matches/{match['id']}/seats", json={"name": "ann", "seat": 0}).json()
    auth = {"Authorization": f"Bearer {human['token']}"}
    drain()
    state = get(client, match["id"], human["token"])
    action = client.get(f"/v1/matches/{match['id']}/legal-actions", headers=auth).json()["actions"][0]
    assert client.post(f"/v1/matches/{match['id']}/actions", json={"action": action},
                       headers={**auth, "If-Match": f'"{state["version"]}"'}).status_code == 200
    someone_else = client.post(f"/v1/matches/{match['id']}/bots", json={"level": "greedy", "seat": 0})
    assert someone_else.status_code == 409 and someone_else.json()["code"] == "seat_taken"
    wrong_seat = client.post(f"/v1/matches/{match['id']}/bots", json={"level": "greedy", "seat": 1}, headers=auth)
    # Issue #22 (13): a good token naming another seat is 403 not_your_seat, not a 401 that asks to re-authenticate.
    assert wrong_seat.status_code == 403 and wrong_seat.json()["code"] == "not_your_seat"
    handed = client.post(f"/v1/matches/{match['id']}/bots", json={"level": "greedy"}, headers=auth)
    assert handed.status_code == 201, handed.text
    assert handed.json()["seat"] == 0 and handed.json()["match"]["seats"][0]["bot"] == "greedy"
    revoked = client.get(f"/v1/matches/{match['id']}", headers=auth)
    assert revoked.status_code == 401 and revoked.json()["code"] == "invalid_token"
    drain()
    final = get(client, match["id"])
    assert final["status"] == "finished" and final["result"] is not None


# -- the board itself (McGonagall's chess) ------------------------------------------------------


def chess_against_the_board(client, **body) -> tuple[str, dict]:
    """A McGonagall match (abbreviated rules) with one human seat (0) and one bot seat (1), both black:
    white is held by no player, so the board plays it through the workers. Seat 1 places its Harry as a
    human, then hands its seat to a bot (the bot's own bishop choice could take white)."""
    match = create(client, "sorcerers-stone", variant="mcgonagall", seats=2, seed=6, **body)
    tokens = [client.post(f"/v1/matches/{match['id']}/seats", json={"name": n}).json()["token"]
              for n in ("ann", "bob")]
    for seat, bishop in ((0, "c8"), (1, "f8")):
        submit(client, match["id"], tokens[seat], {"type": "mcgonagall_replace", "bishop": bishop})
    handed = client.post(f"/v1/matches/{match['id']}/bots", json={"level": "random"},
                         headers={"Authorization": f"Bearer {tokens[1]}"})
    assert handed.status_code == 201, handed.text
    return match["id"], {"ann": tokens[0]}


def submit(client, match_id: str, token: str, action: dict) -> dict:
    version = get(client, match_id, token)["version"]
    response = client.post(f"/v1/matches/{match_id}/actions", json={"action": action},
                           headers={"Authorization": f"Bearer {token}", "If-Match": f'"{version}"'})
    assert response.status_code == 200, response.text
    return response.json()


def human_moves(client, match_id: str, token: str) -> dict:
    """Ann plays her first legal action; returns the match after it."""
    action = client.get(f"/v1/matches/{match_id}/legal-actions",
                        headers={"Authorization": f"Bearer {token}"}).json()["actions"][0]
    return submit(client, match_id, token, action)["match"]


def test_the_board_is_played_by_the_workers(client, drain, rq_connection, key_prefix):
    """DESIGN.md: "In McGonagall's chess, the side that no player sits on is played by the board itself,
    through the bot workers": after each player's move the match waits on the board (-1), a real RQ worker
    plays its answer (job ``...-board``), and the turn goes on to the next seat."""
    match_id, tokens = chess_against_the_board(client)
    ann = tokens["ann"]
    for _ in range(4):
        after = human_moves(client, match_id, ann)
        assert after["to_act"] == [BOARD_SEAT] and after["view"]["boards"]["mcgonagall"]["board_to_move"]
        job_id = bot_job_id(key_prefix, match_id, after["version"], BOARD_SEAT)
        assert job_id.endswith(f"-{after['version']}-board")
        drain()  # the board answers; the bot seat moves; the board answers it; Ann's turn again
        assert Job.fetch(job_id, connection=rq_connection).return_value()["outcome"] == "played"
        state = get(client, match_id, ann)
        if state["status"] == "finished":
            break
        assert state["to_act"] == [0]
    entries = log_entries(rq_connection, key_prefix, match_id)
    seats = [int(e["seat"]) for e in entries]
    assert seats[:2] == [0, 1] and BOARD_SEAT in seats
    for before, entry in zip(entries[2:], entries[3:]):  # every player's move is answered by the board
        if before["status"] == "active":
            assert (int(before["seat"]) == BOARD_SEAT) != (int(entry["seat"]) == BOARD_SEAT)
    board_moves = [json.loads(e["events"])[0] for e in entries if int(e["seat"]) == BOARD_SEAT]
    assert all(m["seat"] is None and m["colour"] == "white" for m in board_moves)
    assert not rq_connection.zcard(f"{key_prefix}:bots:pending")
    history = client.get(f"/v1/matches/{match_id}/history", headers={"Authorization": f"Bearer {ann}"}).json()
    board_entries = [e for e in history["entries"] if e["seat"] == BOARD_SEAT]
    assert board_entries and all(e["action"] is None and e["events"] for e in board_entries)
    # Ann hands her seat to a bot: the bots and the board play the match out, and it replays, verified.
    handed = client.post(f"/v1/matches/{match_id}/bots", json={"level": "greedy"},
                         headers={"Authorization": f"Bearer {ann}"})
    assert handed.status_code == 201, handed.text
    drain()
    assert get(client, match_id)["status"] == "finished"
    mine = replay(client, drain, match_id, 0)
    assert mine["verified"], mine["mismatches"]
    by_board = [f for f in mine["frames"] if f["seat"] == BOARD_SEAT]
    # the board's moves are public: seat 0 sees each one's events, as for any other seat's move
    assert by_board and all(f["action"] is None and f["events"][0]["seat"] is None for f in by_board)
    spectator = replay(client, drain, match_id, None)
    assert all(f["action"]["type"].startswith("mcgonagall_board_") for f in spectator["frames"]
               if f["seat"] == BOARD_SEAT)


def test_nobody_can_act_as_the_board(client, drain):
    """While the match waits on the board, a player's action -- the board's own one included -- is refused
    with not_your_turn, through REST and GraphQL; a seat number of -1 is no seat."""
    match_id, tokens = chess_against_the_board(client)
    ann = tokens["ann"]
    after = human_moves(client, match_id, ann)
    assert after["to_act"] == [BOARD_SEAT]
    board_move = {"type": "mcgonagall_board_move", "uci": "g1f3"}
    auth = {"Authorization": f"Bearer {ann}"}
    assert client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth).json()["actions"] == []
    refused = client.post(f"/v1/matches/{match_id}/actions", json={"action": board_move},
                          headers={**auth, "If-Match": f'"{after["version"]}"'})
    assert refused.status_code == 409 and refused.json()["code"] == "not_your_turn"
    assert "board" in refused.json()["detail"]
    mutation = """mutation($input: SubmitActionInput!) { submitAction(input: $input) {
                    __typename ... on Problem { code message } } }"""
    answer = client.post("/graphql", headers=auth, json={"query": mutation, "variables": {"input": {
        "matchId": match_id, "expectedVersion": after["version"],
        "action": {"sorcerersStone": {"type": "MCGONAGALL_BOARD_MOVE", "uci": "g1f3"}}}}}).json()
    assert answer["data"]["submitAction"]["__typename"] == "NotYourTurn", answer
    assert answer["data"]["submitAction"]["code"] == "NOT_YOUR_TURN"
    joined = client.post("/graphql", json={"query": """mutation($id: ID!) { joinMatch(input: {matchId: $id,
        name: "eve", seat: -1}) { __typename ... on Problem { code } } }""", "variables": {"id": match_id}}).json()
    assert joined["data"]["joinMatch"] == {"__typename": "NoSuchSeat", "code": "NO_SUCH_SEAT"}
    assert get(client, match_id)["version"] == after["version"]  # nothing was played
    drain()
    assert get(client, match_id)["to_act"] == [0]


def test_duplicate_board_jobs_play_one_move(client, drain, worker_runtime, rq_connection, key_prefix):
    match_id, tokens = chess_against_the_board(client)
    version = human_moves(client, match_id, tokens["ann"])["version"]
    dispatcher = worker_runtime.dispatcher(rq_connection)
    assert dispatcher.enqueue_bot(match_id, version, BOARD_SEAT) is False  # the listener's job already exists
    assert dispatcher.enqueue_bot(match_id, version, BOARD_SEAT, attempt=1) is True
    assert dispatcher.enqueue_bot(match_id, version, BOARD_SEAT, attempt=2) is True
    drain()
    entries = log_entries(rq_connection, key_prefix, match_id)
    assert [int(e["seat"]) for e in entries if e["version"] == version + 1] == [BOARD_SEAT]
    outcomes = sorted(Job.fetch(bot_job_id(key_prefix, match_id, version, BOARD_SEAT, a), connection=rq_connection)
                      .return_value()["outcome"] for a in range(3))
    assert outcomes.count("played") == 1 and set(outcomes) <= {"played", "stale", "conflict", "duplicate"}


def test_the_watchdog_recovers_a_lost_board_job(client, drain, worker_runtime, rq_connection, key_prefix):
    """A board job lost before it ran (its note still pending past the watchdog period) is enqueued
    again as attempt 1 by the sweep, and played."""
    match_id, tokens = chess_against_the_board(client)
    version = human_moves(client, match_id, tokens["ann"])["version"]
    lost = bot_job_id(key_prefix, match_id, version, BOARD_SEAT)
    Job.fetch(lost, connection=rq_connection).delete()  # as if a worker had died with it
    pending = f"{key_prefix}:bots:pending"
    member = f"{match_id}|{version}|{BOARD_SEAT}"
    rq_connection.zadd(pending, {member: 0}, xx=True)  # enqueued long ago
    rq_connection.delete(f"{key_prefix}:bots:sweep-lock")  # another test's worker may have swept just now
    dispatcher = worker_runtime.dispatcher(rq_connection)

    async def sweep() -> int:
        async with worker_runtime.store() as store:
            return await dispatcher.sweep(store)

    assert asyncio.run(sweep()) >= 1  # this one, and any other test's stale note
    drain()
    retry = Job.fetch(bot_job_id(key_prefix, match_id, version, BOARD_SEAT, 1), connection=rq_connection)
    assert retry.return_value()["outcome"] == "played"
    assert get(client, match_id)["version"] > version and rq_connection.zscore(pending, member) is None


def test_no_turn_timer_runs_for_the_board(client, drain, rq_connection, key_prefix):
    """Turn timers are for human seats: while the match waits on the board, its job is a bot move, and no
    timer is scheduled (nor for the last seat, which ``seats[-1]`` would have named)."""
    match_id, tokens = chess_against_the_board(client, turn_seconds=600)
    version = human_moves(client, match_id, tokens["ann"])["version"]
    assert Job.exists(bot_job_id(key_prefix, match_id, version, BOARD_SEAT), connection=rq_connection)
    for seat in (BOARD_SEAT, 0, 1):
        assert not Job.exists(timer_job_id(key_prefix, match_id, version, seat), connection=rq_connection)
    drain()
    after = get(client, match_id)
    assert after["to_act"] == [0]
    assert Job.exists(timer_job_id(key_prefix, match_id, after["version"], 0), connection=rq_connection)
    for v in range(after["version"] + 1):  # no timer of this match may fire in a later test
        for seat in (0, 1):
            if Job.exists(timer_job_id(key_prefix, match_id, v, seat), connection=rq_connection):
                Job.fetch(timer_job_id(key_prefix, match_id, v, seat), connection=rq_connection).delete()


def test_the_watchdog_leaves_a_game_it_lacks_to_a_worker_that_has_it(client, worker_runtime, rq_connection,
                                                                      key_prefix):
    """A worker of a release without a match's game (a rolling deployment; here one without the tests'
    high-card) skips that lost bot move, which stays pending for a worker with the game, and still sweeps
    the others. Before, UnknownGame ended its whole sweep, every period, so no lost move was recovered."""
    unknown = client.post("/v1/matches", json={"game": "high-card", "bots": [{"seat": 0, "level": "random"},
                                                                             {"seat": 1, "level": "random"}]}).json()
    known, tokens = chess_against_the_board(client)
    version = human_moves(client, known, tokens["ann"])["version"]
    Job.fetch(bot_job_id(key_prefix, known, version, BOARD_SEAT), connection=rq_connection).delete()
    pending = f"{key_prefix}:bots:pending"
    lost = [f"{unknown['id']}|0|{seat}" for seat in unknown["to_act"]] + [f"{known}|{version}|{BOARD_SEAT}"]
    rq_connection.zadd(pending, {member: 0 for member in lost}, xx=True)
    rq_connection.delete(f"{key_prefix}:bots:sweep-lock")
    without = runtime.Runtime(worker_runtime.settings, {g: game for g, game in worker_runtime.games.items()
                                                         if g != "high-card"})

    async def sweep() -> int:
        async with without.store() as store:
            return await without.dispatcher(rq_connection).sweep(store)

    assert asyncio.run(sweep()) >= 1
    assert Job.exists(bot_job_id(key_prefix, known, version, BOARD_SEAT, 1), connection=rq_connection)
    assert all(rq_connection.zscore(pending, member) is not None for member in lost[:-1])  # left pending
    assert all(not Job.exists(bot_job_id(key_prefix, unknown["id"], 0, seat, 1), connection=rq_connection)
               for seat in unknown["to_act"])
