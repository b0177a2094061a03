"""The players' and collections' GraphQL converters and the ``playerTurns`` resolver (schema/players.py,
schema/collections.py, schema/collection_types.py), field by field, against the mutation run's survivors there
(tests/mutation/run.py, module ``players``): ``_rating`` (a player's ratings, read through GraphQL after a rated
match), ``_profile``, ``_quick_status``, ``_collection``, ``_progress``, ``_opening``, ``_hand`` (saved hands),
``trade``, the union names, and ``_player_turns``: its notices, the seat check of every match it follows (from the
start and found later), its refusals, and how it ends (the token revoked, the store down, a shutdown, a client
that stopped reading), and the stream-limit lease it holds.

Every value is the REST answer for the same object (docs/api.md) or what the test set up. The streams' ends that
need a process of their own (a shutdown, a store that is down, a slow consumer, a keep-alive other than the
default) run an app of their own through ASGI in an event loop of their own, on the run's Redis (or, for the
outage, on a redis-server of the test's own)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import json
import time
from typing import Self

import httpx

from service.app import create_app
from service.store.live import STORE_DOWN_MESSAGE
from tests.collections.test_hands import HARRY, VOLDEMORT, owns
from tests.collections.test_mutants_graphql_fields import (
    HAND,
    ITEMS,
    MY_COLLECTION,
    OPENING,
    PROGRESS,
    TRADE,
    midnight_ms,
)
from tests.live.clients import subscription

from .conftest import bearer, play_out
from .test_graphql import gql
from .test_mutants_graphql_fields import PROBLEM, QUICK, RATING, TURNS, problem, snake

BAD = "gp.x.y.z"
SHUTDOWN = "This server is shutting down: subscribe again (another server answers) with `after`."


# -- ratings, profiles, quick match -----------------------------------------------------------------------------

def test_ratings_after_a_rated_quick_match_on_me_and_on_the_profiles(client, new_player, drain):
    (a_id, a), (b_id, b) = new_player(), new_player()
    join = f"mutation Op($input: QuickMatchInput!) {{ joinQuickMatch(input: $input) {{ {QUICK} }} }}"
    status = f"query Op {{ quickMatch {{ {QUICK} }} }}"
    me = f"query Op {{ me {{ __typename ... on Me {{ id name ratings {{ {RATING} }} }} {PROBLEM} }} }}"
    lookup = f"""query Op($id: ID!) {{ player(id: $id) {{ __typename
        ... on PlayerProfile {{ id name created ratings {{ {RATING} }} }} {PROBLEM} }} }}"""
    profiles = {p: client.get(f"/v1/players/{p}").json() for p in (a_id, b_id)}
    for player, token in ((a_id, a), (b_id, b)):  # no rated match yet: no ratings
        assert gql(client, me, token=token)["me"] == {"__typename": "Me", "id": player,
                                                      "name": profiles[player]["name"], "ratings": []}
        assert gql(client, lookup, {"id": player})["player"] == {"__typename": "PlayerProfile", **profiles[player]}
        assert profiles[player]["ratings"] == [] and abs(profiles[player]["created"] - time.time() * 1000) < 600_000

    # waiting: the queue, every field (a timer no other test asks for: no one else is paired with A)
    ask = {"game": "high-card", "turnSeconds": 86399}
    waiting = gql(client, join, {"input": ask}, a)["joinQuickMatch"]
    rest = client.get("/v1/quick-match", headers=bearer(a)).json()
    assert waiting == {"__typename": "QuickMatchStatus", "status": "WAITING", "last": None,
                       "queue": {"game": "high-card", "variant": "standard", "seats": 2, "rated": True,
                                 "turnSeconds": 86399, "since": rest["queue"]["since"]}}
    assert snake(waiting, ("status",)) == rest and gql(client, status, token=a)["quickMatch"] == waiting
    made = gql(client, join, {"input": ask}, b)["joinQuickMatch"]
    assert made["status"] == "MATCHED" and made["queue"] is None
    assert snake(made, ("status",)) == client.get("/v1/quick-match", headers=bearer(b)).json()
    match_id = made["last"]["matchId"]
    found = gql(client, status, token=a)["quickMatch"]
    assert found == {"__typename": "QuickMatchStatus", "status": "MATCHED", "queue": None,
                     "last": {"matchId": match_id, "seat": 1 - made["last"]["seat"], "at": found["last"]["at"]}}

    finished = play_out(client, match_id, [a, b])
    drain()  # the rating job
    winners = finished["result"]["winners"]
    seat_of = {a_id: found["last"]["seat"], b_id: made["last"]["seat"]}
    for player, token in ((a_id, a), (b_id, b)):
        profile = client.get(f"/v1/players/{player}").json()
        won, lost = seat_of[player] in winners and len(winners) == 1, seat_of[player] not in winners
        [rating] = profile["ratings"]
        assert rating == {"game": "high-card", "variant": "standard", "rating": rating["rating"], "mu": rating["mu"],
                          "sigma": rating["sigma"], "games": 1, "wins": int(won), "losses": int(lost),
                          "draws": int(not won and not lost), "provisional": True}
        assert abs(rating["rating"] - (rating["mu"] - 3 * rating["sigma"])) < 0.01
        assert 0 < rating["sigma"] < 25 / 3
        assert rating["mu"] > 25 if won else rating["mu"] < 25 if lost else True
        assert gql(client, me, token=token)["me"] == {"__typename": "Me", "id": player, "name": profile["name"],
                                                      "ratings": [rating]}
        assert gql(client, lookup, {"id": player})["player"] == {
            "__typename": "PlayerProfile", "id": player, "name": profile["name"],
            "created": profiles[player]["created"], "ratings": [rating]}
    assert gql(client, lookup, {"id": "nobody"})["player"] == problem("PlayerNotFound",
                                                                      client.get("/v1/players/nobody"))
    assert gql(client, me, token=BAD)["me"] == problem("InvalidToken",
                                                       client.get("/v1/players/me", headers=bearer(BAD)))


# -- collections, saved hands, trades ----------------------------------------------------------------------------

def test_sets_collection_saved_hands_and_progress_field_by_field(client, new_player, grant):
    (ann, ann_token), (bob, bob_token) = new_player(), new_player()
    auth = bearer(ann_token)
    open_set = f"""mutation Op($input: OpenSetInput!) {{ openSet(input: $input) {{ __typename
        ... on SetOpened {{ duplicate opening {{ {OPENING} }} }} {PROBLEM} }} }}"""
    starter = gql(client, open_set, {"input": {"kind": "STARTER"}}, ann_token)["openSet"]
    daily = gql(client, open_set, {"input": {"kind": "REFILL"}}, ann_token)["openSet"]
    openings = client.get("/v1/players/me/packs", headers=auth).json()["openings"]
    assert [o["id"] for o in openings] == [daily["opening"]["id"], starter["opening"]["id"]]
    for opened, rest, kind, allowance in ((starter, openings[1], "STARTER", "ONCE"),
                                          (daily, openings[0], "REFILL", "DAILY")):
        assert opened == {"__typename": "SetOpened", "duplicate": False, "opening": {
            "id": rest["id"], "kind": kind, "seed": rest["seed"], "at": rest["at"], "stones": rest["stones"],
            "cards": rest["cards"], "allowance": allowance}}
        assert rest["id"] and abs(rest["at"] - time.time() * 1000) < 600_000

    # saved hands: the first is the default; the second is not
    owns(grant, ann, HARRY)
    save = f"""mutation Op($input: SaveHandInput!) {{ saveHand(input: $input) {{ __typename
        ... on SavedHand {{ {HAND} }} ... on NotInCollection {{ missing {{ {ITEMS} }} }} {PROBLEM} }} }}"""
    hands = f"query Op {{ myHands {{ __typename ... on SavedHandList {{ hands {{ {HAND} }} }} {PROBLEM} }} }}"
    assert gql(client, hands, token=ann_token)["myHands"] == {"__typename": "SavedHandList", "hands": []}
    cards = ["draco-malfoy", "double-potion", "charms"]
    harry = {"name": "Gryffindor", "stones": HARRY["stones"], "cards": cards, "hand": HARRY["hand"], "default": True}
    saved = gql(client, save, {"input": harry}, ann_token)["saveHand"]
    rest = client.get("/v1/players/me/hands/Gryffindor", headers=auth).json()
    assert saved == {"__typename": "SavedHand", "name": "Gryffindor", "stones": sorted(HARRY["stones"]),
                     "cards": cards, "hand": sorted(HARRY["hand"]), "saved": rest["saved"], "default": True}
    assert snake(saved) == rest and abs(rest["saved"] - time.time() * 1000) < 600_000
    other_hand = sorted(set(HARRY["stones"]) - set(HARRY["hand"]))
    second = gql(client, save, {"input": {**harry, "name": "Second", "cards": cards[::-1], "hand": other_hand,
                                          "default": False}}, ann_token)["saveHand"]
    assert second == {"__typename": "SavedHand", "name": "Second", "stones": sorted(HARRY["stones"]),
                      "cards": cards[::-1], "hand": other_hand, "saved": second["saved"], "default": False}
    listed = gql(client, hands, token=ann_token)["myHands"]
    assert snake(listed) == client.get("/v1/players/me/hands", headers=auth).json()
    assert listed == {"__typename": "SavedHandList", "hands": [{k: v for k, v in h.items() if k != "__typename"}
                                                               for h in (saved, second)]}

    # the collection: every field, the default hand and both allowances (the refill's spent until midnight)
    mine = f"query Op {{ myCollection {{ {MY_COLLECTION} }} }}"
    collection = gql(client, mine, token=ann_token)["myCollection"]
    rest = client.get("/v1/players/me/collection", headers=auth).json()
    assert snake(collection, ("kind",)) == rest
    assert collection == {"__typename": "MyCollection", "playerId": ann, "game": "casting-stones", "public": False,
                          "stones": collection["stones"], "cards": collection["cards"], "totals": {
                              "stones": sum(e["count"] for e in collection["stones"]),
                              "distinctStones": len(collection["stones"]),
                              "cards": sum(e["count"] for e in collection["cards"]),
                              "distinctCards": len(collection["cards"])},
                          "sets": [{"kind": "STARTER", "available": 0, "perDay": None, "openedToday": None,
                                    "granted": 0, "nextAt": None},
                                   {"kind": "REFILL", "available": 0, "perDay": 1, "openedToday": 1, "granted": 0,
                                    "nextAt": midnight_ms()}],
                          "defaultHand": "Gryffindor"}
    assert [e["id"] for e in collection["cards"]] == ["double-potion", "charms", "draco-malfoy"]
    assert set(HARRY["stones"]) <= {e["id"] for e in collection["stones"]}
    empty = gql(client, mine, token=bob_token)["myCollection"]
    assert empty["defaultHand"] is None and empty["stones"] == [] and empty["cards"] == []
    assert empty["playerId"] == bob and empty["sets"][1]["openedToday"] == 0

    progress = f"query Op($id: ID) {{ collectionProgress(playerId: $id) {{ {PROGRESS} }} }}"
    own = gql(client, progress, {"id": None}, ann_token)["collectionProgress"]
    assert snake(own) == client.get("/v1/players/me/collection/progress", headers=auth).json()
    assert own["playerId"] == ann and own["game"] == "casting-stones"
    assert own["cards"] == {"owned": 3, "total": 3, "complete": True}
    assert own["stones"] == {"owned": len(collection["stones"]), "total": 125, "complete": False}
    assert own["missing"]["cards"] == [] and len(own["missing"]["stones"]) == 125 - len(collection["stones"])

    # the hands' refusals, each with the code REST gives
    def rest_save(body: dict, headers: dict = auth):
        return client.post("/v1/players/me/hands", json=body, headers=headers)

    short = {**harry, "name": "Short", "hand": HARRY["hand"][:4]}
    assert gql(client, save, {"input": short}, ann_token)["saveHand"] == problem("InvalidHand", rest_save(short))
    dark = {**harry, "name": "Dark", "stones": VOLDEMORT["stones"], "hand": VOLDEMORT["hand"]}
    lacking = rest_save(dark)
    assert gql(client, save, {"input": dark}, ann_token)["saveHand"] == problem(
        "NotInCollection", lacking, missing=lacking.json()["missing"])
    assert lacking.json()["missing"]["stones"] and lacking.json()["missing"]["cards"] == []
    for token, name in ((None, "PlayerRequired"), (BAD, "InvalidToken")):
        headers = bearer(token) if token else {}
        assert gql(client, save, {"input": harry}, token)["saveHand"] == problem(name, rest_save(harry, headers))
        assert gql(client, hands, token=token)["myHands"] == problem(name, client.get("/v1/players/me/hands",
                                                                                      headers=headers))
    for n in range(18):  # 20 hands at most
        assert gql(client, save, {"input": {**harry, "name": f"H{n}", "default": False}}, ann_token
                   )["saveHand"]["__typename"] == "SavedHand"
    full = {**harry, "name": "One too many"}
    assert gql(client, save, {"input": full}, ann_token)["saveHand"] == problem("TooManyHands", rest_save(full))

    delete = f"""mutation Op($name: String!) {{ deleteHand(input: {{name: $name}}) {{ __typename
        ... on HandDeleted {{ name }} {PROBLEM} }} }}"""
    assert gql(client, delete, {"name": "Second"}, ann_token)["deleteHand"] == {"__typename": "HandDeleted",
                                                                                "name": "Second"}
    left = gql(client, hands, token=ann_token)["myHands"]["hands"]
    assert [h["name"] for h in left] == ["Gryffindor"] + sorted(f"H{n}" for n in range(18))  # by name
    assert [h["default"] for h in left] == [True] + [False] * 18
    assert gql(client, delete, {"name": "Second"}, ann_token)["deleteHand"] == problem(
        "HandNotFound", client.delete("/v1/players/me/hands/Second", headers=auth))


def test_a_failed_trade_field_by_field(client, new_player, grant):
    """Every field of a trade, ``reason`` set: Bob offered Ann his one Fluffy, then gave it to Cat first."""
    (ann, ann_token), (bob, bob_token), (cat, cat_token) = new_player(), new_player(), new_player()
    grant(bob, {"fluffy": 1}, {"charms": 1})
    grant(ann, {"holly": 2})
    offer = f"""mutation Op($input: OfferTradeInput!) {{ offerTrade(input: $input) {{ __typename
        ... on Trade {{ {TRADE} }} {PROBLEM} }} }}"""
    accept = f"""mutation Op($id: ID!) {{ acceptTrade(input: {{tradeId: $id}}) {{ __typename
        ... on Trade {{ {TRADE} }} ... on TradeFailed {{ trade {{ {TRADE} }} }} {PROBLEM} }} }}"""
    read = f"query Op($id: ID!) {{ trade(id: $id) {{ __typename ... on Trade {{ {TRADE} }} {PROBLEM} }} }}"
    terms = {"to": ann, "give": {"stones": [{"id": "fluffy"}], "cards": [{"id": "charms"}]},
             "get": {"stones": [{"id": "holly", "count": 2}]}, "expiresIn": 600}
    made = gql(client, offer, {"input": terms}, bob_token)["offerTrade"]
    trade_id = made["id"]
    rest = client.get(f"/v1/trades/{trade_id}", headers=bearer(bob_token)).json()
    assert made == {"__typename": "Trade", "id": trade_id, "game": "casting-stones", "from": bob, "to": ann,
                    "give": {"stones": [{"id": "fluffy", "count": 1}], "cards": [{"id": "charms", "count": 1}]},
                    "get": {"stones": [{"id": "holly", "count": 2}], "cards": []}, "status": "OFFERED",
                    "reason": None, "created": rest["created"], "updated": rest["created"],
                    "expires": rest["created"] + 600_000, "recovered": False}
    assert snake(made, ("status", "reason")) == rest

    away = gql(client, offer, {"input": {"to": cat, "give": {"stones": [{"id": "fluffy"}]}, "get": {}}},
               bob_token)["offerTrade"]
    given = gql(client, accept, {"id": away["id"]}, cat_token)["acceptTrade"]
    assert given["status"] == "COMPLETED" and given["reason"] is None and given["to"] == cat
    failed = gql(client, accept, {"id": trade_id}, ann_token)["acceptTrade"]
    record = client.get(f"/v1/trades/{trade_id}", headers=bearer(ann_token)).json()
    assert record["status"] == "failed" and record["reason"] == "offerer_short"
    assert failed == {"__typename": "TradeFailed", "code": "TRADE_FAILED", "ruleCode": None,
                      "message": failed["message"],
                      "trade": {**{k: v for k, v in made.items() if k != "__typename"}, "status": "FAILED",
                                "reason": "OFFERER_SHORT", "updated": record["updated"]}}
    assert failed["message"].startswith("The trade could not be made: its offerer no longer owns")
    assert record["updated"] >= record["created"]
    for token in (ann_token, bob_token):
        assert gql(client, read, {"id": trade_id}, token)["trade"] == {"__typename": "Trade", **failed["trade"]}
    assert snake(failed["trade"], ("status", "reason")) == record

    history = f"""query Op {{ myTrades {{ __typename ... on TradePage {{ trades {{ {TRADE} }} nextCursor }}
        {PROBLEM} }} }}"""
    bobs = gql(client, history, token=bob_token)["myTrades"]
    assert snake(bobs, ("status", "reason")) == client.get("/v1/players/me/trades", headers=bearer(bob_token)).json()
    assert [(t["id"], t["status"], t["reason"]) for t in bobs["trades"]] == [
        (away["id"], "COMPLETED", None), (trade_id, "FAILED", "OFFERER_SHORT")]


def test_the_collections_result_unions_keep_their_names(client):
    """The union types' names are the schema's (clients generate their types from them)."""
    unions = {"MyCollectionLookup": ["MyCollection", "PlayerRequired", "InvalidToken"],
              "PublicCollectionLookup": ["PublicCollection", "PlayerNotFound", "CollectionPrivate"],
              "SavedHandsLookup": ["SavedHandList", "PlayerRequired", "InvalidToken"],
              "DeleteHandResult": ["HandDeleted", "PlayerRequired", "InvalidToken", "HandNotFound"],
              "CloseTradeResult": ["Trade", "PlayerRequired", "InvalidToken", "TradeNotFound", "NotYourTrade",
                                   "TradeClosed"]}
    for name, members in unions.items():
        found = gql(client, "query Op($name: String!) { __type(name: $name) { kind name possibleTypes { name } } }",
                    {"name": name})["__type"]
        assert found is not None, name
        assert found["kind"] == "UNION" and found["name"] == name
        assert sorted(t["name"] for t in found["possibleTypes"]) == sorted(members)
    sdl = client.get("/schema.graphql").text
    assert "union SavedHandsLookup = SavedHandList | PlayerRequired | InvalidToken" in sdl


# -- playerTurns over a real websocket ----------------------------------------------------------------------------

def _match(client, token: str | None, neville: bool = True) -> tuple[str, str | None]:
    """A one-round High Card match: ``token``'s player in seat 0, Neville in seat 1 (if ``neville``)."""
    match_id = client.post("/v1/matches", json={"game": "high-card", "options": {"rounds": 1}}).json()["id"]
    if token:
        assert client.post(f"/v1/matches/{match_id}/seats", json={"seat": 0}, headers=bearer(token)).status_code == 201
    return match_id, _neville(client, match_id) if neville else None


