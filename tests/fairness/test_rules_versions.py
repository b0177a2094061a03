"""Rules pinned per match (issue 21): every match records its game's rules version at creation; the version
changes whenever a game's behaviour does; a process (or worker) without a match's version never touches it
with other rules -- 503 ``rules_version_unavailable`` with Retry-After, nothing written.

The two-process, side-by-side case is in test_rolling_rules.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from service.app import create_app
from service.engine import load_data
from service.games import all_games
from service.store.errors import RulesVersionUnavailable
from tests.games.test_golden_playouts import match_digest
from tests.support.processes import ROOT

FINGERPRINTS = Path(__file__).with_name("rules_fingerprints.json")
#: Seeded random matches per variant in a fingerprint (tests/games/test_golden_playouts.py plays 50 of them;
#: a handful per variant already covers every rule a variant uses, in a few seconds).
FINGERPRINT_MATCHES = 4
GAMES = all_games()
PACKAGES = {game_id: type(game).__module__.rsplit(".", 1)[0] for game_id, game in GAMES.items()}


def fingerprint(game) -> str:
    """The digest of a game's behaviour: the golden playouts' per-match digests (every state, event, legal
    list, result and view of seeded random matches) of every variant."""
    digests = {variant: [match_digest(game, variant, seed) for seed in range(FINGERPRINT_MATCHES)]
               for variant in game.variant_ids()}
    return hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()


def test_every_game_reads_its_rules_version_from_its_data_file():
    for game_id, game in GAMES.items():
        data = load_data(PACKAGES[game_id], "rules_version.json")
        assert game.rules_version == data["version"] and data["version"] in data["history"], game_id


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_game_whose_behaviour_changes_changes_its_rules_version(game_id):
    """The golden playouts of a game, digested, are recorded per rules version (rules_fingerprints.json):
    a rules module or data file that plays differently under an unchanged version fails here. Bump
    ``version`` in the game's rules_version.json (with a line of history), then record the new version's
    fingerprint: GRIMOIRE_RULES_FINGERPRINTS=record pytest tests/fairness/test_rules_versions.py. A recorded
    version's fingerprint is never rewritten."""
    game = GAMES[game_id]
    recorded = json.loads(FINGERPRINTS.read_text()) if FINGERPRINTS.exists() else {}
    known = recorded.setdefault(game_id, {})
    current = fingerprint(game)
    if game.rules_version not in known and os.environ.get("GRIMOIRE_RULES_FINGERPRINTS") == "record":
        known[game.rules_version] = current
        FINGERPRINTS.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    assert game.rules_version in known, (f"{game_id} rules version {game.rules_version} has no fingerprint; "
                                         "record it (this test's docstring)")
    assert known[game.rules_version] == current, (
        f"{game_id} plays differently from its rules version {game.rules_version}: bump the version in "
        f"{PACKAGES[game_id].replace('.', '/')}/rules_version.json (docs/operations.md, 'Rolling out a rules "
        "change'), then record its fingerprint")
    assert len(set(known.values())) == len(known), f"two {game_id} versions play the same: one is not needed"


def test_the_fingerprint_sees_a_one_card_change(monkeypatch):
    """What the guard above rests on: changing one number in a rules module changes the fingerprint."""
    from service.games.quidditch import rules

    before = fingerprint(GAMES["quidditch"])
    monkeypatch.setattr(rules, "HAND_SIZE", rules.HAND_SIZE - 1)
    assert fingerprint(GAMES["quidditch"]) != before


def test_an_operators_casting_cards_are_part_of_the_rules_version(tmp_path):
    """Extra Casting Cards (GRIMOIRE_CASTING_CARDS) change what a match can play: the version says so, so a
    process with other cards (or none) never plays such a match."""
    from tests.games.casting_stones.test_cards import GOOD

    path = tmp_path / "cards.json"
    path.write_text(json.dumps({"cards": [GOOD]}))
    code = "from service.games import all_games; print(all_games()['casting-stones'].rules_version)"
    ran = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "GRIMOIRE_CASTING_CARDS": str(path)})
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip().startswith(f"{GAMES['casting-stones'].rules_version}+cards.")
    assert len(ran.stdout.strip().rsplit(".", 1)[1]) == 12


