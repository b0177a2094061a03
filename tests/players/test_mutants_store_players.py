"""The players' store held to its exact behaviour: player tokens (service/store/players.py), leaving a quick match
(service/store/quickmatch.py), the leaderboards' pages and ranks (service/store/ratings.py) and rematches
(service/store/rematch.py). Written against the mutation run's survivors (tests/mutation/run.py, module
``players``): a problem's message changed, a branch flipped, an argument dropped must each fail a test here.

Everything goes through the REST API on a real Redis; where a state cannot be reached on purpose through it (a
maker of a rematch in progress, a player paired between two requests, a leaderboard entry without its rating,
tokens listed out of the order the hash holds them) the test writes that state in the keys' documented layout."""

from __future__ import annotations

import json
import time
import uuid

import pytest
import redis.asyncio as aioredis

from service.players.ratings import Rating
from service.store import MatchStore
from service.store.errors import PlayerNotFound
from service.store.players import PlayerStore, page_desc

from .conftest import bearer, play_out, unique_name


def _player_key(settings, player_id: str) -> str:
    return f"{settings.key_prefix}:p:{{{player_id}}}"


def _match_key(settings, match_id: str) -> str:
    return f"{settings.key_prefix}:m:{{{match_id}}}"


def _now_ms() -> int:
    return int(time.time() * 1000)


# -- player tokens ---------------------------------------------------------------------------------------------


def test_tokens_are_listed_oldest_first_ties_by_id_whatever_order_the_hash_holds_them(client, new_player, raw,
                                                                                       settings):
    """GET /v1/players/me/tokens sorts by (created, id); a token made by POST /v1/players/me/tokens carries its
    creation time (the listing reads it)."""
    player_id, token = new_player()
    first_id = token.split(".")[2]
    made = client.post("/v1/players/me/tokens", json={}, headers=bearer(token))
    assert made.status_code == 201, made.text
    listed = client.get("/v1/players/me/tokens", headers=bearer(token))
    assert listed.status_code == 200, listed.text
    tokens = listed.json()["tokens"]
    assert [t["id"] for t in tokens] == [first_id, made.json()["token_id"]]
    assert all(abs(t["created"] - _now_ms()) < 600_000 for t in tokens)
    assert tokens[0]["created"] <= tokens[1]["created"]
    # two older tokens, written after the others and in reverse id order: the listing puts them first, by id
    tokens_key = f"{_player_key(settings, player_id)}:tokens"
    raw.hset(tokens_key, "zz-older", json.dumps({"hash": "0" * 64, "created": 5}))
    raw.hset(tokens_key, "aa-older", json.dumps({"hash": "1" * 64, "created": 5}))
    again = client.get("/v1/players/me/tokens", headers=bearer(token)).json()["tokens"]
    assert [t["id"] for t in again] == ["aa-older", "zz-older", first_id, made.json()["token_id"]]
    assert [t["created"] for t in again[:2]] == [5, 5]


def test_replacing_an_unknown_token_is_refused_and_makes_no_token(client, new_player):
    """Rotation with ``replace`` naming no token of the player: 404 player_token_not_found, with its message, and
    no new token is stored (the script refused before writing)."""
    _, token = new_player()
    refused = client.post("/v1/players/me/tokens", json={"replace": "no-such-token"}, headers=bearer(token))
    assert refused.status_code == 404, refused.text
    assert refused.json()["code"] == "player_token_not_found"
    assert refused.json()["detail"] == "You have no token 'no-such-token'."
    assert len(client.get("/v1/players/me/tokens", headers=bearer(token)).json()["tokens"]) == 1


