"""Every field of the collections' and trades' GraphQL types (schema/collections.py, schema/collection_types.py),
held to its exact value: the REST answer for the same object (docs/api.md, "Collections and trading";
openapi/openapi.yaml) or what the test set up. Written against the mutation run's survivors
(tests/mutation/run.py, module ``players``): a converter argument set to None, a branch flipped, a problem
turned into another must each fail a test here.

Covered: myCollection, playerCollection, collectionProgress, mySetOpenings, myHands, myTrades, trade, openSet,
setCollectionVisibility, saveHand, deleteHand, bringSavedHand, offerTrade, acceptTrade, declineTrade and
cancelTrade, with every problem each can answer here: an empty and a filled collection, the three allowances a
set is opened from, a trade completed, declined, cancelled, expired, failed on either side, and one the workers'
sweep finished (``recovered``)."""

from __future__ import annotations

import datetime
import time

import pytest

from service.games.casting_stones.catalogue import STONES
from service.games.casting_stones.collecting import open_set
from service.store.trades import Crash
from tests.players.test_mutants_graphql_fields import PROBLEM, problem, snake

from .conftest import bearer
from .test_hands import HARRY, VOLDEMORT, owns

ITEMS = "stones { id count } cards { id count }"
MY_COLLECTION = f"""__typename ... on MyCollection {{ playerId game public {ITEMS}
  totals {{ stones distinctStones cards distinctCards }} sets {{ kind available perDay openedToday granted nextAt }}
  defaultHand }} {PROBLEM}"""
OPENING = "id kind seed at stones cards allowance"
PROGRESS = f"""__typename ... on CollectionProgress {{ playerId game rarities {{ rarity owned total complete }}
  stones {{ owned total complete }} cards {{ owned total complete }} missing {{ stones cards }}
  duplicates {{ {ITEMS} }} }} {PROBLEM}"""
HAND = "name stones cards hand saved default"
TRADE = f"""id game from to give {{ {ITEMS} }} get {{ {ITEMS} }} status reason created updated expires recovered"""
CHASERS = [s for s in STONES if STONES[s].rarity == "chaser"]
BAD = bearer("gp.x.y.z")


def midnight_ms() -> int:
    """When the daily allowance comes back: the next UTC midnight."""
    today = datetime.datetime.now(datetime.UTC).date()
    return int(datetime.datetime.combine(today + datetime.timedelta(days=1), datetime.time(),
                                         datetime.UTC).timestamp() * 1000)


@pytest.fixture
def gql(client):
    """``gql(query, variables, headers) -> data`` (no ``errors``)."""

    def run(query: str, variables: dict | None = None, headers: dict | None = None) -> dict:
        response = client.post("/graphql", json={"query": query, "variables": variables or {}}, headers=headers or {})
        body = response.json()
        assert response.status_code == 200 and "errors" not in body, body
        return body["data"]

    return run


