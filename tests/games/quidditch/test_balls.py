"""TYPES OF PITCH CARDS: how each ball is won or left on the table (seeds/001_7860e6019ee0192e.txt).

In every test Slytherin pitches and lays the first card; Gryffindor answers.
"""

import pytest

from service.games.quidditch import GAME

from .helpers import (
    GRYFFINDOR, SLYTHERIN, act, ball, close_window, compared, contest, discard, done_if_asked, first, printed, score,
    start, types,
)

G_HAND = ["g-chaser-7a", "g-chaser-8a", "g-keeper-9", "g-beater-1a", "g-seeker-11", "g-referee-a", "g-keeper-7"]
S_HAND = ["s-chaser-7a", "s-chaser-8a", "s-keeper-9", "s-beater-3a", "s-seeker-12", "s-referee-a", "s-chaser-10a"]


def play_out(s_card, g_card, ball_id, *, g_hand=G_HAND, s_hand=S_HAND, **position):
    """Slytherin pitches ``ball_id``, both lay their card, the reveal's window closes; (state, events)."""
    position.setdefault("pitch_top", [ball_id])
    hands = [list(dict.fromkeys([g_card, *g_hand]))[:7], list(dict.fromkeys([s_card, *s_hand]))[:7]]
    state, _ = close_window(start(hands, **position))
    state = contest(state, s_card, g_card, ball_id)
    assert state["window"]["after"] == "reveal"
    return close_window(state)


def quaffle_winner(state):
    scores = [score(state, GRYFFINDOR), score(state, SLYTHERIN)]
    return {(0, 10): SLYTHERIN, (10, 0): GRYFFINDOR, (0, 0): None}[tuple(scores)]


# -- PLAYING FOR A QUAFFLE -------------------------------------------------------------------------------


@pytest.mark.parametrize("s_card, g_card, winner", [
    ("s-chaser-8a", "g-chaser-7a", SLYTHERIN),
    ("s-chaser-7a", "g-chaser-8a", GRYFFINDOR),
    ("s-chaser-10a", "g-keeper-9", SLYTHERIN),
    ("s-chaser-8a", "g-beater-1a", SLYTHERIN),
])
def test_higher_chaser_scores_the_quaffle(s_card, g_card, winner):
    """"If the card with the higher value is a Chaser, and the opponent's card is not a Keeper with an equal or
    higher value the player with the Chaser card wins the Quaffle Card and places it face up in the scoring
    pile to their side. Both players remove their Player Cards from the field and place them in their discard
    piles." """
    state, events = play_out(s_card, g_card, "p-quaffle-01")
    assert quaffle_winner(state) == winner
    assert ball(state, "p-quaffle-01") is None
    assert GAME.view(state, None)["players"][winner]["scoring"][0]["id"] == "p-quaffle-01"
    assert discard(state, SLYTHERIN) == [s_card] and discard(state, GRYFFINDOR) == [g_card]
    assert {"type": "ball_won", "ball": "p-quaffle-01", "seat": winner, "by": "play",
            "compared": compared(printed(g_card), printed(s_card))} in events


@pytest.mark.parametrize("s_card, g_card, winner", [
    ("s-seeker-12", "g-chaser-8a", SLYTHERIN),
    ("s-seeker-12", "g-keeper-9", SLYTHERIN),   # a Keeper blocks only "with an equal or higher value"
    ("s-chaser-10a", "g-seeker-11", GRYFFINDOR),
    ("s-beater-3a", "g-beater-1a", SLYTHERIN),
    ("s-chaser-4a", "g-beater-1a", SLYTHERIN),
])
def test_the_higher_card_wins_the_quaffle_whatever_its_kind(s_card, g_card, winner):
    """5.: "Both players compare their cards ... The higher-numbered Player Card wins the round." PLAYING FOR A
    QUAFFLE: "Beaters and Seekers may be played on Quaffles, but they are better saved for Bludgers and the
    Golden Snitch" -- advice, not a bar: a Seeker or a Beater above the other card scores the Quaffle."""
    state, events = play_out(s_card, g_card, "p-quaffle-01", s_hand=[s_card, *S_HAND])
    assert quaffle_winner(state) == winner
    assert ball(state, "p-quaffle-01") is None
    assert first(events, "ball_won")["compared"] == compared(printed(g_card), printed(s_card))


