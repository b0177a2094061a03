"""Game reference data over both APIs: Casting Stones' stone chart, filterable by type and rarity."""

import pytest


def test_rest_lists_the_stones_filtered_by_type_and_rarity(client):
    everything = client.get("/v1/games/casting-stones/stones")
    assert everything.status_code == 200
    stones = everything.json()["items"]
    assert len(stones) == 125
    chasers = client.get("/v1/games/casting-stones/stones", params={"type": "chaser"}).json()["items"]
    assert len(chasers) == 5 and {s["number"] for s in chasers} == {50}
    rare_characters = client.get("/v1/games/casting-stones/stones",
                                 params={"type": "character", "rarity": "rare"}).json()["items"]
    assert rare_characters and all(s["type"] == "character" and s["rarity"] == "rare" for s in rare_characters)


def test_rest_refuses_unknown_catalogues_and_filters(client):
    assert client.get("/v1/games/casting-stones/wands").json()["code"] == "not_found"
    assert client.get("/v1/games/casting-stones/stones", params={"colour": "red"}).json()["code"] == \
        "malformed_request"
    assert client.get("/v1/games/snap/stones").json()["code"] == "unknown_game"


@pytest.mark.parametrize("type_, count", [("chaser", 5), ("CHASER", 5)])
def test_graphql_lists_the_stones(client, type_, count):
    """A filter takes the enum value as GraphQL outputs it (CHASER) or as the JSON has it (chaser)."""
    query = "query($t: String) { castingStonesStones(type: $t) { id name type number rarity } }"
    body = client.post("/graphql", json={"query": query, "variables": {"t": type_}}).json()
    assert "errors" not in body
    stones = body["data"]["castingStonesStones"]
    assert len(stones) == count and all(s["type"] == "CHASER" for s in stones)


def test_seeded_packs_are_reproducible_and_weighted_by_the_chart(client):
    first = client.get("/v1/games/casting-stones/packs", params={"seed": 7, "refills": 3}).json()["items"]
    again = client.get("/v1/games/casting-stones/packs", params={"seed": 7, "refills": 3}).json()["items"]
    other = client.get("/v1/games/casting-stones/packs", params={"seed": 8, "refills": 3}).json()["items"]
    assert first == again != other
    assert [p["kind"] for p in first] == ["starter", "refill", "refill", "refill"]
    assert len(first[0]["stones"]) == 12 and all(len(p["stones"]) == 4 for p in first[1:])
    assert client.get("/v1/games/casting-stones/packs", params={"seed": -1}).json()["code"] == "malformed_request"
    body = client.post("/graphql", json={"query": "{ castingStonesPacks(seed: 7, refills: 3) { kind stones cards } }"})
    assert body.json()["data"]["castingStonesPacks"] == [{**p, "kind": p["kind"].upper()} for p in first]
