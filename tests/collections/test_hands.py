"""Advanced hands from a collection (issue 25): an Advanced match brings only what its players own, saved hands
are brought by name, open-collection matches keep today's free choice for bots and tests, and a rated Advanced
quick match brings each player's saved hand."""

from __future__ import annotations

import pytest

from service.games.casting_stones.collecting import themed_hands

from .conftest import unique_name

#: The manual's themed hands with 3 cards (the two starter cards and Draco Malfoy), as bring actions.
HARRY = next(h for h in themed_hands() if h["id"] == "harry-potter")["action"]
VOLDEMORT = next(h for h in themed_hands() if h["id"] == "voldemort")["action"]
STARTER_CARDS = ["charms", "double-potion"]


def owns(grant, player: str, action: dict) -> None:
    grant(player, {s: 1 for s in action["stones"]}, {c: 1 for c in action["cards"]})


def test_an_advanced_match_refuses_an_unowned_stone_and_accepts_an_owned_hand(client, new_player, grant):
    """A seat bound to a player brings only stones and cards it owns: `not_in_collection` names what is missing,
    nothing is applied; an owned hand is accepted, and bringing it uses nothing up."""
    (ann, ann_auth), (bob, bob_auth) = new_player("Ann"), new_player("Bob")
    grant(ann, {s: 1 for s in HARRY["stones"]}, {c: 1 for c in STARTER_CARDS})
    owns(grant, bob, VOLDEMORT)
    created = client.post("/v1/matches", json={"game": "casting-stones", "variant": "advanced"})
    assert created.status_code == 201, created.text
    assert created.json()["options"]["open_collection"] is False
    match_id = created.json()["id"]
    anonymous = client.post(f"/v1/matches/{match_id}/seats", json={"name": "Nobody"})
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "player_required"
    assert anonymous.json()["detail"] == ("This match is played with owned collections: join with your player token "
                                          "(or identity provider's JWT), so that you bring what you own.")
    bot = client.post(f"/v1/matches/{match_id}/bots", json={"level": "random"})
    assert bot.status_code == 409 and bot.json()["code"] == "collection_required"
    assert bot.json()["detail"] == ("A bot owns no collection: this match is played with owned collections. "
                                    "Bots play open_collection matches (unrated).")
    for auth in (ann_auth, bob_auth):
        assert client.post(f"/v1/matches/{match_id}/seats", json={"name": "x"}, headers=auth).status_code == 201
    match = client.get(f"/v1/matches/{match_id}", headers=ann_auth).json()
    assert match["status"] == "active"

    # the third card of the Harry Potter hand, which she does not own, through GraphQL: NotInCollection, typed
    gql = client.post("/graphql", headers=ann_auth, json={"query": """
        mutation Bring($input: SubmitActionInput!) { submitAction(input: $input) { __typename
          ... on NotInCollection { code missing { stones { id count } cards { id count } } } } }""",
        "variables": {"input": {"matchId": match_id, "expectedVersion": match["version"], "action": {"castingStones": {
            "type": "BRING", "stones": HARRY["stones"], "cards": HARRY["cards"],
            "hand": HARRY["hand"]}}}}})
    assert gql.json()["data"]["submitAction"] == {"__typename": "NotInCollection", "code": "NOT_IN_COLLECTION",
                                                  "missing": {"stones": [], "cards": [{"id": "draco-malfoy",
                                                                                       "count": 1}]}}

    grant(ann, cards={"draco-malfoy": 1})
    # Ann swaps Harry's wand and the Cloak for Fluffy and Unicorn Blood, which she does not own
    stones = sorted([s for s in HARRY["stones"] if s not in ("harrys-wand", "cloak-of-invisibility")]
                    + ["fluffy", "unicorn-blood"])
    hand = sorted([s for s in HARRY["hand"] if s not in ("harrys-wand", "cloak-of-invisibility")]
                  + ["fluffy", "unicorn-blood"])
    unowned = {"type": "bring", "stones": stones, "cards": HARRY["cards"], "hand": hand}
    refused = client.post(f"/v1/matches/{match_id}/actions", json={"action": unowned},
                          headers={**ann_auth, "If-Match": f'"{match["version"]}"'})
    assert refused.status_code == 409, refused.text
    assert refused.json()["code"] == "not_in_collection"
    assert refused.json()["missing"] == {"stones": [{"id": "unicorn-blood", "count": 1}, {"id": "fluffy", "count": 1}],
                                         "cards": []}
    assert "unicorn-blood" in refused.json()["detail"] and "fluffy" in refused.json()["detail"]
    assert client.get(f"/v1/matches/{match_id}").json()["version"] == match["version"]
    accepted = client.post(f"/v1/matches/{match_id}/actions", json={"action": HARRY},
                           headers={**ann_auth, "If-Match": f'"{match["version"]}"'})
    assert accepted.status_code == 200, accepted.text
    mine = client.get("/v1/players/me/collection", headers=ann_auth).json()
    assert {e["id"] for e in mine["stones"]} == set(HARRY["stones"])  # bringing uses nothing up