@pytest.mark.anyio
async def test_collections_sets_and_progress_field_by_field(client, gql, new_player, grant, stores):
    _store, collections, _trades = stores
    (ann, ann_auth), (bob, bob_auth) = new_player("Ann"), new_player("Bob")
    mine = f"query Q {{ myCollection {{ {MY_COLLECTION} }} }}"

    def collection(auth: dict) -> dict:
        got = gql(mine, headers=auth)["myCollection"]
        assert snake(got, ("kind",)) == client.get("/v1/players/me/collection", headers=auth).json()
        return got

    totals = {"stones": 0, "distinctStones": 0, "cards": 0, "distinctCards": 0}
    starter = {"kind": "STARTER", "available": 1, "perDay": None, "openedToday": None, "granted": 0, "nextAt": None}
    refill = {"kind": "REFILL", "available": 1, "perDay": 1, "openedToday": 0, "granted": 0, "nextAt": None}
    assert collection(ann_auth) == {"__typename": "MyCollection", "playerId": ann, "game": "casting-stones",
                                    "public": False, "stones": [], "cards": [], "totals": totals,
                                    "sets": [starter, refill], "defaultHand": None}

    # the starter, with an idempotency key: repeated, the same opening comes back marked duplicate
    open_ = f"""mutation M($input: OpenSetInput!) {{ openSet(input: $input) {{ __typename
        ... on SetOpened {{ duplicate opening {{ {OPENING} }} }} ... on NoSetLeft {{ nextAt }} {PROBLEM} }} }}"""
    opened = gql(open_, {"input": {"kind": "STARTER", "idempotencyKey": "ann-starter"}}, ann_auth)["openSet"]
    first = opened["opening"]
    assert opened == {"__typename": "SetOpened", "duplicate": False, "opening": first}
    assert first["kind"] == "STARTER" and first["allowance"] == "ONCE" and abs(first["at"] - time.time() * 1000) < 6e5
    assert {"stones": first["stones"], "cards": first["cards"]} == open_set(int(first["seed"]), "starter")
    assert len(first["stones"]) == 12 and sorted(first["cards"]) == ["charms", "double-potion"]
    again = gql(open_, {"input": {"kind": "STARTER", "idempotencyKey": "ann-starter"}}, ann_auth)["openSet"]
    assert again == {"__typename": "SetOpened", "duplicate": True, "opening": first}
    assert gql(open_, {"input": {"kind": "STARTER"}}, ann_auth)["openSet"] == problem(
        "SetOpenedBefore", client.post("/v1/players/me/packs", json={"kind": "starter"}, headers=ann_auth))
    daily = gql(open_, {"input": {"kind": "REFILL"}}, ann_auth)["openSet"]
    assert daily["duplicate"] is False and daily["opening"]["kind"] == "REFILL"
    assert daily["opening"]["allowance"] == "DAILY" and len(daily["opening"]["stones"]) == 4
    none_left = gql(open_, {"input": {"kind": "REFILL"}}, ann_auth)["openSet"]
    assert none_left == problem("NoSetLeft", client.post("/v1/players/me/packs", json={"kind": "refill"},
                                                         headers=ann_auth), nextAt=midnight_ms())
    assert gql(open_, {"input": {"kind": "REFILL"}})["openSet"] == problem(
        "PlayerRequired", client.post("/v1/players/me/packs", json={"kind": "refill"}))
    assert gql(open_, {"input": {"kind": "REFILL"}}, BAD)["openSet"] == problem(
        "InvalidToken", client.post("/v1/players/me/packs", json={"kind": "refill"}, headers=BAD))
    unknown = client.post("/graphql", json={"query": open_, "variables": {"input": {"kind": "BOGUS"}}},
                          headers=ann_auth).json()
    assert unknown.get("data") is None and unknown["errors"][0]["extensions"]["code"] == "bad_user_input"

    # none left today, then two granted beyond the allowance, one of them opened
    spent = collection(ann_auth)
    assert spent["sets"] == [{**starter, "available": 0},
                             {**refill, "available": 0, "openedToday": 1, "nextAt": midnight_ms()}]
    assert spent["totals"]["stones"] == 16 and spent["totals"]["cards"] == 3
    assert sum(e["count"] for e in spent["stones"]) == 16 and spent["totals"]["distinctStones"] == len(spent["stones"])
    assert await collections.grant(ann, "refill", 2) == 2
    assert collection(ann_auth)["sets"][1] == {**refill, "available": 2, "openedToday": 1, "granted": 2}
    granted = gql(open_, {"input": {"kind": "REFILL"}}, ann_auth)["openSet"]
    assert granted["opening"]["allowance"] == "GRANT" and granted["opening"]["kind"] == "REFILL"
    assert collection(ann_auth)["sets"][1] == {**refill, "available": 1, "openedToday": 1, "granted": 1}

    # the openings, newest first, a page at a time
    pages = f"""query Q($cursor: String, $limit: Int!) {{ mySetOpenings(cursor: $cursor, limit: $limit) {{
        __typename ... on SetOpeningPage {{ openings {{ {OPENING} }} nextCursor }} {PROBLEM} }} }}"""

    def openings(cursor=None, limit=(20, 20)) -> tuple[dict, dict]:
        got = gql(pages, {"cursor": cursor, "limit": limit[0]}, ann_auth)["mySetOpenings"]
        params = {"limit": limit[1], **({"cursor": cursor} if cursor else {})}
        return snake(got, ("kind", "allowance")), client.get("/v1/players/me/packs", params=params,
                                                             headers=ann_auth).json()

    every, rest = openings()
    assert every == rest and rest["next_cursor"] is None
    assert [o["id"] for o in rest["openings"]] == [granted["opening"]["id"], daily["opening"]["id"], first["id"]]
    assert every["openings"][2] == snake(first, ("kind", "allowance"))
    top, rest = openings(limit=(1, 1))
    assert top == rest and top["next_cursor"] and top["openings"] == every["openings"][:1]
    second, rest = openings(top["next_cursor"], (1, 1))
    assert second == rest and second["openings"] == every["openings"][1:2]
    assert openings(limit=(0, 1))[0] == top  # a limit below 1 is 1
    assert openings("not-a-cursor")[0] == {"openings": [], "next_cursor": None}
    assert gql(pages, {"limit": 5})["mySetOpenings"] == problem("PlayerRequired", client.get("/v1/players/me/packs"))
    assert gql(pages, {"limit": 5}, BAD)["mySetOpenings"] == problem(
        "InvalidToken", client.get("/v1/players/me/packs", headers=BAD))

    # a filled collection: every chaser, the third card, duplicates; made public, others read its counts
    grant(ann, {c: 1 for c in CHASERS}, {"draco-malfoy": 1})
    grant(ann, {"fluffy": 2})
    show = f"""mutation M($public: Boolean!) {{ setCollectionVisibility(input: {{public: $public}}) {{
        {MY_COLLECTION} }} }}"""
    shown = gql(show, {"public": True}, ann_auth)["setCollectionVisibility"]
    assert shown["public"] is True and shown == collection(ann_auth)
    from_sets = sum(o["stones"].count("fluffy") for o in (first, daily["opening"], granted["opening"]))
    assert {"id": "fluffy", "count": 3 + from_sets} in shown["stones"]
    theirs = f"""query Q($id: ID!) {{ playerCollection(playerId: $id) {{ __typename
        ... on PublicCollection {{ playerId game {ITEMS} totals {{ stones distinctStones cards distinctCards }} }}
        {PROBLEM} }} }}"""
    public = gql(theirs, {"id": ann})["playerCollection"]
    assert public == {"__typename": "PublicCollection", "playerId": ann, "game": "casting-stones",
                      "stones": shown["stones"], "cards": shown["cards"], "totals": shown["totals"]}
    assert snake(public) == client.get(f"/v1/players/{ann}/collection").json()
    assert gql(theirs, {"id": bob})["playerCollection"] == problem("CollectionPrivate",
                                                                   client.get(f"/v1/players/{bob}/collection"))
    assert gql(theirs, {"id": "nobody"})["playerCollection"] == problem(
        "PlayerNotFound", client.get("/v1/players/nobody/collection"))

    progress = f"query Q($id: ID) {{ collectionProgress(playerId: $id) {{ {PROGRESS} }} }}"
    own = gql(progress, {"id": None}, ann_auth)["collectionProgress"]
    assert snake(own) == client.get("/v1/players/me/collection/progress", headers=ann_auth).json()
    assert gql(progress, {"id": ann})["collectionProgress"] == own
    assert snake(own) == client.get(f"/v1/players/{ann}/collection/progress").json()
    assert own["playerId"] == ann and own["game"] == "casting-stones"
    assert {"rarity": "chaser", "owned": 5, "total": 5, "complete": True} in own["rarities"]
    assert own["cards"] == {"owned": 3, "total": 3, "complete": True} and own["missing"]["cards"] == []
    assert own["stones"]["complete"] is False and own["stones"]["total"] == 125
    assert own["stones"]["owned"] == 125 - len(own["missing"]["stones"]) == len(shown["stones"])
    assert {"id": "fluffy", "count": 2 + from_sets} in own["duplicates"]["stones"]
    empty = gql(progress, {"id": None}, bob_auth)["collectionProgress"]
    assert snake(empty) == client.get("/v1/players/me/collection/progress", headers=bob_auth).json()
    assert empty["stones"] == {"owned": 0, "total": 125, "complete": False}
    assert empty["duplicates"] == {"stones": [], "cards": []} and len(empty["missing"]["cards"]) == 3
    assert all(r["owned"] == 0 and r["complete"] is False for r in empty["rarities"])
    assert gql(progress, {"id": bob})["collectionProgress"] == problem(
        "CollectionPrivate", client.get(f"/v1/players/{bob}/collection/progress"))
    assert gql(progress, {"id": "nobody"})["collectionProgress"] == problem(
        "PlayerNotFound", client.get("/v1/players/nobody/collection/progress"))
    assert gql(progress, {"id": None})["collectionProgress"] == problem(
        "PlayerRequired", client.get("/v1/players/me/collection/progress"))
    assert gql(progress, {"id": None}, BAD)["collectionProgress"] == problem(
        "InvalidToken", client.get("/v1/players/me/collection/progress", headers=BAD))

    hidden = gql(show, {"public": False}, ann_auth)["setCollectionVisibility"]
    assert hidden == {**shown, "public": False} and hidden == collection(ann_auth)
    assert gql(theirs, {"id": ann})["playerCollection"]["__typename"] == "CollectionPrivate"
    for auth, name in (({}, "PlayerRequired"), (BAD, "InvalidToken")):
        assert gql(show, {"public": True}, auth)["setCollectionVisibility"] == problem(
            name, client.post("/v1/players/me/collection/visibility", json={"public": True}, headers=auth))
        assert gql(mine, headers=auth)["myCollection"] == problem(name, client.get("/v1/players/me/collection",
                                                                                   headers=auth))