def _stays(state, events, ball_id="p-quaffle-01"):
    assert first(events, "ball_stays")["ball"] == ball_id
    assert ball(state, ball_id) is not None
    assert score(state, GRYFFINDOR) == score(state, SLYTHERIN) == 0


def test_equal_values_tie_and_the_quaffle_stays():
    """"If you both played cards of the same value, you have a tie. Each of you discards your Player Card, but
    the Quaffle remains in play for the next round." """
    state, events = play_out("s-chaser-7a", "g-chaser-7a", "p-quaffle-01")
    _stays(state, events)
    assert discard(state, SLYTHERIN) == ["s-chaser-7a"] and discard(state, GRYFFINDOR) == ["g-chaser-7a"]
    # next round: the Quaffle is still there and Gryffindor, pitching, may not pitch over it
    assert state["round"] == 2 and "pitch" not in {a["type"] for a in GAME.legal_actions(state, GRYFFINDOR)}


@pytest.mark.parametrize("s_card, g_card", [
    ("s-chaser-8a", "g-keeper-9"),   # higher Keeper
    ("s-keeper-9", "g-chaser-8a"),   # the pitcher's Keeper blocks too
    ("s-beater-3a", "g-keeper-7"),   # "(Chaser, Beater)"
])
def test_keeper_with_equal_or_higher_value_blocks(s_card, g_card):
    """"If you played a Keeper with an equal or higher value than your opponent's Player Card (Chaser, Beater),
    you blocked the goal and saved the Quaffle, but you didn't win it. The Quaffle stays in play for the next
    round and you each discard the Player Cards you played." """
    state, events = play_out(s_card, g_card, "p-quaffle-01")
    _stays(state, events)
    assert discard(state, SLYTHERIN) == [s_card] and discard(state, GRYFFINDOR) == [g_card]


def test_keeper_blocks_an_equal_chaser():
    """The same passage: "a Keeper with an equal or higher value" -- a Keeper 9 against a Chaser 9."""
    state, events = play_out("s-chaser-9a", "g-keeper-9", "p-quaffle-01")
    _stays(state, events)


def test_keeper_against_keeper():
    """"If you both played a Keeper, the Keeper with the higher value wins the Quaffle. If there is a tie, you
    both discard and the Quaffle stays in play." """
    state, _ = play_out("s-keeper-9", "g-keeper-7", "p-quaffle-01")
    assert quaffle_winner(state) == SLYTHERIN
    state, events = play_out("s-keeper-9", "g-keeper-9", "p-quaffle-01")
    _stays(state, events)


@pytest.mark.parametrize("g_card", ["g-keeper-7", "g-beater-1a", "g-seeker-11"])
def test_a_sacrifice_loses_the_quaffle_to_any_player_card(g_card):
    """SPECIAL CARDS: "When you reveal your cards, you will have to discard your Special Card without using any
    of its powers. Your opponent wins the Quaffle, provided they played a Player Card." """
    state, _ = play_out("s-referee-a", g_card, "p-quaffle-01")
    assert quaffle_winner(state) == GRYFFINDOR
    assert discard(state, SLYTHERIN) == ["s-referee-a"]


def test_two_sacrifices_leave_the_quaffle():
    """SPECIAL CARDS: "If you both sacrifice a Special Card in this way, you both discard and the Quaffle stays
    in play." """
    state, events = play_out("s-referee-a", "g-referee-a", "p-quaffle-01")
    _stays(state, events)


def test_a_sacrificed_spell_has_no_power():
    """SPECIAL CARDS: "discard your Special Card without using any of its powers" -- a face-down Full
    Body-Bind takes no cards from the opponent's hand."""
    state, events = play_out("s-full-body-bind", "g-chaser-7a", "p-quaffle-01")
    assert quaffle_winner(state) == GRYFFINDOR
    assert "discarded_from_hand" not in types(events)