def test_open_collection_matches_keep_the_free_choice_for_bots_and_anonymous_seats(client):
    """Seats without a player bring any stones in unrated `open_collection` matches: a bot takes a seat, an
    anonymous seat brings what it likes; without the option a bot is refused (collection_required)."""
    created = client.post("/v1/matches", json={"game": "casting-stones", "variant": "advanced", "seed": "3",
                                               "options": {"open_collection": True},
                                               "bots": [{"seat": 1, "level": "random"}]})
    assert created.status_code == 201, created.text
    match_id = created.json()["id"]
    seat = client.post(f"/v1/matches/{match_id}/seats", json={"name": "Anonymous"})
    assert seat.status_code == 201
    auth = {"Authorization": f"Bearer {seat.json()['token']}"}
    version = client.get(f"/v1/matches/{match_id}").json()["version"]
    brought = client.post(f"/v1/matches/{match_id}/actions", json={"action": VOLDEMORT},
                          headers={**auth, "If-Match": f'"{version}"'})
    assert brought.status_code == 200, brought.text
    refused = client.post("/v1/matches", json={"game": "casting-stones", "variant": "advanced",
                                               "bots": [{"seat": 1, "level": "random"}]})
    assert refused.status_code == 409 and refused.json()["code"] == "collection_required"


@pytest.mark.anyio
async def test_a_rated_match_is_never_an_open_collection_one(stores):
    from service.engine import InvalidOptions

    store, _collections, _trades = stores
    with pytest.raises(InvalidOptions) as refused:
        await store.create("casting-stones", variant="advanced", options={"open_collection": True}, rated=True)
    assert refused.value.message == ("A rated match is played with owned collections: open_collection is for "
                                     "unrated matches (bots and tests).")
    assert (await store.create("casting-stones", variant="advanced", rated=True)).rated


def test_saved_hands_are_checked_listed_and_brought_by_name(client, new_player, grant):
    """/v1/players/me/hands: a hand of 10 stones, 5 of them cast, 3 or more cards, all owned; the first saved is
    the default; brought by name (REST, with If-Match) or as the default (GraphQL), it is the bring action the
    game makes of it."""
    (ann, ann_auth), (bob, bob_auth) = new_player("Ann"), new_player("Bob")
    owns(grant, ann, HARRY)
    owns(grant, bob, VOLDEMORT)
    harry = {"name": "Gryffindor", "stones": HARRY["stones"], "cards": ["draco-malfoy", "charms", "double-potion"],
             "hand": HARRY["hand"]}
    invalid = client.post("/v1/players/me/hands", json={**harry, "hand": HARRY["hand"][:4]}, headers=ann_auth)
    assert invalid.status_code == 422 and invalid.json()["code"] == "invalid_hand"
    assert "5 different stones" in invalid.json()["detail"]
    unowned = client.post("/v1/players/me/hands", json={**harry, "name": "Dark", **{k: VOLDEMORT[k] for k in
                                                                                   ("stones", "hand")}},
                          headers=ann_auth)
    assert unowned.status_code == 409 and unowned.json()["code"] == "not_in_collection"
    saved = client.post("/v1/players/me/hands", json=harry, headers=ann_auth)
    assert saved.status_code == 201, saved.text
    assert saved.json()["default"] is True and saved.json()["cards"] == harry["cards"]
    assert client.get("/v1/players/me/hands", headers=ann_auth).json()["hands"] == [saved.json()]
    assert client.get("/v1/players/me/collection", headers=ann_auth).json()["default_hand"] == "Gryffindor"
    bob_saved = client.post("/v1/players/me/hands", json={"name": "Dark", **{k: VOLDEMORT[k] for k in
                                                                             ("stones", "cards", "hand")}},
                            headers=bob_auth)
    assert bob_saved.status_code == 201, bob_saved.text

    match_id = client.post("/v1/matches", json={"game": "casting-stones", "variant": "advanced"}).json()["id"]
    for auth in (ann_auth, bob_auth):
        client.post(f"/v1/matches/{match_id}/seats", json={"name": "x"}, headers=auth)
    version = client.get(f"/v1/matches/{match_id}").json()["version"]
    missing = client.post(f"/v1/matches/{match_id}/saved-hand", json={"name": "Nope"},
                          headers={**ann_auth, "If-Match": f'"{version}"'})
    assert missing.status_code == 404 and missing.json()["code"] == "hand_not_found"
    no_version = client.post(f"/v1/matches/{match_id}/saved-hand", json={"name": "Gryffindor"}, headers=ann_auth)
    assert no_version.status_code == 428
    brought = client.post(f"/v1/matches/{match_id}/saved-hand", json={"name": "Gryffindor"},
                          headers={**ann_auth, "If-Match": f'"{version}"'})
    assert brought.status_code == 200, brought.text
    history = client.get(f"/v1/matches/{match_id}/history", headers=ann_auth).json()["entries"]
    assert history[-1]["action"] == HARRY
    gql = client.post("/graphql", headers=bob_auth, json={"query": """
        mutation Bring($input: BringSavedHandInput!) { bringSavedHand(input: $input) { __typename
          ... on SavedHandBrought { version seat } ... on Problem { code message } } }""",
        "variables": {"input": {"matchId": match_id, "expectedVersion": brought.json()["version"]}}})
    assert gql.json()["data"]["bringSavedHand"] == {"__typename": "SavedHandBrought",
                                                    "version": brought.json()["version"] + 1, "seat": 1}
    assert client.get(f"/v1/matches/{match_id}").json()["view"]["phase"] != "bring"
    deleted = client.delete("/v1/players/me/hands/Gryffindor", headers=ann_auth)
    assert deleted.json() == {"name": "Gryffindor", "deleted": True}
    assert client.get("/v1/players/me/hands", headers=ann_auth).json()["hands"] == []
    assert client.get("/v1/players/me/collection", headers=ann_auth).json()["default_hand"] is None


