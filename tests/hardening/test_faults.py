"""Faults survived, with real processes: a redis-server and ``grimoire serve``
started by the test (issue #10, "Faults").

* Redis stopped under load: every request gets an answer (503 with
  Retry-After, never another 5xx, never a hang), readiness fails, the service
  serves again within 2 s of Redis returning, and every action that got a
  success response is in the match's log afterwards.
* A service process killed (SIGKILL) in the middle of many writes leaves no
  half-written match: each match's version equals its log's length and its
  stored state is what re-applying the log to the seed gives.

(A worker killed mid-job is tests/workers/test_jobs.py::test_a_killed_workers_job_is_recovered.)
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import httpx
import redis

from schema.game_types import screaming
from service.games import all_games
from service.store.archive import decode
from service.store.embedded import EmbeddedRedis, free_port
from tests.support.processes import Service, logged_actions

GAME = "casting-stones"
#: A request answered later than this counts as a hang (the Redis timeouts are 2 s to connect, 5 s to read).
HANG_SECONDS = 8.0


def new_match(http: httpx.Client, seed: int) -> tuple[str, list[str]]:
    match_id = http.post("/v1/matches", json={"game": GAME, "seed": seed}).json()["id"]
    tokens = [http.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"}).json()["token"] for i in range(2)]
    return match_id, tokens


class Player(threading.Thread):
    """Plays one match as fast as it can; remembers every action the service accepted."""

    def __init__(self, base: str, match_id: str, tokens: list[str], stop: threading.Event):
        super().__init__(daemon=True)
        self.base, self.match_id, self.tokens, self.stop = base, match_id, tokens, stop
        self.accepted: dict[int, dict] = {}  # version -> the action
        self.statuses: list[tuple[float, float, int, str | None]] = []  # (sent, answered, status, Retry-After)
        self.hangs = 0
        self.disconnects = 0

    def _call(self, http: httpx.Client, method: str, path: str, **kwargs) -> httpx.Response | None:
        started = time.monotonic()
        try:
            response = http.request(method, path, **kwargs)
        except httpx.TimeoutException:
            self.hangs += 1
            return None
        except httpx.TransportError:  # the service went away (the kill test)
            self.disconnects += 1
            return None
        self.statuses.append((started, time.monotonic(), response.status_code, response.headers.get("retry-after")))
        return response

    def run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=HANG_SECONDS) as http:
            while not self.stop.is_set():
                match = self._call(http, "GET", f"/v1/matches/{self.match_id}")
                if match is None or match.status_code != 200:
                    time.sleep(0.05)
                    continue
                body = match.json()
                if body["status"] == "finished":
                    return
                seat = body["to_act"][0]
                auth = {"Authorization": f"Bearer {self.tokens[seat]}"}
                legal = self._call(http, "GET", f"/v1/matches/{self.match_id}/legal-actions", headers=auth)
                if legal is None or legal.status_code != 200 or legal.json()["version"] != body["version"]:
                    continue
                action = legal.json()["actions"][body["version"] % len(legal.json()["actions"])]
                sent = self._call(http, "POST", f"/v1/matches/{self.match_id}/actions", json={"action": action},
                                  headers={**auth, "If-Match": f'"{body["version"]}"'})
                if sent is not None and sent.status_code == 200:
                    self.accepted[sent.json()["version"]] = action


def start_players(base: str, matches: list[tuple[str, list[str]]]) -> tuple[threading.Event, list[Player]]:
    """One Player per match, started; set the event to stop them."""
    stop = threading.Event()
    players = [Player(base, match_id, tokens, stop) for match_id, tokens in matches]
    for player in players:
        player.start()
    return stop, players


def test_redis_stopped_under_load_gets_503_and_recovers_within_2s(tmp_path, key_prefix):
    port = free_port()
    server = EmbeddedRedis(tmp_path / "redis", port=port)
    service = Service(server.url, key_prefix, tmp_path / "serve.log")
    try:
        with httpx.Client(base_url=service.base, timeout=HANG_SECONDS) as http:
            matches = [new_match(http, seed) for seed in range(4)]
            stop, players = start_players(service.base, matches)
            time.sleep(1.5)
            before = sum(len(p.accepted) for p in players)
            assert before > 0, "no action was accepted before the fault"

            server.stop()
            stopped_at = time.monotonic()
            time.sleep(2.0)
            ready = http.get("/readyz")
            assert ready.status_code == 503 and ready.headers["retry-after"]
            refused = http.post("/v1/matches", json={"game": GAME})
            assert refused.status_code == 503 and refused.json()["code"] == "service_unavailable"
            assert refused.headers["retry-after"] and "Traceback" not in refused.text

            restarting_at = time.monotonic()
            server = EmbeddedRedis(tmp_path / "redis", port=port)
            back_at = time.monotonic()  # it answers PING
            while http.get(f"/v1/matches/{matches[0][0]}").status_code != 200:
                assert time.monotonic() - back_at < 2.0, "the service did not serve again within 2 s"
                time.sleep(0.02)
            recovered_in = time.monotonic() - back_at
            while http.get("/readyz").status_code != 200:
                assert time.monotonic() - back_at < 2.0, "readiness did not pass again within 2 s"
                time.sleep(0.02)
            time.sleep(1.0)
            stop.set()
            for player in players:
                player.join(HANG_SECONDS * 2)

            statuses = [s for p in players for s in p.statuses]
            # answered while Redis was down (a request sent then may also finish after it returned)
            during = [(status, retry) for sent, answered, status, retry in statuses
                      if stopped_at <= sent and answered < restarting_at]
            assert during and all(status == 503 and retry for status, retry in during), sorted(set(during))
            assert not [s for _, _, s, _ in statuses if s >= 500 and s != 503]
            assert sum(p.hangs + p.disconnects for p in players) == 0
            after = sum(len(p.accepted) for p in players)
            assert after > before, "no action was accepted after Redis came back"
            for player, (match_id, tokens) in zip(players, matches):
                logged = logged_actions(http, match_id, tokens)
                for version, action in player.accepted.items():
                    assert logged.get(version) == action, f"accepted action v{version} of {match_id} is lost"
        print(f"recovered in {recovered_in * 1000:.0f} ms; {len(statuses)} requests, {len(during)} during the fault")
    finally:
        service.stop()
        server.stop()


def stored_match(client: redis.Redis, prefix: str, match_id: str) -> tuple[dict, list[dict]]:
    key = f"{prefix}:m:{{{match_id}}}"
    record = {k.decode(): v.decode() for k, v in client.hgetall(key).items()}
    upto, archived = decode(client.get(f"{key}:log:z"))
    raw = [(i.decode(), {k.decode(): v.decode() for k, v in f.items()})
           for i, f in client.xrange(f"{key}:log", f"({upto}-0", "+")]
    return record, [{"version": int(i.split("-")[0]), **f} for i, f in archived + raw]


def test_a_service_killed_mid_request_leaves_no_half_written_match(tmp_path, redis_url, key_prefix):
    games = all_games()
    service = Service(redis_url, key_prefix, tmp_path / "serve.log")
    with httpx.Client(base_url=service.base, timeout=HANG_SECONDS) as http:
        matches = [new_match(http, seed) for seed in range(6)]
    stop, players = start_players(service.base, matches)
    time.sleep(1.5)
    service.process.send_signal(signal.SIGKILL)  # mid-request: six players keep several requests in flight
    service.process.wait(10)
    stop.set()
    for player in players:
        player.join(HANG_SECONDS * 2)
    service.log.close()

    client = redis.Redis.from_url(redis_url)
    game = games[GAME]
    checked = 0
    for player, (match_id, _tokens) in zip(players, matches):
        record, log = stored_match(client, key_prefix, match_id)
        assert int(record["version"]) == len(log) == max([0, *[e["version"] for e in log]])
        assert [e["version"] for e in log] == list(range(1, len(log) + 1))
        options = json.loads(record["options"])
        state = game.setup(options, int(record["seats"]), int(record["seed"]))
        for entry in log:
            state, _events = game.apply(state, int(entry["seat"]), json.loads(entry["action"]))
        assert json.loads(record["state"]) == state, f"match {match_id}: the stored state is not its log's"
        assert json.loads(record["to_act"]) == sorted(game.to_act(state))
        for version, action in player.accepted.items():
            assert json.loads(log[version - 1]["action"]) == action
        checked += len(log)
    assert checked > 0
    client.close()


GQL_SUBMIT = """mutation($input: SubmitActionInput!) { submitAction(input: $input) {
  __typename ... on ActionAccepted { version duplicate } ... on Problem { code } } }"""
GQL_READ = """query($id: ID!) { match(id: $id) { __typename ... on Match { version status } } }"""


def test_graphql_answers_503_through_a_frozen_and_a_killed_redis(tmp_path, key_prefix):
    """Issue #23, items 2 and 12: GraphQL queries and mutations answer 503 with Retry-After and a coded,
    masked error within the store's timeout while Redis is frozen (SIGSTOP) or gone; after it returns
    the match is intact, and a mutation whose fate was unknown is settled by its idempotency key."""
    port = free_port()
    server = EmbeddedRedis(tmp_path / "redis", port=port)
    service = Service(server.url, key_prefix, tmp_path / "serve.log")
    try:
        with httpx.Client(base_url=service.base, timeout=HANG_SECONDS) as http:
            match_id, tokens = new_match(http, seed=7)

            def next_action():
                body = http.get(f"/v1/matches/{match_id}").json()
                auth = {"Authorization": f"Bearer {tokens[body['to_act'][0]]}"}
                legal = http.get(f"/v1/matches/{match_id}/legal-actions", headers=auth).json()
                action = legal["actions"][0]  # as REST has it; GraphQL's enum values are SCREAMING_CASE
                return body["version"], auth, {"castingStones": {**action, "type": screaming(action["type"])}}

            def submit(version, auth, action, key):
                started = time.monotonic()
                response = http.post("/graphql", headers=auth, json={"query": GQL_SUBMIT, "variables": {
                    "input": {"matchId": match_id, "expectedVersion": version, "action": action,
                              "idempotencyKey": key}}})
                return response, time.monotonic() - started

            def assert_unavailable(response, took):
                assert took < HANG_SECONDS
                assert response.status_code == 503 and response.headers["retry-after"] == "1"
                error = response.json()["errors"][0]
                assert error["extensions"]["code"] == "service_unavailable"
                assert str(port) not in response.text and "Error" not in error["message"]

            version, auth, action = next_action()
            assert submit(version, auth, action, "before")[0].json()["data"]["submitAction"]["version"] == version + 1

            for fault in ("freeze", "kill"):
                version, auth, action = next_action()
                if fault == "freeze":
                    os.kill(server.process.pid, signal.SIGSTOP)
                else:
                    server.stop()
                started = time.monotonic()
                read = http.post("/graphql", json={"query": GQL_READ, "variables": {"id": match_id}})
                assert_unavailable(read, time.monotonic() - started)
                assert_unavailable(*submit(version, auth, action, f"during-{fault}"))
                if fault == "freeze":
                    os.kill(server.process.pid, signal.SIGCONT)
                else:
                    server = EmbeddedRedis(tmp_path / "redis", port=port)
                deadline = time.monotonic() + 5
                while http.post("/graphql", json={"query": GQL_READ, "variables": {"id": match_id}}).status_code != 200:
                    assert time.monotonic() < deadline, "GraphQL did not serve again within 5 s"
                    time.sleep(0.05)
                # the frozen Redis may have run the script after the client gave up: the key tells
                retried, _ = submit(version, auth, action, f"during-{fault}")
                outcome = retried.json()["data"]["submitAction"]
                assert outcome["__typename"] == "ActionAccepted" and outcome["version"] == version + 1, outcome
                assert http.get(f"/v1/matches/{match_id}").json()["version"] == version + 1
            assert len(logged_actions(http, match_id, tokens)) == version + 1
    finally:
        service.stop()
        server.stop()
