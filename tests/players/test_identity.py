"""Identity (issue 20): players, their tokens (shown once, hashed, revocable, rotatable), names, seats bound
to players, and a player's token acting for its seats only."""

from __future__ import annotations

import base64
import hashlib

import redis as sync_redis

from .conftest import bearer, unique_name


def test_a_player_is_made_with_a_token_shown_once_and_stored_only_as_its_hash(client, settings):
    name = unique_name("Luna")
    response = client.post("/v1/players", json={"name": name})
    assert response.status_code == 201
    body = response.json()
    player_id, token = body["player"]["id"], body["token"]
    assert body["player"]["name"] == name and token.startswith(f"gp.{player_id}.{body['token_id']}.")
    assert len(base64.urlsafe_b64decode(token.rpartition(".")[2] + "=")) == 32  # docs/security.md: 256 random bits
    me = client.get("/v1/players/me", headers=bearer(token))
    assert me.status_code == 200 and me.json()["name"] == name and me.json()["ratings"] == []
    raw = sync_redis.Redis.from_url(settings.redis_url, decode_responses=True)
    stored = raw.hgetall(f"{settings.key_prefix}:p:{{{player_id}}}:tokens")
    assert token not in str(stored) and hashlib.sha256(token.encode()).hexdigest() in str(stored)
    listed = client.get("/v1/players/me/tokens", headers=bearer(token)).json()["tokens"]
    assert [t["id"] for t in listed] == [body["token_id"]] and "token" not in listed[0]


def test_names_have_rules_and_nobody_can_take_a_name_that_reads_as_another(client):
    for bad in ["", "x", "a" * 25, " lead", "trail ", "two  spaces", "semi;colon", "<b>", "___", "tab\tname"]:
        response = client.post("/v1/players", json={"name": bad})
        assert response.status_code in (400, 422), bad
        if response.status_code == 422:
            assert response.json()["code"] == "invalid_name"
    refused = client.post("/v1/players", json={"name": "semi;colon"}).json()
    assert (refused["code"], refused["detail"]) == ("invalid_name", "A name holds letters, digits, spaces and _ - . ' only.")
    name = unique_name("Harry P")  # names are at most 24 characters, and the suffix grows with the run
    assert client.post("/v1/players", json={"name": name}).status_code == 201
    for lookalike in [name, name.upper(), name.replace(" ", "_"), name.replace(" ", ""),
                      "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name)]:  # full-width forms
        response = client.post("/v1/players", json={"name": lookalike})
        assert response.status_code == 409 and response.json()["code"] == "name_taken", lookalike


def test_tokens_rotate_and_revoke_at_once(client, new_player):
    _, first = new_player()
    second = client.post("/v1/players/me/tokens", json={}, headers=bearer(first))
    assert second.status_code == 201
    second = second.json()
    first_id = first.split(".")[2]
    rotated = client.post("/v1/players/me/tokens", json={"replace": first_id}, headers=bearer(second["token"]))
    assert rotated.status_code == 201 and rotated.json()["replaced"] == first_id
    refused = client.get("/v1/players/me", headers=bearer(first))
    assert refused.status_code == 401 and refused.json()["code"] == "invalid_token"
    third = rotated.json()["token"]
    revoked = client.delete(f"/v1/players/me/tokens/{second['token_id']}", headers=bearer(third))
    assert revoked.status_code == 200
    assert client.get("/v1/players/me", headers=bearer(second["token"])).status_code == 401
    assert client.get("/v1/players/me", headers=bearer(third)).status_code == 200
    again = client.delete(f"/v1/players/me/tokens/{second['token_id']}", headers=bearer(third))
    assert again.status_code == 404 and again.json()["code"] == "player_token_not_found"
    forged = third[:-4] + ("AAAA" if not third.endswith("AAAA") else "BBBB")
    assert client.get("/v1/players/me", headers=bearer(forged)).status_code == 401


def test_player_operations_need_a_player_credential(client):
    for headers in ({}, bearer("gt.abc.def")):
        response = client.get("/v1/me/matches", headers=headers)
        assert response.status_code == 401 and response.json()["code"] == "player_required"
    assert client.get("/v1/players/nobody-here").json()["code"] == "player_not_found"


def _casting_stones(client) -> str:
    created = client.post("/v1/matches", json={"game": "casting-stones", "variant": "basic"})
    assert created.status_code == 201
    return created.json()["id"]


def test_a_seat_joined_with_a_player_token_is_bound_and_the_player_token_acts_for_it(client, new_player):
    alice_id, alice = new_player()
    _, bob = new_player()
    match_id = _casting_stones(client)
    joined = client.post(f"/v1/matches/{match_id}/seats", json={}, headers=bearer(alice))
    assert joined.status_code == 201, joined.text
    alice_seat = joined.json()["seat"]
    twice = client.post(f"/v1/matches/{match_id}/seats", json={}, headers=bearer(alice))
    assert twice.status_code == 409 and twice.json()["code"] == "already_seated"
    bob_seat = client.post(f"/v1/matches/{match_id}/seats", json={}, headers=bearer(bob)).json()["seat"]
    match = client.get(f"/v1/matches/{match_id}", headers=bearer(alice)).json()
    assert match["my_seat"] == alice_seat and match["status"] == "active"
    assert client.get(f"/v1/matches/{match_id}", headers=bearer(bob)).json()["my_seat"] == bob_seat
    actor = alice if alice_seat in match["to_act"] else bob
    legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=bearer(actor)).json()["actions"]
    submitted = client.post(f"/v1/matches/{match_id}/actions", json={"action": legal[0]},
                            headers={**bearer(actor), "If-Match": f'"{match["version"]}"'})
    assert submitted.status_code == 200, submitted.text
    # the seat's own token (from the join) still works too: seat tokens keep working
    assert client.get(f"/v1/matches/{match_id}", headers=bearer(joined.json()["token"])).json()["my_seat"] == alice_seat
    # the player's matches list it
    mine = client.get("/v1/me/matches", headers=bearer(alice)).json()["matches"]
    assert [m["match_id"] for m in mine][:1] == [match_id] and mine[0]["my_seats"] == [alice_seat]
    assert mine[0]["opponents"][0]["player"] is not None and mine[0]["opponents"][0]["player"] != alice_id