def test_a_rated_advanced_quick_match_brings_each_players_saved_hand(client, new_player, grant):
    """A quick match of the Advanced Game (rated) brings each player's default saved hand as soon as it is made;
    asking for one without a saved hand is hand_not_found, with bots collection_required."""
    (ann, ann_auth), (bob, bob_auth), (cat, cat_auth) = new_player("Ann"), new_player("Bob"), new_player("Cat")
    ask = {"game": "casting-stones", "variant": "advanced", "rated": True}
    no_hand = client.post("/v1/quick-match", json=ask, headers=cat_auth)
    assert no_hand.status_code == 404 and no_hand.json()["code"] == "hand_not_found"
    for player, auth, action in ((ann, ann_auth, HARRY), (bob, bob_auth, VOLDEMORT)):
        owns(grant, player, action)
        saved = client.post("/v1/players/me/hands", json={"name": unique_name("H"), "stones": action["stones"],
                                                          "cards": action["cards"], "hand": action["hand"]},
                            headers=auth)
        assert saved.status_code == 201, saved.text
    with_bots = client.post("/v1/quick-match", json={**ask, "bots_after": 5}, headers=ann_auth)
    assert with_bots.status_code == 409 and with_bots.json()["code"] == "collection_required"
    assert client.post("/v1/quick-match", json=ask, headers=ann_auth).status_code == 202
    paired = client.post("/v1/quick-match", json=ask, headers=bob_auth)
    assert paired.status_code == 201, paired.text
    match_id = paired.json()["last"]["match_id"]
    match = client.get(f"/v1/matches/{match_id}", headers=ann_auth).json()
    assert match["status"] == "active" and match["version"] == 2 and match["view"]["phase"] != "bring"
    brought = {}
    for auth in (ann_auth, bob_auth):
        seat = client.get(f"/v1/matches/{match_id}", headers=auth).json()["my_seat"]
        entries = client.get(f"/v1/matches/{match_id}/history", headers=auth).json()["entries"]
        brought[seat] = next(e["action"] for e in entries if e["seat"] == seat)
    seats = {client.get(f"/v1/matches/{match_id}", headers=a).json()["my_seat"]: act
             for a, act in ((ann_auth, HARRY), (bob_auth, VOLDEMORT))}
    for seat, action in seats.items():
        assert brought[seat] == action
    listed = client.get("/v1/me/matches", headers=ann_auth).json()["matches"]
    assert listed[0]["match_id"] == match_id and listed[0]["rated"]


def test_a_saved_hand_brings_the_first_cards_of_its_list():
    """A match of N cards each takes the first N of a saved hand's cards (the player's order of preference)."""
    from service.games.casting_stones.collecting import saved_hand_action, saved_hand_problem

    cards = ["draco-malfoy", "charms", "double-potion"]
    assert saved_hand_problem(HARRY["stones"], cards, HARRY["hand"]) is None
    assert saved_hand_action(HARRY["stones"], cards, HARRY["hand"], 2)["cards"] == ["charms", "draco-malfoy"]
    assert saved_hand_action(HARRY["stones"], cards, HARRY["hand"], 4) is None
    assert "3 to 3" in saved_hand_problem(HARRY["stones"], cards[:2], HARRY["hand"])