def test_a_ball_left_on_the_table_shows_what_was_compared():
    """"If neither player wins the ball, leave it on the table." The ball left there says why (docs/rules/
    quidditch.md, "Resolving a ball"): a Keeper 9 "with an equal or higher value than your opponent's Player
    Card" against a Chaser 8 -- until the round ends and the ball is played for afresh."""
    g_hand = ["g-keeper-9", "g-referee-a", "g-chaser-4a", "g-chaser-5a"]
    s_hand = ["s-chaser-8a", "s-beater-1a", "s-referee-a", "s-chaser-5a"]
    state, _ = close_window(start([g_hand, s_hand], pitch_top=["p-quaffle-01"], balls=["p-bludger-1"]))
    state, _ = act(state, SLYTHERIN, "pitch")
    state, _ = close_window(state)
    for card, b in (("s-chaser-8a", "p-quaffle-01"), ("s-beater-1a", "p-bludger-1")):
        state, _ = act(state, SLYTHERIN, "play_card", card=card, ball=b)
        state, _ = close_window(state)
    state = done_if_asked(state, SLYTHERIN)
    for card, b in (("g-keeper-9", "p-quaffle-01"), ("g-chaser-4a", "p-bludger-1")):
        state, _ = act(state, GRYFFINDOR, "play_card", card=card, ball=b)
        state, _ = close_window(state)
    assert ball(state, "p-quaffle-01")["compared"] is None  # not resolved yet
    state, _ = act(state, SLYTHERIN, "reveal", ball="p-quaffle-01")
    state, events = close_window(state)
    left = ball(state, "p-quaffle-01")
    assert left["resolved"] is True and left["sides"][0]["occupied"] is False  # the cards went to the discards
    assert left["compared"] == compared(("keeper", 9), ("chaser", 8))
    assert first(events, "ball_stays") == {"type": "ball_stays", "ball": "p-quaffle-01",
                                           "compared": left["compared"]}
    state, _ = close_window(state)  # the Bludger: Slytherin's Beater wins it; the round ends
    assert state["round"] == 2 and ball(state, "p-quaffle-01")["compared"] is None


# -- PLAYING ON A BLUDGER --------------------------------------------------------------------------------


def test_higher_beater_wins_the_bludger_and_knocks_out_a_random_card():
    """"If you both play a Beater, the card with the higher value wins. ... Pick a card from your opponent's
    hand (no peeking) and send it to their discard pile. Remove the Bludger from the pitch and place it across
    the table in the Pitch discard pile." """
    state, events = play_out("s-beater-3a", "g-beater-1a", "p-bludger-1")
    assert ball(state, "p-bludger-1") is None
    assert [c["id"] for c in GAME.view(state, None)["pitch_discard"]] == ["p-bludger-1"]
    knocked = [e for e in events if e["type"] == "discarded_from_hand"]
    assert len(knocked) == 1 and knocked[0]["seat"] == GRYFFINDOR and knocked[0]["cause"] == "p-bludger-1"
    assert knocked[0]["card"]["id"] in G_HAND
    assert discard(state, GRYFFINDOR) == ["g-beater-1a", knocked[0]["card"]["id"]]
    assert {"type": "bludgered", "seat": GRYFFINDOR, "hits": 1} in events
    assert score(state, SLYTHERIN) == 0  # a Bludger scores nothing


def test_the_knocked_out_card_comes_from_the_seeded_rng():
    """"Pick a card from your opponent's hand (no peeking)": random, from the match's seeded RNG."""
    knocked = set()
    for seed in range(12):
        _, events = play_out("s-beater-3a", "g-beater-1a", "p-bludger-1", seed=seed)
        again = play_out("s-beater-3a", "g-beater-1a", "p-bludger-1", seed=seed)[1]
        assert events == again
        knocked.add(next(e["card"]["id"] for e in events if e["type"] == "discarded_from_hand"))
    assert len(knocked) > 1


@pytest.mark.parametrize("s_card", ["s-chaser-10a", "s-seeker-12", "s-referee-a"])
def test_a_beater_beats_any_other_card_on_a_bludger(s_card):
    """"If you play a Beater and your opponent plays any other type of card (a Player Card of any value or any
    Special Card as a sacrifice), the Beater always wins." """
    state, events = play_out(s_card, "g-beater-1a", "p-bludger-1")
    assert {"type": "ball_won", "ball": "p-bludger-1", "seat": GRYFFINDOR, "by": "play",
            "compared": compared(("beater", 1), printed(s_card) if s_card != "s-referee-a" else None)} in events
    assert {"type": "bludgered", "seat": SLYTHERIN, "hits": 1} in events


