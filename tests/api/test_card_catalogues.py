"""Card catalogues (issue 19, item 4): ``GET /v1/games/{game}/cards`` and the GraphQL ``<game>Cards`` queries
list every card a client may meet, with the rule book's text and the numbers it needs to draw and explain
it; and the views carry what a table shows (Spells and Potions' last trick and owed choices, Quidditch's
settled balls with the values that decided them).

Every card id a played match shows (views of every seat and of a spectator, legal actions, events) must be
in the catalogue: seeded matches are played through the engine and their ids collected where each game
puts them. The texts are checked word for word against the rule books where the scans are present.
"""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest

from service.engine import Rng
from service.games import all_games
from tests.api.test_play_through import as_graphql, selection
from tests.games.contract import random_playout

GAMES = all_games()
CARD_GAMES = ["casting-stones", "quidditch", "spells-and-potions", "sorcerers-stone"]
SEEDS = Path(__file__).resolve().parents[2].parent / "shared" / "seeds"  # CI clones the repo beside shared/
BOOKS = {"quidditch": "001_7860e6019ee0192e.txt", "spells-and-potions": "004_3d98a563beabace2.txt",
         "sorcerers-stone": "002_5ac5154540885c00.txt"}


def cards_catalogue(game_id: str):
    return next(c for c in GAMES[game_id].catalogues if c.name == "cards")


def rest_cards(client, game_id: str, **params) -> list[dict]:
    response = client.get(f"/v1/games/{game_id}/cards", params=params)
    assert response.status_code == 200, response.text
    return response.json()["items"]


def graphql_field(game_id: str) -> str:
    camel = "".join(part.capitalize() for part in game_id.split("-"))
    return camel[0].lower() + camel[1:] + "Cards"


# -- the catalogues themselves ------------------------------------------------------------------------------

@pytest.mark.parametrize("game_id", CARD_GAMES)
def test_rest_lists_every_card_typed_by_the_games_schema(client, game_id):
    items = rest_cards(client, game_id)
    schema = cards_catalogue(game_id).item_schema
    validator = jsonschema.Draft202012Validator(schema)
    for item in items:
        validator.validate(item)
    ids = [item["id"] for item in items]
    assert len(ids) == len(set(ids)), "card ids are unique"
    assert items == cards_catalogue(game_id).items()


def test_the_decks_are_complete():
    """The books' component lists. Spells and Potions: "Element Cards - Number cards (1 to 10 per element/40
    cards per deck)", "Spells and Potions Cards ... (12 in a basic deck)". Quidditch: "40 Red Gryffindor Team
    Cards, 40 Green Slytherin Team Cards, 28 Blue Pitch Cards". The Sorcerer's Stone: "90 Cards": "40 Musical
    Note Cards", "26 Potions Cards", "14 Incantations Cards", "10 Mirror of Erised Cards"."""
    sp = cards_catalogue("spells-and-potions").items()
    assert [sum(c["kind"] == "element" for c in sp), sum(c["kind"] != "element" for c in sp)] == [40, 12]
    assert {(c["element"], c["rank"]) for c in sp if c["kind"] == "element"} == \
        {(e, r) for e in ("fire", "earth", "air", "water") for r in range(1, 11)}
    quidditch = cards_catalogue("quidditch").items()
    assert [sum(c["deck"] == d for c in quidditch) for d in ("gryffindor", "slytherin", "pitch")] == [40, 40, 28]
    stone = cards_catalogue("sorcerers-stone").items()
    counts = {kind: sum(c["count"] for c in stone if c["kind"] == kind)
              for kind in ("musical_note", "potion", "incantation", "mirror")}
    assert counts == {"musical_note": 40, "potion": 26, "incantation": 14, "mirror": 10}
    assert sum(counts.values()) == 90