def test_a_match_records_the_rules_version_on_both_apis(client):
    created = client.post("/v1/matches", json={"game": "spells-and-potions"}).json()
    assert created["rules_version"] == GAMES["spells-and-potions"].rules_version
    assert client.get("/v1/games/spells-and-potions").json()["rules_version"] == created["rules_version"]
    query = ('query($id: ID!) { game(id: "spells-and-potions") { rulesVersion } '
             'match(id: $id) { ... on Match { rulesVersion } } }')
    data = client.post("/graphql", json={"query": query, "variables": {"id": created["id"]}}).json()["data"]
    assert data == {"game": {"rulesVersion": created["rules_version"]}, "match": {"rulesVersion": created["rules_version"]}}


def _newer(game):
    """The same game at another rules version, as a newer release would ship it."""
    return type(type(game).__name__, (type(game),), {"rules_version": f"{game.rules_version}-next"})()


@pytest.fixture(scope="module")
def newer_client(settings, games):
    """A second app on the same Redis whose Quidditch is a newer rules version (and lacks the current one)."""
    with TestClient(create_app(settings, games={**games, "quidditch": _newer(games["quidditch"])})) as other:
        yield other


def _raw(redis_url, key_prefix, match_id) -> tuple:
    """Every byte a match has in Redis: its hash and its log (stream and archive)."""
    import redis

    client = redis.Redis.from_url(redis_url)
    key = f"{key_prefix}:m:{{{match_id}}}"
    try:
        return client.hgetall(key), client.xrange(f"{key}:log"), client.get(f"{key}:log:z")
    finally:
        client.close()


def _auth(token):
    return {"Authorization": f"Bearer {token}"}


def _refused(response):
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "1"
    assert response.json()["code"] == "rules_version_unavailable"
    return response


def test_a_process_without_the_matchs_rules_version_answers_503_and_writes_nothing(client, newer_client, redis_url,
                                                                                 key_prefix):
    """Every REST operation and GraphQL query or mutation on a match, through a process that has only another
    version of its game, is a 503 with Retry-After (a load balancer retries elsewhere); nothing is written."""
    match_id = client.post("/v1/matches", json={"game": "quidditch", "seats": 2}).json()["id"]
    first = client.post(f"/v1/matches/{match_id}/seats", json={"name": "Ann"}).json()["token"]
    _refused(newer_client.post(f"/v1/matches/{match_id}/seats", json={"name": "Bob"}))
    _refused(newer_client.post(f"/v1/matches/{match_id}/bots", json={"level": "random"}))
    second = client.post(f"/v1/matches/{match_id}/seats", json={"name": "Bob"}).json()["token"]
    match = client.get(f"/v1/matches/{match_id}").json()
    seat = match["to_act"][0]
    token = (first, second)[seat]
    action = client.get(f"/v1/matches/{match_id}/legal-actions", headers=_auth(token)).json()["actions"][0]
    before = _raw(redis_url, key_prefix, match_id)
    auth = _auth(token)
    _refused(newer_client.get(f"/v1/matches/{match_id}"))
    _refused(newer_client.get(f"/v1/matches/{match_id}", headers=auth))
    _refused(newer_client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth))
    _refused(newer_client.get(f"/v1/matches/{match_id}/history", headers=auth))
    _refused(newer_client.get(f"/v1/matches/{match_id}/record"))
    _refused(newer_client.get(f"/v1/matches/{match_id}/events", params={"format": "ndjson"}))
    _refused(newer_client.post(f"/v1/matches/{match_id}/actions", json={"action": action},
                               headers={**auth, "If-Match": f'"{match["version"]}"', "Idempotency-Key": "k1"}))
    _refused(newer_client.delete(f"/v1/matches/{match_id}/seats/{seat}", headers=auth))
    _refused(newer_client.post(f"/v1/matches/{match_id}/bots", json={"level": "random"}, headers=auth))
    query = "query($id: ID!) { match(id: $id) { ... on Match { version view { __typename } } } }"
    answer = newer_client.post("/graphql", json={"query": query, "variables": {"id": match_id}})
    assert answer.status_code == 503 and answer.headers["retry-after"] == "1"
    assert answer.json()["errors"][0]["extensions"]["code"] == "rules_version_unavailable"
    mutation = ("mutation($m: ID!, $v: Int!, $a: ActionInput!) { submitAction(input: {matchId: $m, "
                "expectedVersion: $v, action: $a}) { __typename } }")
    answer = newer_client.post("/graphql", headers=auth, json={"query": mutation, "variables": {
        "m": match_id, "v": match["version"], "a": {"quidditch": _graphql(action)}}})
    assert answer.status_code == 503 and answer.json()["errors"][0]["extensions"]["code"] == "rules_version_unavailable"
    assert _raw(redis_url, key_prefix, match_id) == before  # not a byte written
    accepted = client.post(f"/v1/matches/{match_id}/actions", json={"action": action},
                           headers={**auth, "If-Match": f'"{match["version"]}"', "Idempotency-Key": "k1"})
    assert accepted.status_code == 200 and not accepted.json()["duplicate"]  # the key was never used

    newer = newer_client.post("/v1/matches", json={"game": "quidditch"}).json()
    assert newer["rules_version"] == _newer(GAMES["quidditch"]).rules_version
    _refused(client.get(f"/v1/matches/{newer['id']}"))
    assert client.get(f"/v1/matches/{match_id}/record").json()["rules_version"] == GAMES["quidditch"].rules_version


