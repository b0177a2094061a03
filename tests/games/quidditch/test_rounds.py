"""LET'S PLAY: pitching, who plays on what, reveals, drawing, the end (seeds/001_7860e6019ee0192e.txt)."""

import pytest

from service.engine import IllegalAction
from service.games.quidditch import GAME

from .helpers import GRYFFINDOR, SLYTHERIN, act, ball, close_window, contest, discard, pass_all, score, start, types

G_HAND = ["g-chaser-7a", "g-chaser-8a", "g-keeper-9", "g-beater-2a", "g-seeker-11", "g-chaser-4a", "g-beater-1a"]
S_HAND = ["s-chaser-7a", "s-chaser-8a", "s-keeper-9", "s-beater-2a", "s-seeker-11", "s-chaser-4a", "s-beater-1a"]


def legal_types(state, seat):
    return {a["type"] for a in GAME.legal_actions(state, seat)}


def test_first_pitch_turns_the_top_card():
    """ROUND 1, 1.: "picking the top pitch card from the Pitch Deck and placing it face up between you and
    your opponent. The player who turns over the Pitch card is called the Pitcher." """
    state = start([G_HAND, S_HAND], pitch_top=["p-bludger-1"])
    view = GAME.view(state, None)
    assert [b["id"] for b in view["balls"]] == ["p-bludger-1"]
    assert view["pitcher"] == SLYTHERIN


def test_pitcher_must_play_on_a_quaffle():
    """2.: "The pitcher does not have to play on a Bludger or a Golden Snitch, but must always play on a
    Quaffle." """
    state, _ = close_window(start([G_HAND, S_HAND], pitch_top=["p-quaffle-01"]))
    assert state["stage"] == "lead" and GAME.to_act(state) == {SLYTHERIN}
    assert "done" not in legal_types(state, SLYTHERIN)
    with pytest.raises(IllegalAction, match="must always play on a Quaffle"):
        act(state, SLYTHERIN, "done")


def test_pitcher_may_decline_a_bludger_and_the_round_ends():
    """2.: "If the pitcher chooses not to play, say, 'I choose not to play.' It is now the next player's turn
    to pitch or play." PLAYING ON A BLUDGER: "If you choose not to play on it, the Bludger stays in play for
    the next round"."""
    state, _ = close_window(start([G_HAND, S_HAND], pitch_top=["p-bludger-1", "p-quaffle-01"]))
    assert "done" in legal_types(state, SLYTHERIN)
    state, events = act(state, SLYTHERIN, "done")
    assert "round_ended" in types(events)
    view = GAME.view(state, None)
    assert view["round"] == 2 and view["pitcher"] == GRYFFINDOR
    # the Bludger stayed; Gryffindor chose nothing yet, so no new pitch has happened
    assert [b["id"] for b in view["balls"]] == ["p-bludger-1"]
    state, _ = close_window(state)  # the window that opens a round without a pitch
    assert GAME.view(state, None)["pitch_available"] is True


def test_opponent_must_play_on_every_ball_the_pitcher_played_on():
    """8.: "Every ball the Pitcher decides to play on, their opponent must play on as well." 4.: "If the
    pitcher plays on a ball, the opposing player must also play on the ball." """
    state, _ = close_window(start([G_HAND, S_HAND], balls=["p-bludger-1", "p-snitch"], pitch_top=["p-quaffle-01"]))
    state, _ = act(state, SLYTHERIN, "play_card", card="s-beater-2a", ball="p-bludger-1")
    state, _ = close_window(state)
    state, _ = act(state, SLYTHERIN, "done")
    assert state["stage"] == "follow" and GAME.to_act(state) == {GRYFFINDOR}
    legal = GAME.legal_actions(state, GRYFFINDOR)
    assert {a["ball"] for a in legal if a["type"] == "play_card"} == {"p-bludger-1"}  # not the Snitch
    assert {"type": "done"} not in legal
    with pytest.raises(IllegalAction, match="you must play on as well"):
        act(state, GRYFFINDOR, "done")
    with pytest.raises(IllegalAction):
        act(state, GRYFFINDOR, "play_card", card="g-seeker-11", ball="p-snitch")


def test_cards_go_face_down_pitcher_first():
    """3.: "The Pitcher selects a Player Card from their hand and places it face down"; 4.: "The opposing
    player places one Player Card face down". The opponent cannot play before the pitcher is done."""
    state, _ = close_window(start([G_HAND, S_HAND], pitch_top=["p-quaffle-01"]))
    assert GAME.legal_actions(state, GRYFFINDOR) == []
    state, _ = act(state, SLYTHERIN, "play_card", card="s-chaser-8a", ball="p-quaffle-01")
    side = ball(state, "p-quaffle-01")["sides"][SLYTHERIN]
    assert side["occupied"] and side["card"] is None  # seen from Gryffindor's seat: face down