def test_a_player_holds_at_most_twenty_tokens_and_can_still_rotate_at_the_limit(client, new_player):
    """The 21st token is refused (409 too_many_player_tokens, with its message); replacing one still works."""
    _, token = new_player()
    ids = [token.split(".")[2]]
    for _ in range(19):
        made = client.post("/v1/players/me/tokens", json={}, headers=bearer(token))
        assert made.status_code == 201, made.text
        ids.append(made.json()["token_id"])
    full = client.post("/v1/players/me/tokens", json={}, headers=bearer(token))
    assert full.status_code == 409, full.text
    assert full.json()["code"] == "too_many_player_tokens"
    assert full.json()["detail"] == "A player holds at most 20 tokens; revoke one first."
    rotated = client.post("/v1/players/me/tokens", json={"replace": ids[-1]}, headers=bearer(token))
    assert rotated.status_code == 201, rotated.text
    listed = [t["id"] for t in client.get("/v1/players/me/tokens", headers=bearer(token)).json()["tokens"]]
    assert len(listed) == 20 and ids[-1] not in listed and rotated.json()["token_id"] in listed


def test_revoking_a_token_the_player_does_not_have_says_which(client, new_player):
    _, token = new_player()
    refused = client.delete("/v1/players/me/tokens/not-mine", headers=bearer(token))
    assert refused.status_code == 404 and refused.json()["code"] == "player_token_not_found"
    assert refused.json()["detail"] == "You have no token 'not-mine'."


def test_a_player_token_malformed_or_unknown_reading_a_match_is_refused_as_one(client, new_player):
    """A bearer shaped like a player token (``gp.``) is a player token: read with a match (one round trip) or
    alone, a malformed one is refused as an unknown one is, never handed to the identity provider's check. No
    bearer, or a seat token, where a player is needed: ``player_required``, saying how to get one."""
    _, token = new_player()
    match_id = client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
    assert client.post(f"/v1/matches/{match_id}/seats", json={"seat": 0}, headers=bearer(token)).status_code == 201
    assert client.get(f"/v1/matches/{match_id}", headers=bearer(token)).json()["my_seat"] == 0
    for presented in ("gp.too.short", "gp..x.y", token.rpartition(".")[0] + ".wrong-secret"):
        for refused in (client.get(f"/v1/matches/{match_id}", headers=bearer(presented)),
                        client.get("/v1/me/matches", headers=bearer(presented))):
            assert refused.status_code == 401, presented
            assert (refused.json()["code"], refused.json()["detail"]) == (
                "invalid_token", "This player token is revoked or unknown."), presented
    seat_token = client.post(f"/v1/matches/{match_id}/seats", json={"seat": 1, "name": "Seated"}).json()["token"]
    for headers in ({}, bearer(seat_token)):
        refused = client.get("/v1/me/matches", headers=headers)
        assert refused.status_code == 401 and refused.json()["code"] == "player_required", refused.text
        assert refused.json()["detail"] == ("Send a player token (or your identity provider's JWT) as the bearer "
                                            "token; POST /v1/players makes a player and its first token.")


# -- my matches: the per-player index ----------------------------------------------------------------------------


def test_a_players_matches_are_kept_under_the_documented_keys_active_then_finished(client, new_player, raw, settings,
                                                                                     drain):
    """service/store/players.py's key layout (what a process of another release reads): a seat taken is listed in
    ``...:matches:active``, scored by when it was taken; a finished match moves to ``...:matches:finished``."""
    me, token = new_player()
    _, rival = new_player()
    match_id = client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
    before = _now_ms()
    client.post(f"/v1/matches/{match_id}/seats", json={"seat": 0}, headers=bearer(token))
    active, finished = (f"{_player_key(settings, me)}:matches:{status}" for status in ("active", "finished"))
    assert before <= raw.zscore(active, match_id) <= _now_ms() and raw.zscore(finished, match_id) is None
    taken = raw.zscore(active, match_id)
    client.post(f"/v1/matches/{match_id}/seats", json={"seat": 1}, headers=bearer(rival))
    play_out(client, match_id, [token, rival])
    drain()
    assert raw.zscore(active, match_id) is None and raw.zscore(finished, match_id) == taken


