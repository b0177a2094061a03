"""Every field of the players' GraphQL types (schema/players.py), held to its exact value: the REST answer for the
same object (docs/api.md, "Players"; openapi/openapi.yaml) or what the test set up. Written against the mutation
run's survivors (tests/mutation/run.py, module ``players``): a converter argument set to None, a branch flipped, a
problem turned into another must each fail a test here.

Covered: createPlayer, createPlayerToken, revokePlayerToken, me { id name ratings tokens matches myTurn },
player, quickMatch, joinQuickMatch, leaveQuickMatch, offerRematch, leaderboard and the playerTurns subscription,
with every problem each can answer."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time

from tests.live.clients import subscription

from .conftest import bearer, play_out, unique_name
from .test_graphql import gql

PROBLEM = "... on Problem { code message ruleCode }"
RATING = "game variant rating mu sigma games wins losses draws provisional"
QUICK = f"""__typename ... on QuickMatchStatus {{ status queue {{ game variant seats rated turnSeconds since }}
  last {{ matchId seat at }} }} {PROBLEM}"""
MY_MATCH = """matchId game variant status rated mySeats opponents { seat name player bot } toAct yourTurn
  result { winners scores reason cause } created updated"""
REMATCH = f"""__typename ... on RematchStatus {{ matchId rematchId accepted waitingFor seat token }} {PROBLEM}"""
BOARD = f"""__typename ... on LeaderboardPage {{ game variant nextCursor
  players {{ rank playerId name rating mu sigma games wins losses draws provisional }} }} {PROBLEM}"""
TURNS = """subscription Turns { playerTurns { __typename
  ... on TurnNotice { matchId seat version status toAct yourTurn } ... on StreamEnded { reason message }
  ... on Problem { code message ruleCode } } }"""


def snake(value, enums: tuple[str, ...] = ()):
    """A GraphQL answer as REST spells it: snake_case keys, the enum values of ``enums`` in lower case, no
    ``__typename``."""
    if isinstance(value, list):
        return [snake(v, enums) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key == "__typename":
            continue
        name = re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()
        out[name] = item.lower() if name in enums and isinstance(item, str) else snake(item, enums)
    return out


def problem(typename: str, rest_response, **details) -> dict:
    """The GraphQL problem that answers as ``rest_response`` (its code and detail) does, with ``details``."""
    body = rest_response.json()
    return {"__typename": typename, "code": body["code"].upper(), "message": body["detail"], "ruleCode": None,
            **details}


def refused(typename: str, code: str, message: str) -> dict:
    return {"__typename": typename, "code": code, "message": message, "ruleCode": None}


def test_players_and_their_tokens_field_by_field(client):
    name = unique_name("F")
    made = gql(client, f"""mutation Op($name: String!) {{ createPlayer(input: {{name: $name}}) {{ __typename
        ... on PlayerCreated {{ player {{ id name created }} token tokenId }} {PROBLEM} }} }}""",
               {"name": name})["createPlayer"]
    assert made["__typename"] == "PlayerCreated", made
    player_id, first, first_id = made["player"]["id"], made["token"], made["tokenId"]
    profile = client.get("/v1/players/me", headers=bearer(first)).json()  # the token works, and is this player's
    assert made["player"] == {"id": profile["id"], "name": name, "created": profile["created"]}
    assert profile == {"id": player_id, "name": name, "created": profile["created"], "ratings": []}
    assert abs(profile["created"] - time.time() * 1000) < 600_000
    listed = client.get("/v1/players/me/tokens", headers=bearer(first)).json()["tokens"]
    assert [t["id"] for t in listed] == [first_id] and f".{first_id}." in first

    # the refusals of createPlayer, as REST refuses the same names
    create = f"""mutation Op($name: String!) {{ createPlayer(input: {{name: $name}}) {{ __typename {PROBLEM} }} }}"""
    assert gql(client, create, {"name": "<x>"})["createPlayer"] == problem(
        "InvalidName", client.post("/v1/players", json={"name": "<x>"}))
    assert gql(client, create, {"name": name.upper()})["createPlayer"] == problem(
        "NameTaken", client.post("/v1/players", json={"name": name.upper()}))
    missing = client.post("/graphql", json={"query": create, "variables": {}, "operationName": "Op"}).json()
    assert missing.get("data") is None and missing["errors"][0]["extensions"]["code"] == "bad_user_input"

    me = f"""query Op {{ me {{ __typename ... on Me {{ id name ratings {{ {RATING} }} tokens {{ id created }} }}
        {PROBLEM} }} }}"""
    assert gql(client, me, token=first)["me"] == {"__typename": "Me", "id": player_id, "name": name, "ratings": [],
                                                  "tokens": listed}
    assert gql(client, me)["me"] == problem("PlayerRequired", client.get("/v1/players/me"))
    assert gql(client, me, token="gp.x.y.z")["me"] == problem(
        "InvalidToken", client.get("/v1/players/me", headers=bearer("gp.x.y.z")))

    # a second token, then a rotation: the new token revokes the one named in the same step
    issue = f"""mutation Op($replace: ID) {{ createPlayerToken(input: {{replace: $replace}}) {{ __typename
        ... on PlayerTokenIssued {{ token tokenId replaced }} {PROBLEM} }} }}"""
    second = gql(client, issue, {"replace": None}, first)["createPlayerToken"]
    assert second["__typename"] == "PlayerTokenIssued" and second["replaced"] is None
    assert f".{second['tokenId']}." in second["token"] and second["token"] != first
    assert client.get("/v1/players/me", headers=bearer(second["token"])).json()["id"] == player_id
    third = gql(client, issue, {"replace": first_id}, second["token"])["createPlayerToken"]
    assert third["__typename"] == "PlayerTokenIssued" and third["replaced"] == first_id
    assert client.get("/v1/players/me", headers=bearer(third["token"])).json()["id"] == player_id
    assert gql(client, me, token=first)["me"]["__typename"] == "InvalidToken"
    token = third["token"]
    listed = client.get("/v1/players/me/tokens", headers=bearer(token)).json()["tokens"]
    assert [t["id"] for t in listed] == [second["tokenId"], third["tokenId"]]
    assert gql(client, me, token=token)["me"]["tokens"] == listed
    assert gql(client, issue, {"replace": "nope"}, token)["createPlayerToken"] == problem(
        "PlayerTokenNotFound", client.post("/v1/players/me/tokens", json={"replace": "nope"}, headers=bearer(token)))
    assert gql(client, issue, {"replace": None})["createPlayerToken"] == problem(
        "PlayerRequired", client.post("/v1/players/me/tokens", json={}))
    assert gql(client, issue, {"replace": None}, "gp.x.y.z")["createPlayerToken"] == problem(
        "InvalidToken", client.post("/v1/players/me/tokens", json={}, headers=bearer("gp.x.y.z")))

    revoke = f"""mutation Op($id: ID!) {{ revokePlayerToken(input: {{tokenId: $id}}) {{ __typename
        ... on PlayerTokenRevoked {{ tokenId }} {PROBLEM} }} }}"""
    assert gql(client, revoke, {"id": second["tokenId"]}, token)["revokePlayerToken"] == {
        "__typename": "PlayerTokenRevoked", "tokenId": second["tokenId"]}
    assert [t["id"] for t in client.get("/v1/players/me/tokens", headers=bearer(token)).json()["tokens"]] == [
        third["tokenId"]]
    assert client.get("/v1/players/me", headers=bearer(second["token"])).status_code == 401
    assert gql(client, revoke, {"id": second["tokenId"]}, token)["revokePlayerToken"] == problem(
        "PlayerTokenNotFound", client.delete(f"/v1/players/me/tokens/{second['tokenId']}", headers=bearer(token)))
    assert gql(client, revoke, {"id": "x"})["revokePlayerToken"] == problem(
        "PlayerRequired", client.delete("/v1/players/me/tokens/x"))
    assert gql(client, revoke, {"id": "x"}, "gp.x.y.z")["revokePlayerToken"] == problem(
        "InvalidToken", client.delete("/v1/players/me/tokens/x", headers=bearer("gp.x.y.z")))

    # 20 tokens at most: the 21st is refused, as REST refuses it
    for _ in range(19):
        assert gql(client, issue, {"replace": None}, token)["createPlayerToken"]["__typename"] == "PlayerTokenIssued"
    assert gql(client, issue, {"replace": None}, token)["createPlayerToken"] == problem(
        "TooManyPlayerTokens", client.post("/v1/players/me/tokens", json={}, headers=bearer(token)))

    lookup = f"""query Op($id: ID!) {{ player(id: $id) {{ __typename
        ... on PlayerProfile {{ id name created ratings {{ {RATING} }} }} {PROBLEM} }} }}"""
    assert gql(client, lookup, {"id": player_id})["player"] == {"__typename": "PlayerProfile", **profile}
    assert gql(client, lookup, {"id": "nobody"})["player"] == problem("PlayerNotFound",
                                                                      client.get("/v1/players/nobody"))


def test_quick_match_matches_ratings_leaderboard_and_rematch_field_by_field(client, new_player, drain):
    (a_id, a), (b_id, b) = new_player(), new_player()
    a_name, b_name = (client.get(f"/v1/players/{p}").json()["name"] for p in (a_id, b_id))
    status = f"query Op {{ quickMatch {{ {QUICK} }} }}"
    join = f"mutation Op($input: QuickMatchInput!) {{ joinQuickMatch(input: $input) {{ {QUICK} }} }}"
    leave = f"mutation Op {{ leaveQuickMatch {{ {QUICK} }} }}"

    def rest_status(token: str) -> dict:
        return client.get("/v1/quick-match", headers=bearer(token)).json()

    idle = {"__typename": "QuickMatchStatus", "status": "IDLE", "queue": None, "last": None}
    assert gql(client, status, token=a)["quickMatch"] == idle and rest_status(a)["status"] == "idle"

    # waiting, every field of the queue as asked (an unrated queue with a timer no other test asks for)
    ask = {"game": "sorcerers-stone", "variant": "quirrell", "seats": 3, "rated": False, "botsAfter": 3600,
           "turnSeconds": 97}
    waiting = gql(client, join, {"input": ask}, a)["joinQuickMatch"]
    rest = rest_status(a)
    assert waiting == {"__typename": "QuickMatchStatus", "status": "WAITING", "last": None,
                       "queue": {"game": "sorcerers-stone", "variant": "quirrell", "seats": 3, "rated": False,
                                 "turnSeconds": 97, "since": rest["queue"]["since"]}}
    assert snake(waiting, ("status",)) == rest and abs(rest["queue"]["since"] - time.time() * 1000) < 600_000
    assert gql(client, status, token=a)["quickMatch"] == waiting
    again = {"game": "high-card", "rated": False}
    assert gql(client, join, {"input": ask}, a)["joinQuickMatch"] == problem(
        "AlreadyQueued", client.post("/v1/quick-match", json=again, headers=bearer(a)))
    assert gql(client, leave, token=a)["leaveQuickMatch"] == idle and rest_status(a)["status"] == "idle"
    assert gql(client, leave, token=a)["leaveQuickMatch"] == problem(
        "NotQueued", client.delete("/v1/quick-match", headers=bearer(a)))

    for seats in (2, 4):  # the bounds of a quick match's seats
        joined = gql(client, join, {"input": {**ask, "seats": seats}}, a)["joinQuickMatch"]
        assert joined["status"] == "WAITING" and joined["queue"]["seats"] == seats
        assert gql(client, leave, token=a)["leaveQuickMatch"] == idle

    # the refusals of joinQuickMatch; none of them queues the player
    seats = refused("InvalidOptions", "INVALID_OPTIONS", "A quick match has 2 to 4 seats.")
    bots = refused("InvalidOptions", "INVALID_OPTIONS", "botsAfter is 0 to 3600.")
    high = {"game": "high-card", "rated": False}
    timer = refused("InvalidOptions", "INVALID_OPTIONS", "turn_seconds is 1 to 86400.")  # REST: malformed_request
    for extra, answer in (({"seats": 1}, seats), ({"seats": 5}, seats), ({"botsAfter": -1}, bots),
                          ({"botsAfter": 3601}, bots), ({"turnSeconds": 0}, timer), ({"turnSeconds": 86401}, timer)):
        assert gql(client, join, {"input": {**high, **extra}}, a)["joinQuickMatch"] == answer
    assert gql(client, join, {"input": {"game": "nope"}}, a)["joinQuickMatch"] == problem(
        "UnknownGame", client.post("/v1/quick-match", json={"game": "nope"}, headers=bearer(a)))
    assert gql(client, join, {"input": {**high, "variant": "nope"}}, a)["joinQuickMatch"] == problem(
        "InvalidOptions", client.post("/v1/quick-match", json={**high, "variant": "nope"}, headers=bearer(a)))
    for who, name in ((None, "PlayerRequired"), ("gp.x.y.z", "InvalidToken")):
        headers = bearer(who) if who else {}
        assert gql(client, join, {"input": high}, who)["joinQuickMatch"] == problem(
            name, client.post("/v1/quick-match", json=high, headers=headers))
        assert gql(client, status, token=who)["quickMatch"] == problem(name, client.get("/v1/quick-match",
                                                                                        headers=headers))
        assert gql(client, leave, token=who)["leaveQuickMatch"] == problem(name, client.delete("/v1/quick-match",
                                                                                               headers=headers))
    assert gql(client, status, token=a)["quickMatch"] == idle
    wrong = client.post("/graphql", json={"query": join, "variables": {"input": {"rated": True}},
                                          "operationName": "Op"}, headers=bearer(a)).json()
    assert wrong.get("data") is None and wrong["errors"][0]["extensions"]["code"] == "bad_user_input"

    # a rated quick match: the second join makes it, the first learns of it from quickMatch
    rated = {"game": "high-card"}
    assert gql(client, join, {"input": rated}, a)["joinQuickMatch"]["status"] == "WAITING"
    made = gql(client, join, {"input": rated}, b)["joinQuickMatch"]
    assert made["status"] == "MATCHED" and made["queue"] is None
    assert snake(made, ("status",)) == rest_status(b)
    found = gql(client, status, token=a)["quickMatch"]
    assert snake(found, ("status",)) == rest_status(a) and found["status"] == "MATCHED"
    quick_id = made["last"]["matchId"]
    assert found["last"]["matchId"] == quick_id and {found["last"]["seat"], made["last"]["seat"]} == {0, 1}
    assert abs(found["last"]["at"] - time.time() * 1000) < 600_000

    # three more matches of A's: against an anonymous seat (Sorcerer's Stone, which ends with a cause),
    # against a bot, and one still waiting for its second seat
    stone = client.post("/v1/matches", json={"game": "sorcerers-stone", "variant": "quirrell"}).json()["id"]
    assert client.post(f"/v1/matches/{stone}/seats", json={"seat": 0}, headers=bearer(a)).status_code == 201
    neville = client.post(f"/v1/matches/{stone}/seats", json={"seat": 1, "name": "Neville"}).json()["token"]
    with_bot = client.post("/v1/matches", json={"game": "high-card", "bots": [{"seat": 1, "level": "random"}]}
                           ).json()["id"]
    assert client.post(f"/v1/matches/{with_bot}/seats", json={"seat": 0}, headers=bearer(a)).status_code == 201
    waiting_id = client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
    assert client.post(f"/v1/matches/{waiting_id}/seats", json={"seat": 1}, headers=bearer(a)).status_code == 201

    def page(status: str, limit, cursor=None) -> tuple[dict, dict]:
        """A's page of matches through GraphQL and REST (limit as given to each)."""
        got = gql(client, f"""query Op($status: MyMatchStatus!, $cursor: String, $limit: Int!) {{ me {{ __typename
            ... on Me {{ matches(status: $status, cursor: $cursor, limit: $limit) {{ matches {{ {MY_MATCH} }}
            nextCursor }} }} }} }}""", {"status": status, "cursor": cursor, "limit": limit[0]}, a)["me"]["matches"]
        params = {"status": status.lower(), "limit": limit[1], **({"cursor": cursor} if cursor else {})}
        rest = client.get("/v1/me/matches", params=params, headers=bearer(a)).json()
        for entry in rest.get("matches", []):  # REST leaves out a cause the game's result has none of (High Card's)
            if entry["result"] is not None:
                entry["result"].setdefault("cause", None)
        return snake(got, ("status",)), rest

    active, rest = page("ACTIVE", (20, 20))
    assert active == rest and rest["next_cursor"] is None
    by_id = {m["match_id"]: m for m in rest["matches"]}
    assert set(by_id) == {quick_id, stone, with_bot, waiting_id}
    assert by_id[quick_id]["rated"] is True and by_id[stone]["rated"] is False
    assert by_id[quick_id]["opponents"] == [{"seat": 1 - found["last"]["seat"], "name": b_name, "player": b_id,
                                             "bot": None}]
    assert by_id[quick_id]["my_seats"] == [found["last"]["seat"]] and by_id[quick_id]["to_act"] == [0, 1]
    assert by_id[stone]["opponents"] == [{"seat": 1, "name": "Neville", "player": None, "bot": None}]
    assert by_id[with_bot]["opponents"][0]["bot"] == "random" and by_id[with_bot]["opponents"][0]["player"] is None
    assert by_id[waiting_id]["status"] == "waiting" and by_id[waiting_id]["to_act"] == []
    assert by_id[waiting_id]["your_turn"] is False and by_id[waiting_id]["my_seats"] == [1]
    assert all(m["result"] is None and m["game"] in ("high-card", "sorcerers-stone") for m in rest["matches"])
    assert by_id[stone]["variant"] == "quirrell" and by_id[quick_id]["variant"] == "standard"
    assert all(m["updated"] >= m["created"] > 0 for m in rest["matches"])
    first_page, rest_first = page("ACTIVE", (1, 1))
    assert first_page == rest_first and len(first_page["matches"]) == 1 and first_page["next_cursor"]
    second_page, rest_second = page("ACTIVE", (1, 1), first_page["next_cursor"])
    assert second_page == rest_second and second_page["matches"] != first_page["matches"]
    assert page("ACTIVE", (0, 1)) == (first_page, rest_first)  # a limit below 1 is 1
    assert page("ACTIVE", (20, 20), "not-a-cursor")[0] == {"matches": [], "next_cursor": None}
    my_turn = gql(client, f"query Op {{ me {{ ... on Me {{ myTurn {{ {MY_MATCH} }} }} }} }}", token=a)["me"]["myTurn"]
    assert snake(my_turn, ("status",)) == [m for m in rest["matches"] if m["your_turn"]]
    assert waiting_id not in [m["matchId"] for m in my_turn] and quick_id in [m["matchId"] for m in my_turn]

    # finished: the rated match and the Sorcerer's Stone one, each result as REST gives it
    play_out(client, quick_id, [a, b])
    play_out(client, stone, [a, neville])
    drain()  # the rating job
    finished, rest = page("FINISHED", (20, 20))
    assert finished == rest and {m["match_id"] for m in rest["matches"]} == {quick_id, stone}
    results = {m["match_id"]: m["result"] for m in rest["matches"]}
    assert results[stone]["cause"] == "end_door" and results[quick_id]["cause"] is None
    assert len(results[quick_id]["scores"]) == 2 and results[quick_id]["reason"] == "rounds played"
    assert all(m["status"] == "finished" and m["to_act"] == [] for m in rest["matches"])

    # ratings: in me, in the profile, on the leaderboard
    me = gql(client, f"query Op {{ me {{ ... on Me {{ id name ratings {{ {RATING} }} }} }} }}", token=a)["me"]
    profile = client.get(f"/v1/players/{a_id}").json()
    assert me == {"id": a_id, "name": a_name, "ratings": profile["ratings"]}
    assert [(r["game"], r["variant"], r["games"], r["provisional"]) for r in profile["ratings"]] == [
        ("high-card", "standard", 1, True)]
    row = profile["ratings"][0]
    assert row["wins"] + row["losses"] + row["draws"] == 1
    assert abs(row["rating"] - (row["mu"] - 3 * row["sigma"])) < 0.01
    lookup = f"""query Op($id: ID!) {{ player(id: $id) {{ __typename
        ... on PlayerProfile {{ id name created ratings {{ {RATING} }} }} }} }}"""
    other = client.get(f"/v1/players/{b_id}").json()
    assert gql(client, lookup, {"id": b_id})["player"] == {"__typename": "PlayerProfile", **other}
    assert other["ratings"][0]["games"] == 1

    board = f"""query Op($game: ID!, $variant: String, $cursor: String, $limit: Int!) {{
        leaderboard(game: $game, variant: $variant, cursor: $cursor, limit: $limit) {{ {BOARD} }} }}"""

    def leaderboard(variant=None, cursor=None, limit=(100, 100), game="high-card"):
        got = gql(client, board, {"game": game, "variant": variant, "cursor": cursor, "limit": limit[0]}
                  )["leaderboard"]
        params = {"limit": limit[1], **({"variant": variant} if variant else {}), **({"cursor": cursor} if cursor
                                                                                     else {})}
        return got, client.get(f"/v1/leaderboards/{game}", params=params)

    whole, rest = leaderboard()
    assert whole["__typename"] == "LeaderboardPage" and snake(whole) == rest.json()
    rows = {r["player_id"]: r for r in rest.json()["players"]}
    for player, rating, name in ((a_id, row, a_name), (b_id, other["ratings"][0], b_name)):
        assert rows[player] == {"rank": rows[player]["rank"], "player_id": player, "name": name,
                                **{k: rating[k] for k in rating if k not in ("game", "variant")}}
    assert whole["game"] == "high-card" and whole["variant"] == "standard"
    top, rest = leaderboard("standard", limit=(1, 1))
    assert snake(top) == rest.json() and len(top["players"]) == 1 and top["players"][0]["rank"] == 1
    assert top["nextCursor"]
    after, rest = leaderboard("standard", top["nextCursor"], (1, 1))
    assert snake(after) == rest.json() and after["players"][0]["rank"] == 2
    assert leaderboard(limit=(0, 1))[0] == top  # a limit below 1 is 1
    assert leaderboard(cursor="not-a-cursor")[0] == {"__typename": "LeaderboardPage", "game": "high-card",
                                                      "variant": "standard", "players": [], "nextCursor": None}
    assert leaderboard("nope")[0] == refused("InvalidOptions", "INVALID_OPTIONS", "High Card has no variant 'nope'.")
    assert leaderboard(game="nope")[0] == problem("UnknownGame", client.get("/v1/leaderboards/nope"))

    # rematch of the Sorcerer's Stone match: A offers with its player token, Neville accepts with its seat token
    offer = f"mutation Op($id: ID!) {{ offerRematch(input: {{matchId: $id}}) {{ {REMATCH} }} }}"
    offered = gql(client, offer, {"id": stone}, a)["offerRematch"]
    assert offered == {"__typename": "RematchStatus", "matchId": stone, "rematchId": None, "accepted": [0],
                       "waitingFor": [1], "seat": None, "token": None}
    assert snake(offered) == client.get(f"/v1/matches/{stone}/rematch", headers=bearer(a)).json()
    accepted = gql(client, offer, {"id": stone}, neville)["offerRematch"]
    rematch_id, new_token = accepted["rematchId"], accepted["token"]
    assert accepted == {"__typename": "RematchStatus", "matchId": stone, "rematchId": rematch_id,
                        "accepted": [0, 1], "waitingFor": [], "seat": 0, "token": new_token}
    assert rematch_id and new_token.startswith("gt.")
    assert client.get(f"/v1/matches/{rematch_id}", headers=bearer(new_token)).json()["my_seat"] == 0
    assert client.get(f"/v1/matches/{rematch_id}", headers=bearer(a)).json()["my_seat"] == 1
    mine = gql(client, offer, {"id": stone}, a)["offerRematch"]  # made: A's seat in it, no new token
    assert mine == {"__typename": "RematchStatus", "matchId": stone, "rematchId": rematch_id, "accepted": [0, 1],
                    "waitingFor": [], "seat": 1, "token": None}
    assert snake(mine) == client.get(f"/v1/matches/{stone}/rematch", headers=bearer(a)).json()
    for match_id, token, name in ((with_bot, a, "RematchUnavailable"), (stone, None, "TokenRequired"),
                                  (stone, "gt.x.y", "InvalidToken"), ("nope", a, "MatchNotFound")):
        headers = bearer(token) if token else {}
        assert gql(client, offer, {"id": match_id}, token)["offerRematch"] == problem(
            name, client.post(f"/v1/matches/{match_id}/rematch", headers=headers))


