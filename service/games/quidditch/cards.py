"""The Quidditch card catalogue, read from the package's JSON data files.

Rule book (seeds/001_7860e6019ee0192e.txt), EQUIPMENT: "40 Red Gryffindor Team
Cards, 40 Green Slytherin Team Cards, 28 Blue Pitch Cards". The scan never
lists the decks, so their make-up is the house rule in DESIGN.md, kept as data:

* ``kinds.json``: every kind of team card (four player cards, four spells,
  four jinxes, two fouls, the Referee) with its family, name, text (how the
  service plays it) and book_text (the rule book's words);
* ``gryffindor.json`` and ``slytherin.json``: one team deck each, every
  physical card with a unique id (``g-chaser-7a``), its kind and its value;
* ``pitch.json``: the pitch card kinds with their points and texts, and the 28 cards.

:func:`catalogue` lists all 108 cards for clients (the ``cards`` catalogue).

Inside a match a card is an integer: a team card is its index in
:data:`TEAM_CARDS` (Gryffindor's cards first, then Slytherin's), a pitch card
its index in :data:`PITCH_CARDS`. Ids only appear at the edges (views, events,
actions), which keeps the stored State small.
"""

from __future__ import annotations

from service.engine import load_data

#: Seat 0 plays Gryffindor (red), seat 1 Slytherin (green).
TEAM_FILES = ("gryffindor.json", "slytherin.json")

PLAYER, SPELL, JINX, FOUL, REFEREE = "player", "spell", "jinx", "foul", "referee"
FAMILIES = (PLAYER, SPELL, JINX, FOUL, REFEREE)

# Kinds the rules act on. The data may rename or reword them, not add new effects.
SEEKER, CHASER, KEEPER, BEATER = "seeker", "chaser", "keeper", "beater"
LEG_LOCKER, FULL_BODY_BIND, ALOHOMORA, WINGARDIUM = "leg_locker", "full_body_bind", "alohomora", "wingardium_leviosa"
JINX_REDUCE, JINX_DISCARD, JINX_BLOCK, JINX_RETRIEVE = "jinx_reduce", "jinx_discard", "jinx_block", "jinx_retrieve"
FOUL_REMOVE_KEEPER, FOUL_FREE_GOAL = "foul_remove_keeper", "foul_free_goal"
RULE_KINDS = (SEEKER, CHASER, KEEPER, BEATER, LEG_LOCKER, FULL_BODY_BIND, ALOHOMORA, WINGARDIUM, JINX_REDUCE,
              JINX_DISCARD, JINX_BLOCK, JINX_RETRIEVE, FOUL_REMOVE_KEEPER, FOUL_FREE_GOAL, REFEREE)

QUAFFLE, BLUDGER, SNITCH, GOAL = "quaffle", "bludger", "snitch", "goal"
PITCH_KINDS = (QUAFFLE, BLUDGER, SNITCH, GOAL)


def _load() -> tuple[dict, list[dict], list[dict], list[dict]]:
    kinds = {k["kind"]: k for k in load_data(__package__, "kinds.json")["kinds"]}
    if set(kinds) != set(RULE_KINDS):
        raise ValueError(f"kinds.json must describe exactly {', '.join(RULE_KINDS)}")
    for k in kinds.values():
        if k["family"] not in FAMILIES:
            raise ValueError(f"kinds.json: {k['kind']} has unknown family {k['family']!r}")

    teams, team_cards = [], []
    for seat, name in enumerate(TEAM_FILES):
        team = load_data(__package__, name)
        teams.append({"seat": seat, "team": team["team"], "name": team["name"], "colour": team["colour"],
                      "first": len(team_cards), "size": len(team["cards"])})
        for card in team["cards"]:
            kind = kinds.get(card["kind"])
            if kind is None:
                raise ValueError(f"{name}: card {card['id']} has unknown kind {card['kind']!r}")
            value = card.get("value")
            if (kind["family"] == PLAYER) != isinstance(value, int):
                raise ValueError(f"{name}: card {card['id']}: player cards, and only they, have a value")
            team_cards.append({"id": card["id"], "kind": card["kind"], "family": kind["family"], "value": value,
                               "name": kind["name"], "text": kind["text"], "book_text": kind["book_text"],
                               "owner": seat})

    pitch = load_data(__package__, "pitch.json")
    pitch_kinds = {k["kind"]: k for k in pitch["kinds"]}
    if set(pitch_kinds) != set(PITCH_KINDS):
        raise ValueError(f"pitch.json must describe exactly {', '.join(PITCH_KINDS)}")
    pitch_cards = [{"id": c["id"], "kind": c["kind"], "name": pitch_kinds[c["kind"]]["name"],
                    "points": pitch_kinds[c["kind"]]["points"], "text": pitch_kinds[c["kind"]]["text"],
                    "book_text": pitch_kinds[c["kind"]]["book_text"]} for c in pitch["cards"]]

    ids = [c["id"] for c in team_cards] + [c["id"] for c in pitch_cards]
    if len(ids) != len(set(ids)):
        raise ValueError("card ids must be unique across all three decks")
    return kinds, teams, team_cards, pitch_cards