def test_a_refused_join_leaves_no_entry_and_keeps_an_earlier_ones_place(client, new_player, raw, settings):
    """A join listed first and then refused takes its entry back; a refused second join of a match the player is
    already listed in keeps that entry and its place in time (the listing is by when the seat was taken)."""
    me, token = new_player()
    _, rival = new_player()
    active = f"{_player_key(settings, me)}:matches:active"
    taken_by_rival = client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
    client.post(f"/v1/matches/{taken_by_rival}/seats", json={"seat": 0}, headers=bearer(rival))
    refused = client.post(f"/v1/matches/{taken_by_rival}/seats", json={"seat": 0}, headers=bearer(token))
    assert refused.status_code == 409, refused.text
    assert raw.zscore(active, taken_by_rival) is None
    first, second = (client.post("/v1/matches", json={"game": "high-card"}).json()["id"] for _ in range(2))
    for match_id in (first, second):
        client.post(f"/v1/matches/{match_id}/seats", json={"seat": 0}, headers=bearer(token))
        time.sleep(0.002)  # scores in ms: each join later than the one before
    place = raw.zscore(active, first)
    again = client.post(f"/v1/matches/{first}/seats", json={"seat": 0}, headers=bearer(token))
    assert again.status_code == 409, again.text
    assert raw.zscore(active, first) == place
    listed = client.get("/v1/me/matches", headers=bearer(token)).json()["matches"]
    assert [m["match_id"] for m in listed] == [second, first]


@pytest.mark.anyio
async def test_a_player_read_from_the_store_is_the_one_made_with_its_time_made(redis_url, key_prefix, games):
    """``PlayerStore.get`` (what every player-bound request starts from): id, name and the time it was made, in
    ms, as ``create`` answered them; an unknown or empty id is no player."""
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        players = PlayerStore(MatchStore(client, games, prefix=key_prefix, finished_ttl=600, idle_ttl=600))
        before = _now_ms()
        made, _, _ = await players.create(unique_name())
        assert before <= made.created <= _now_ms()
        assert await players.get(made.id) == made
        for unknown in ("", "nobody"):
            with pytest.raises(PlayerNotFound):
                await players.get(unknown)
    finally:
        await client.aclose()

# -- leaving a quick match -----------------------------------------------------------------------------------------


def test_leaving_a_quick_match_takes_the_player_out_of_the_queue(client, new_player):
    """DELETE /v1/quick-match: the player is idle at once and no longer paired by the queue; leaving again is 404
    not_queued with its message; the player may join again (no leftover claim on a queue)."""
    (_, alice), (_, bob) = new_player(), new_player()
    ask = {"game": "high-card", "rated": False, "turn_seconds": 4321}  # a queue of its own
    waiting = client.post("/v1/quick-match", json=ask, headers=bearer(alice))
    assert waiting.status_code == 202 and waiting.json()["status"] == "waiting", waiting.text
    left = client.delete("/v1/quick-match", headers=bearer(alice))
    assert left.status_code == 200, left.text
    assert left.json() == {"status": "idle", "queue": None, "last": None}
    assert client.get("/v1/quick-match", headers=bearer(alice)).json()["status"] == "idle"
    again = client.delete("/v1/quick-match", headers=bearer(alice))
    assert again.status_code == 404 and again.json()["code"] == "not_queued"
    assert again.json()["detail"] == "You are not waiting for a quick match."
    # bob finds nobody in the queue: alice really left it
    assert client.post("/v1/quick-match", json=ask, headers=bearer(bob)).json()["status"] == "waiting"
    # and alice can wait again: she is paired with bob now
    paired = client.post("/v1/quick-match", json=ask, headers=bearer(alice))
    assert paired.status_code == 201 and paired.json()["status"] == "matched", paired.text


