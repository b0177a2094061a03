"""API guarantees whose tests had holes: the seed stays secret on GraphQL until the
match ends, a seat token is only ever taken from an ``Authorization: Bearer``
header, and a retry racing its original request gets the original's outcome."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.api.test_graphql import CREATE, JOIN, READ, SUBMIT, data
from tests.api.test_rest import assert_problem, auth, new_match
from tests.store.test_guarantees import hold_commits

SEED = """query($id: ID!) { match(id: $id) { ... on Match { status seed version toAct
  view { ... on HighCardView { hand } } } } }"""


def test_graphql_match_seed_is_null_until_the_match_ends(client):
    """The seed would let anyone re-deal the hidden hands: GraphQL's ``match { seed }`` is null while
    the match waits and while it is played, and the seed only once it is finished (as on REST)."""
    match_id = data(client, CREATE, {"input": {"game": "high-card", "seed": "77"}})["createMatch"]["match"]["id"]
    waiting = data(client, SEED, {"id": match_id})["match"]
    assert (waiting["status"], waiting["seed"]) == ("WAITING", None)
    tokens = [data(client, JOIN, {"input": {"matchId": match_id, "name": n}})["joinMatch"]["token"]
              for n in ("Ann", "Bob")]
    seen = []
    while (match := data(client, SEED, {"id": match_id}, tokens[0])["match"])["status"] != "FINISHED":
        seen.append((match["status"], match["seed"]))
        seat = match["toAct"][0]
        hand = data(client, SEED, {"id": match_id}, tokens[seat])["match"]["view"]["hand"]
        action = {"highCard": {"type": "PLAY", "card": hand[0]}}
        outcome = data(client, SUBMIT, {"input": {"matchId": match_id, "expectedVersion": match["version"],
                                                  "action": action}}, tokens[seat])["submitAction"]
        assert outcome["__typename"] == "ActionAccepted", outcome
    assert len(seen) == 6 and set(seen) == {("ACTIVE", None)}  # every version before the end, to a seat too
    assert match["seed"] == "77"
    assert data(client, SEED, {"id": match_id})["match"]["seed"] == "77"


@pytest.mark.parametrize("scheme", ["Basic", "Token", "Bearer:", "gt"])
def test_a_valid_token_under_another_scheme_is_refused(client, scheme):
    """Only ``Authorization: Bearer <token>`` carries a seat token: the same valid token under any
    other scheme is refused as invalid (401 on REST, invalid_token on GraphQL), and acts for nobody."""
    match_id, (t0, _) = new_match(client)
    legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth(t0)).json()
    assert legal["seat"] == 0 and legal["actions"]  # the token itself is good
    other = {"Authorization": f"{scheme} {t0}"}
    assert_problem(client.get(f"/v1/matches/{match_id}", headers=other), 401, "invalid_token")
    assert_problem(client.post(f"/v1/matches/{match_id}/actions", json={"action": legal["actions"][0]},
                               headers={**other, "If-Match": '"0"'}), 401, "invalid_token")
    body = {"query": SUBMIT, "variables": {"input": {
        "matchId": match_id, "expectedVersion": 0, "action": {"highCard": {**legal["actions"][0], "type": "PLAY"}}}}}
    answer = client.post("/graphql", json=body, headers=other)
    assert answer.status_code == 200 and answer.json()["data"]["submitAction"]["code"] == "INVALID_TOKEN"
    read = client.post("/graphql", json={"query": READ, "variables": {"id": match_id}}, headers=other)
    assert read.json()["data"]["match"] == {"__typename": "InvalidToken", "code": "INVALID_TOKEN"}
    assert client.get(f"/v1/matches/{match_id}").json()["version"] == 0


def test_two_concurrent_requests_with_one_idempotency_key_both_get_the_first_outcome(client, monkeypatch):
    """A client's retry racing its original request (same Idempotency-Key, both read before either
    commits) is applied once, and both responses carry the first outcome: 200, the same version and
    events, one marked a duplicate -- the retry is never told of a version conflict."""
    match_id, (t0, _) = new_match(client)
    action = client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth(t0)).json()["actions"][0]
    monkeypatch.setattr(client.app.state.store, "_commit", client.app.state.store._commit)  # put back after
    hold_commits(client.app.state.store, 2)
    headers = {**auth(t0), "If-Match": '"0"', "Idempotency-Key": "retry-1"}
    with ThreadPoolExecutor(2) as pool:
        responses = list(pool.map(lambda _: client.post(f"/v1/matches/{match_id}/actions", json={"action": action},
                                                        headers=headers), range(2)))
    assert [r.status_code for r in responses] == [200, 200], [r.text for r in responses]
    first, second = (r.json() for r in responses)
    assert (first["version"], first["events"]) == (second["version"], second["events"])
    assert first["version"] == 1 and sorted([first["duplicate"], second["duplicate"]]) == [False, True]
    assert [e["version"] for e in client.get(f"/v1/matches/{match_id}/history").json()["entries"]] == [1]