def test_goal_scores_at_once_and_the_pitcher_draws_again():
    """PLAYING A GOAL CARD: "If you draw a Goal Card from the Pitch Deck, you score an instant goal! Add the
    card to your scoring pile. It's worth 10 points. Draw another Pitch Card - it's still your round!" """
    state = start([G_HAND, S_HAND], pitch_top=["p-goal-1", "p-goal-2", "p-quaffle-01"])
    view = GAME.view(state, None)
    assert [c["id"] for c in view["players"][SLYTHERIN]["scoring"]] == ["p-goal-1", "p-goal-2"]
    assert score(state, SLYTHERIN) == 20
    assert [b["id"] for b in view["balls"]] == ["p-quaffle-01"]
    assert view["pitcher"] == SLYTHERIN and view["round"] == 1


def test_third_bludger_is_discarded_and_replaced():
    """8.: "If there are two Bludgers in play and you draw a third Bludger, place it in the Pitch discard
    pile and draw another card. It is still your pitch." """
    state, _ = close_window(start([G_HAND, S_HAND], balls=["p-bludger-1", "p-bludger-2"],
                                  pitch_top=["p-bludger-3", "p-snitch"]))
    state, events = act(state, SLYTHERIN, "pitch")
    view = GAME.view(state, None)
    assert [b["id"] for b in view["balls"]] == ["p-bludger-1", "p-bludger-2", "p-snitch"]
    assert [c["id"] for c in view["pitch_discard"]] == ["p-bludger-3"]
    assert types(events)[:2] == ["third_bludger_discarded", "pitched"]


def test_a_quaffle_in_play_stops_a_new_pitch():
    """8.: "If a Quaffle remains in play, the Pitcher for that round does not get to lead with a new card
    from the Pitch Deck. Only one Quaffle may be in play at any time." """
    state = start([G_HAND, S_HAND], balls=["p-quaffle-01"], pitch_top=["p-quaffle-02"], pitcher=GRYFFINDOR,
                  round=2)
    state, _ = close_window(state)  # the window that opens a round without a pitch
    assert state["window"] is None and GAME.to_act(state) == {GRYFFINDOR}
    assert "pitch" not in legal_types(state, GRYFFINDOR)
    assert GAME.view(state, None)["pitch_available"] is False
    with pytest.raises(IllegalAction):
        act(state, GRYFFINDOR, "pitch")


def test_bludger_or_snitch_left_in_play_gives_the_pitcher_a_choice():
    """8.: "If a Bludger or a Golden Snitch remains in play, the new pitcher may choose to pitch a new ball
    from the deck OR play on the balls already in play." """
    state, _ = close_window(start([G_HAND, S_HAND], balls=["p-bludger-1", "p-snitch"], pitch_top=["p-quaffle-01"]))
    legal = GAME.legal_actions(state, SLYTHERIN)
    assert {"type": "pitch"} in legal
    assert {a["ball"] for a in legal if a["type"] == "play_card"} == {"p-bludger-1", "p-snitch"}
    # playing on what is there first gives up the pitch
    played, _ = act(state, SLYTHERIN, "play_card", card="s-beater-2a", ball="p-bludger-1")
    played, _ = close_window(played)
    assert "pitch" not in legal_types(played, SLYTHERIN)
    # pitching first, then every ball in play may be played on, the new one too
    pitched, _ = act(state, SLYTHERIN, "pitch")
    pitched, _ = close_window(pitched)
    assert "pitch" not in legal_types(pitched, SLYTHERIN)
    legal = GAME.legal_actions(pitched, SLYTHERIN)
    assert {a["ball"] for a in legal if a["type"] == "play_card"} == {"p-bludger-1", "p-snitch", "p-quaffle-01"}
    assert {"type": "done"} not in legal  # the new ball is a Quaffle: it must be played on


def test_pitcher_alternates():
    """7.: "The round ends and the Gryffindor player pitches for the next round." 8.: "Players alternate
    turns pitching to open each round." """
    state = start([G_HAND, S_HAND], balls=["p-snitch"])
    pitchers = []
    for _ in range(4):
        pitchers.append(GAME.view(state, None)["pitcher"])
        state = pass_all(state)
        state, _ = act(state, state["pitcher"], "done")  # "I choose not to play"
    assert pitchers == [SLYTHERIN, GRYFFINDOR, SLYTHERIN, GRYFFINDOR]


