"""Rematch (issue 20): after a finished match any seat offers, the others accept; the new match has the same
game, variant and options, a fresh seed, and the first seat rotated."""

from __future__ import annotations

from .conftest import bearer, play_out


def test_a_rematch_is_offered_accepted_and_made_with_the_first_seat_rotated(client, new_player, settings, raw):
    _, alice = new_player()
    match = client.post("/v1/matches", json={"game": "high-card", "options": {"rounds": 2}}).json()
    client.post(f"/v1/matches/{match['id']}/seats", json={"seat": 0}, headers=bearer(alice))
    anon = client.post(f"/v1/matches/{match['id']}/seats", json={"seat": 1, "name": "Neville"}).json()["token"]
    early = client.post(f"/v1/matches/{match['id']}/rematch", headers=bearer(alice))
    assert early.status_code == 409 and early.json()["code"] == "rematch_unavailable"
    old = play_out(client, match["id"], [alice, anon])
    spectator = client.post(f"/v1/matches/{match['id']}/rematch")
    assert spectator.status_code == 401 and spectator.json()["code"] == "token_required"

    offered = client.post(f"/v1/matches/{match['id']}/rematch", headers=bearer(alice))
    assert offered.status_code == 202, offered.text
    assert offered.json()["accepted"] == [0] and offered.json()["waiting_for"] == [1]
    assert offered.json()["rematch_id"] is None
    # GraphQL reads it as REST's GET does: as a seat, without accepting
    read = """query Op($id: ID!) { rematch(matchId: $id) { __typename ... on RematchStatus { accepted waitingFor
        rematchId seat token } ... on Problem { code } } }"""
    for _ in range(2):  # a read accepts nothing: Neville is still awaited after reading twice
        seen = client.post("/graphql", json={"query": read, "variables": {"id": match["id"]}},
                           headers=bearer(anon)).json()["data"]["rematch"]
        assert seen == {"__typename": "RematchStatus", "accepted": [0], "waitingFor": [1], "rematchId": None,
                        "seat": None, "token": None}
    nobody = client.post("/graphql", json={"query": read, "variables": {"id": match["id"]}}).json()["data"]
    assert nobody["rematch"] == {"__typename": "TokenRequired", "code": "TOKEN_REQUIRED"}
    # the offer expires with its match (finished matches are kept 7 days), not never
    match_key = f"{settings.key_prefix}:m:{{{match['id']}}}"
    rematch_ttl, match_ttl = raw.pttl(f"{match_key}:rematch"), raw.pttl(match_key)
    assert rematch_ttl > 0 and abs(match_ttl - rematch_ttl) < 60_000, (rematch_ttl, match_ttl)  # read apart
    accepted = client.post(f"/v1/matches/{match['id']}/rematch", headers=bearer(anon))
    assert accepted.status_code == 201, accepted.text
    state = accepted.json()
    new_id, new_token = state["rematch_id"], state["token"]
    assert state["seat"] == 0 and new_token  # Neville held seat 1: he leads now, with a new seat token
    again = client.get(f"/v1/matches/{match['id']}/rematch", headers=bearer(anon)).json()
    assert again["rematch_id"] == new_id and again["token"] is None  # shown once
    mine = client.get(f"/v1/matches/{match['id']}/rematch", headers=bearer(alice)).json()
    assert mine["rematch_id"] == new_id and mine["seat"] == 1

    rematch = client.get(f"/v1/matches/{new_id}", headers=bearer(alice)).json()
    assert rematch["my_seat"] == 1 and rematch["status"] == "active"
    assert (rematch["game"], rematch["variant"], rematch["options"]) == (old["game"], old["variant"], old["options"])
    assert [s["name"] for s in rematch["seats"]] == ["Neville", old["seats"][0]["name"]]
    assert client.get(f"/v1/matches/{new_id}", headers=bearer(new_token)).json()["my_seat"] == 0
    assert new_id in [m["match_id"] for m in client.get("/v1/me/matches", headers=bearer(alice)).json()["matches"]]
    finished = play_out(client, new_id, [alice, new_token])
    assert finished["seed"] != old["seed"]  # a fresh seed


def test_a_bot_seat_accepts_by_itself_and_comes_back_as_a_bot(client, new_player, drain):
    _, alice = new_player()
    match = client.post("/v1/matches", json={"game": "high-card", "options": {"rounds": 1},
                                              "bots": [{"seat": 0, "level": "random"}]}).json()
    client.post(f"/v1/matches/{match['id']}/seats", json={"seat": 1}, headers=bearer(alice))
    for _ in range(100):  # bounded: a bot that never moves fails the test rather than hanging the run
        if client.get(f"/v1/matches/{match['id']}").json()["status"] == "finished":
            break
        drain()
        _finish_one = client.get(f"/v1/matches/{match['id']}/legal-actions", headers=bearer(alice)).json()
        if _finish_one["actions"]:
            client.post(f"/v1/matches/{match['id']}/actions", json={"action": _finish_one["actions"][0]},
                        headers={**bearer(alice), "If-Match": f'"{_finish_one["version"]}"'})
    else:
        raise AssertionError("the match with a bot did not finish: " + client.get(f"/v1/matches/{match['id']}").text)
    made = client.post(f"/v1/matches/{match['id']}/rematch", headers=bearer(alice))
    assert made.status_code == 201, made.text
    assert made.json()["seat"] == 0 and made.json()["token"] is None  # her player token acts for it
    rematch = client.get(f"/v1/matches/{made.json()['rematch_id']}", headers=bearer(alice)).json()
    assert rematch["my_seat"] == 0 and rematch["seats"][1]["bot"] == "random"