def test_a_player_token_cannot_act_in_a_seat_it_does_not_hold(client, new_player):
    _, alice = new_player()
    _, bob = new_player()
    _, carol = new_player()
    match_id = _casting_stones(client)
    seat_a = client.post(f"/v1/matches/{match_id}/seats", json={}, headers=bearer(alice)).json()["seat"]
    anonymous = client.post(f"/v1/matches/{match_id}/seats", json={"name": "Anon"})
    seat_b = anonymous.json()["seat"]
    match = client.get(f"/v1/matches/{match_id}").json()
    # carol holds no seat here: refused everywhere, never the spectator's view
    for call in (lambda h: client.get(f"/v1/matches/{match_id}", headers=h),
                 lambda h: client.get(f"/v1/matches/{match_id}/legal-actions", headers=h),
                 lambda h: client.post(f"/v1/matches/{match_id}/actions", json={"action": {"type": "pass"}},
                                       headers={**h, "If-Match": f'"{match["version"]}"'})):
        refused = call(bearer(carol))
        assert refused.status_code == 401 and refused.json()["code"] == "invalid_token"
    # alice cannot give up (or hand to a bot) the anonymous seat she does not hold
    left = client.delete(f"/v1/matches/{match_id}/seats/{seat_b}", headers=bearer(alice))
    assert left.status_code == 403 and left.json()["code"] == "not_your_seat"
    bot = client.post(f"/v1/matches/{match_id}/bots", json={"seat": seat_b, "level": "random"}, headers=bearer(alice))
    assert bot.status_code == 403
    # and when the anonymous seat is to act, alice's token acts as seat_a only: not her turn
    if seat_b in match["to_act"] and seat_a not in match["to_act"]:
        legal = client.get(f"/v1/matches/{match_id}/legal-actions",
                           headers=bearer(anonymous.json()["token"])).json()["actions"]
        tried = client.post(f"/v1/matches/{match_id}/actions", json={"action": legal[0]},
                            headers={**bearer(alice), "If-Match": f'"{match["version"]}"'})
        assert tried.status_code == 409 and tried.json()["code"] in ("not_your_turn", "illegal_action")
    # revoked: her token stops acting for her seat at once
    token_id = alice.split(".")[2]
    client.delete(f"/v1/players/me/tokens/{token_id}", headers=bearer(alice))
    assert client.get(f"/v1/matches/{match_id}", headers=bearer(alice)).status_code == 401


def test_a_hot_seat_match_lets_one_player_hold_every_seat_and_act_for_each_in_turn(client, new_player):
    _, alice = new_player()
    created = client.post("/v1/matches", json={"game": "high-card", "hot_seat": True, "options": {"rounds": 1}})
    assert created.status_code == 201, created.text
    match_id = created.json()["id"]
    seats = [client.post(f"/v1/matches/{match_id}/seats", json={}, headers=bearer(alice)).json()["seat"]
             for _ in range(2)]
    assert sorted(seats) == [0, 1]
    for expected in (0, 1):  # both seats wait; her token acts for the first of hers the game waits on
        legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=bearer(alice)).json()
        assert legal["seat"] == expected and legal["actions"]
        played = client.post(f"/v1/matches/{match_id}/actions", json={"action": legal["actions"][0]},
                             headers={**bearer(alice), "If-Match": f'"{legal["version"]}"'})
        assert played.status_code == 200, played.text
    assert client.get(f"/v1/matches/{match_id}").json()["status"] == "finished"