def _neville(client, match_id: str) -> str:
    taken = client.post(f"/v1/matches/{match_id}/seats", json={"seat": 1, "name": "Neville"})
    assert taken.status_code == 201, taken.text
    return taken.json()["token"]


def _act(client, match_id: str, token: str) -> None:
    legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=bearer(token)).json()
    played = client.post(f"/v1/matches/{match_id}/actions", json={"action": legal["actions"][0]},
                         headers={**bearer(token), "If-Match": f'"{legal["version"]}"'})
    assert played.status_code == 200, played.text


def _notice(client, match_id: str, to_act: list[int]) -> dict:
    """The TurnNotice for seat 0 of ``match_id`` as the match stands now (REST)."""
    match = client.get(f"/v1/matches/{match_id}").json()
    return {"type": "turn", "matchId": match_id, "seat": 0, "version": match["version"],
            "status": match["status"].upper(), "toAct": to_act, "yourTurn": 0 in to_act}


def test_player_turns_notices_of_matches_followed_from_the_start_and_found_later(live_server, client, new_player):
    """Each TurnNotice field as the match stands (REST): a match waiting on the player when the stream opens, one
    that starts once its second seat is taken, one that ends while it waited on someone else (not announced until
    then), and one found later (announced). The seat check each followed match runs once followed passes: the
    stream goes on."""
    _, a = new_player()
    acted, neville_acted = _match(client, a)
    _act(client, acted, a)  # waits on Neville only: not announced
    waiting, _ = _match(client, a, neville=False)
    turn, _ = _match(client, a)

    async def run() -> list[tuple[dict, dict]]:
        messages = subscription(live_server, {"token": a}, TURNS)
        got = []

        async def step(action, expected) -> None:
            if action is not None:
                await asyncio.to_thread(action)
            got.append((await asyncio.wait_for(messages.__anext__(), 15), await asyncio.to_thread(expected)))

        async with contextlib.aclosing(messages):
            await step(None, lambda: _notice(client, turn, [0, 1]))
            await asyncio.sleep(0.5)  # every match followed is subscribed to, and its seat checked
            await step(lambda: _neville(client, waiting), lambda: _notice(client, waiting, [0, 1]))
            await step(lambda: _act(client, acted, neville_acted), lambda: _notice(client, acted, []))
            later = {}

            def found_later():
                later["id"], later["neville"] = _match(client, a)

            await step(found_later, lambda: _notice(client, later["id"], [0, 1]))  # on the next rescan (2 s)
            await asyncio.sleep(0.5)  # subscribed to, and its seat checked
            await step(lambda: (_act(client, later["id"], a), _act(client, later["id"], later["neville"])),
                       lambda: _notice(client, later["id"], []))
        return got

    for seen, expected in asyncio.run(run()):
        assert seen == expected


