"""The players on GraphQL (issue 20): the same store operations as REST, as union results with problem codes,
``me { matches, myTurn }``, and the ``playerTurns`` subscription over graphql-transport-ws."""

from __future__ import annotations

import asyncio
import contextlib

from tests.live.clients import subscription

from .conftest import bearer, unique_name

PLAYER_TURNS = """subscription Mine { playerTurns { __typename ... on TurnNotice { matchId seat version yourTurn }
  ... on StreamEnded { reason message } ... on Problem { code message } } }"""


def gql(client, query: str, variables: dict | None = None, token: str | None = None, name: str = "Op") -> dict:
    response = client.post("/graphql", json={"query": query, "variables": variables or {}, "operationName": name},
                           headers=bearer(token) if token else {})
    assert response.status_code == 200, response.text
    body = response.json()
    assert "errors" not in body, body
    return body["data"]


def create_player(client, name: str | None = None) -> tuple[str, str]:
    data = gql(client, """mutation Op($name: String!) { createPlayer(input: {name: $name}) { __typename
        ... on PlayerCreated { player { id name } token tokenId } ... on Problem { code message } } }""",
               {"name": name or unique_name("G")})["createPlayer"]
    assert data["__typename"] == "PlayerCreated", data
    return data["player"]["id"], data["token"]


def test_players_tokens_and_names_on_graphql(client):
    player_id, token = create_player(client)
    name = gql(client, "query Op { me { __typename ... on Me { id name ratings { game } tokens { id } } } }",
               token=token)["me"]
    assert name["__typename"] == "Me" and name["id"] == player_id and len(name["tokens"]) == 1
    taken = gql(client, """mutation Op($name: String!) { createPlayer(input: {name: $name}) { __typename
        ... on Problem { code } } }""", {"name": name["name"].upper()})["createPlayer"]
    assert taken == {"__typename": "NameTaken", "code": "NAME_TAKEN"}
    bad = gql(client, """mutation Op { createPlayer(input: {name: "<x>"}) { __typename ... on Problem { code } } }""")
    assert bad["createPlayer"]["code"] == "INVALID_NAME"
    rotated = gql(client, """mutation Op($id: ID!) { createPlayerToken(input: {replace: $id}) { __typename
        ... on PlayerTokenIssued { token replaced } } }""", {"id": name["tokens"][0]["id"]}, token)["createPlayerToken"]
    assert rotated["replaced"] == name["tokens"][0]["id"]
    gone = gql(client, "query Op { me { __typename ... on Problem { code } } }", token=token)["me"]
    assert gone == {"__typename": "InvalidToken", "code": "INVALID_TOKEN"}
    nobody = gql(client, "query Op { me { __typename ... on Problem { code } } }")["me"]
    assert nobody["code"] == "PLAYER_REQUIRED"
    profile = gql(client, "query Op($id: ID!) { player(id: $id) { __typename ... on PlayerProfile { name } } }",
                  {"id": player_id})["player"]
    assert profile == {"__typename": "PlayerProfile", "name": name["name"]}


def test_join_quick_match_me_and_leaderboard_on_graphql(client):
    (a_id, a), (b_id, b) = create_player(client), create_player(client)
    join = """mutation Op { joinQuickMatch(input: {game: "high-card", rated: false}) { __typename
        ... on QuickMatchStatus { status last { matchId seat } } ... on Problem { code } } }"""
    # who asks comes before what is asked, as on REST (401 player_required for an anonymous bad request)
    anonymous = gql(client, """mutation Op { joinQuickMatch(input: {game: "high-card", seats: 5}) { __typename
        ... on Problem { code } } }""")["joinQuickMatch"]
    assert anonymous == {"__typename": "PlayerRequired", "code": "PLAYER_REQUIRED"}
    assert client.post("/v1/quick-match", json={"game": "high-card", "seats": 5}).json()["code"] == "player_required"
    assert gql(client, """mutation Op { joinQuickMatch(input: {game: "high-card", seats: 5}) { __typename } }""",
               token=a)["joinQuickMatch"]["__typename"] == "InvalidOptions"
    assert gql(client, join, token=a)["joinQuickMatch"]["status"] == "WAITING"
    again = gql(client, join, token=a)["joinQuickMatch"]
    assert again == {"__typename": "AlreadyQueued", "code": "ALREADY_QUEUED"}
    paired = gql(client, join, token=b)["joinQuickMatch"]
    assert paired["status"] == "MATCHED"
    match_id = paired["last"]["matchId"]
    me = gql(client, """query Op { me { ... on Me { matches(status: ACTIVE, limit: 5) { matches { matchId status
        mySeats yourTurn opponents { player } } nextCursor } myTurn { matchId } } } }""", token=a)["me"]
    assert me["matches"]["matches"][0]["matchId"] == match_id and me["matches"]["nextCursor"] is None
    assert me["matches"]["matches"][0]["opponents"] == [{"player": b_id}]
    assert [m["matchId"] for m in me["myTurn"]] == [match_id]  # high card: both play at once
    # a player token joins a seat without a name, bound to the player
    other = client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
    joined = gql(client, """mutation Op($id: ID!) { joinMatch(input: {matchId: $id}) { __typename
        ... on SeatJoined { seat match { mySeat seats { name } } } } }""", {"id": other}, a)["joinMatch"]
    assert joined["__typename"] == "SeatJoined" and joined["match"]["mySeat"] == joined["seat"]
    twice = gql(client, """mutation Op($id: ID!) { joinMatch(input: {matchId: $id}) { __typename } }""",
                {"id": other}, a)["joinMatch"]
    assert twice["__typename"] == "AlreadySeated"
    early = gql(client, """mutation Op($id: ID!) { offerRematch(input: {matchId: $id}) { __typename } }""",
                {"id": match_id}, a)["offerRematch"]
    assert early["__typename"] == "RematchUnavailable"
    board = gql(client, """query Op { leaderboard(game: "high-card") { __typename ... on LeaderboardPage { game
        variant players { rank } } } }""")["leaderboard"]
    assert board["__typename"] == "LeaderboardPage" and board["variant"] == "standard"
    assert gql(client, 'query Op { leaderboard(game: "nope") { __typename } }')["leaderboard"]["__typename"] == \
        "UnknownGame"


def test_player_turns_subscription_announces_a_quick_match_made_after_it_opened(live_server, client):
    (_, a), (_, b) = create_player(client), create_player(client)

    async def run():
        messages = subscription(live_server, {"token": a}, PLAYER_TURNS)
        async with contextlib.aclosing(messages):
            first = asyncio.ensure_future(messages.__anext__())
            await asyncio.sleep(1.0)  # subscribed, no match yet
            join = {"game": "high-card", "rated": False}
            await asyncio.to_thread(client.post, "/v1/quick-match", json=join, headers=bearer(a))
            paired = await asyncio.to_thread(client.post, "/v1/quick-match", json=join, headers=bearer(b))
            notice = await asyncio.wait_for(first, 30)
            assert notice["type"] == "turn" and notice["matchId"] == paired.json()["last"]["match_id"]
            assert notice["yourTurn"] is True

    asyncio.run(run())
    refused = asyncio.run(_first(subscription(live_server, {"token": "gt.x.y"}, PLAYER_TURNS)))
    assert refused["type"] == "problem" and refused["code"] == "player_required"


async def _first(messages):
    async with contextlib.aclosing(messages):
        return await messages.__anext__()
