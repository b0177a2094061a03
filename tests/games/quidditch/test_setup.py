"""Equipment and SET UP (seeds/001_7860e6019ee0192e.txt) and the DESIGN.md deck house rule."""

from collections import Counter

from service.games.quidditch import GAME
from service.games.quidditch.cards import PITCH_CARDS, TEAM_CARDS, TEAMS, team_deck

from .helpers import GRYFFINDOR, SLYTHERIN


def _deck(seat):
    return [TEAM_CARDS[c] for c in team_deck(seat)]


def test_team_decks_follow_the_house_rule():
    """DESIGN.md: "Suggested team deck (40): Seekers 11 and 12; Chasers 4-10 twice each; Keepers 6-10;
    Beaters 1, 1, 2, 2, 3, 3; one of each spell, jinx and foul, three Referees." The book: "40 Red Gryffindor
    Team Cards / 40 Green Slytherin Team Cards"."""
    for seat in (GRYFFINDOR, SLYTHERIN):
        deck = _deck(seat)
        assert len(deck) == 40
        values = lambda kind: sorted(c["value"] for c in deck if c["kind"] == kind)  # noqa: E731
        assert values("seeker") == [11, 12]
        assert values("chaser") == sorted(list(range(4, 11)) * 2)
        assert values("keeper") == [6, 7, 8, 9, 10]
        assert values("beater") == [1, 1, 2, 2, 3, 3]
        families = Counter(c["family"] for c in deck)
        assert families == {"player": 27, "spell": 4, "jinx": 4, "foul": 2, "referee": 3}
        specials = Counter(c["kind"] for c in deck if c["family"] != "player")
        assert all(n == 1 for kind, n in specials.items() if kind != "referee")
        assert specials["referee"] == 3


def test_pitch_deck_follows_the_house_rule():
    """DESIGN.md: "Pitch deck (28): 15 Quaffles, 8 Bludgers, 4 Goal cards, 1 Golden Snitch. Quaffles and
    Goals score 10, the Snitch 150." The book: "28 Blue Pitch Cards"."""
    assert Counter(c["kind"] for c in PITCH_CARDS) == {"quaffle": 15, "bludger": 8, "goal": 4, "snitch": 1}
    points = {c["kind"]: c["points"] for c in PITCH_CARDS}
    assert points == {"quaffle": 10, "goal": 10, "snitch": 150, "bludger": 0}


def test_every_physical_card_has_a_unique_id():
    ids = [c["id"] for c in TEAM_CARDS] + [c["id"] for c in PITCH_CARDS]
    assert len(ids) == len(set(ids)) == 108
    assert all(c["id"].startswith("g-") for c in _deck(GRYFFINDOR))
    assert all(c["id"].startswith("s-") for c in _deck(SLYTHERIN))


def test_seats_and_teams():
    """"Each player chooses a Team Deck": seat 0 is Gryffindor (red), seat 1 Slytherin (green)."""
    assert [(t["team"], t["colour"]) for t in TEAMS] == [("gryffindor", "red"), ("slytherin", "green")]
    view = GAME.view(GAME.setup(GAME.check_options(None, {}, 2), 2, 1), None)
    assert [(p["team"], p["colour"]) for p in view["players"]] == [("gryffindor", "red"), ("slytherin", "green")]


def test_setup_deals_seven_and_slytherin_pitches_first():
    """SET UP: "Each player draws the top 7 cards from their Team Deck to make up their hand."
    ROUND 1: "The Slytherin player always pitches for the first round." """
    for seed in range(20):
        state = GAME.setup(GAME.check_options(None, {}, 2), 2, seed)
        view = GAME.view(state, None)
        assert [p["hand_count"] for p in view["players"]] == [7, 7]
        assert [p["deck_count"] for p in view["players"]] == [33, 33]
        assert view["round"] == 1 and view["pitcher"] == SLYTHERIN
        # the first pitch has happened: one ball in play, any Goals turned on the way already scored
        assert len(view["balls"]) == 1
        goals = view["players"][SLYTHERIN]["scoring"]
        assert all(c["kind"] == "goal" for c in goals)
        assert view["pitch_deck_count"] == 28 - 1 - len(goals)
        assert view["window"]["after"] == "pitch" and view["to_act"] == [0, 1]


def test_setup_is_seeded():
    """Same seed, same match; the decks are shuffled ("Shuffle each deck and set them face down")."""
    options = GAME.check_options(None, {}, 2)
    assert GAME.setup(options, 2, 5) == GAME.setup(options, 2, 5)
    hands = {tuple(GAME.setup(options, 2, seed)["hands"][0]) for seed in range(10)}
    assert len(hands) == 10
