"""Both APIs of collections and trading (issue 25): every REST route is in openapi.yaml and answers as it says;
the owner's view, the public counts, collectors' views and the chart; the same operations through GraphQL."""

from __future__ import annotations

import jsonschema
import yaml

from service.contracts import OPENAPI_PATH
from service.games.casting_stones.catalogue import STONES
from service.rest.collections import routes

from .conftest import bearer


def test_every_collection_route_is_documented():
    spec = yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))
    documented = {(path, method) for path, ops in spec["paths"].items() for method in ops}
    for route in routes:
        for method in route.methods - {"HEAD"}:
            assert (route.path, method.lower()) in documented, f"{method} {route.path} is not in openapi.yaml"


def test_collection_answers_are_as_documented_and_views_are_right(client, new_player, grant):
    spec = yaml.safe_load(client.get("/openapi.yaml").text)

    def check(response, path: str, method: str = "get"):
        described = spec["paths"][path][method]["responses"][str(response.status_code)]
        schema = described["content"][response.headers["content-type"].split(";")[0]]["schema"]
        jsonschema.Draft202012Validator({**schema, "components": spec["components"]}).validate(response.json())
        return response.json()

    (ann, ann_auth), (bob, bob_auth) = new_player("Ann"), new_player("Bob")
    check(client.get("/v1/players/me/collection"), "/v1/players/me/collection")  # 401
    empty = check(client.get("/v1/players/me/collection", headers=ann_auth), "/v1/players/me/collection")
    assert empty["stones"] == [] and empty["totals"] == {"stones": 0, "distinct_stones": 0, "cards": 0,
                                                          "distinct_cards": 0}
    assert [(s["kind"], s["available"]) for s in empty["sets"]] == [("starter", 1), ("refill", 1)]
    opened = check(client.post("/v1/players/me/packs", json={"kind": "starter"}, headers=ann_auth),
                   "/v1/players/me/packs", "post")
    check(client.post("/v1/players/me/packs", json={"kind": "starter"}, headers=ann_auth), "/v1/players/me/packs",
          "post")  # 409 set_opened_before
    check(client.post("/v1/players/me/packs", json={"kind": "nope"}, headers=ann_auth), "/v1/players/me/packs",
          "post")
    check(client.get("/v1/players/me/packs", headers=ann_auth), "/v1/players/me/packs")
    grant(ann, {"fluffy": 2, "holly": 1})
    mine = check(client.get("/v1/players/me/collection", headers=ann_auth), "/v1/players/me/collection")
    ns = [STONES[e["id"]].n for e in mine["stones"]]
    assert ns == sorted(ns) and mine["stones"][-1] == {"id": "fluffy", "count": 2}  # concordance order
    assert mine["totals"]["stones"] == 12 + 3

    # private by default; public counts only, once made public
    check(client.get(f"/v1/players/{ann}/collection"), "/v1/players/{player_id}/collection")  # 403
    check(client.get(f"/v1/players/{ann}/collection/progress"), "/v1/players/{player_id}/collection/progress")
    check(client.get("/v1/players/nobody/collection"), "/v1/players/{player_id}/collection")  # 404
    shown = check(client.post("/v1/players/me/collection/visibility", json={"public": True}, headers=ann_auth),
                  "/v1/players/me/collection/visibility", "post")
    assert shown["public"] is True
    public = check(client.get(f"/v1/players/{ann}/collection"), "/v1/players/{player_id}/collection")
    assert set(public) == {"player_id", "game", "stones", "cards", "totals"}
    assert public["stones"] == mine["stones"] and public["cards"] == mine["cards"]

    # collectors' views
    progress = check(client.get(f"/v1/players/{ann}/collection/progress"),
                     "/v1/players/{player_id}/collection/progress")
    assert progress == check(client.get("/v1/players/me/collection/progress", headers=ann_auth),
                             "/v1/players/me/collection/progress")
    chaser = next(r for r in progress["rarities"] if r["rarity"] == "chaser")
    assert chaser == {"rarity": "chaser", "owned": 1, "total": 5, "complete": False}
    assert sum(r["owned"] for r in progress["rarities"]) == progress["stones"]["owned"] == len(mine["stones"])
    assert len(progress["missing"]["stones"]) == 125 - len(mine["stones"]) and "fluffy" not in progress["missing"]["stones"]
    assert {"id": "fluffy", "count": 1} in progress["duplicates"]["stones"]
    assert progress["missing"]["cards"] == ["draco-malfoy"]
    chart = client.get("/v1/games/casting-stones/chart", params={"rarity": "chaser"}).json()
    assert [c["id"] for c in chart["items"]] == ["sorcerers-stone", "sorting-hat", "cloak-of-invisibility",
                                                 "nimbus-two-thousand", "fluffy"]  # concordance order
    assert all(c["colour"] == "black" and c["stars"] == 5 and "number side reads 50" in c["picture"]
               for c in chart["items"])

    # saved hands and trades, answered as documented
    check(client.get("/v1/players/me/hands", headers=ann_auth), "/v1/players/me/hands")
    check(client.post("/v1/players/me/hands", json={"name": "x", "stones": [], "cards": [], "hand": []},
                      headers=ann_auth), "/v1/players/me/hands", "post")  # 422
    check(client.get("/v1/players/me/hands/none", headers=ann_auth), "/v1/players/me/hands/{name}")  # 404
    check(client.delete("/v1/players/me/hands/none", headers=ann_auth), "/v1/players/me/hands/{name}", "delete")
    offer = check(client.post("/v1/trades", json={"to": bob, "give": {"stones": [{"id": "fluffy"}]}},
                              headers=ann_auth), "/v1/trades", "post")
    check(client.post("/v1/trades", json={"to": bob, "give": {"stones": [{"id": "fluffy", "count": 5}]}},
                      headers=ann_auth), "/v1/trades", "post")  # 409 not_in_collection
    check(client.get(f"/v1/trades/{offer['id']}", headers=bob_auth), "/v1/trades/{trade_id}")
    check(client.post(f"/v1/trades/{offer['id']}/accept", headers=ann_auth), "/v1/trades/{trade_id}/accept",
          "post")  # 403 not_your_trade
    done = check(client.post(f"/v1/trades/{offer['id']}/accept", headers=bob_auth), "/v1/trades/{trade_id}/accept",
                 "post")
    assert done["status"] == "completed"
    check(client.post(f"/v1/trades/{offer['id']}/decline", headers=bob_auth), "/v1/trades/{trade_id}/decline",
          "post")  # 409 trade_closed
    again = check(client.post("/v1/trades", json={"to": bob, "give": {"stones": [{"id": "fluffy"}]}},
                              headers=ann_auth), "/v1/trades", "post")
    check(client.post(f"/v1/trades/{again['id']}/cancel", headers=ann_auth), "/v1/trades/{trade_id}/cancel", "post")
    listed = check(client.get("/v1/players/me/trades", headers=bob_auth), "/v1/players/me/trades")
    assert [t["id"] for t in listed["trades"]] == [again["id"], offer["id"]]
    assert client.get("/v1/players/me/collection", headers=bob_auth).json()["stones"] == [{"id": "fluffy",
                                                                                            "count": 1}]