def test_player_turns_refusals(live_server, client):
    async def first(init) -> dict:
        messages = subscription(live_server, init, TURNS)
        async with contextlib.aclosing(messages):
            return await asyncio.wait_for(messages.__anext__(), 15)

    assert asyncio.run(first({"token": 5})) == {"type": "problem", "code": "invalid_token", "ruleCode": None,
                                                "message": "The connection's token is not a player token."}
    assert asyncio.run(first({})) == {"type": "problem", "code": "player_required", "ruleCode": None,
                                      "message": client.get("/v1/players/me").json()["detail"]}
    assert asyncio.run(first({"token": BAD})) == {
        "type": "problem", "code": "invalid_token", "ruleCode": None,
        "message": client.get("/v1/players/me", headers=bearer(BAD)).json()["detail"]}


def _revoked_token_ends_the_stream(live_server, client, new_player, found_later: bool) -> None:
    """The token is revoked under an open stream: the next seat check ends it with ``invalid_token``, in a match
    followed from the start (its second seat taken) or in one found later (joined with the player's other token),
    whose check runs when it is first followed."""
    _, token = new_player()
    turn, _ = _match(client, token)  # the stream's first notice: it is open
    waiting = None if found_later else _match(client, token, neville=False)[0]
    spare = client.post("/v1/players/me/tokens", json={}, headers=bearer(token)).json()["token"]
    first_id = client.get("/v1/players/me/tokens", headers=bearer(token)).json()["tokens"][0]["id"]

    async def run() -> list[dict]:
        messages = subscription(live_server, {"token": token}, TURNS)
        async with contextlib.aclosing(messages):
            seen = [await asyncio.wait_for(messages.__anext__(), 15)]
            await asyncio.sleep(0.5)  # every match followed is subscribed to, and its seat checked
            gone = await asyncio.to_thread(client.delete, f"/v1/players/me/tokens/{first_id}", headers=bearer(spare))
            assert gone.status_code == 200, gone.text
            if found_later:
                await asyncio.to_thread(_match, client, spare, False)
            else:
                await asyncio.to_thread(_neville, client, waiting)
            seen.append(await asyncio.wait_for(messages.__anext__(), 10))
            return seen

    expected_first = _notice(client, turn, [0, 1])
    seen = asyncio.run(run())
    assert seen == [expected_first, {
        "type": "end", "reason": "invalid_token",
        "message": client.get(f"/v1/matches/{turn}", headers=bearer(token)).json()["detail"]}]
    assert seen[1]["message"] == "This player token is revoked or unknown."


