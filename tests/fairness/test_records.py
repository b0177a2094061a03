"""Match records and the offline verifier (issue 21, "Match records and an offline verifier").

A finished match of every game is played through the store, its record read over REST and GraphQL,
and checked by :func:`service.fairness.verify.verify_record` and by ``grimoire verify`` in a process
of its own that has no Redis. Each kind of tampering the issue names -- an action changed, two
swapped, a hash edited, a different seed -- is refused, naming the first action that fails.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

from service.engine import seeds
from service.fairness.verify import verify_record
from service.games import all_games
from tests.support.processes import ROOT

from .support import CASE_IDS, CASES, active_at, play_out, seated

pytestmark = pytest.mark.anyio

RECORD_QUERY = """query Record($id: ID!) { match(id: $id) { ... on Match { record {
  document format matchId game rulesVersion seedSource seedCommitment revealedSeed rngSeed initialStateHash
  entropies { seat entropy generated } disclosure seat status version
  actions { version seat stateHash action { __typename } } result { winners cause } } } } }"""


def _auth(token: str | None) -> dict:
    return {"Authorization": f"Bearer {token}"} if token else {}


def rest_record(client, match_id: str, token: str | None = None) -> dict:
    response = client.get(f"/v1/matches/{match_id}/record", headers=_auth(token))
    assert response.status_code == 200, response.text
    assert response.headers["etag"] == f'"{response.json()["version"]}"'
    return response.json()


def graphql_record(client, match_id: str, token: str | None = None) -> dict:
    response = client.post("/graphql", json={"query": RECORD_QUERY, "variables": {"id": match_id}},
                           headers=_auth(token))
    body = response.json()
    assert response.status_code == 200 and "errors" not in body, body
    return body["data"]["match"]["record"]


@pytest.fixture(scope="module")
def finished_records(client, redis_url, key_prefix, games):
    """One finished match of every case, its record as REST and GraphQL serve it (played once per module)."""
    import asyncio

    import redis.asyncio as aioredis

    from service.store import MatchStore

    async def play() -> dict:
        connection = aioredis.Redis.from_url(redis_url, decode_responses=True)
        store = MatchStore(connection, games, prefix=key_prefix, finished_ttl=600, idle_ttl=600)
        played = {}
        for (game, variant), case in zip(CASES, CASE_IDS):
            match, _ = await seated(store, game, variant, entropies=["my own entropy", None, None, None])
            played[case] = (await play_out(store, match.id)).id
        await connection.aclose()
        return played

    played = asyncio.run(play())
    return {case: (rest_record(client, match_id), graphql_record(client, match_id))
            for case, match_id in played.items()}


@pytest.mark.parametrize("case", CASE_IDS)
def test_a_finished_match_of_every_game_verifies(finished_records, case):
    """After the end the record holds everything the issue lists, GraphQL serves the same document, and
    replaying it from the revealed seed reproduces every state hash and the result."""
    record, typed = finished_records[case]
    assert record["status"] == "finished" and record["disclosure"] == "everything"
    assert record["seed_source"] == "commitment" and record["seed_commitment"] == seeds.commitment(
        record["revealed_seed"])
    assert [e["seat"] for e in record["entropies"]] == list(range(record["seats"]))
    assert record["entropies"][0] == {"seat": 0, "entropy": "my own entropy", "generated": False}
    assert all(e["generated"] for e in record["entropies"][1:])
    assert record["rules_version"] == all_games()[record["game"]].rules_version and record["result"] is not None
    assert [a["version"] for a in record["actions"]] == list(range(1, record["version"] + 1))
    assert all(a["action"] is not None and len(a["state_hash"]) == 64 for a in record["actions"])
    assert typed["document"] == record
    assert typed["seedSource"] == "COMMITMENT" and typed["rngSeed"] == record["rng_seed"]
    assert [a["stateHash"] for a in typed["actions"]] == [a["state_hash"] for a in record["actions"]]
    assert (typed["revealedSeed"], typed["initialStateHash"], typed["entropies"]) == (
        record["revealed_seed"], record["initial_state_hash"], record["entropies"])
    assert typed["result"] == {"winners": record["result"]["winners"], "cause": record["result"]["cause"]}
    assert record["result"]["cause"]  # every game says why it ended (docs/rules/<game>.md)
    verdict = verify_record(record, commitment=record["seed_commitment"], entropies={0: "my own entropy"})
    assert verdict.ok, verdict.summary()
    assert verdict.actions == record["version"]


def _replay_to(record: dict, version: int):
    """The game and its state after ``version`` actions of the record (the test's own replay)."""
    from service.games import all_games

    game = all_games()[record["game"]]
    state = game.setup(record["options"], record["seats"], int(record["rng_seed"]))
    for entry in record["actions"][:version]:
        state, _ = game.apply(state, entry["seat"], entry["action"])
    return game, state


def _changed_action(record: dict) -> int:
    """Replace, in place, the first action that had a legal alternative by that alternative; its version."""
    for index, entry in enumerate(record["actions"]):
        game, state = _replay_to(record, index)
        others = [a for a in game.legal_actions(state, entry["seat"]) if a != entry["action"]]
        if others:
            entry["action"] = others[0]
            return entry["version"]
    raise AssertionError("no action had an alternative")


def _swapped(record: dict) -> int:
    """Swap, in place, the first two neighbouring actions that differ (versions stay in order)."""
    actions = record["actions"]
    for i in range(len(actions) - 1):
        a, b = actions[i], actions[i + 1]
        if (a["seat"], a["action"]) != (b["seat"], b["action"]):
            a["seat"], a["action"], b["seat"], b["action"] = b["seat"], b["action"], a["seat"], a["action"]
            return a["version"]
    raise AssertionError("every action is the same")


def _entries_swapped(record: dict) -> int:
    actions = record["actions"]
    actions[2], actions[3] = actions[3], actions[2]
    return 3


def _hash_edited(record: dict) -> int:
    entry = record["actions"][len(record["actions"]) // 2]
    entry["state_hash"] = ("0" if entry["state_hash"][0] != "0" else "1") + entry["state_hash"][1:]
    return entry["version"]


def _other_seed(record: dict) -> int:
    """Another seed with its own commitment: the RNG seed no longer derives from it."""
    record["revealed_seed"] = seeds.new_server_seed()
    record["seed_commitment"] = seeds.commitment(record["revealed_seed"])
    return 0


def _other_seed_uncommitted(record: dict) -> int:
    record["revealed_seed"] = seeds.new_server_seed()
    return 0


def _entropy_edited(record: dict) -> int:
    record["entropies"][0]["entropy"] += "!"
    return 0


def _action_dropped(record: dict) -> int:
    del record["actions"][1]
    return 2


def _result_edited(record: dict) -> int:
    record["result"] = {**record["result"], "winners": [w + 1 for w in record["result"]["winners"]] or [0]}
    return len(record["actions"])


TAMPERING = {"action changed": _changed_action, "two actions swapped": _swapped,
             "two entries swapped": _entries_swapped, "hash edited": _hash_edited, "other seed": _other_seed,
             "seed not committed": _other_seed_uncommitted, "entropy edited": _entropy_edited,
             "action dropped": _action_dropped, "result edited": _result_edited}


@pytest.mark.parametrize("kind", TAMPERING)
@pytest.mark.parametrize("case", CASE_IDS)
def test_tampering_is_refused_naming_the_first_action_that_fails(finished_records, case, kind):
    record = copy.deepcopy(finished_records[case][0])
    at = TAMPERING[kind](record)
    verdict = verify_record(record)
    assert not verdict.ok
    assert verdict.failed_at == at, verdict.summary()


def test_a_record_forged_whole_is_refused_by_the_commitment_seen_at_creation(finished_records):
    """After the reveal anybody could make up a consistent record with another seed; the commitment the
    match published at creation (before any draw) is what a player holds it to."""
    record = finished_records["quidditch/standard"][0]
    forged = copy.deepcopy(record)
    forged["revealed_seed"] = seeds.new_server_seed()
    forged["seed_commitment"] = seeds.commitment(forged["revealed_seed"])
    forged["rng_seed"] = str(seeds.derive_rng_seed(forged["revealed_seed"],
                                                   [e["entropy"] for e in forged["entropies"]]))
    _, state = _replay_to(forged, 0)
    chained = forged["initial_state_hash"] = seeds.state_hash(forged["revealed_seed"], forged["seed_commitment"],
                                                              seeds.dumps(state).encode())
    game, _ = _replay_to(forged, 0)
    kept = []
    for entry in forged["actions"]:  # the old actions, as long as they stay legal on the new deal
        if entry["action"] not in game.legal_actions(state, entry["seat"]) or game.result(state) is not None:
            break
        state, _ = game.apply(state, entry["seat"], entry["action"])
        chained = entry["state_hash"] = seeds.state_hash(forged["revealed_seed"], chained, seeds.dumps(state).encode())
        kept.append(entry)
    forged["actions"] = kept
    forged["result"] = game.result(state)
    if forged["result"] is None:  # the forger ends it somehow: here, by playing on at random
        from service.engine import Rng

        rng = Rng(1)
        while game.result(state) is None:
            seat = rng.choice(sorted(game.to_act(state)))
            action = rng.choice(game.legal_actions(state, seat))
            state, _ = game.apply(state, seat, action)
            chained = seeds.state_hash(forged["revealed_seed"], chained, seeds.dumps(state).encode())
            forged["actions"].append({"version": len(forged["actions"]) + 1, "seat": seat, "action": action,
                                      "state_hash": chained})
        forged["result"] = game.result(state)
    assert verify_record(forged).ok  # consistent in itself...
    verdict = verify_record(forged, commitment=record["seed_commitment"])
    assert not verdict.ok and verdict.failed_at == 0 and "commitment" in verdict.failure  # ...but not the match's
    assert not verify_record(record, entropies={0: "another"}).ok


def _cli(*args: str, record: dict | None = None, text: str | None = None) -> subprocess.CompletedProcess:
    """``grimoire verify`` in a process of its own with no Redis to reach (REDIS_URL names a closed port)."""
    env = {**os.environ, "REDIS_URL": "redis://127.0.0.1:9/0", "PYTHONPATH": str(ROOT)}
    stdin = text if text is not None else json.dumps(record)
    return subprocess.run([sys.executable, "-m", "service.cli", "verify", "-", *args], input=stdin, env=env,
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


@pytest.mark.parametrize("case", CASE_IDS)
def test_grimoire_verify_checks_a_record_of_every_game_offline(finished_records, case):
    record = finished_records[case][0]
    verified = _cli("--commitment", record["seed_commitment"], "--entropy", "0=my own entropy", record=record)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("verified: ") and "every state hash matches" in verified.stdout
    tampered = copy.deepcopy(record)
    at = _hash_edited(tampered)
    refused = _cli(record=tampered)
    assert refused.returncode == 1
    assert f"FAILED at action {at}:" in refused.stdout


def test_grimoire_verify_says_what_it_cannot_check(client, finished_records):
    """Exit 2 (not a verdict) for what is not a finished match's record; --json for programs."""
    record = finished_records["quidditch/standard"][0]
    verdict = json.loads(_cli("--json", record=record).stdout)
    assert verdict["ok"] is True and verdict["failed_at"] is None
    assert _cli(text="not json").returncode == 2
    assert _cli(record={"format": "something else"}).returncode == 2
    in_progress = {**record, "status": "active", "disclosure": "seat"}
    refused = _cli(record=in_progress)
    assert refused.returncode == 2 and "not over" in refused.stderr
    unknown = _cli(record={**record, "rules_version": "99"})
    assert unknown.returncode == 2 and "rules version 99 is not installed" in unknown.stderr


async def test_a_record_during_the_match_withholds_hidden_parts(client, store):
    """A seat sees its own actions and nothing secret; a spectator sees no action; the hashes a seat sees
    during a commitment match are the final record's (a player can keep them and hold the end to them)."""
    match, tokens = await active_at(store, "quidditch", 12, entropies=["zero", "one"])
    mine = rest_record(client, match.id, tokens[0])
    public = rest_record(client, match.id)
    for record in (mine, public):
        assert record["revealed_seed"] is None and record["rng_seed"] is None
        assert record["status"] == "active" and record["version"] == match.version
        assert record["seed_commitment"] == match.seed_commitment
        assert record["entropies"] == [{"seat": 0, "entropy": "zero", "generated": False},
                                       {"seat": 1, "entropy": "one", "generated": False}]
    assert mine["disclosure"] == "seat" and mine["seat"] == 0 and public["disclosure"] == "public"
    assert {a["seat"] for a in mine["actions"] if a["action"] is not None} == {0}
    assert all(a["action"] is None for a in mine["actions"] if a["seat"] != 0)
    assert all(a["action"] is None for a in public["actions"])
    assert all(len(a["state_hash"]) == 64 for a in public["actions"])
    assert graphql_record(client, match.id, tokens[0])["document"] == mine
    final = rest_record(client, (await play_out(store, match.id)).id)
    assert final["initial_state_hash"] == mine["initial_state_hash"]
    assert [a["state_hash"] for a in final["actions"][:12]] == [a["state_hash"] for a in mine["actions"]]
    assert verify_record(final).ok


async def test_a_creator_seeded_match_verifies_and_says_so_but_shows_no_hash_before_the_end(client, store):
    """Whoever fixed the seed can recompute every hash: during such a match they are withheld."""
    match, tokens = await seated(store, "spells-and-potions", "practice-1", seed=1234)
    await play_out(store, match.id, until=5)
    during = rest_record(client, match.id, tokens[1])
    assert during["seed_source"] == "creator" and during["entropies"] is None
    assert during["initial_state_hash"] is None and all(a["state_hash"] is None for a in during["actions"])
    await play_out(store, match.id)
    record = rest_record(client, match.id)
    assert record["revealed_seed"] == record["rng_seed"] == "1234"
    assert record["seed_commitment"] == seeds.commitment("1234")
    verdict = verify_record(record)
    assert verdict.ok and any("creator" in check for check in verdict.passed)


async def test_a_match_from_before_commitments_cannot_be_verified(client, store):
    """A match stored before fair play (no commitment, no chain) reads as seed_source server; its record
    has nothing to verify against, and the verifier says so rather than vouching for it."""
    match, _ = await seated(store, "quidditch", seed=99)
    await store.redis.hdel(store.key(match.id), "seed_source", "seed_commitment", "secret_seed", "state_hash",
                           "hash0", "rules_version")
    match = await play_out(store, match.id)
    record = rest_record(client, match.id)
    assert record["seed_source"] == "server" and record["seed_commitment"] is None
    assert record["rules_version"] == "1" and all(a["state_hash"] is None for a in record["actions"])
    verdict = verify_record(record)
    assert not verdict.ok and verdict.failed_at is None and "predates" in verdict.failure


async def test_a_record_is_refused_when_the_log_does_not_reach_the_stored_head(store):
    """The record recomputes each state hash from the log; the chain's head the store wrote with each action
    is what holds it to the match as it was played: a log that no longer reaches it gives no record."""
    from service.store.records import ChainMismatch, match_record

    match, _ = await active_at(store, "quidditch", 6)
    assert (await match_record(store, match.id, None))["version"] == 6
    await store.redis.hset(store.key(match.id), "state_hash", "0" * 64)
    with pytest.raises(ChainMismatch) as refused:
        await match_record(store, match.id, None)
    assert str(refused.value) == (f"match {match.id}: its log re-applied with quidditch rules version "
                                  f"{match.rules_version} does not reach the stored state hash at version 6")


@pytest.mark.parametrize("missing", ["secret_seed", "state_hash"])
async def test_a_match_missing_a_part_of_its_chain_gets_a_record_without_hashes(store, missing):
    """A chain needs the server seed, the stored head and a dealt match: a match stored without one of them (an
    earlier release's) has no hashes to show, and its record says so instead of failing."""
    from service.store.records import match_record

    match, _ = await active_at(store, "quidditch", 4)
    await store.redis.hdel(store.key(match.id), missing)
    record = await match_record(store, match.id, None)
    assert record["version"] == 4 and [a["version"] for a in record["actions"]] == [1, 2, 3, 4]
    assert record["initial_state_hash"] is None and all(a["state_hash"] is None for a in record["actions"])


async def test_log_entries_written_after_the_match_was_read_wait_for_the_next_read(store):
    """The record is of the match as it was read: actions logged since (their entries past the read version) are left
    to the next read, and the record ends at the read version."""
    from service.store.records import build_record

    match, _ = await active_at(store, "quidditch", 6, seed=7)  # a creator's seed: no hashes before the end
    entries = await store.log_entries(match.id, after=0, limit=6)
    read_at_four = await store.get(match.id)
    read_at_four.version = 4
    record = build_record(read_at_four, None, entries, None)
    assert record["version"] == 4 and [a["version"] for a in record["actions"]] == [1, 2, 3, 4]


def test_the_record_of_an_unknown_match_is_a_problem(client):
    response = client.get("/v1/matches/nope/record")
    assert response.status_code == 404 and response.json()["code"] == "match_not_found"