def test_saved_hands_and_bringing_them_field_by_field(client, gql, new_player, grant):
    (ann, ann_auth), (bob, bob_auth) = new_player("Ann"), new_player("Bob")
    owns(grant, ann, HARRY)
    owns(grant, bob, VOLDEMORT)
    cards = ["draco-malfoy", "charms", "double-potion"]
    save = f"""mutation M($input: SaveHandInput!) {{ saveHand(input: $input) {{ __typename ... on SavedHand {{ {HAND} }}
        ... on NotInCollection {{ missing {{ {ITEMS} }} }} {PROBLEM} }} }}"""
    hands = f"query Q {{ myHands {{ __typename ... on SavedHandList {{ hands {{ {HAND} }} }} {PROBLEM} }} }}"
    assert gql(hands, headers=ann_auth)["myHands"] == {"__typename": "SavedHandList", "hands": []}

    harry = {"name": "Gryffindor", "stones": HARRY["stones"], "cards": cards, "hand": HARRY["hand"]}
    saved = gql(save, {"input": harry}, ann_auth)["saveHand"]  # the first one saved is the default
    assert saved == {"__typename": "SavedHand", "name": "Gryffindor", "stones": sorted(HARRY["stones"]),
                     "cards": cards, "hand": sorted(HARRY["hand"]), "saved": saved["saved"], "default": True}
    assert snake(saved) == client.get("/v1/players/me/hands/Gryffindor", headers=ann_auth).json()
    assert abs(saved["saved"] - time.time() * 1000) < 600_000
    second = gql(save, {"input": {**harry, "name": "Second", "cards": cards[::-1], "default": True}},
                 ann_auth)["saveHand"]
    assert second["default"] is True and second["cards"] == cards[::-1] and second["name"] == "Second"
    third = gql(save, {"input": {**harry, "name": "Third", "default": False}}, ann_auth)["saveHand"]
    assert third["default"] is False
    listed = gql(hands, headers=ann_auth)["myHands"]
    assert snake(listed) == client.get("/v1/players/me/hands", headers=ann_auth).json()
    assert [(h["name"], h["default"]) for h in listed["hands"]] == [("Gryffindor", False), ("Second", True),
                                                                    ("Third", False)]
    assert gql("query Q { myCollection { ... on MyCollection { defaultHand } } }", headers=ann_auth
               )["myCollection"] == {"defaultHand": "Second"}

    def rest_save(body: dict, auth: dict = ann_auth):
        return client.post("/v1/players/me/hands", json=body, headers=auth)

    short = {**harry, "name": "Short", "hand": HARRY["hand"][:4]}
    assert gql(save, {"input": short}, ann_auth)["saveHand"] == problem("InvalidHand", rest_save(short))
    dark = {**harry, "name": "Dark", "stones": VOLDEMORT["stones"], "hand": VOLDEMORT["hand"]}
    lacking = rest_save(dark)
    assert gql(save, {"input": dark}, ann_auth)["saveHand"] == problem("NotInCollection", lacking,
                                                                       missing=lacking.json()["missing"])
    assert lacking.json()["missing"]["stones"] and lacking.json()["missing"]["cards"] == []
    assert gql(save, {"input": harry})["saveHand"] == problem("PlayerRequired", rest_save(harry, {}))
    assert gql(save, {"input": harry}, BAD)["saveHand"] == problem("InvalidToken", rest_save(harry, BAD))
    for n in range(17):  # 20 hands at most
        assert gql(save, {"input": {**harry, "name": f"H{n}"}}, ann_auth)["saveHand"]["__typename"] == "SavedHand"
    full = {**harry, "name": "One too many"}
    assert gql(save, {"input": full}, ann_auth)["saveHand"] == problem("TooManyHands", rest_save(full))

    delete = f"""mutation M($name: String!) {{ deleteHand(input: {{name: $name}}) {{ __typename
        ... on HandDeleted {{ name }} {PROBLEM} }} }}"""
    assert gql(delete, {"name": "Third"}, ann_auth)["deleteHand"] == {"__typename": "HandDeleted", "name": "Third"}
    assert "Third" not in [h["name"] for h in gql(hands, headers=ann_auth)["myHands"]["hands"]]
    assert gql(delete, {"name": "Third"}, ann_auth)["deleteHand"] == problem(
        "HandNotFound", client.delete("/v1/players/me/hands/Third", headers=ann_auth))
    for auth, name in (({}, "PlayerRequired"), (BAD, "InvalidToken")):
        assert gql(delete, {"name": "Third"}, auth)["deleteHand"] == problem(
            name, client.delete("/v1/players/me/hands/Third", headers=auth))
        assert gql(hands, headers=auth)["myHands"] == problem(name, client.get("/v1/players/me/hands", headers=auth))

    # bringing: by name with an idempotency key (repeated: the same version, marked duplicate), by default
    assert gql(save, {"input": {"name": "Dark", "stones": VOLDEMORT["stones"], "cards": VOLDEMORT["cards"],
                                "hand": VOLDEMORT["hand"]}}, bob_auth)["saveHand"]["default"] is True
    match_id = client.post("/v1/matches", json={"game": "casting-stones", "variant": "advanced"}).json()["id"]
    seats = {}
    for player, auth in ((ann, ann_auth), (bob, bob_auth)):
        seats[player] = client.post(f"/v1/matches/{match_id}/seats", json={}, headers=auth).json()["seat"]
    version = client.get(f"/v1/matches/{match_id}").json()["version"]
    bring = f"""mutation M($input: BringSavedHandInput!) {{ bringSavedHand(input: $input) {{ __typename
        ... on SavedHandBrought {{ matchId version seat duplicate }} ... on VersionConflict {{ currentVersion }}
        ... on NotInCollection {{ missing {{ {ITEMS} }} }} {PROBLEM} }} }}"""
    by_name = {"matchId": match_id, "expectedVersion": version, "name": "Gryffindor", "idempotencyKey": "ann-1"}
    brought = {"__typename": "SavedHandBrought", "matchId": match_id, "version": version + 1, "seat": seats[ann],
               "duplicate": False}
    assert gql(bring, {"input": by_name}, ann_auth)["bringSavedHand"] == brought
    assert gql(bring, {"input": by_name}, ann_auth)["bringSavedHand"] == {**brought, "duplicate": True}
    entries = client.get(f"/v1/matches/{match_id}/history", headers=ann_auth).json()["entries"]
    assert entries[-1]["seat"] == seats[ann] and entries[-1]["action"]["stones"] == sorted(HARRY["stones"])
    assert client.get(f"/v1/matches/{match_id}").json()["version"] == version + 1

    def rest_bring(body: dict, at: int, auth: dict, headers: dict | None = None, match: str = match_id):
        return client.post(f"/v1/matches/{match}/saved-hand", json=body,
                           headers={**auth, "If-Match": f'"{at}"', **(headers or {})})

    other_hand = sorted(set(HARRY["stones"]) - set(HARRY["hand"]))  # another Casting Hand: another action
    assert gql(save, {"input": {**harry, "name": "Other", "hand": other_hand}}, ann_auth)["saveHand"]["hand"] == \
        other_hand
    reused = {**by_name, "name": "Other"}  # the key of another request
    assert gql(bring, {"input": reused}, ann_auth)["bringSavedHand"] == problem(
        "IdempotencyKeyReused", rest_bring({"name": "Other"}, version, ann_auth, {"Idempotency-Key": "ann-1"}))
    twice = {"matchId": match_id, "expectedVersion": version + 1}
    assert gql(bring, {"input": twice}, ann_auth)["bringSavedHand"] == problem(
        "NotYourTurn", rest_bring({}, version + 1, ann_auth))

    stale = gql(bring, {"input": {"matchId": match_id, "expectedVersion": version}}, bob_auth)["bringSavedHand"]
    assert stale == problem("VersionConflict", rest_bring({}, version, bob_auth), currentVersion=version + 1)
    named = {"matchId": match_id, "expectedVersion": version + 1, "name": "Nope"}
    assert gql(bring, {"input": named}, bob_auth)["bringSavedHand"] == problem(
        "HandNotFound", rest_bring({"name": "Nope"}, version + 1, bob_auth))
    default = {"matchId": match_id, "expectedVersion": version + 1}
    for auth, name in (({}, "PlayerRequired"), (BAD, "InvalidToken")):
        assert gql(bring, {"input": default}, auth)["bringSavedHand"] == problem(
            name, rest_bring({}, version + 1, auth))
    assert gql(bring, {"input": {**default, "matchId": "nope"}}, bob_auth)["bringSavedHand"] == problem(
        "MatchNotFound", client.post("/v1/matches/nope/saved-hand", json={}, headers={**bob_auth, "If-Match": '"0"'}))
    lost = VOLDEMORT["stones"][0]
    grant(bob, {lost: -1})  # Bob no longer owns a stone of his saved hand: nothing is applied
    assert gql(bring, {"input": default}, bob_auth)["bringSavedHand"] == problem(
        "NotInCollection", rest_bring({}, version + 1, bob_auth), missing={"stones": [{"id": lost, "count": 1}],
                                                                           "cards": []})
    grant(bob, {lost: 1})
    assert gql(bring, {"input": default}, bob_auth)["bringSavedHand"] == {
        "__typename": "SavedHandBrought", "matchId": match_id, "version": version + 2, "seat": seats[bob],
        "duplicate": False}
    assert client.get(f"/v1/matches/{match_id}").json()["version"] == version + 2

    alone = client.post("/v1/matches", json={"game": "casting-stones", "variant": "advanced"}).json()["id"]
    client.post(f"/v1/matches/{alone}/seats", json={}, headers=ann_auth)
    assert gql(bring, {"input": {"matchId": alone, "expectedVersion": 0}}, ann_auth)["bringSavedHand"] == problem(
        "MatchNotStarted", rest_bring({}, 0, ann_auth, match=alone))

    # a quick match of the Advanced Game brings the default hand: bots, owning nothing, cannot fill its seats
    join = f"""mutation M($input: QuickMatchInput!) {{ joinQuickMatch(input: $input) {{ __typename {PROBLEM} }} }}"""
    advanced = {"game": "casting-stones", "variant": "advanced", "rated": False}
    assert gql(join, {"input": {**advanced, "botsAfter": 5}}, ann_auth)["joinQuickMatch"] == problem(
        "CollectionRequired", client.post("/v1/quick-match", json={**advanced, "bots_after": 5}, headers=ann_auth))
    _, cat_auth = new_player("Cat")
    assert gql(join, {"input": advanced}, cat_auth)["joinQuickMatch"] == problem(
        "HandNotFound", client.post("/v1/quick-match", json=advanced, headers=cat_auth))

    # a saved hand of Casting Stones is no action of another game
    other = client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
    client.post(f"/v1/matches/{other}/seats", json={"seat": 0}, headers=ann_auth)
    client.post(f"/v1/matches/{other}/seats", json={"seat": 1, "name": "Neville"})
    elsewhere = gql(bring, {"input": {"matchId": other, "expectedVersion": 0}}, ann_auth)["bringSavedHand"]
    assert elsewhere == problem("IllegalAction", client.post(f"/v1/matches/{other}/saved-hand", json={},
                                                             headers={**ann_auth, "If-Match": '"0"'}))
    assert elsewhere["message"] == "This is a High Card match: your saved hands are of Casting Stones."