def test_cards_carry_what_a_client_draws_and_explains():
    by_id = {c["id"]: c for game in CARD_GAMES for c in cards_catalogue(game).items()}
    assert by_id["fire-7"] == {"id": "fire-7", "name": "7 of Fire", "kind": "element", "element": "fire",
                                    "rank": 7, "text": None, "effect": None, "potion_points": None,
                                    "rank_bonus": None}
    assert by_id["power-blast-2"]["name"] == "Merlin's Power Blast" and by_id["power-blast-2"]["rank_bonus"] == 2.5
    assert by_id["penalty-1"]["potion_points"] == -10 and by_id["penalty-1"]["kind"] == "potion"
    leviosa = by_id["s-wingardium-leviosa"]
    assert (leviosa["deck"], leviosa["seat"], leviosa["name"], leviosa["family"], leviosa["value"]) == \
        ("slytherin", 1, "Wingardium Leviosa", "spell", None)
    assert leviosa["text"].startswith("This spell card prevents your opponent from playing on a ball.")
    assert (by_id["g-chaser-7a"]["kind"], by_id["g-chaser-7a"]["value"]) == ("chaser", 7)
    assert (by_id["p-snitch"]["pitch_kind"], by_id["p-snitch"]["points"], by_id["p-snitch"]["kind"]) == \
        ("snitch", 150, None)
    assert (by_id["6R"]["scale"], by_id["6R"]["number"], by_id["6R"]["count"]) == ("roundest", 6, 1)
    assert (by_id["3"]["deck"], by_id["3"]["notes"], by_id["3"]["text"]) == ("hagrid", 3, "Move 3 spaces")
    assert (by_id["you_know_who"]["count"], by_id["stone"]["name"]) == (9, "The Sorcerer's Stone")
    assert by_id["draco-malfoy"]["counter_spell"] and by_id["double-potion"]["streak"] == {"cast": "potion",
                                                                                            "turns": 2}


def _book(game_id: str) -> str:
    """The rule book's text with the scan's markup and line breaks evened out."""
    text = (SEEDS / BOOKS[game_id]).read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", text.replace("**", "").replace("™", ""))


@pytest.mark.skipif(not all((SEEDS / book).exists() for book in BOOKS.values()), reason="rule-book scans not present")
@pytest.mark.parametrize("game_id", sorted(BOOKS))
def test_card_texts_are_the_books_words(game_id):
    """Every text is quoted from the rule book word for word (the scans' own spelling, e.g. "Adds 2 ½
    points"); the names of Spells and Potions Cards come with their number of copies as the book lists
    them: "Gladder's Reward (1)"."""
    book = _book(game_id)
    items = cards_catalogue(game_id).items()
    texts = {c["text"] for c in items if c["text"] is not None}
    assert texts
    for text in texts:
        assert text in book, text
    if game_id == "spells-and-potions":
        spells = [c["name"] for c in items if c["kind"] != "element"]
        for name in set(spells):
            assert f"{name} ({spells.count(name)})" in book, name


@pytest.mark.parametrize("game_id", CARD_GAMES)
def test_graphql_lists_the_same_cards(client, game_id):
    schema = cards_catalogue(game_id).item_schema
    field = graphql_field(game_id)
    body = client.post("/graphql", json={"query": f"{{ {field} {selection(schema)} }}"}).json()
    assert "errors" not in body, body
    assert body["data"][field] == [as_graphql(item, schema) for item in rest_cards(client, game_id)]


def test_cards_filter_by_exact_match_on_both_apis(client):
    assert len(rest_cards(client, "quidditch", deck="pitch")) == 28
    assert [c["name"] for c in rest_cards(client, "quidditch", id="g-chaser-7a")] == ["Chaser"]
    assert {c["name"] for c in rest_cards(client, "spells-and-potions", kind="potion")} == \
        {"Gladder's Reward", "Harpier's Penalty"}
    assert [c["id"] for c in rest_cards(client, "sorcerers-stone", deck="mirror")] == ["stone", "you_know_who"]
    body = client.post("/graphql", json={"query": '{ quidditchCards(deck: "PITCH") { id deck } '
                                                  'sorcerersStoneCards(id: "6R") { name scale } }'}).json()
    assert "errors" not in body, body
    assert len(body["data"]["quidditchCards"]) == 28
    assert {c["deck"] for c in body["data"]["quidditchCards"]} == {"PITCH"}
    assert body["data"]["sorcerersStoneCards"] == [{"name": "Potions Card 6R", "scale": "ROUNDEST"}]


@pytest.mark.parametrize("path, params, status, code", [
    ("/v1/games/snap/cards", {}, 404, "unknown_game"),
    ("/v1/games/high-card/cards", {}, 404, "not_found"),  # a game without cards (the tests' tiny game)
    ("/v1/games/quidditch/cards", {"deck": "hufflepuff"}, 400, "malformed_request"),
    ("/v1/games/quidditch/cards", {"colour": "red"}, 400, "malformed_request"),
])
def test_refusals_are_problems(client, path, params, status, code):
    response = client.get(path, params=params)
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == code