KINDS, TEAMS, TEAM_CARDS, PITCH_CARDS = _load()

#: Card id -> integer, for reading actions.
TEAM_INDEX = {c["id"]: i for i, c in enumerate(TEAM_CARDS)}
PITCH_INDEX = {c["id"]: i for i, c in enumerate(PITCH_CARDS)}

# Hot lookups, one entry per card.
KIND = [c["kind"] for c in TEAM_CARDS]
FAMILY = [c["family"] for c in TEAM_CARDS]
VALUE = [c["value"] for c in TEAM_CARDS]
OWNER = [c["owner"] for c in TEAM_CARDS]
PITCH_KIND = [c["kind"] for c in PITCH_CARDS]
POINTS = [c["points"] for c in PITCH_CARDS]


def team_deck(seat: int) -> list[int]:
    """The cards of ``seat``'s team deck, in catalogue order."""
    team = TEAMS[seat]
    return list(range(team["first"], team["first"] + team["size"]))


_CARD_VIEWS = [{"id": c["id"], "kind": c["kind"], "family": c["family"], "value": c["value"]} for c in TEAM_CARDS]
_PITCH_VIEWS = [{"id": c["id"], "kind": c["kind"], "name": c["name"], "points": c["points"]} for c in PITCH_CARDS]


def card_view(card: int) -> dict:
    """A team card as views and events show it (a fresh dict).

    Names and texts are static: they are in ``kinds.json`` and, for clients, in
    the description of the ``CardKind`` enum in ``schema.json``.
    """
    return _CARD_VIEWS[card].copy()


def pitch_view(card: int) -> dict:
    """A pitch card as views and events show it (a fresh dict)."""
    return _PITCH_VIEWS[card].copy()



def _catalogue_entry(card: dict, *, pitch: bool) -> dict:
    """One card as the cards catalogue lists it (schema.json "card"): ``text`` is the book's words, ``reading``
    how the service plays the card."""
    if pitch:
        return {"id": card["id"], "deck": "pitch", "seat": None, "name": card["name"], "kind": None, "family": None,
                "value": None, "pitch_kind": card["kind"], "points": card["points"], "text": card["book_text"],
                "reading": card["text"]}
    return {"id": card["id"], "deck": TEAMS[card["owner"]]["team"], "seat": card["owner"], "name": card["name"],
            "kind": card["kind"], "family": card["family"], "value": card["value"], "pitch_kind": None,
            "points": None, "text": card["book_text"], "reading": card["text"]}


_CATALOGUE = tuple([_catalogue_entry(c, pitch=False) for c in TEAM_CARDS]
                   + [_catalogue_entry(c, pitch=True) for c in PITCH_CARDS])


def catalogue() -> list[dict]:
    """Every card of the three decks, once: Gryffindor's, Slytherin's, then the pitch deck, each in its data
    file's order. Public knowledge, like a printed deck list: it says nothing of where a card is in a match."""
    return [dict(entry) for entry in _CATALOGUE]