def test_leaving_once_paired_says_so_and_keeps_the_claim(client, new_player, raw, settings):
    """A player whose waiting record names a queue they are no longer in (the pairing took them out, its match is
    being made) cannot leave: 404 not_queued, "paired just now"; the record stays for the maker to clear."""
    player_id, alice = new_player()
    waiting_key = f"{_player_key(settings, player_id)}:qm"
    raw.set(waiting_key, "high-card/standard/2/casual/4322")
    refused = client.delete("/v1/quick-match", headers=bearer(alice))
    assert refused.status_code == 404 and refused.json()["code"] == "not_queued", refused.text
    assert refused.json()["detail"] == "You were paired just now: see your matches."
    assert raw.get(waiting_key) == "high-card/standard/2/casual/4322"
    assert client.get("/v1/quick-match", headers=bearer(alice)).json()["status"] == "pairing"
    raw.delete(waiting_key)


# -- leaderboards ------------------------------------------------------------------------------------------------


def test_leaderboard_pages_rank_across_pages_and_skip_an_entry_without_its_rating(client, new_player, raw, settings):
    """GET /v1/leaderboards/{game}: each row has its rank on the whole board (a board position held by an entry
    without a stored rating counts, the entry is not shown and the rows after it still are), its player's name and
    that player's own rating; the cursor gives the next page, ranked on from where the first stopped.

    The board and ratings are written as rate_match writes them (service/store/ratings.py), with ratings far
    above any other test's, so these players are the top of the board."""
    game, variant = "sorcerers-stone", "snape"
    board = f"{settings.key_prefix}:lb:{{{game}/{variant}}}"
    base = 1_000_000 + uuid.uuid4().int % 1000 * 100  # a fresh band of its own
    made = {}
    for k, stem in enumerate(("Top", "Second", "Third")):
        player_id, _ = new_player(unique_name(stem))
        rating = {"mu": base + 30 - 10 * k, "sigma": 2.0 + k, "games": 7 + k, "wins": 4 + k, "losses": 2,
                  "draws": 1}
        raw.hset(f"{_player_key(settings, player_id)}:ratings", f"{game}/{variant}", json.dumps(rating))
        made[player_id] = rating
    ids = list(made)
    ghost = f"ghost{uuid.uuid4().hex[:8]}"
    scores = {ids[0]: Rating(made[ids[0]]["mu"], made[ids[0]]["sigma"]).ordinal,
              ghost: base + 15.0,  # between Top and Second, and no rating stored
              ids[1]: Rating(made[ids[1]]["mu"], made[ids[1]]["sigma"]).ordinal,
              ids[2]: Rating(made[ids[2]]["mu"], made[ids[2]]["sigma"]).ordinal}
    raw.zadd(board, scores)
    assert raw.zrevrank(board, ids[0]) == 0  # nobody else is this high

    def expected(player_id: str, rank: int) -> dict:
        stored = made[player_id]
        rating = Rating(stored["mu"], stored["sigma"])
        name = client.get(f"/v1/players/{player_id}").json()["name"]
        return {"rank": rank, "player_id": player_id, "name": name, "rating": round(rating.ordinal, 3),
                "mu": round(rating.mu, 3), "sigma": round(rating.sigma, 3), "games": stored["games"],
                "wins": stored["wins"], "losses": stored["losses"], "draws": stored["draws"], "provisional": False}

    first = client.get(f"/v1/leaderboards/{game}", params={"variant": variant, "limit": 3})
    assert first.status_code == 200, first.text
    page = first.json()
    assert page["players"] == [expected(ids[0], 1), expected(ids[1], 3)]
    assert page["next_cursor"]
    second = client.get(f"/v1/leaderboards/{game}", params={"variant": variant, "limit": 1,
                                                             "cursor": page["next_cursor"]})
    assert second.status_code == 200, second.text
    assert second.json()["players"] == [expected(ids[2], 4)]
    single = client.get(f"/v1/leaderboards/{game}", params={"variant": variant, "limit": 1}).json()
    assert single["players"] == [expected(ids[0], 1)]  # a page of one row
    raw.zrem(board, *scores)