def test_player_turns_end_when_the_token_is_revoked_in_a_match_followed_from_the_start(live_server, client,
                                                                                       new_player):
    _revoked_token_ends_the_stream(live_server, client, new_player, found_later=False)


def test_player_turns_end_when_the_token_is_revoked_in_a_match_found_later(live_server, client, new_player):
    _revoked_token_ends_the_stream(live_server, client, new_player, found_later=True)


# -- playerTurns on an app of the test's own, through ASGI ---------------------------------------------------------

class _Socket:
    """A graphql-transport-ws client of one subscription, driven through the ASGI app in the app's event loop:
    ``stall`` makes it a client that stops reading at the first result (its send never completes)."""

    def __init__(self, app, init: dict, query: str, *, stall: bool = False):
        self.app, self.stall = app, stall
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.results: asyncio.Queue = asyncio.Queue()
        self.closed: asyncio.Future = asyncio.get_running_loop().create_future()
        self.inbox.put_nowait({"type": "websocket.connect"})
        for frame in ({"type": "connection_init", "payload": init},
                      {"id": "1", "type": "subscribe", "payload": {"query": query}}):
            self.inbox.put_nowait({"type": "websocket.receive", "text": json.dumps(frame)})

    async def _receive(self) -> dict:
        return await self.inbox.get()

    async def _send(self, message: dict) -> None:
        if message["type"] == "websocket.close":
            if not self.closed.done():
                self.closed.set_result(message.get("code"))
            return
        if message["type"] != "websocket.send":
            return
        frame = json.loads(message["text"])
        if frame["type"] == "next" and self.stall:
            await asyncio.Event().wait()  # the client's buffers are full
        if frame["type"] != "connection_ack":
            await self.results.put(frame)

    async def __aenter__(self) -> Self:
        scope = {"type": "websocket", "asgi": {"version": "3.0"}, "http_version": "1.1", "scheme": "ws",
                 "path": "/graphql", "raw_path": b"/graphql", "query_string": b"", "root_path": "",
                 "headers": [(b"host", b"testserver"), (b"sec-websocket-protocol", b"graphql-transport-ws")],
                 "client": ("127.0.0.1", 50000), "server": ("testserver", 80),
                 "subprotocols": ["graphql-transport-ws"], "state": {}}
        self.task = asyncio.create_task(self.app(scope, self._receive, self._send))
        return self

    async def next(self, timeout: float = 10) -> dict:
        return await asyncio.wait_for(self.results.get(), timeout)

    async def __aexit__(self, *exc) -> None:
        self.inbox.put_nowait({"type": "websocket.disconnect", "code": 1000})
        done, _ = await asyncio.wait({self.task}, timeout=5)
        if not done:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        elif not self.task.cancelled():
            self.task.exception()  # retrieved: the socket's end is not what these tests look at