def test_beater_tie_leaves_the_bludger():
    """"If you both play a Beater and there is a tie, the Beaters are both discarded and the Bludger stays in
    play." """
    state, events = play_out("s-beater-1a", "g-beater-1a", "p-bludger-1", s_hand=["s-beater-1a", *S_HAND])
    _stays(state, events, "p-bludger-1")
    assert "bludgered" not in types(events)


def test_no_beater_leaves_the_bludger():
    """"If you both play non-Beater cards, both [...] cards are discarded and the Bludger stays in play." """
    state, events = play_out("s-chaser-10a", "g-seeker-11", "p-bludger-1")
    _stays(state, events, "p-bludger-1")
    assert discard(state, SLYTHERIN) == ["s-chaser-10a"] and discard(state, GRYFFINDOR) == ["g-seeker-11"]


# -- PLAYING FOR THE GOLDEN SNITCH ------------------------------------------------------------------------


def test_higher_seeker_catches_the_snitch_and_the_game_ends():
    """"If both you and your opponent play a Seeker, the one with the higher value catches the Golden Snitch
    and the game ends!" -- "worth 150 points!" """
    state, events = play_out("s-seeker-12", "g-seeker-11", "p-snitch")
    result = GAME.result(state)
    assert result == {"winners": [SLYTHERIN], "scores": [0, 150], "reason": "Slytherin caught the Golden Snitch.",
                      "cause": "snitch"}
    assert GAME.view(state, None)["result"] == result
    assert events[-1]["type"] == "game_over"
    assert GAME.to_act(state) == set()


def test_seeker_beats_any_other_card_on_the_snitch():
    """"If you play a Seeker and your opponent plays any other type of card, the Seeker always wins, and the
    game ends." """
    state, _ = play_out("s-chaser-10a", "g-seeker-11", "p-snitch")
    assert GAME.result(state)["winners"] == [GRYFFINDOR]


def test_seeker_tie_leaves_the_snitch():
    """"If there is a tie, both Seekers are discarded and the Snitch remains in play." """
    state, events = play_out("s-seeker-11", "g-seeker-11", "p-snitch", s_hand=["s-seeker-11", *S_HAND])
    _stays(state, events, "p-snitch")
    assert GAME.result(state) is None


def test_no_seeker_leaves_the_snitch():
    """"If you both play non-Seeker cards, both cards are discarded and the Snitch stays in play." """
    state, events = play_out("s-chaser-10a", "g-keeper-9", "p-snitch")
    _stays(state, events, "p-snitch")


def test_the_snitch_catcher_can_still_lose_on_points():
    """9.: "both players add up the Quaffles and Goal Cards (10 points each) in their scoring piles and the
    player with the higher total wins. It is possible to win the game without catching the Golden Snitch, but
    it is extremely difficult." """
    g_scoring = [f"p-quaffle-{i:02d}" for i in range(2, 16)] + ["p-goal-1", "p-goal-2"]
    state, _ = play_out("s-seeker-12", "g-chaser-7a", "p-snitch", scoring=(g_scoring, []))
    assert GAME.result(state) == {"winners": [GRYFFINDOR], "scores": [160, 150],
                                  "reason": "Slytherin caught the Golden Snitch.", "cause": "snitch"}


def test_the_game_ends_the_moment_the_snitch_is_caught():
    """9.: "The game continues until someone catches the Golden Snitch." House rule (docs/rules/quidditch.md):
    balls the pitcher has not had turned over yet are not played."""
    state, _ = close_window(start([G_HAND, S_HAND], balls=["p-snitch"], pitch_top=["p-quaffle-01"]))
    state, _ = act(state, SLYTHERIN, "pitch")
    state, _ = close_window(state)
    for card, b in (("s-seeker-12", "p-snitch"), ("s-chaser-10a", "p-quaffle-01")):
        state, _ = act(state, SLYTHERIN, "play_card", card=card, ball=b)
        state, _ = close_window(state)
    for card, b in (("g-chaser-7a", "p-snitch"), ("g-chaser-8a", "p-quaffle-01")):
        state, _ = act(state, GRYFFINDOR, "play_card", card=card, ball=b)
        state, _ = close_window(state)
    state, _ = act(state, SLYTHERIN, "reveal", ball="p-snitch")
    state, _ = close_window(state)
    assert GAME.result(state)["scores"] == [0, 150]
    assert ball(state, "p-quaffle-01")["revealed"] is False