def test_the_same_through_graphql(client, new_player, grant):
    (ann, ann_auth), (bob, bob_auth) = new_player("Ann"), new_player("Bob")

    def gql(query: str, variables: dict | None = None, auth: dict | None = None) -> dict:
        response = client.post("/graphql", json={"query": query, "variables": variables or {}}, headers=auth or {})
        body = response.json()
        assert response.status_code == 200 and "errors" not in body, body
        return body["data"]

    opened = gql("""mutation Open { openSet(input: {kind: STARTER}) { __typename
                      ... on SetOpened { duplicate opening { kind seed stones cards allowance } } } }""",
                 auth=ann_auth)["openSet"]
    assert opened["__typename"] == "SetOpened" and opened["opening"]["kind"] == "STARTER"
    assert opened["opening"]["allowance"] == "ONCE" and len(opened["opening"]["stones"]) == 12
    again = gql("mutation Open { openSet(input: {kind: STARTER}) { __typename ... on Problem { code } } }",
                auth=ann_auth)["openSet"]
    assert again == {"__typename": "SetOpenedBefore", "code": "SET_OPENED_BEFORE"}
    grant(ann, {"fluffy": 1})
    mine = gql("""query Mine { myCollection { __typename ... on MyCollection { public totals { stones }
                    stones { id count } sets { kind available nextAt } } } }""", auth=ann_auth)["myCollection"]
    assert mine["totals"]["stones"] == 13 and mine["public"] is False
    assert gql("query Them($id: ID!) { playerCollection(playerId: $id) { __typename } }", {"id": ann}
               )["playerCollection"] == {"__typename": "CollectionPrivate"}
    gql("mutation Show { setCollectionVisibility(input: {public: true}) { __typename } }", auth=ann_auth)
    theirs = gql("""query Them($id: ID!) { playerCollection(playerId: $id) { __typename
                      ... on PublicCollection { stones { id count } } } }""", {"id": ann})["playerCollection"]
    assert theirs["stones"] == mine["stones"]
    progress = gql("""query P($id: ID) { collectionProgress(playerId: $id) { __typename ... on CollectionProgress {
                        rarities { rarity owned total } missing { cards } duplicates { stones { id } } } } }""",
                   {"id": ann})["collectionProgress"]
    assert progress["missing"]["cards"] == ["draco-malfoy"] and len(progress["rarities"]) == 5
    openings = gql("query O { mySetOpenings { __typename ... on SetOpeningPage { openings { seed } } } }",
                   auth=ann_auth)["mySetOpenings"]
    assert openings["openings"][0]["seed"] == opened["opening"]["seed"]
    assert gql("query H { myHands { __typename ... on SavedHandList { hands { name } } } }", auth=ann_auth
               )["myHands"] == {"__typename": "SavedHandList", "hands": []}
    assert gql("query H { myHands { __typename } }")["myHands"] == {"__typename": "PlayerRequired"}

    offer = gql("""mutation Offer($input: OfferTradeInput!) { offerTrade(input: $input) { __typename
                     ... on Trade { id status from to give { stones { id count } } } } }""",
                {"input": {"to": bob, "give": {"stones": [{"id": "fluffy"}]}, "get": {}}}, ann_auth)["offerTrade"]
    assert offer["status"] == "OFFERED" and offer["from"] == ann and offer["to"] == bob
    lacking = gql("""mutation Offer($input: OfferTradeInput!) { offerTrade(input: $input) { __typename
                       ... on NotInCollection { missing { stones { id count } } } } }""",
                  {"input": {"to": bob, "give": {"stones": [{"id": "fluffy", "count": 3}]}, "get": {}}},
                  ann_auth)["offerTrade"]
    assert lacking == {"__typename": "NotInCollection", "missing": {"stones": [{"id": "fluffy", "count": 2}]}}
    accepted = gql("""mutation A($input: TradeInput!) { acceptTrade(input: $input) { __typename
                        ... on Trade { status } } }""", {"input": {"tradeId": offer["id"]}}, bob_auth)["acceptTrade"]
    assert accepted == {"__typename": "Trade", "status": "COMPLETED"}
    closed = gql("""mutation D($input: TradeInput!) { declineTrade(input: $input) { __typename
                      ... on TradeClosed { tradeStatus } } }""", {"input": {"tradeId": offer["id"]}},
                 bob_auth)["declineTrade"]
    assert closed == {"__typename": "TradeClosed", "tradeStatus": "completed"}
    history = gql("query T { myTrades { __typename ... on TradePage { trades { id status } } } }", auth=ann_auth)
    assert history["myTrades"]["trades"] == [{"id": offer["id"], "status": "COMPLETED"}]
    assert gql("query T($id: ID!) { trade(id: $id) { __typename } }", {"id": offer["id"]}, bearer("gp.x.y.z")
               )["trade"] == {"__typename": "InvalidToken"}
    queued = gql("""mutation Q { joinQuickMatch(input: {game: "casting-stones", variant: "advanced"}) { __typename
                      ... on Problem { code } } }""", auth=bob_auth)["joinQuickMatch"]
    assert queued == {"__typename": "HandNotFound", "code": "HAND_NOT_FOUND"}  # no saved hand to bring