# -- rematches ---------------------------------------------------------------------------------------------------


def _seated(client, body: dict, seats: list[str | None], players: dict[int, str]) -> tuple[str, dict[int, str]]:
    """A match of ``body`` with every seat taken: seat i joined by ``players[i]`` (a player token) or anonymously
    as ``seats[i]``; returns its id and each seat's token (the seat token of an anonymous seat)."""
    created = client.post("/v1/matches", json=body)
    assert created.status_code == 201, created.text
    match_id = created.json()["id"]
    tokens = {}
    for i, name in enumerate(seats):
        if i in players:
            joined = client.post(f"/v1/matches/{match_id}/seats", json={"seat": i}, headers=bearer(players[i]))
            tokens[i] = players[i]
        else:
            joined = client.post(f"/v1/matches/{match_id}/seats", json={"seat": i, "name": name})
            tokens[i] = joined.json()["token"]
        assert joined.status_code == 201, joined.text
    return match_id, tokens


def test_a_three_seat_rematch_rotates_every_seat_keeps_variant_and_seats_and_reads_do_not_accept(
        client, new_player, raw, settings):
    """Three seats (an anonymous one first): problems before the match ends and without a token, with their
    messages; a status read (GET) accepts nothing; the holder of seat i sits at i - 1 (mod 3), the anonymous seat's
    new token waits a day for it under the old match's key, shown once; the rematch keeps the variant and the seat
    count, and is not listed in the lobby."""
    (_, alice), (_, bob) = new_player(), new_player()
    body = {"game": "spells-and-potions", "variant": "practice-1", "seats": 3}
    match_id, tokens = _seated(client, body, ["Neville", None, None], {1: alice, 2: bob})
    neville = tokens[0]
    early = client.post(f"/v1/matches/{match_id}/rematch", headers=bearer(alice))
    assert early.status_code == 409 and early.json()["code"] == "rematch_unavailable"
    assert early.json()["detail"] == "A rematch is offered once the match is finished."
    old = play_out(client, match_id, [neville, alice, bob])
    nobody = client.post(f"/v1/matches/{match_id}/rematch")
    assert nobody.status_code == 401 and nobody.json()["code"] == "token_required"
    assert nobody.json()["detail"] == "Offer or accept a rematch with your seat token or player token."

    offered = client.post(f"/v1/matches/{match_id}/rematch", headers=bearer(neville))
    assert offered.status_code == 202, offered.text
    assert offered.json() == {"match_id": match_id, "rematch_id": None, "accepted": [0], "waiting_for": [1, 2],
                              "seat": None, "token": None}
    for reader in (alice, bob):  # reading the state is no acceptance
        read = client.get(f"/v1/matches/{match_id}/rematch", headers=bearer(reader))
        assert read.status_code == 200, read.text
        assert read.json() == offered.json()
    accepted = client.post(f"/v1/matches/{match_id}/rematch", headers=bearer(alice)).json()
    assert (accepted["accepted"], accepted["waiting_for"], accepted["rematch_id"]) == ([0, 1], [2], None)
    made = client.post(f"/v1/matches/{match_id}/rematch", headers=bearer(bob))
    assert made.status_code == 201, made.text
    new_id = made.json()["rematch_id"]
    assert made.json() == {"match_id": match_id, "rematch_id": new_id, "accepted": [0, 1, 2], "waiting_for": [],
                           "seat": 1, "token": None}
    token_key = f"{_match_key(settings, match_id)}:rematch:token:0"
    assert 0 < raw.ttl(token_key) <= 24 * 3600  # kept a day for its seat to collect
    collected = client.get(f"/v1/matches/{match_id}/rematch", headers=bearer(neville)).json()
    assert collected["seat"] == 2 and collected["token"] and collected["rematch_id"] == new_id
    assert client.get(f"/v1/matches/{match_id}/rematch", headers=bearer(neville)).json()["token"] is None
    assert client.get(f"/v1/matches/{match_id}/rematch", headers=bearer(alice)).json()["seat"] == 0

    rematch = client.get(f"/v1/matches/{new_id}", headers=bearer(alice)).json()
    assert (rematch["game"], rematch["variant"], len(rematch["seats"])) == ("spells-and-potions", "practice-1", 3)
    assert rematch["options"] == old["options"]
    assert [s["name"] for s in rematch["seats"]] == [old["seats"][1]["name"], old["seats"][2]["name"], "Neville"]
    assert rematch["my_seat"] == 0
    assert client.get(f"/v1/matches/{new_id}", headers=bearer(bob)).json()["my_seat"] == 1
    assert client.get(f"/v1/matches/{new_id}", headers=bearer(collected["token"])).json()["my_seat"] == 2
    assert raw.hget(_match_key(settings, new_id), "unlisted") == "1"


