"""Hidden information: "Do not show these cards to your opponent" (SET UP), cards played "face down"
(3., 4.), "Pick a card from your opponent's hand (no peeking)" (PLAYING ON A BLUDGER) --
seeds/001_7860e6019ee0192e.txt. Hands, face-down cards and deck orders never reach another seat through a
view, an event or an error message; a hand's size is public."""

import json

import pytest

from service.engine import IllegalAction, events_for
from service.games.quidditch import GAME

from .helpers import GRYFFINDOR, SLYTHERIN, act, close_window, start
from .invariants import check_events_hide, check_view_hides, hidden_ids

G_HAND = ["g-chaser-4a", "g-keeper-10", "g-wingardium-leviosa", "g-jinx-retrieve", "g-beater-1a"]
S_HAND = ["s-chaser-9a", "s-keeper-6", "s-alohomora", "s-seeker-12", "s-beater-2a"]
Q = "p-quaffle-01"


def test_hands_are_a_count_to_everyone_else():
    state = start([G_HAND, S_HAND], pitch_top=[Q])
    mine, theirs, spectator = (GAME.view(state, s) for s in (GRYFFINDOR, SLYTHERIN, None))
    assert sorted(c["id"] for c in mine["hand"]) == sorted(G_HAND)
    assert spectator["hand"] == []
    assert [p["hand_count"] for p in theirs["players"]] == [5, 5]
    for view in (theirs, spectator):
        assert not set(G_HAND) & set(json.dumps(view).replace('"', " ").split())


def test_a_face_down_card_is_a_placeholder_without_id():
    """3.: "places it face down on their side of the ball"; only its owner sees which card it is."""
    state, _ = close_window(start([G_HAND, S_HAND], pitch_top=[Q]))
    state, events = act(state, SLYTHERIN, "play_card", card="s-chaser-9a", ball=Q)
    placeholder = {"seat": SLYTHERIN, "occupied": True, "card": None, "locked": False, "locked_by": None,
                   "modifiers": []}
    for seat in (GRYFFINDOR, None):
        assert GAME.view(state, seat)["balls"][0]["sides"][SLYTHERIN] == placeholder
        assert "s-chaser-9a" not in json.dumps(events_for(events, seat))
    assert GAME.view(state, SLYTHERIN)["balls"][0]["sides"][SLYTHERIN]["card"]["id"] == "s-chaser-9a"
    assert [e["type"] for e in events_for(events, GRYFFINDOR)] == ["played_face_down"]
    assert "played_face_down_card" in [e["type"] for e in events_for(events, SLYTHERIN)]


def test_the_reveal_shows_both_cards_to_everyone():
    """5.: "Both players turn over their player card at the same time." """
    state, _ = close_window(start([G_HAND, S_HAND], pitch_top=[Q]))
    state, _ = act(state, SLYTHERIN, "play_card", card="s-chaser-9a", ball=Q)
    state, _ = close_window(state)
    state, _ = act(state, GRYFFINDOR, "play_card", card="g-keeper-10", ball=Q)
    state, events = close_window(state)
    revealed = next(e for e in events if e["type"] == "revealed")
    assert "audience" not in revealed
    assert [c["id"] for c in revealed["cards"]] == ["g-keeper-10", "s-chaser-9a"]
    for seat in (GRYFFINDOR, SLYTHERIN, None):
        sides = GAME.view(state, seat)["balls"][0]["sides"]
        assert [s["card"]["id"] for s in sides] == ["g-keeper-10", "s-chaser-9a"]


def test_drawn_cards_are_told_only_to_their_owner():
    """7. Draw: the cards drawn are private, how many is public."""
    state, _ = close_window(start([G_HAND, S_HAND], balls=["p-snitch"]))
    state, events = act(state, SLYTHERIN, "done")
    drew = [e for e in events if e["type"] == "drew"]
    assert drew == [{"type": "drew", "seat": SLYTHERIN, "count": 2}, {"type": "drew", "seat": GRYFFINDOR, "count": 2}]
    private = [e for e in events if e["type"] == "drew_cards"]
    assert [e["audience"] for e in private] == [[SLYTHERIN], [GRYFFINDOR]]
    gryffindor_cards = {c["id"] for c in private[1]["cards"]}
    assert not gryffindor_cards & {c for e in events_for(events, SLYTHERIN) for c in json.dumps(e).split('"')}


def test_error_messages_name_no_hidden_card():
    """A refusal tells the player about their own hand only: a card in the opponent's hand gets the same
    answer as a card still in a deck."""
    state, _ = close_window(start([G_HAND, S_HAND], pitch_top=[Q]))
    state, _ = act(state, SLYTHERIN, "play_card", card="s-chaser-9a", ball=Q)
    state, _ = close_window(state)
    assert GAME.to_act(state) == {GRYFFINDOR}
    messages = {}
    for card in ("s-keeper-6", "s-chaser-10a", "s-chaser-9a"):  # in hand, in the deck, face down
        with pytest.raises(IllegalAction) as error:
            act(state, GRYFFINDOR, "play_card", card=card, ball=Q)
        messages[card] = error.value.message.replace(card, "X")
    assert len(set(messages.values())) == 1, messages


def test_a_card_returned_to_hand_after_its_reveal_leaves_no_id_behind():
    """Wingardium Leviosa: "If your opponent has already played a Player Card on the ball, they must return the
    Player Card to their hand" -- once back in the hand it is hidden again, so no later view or event names
    it; the take-back jinx ("retrieve any one of your cards that has been placed in your discard pile") the
    same. Every step of this scripted round is checked like the property games."""
    state, _ = close_window(start([G_HAND, S_HAND], pitch_top=[Q], discards=(["g-seeker-12"], [])))
    steps = [(SLYTHERIN, {"type": "play_card", "card": "s-chaser-9a", "ball": Q}),
             (SLYTHERIN, {"type": "pass"}), (GRYFFINDOR, {"type": "pass"}),
             (GRYFFINDOR, {"type": "play_card", "card": "g-chaser-4a", "ball": Q}),
             (SLYTHERIN, {"type": "pass"}), (GRYFFINDOR, {"type": "pass"}),
             # revealed: Chaser 9 against Chaser 4; Gryffindor sends the 9 back and takes its Seeker back
             (GRYFFINDOR, {"type": "play_special", "card": "g-wingardium-leviosa", "ball": Q}),
             (GRYFFINDOR, {"type": "play_special", "card": "g-jinx-retrieve", "target": "g-seeker-12"}),
             (SLYTHERIN, {"type": "pass"}), (GRYFFINDOR, {"type": "pass"})]
    for seat, action in steps:
        state, events = GAME.apply(state, seat, action)
        check_view_hides(state)
        check_events_hide(state, events)
    assert {"s-chaser-9a", "g-seeker-12"} <= hidden_ids(state, None)
    assert "s-chaser-9a" in hidden_ids(state, GRYFFINDOR) and "g-seeker-12" in hidden_ids(state, SLYTHERIN)
    assert GAME.view(state, None)["players"][GRYFFINDOR]["score"] == 10  # the Chaser 4 scored, unopposed


def test_deck_order_and_rng_never_shown():
    """SET UP: "Shuffle each deck and set them face down." Views give deck sizes, never contents."""
    state = GAME.setup(GAME.check_options(None, {}, 2), 2, 3)
    for seat in (None, GRYFFINDOR, SLYTHERIN):
        view = GAME.view(state, seat)
        text = json.dumps(view)
        assert str(state["rng"]) not in text
        assert view["pitch_deck_count"] == len(state["pitch_deck"])
        check_view_hides(state)
