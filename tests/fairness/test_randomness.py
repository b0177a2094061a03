"""Provable randomness (issue 21): the seed commitment, seat entropy, the deal once every seat is in,
``seed_source``, and a server seed nobody can read before the end -- on both APIs, for every game."""

from __future__ import annotations

import asyncio
import json
import logging
import re

import pytest

from service.engine import BOARD_SEAT, Rng, seeds

from .support import CASE_IDS, CASES, play_out, seated, secrets_of

pytestmark = pytest.mark.anyio

HEX64 = re.compile(r"^[0-9a-f]{64}$")
MATCH_FIELDS = "id status seed seedSource seedCommitment revealedSeed rulesVersion"


def _auth(token):
    return {"Authorization": f"Bearer {token}"} if token else {}


def test_the_derivation_mixes_every_entropy_in_seat_order():
    """Unit level: each seat's entropy, its place and its length change the RNG seed; 63 bits, like every seed."""
    base = seeds.derive_rng_seed("s" * 64, ["ab", "c"])
    assert 0 <= base < 2**63
    assert len({base, seeds.derive_rng_seed("s" * 64, ["a", "bc"]), seeds.derive_rng_seed("s" * 64, ["c", "ab"]),
                seeds.derive_rng_seed("t" * 64, ["ab", "c"]), seeds.derive_rng_seed("s" * 64, ["ab", "d"])}) == 5
    assert seeds.entropy_message(["ab", "c"]) == b"\x00\x00\x00\x02ab\x00\x00\x00\x01c"
    assert seeds.commitment("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_the_commitment_is_published_at_creation_and_the_seed_revealed_at_the_end(client):
    """REST and GraphQL show the commitment from version 0 and the seed once the match is over, never before."""
    created = client.post("/v1/matches", json={"game": "high-card"}).json()
    assert created["version"] == 0 and HEX64.match(created["seed_commitment"])
    assert (created["seed_source"], created["revealed_seed"], created["seed"]) == ("commitment", None, None)
    assert created["rules_version"] == "1"
    tokens = [client.post(f"/v1/matches/{created['id']}/seats", json={"name": n, "entropy": f"{n}'s dice"}).json()
              ["token"] for n in ("Ann", "Bob")]
    query = {"query": f"query($id: ID!) {{ match(id: $id) {{ ... on Match {{ {MATCH_FIELDS} }} }} }}",
             "variables": {"id": created["id"]}}
    during = client.post("/graphql", json=query).json()["data"]["match"]
    assert during["seedCommitment"] == created["seed_commitment"] and during["seedSource"] == "COMMITMENT"
    assert during["revealedSeed"] is None and during["seed"] is None and during["rulesVersion"] == "1"
    match = client.get(f"/v1/matches/{created['id']}").json()
    while match["status"] == "active":
        for seat in match["to_act"]:
            legal = client.get(f"/v1/matches/{created['id']}/legal-actions", headers=_auth(tokens[seat])).json()
            match = client.post(f"/v1/matches/{created['id']}/actions", json={"action": legal["actions"][0]},
                                headers={**_auth(tokens[seat]), "If-Match": f'"{match["version"]}"'}).json()["match"]
    finished = client.get(f"/v1/matches/{created['id']}").json()
    assert HEX64.match(finished["revealed_seed"])
    assert seeds.commitment(finished["revealed_seed"]) == created["seed_commitment"]
    record = client.get(f"/v1/matches/{created['id']}/record").json()
    assert finished["seed"] == str(seeds.derive_rng_seed(finished["revealed_seed"], ["Ann's dice", "Bob's dice"]))
    assert record["rng_seed"] == finished["seed"]
    after = client.post("/graphql", json=query).json()["data"]["match"]
    assert after["revealedSeed"] == finished["revealed_seed"] and after["seed"] == finished["seed"]


@pytest.mark.parametrize("game_id,variant", CASES, ids=CASE_IDS)
async def test_nothing_is_drawn_before_every_seat_has_joined(store, game_id, variant):
    """Until the last seat joins, the match is laid out from the public placeholder seed and every seat sees
    the spectator's view of it (no hand is dealt); the last join deals it from the derivation, once."""
    game = store.games[game_id]
    seats = game.max_seats
    match = await store.create(game_id, variant=variant, seats=seats)
    placeholder = game.setup(match.options, seats, seeds.PLACEHOLDER_SEED)
    assert match.state == placeholder and not match.dealt
    chosen = [f"seat {i} brings {'x' * i}" for i in range(seats)]
    for seat in range(seats - 1):
        joined, _, _ = await store.join(match.id, f"P{seat}", entropy=chosen[seat])
        assert joined.status == "waiting" and joined.state == placeholder
        assert joined.view(seat) == game.view(placeholder, None)
    last, _, _ = await store.join(match.id, "last", entropy=chosen[-1])
    secret, seed = await secrets_of(store, match.id)
    assert last.status == "active" and last.dealt
    assert int(seed) == last.seed == seeds.derive_rng_seed(secret, chosen)
    assert last.state == game.setup(match.options, seats, last.seed)
    assert last.state_hash == seeds.state_hash(secret, match.seed_commitment, seeds.dumps(last.state).encode())


async def test_a_seat_that_leaves_before_the_deal_takes_its_entropy_with_it(store):
    match = await store.create("quidditch")
    _, _, leaving = await store.join(match.id, "Ann", entropy="ann")
    await store.leave(match.id, leaving)
    await store.join(match.id, "Cat", entropy="cat")
    dealt, _, _ = await store.join(match.id, "Bob", entropy="bob")
    secret, _ = await secrets_of(store, match.id)
    assert dealt.seed == seeds.derive_rng_seed(secret, ["cat", "bob"])
    fixed = json.loads(await store.redis.hget(store.key(match.id), "entropies"))
    assert fixed == [{"seat": 0, "entropy": "cat", "generated": False}, {"seat": 1, "entropy": "bob", "generated": False}]


async def test_a_deal_cut_short_between_join_and_deal_is_finished_by_the_next_read(store):
    """The join script took the last seat but its process stopped before dealing: the match stays waiting
    (never played on the placeholder) until any read deals it, and a deal that finds the seats changed
    writes nothing."""
    match = await store.create("quidditch")
    await store.join(match.id, "Ann", entropy="ann")
    record = json.dumps({"name": "Bob", "token": "x" * 64, "joined": 1, "entropy": "bob"})
    reply = await store._join(keys=[store.key(match.id)], args=[-1, record, 1, store.channel(match.id), ""])
    assert reply[0] == "ok" and reply[2] == "waiting"  # the script alone does not start a match still to deal
    raw = await store.redis.hgetall(store.key(match.id))
    moved = [raw["seat:0"], raw["seat:1"].replace("bob", "eve")]
    assert (await store._deal(keys=[store.key(match.id)], args=["{}", 1, "[]", "h", "[]", 1, "c", *moved]))[0] \
        == "moved"
    assert (await store.redis.hget(store.key(match.id), "status")) == "waiting"
    dealt = await store.get(match.id)
    secret, _ = await secrets_of(store, match.id)
    assert dealt.status == "active" and dealt.seed == seeds.derive_rng_seed(secret, ["ann", "bob"])
    assert (await store.get(match.id)).state == dealt.state  # dealt once


async def test_concurrent_last_joins_deal_exactly_once(store):
    match = await store.create("spells-and-potions", variant="practice-1", seats=4)
    await store.join(match.id, "Ann", entropy="a")
    await store.join(match.id, "Bob", entropy="b")
    results = await asyncio.gather(store.join(match.id, "Cat", entropy="c"), store.join(match.id, "Dan", entropy="d"))
    secret, seed = await secrets_of(store, match.id)
    final = await store.get(match.id)
    assert final.status == "active"
    assert all(m.state == final.state if m.status == "active" else not m.dealt for m, _, _ in results)
    by_seat = {seat: e for (_, seat, _), e in zip(results, "cd")}
    assert int(seed) == seeds.derive_rng_seed(secret, ["a", "b", by_seat[2], by_seat[3]])


async def test_a_creator_seed_is_used_as_it_is_set_up_at_once_and_marked(store, client):
    match = await store.create("quidditch", seed=42)
    assert (match.seed_source, match.seed, match.dealt) == ("creator", 42, True)
    assert match.state == store.games["quidditch"].setup(match.options, 2, 42)
    assert match.seed_commitment == seeds.commitment("42")
    rest = client.post("/v1/matches", json={"game": "quidditch", "seed": "42"}).json()
    assert rest["seed_source"] == "creator" and rest["seed_commitment"] == seeds.commitment("42")
    query = 'mutation { createMatch(input: {game: "quidditch", seed: "42"}) { ... on MatchCreated { match { seedSource } } } }'
    assert client.post("/graphql", json={"query": query}).json()["data"]["createMatch"]["match"]["seedSource"] == "CREATOR"


def test_a_seat_bound_to_a_player_brings_its_entropy_too(client):
    """Joining with a player's credential (REST and GraphQL) takes the entropy as joining with a name does."""
    import uuid

    players = [client.post("/v1/players", json={"name": f"Fair {uuid.uuid4().hex[:8]}"}).json()["token"]
               for _ in range(2)]
    match_id = client.post("/v1/matches", json={"game": "quidditch"}).json()["id"]
    joined = client.post(f"/v1/matches/{match_id}/seats", json={"entropy": "by REST"}, headers=_auth(players[0]))
    assert joined.status_code == 201, joined.text
    mutation = {"query": "mutation($m: ID!) { joinMatch(input: {matchId: $m, entropy: \"by GraphQL\"}) "
                         "{ __typename } }", "variables": {"m": match_id}}
    assert client.post("/graphql", json=mutation, headers=_auth(players[1])).json()["data"]["joinMatch"] == {
        "__typename": "SeatJoined"}
    record = client.get(f"/v1/matches/{match_id}/record").json()
    assert [e["entropy"] for e in record["entropies"]] == ["by REST", "by GraphQL"]


async def test_a_creator_seeded_match_is_never_rated(store):
    """The ratings count only matches whose seed nobody chose: a rated match with a creator's seed is refused,
    and a rated match without one commits to its seed like any other."""
    from service.engine import InvalidOptions

    with pytest.raises(InvalidOptions, match="never rated"):
        await store.create("quidditch", seed=7, rated=True)
    rated = await store.create("quidditch", rated=True)
    assert (rated.rated, rated.seed_source) == (True, "commitment")


@pytest.mark.parametrize("entropy", ["", "x" * 129, "tab\there", "nul\x00"])
def test_an_unacceptable_entropy_is_refused_and_nothing_is_written(client, entropy):
    match_id = client.post("/v1/matches", json={"game": "quidditch"}).json()["id"]
    refused = client.post(f"/v1/matches/{match_id}/seats", json={"name": "Ann", "entropy": entropy})
    assert refused.status_code == 422 and refused.json()["code"] == "invalid_entropy"
    mutation = {"query": "mutation($m: ID!, $e: String) { joinMatch(input: {matchId: $m, name: \"Ann\", entropy: $e}) "
                         "{ __typename ... on Problem { code message } } }", "variables": {"m": match_id, "e": entropy}}
    answer = client.post("/graphql", json=mutation).json()["data"]["joinMatch"]
    assert answer["__typename"] == "InvalidEntropy" and answer["code"] == "INVALID_ENTROPY"
    assert [s["joined"] for s in client.get(f"/v1/matches/{match_id}").json()["seats"]] == [False, False]
    accepted = client.post(f"/v1/matches/{match_id}/seats", json={"name": "Ann", "entropy": "é🎲 " * 32})
    assert accepted.status_code == 201


class _Collected(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(self.format(record) + repr(record.__dict__))


def test_the_server_seed_is_never_readable_before_the_end(client, redis_url, key_prefix):
    """Every REST and GraphQL answer (errors included), every live update, every pub/sub message and every
    log line of a match, from its creation to its last action, is searched for the server seed and the RNG
    seed: neither shows up until the match is over."""
    import redis

    handler = _Collected()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    seen: list[str] = []
    pubsub = redis.Redis.from_url(redis_url, decode_responses=True).pubsub()

    def keep(response):
        seen.append(response.text)
        return response

    def graphql(query, token=None, **variables):
        return keep(client.post("/graphql", json={"query": query, "variables": variables}, headers=_auth(token))).json()

    try:
        created = keep(client.post("/v1/matches", json={"game": "quidditch", "options": {"max_rounds": 4}})).json()
        match_id = created["id"]
        pubsub.subscribe(f"{key_prefix}:m:{{{match_id}}}:events")
        tokens = [keep(client.post(f"/v1/matches/{match_id}/seats", json={"name": n})).json()["token"]
                  for n in ("Ann", "Bob")]
        everything = ("query($id: ID!) { match(id: $id) { ... on Match { " + MATCH_FIELDS + " view { __typename } "
                      "history { version seat } record { document } } } }")
        chooser = Rng(5)
        for step in range(2000):
            match = keep(client.get(f"/v1/matches/{match_id}", headers=_auth(tokens[step % 2]))).json()
            if match["status"] == "finished":
                break
            seat = chooser.choice(match["to_act"])
            token = tokens[seat]
            legal = keep(client.get(f"/v1/matches/{match_id}/legal-actions", headers=_auth(token))).json()["actions"]
            if step % 25 == 0:  # the error paths, and every reader
                refused = [keep(client.post(f"/v1/matches/{match_id}/actions",
                                            json={"action": {"type": "reveal", "ball": "x"}},
                                            headers={**_auth(token), "If-Match": f'"{match["version"]}"'})),
                           keep(client.post(f"/v1/matches/{match_id}/actions", json={"action": legal[0]},
                                            headers={**_auth("gt.nope.nope"), "If-Match": '"0"'}))]
                if 1 - seat not in match["to_act"]:  # not_your_turn
                    refused.append(keep(client.post(f"/v1/matches/{match_id}/actions", json={"action": legal[0]},
                                                    headers={**_auth(tokens[1 - seat]),
                                                             "If-Match": f'"{match["version"]}"'})))
                assert all(r.status_code in (401, 409, 422) for r in refused), [r.text for r in refused]
                keep(client.get(f"/v1/matches/{match_id}/history", headers=_auth(token)))
                keep(client.get(f"/v1/matches/{match_id}/record", headers=_auth(token)))
                keep(client.get(f"/v1/matches/{match_id}/record"))
                keep(client.get(f"/v1/matches/{match_id}"))
                graphql(everything, token, id=match_id)
                graphql(everything, None, id=match_id)
            cut = len(seen)  # what was answered before this action (the last one ends the match and shows all)
            submitted = keep(client.post(f"/v1/matches/{match_id}/actions", json={"action": chooser.choice(legal)},
                                         headers={**_auth(token), "If-Match": f'"{match["version"]}"'}))
            keep(client.post(f"/v1/matches/{match_id}/actions", json={"action": legal[0]},  # stale: a conflict
                             headers={**_auth(token), "If-Match": f'"{match["version"]}"'}))
            assert submitted.status_code == 200, (step, seat, match["to_act"], submitted.text[:300])
            last = submitted.json()
        else:
            raise AssertionError("the match did not end")
        answered, seen = seen[:cut], []
        with client.stream("GET", f"/v1/matches/{match_id}/events", params={"format": "ndjson"},
                           headers=_auth(tokens[0])) as stream:
            seen.extend(line for line in stream.iter_lines())
        while (message := pubsub.get_message(timeout=0.2)) is not None:
            seen.append(str(message["data"]))
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        pubsub.close()
    finished = client.get(f"/v1/matches/{match_id}").json()
    secret, rng_seed = finished["revealed_seed"], finished["seed"]
    assert secret and rng_seed and last["match"]["status"] == "finished"
    assert sum('"type":"action"' in t.replace(" ", "") for t in seen) > 10  # the stream was read to its end
    assert sum(t.startswith("{") and '"version"' in t for t in seen) > 20  # and the pub/sub messages
    assert len(handler.lines) > 10 and len(answered) > 100
    for text in [*answered, *seen, *handler.lines]:  # the stream and pub/sub: never, not even after the end
        assert secret not in text and rng_seed not in text, text[:300]
    # once it is over, the seed is everybody's
    assert seeds.commitment(secret) == created["seed_commitment"]
    assert client.get(f"/v1/matches/{match_id}/record").json()["revealed_seed"] == secret


async def test_board_moves_are_recorded_and_verify(store):
    """McGonagall's board acts as BOARD_SEAT (-1): its moves are in the record like any seat's."""
    from service.fairness.verify import verify_record
    from service.store.records import match_record

    match, _ = await seated(store, "sorcerers-stone", "mcgonagall", seats=3)
    await play_out(store, match.id)
    record = await match_record(store, match.id, None)
    assert any(a["seat"] == BOARD_SEAT for a in record["actions"])
    assert verify_record(json.loads(json.dumps(record))).ok