def test_a_seat_left_empty_stays_empty_in_the_rematch_which_is_not_in_the_lobby(client, new_player, raw, settings):
    """A match that finished with seat 0 given up: only the remaining player accepts, nobody is waited for, the
    player still gets their rotated seat (the empty seat before it is skipped, not the end of the seats), and the
    rematch, with its seat free, is not offered in the lobby."""
    _, alice = new_player()
    match_id, tokens = _seated(client, {"game": "high-card", "options": {"rounds": 1}}, ["Ron", None], {1: alice})
    legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=bearer(tokens[0])).json()
    assert legal["actions"], legal  # Ron plays his card, then gives up his seat; alice plays hers and it ends
    played = client.post(f"/v1/matches/{match_id}/actions", json={"action": legal["actions"][0]},
                         headers={**bearer(tokens[0]), "If-Match": f'"{legal["version"]}"'})
    assert played.status_code == 200, played.text
    left = client.delete(f"/v1/matches/{match_id}/seats/0", headers=bearer(tokens[0]))
    assert left.status_code == 200, left.text
    old = play_out(client, match_id, [alice])
    assert [s["joined"] for s in old["seats"]] == [False, True]
    made = client.post(f"/v1/matches/{match_id}/rematch", headers=bearer(alice))
    assert made.status_code == 201, made.text
    new_id = made.json()["rematch_id"]
    assert made.json() == {"match_id": match_id, "rematch_id": new_id, "accepted": [1], "waiting_for": [],
                           "seat": 0, "token": None}
    rematch = client.get(f"/v1/matches/{new_id}", headers=bearer(alice)).json()
    assert rematch["my_seat"] == 0 and [s["joined"] for s in rematch["seats"]] == [True, False]
    assert rematch["status"] == "waiting"
    assert raw.zscore(f"{settings.key_prefix}:lobby:high-card", new_id) is None


def test_a_rated_timed_quick_match_gives_a_rated_timed_rematch(client, new_player, raw, settings):
    """The rematch of a rated quick match with a turn timer is rated and has the same timer."""
    (_, alice), (_, bob) = new_player(), new_player()
    ask = {"game": "high-card", "rated": True, "turn_seconds": 3601}  # a queue of its own
    assert client.post("/v1/quick-match", json=ask, headers=bearer(alice)).json()["status"] == "waiting"
    paired = client.post("/v1/quick-match", json=ask, headers=bearer(bob)).json()
    assert paired["status"] == "matched", paired
    match_id = paired["last"]["match_id"]
    play_out(client, match_id, [alice, bob])
    assert client.post(f"/v1/matches/{match_id}/rematch", headers=bearer(alice)).status_code == 202
    made = client.post(f"/v1/matches/{match_id}/rematch", headers=bearer(bob))
    assert made.status_code == 201, made.text
    new_id = made.json()["rematch_id"]
    record = raw.hmget(_match_key(settings, new_id), ["rated", "turn_seconds", "hot_seat", "variant", "seats"])
    assert record == ["1", "3601", None, "standard", "2"]
    listed = {m["match_id"]: m for m in client.get("/v1/me/matches", headers=bearer(alice)).json()["matches"]}
    assert listed[new_id]["rated"] is True