def test_a_catalogue_says_nothing_of_a_match(client):
    """The catalogue is the printed deck list: the same for everyone, before and during a match, whoever asks
    (a seat's token changes nothing), and no entry has a place for where a card lies."""
    before = client.get("/v1/games/quidditch/cards").json()
    match = client.post("/v1/matches", json={"game": "quidditch", "seed": "5"}).json()["id"]
    token = client.post(f"/v1/matches/{match}/seats", json={"name": "Ann"}).json()["token"]
    client.post(f"/v1/matches/{match}/seats", json={"name": "Bob"})
    during = client.get("/v1/games/quidditch/cards", headers={"Authorization": f"Bearer {token}"}).json()
    assert during == before
    for game_id in CARD_GAMES:
        assert not {"seat_holding", "location", "owner_hand", "match"} & set(cards_catalogue(game_id).item_schema[
            "properties"])


# -- every id a match shows is in its catalogue -------------------------------------------------------------

def _under(node, keys: set[str], found: set[str], inside: bool = False) -> set[str]:
    """The strings and integers (as strings) a JSON value holds under ``keys``: a value there, the items of a
    list there, and the ``id`` of an object there; deeper objects only through keys of their own."""
    if isinstance(node, dict):
        for key, value in node.items():
            _under(value, keys, found, key in keys or (inside and key == "id"))
    elif isinstance(node, list):
        for value in node:
            _under(value, keys, found, inside)
    elif inside and isinstance(node, (str, int)) and not isinstance(node, bool):
        found.add(str(node))
    return found


def _strings(node):
    if isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)
    elif isinstance(node, str):
        yield node


def _stone_refs(kind: str, node: dict) -> set[str]:
    """Where the Sorcerer's Stone shows a card: per board, since ``card`` is a card on Hagrid's board (by its
    notes), a card name on Snape's and a place on the Mirror's."""
    if kind == "view":
        boards = node["boards"]
        return (_under(boards.get("hagrid", {}), {"hand", "discard"}, set())
                | _under(boards.get("snape", {}), {"card", "cards", "discard", "out_of_play", "mixed_cards"}, set())
                | (_under(boards.get("mirror", {}), {"cards"}, set()) - {"face_down"}))
    board = node["type"].split("_")[0]
    keys = {("action", "hagrid"): {"card"}, ("action", "snape"): {"name"},
            ("event", "hagrid"): {"card"}, ("event", "snape"): {"card", "cards"},
            ("event", "mirror"): {"face"}}.get((kind, board), set())
    # snape_reshuffled's "cards" is a count, not a card
    return {ref for ref in _under(node, keys, set()) if board != "snape" or not ref.isdigit()}


#: game -> (kind, JSON) -> the card ids it holds; kind is "view", "action" or "event".
CARD_REFS = {
    "spells-and-potions": lambda kind, node: _under(node, {"card", "hand", "cards"}, set()),
    # team cards are g-... and s-..., pitch cards p-...; they appear as ids and inside card objects
    "quidditch": lambda kind, node: {s for s in _strings(node) if re.fullmatch(r"[gsp]-[a-z0-9-]+", s)},
    "sorcerers-stone": _stone_refs,
    "casting-stones": lambda kind, node: _under(
        node, {"card", "cards", "library", "libraries", "used_cards", "vault_cards"}, set()),
}

#: (variant, seats, seeds) played per game: enough for every deck's cards to show.
PLAYED = {
    "spells-and-potions": [("ritual", 4, [1]), ("practice-rounds", 3, [2]), ("ritual", 2, [3])],
    "quidditch": [(None, 2, [1, 2, 3])],
    "sorcerers-stone": [("chain", 3, [4]), ("chain", 2, [8]), ("snape", 4, [5, 6]), ("hagrid", 2, [7])],
    "casting-stones": [("intermediate", 2, [18]), ("advanced", 2, [11, 12])],
}


def _seen_ids(game_id: str) -> set[str]:
    game, refs, seen = GAMES[game_id], CARD_REFS[game_id], set()
    for variant, seats, seeds in PLAYED[game_id]:
        for seed in seeds:
            playout = random_playout(game, variant, seats, seed, max_actions=3000)
            states = [playout.initial] + [step.state_after for step in playout.steps]
            for state in states:
                for seat in game.to_act(state):
                    for action in game.legal_actions(state, seat):
                        seen |= refs("action", action)
                for viewer in [*range(seats), None]:
                    seen |= refs("view", game.view(state, viewer))
            for step in playout.steps:
                for event in step.events:
                    seen |= refs("event", event)
    return seen


@pytest.mark.parametrize("game_id", CARD_GAMES)
def test_every_card_a_match_shows_is_in_the_catalogue(game_id):
    ids = {c["id"] for c in cards_catalogue(game_id).items()}
    seen = _seen_ids(game_id)
    assert seen, "the matches showed cards"
    assert seen <= ids, f"not in the catalogue: {sorted(seen - ids)[:10]}"
    if game_id in ("spells-and-potions", "sorcerers-stone"):
        assert seen == ids  # every card of these decks shows in a few matches
    if game_id == "quidditch":
        assert {c for c in ids if not c.startswith("p-")} <= seen  # every team card was held


