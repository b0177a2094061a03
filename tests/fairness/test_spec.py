"""docs/fairness.md is enough to re-derive a match's randomness: the code in this module was written from
that document alone -- it imports nothing of the service's, only its data files, and talks to it over
REST like any third party. A match is played, its record fetched after the end, and the commitment,
the RNG seed, the shuffles of the deal and the casts are recomputed and compared with what the seats
saw while the match ran.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest

GAMES = Path(__file__).resolve().parents[2] / "service" / "games"
MASK = 2**64 - 1


# -- "The random number generator", as the document specifies it ---------------------------------

class SplitMix64:
    def __init__(self, seed: int):
        self.state = seed & MASK

    def next64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        limit = MASK - (2**64 % n)
        while True:
            x = self.next64()
            if x <= limit:
                return x % n

    def choice(self, items: list):
        return items[self.below(len(items))]

    def shuffle(self, items: list) -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


# -- "Seeds: commitment, entropy, derivation" --------------------------------------------------------

def commitment(seed_text: str) -> str:
    return hashlib.sha256(seed_text.encode("utf-8")).hexdigest()


def rng_seed(server_seed: str, entropies: list[str]) -> int:
    message = b"".join(len(e.encode()).to_bytes(4, "big") + e.encode() for e in entropies)
    digest = hmac.new(server_seed.encode("utf-8"), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


# -- talking to the service as a client would ------------------------------------------------------

def _auth(token):
    return {"Authorization": f"Bearer {token}"}


def _start(client, game: str, entropies: list[str], **body) -> tuple[str, list[str]]:
    match_id = client.post("/v1/matches", json={"game": game, **body}).json()["id"]
    tokens = [client.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}", "entropy": e}).json()["token"]
              for i, e in enumerate(entropies)]
    return match_id, tokens


def _play_to_the_end(client, match_id: str, tokens: list[str]) -> dict:
    """Any legal action for whoever is to act, until the end; the record after it."""
    for step in range(5000):
        match = client.get(f"/v1/matches/{match_id}").json()
        if match["status"] == "finished":
            return client.get(f"/v1/matches/{match_id}/record").json()
        seat = match["to_act"][step % len(match["to_act"])]
        legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=_auth(tokens[seat])).json()["actions"]
        client.post(f"/v1/matches/{match_id}/actions", json={"action": legal[step % len(legal)]},
                    headers={**_auth(tokens[seat]), "If-Match": f'"{match["version"]}"'})
    raise AssertionError("the match did not end")


def _checked_seed(record: dict, entropies: list[str]) -> int:
    """Steps 1 and 2 of "Verifying a record", from the document."""
    assert commitment(record["revealed_seed"]) == record["seed_commitment"]
    assert [e["entropy"] for e in record["entropies"]] == entropies
    seed = rng_seed(record["revealed_seed"], entropies)
    assert str(seed) == record["rng_seed"]
    return seed


def test_quidditch_deal_and_first_pitch_follow_from_the_document(client):
    """"How each game draws", Quidditch: both team decks and the pitch deck shuffled in file order, seven
    cards popped into each hand, the first pitch popped until a ball comes into play."""
    entropies = ["Oliver Wood's lucky sock", "Marcus Flint"]
    match_id, tokens = _start(client, "quidditch", entropies, options={"max_rounds": 1})
    seen = [client.get(f"/v1/matches/{match_id}", headers=_auth(t)).json() for t in tokens]
    assert all(m["version"] == 0 and m["status"] == "active" for m in seen)
    record = _play_to_the_end(client, match_id, tokens)
    rng = SplitMix64(_checked_seed(record, entropies))

    decks = [[c["id"] for c in json.loads((GAMES / "quidditch" / name).read_text())["cards"]]
             for name in ("gryffindor.json", "slytherin.json")]
    pitch = json.loads((GAMES / "quidditch" / "pitch.json").read_text())["cards"]
    for deck in decks:
        rng.shuffle(deck)
    rng.shuffle(pitch)
    hands = [[deck.pop() for _ in range(7)] for deck in decks]
    for seat in (0, 1):
        assert sorted(hands[seat]) == sorted(card["id"] for card in seen[seat]["view"]["hand"])
    while pitch[-1]["kind"] == "goal":  # a Goal scores at once and the next card is pitched
        pitch.pop()
    first_ball = pitch.pop()
    assert [ball["id"] for ball in seen[0]["view"]["balls"]] == [first_ball["id"]]
    assert seen[0]["view"]["pitch_deck_count"] == len(pitch)


def test_every_cast_of_a_casting_stones_match_follows_from_the_document(client):
    """"How each game draws", Casting Stones: nothing drawn at the set-up, then for each stone cast, in
    order, below(leaner_one_in) (a Leaner on 0) and, if not a Leaner, below(2) (0: the symbol)."""
    entropies = ["Harry", "Draco"]
    match_id, tokens = _start(client, "casting-stones", entropies, variant="basic")
    record = _play_to_the_end(client, match_id, tokens)
    rng = SplitMix64(_checked_seed(record, entropies))
    leaner_one_in = record["options"]["leaner_one_in"]
    events = []
    for token in tokens:  # each seat's history shows every cast event (casts are public)
        events = client.get(f"/v1/matches/{match_id}/history", params={"limit": 1000},
                            headers=_auth(token)).json()["entries"]
    casts = [event for entry in events for event in entry["events"] if event["type"] == "cast"]
    assert len(casts) >= 4
    for cast in casts:
        faces = []
        for _stone in cast["stones"]:
            if leaner_one_in and rng.below(leaner_one_in) == 0:
                faces.append("leaner")
            else:
                faces.append("symbol" if rng.below(2) == 0 else "number")
        assert faces == cast["faces"]


@pytest.mark.parametrize("variant", ["practice-1", "practice-3"])
def test_spells_and_potions_leader_and_deal_follow_from_the_document(client, variant):
    """"How each game draws", Spells and Potions practice: the lot names the leader among the wizards'
    posts, then the Element Cards and the Spells and Potions Cards are shuffled in the catalogue's order
    and dealt ten and three to each post."""
    entropies = ["Ron", "Hermione"]
    match_id, tokens = _start(client, "spells-and-potions", entropies, variant=variant)
    table = client.get(f"/v1/matches/{match_id}", headers=_auth(tokens[0])).json()["view"]
    record = _play_to_the_end(client, match_id, tokens)
    rng = SplitMix64(_checked_seed(record, entropies))

    cards = json.loads((GAMES / "spells_and_potions" / "cards.json").read_text())
    posts = ["north", "east", "south", "west"]
    wizards = [p for p, place in enumerate(table["table"]) if not place["companion"]]
    leader = rng.choice(wizards)
    assert table["leader"] == posts[leader]
    elements = [f"{e['id']}-{rank}" for e in cards["elements"] for rank in cards["ranks"]]
    spells = [f"{s['id']}-{copy}" for s in cards["spells"] for copy in range(1, s["copies"] + 1)]
    rng.shuffle(elements)
    with_spells = any(place["hand_size"] == 13 for place in table["table"])
    spells = spells if with_spells else []
    rng.shuffle(spells)
    for p, place in enumerate(table["table"]):
        dealt = elements[10 * p:10 * p + 10] + spells[3 * p:3 * p + 3]
        if place["hand_visible"]:
            assert sorted(place["hand"]) == sorted(dealt)
        assert place["hand_size"] == len(dealt)