def test_a_hot_seat_rematch_is_hot_seat_so_one_player_takes_both_seats_again(client, new_player, raw, settings):
    _, alice = new_player()
    created = client.post("/v1/matches", json={"game": "high-card", "hot_seat": True, "options": {"rounds": 1}})
    match_id = created.json()["id"]
    seat_tokens = [client.post(f"/v1/matches/{match_id}/seats", json={"seat": i}, headers=bearer(alice)).json()["token"]
                   for i in range(2)]
    play_out(client, match_id, seat_tokens)
    assert client.post(f"/v1/matches/{match_id}/rematch", headers=bearer(seat_tokens[0])).status_code == 202
    made = client.post(f"/v1/matches/{match_id}/rematch", headers=bearer(seat_tokens[1]))
    assert made.status_code == 201, made.text
    new_id = made.json()["rematch_id"]
    assert raw.hget(_match_key(settings, new_id), "hot_seat") == "1"
    rematch = client.get(f"/v1/matches/{new_id}", headers=bearer(alice)).json()
    assert rematch["status"] == "active" and all(s["joined"] for s in rematch["seats"])


def test_a_rematch_being_made_is_waited_for_and_one_whose_maker_died_is_made_by_the_next_read(
        client, new_player, raw, settings):
    """Everyone accepted and a maker started (``making``, ms): within MAKING_GRACE (30 s) a status read waits for
    it; once the grace is past, the read makes the rematch itself."""
    (_, alice), (_, bob) = new_player(), new_player()
    match_id, _ = _seated(client, {"game": "high-card", "options": {"rounds": 1}}, [None, None],
                            {0: alice, 1: bob})
    play_out(client, match_id, [alice, bob])
    rematch_key = f"{_match_key(settings, match_id)}:rematch"
    raw.hset(rematch_key, mapping={"accepted:0": 1, "accepted:1": 1, "making": _now_ms() - 2_000})
    waiting = client.get(f"/v1/matches/{match_id}/rematch", headers=bearer(alice))
    assert waiting.status_code == 200, waiting.text
    assert waiting.json() == {"match_id": match_id, "rematch_id": None, "accepted": [0, 1], "waiting_for": [],
                              "seat": None, "token": None}
    raw.hset(rematch_key, "making", _now_ms() - 60_000)
    made = client.get(f"/v1/matches/{match_id}/rematch", headers=bearer(alice)).json()
    assert made["rematch_id"] and made["seat"] == 1
    assert client.get(f"/v1/matches/{made['rematch_id']}", headers=bearer(bob)).json()["my_seat"] == 0


# -- a page of a sorted set (service/store/players.py, page_desc: leaderboards and match lists) ------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("scores", [[5.0] * 10, [9.0, 8.0, 7.0, 6.0]], ids=["ten tied", "four apart"])
async def test_pages_list_every_member_once_in_order_and_the_last_full_page_has_no_next(redis_url, key_prefix, scores):
    """Pages of two, cursor after cursor: ten members on one score (each page skips the ties shown before it, which
    takes several reads of the set) and four on four scores (the second page is the last: no cursor to an empty
    third)."""
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    key = f"{key_prefix}:pages:{uuid.uuid4().hex[:8]}"
    members = {f"m{i:02d}": score for i, score in enumerate(scores)}
    await client.zadd(key, members)
    expected = sorted(members.items(), key=lambda item: (-item[1], [-ord(c) for c in item[0]]))
    listed, cursor, pages = [], None, 0
    while True:
        page, cursor = await page_desc(client, key, cursor, 2)
        listed += page
        pages += 1
        if cursor is None:
            break
    await client.aclose()
    assert listed == expected
    assert pages == len(scores) // 2