def test_pitcher_orders_the_reveals():
    """8.: "If more than one ball is played on in a round, the pitcher determines the order in which the
    player cards are turned over." """
    state, _ = close_window(start([G_HAND, S_HAND], balls=["p-bludger-1"], pitch_top=["p-quaffle-01"]))
    state, _ = act(state, SLYTHERIN, "pitch")
    state, _ = close_window(state)
    for card, b in (("s-beater-2a", "p-bludger-1"), ("s-chaser-8a", "p-quaffle-01")):
        state, _ = act(state, SLYTHERIN, "play_card", card=card, ball=b)
        state, _ = close_window(state)
    for card, b in (("g-chaser-4a", "p-bludger-1"), ("g-chaser-7a", "p-quaffle-01")):
        state, _ = act(state, GRYFFINDOR, "play_card", card=card, ball=b)
        state, _ = close_window(state)
    assert state["stage"] == "reveal" and GAME.to_act(state) == {SLYTHERIN}
    assert GAME.legal_actions(state, SLYTHERIN) == [{"type": "reveal", "ball": "p-bludger-1"},
                                                    {"type": "reveal", "ball": "p-quaffle-01"}]
    state, events = act(state, SLYTHERIN, "reveal", ball="p-quaffle-01")
    assert events[0]["type"] == "revealed" and events[0]["ball"] == "p-quaffle-01"
    assert ball(state, "p-bludger-1")["revealed"] is False
    state, events = close_window(state)
    # the Quaffle resolved (8 beats 7); the last ball is turned over without asking
    assert score(state, SLYTHERIN) == 10
    assert ball(state, "p-bludger-1")["revealed"] is True


def test_both_draw_back_up_to_seven():
    """7.: "Both players draw a new card from their Team Decks to bring the number of cards in their hand
    back up to 7." 6.: "remove your Player Card from the pitch and place it in your personal discard pile"."""
    state, _ = close_window(start([G_HAND, S_HAND], pitch_top=["p-quaffle-01"]))
    state = contest(state, "s-chaser-8a", "g-chaser-7a", "p-quaffle-01")
    state, events = close_window(state)
    assert state["round"] == 2
    view = GAME.view(state, None)
    assert [p["hand_count"] for p in view["players"]] == [7, 7]
    assert discard(state, SLYTHERIN) == ["s-chaser-8a"] and discard(state, GRYFFINDOR) == ["g-chaser-7a"]
    assert types(events, None).count("drew") == 2


def test_bludgered_player_draws_to_six_for_one_round_only():
    """PLAYING ON A BLUDGER: "When they go to draw new cards next round, they can only draw a hand of 6,
    not 7 cards. This only lasts for one round." """
    state, _ = close_window(start([G_HAND, S_HAND], pitch_top=["p-bludger-1", "p-bludger-2"]))
    state = contest(state, "s-beater-2a", "g-chaser-4a", "p-bludger-1")
    state, events = close_window(state)
    assert "bludgered" in types(events)
    view = GAME.view(state, None)
    assert view["round"] == 2
    assert [p["hand_count"] for p in view["players"]] == [6, 7]
    # round 2 (Gryffindor pitches the second Bludger and declines it): back up to 7
    state, _ = close_window(state)
    state, _ = act(state, GRYFFINDOR, "done")
    assert [p["hand_count"] for p in GAME.view(state, None)["players"]] == [7, 7]


def test_two_bludgers_in_one_round_draw_to_five():
    """PLAYING ON A BLUDGER: "If your opponent is hit by two Bludgers in the same round, you take two cards
    from their hand that round, and their hand is reduced to 5 cards for the next round." """
    state, _ = close_window(start([G_HAND, S_HAND], balls=["p-bludger-1", "p-bludger-2"],
                                  pitch_top=["p-quaffle-01"]))
    for b, card in (("p-bludger-1", "s-beater-2a"), ("p-bludger-2", "s-beater-1a")):
        state, _ = act(state, SLYTHERIN, "play_card", card=card, ball=b)
        state, _ = close_window(state)
    # nothing left to play on and the chance to pitch gone: the pitcher's lead ends by itself
    assert state["stage"] == "follow"
    for b, card in (("p-bludger-1", "g-chaser-4a"), ("p-bludger-2", "g-chaser-7a")):
        state, _ = act(state, GRYFFINDOR, "play_card", card=card, ball=b)
        state, _ = close_window(state)
    state, _ = act(state, SLYTHERIN, "reveal", ball="p-bludger-1")
    state, _ = close_window(state)
    view = GAME.view(state, None)
    assert view["players"][GRYFFINDOR]["bludgers"] == 1 and view["players"][GRYFFINDOR]["next_hand_size"] == 6
    assert view["players"][GRYFFINDOR]["hand_count"] == 7 - 2 - 1  # two played, one knocked out
    state, _ = close_window(state)  # the second Bludger's window: it resolves, the round ends
    view = GAME.view(state, None)
    assert view["round"] == 2
    assert [p["hand_count"] for p in view["players"]] == [5, 7]
    assert [c["id"] for c in view["pitch_discard"]] == ["p-bludger-1", "p-bludger-2"]