def _graphql(action: dict) -> dict:
    """A Quidditch action's fields as GraphQL input (camelCase keys; the type as its enum value)."""
    out = {}
    for key, value in action.items():
        name = key.split("_")[0] + "".join(p.capitalize() for p in key.split("_")[1:])
        out[name] = value.upper() if key == "type" else value
    return out


def test_workers_without_the_rules_version_defer_bot_moves_timers_and_replays(worker_runtime, settings, games,
                                                                             rq_connection, key_prefix):
    """A bot move or turn timer for a match whose rules version the worker lacks is enqueued again for later
    (another worker may have it) and plays nothing; a replay job fails and is retried; the watchdog passes
    over it. A worker with the version then plays the move."""
    import asyncio

    from rq.registry import ScheduledJobRegistry

    from workers import jobs, runtime
    from workers.dispatch import queue_names

    async def start() -> tuple[str, int, int]:
        async with worker_runtime.store() as store:
            match = await store.create("quidditch", turn_seconds=30)
            await store.join(match.id, "Ann")
            match, seat, _ = await store.join(match.id, "bot", bot={"level": "random"})
            return match.id, match.version, seat

    match_id, version, seat = asyncio.run(start())
    other = {**games, "quidditch": _newer(games["quidditch"])}
    runtime.configure(settings, other)
    try:
        outcome = jobs.play_bot(match_id, version, seat)
        assert outcome == {"outcome": "rules_version_unavailable", "rules_version": "1", "deferred": True}
        assert jobs.turn_timeout(match_id, version, 1 - seat)["outcome"] == "rules_version_unavailable"
        with pytest.raises(RulesVersionUnavailable):
            jobs.build_replay(match_id, None)
        names = queue_names(key_prefix)
        scheduled = set(ScheduledJobRegistry(names["bots"], connection=rq_connection).get_job_ids())
        assert any(job.startswith(f"{key_prefix}-bot-{match_id}-{version}-{seat}-d1") for job in scheduled)
        timers = set(ScheduledJobRegistry(names["timers"], connection=rq_connection).get_job_ids())
        assert any(job.endswith(f"-timer-{match_id}-{version}-{1 - seat}-d1") for job in timers)

        async def untouched():
            async with worker_runtime.store() as store:
                return (await store.get(match_id)).version
        assert asyncio.run(untouched()) == version
    finally:
        runtime.configure(settings, games)
    assert jobs.play_bot(match_id, version, seat)["outcome"] == "played"