def _off_the_main_thread(main) -> None:
    """``asyncio.run(main())`` in a thread of its own, as an embedded server runs: the app takes no signal."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, main()).result()


def _turn_notice(match_id: str, version: int) -> dict:
    return {"id": "1", "type": "next", "payload": {"data": {"playerTurns": {
        "__typename": "TurnNotice", "matchId": match_id, "seat": 0, "version": version, "status": "ACTIVE",
        "toAct": [0, 1], "yourTurn": True}}}}


def _ended(reason: str, message: str) -> dict:
    return {"id": "1", "type": "next", "payload": {"data": {"playerTurns": {
        "__typename": "StreamEnded", "reason": reason, "message": message}}}}


def test_player_turns_lease_slow_consumer_and_shutdown(settings, games, client, new_player):
    """With a keep-alive of 1 s: the stream's lease lasts 3 keep-alives and is renewed at each keep-alive (so a
    stream open longer than its lease still holds its slot); a client that stops reading is dropped (4008)
    within the send timeout; a shutdown ends the stream with ``shutdown``."""
    _, token = new_player()
    match_id, _ = _match(client, token)
    version = client.get(f"/v1/matches/{match_id}").json()["version"]
    app = create_app(dataclasses.replace(settings, stream_keepalive=1.0, stream_send_timeout=0.3), games=games)

    async def main() -> None:
        async with app.router.lifespan_context(app):
            limit, store = app.state.stream_limit, app.state.store
            limit.ttl = 3.0  # the lease: max(ttl, 3 keep-alives) = 3 s
            key = limit.key(store, token)
            async with _Socket(app, {"token": token}, TURNS) as reader:
                assert await reader.next() == _turn_notice(match_id, version)
                [(_, expires)] = await store.redis.zrange(key, 0, -1, withscores=True)
                assert 2_000 < expires - time.time() * 1000 <= 3_000
                await asyncio.sleep(4.5)  # past the first lease: renewed at the keep-alives
                assert await limit.open_count(store, token) == 1
                [(_, renewed)] = await store.redis.zrange(key, 0, -1, withscores=True)
                assert renewed > expires + 1_000

                async with _Socket(app, {"token": token}, TURNS, stall=True) as stalled:
                    assert await asyncio.wait_for(stalled.closed, 3) == 4008  # the send timeout, 0.3 s
                assert reader.results.empty()

                app.state.live.begin_shutdown()
                assert await reader.next() == _ended("shutdown", SHUTDOWN)
                assert await reader.next() == {"id": "1", "type": "complete"}
            assert await limit.open_count(store, token) == 0

    _off_the_main_thread(main)


def test_player_turns_end_with_store_unavailable_when_the_store_is_down(settings, games, own_redis):
    """Redis down when a stream opens: the stream's one message is StreamEnded ``store_unavailable``, in words that
    name no host."""
    app = create_app(dataclasses.replace(settings, redis_url=own_redis.url), games=games)

    async def main() -> None:
        async with app.router.lifespan_context(app):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as http:
                made = await http.post("/v1/players", json={"name": "Outage"})
                assert made.status_code == 201, made.text
                token = made.json()["token"]
            own_redis.stop()
            app.state.live.timeout = 1.0  # how long the store is tried before it is given up on
            try:
                async with _Socket(app, {"token": token}, TURNS) as socket:
                    assert await socket.next() == _ended("store_unavailable", STORE_DOWN_MESSAGE)
                    assert await socket.next() == {"id": "1", "type": "complete"}
            finally:
                own_redis.restart()

    _off_the_main_thread(main)