@pytest.mark.anyio
async def test_trades_field_by_field(client, gql, new_player, grant, stores):
    _store, _collections, trades = stores
    (ann, ann_auth), (bob, bob_auth), (cat, cat_auth) = new_player("Ann"), new_player("Bob"), new_player("Cat")
    grant(ann, {"holly": 3, "fluffy": 1}, {"charms": 2})
    grant(bob, {"trevor": 1}, {"draco-malfoy": 1})
    offer = f"""mutation M($input: OfferTradeInput!) {{ offerTrade(input: $input) {{ __typename
        ... on Trade {{ {TRADE} }}
        ... on NotInCollection {{ missing {{ {ITEMS} }} }} {PROBLEM} }} }}"""
    read = f"query Q($id: ID!) {{ trade(id: $id) {{ __typename ... on Trade {{ {TRADE} }} {PROBLEM} }} }}"
    accepting = f"""... on NotInCollection {{ missing {{ {ITEMS} }} }} ... on TradeFailed {{ trade {{ {TRADE} }} }}"""
    answer = {name: f"""mutation M($id: ID!) {{ {name}(input: {{tradeId: $id}}) {{ __typename ... on Trade {{ {TRADE} }}
        ... on TradeClosed {{ tradeStatus }} {accepting if name == "acceptTrade" else ""} {PROBLEM} }} }}"""
              for name in ("acceptTrade", "declineTrade", "cancelTrade")}
    rest_path = {"acceptTrade": "accept", "declineTrade": "decline", "cancelTrade": "cancel"}

    def rest_trade(trade_id: str, auth: dict) -> dict:
        return client.get(f"/v1/trades/{trade_id}", headers=auth).json()

    def reply(name: str, trade_id: str, auth: dict) -> dict:
        return gql(answer[name], {"id": trade_id}, auth)[name]

    def rest_reply(name: str, trade_id: str, auth: dict):
        return client.post(f"/v1/trades/{trade_id}/{rest_path[name]}", headers=auth)

    # an offer: every field, both kinds on both sides
    terms = {"to": bob, "give": {"stones": [{"id": "holly", "count": 2}], "cards": [{"id": "charms"}]},
             "get": {"stones": [{"id": "trevor"}], "cards": [{"id": "draco-malfoy", "count": 1}]}, "expiresIn": 3600}
    made = gql(offer, {"input": terms}, ann_auth)["offerTrade"]
    trade_id = made["id"]
    assert made == {"__typename": "Trade", "id": trade_id, "game": "casting-stones", "from": ann, "to": bob,
                    "give": {"stones": [{"id": "holly", "count": 2}], "cards": [{"id": "charms", "count": 1}]},
                    "get": {"stones": [{"id": "trevor", "count": 1}], "cards": [{"id": "draco-malfoy", "count": 1}]},
                    "status": "OFFERED", "reason": None, "created": made["created"], "updated": made["created"],
                    "expires": made["created"] + 3_600_000, "recovered": False}
    assert snake(made, ("status", "reason")) == rest_trade(trade_id, ann_auth)
    assert abs(made["created"] - time.time() * 1000) < 600_000
    assert gql(read, {"id": trade_id}, bob_auth)["trade"] == made
    assert gql(read, {"id": trade_id}, cat_auth)["trade"] == problem(
        "TradeNotFound", client.get(f"/v1/trades/{trade_id}", headers=cat_auth))
    assert gql(read, {"id": "nope"}, cat_auth)["trade"] == problem("TradeNotFound",
                                                                   client.get("/v1/trades/nope", headers=cat_auth))
    for auth, name in (({}, "PlayerRequired"), (BAD, "InvalidToken")):
        assert gql(read, {"id": trade_id}, auth)["trade"] == problem(name, client.get(f"/v1/trades/{trade_id}",
                                                                                      headers=auth))

    # the refused offers, as REST refuses them
    def rest_offer(body: dict, auth: dict = ann_auth):
        body = {k if k != "expiresIn" else "expires_in": v for k, v in body.items()}
        return client.post("/v1/trades", json=body, headers=auth)

    gift = {"to": bob, "give": {"stones": [{"id": "holly"}]}, "get": {}}
    for wrong in ({**gift, "to": ann}, {**gift, "give": {}}, {**gift, "give": {"stones": [{"id": "no-such-stone"}]}}):
        assert gql(offer, {"input": wrong}, ann_auth)["offerTrade"] == problem("InvalidTrade", rest_offer(wrong))
    for wrong, message in (({**gift, "expiresIn": 59}, "An offer lasts 60 to 604800 seconds."),
                           ({**gift, "expiresIn": 7 * 24 * 3600 + 1}, "An offer lasts 60 to 604800 seconds."),
                           ({**gift, "give": {"stones": [{"id": "holly", "count": 0}]}},
                            "give: each item is an id and a count from 1 to 100.")):
        # REST's body schema refuses these before the store does (malformed_request)
        assert gql(offer, {"input": wrong}, ann_auth)["offerTrade"] == {
            "__typename": "InvalidTrade", "code": "INVALID_TRADE", "ruleCode": None, "message": message}
    assert gql(offer, {"input": {**gift, "to": "nobody"}}, ann_auth)["offerTrade"] == problem(
        "PlayerNotFound", rest_offer({**gift, "to": "nobody"}))
    too_many = {**gift, "give": {"stones": [{"id": "holly", "count": 5}], "cards": [{"id": "draco-malfoy"}]}}
    assert gql(offer, {"input": too_many}, ann_auth)["offerTrade"] == problem(
        "NotInCollection", rest_offer(too_many), missing={"stones": [{"id": "holly", "count": 2}],
                                                          "cards": [{"id": "draco-malfoy", "count": 1}]})
    for auth, name in (({}, "PlayerRequired"), (BAD, "InvalidToken")):
        assert gql(offer, {"input": gift}, auth)["offerTrade"] == problem(name, rest_offer(gift, auth))

    # accepting: only the recipient, only with its side owned; then completed, and closed
    assert reply("acceptTrade", trade_id, ann_auth) == problem("NotYourTrade",
                                                               rest_reply("acceptTrade", trade_id, ann_auth))
    grant(bob, {"trevor": -1})
    assert reply("acceptTrade", trade_id, bob_auth) == problem(
        "NotInCollection", rest_reply("acceptTrade", trade_id, bob_auth),
        missing={"stones": [{"id": "trevor", "count": 1}], "cards": []})
    grant(bob, {"trevor": 1})
    done = reply("acceptTrade", trade_id, bob_auth)
    assert done == {**made, "status": "COMPLETED", "updated": done["updated"]} and done["updated"] >= made["created"]
    assert snake(done, ("status", "reason")) == rest_trade(trade_id, bob_auth)
    assert client.get("/v1/players/me/collection", headers=bob_auth).json()["stones"] == [{"id": "holly", "count": 2}]
    for name in ("acceptTrade", "declineTrade"):
        assert reply(name, trade_id, bob_auth) == problem("TradeClosed", rest_reply(name, trade_id, bob_auth),
                                                          tradeStatus="completed")
    assert reply("cancelTrade", trade_id, ann_auth) == problem(
        "TradeClosed", rest_reply("cancelTrade", trade_id, ann_auth), tradeStatus="completed")
    for name in answer:
        assert reply(name, "nope", bob_auth) == problem("TradeNotFound", rest_reply(name, "nope", bob_auth))
        assert reply(name, trade_id, cat_auth) == problem("TradeNotFound", rest_reply(name, trade_id, cat_auth))
        for auth, problem_name in (({}, "PlayerRequired"), (BAD, "InvalidToken")):
            assert reply(name, trade_id, auth) == problem(problem_name, rest_reply(name, trade_id, auth))

    # declined, cancelled (the default expiry: a day), expired
    declined_id = gql(offer, {"input": gift}, ann_auth)["offerTrade"]["id"]
    assert reply("declineTrade", declined_id, ann_auth) == problem(
        "NotYourTrade", rest_reply("declineTrade", declined_id, ann_auth))
    declined = reply("declineTrade", declined_id, bob_auth)
    assert declined["status"] == "DECLINED" and declined["reason"] is None and declined["to"] == bob
    assert snake(declined, ("status", "reason")) == rest_trade(declined_id, ann_auth)
    cancelled = gql(offer, {"input": gift}, ann_auth)["offerTrade"]
    assert cancelled["expires"] - cancelled["created"] == 24 * 3600 * 1000
    assert reply("cancelTrade", cancelled["id"], bob_auth) == problem(
        "NotYourTrade", rest_reply("cancelTrade", cancelled["id"], bob_auth))
    gone = reply("cancelTrade", cancelled["id"], ann_auth)
    assert gone == {**cancelled, "status": "CANCELLED", "updated": gone["updated"]}
    assert snake(gone, ("status", "reason")) == rest_trade(cancelled["id"], bob_auth)
    expired_id = gql(offer, {"input": gift}, ann_auth)["offerTrade"]["id"]
    await trades.redis.hset(trades.key(expired_id), "expires", int(time.time() * 1000) - 1000)  # its time is up
    expired = gql(read, {"id": expired_id}, bob_auth)["trade"]
    assert expired["status"] == "EXPIRED" and snake(expired, ("status", "reason")) == rest_trade(expired_id, bob_auth)
    assert reply("acceptTrade", expired_id, bob_auth) == {  # the accept is what moves it to expired: its words
        "__typename": "TradeClosed", "code": "TRADE_CLOSED", "ruleCode": None, "tradeStatus": "expired",
        "message": "This trade is expired: it is no longer open."}
    assert reply("acceptTrade", expired_id, bob_auth) == problem(
        "TradeClosed", rest_reply("acceptTrade", expired_id, bob_auth), tradeStatus="expired")

    # failed, the offerer short: Ann gave her Fluffy to Cat before Bob accepted her gift of it
    fluffy = {"to": bob, "give": {"stones": [{"id": "fluffy"}]}, "get": {}}
    failing_id = gql(offer, {"input": fluffy}, ann_auth)["offerTrade"]["id"]
    away = gql(offer, {"input": {**fluffy, "to": cat}}, ann_auth)["offerTrade"]["id"]
    assert reply("acceptTrade", away, cat_auth)["status"] == "COMPLETED"
    failed = reply("acceptTrade", failing_id, bob_auth)
    record = rest_trade(failing_id, bob_auth)
    assert record["status"] == "failed" and record["reason"] == "offerer_short" and record["recovered"] is False
    assert failed == {"__typename": "TradeFailed", "code": "TRADE_FAILED", "ruleCode": None,
                      "message": "The trade could not be made: its offerer no longer owns 1 x fluffy (stones) (or "
                                 "not all of it). Nothing moved.",
                      "trade": {k: v for k, v in gql(read, {"id": failing_id}, bob_auth)["trade"].items()
                                if k != "__typename"}}
    assert snake(failed["trade"], ("status", "reason")) == record and failed["trade"]["reason"] == "OFFERER_SHORT"

    # failed, the recipient short, and finished by the workers' sweep: recovered
    trades.sweep_grace = 0
    grant(cat, {"trevor": 1})
    swap = {"to": cat, "give": {"stones": [{"id": "holly"}]}, "get": {"stones": [{"id": "trevor"}]}}
    stopped = gql(offer, {"input": swap}, bob_auth)["offerTrade"]["id"]
    with pytest.raises(Crash):
        await trades.accept(stopped, cat, crash_after="accepted")  # the accepting process stops
    away = gql(offer, {"input": {"to": ann, "give": {"stones": [{"id": "trevor"}]}, "get": {}}}, cat_auth)
    assert reply("acceptTrade", away["offerTrade"]["id"], ann_auth)["status"] == "COMPLETED"
    assert await trades.sweep() >= 1
    recovered = gql(read, {"id": stopped}, bob_auth)["trade"]
    assert recovered["status"] == "FAILED" and recovered["reason"] == "RECIPIENT_SHORT"
    assert recovered["recovered"] is True and recovered["updated"] >= recovered["created"]
    assert snake(recovered, ("status", "reason")) == rest_trade(stopped, cat_auth)

    # both histories, newest first, a page at a time
    history = f"""query Q($cursor: String, $limit: Int!) {{ myTrades(cursor: $cursor, limit: $limit) {{ __typename
        ... on TradePage {{ trades {{ {TRADE} }} nextCursor }} {PROBLEM} }} }}"""

    def page(auth: dict, cursor=None, limit=(20, 20)) -> tuple[dict, dict]:
        got = gql(history, {"cursor": cursor, "limit": limit[0]}, auth)["myTrades"]
        params = {"limit": limit[1], **({"cursor": cursor} if cursor else {})}
        return snake(got, ("status", "reason")), client.get("/v1/players/me/trades", params=params,
                                                            headers=auth).json()

    bobs, rest = page(bob_auth)
    assert bobs == rest and rest["next_cursor"] is None
    assert [t["id"] for t in rest["trades"]] == [stopped, failing_id, expired_id, cancelled["id"], declined_id,
                                                 trade_id]
    assert [t["status"] for t in rest["trades"]] == ["failed", "failed", "expired", "cancelled", "declined",
                                                     "completed"]
    assert [t["recovered"] for t in rest["trades"]] == [True] + [False] * 5
    top, rest = page(bob_auth, limit=(2, 2))
    assert top == rest and top["trades"] == bobs["trades"][:2] and top["next_cursor"]
    after, rest = page(bob_auth, top["next_cursor"], (2, 2))
    assert after == rest and after["trades"] == bobs["trades"][2:4]
    assert page(bob_auth, limit=(0, 1))[0] == page(bob_auth, limit=(1, 1))[1]  # a limit below 1 is 1
    assert page(bob_auth, "not-a-cursor")[0] == {"trades": [], "next_cursor": None}
    cats = page(cat_auth)
    assert cats[0] == cats[1] and len(cats[1]["trades"]) == 3
    for auth, name in (({}, "PlayerRequired"), (BAD, "InvalidToken")):
        assert gql(history, {"limit": 5}, auth)["myTrades"] == problem(
            name, client.get("/v1/players/me/trades", headers=auth))
