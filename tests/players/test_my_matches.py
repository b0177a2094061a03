"""My matches (issue 20): a per-player index, newest first, paged with a cursor that neither repeats nor skips,
split into active and finished; and the player's one stream of turn notices across all its matches."""

from __future__ import annotations

import base64
import json

import httpx

from .conftest import bearer


def _match_with(client, token, *, rounds: int = 1) -> str:
    match_id = client.post("/v1/matches", json={"game": "high-card", "options": {"rounds": rounds}}).json()["id"]
    joined = client.post(f"/v1/matches/{match_id}/seats", json={"seat": 0}, headers=bearer(token))
    assert joined.status_code == 201, joined.text
    return match_id


def _walk(client, token, status: str, limit: int) -> list[dict]:
    seen, cursor = [], None
    while True:
        params = {"status": status, "limit": limit, **({"cursor": cursor} if cursor else {})}
        page = client.get("/v1/me/matches", params=params, headers=bearer(token))
        assert page.status_code == 200, page.text
        body = page.json()
        assert len(body["matches"]) <= limit
        seen += body["matches"]
        cursor = body["next_cursor"]
        if cursor is None:
            return seen


def test_my_matches_pages_across_250_matches_newest_first_without_repeats_or_gaps(client, new_player):
    _, token = new_player()
    made = [_match_with(client, token) for _ in range(250)]
    for limit in (1, 7, 20, 100):
        if limit == 1:
            first = client.get("/v1/me/matches", params={"limit": 1}, headers=bearer(token)).json()
            assert [m["match_id"] for m in first["matches"]] == [made[-1]] and first["next_cursor"]
            continue
        listed = [m["match_id"] for m in _walk(client, token, "active", limit)]
        assert listed == made[::-1], f"limit {limit}"
    # a page walked while new matches arrive: the new ones are newer than the cursor, so never shown twice
    page = client.get("/v1/me/matches", params={"limit": 50}, headers=bearer(token)).json()
    newer = [_match_with(client, token) for _ in range(3)]
    rest, cursor = [], page["next_cursor"]
    while cursor:
        body = client.get("/v1/me/matches", params={"limit": 50, "cursor": cursor}, headers=bearer(token)).json()
        rest += [m["match_id"] for m in body["matches"]]
        cursor = body["next_cursor"]
    assert [m["match_id"] for m in page["matches"]] + rest == made[::-1]
    assert [m["match_id"] for m in _walk(client, token, "active", 100)][:3] == newer[::-1]
    bad = client.get("/v1/me/matches", params={"cursor": "not-a-cursor"}, headers=bearer(token))
    assert bad.status_code == 400 and bad.json()["code"] == "malformed_request"


def test_finished_matches_move_to_the_finished_list_with_result_and_opponents(client, new_player, drain):
    me, token = new_player()
    rival_id, rival = new_player()
    played = []
    for _ in range(3):
        match_id = _match_with(client, token)
        client.post(f"/v1/matches/{match_id}/seats", json={"seat": 1}, headers=bearer(rival))
        played.append(match_id)
    waiting = _match_with(client, token)
    for match_id in played[:2]:  # one round of high card: both play a card, the match is over
        for who in (token, rival):
            match = client.get(f"/v1/matches/{match_id}", headers=bearer(who)).json()
            action = client.get(f"/v1/matches/{match_id}/legal-actions", headers=bearer(who)).json()["actions"][0]
            done = client.post(f"/v1/matches/{match_id}/actions", json={"action": action},
                               headers={**bearer(who), "If-Match": f'"{match["version"]}"'})
            assert done.status_code == 200, done.text
    drain()  # the players job moves them (a listing would too)
    finished = _walk(client, token, "finished", 10)
    assert [m["match_id"] for m in finished] == played[:2][::-1]
    assert all(m["status"] == "finished" and m["result"] is not None for m in finished)
    assert finished[0]["opponents"] == [{"seat": 1, "name": finished[0]["opponents"][0]["name"], "player": rival_id,
                                         "bot": None}]
    active = _walk(client, token, "active", 10)
    assert [m["match_id"] for m in active] == [waiting, played[2]]
    assert active[0]["status"] == "waiting" and active[1]["status"] == "active"
    assert active[1]["your_turn"] is True and active[1]["my_seats"] == [0]


def test_one_stream_tells_the_player_of_its_turns_everywhere_and_of_new_matches(live_server, client, new_player):
    _, token = new_player()
    _, rival = new_player()
    first = _match_with(client, token)
    client.post(f"/v1/matches/{first}/seats", json={"seat": 1}, headers=bearer(rival))
    with httpx.Client(base_url=live_server, timeout=30) as http:
        with http.stream("GET", "/v1/me/turns", params={"format": "ndjson"}, headers=bearer(token)) as stream:
            lines = stream.iter_lines()
            notice = _next_turn(lines)
            assert notice["match_id"] == first and notice["your_turn"] is True and notice["seat"] == 0
            # a match made after the stream opened is found and announced (its turn or not)
            second = _match_with(client, token)
            client.post(f"/v1/matches/{second}/seats", json={"seat": 1}, headers=bearer(rival))
            notice = _next_turn(lines)
            assert notice["match_id"] == second and notice["status"] == "active"
    refused = httpx.get(f"{live_server}/v1/me/turns", headers=bearer("gp.nobody.x.y"))
    assert refused.status_code == 401 and refused.json()["code"] == "invalid_token"


def _next_turn(lines) -> dict:
    for line in lines:
        message = json.loads(line)
        if message["type"] == "turn":
            return message
        assert message["type"] == "keepalive", message
    raise AssertionError("the stream ended")


def test_a_cursor_holding_nan_or_infinity_is_refused_like_any_cursor_the_service_did_not_give(client, new_player):
    """JSON as Python reads it admits NaN and Infinity, and Redis refuses a NaN score bound: such a cursor was a 500
    (found by a test written against the mutation run's survivors). No cursor the service gives holds one."""
    _, token = new_player()
    _match_with(client, token)
    for number in ("NaN", "Infinity", "-Infinity"):
        cursor = base64.urlsafe_b64encode(f'[{number}, "x"]'.encode()).decode().rstrip("=")
        for path, headers in (("/v1/me/matches", bearer(token)), ("/v1/leaderboards/high-card", {})):
            answer = client.get(path, params={"cursor": cursor}, headers=headers)
            assert answer.status_code == 400, (number, path, answer.text)
            assert answer.json()["code"] == "malformed_request"