def test_player_turns_notices_field_by_field(live_server, client, new_player):
    """The playerTurns subscription: a match under way is announced when it waits on the player or ends, a new one
    once it is found; each TurnNotice field as the match stands (REST). Then the stream's end when its token is
    revoked, and the refusals."""
    _, a = new_player()

    def high_card(token: str) -> tuple[str, str]:
        """A one-round match: the token's player in seat 0, Neville in seat 1; its id and Neville's token."""
        match_id = client.post("/v1/matches", json={"game": "high-card", "options": {"rounds": 1}}).json()["id"]
        assert client.post(f"/v1/matches/{match_id}/seats", json={"seat": 0}, headers=bearer(token)).status_code == 201
        return match_id, client.post(f"/v1/matches/{match_id}/seats", json={"seat": 1, "name": "Neville"}
                                     ).json()["token"]

    def act(match_id: str, token: str) -> None:
        legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=bearer(token)).json()
        played = client.post(f"/v1/matches/{match_id}/actions", json={"action": legal["actions"][0]},
                             headers={**bearer(token), "If-Match": f'"{legal["version"]}"'})
        assert played.status_code == 200, played.text

    first, neville = high_card(a)
    act(first, a)  # A has played: the match waits on Neville only, and so is not announced

    async def run() -> tuple[str, list[dict]]:
        messages = subscription(live_server, {"token": a}, TURNS)
        async with contextlib.aclosing(messages):
            pending = asyncio.ensure_future(messages.__anext__())
            second, _ = await asyncio.to_thread(high_card, a)  # a new match of A's: found by the next rescan (2 s)
            seen = [await asyncio.wait_for(pending, 30)]
            await asyncio.to_thread(act, first, neville)  # the first match is over
            seen.append(await asyncio.wait_for(messages.__anext__(), 30))
            return second, seen

    version = client.get(f"/v1/matches/{first}").json()["version"]
    second, seen = asyncio.run(run())
    assert seen == [
        {"type": "turn", "matchId": second, "seat": 0, "version": client.get(f"/v1/matches/{second}").json()["version"],
         "status": "ACTIVE", "toAct": [0, 1], "yourTurn": True},
        {"type": "turn", "matchId": first, "seat": 0, "version": version + 1, "status": "FINISHED", "toAct": [],
         "yourTurn": False}]
    assert client.get(f"/v1/matches/{first}").json()["version"] == version + 1

    # the stream ends when its token is revoked, once a match it follows has the token checked again: a seat
    # change in a match of the player's it followed from the start (Neville takes the second seat), or a match it
    # found later (one the player joined with another token), which is checked when it is first followed
    def revoked(found_later: bool) -> None:
        _, token = new_player()
        match_id, _ = high_card(token)  # both to play: the stream's first notice says it is open
        waiting_id = None if found_later else client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
        if waiting_id:
            assert client.post(f"/v1/matches/{waiting_id}/seats", json={"seat": 0},
                               headers=bearer(token)).status_code == 201
        spare = client.post("/v1/players/me/tokens", json={}, headers=bearer(token)).json()
        first_id = client.get("/v1/players/me/tokens", headers=bearer(token)).json()["tokens"][0]["id"]
        assert first_id != spare["token_id"]

        async def run() -> list[dict]:
            messages = subscription(live_server, {"token": token}, TURNS)
            async with contextlib.aclosing(messages):
                seen = [await asyncio.wait_for(messages.__anext__(), 30)]
                gone = await asyncio.to_thread(client.delete, f"/v1/players/me/tokens/{first_id}",
                                               headers=bearer(spare["token"]))
                assert gone.status_code == 200, gone.text
                if found_later:
                    later = (await asyncio.to_thread(client.post, "/v1/matches", json={"game": "high-card"})).json()
                    joined = await asyncio.to_thread(client.post, f"/v1/matches/{later['id']}/seats",
                                                     json={"seat": 0}, headers=bearer(spare["token"]))
                else:
                    joined = await asyncio.to_thread(client.post, f"/v1/matches/{waiting_id}/seats",
                                                     json={"seat": 1, "name": "Neville"})
                assert joined.status_code == 201, joined.text
                seen.append(await asyncio.wait_for(messages.__anext__(), 30))
                return seen

        version = client.get(f"/v1/matches/{match_id}").json()["version"]
        seen = asyncio.run(run())
        assert seen == [{"type": "turn", "matchId": match_id, "seat": 0, "version": version, "status": "ACTIVE",
                         "toAct": [0, 1], "yourTurn": True},
                        {"type": "end", "reason": "invalid_token",
                         "message": client.get(f"/v1/matches/{match_id}", headers=bearer(token)).json()["detail"]}]

    revoked(found_later=False)
    revoked(found_later=True)

    # at most 5 open streams a token: the sixth is refused (each of the five has its first notice: it is open)
    _, d = new_player()
    match_id = client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
    assert client.post(f"/v1/matches/{match_id}/seats", json={"seat": 0}, headers=bearer(d)).status_code == 201
    client.post(f"/v1/matches/{match_id}/seats", json={"seat": 1, "name": "Neville"})

    async def crowded() -> dict:
        async with contextlib.AsyncExitStack() as stack:
            for _ in range(5):
                messages = await stack.enter_async_context(contextlib.aclosing(subscription(live_server,
                                                                                            {"token": d}, TURNS)))
                assert (await asyncio.wait_for(messages.__anext__(), 30))["matchId"] == match_id
            return await first_message({"token": d})

    async def first_message(init) -> dict:
        messages = subscription(live_server, init, TURNS)
        async with contextlib.aclosing(messages):
            return await messages.__anext__()

    assert asyncio.run(first_message({"token": 5})) == {
        "type": "problem", "code": "invalid_token", "ruleCode": None,
        "message": "The connection's token is not a player token."}
    assert asyncio.run(first_message({})) == {
        "type": "problem", "code": "player_required", "ruleCode": None,
        "message": client.get("/v1/players/me").json()["detail"]}
    assert asyncio.run(first_message({"token": "gp.x.y.z"})) == {
        "type": "problem", "code": "invalid_token", "ruleCode": None,
        "message": client.get("/v1/players/me", headers=bearer("gp.x.y.z")).json()["detail"]}
    assert asyncio.run(crowded()) == {"type": "problem", "code": "too_many_streams", "ruleCode": None,
                                      "message": "A token may hold at most 5 open streams at once."}
    assert asyncio.run(first_message({"token": d}))["type"] == "turn"  # the five closed gave their places back