def test_team_deck_that_runs_out_reshuffles_its_discard_pile():
    """9.: "If you get through your deck before the game ends, shuffle your discard pile and continue play." """
    # Gryffindor's deck is empty and its other 33 cards are in its discard pile; Slytherin's deck is full
    state = start([G_HAND, S_HAND], pitch_top=["p-quaffle-01"], decks=([], None))
    view = GAME.view(state, None)
    assert view["players"][GRYFFINDOR]["deck_count"] == 0 and len(view["players"][GRYFFINDOR]["discard"]) == 33
    state, _ = close_window(state)
    state = contest(state, "s-chaser-8a", "g-chaser-7a", "p-quaffle-01")
    state, events = close_window(state)
    assert {"type": "reshuffled", "seat": GRYFFINDOR, "count": 34} in events
    assert "reshuffled" not in [e["type"] for e in events if e.get("seat") == SLYTHERIN]
    view = GAME.view(state, None)
    assert view["players"][GRYFFINDOR]["hand_count"] == 7
    assert view["players"][GRYFFINDOR]["deck_count"] == 33 and view["players"][GRYFFINDOR]["discard"] == []


def test_pitch_deck_empty_no_pitch():
    """House rule (docs/rules/quidditch.md): the Pitch Deck is not reshuffled; with it empty, rounds are
    played on the balls in play."""
    state = start([G_HAND, S_HAND], balls=["p-snitch"], pitch_top=[])
    state["pitch_deck"] = []
    state, _ = close_window(state)
    assert state["window"] is None and GAME.to_act(state) == {SLYTHERIN}
    assert "pitch" not in legal_types(state, SLYTHERIN)
    assert GAME.view(state, None)["pitch_available"] is False


def test_pitch_deck_running_out_during_a_pitch():
    """PLAYING A GOAL CARD ("Draw another Pitch Card") with nothing left to draw: the pitch ends empty."""
    state, _ = close_window(start([G_HAND, S_HAND], balls=["p-snitch"], pitch_top=["p-goal-1"]))
    state["pitch_deck"] = state["pitch_deck"][-1:]
    state, events = act(state, SLYTHERIN, "pitch")
    assert types(events)[:2] == ["goal_scored", "pitch_deck_empty"]
    assert score(state, SLYTHERIN) == 10
    assert [b["id"] for b in GAME.view(state, None)["balls"]] == ["p-snitch"]


def test_round_cap_ends_the_game_on_points():
    """9.: "the player with the higher total wins" -- house rule (docs/rules/quidditch.md): after
    max_rounds rounds without the Snitch caught, the game ends and is scored on points."""
    state = start([G_HAND, S_HAND], pitch_top=["p-quaffle-01"], max_rounds=1)
    state, _ = close_window(state)
    state = contest(state, "s-chaser-8a", "g-chaser-7a", "p-quaffle-01")
    state, events = close_window(state)
    result = GAME.result(state)
    assert result == {"winners": [SLYTHERIN], "scores": [0, 10], "cause": "round_limit",
                      "reason": "The round limit (1) was reached; the game is scored on points."}
    assert GAME.view(state, GRYFFINDOR)["result"] == result
    assert GAME.to_act(state) == set() and GAME.legal_actions(state, SLYTHERIN) == []
    assert events[-1]["type"] == "game_over"


def test_round_cap_tie_is_shared():
    """House rule: equal totals at the end share the win (both seats are winners)."""
    state, _ = close_window(start([G_HAND, S_HAND], balls=["p-bludger-1"], pitch_top=["p-quaffle-01"], max_rounds=1))
    state, _ = act(state, SLYTHERIN, "done")
    result = GAME.result(state)
    assert result["winners"] == [GRYFFINDOR, SLYTHERIN] and result["scores"] == [0, 0]
    assert result["cause"] == "round_limit"