# -- what the views carry ------------------------------------------------------------------------------------

def _join(client, game: str, variant: str | None, seats: int, seed: str) -> tuple[str, list[str]]:
    body = {"game": game, "seats": seats, "seed": seed} | ({"variant": variant} if variant else {})
    match = client.post("/v1/matches", json=body)
    assert match.status_code == 201, match.text
    match_id = match.json()["id"]
    return match_id, [client.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"}).json()["token"]
                      for i in range(seats)]


def _act(client, match_id: str, token: str, chooser: Rng) -> dict:
    headers = {"Authorization": f"Bearer {token}"}
    legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=headers).json()
    response = client.post(f"/v1/matches/{match_id}/actions", json={"action": chooser.choice(legal["actions"])},
                           headers={**headers, "If-Match": f'"{legal["version"]}"'})
    assert response.status_code == 200, response.text
    return response.json()


def test_spells_and_potions_views_keep_the_last_trick_and_list_owed_choices(client):
    """Issue 19: "the last trick of a Spells and Potions duel vanishes from the view when it is taken; choices
    a seat still owes are not listed". Played over REST: after every trick the spectator's view still shows
    it, card for card; a choice owed is listed with the seat that owes it, which is the seat to act and
    whose legal actions are that choice."""
    match_id, tokens = _join(client, "spells-and-potions", "practice-3", 4, "19")
    chooser, tricks, owed_seen, laid = Rng(19), 0, set(), []
    for _ in range(200):
        match = client.get(f"/v1/matches/{match_id}").json()
        if match["status"] == "finished":
            break
        view = match["view"]
        for owed in view["choices_owed"][:1]:
            owed_seen.add(owed["choice"])
            assert match["to_act"] == [owed["seat"]]
            legal = client.get(f"/v1/matches/{match_id}/legal-actions",
                               headers={"Authorization": f"Bearer {tokens[owed['seat']]}"}).json()["actions"]
            assert legal and {a["type"] for a in legal} == {owed["choice"]}
        seat = match["to_act"][0]
        played = _act(client, match_id, tokens[seat], chooser)
        laid += [{"post": e["post"], "card": e["card"]} for e in played["events"] if e["type"] == "played"]
        won = [e for e in played["events"] if e["type"] == "trick_won"]
        if won:
            tricks += 1
            last = client.get(f"/v1/matches/{match_id}").json()["view"]["last_trick"]
            assert (last["number"], last["winner"], last["cards"]) == (tricks, won[0]["post"], laid[-4:])
    assert tricks == 13
    assert owed_seen, "some trick owed a choice (a different seed is needed if not)"
    assert client.get(f"/v1/matches/{match_id}").json()["view"]["last_trick"]["number"] == 13


def test_quidditch_views_show_the_values_that_settled_each_ball(client):
    """Issue 19: "a resolved Quidditch ball does not show the card values that decided it". A won ball leaves
    the pitch and a ball left in play is reset when the round ends, so the view keeps ``last_settled``: every
    ball settled in the latest round that settled one, with each side's kind and value as compared, the same
    as the ball_won and ball_stays events said, for seats and spectators alike, after the round has ended."""
    match_id, tokens = _join(client, "quidditch", None, 2, "22")
    chooser, checked = Rng(22), 0
    for _ in range(400):
        match = client.get(f"/v1/matches/{match_id}").json()
        if match["status"] == "finished" or checked >= 3:
            break
        played = _act(client, match_id, tokens[chooser.choice(match["to_act"])], chooser)
        settled = [e for e in played["events"] if e["type"] in ("ball_won", "ball_stays")]
        if not settled:
            continue
        ended = any(e["type"] == "round_ended" for e in played["events"])
        for viewer in (None, *tokens):
            headers = {"Authorization": f"Bearer {viewer}"} if viewer else {}
            view = client.get(f"/v1/matches/{match_id}", headers=headers).json()["view"]
            last = view["last_settled"]
            shown = {b["ball"]: b for b in last["balls"]}
            for event in settled:
                ball = shown[event["ball"]]
                assert ball["compared"] == event.get("compared")
                assert ball["winner"] == event.get("seat")
                assert ball["by"] == event.get("by")
                if event["type"] == "ball_won":
                    assert event["ball"] not in {b["id"] for b in view["balls"]}  # gone from the pitch
        checked += ended
    assert checked >= 3, "three rounds ended with a ball settled"
