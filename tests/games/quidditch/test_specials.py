"""SPECIAL CARDS, SPELL AND JINX CARDS, FOUL AND REFEREE CARDS (seeds/001_7860e6019ee0192e.txt), and the
DESIGN.md priority windows: "after each pitch, each face-down play and each reveal, both players may play
special cards or pass."

In every test Slytherin pitches; Gryffindor answers.
"""

import pytest

from service.engine import IllegalAction, events_for
from service.games.quidditch import GAME

from .helpers import (
    GRYFFINDOR, SLYTHERIN, act, ball, close_window, compared, contest, discard, first, hand, score, start, types,
)

Q = "p-quaffle-01"


def quaffle_round(g_hand, s_hand, **position):
    """Slytherin has pitched a Quaffle; the window after the pitch is open."""
    position.setdefault("pitch_top", [Q])
    return start([g_hand, s_hand], **position)


def special(state, seat, card, **fields):
    return act(state, seat, "play_special", card=card, **fields)


def specials_of(state, seat):
    return [a for a in GAME.legal_actions(state, seat) if a["type"] == "play_special"]


def revealed(g_hand, s_hand, s_card, g_card, **position):
    """Both cards laid on the Quaffle and turned over; the window after the reveal is open."""
    state, _ = close_window(quaffle_round(g_hand, s_hand, **position))
    state = contest(state, s_card, g_card, Q)
    assert state["window"]["after"] == "reveal"
    return state


# -- priority windows ---------------------------------------------------------------------------------------


def test_window_waits_on_both_seats_until_both_pass_in_a_row():
    """DESIGN.md: "after each pitch, each face-down play and each reveal, both players may play special cards
    or pass." House rule: both seats act at once; the window closes when both have passed with no card played
    in between; a card played asks both again."""
    state = quaffle_round(["g-chaser-7a", "g-leg-locker"], ["s-chaser-8a", "s-full-body-bind"])
    assert state["window"]["after"] == "pitch" and GAME.to_act(state) == {0, 1}
    state, _ = act(state, GRYFFINDOR, "pass")
    assert GAME.to_act(state) == {SLYTHERIN} and GAME.legal_actions(state, GRYFFINDOR) == []
    state, _ = special(state, SLYTHERIN, "s-full-body-bind")
    assert GAME.to_act(state) == {0, 1}  # Gryffindor may answer
    assert GAME.view(state, None)["window"]["pending"][0]["card"]["id"] == "s-full-body-bind"
    state, _ = act(state, SLYTHERIN, "pass")
    assert state["window"] is not None
    state, events = act(state, GRYFFINDOR, "pass")
    assert state["window"] is None and state["stage"] == "lead"
    assert types(events, None).count("discarded_from_hand") == 2


def test_a_seat_with_no_cards_is_not_waited_on():
    """House rule: a hand's size is public, so a seat with an empty hand, which has nothing to play, counts as
    having passed."""
    state = quaffle_round([], ["s-chaser-8a", "s-full-body-bind"])
    assert GAME.to_act(state) == {SLYTHERIN}


def test_special_cards_are_played_only_in_windows():
    """SPELL AND JINX CARDS: "You can play Spell and Jinx cards anytime you want" -- turned by DESIGN.md into
    the priority windows, so outside one no special card is offered."""
    state, _ = close_window(quaffle_round(["g-chaser-7a"], ["s-chaser-8a", "s-full-body-bind"]))
    assert state["window"] is None and GAME.to_act(state) == {SLYTHERIN}
    assert specials_of(state, SLYTHERIN) == []
    with pytest.raises(IllegalAction, match="priority windows"):
        special(state, SLYTHERIN, "s-full-body-bind")


def test_windows_open_after_each_face_down_play_and_each_reveal():
    """DESIGN.md: windows "after each pitch, each face-down play and each reveal"."""
    state, _ = close_window(quaffle_round(["g-chaser-7a", "g-referee-a"], ["s-chaser-8a", "s-referee-a"]))
    state, _ = act(state, SLYTHERIN, "play_card", card="s-chaser-8a", ball=Q)
    assert GAME.view(state, None)["window"] == {"after": "play", "ball": Q, "passed": [], "pending": []}
    state, _ = close_window(state)
    state, _ = act(state, GRYFFINDOR, "play_card", card="g-chaser-7a", ball=Q)
    assert GAME.view(state, None)["window"] == {"after": "play", "ball": Q, "passed": [], "pending": []}
    state, _ = close_window(state)
    assert GAME.view(state, None)["window"] == {"after": "reveal", "ball": Q, "passed": [], "pending": []}


def test_a_round_without_a_pitch_opens_with_a_window():
    """SPELL AND JINX CARDS: "You can play Spell and Jinx cards anytime you want - before you or your opponent
    play Player Cards". A round that opens on a Quaffle left in play has no pitch ("the Pitcher for that round
    does not get to lead with a new card"), so a window opens first: here the follower lowers the card the
    pitcher is yet to lay (a Chaser 8 against a Chaser 8 would tie)."""
    state = start([["g-chaser-8a", "g-keeper-6"], ["s-chaser-8a", "s-leg-locker"]], balls=[Q], pitcher=GRYFFINDOR,
                  round=2)
    assert GAME.view(state, None)["window"] == {"after": "round", "ball": None, "passed": [], "pending": []}
    assert GAME.to_act(state) == {GRYFFINDOR, SLYTHERIN}
    assert GAME.legal_actions(state, GRYFFINDOR) == [{"type": "pass"}]  # no special card in that hand
    state, _ = special(state, SLYTHERIN, "s-leg-locker", ball=Q)
    state, _ = close_window(state)
    assert state["window"] is None and GAME.to_act(state) == {GRYFFINDOR}
    state = contest(state, "g-chaser-8a", "s-chaser-8a", Q)
    state, events = close_window(state)
    assert first(events, "ball_won")["compared"] == compared(("chaser", 7), ("chaser", 8))
    assert score(state, SLYTHERIN) == 10


def test_the_window_that_opens_a_round_comes_before_the_choice_to_pitch():
    """8.: "If a Bludger or a Golden Snitch remains in play, the new pitcher may choose to pitch a new ball from
    the deck OR play on the balls already in play" -- the choice is the pitcher's first act, so the window
    ("before you or your opponent play Player Cards") opens before it, and the pitch is still offered after."""
    state = start([["g-chaser-8a", "g-full-body-bind"], ["s-chaser-8a", "s-beater-1a"]], balls=["p-bludger-1"],
                  pitch_top=[Q])
    assert state["window"]["after"] == "round" and GAME.view(state, None)["pitch_available"] is False
    assert {"type": "pitch"} not in GAME.legal_actions(state, SLYTHERIN)
    state, _ = close_window(state)
    assert GAME.view(state, None)["pitch_available"] is True
    assert {"type": "pitch"} in GAME.legal_actions(state, SLYTHERIN)


# -- spells ------------------------------------------------------------------------------------------------


def test_leg_locker_lowers_a_chaser_by_one():
    """Leg-Locker: "This spell card reduces the value of one of your opponent's Beaters, Chasers or Seekers by
    one point." -- Chaser 8 against Chaser 8 would tie; locked, Slytherin's counts 7."""
    state = revealed(["g-chaser-8a", "g-leg-locker"], ["s-chaser-8a", "s-referee-a"], "s-chaser-8a", "g-chaser-8a")
    assert {"type": "play_special", "card": "g-leg-locker", "ball": Q} in specials_of(state, GRYFFINDOR)
    state, events = special(state, GRYFFINDOR, "g-leg-locker", ball=Q)
    assert events == [{"type": "special_played", "seat": GRYFFINDOR, "card": events[0]["card"], "ball": Q}]
    state, events = close_window(state)
    assert {"type": "card_weakened", "seat": SLYTHERIN, "ball": Q, "by": "g-leg-locker"} in events
    assert score(state, GRYFFINDOR) == 10
    # the values compared are the lowered ones (docs/rules/quidditch.md, "Resolving a ball")
    assert first(events, "ball_won")["compared"] == compared(("chaser", 8), ("chaser", 7))
    assert "g-leg-locker" in discard(state, GRYFFINDOR)


def test_leg_locker_makes_a_keeper_useless():
    """Leg-Locker: "When using this spell card on an opponent's Keeper, the Keeper becomes useless." -- a
    Chaser 4 then scores past a Keeper 10."""
    state = revealed(["g-keeper-10", "g-referee-a"], ["s-chaser-4a", "s-leg-locker"], "s-chaser-4a", "g-keeper-10")
    state, _ = special(state, SLYTHERIN, "s-leg-locker", ball=Q)
    state, events = close_window(state)
    assert score(state, SLYTHERIN) == 10
    assert first(events, "ball_won")["compared"] == compared(None, ("chaser", 4))  # the Keeper counted for nothing


def test_leg_locker_before_the_opponent_has_played_waits_for_their_card():
    """SPELL AND JINX CARDS: "before you or your opponent play Player Cards, after, any time at all!" House
    rule: cast on a side of a ball where no card lies yet, it lowers the card laid there this round."""
    state = quaffle_round(["g-chaser-8a", "g-referee-a"], ["s-chaser-8a", "s-leg-locker"])
    state, _ = special(state, SLYTHERIN, "s-leg-locker", ball=Q)
    state, _ = close_window(state)
    assert ball(state, Q)["sides"][GRYFFINDOR]["modifiers"] == ["leg_locker"]
    state = contest(state, "s-chaser-8a", "g-chaser-8a", Q)
    state, _ = close_window(state)
    assert score(state, SLYTHERIN) == 10


def test_full_body_bind_discards_two_random_cards_and_the_hand_refills_to_seven():
    """Full Body-Bind: "Take 2 cards at random from your opponent's hand and discard them. At the beginning of
    the next turn, they may return their hand to 7 cards." """
    g_hand = ["g-chaser-4a", "g-chaser-5a", "g-chaser-6a", "g-chaser-7a", "g-chaser-8a", "g-chaser-9a",
              "g-chaser-10a"]
    state = quaffle_round(g_hand, ["s-chaser-8a", "s-full-body-bind"])
    state, _ = special(state, SLYTHERIN, "s-full-body-bind")
    state, events = close_window(state)
    lost = [e["card"]["id"] for e in events if e["type"] == "discarded_from_hand"]
    assert len(lost) == 2 and set(lost) <= set(g_hand)
    assert sorted(hand(state, GRYFFINDOR)) == sorted(set(g_hand) - set(lost))
    state = contest(state, "s-chaser-8a", hand(state, GRYFFINDOR)[0], Q)
    state, _ = close_window(state)
    assert GAME.view(state, None)["players"][GRYFFINDOR]["hand_count"] == 7  # not a Bludger: back to 7


def test_alohomora_cancels_a_spell_played_against_you():
    """Alohomora: "This spell card cancels any other spell or jinx card that has been played against you." """
    state = revealed(["g-chaser-8a", "g-alohomora", "g-beater-3b"], ["s-chaser-8a", "s-leg-locker", "s-beater-3b"],
                     "s-chaser-8a", "g-chaser-8a")
    state, _ = special(state, SLYTHERIN, "s-leg-locker", ball=Q)
    assert {"type": "play_special", "card": "g-alohomora", "target": "s-leg-locker"} in specials_of(state, GRYFFINDOR)
    state, _ = special(state, GRYFFINDOR, "g-alohomora", target="s-leg-locker")
    state, events = close_window(state)
    assert {"type": "special_cancelled", "seat": SLYTHERIN, "card": "s-leg-locker", "by": "g-alohomora"} in events
    assert "card_weakened" not in types(events)
    assert first(events, "ball_stays")["compared"] == compared(("chaser", 8), ("chaser", 8))  # a tie
    assert "s-leg-locker" in discard(state, SLYTHERIN) and "g-alohomora" in discard(state, GRYFFINDOR)


def test_alohomora_cancels_a_jinx_played_against_you():
    """Alohomora cancels "any other spell or jinx card" -- here "Take 1 card from opponent and discard"."""
    state = quaffle_round(["g-chaser-8a", "g-alohomora", "g-keeper-6"], ["s-chaser-8a", "s-jinx-discard"])
    state, _ = special(state, SLYTHERIN, "s-jinx-discard")
    state, _ = special(state, GRYFFINDOR, "g-alohomora", target="s-jinx-discard")
    state, events = close_window(state)
    assert "discarded_from_hand" not in types(events)
    assert sorted(hand(state, GRYFFINDOR)) == ["g-chaser-8a", "g-keeper-6"]


def test_alohomora_against_alohomora():
    """Alohomora cancels "any other spell ... played against you" -- an Alohomora is a spell played against
    you too. House rule: cancels are settled latest first, so the answered Alohomora cancels nothing."""
    state = revealed(["g-chaser-8a", "g-alohomora", "g-beater-3b"],
                     ["s-chaser-8a", "s-leg-locker", "s-alohomora", "s-beater-3b"], "s-chaser-8a", "g-chaser-8a")
    state, _ = special(state, SLYTHERIN, "s-leg-locker", ball=Q)
    state, _ = special(state, GRYFFINDOR, "g-alohomora", target="s-leg-locker")
    state, _ = special(state, SLYTHERIN, "s-alohomora", target="g-alohomora")
    state, events = close_window(state)
    assert {"type": "special_cancelled", "seat": GRYFFINDOR, "card": "g-alohomora", "by": "s-alohomora"} in events
    assert {"type": "card_weakened", "seat": GRYFFINDOR, "ball": Q, "by": "s-leg-locker"} in events
    assert score(state, SLYTHERIN) == 10  # Chaser 8 against a Chaser 8 reduced to 7


def test_alohomora_cannot_cancel_a_foul_or_a_take_back():
    """Alohomora cancels "spell or jinx card[s] ... played against you"; "Fouls are useful weapons, and only a
    Referee Card can cancel them"; taking back your own card is not played against the opponent."""
    state = revealed(["g-keeper-10", "g-alohomora"], ["s-beater-3a", "s-foul-remove-keeper", "s-jinx-retrieve"],
                     "s-beater-3a", "g-keeper-10", discards=([], ["s-seeker-12"]))
    state, _ = special(state, SLYTHERIN, "s-foul-remove-keeper", ball=Q)
    state, _ = special(state, SLYTHERIN, "s-jinx-retrieve", target="s-seeker-12")
    assert specials_of(state, GRYFFINDOR) == []
    with pytest.raises(IllegalAction):
        special(state, GRYFFINDOR, "g-alohomora", target="s-foul-remove-keeper")


def test_wingardium_leviosa_stops_the_opponent_playing_on_a_ball():
    """Wingardium Leviosa: "This spell card prevents your opponent from playing on a ball. You decide which
    ball, if more than one is in play." Cast by the pitcher, it keeps the opponent from answering the
    pitcher's card ("If the pitcher plays on a ball, the opposing player must also play on the ball"); the
    side left empty counts as a sacrifice (house rule), so "Your opponent wins the Quaffle, provided they
    played a Player Card"."""
    state, _ = close_window(quaffle_round(["g-chaser-10a", "g-leg-locker"], ["s-chaser-4a", "s-wingardium-leviosa"],
                                          balls=["p-bludger-1"]))
    state, _ = act(state, SLYTHERIN, "pitch")
    actions = specials_of(state, SLYTHERIN)
    assert {a["ball"] for a in actions if a["card"] == "s-wingardium-leviosa"} == {"p-bludger-1", Q}
    state, _ = special(state, SLYTHERIN, "s-wingardium-leviosa", ball=Q)
    state, events = close_window(state)
    assert {"type": "ball_locked", "seat": GRYFFINDOR, "ball": Q, "by": "s-wingardium-leviosa"} in events
    side = ball(state, Q)["sides"][GRYFFINDOR]
    assert side["locked"] is True and side["locked_by"] == "wingardium_leviosa"
    state, _ = act(state, SLYTHERIN, "play_card", card="s-chaser-4a", ball=Q)
    # Gryffindor may name neither the Quaffle with a card nor with a spell
    assert all(a.get("ball") != Q for a in specials_of(state, GRYFFINDOR))
    state, _ = close_window(state)
    # Gryffindor has nothing it may play on: straight to the reveal of Slytherin's lone Chaser
    assert GAME.view(state, None)["window"]["after"] == "reveal"
    state, _ = close_window(state)
    assert score(state, SLYTHERIN) == 10


def test_wingardium_leviosa_on_a_card_already_played_returns_it_to_hand():
    """Wingardium Leviosa: "If your opponent has already played a Player Card on the ball, they must return the
    Player Card to their hand." The card goes back unseen: Gryffindor never learns which it was. Cast by the
    follower on the pitcher's card, it leaves nothing to answer -- "if the pitcher plays on a ball, the
    opposing player must also play on the ball" -- so the follower may not play there either; the lone-card
    win belongs to the jinx "Opponent can't play on a ball" ("if you play the proper Player Card on the ball,
    you automatically win that ball"), not to this spell."""
    state, _ = close_window(quaffle_round(["g-chaser-4a", "g-beater-1a", "g-wingardium-leviosa"],
                                          ["s-chaser-10a", "s-beater-3a", "s-keeper-6"], balls=["p-bludger-1"]))
    state, _ = act(state, SLYTHERIN, "pitch")
    state, _ = close_window(state)
    state, _ = act(state, SLYTHERIN, "play_card", card="s-chaser-10a", ball=Q)
    state, _ = special(state, GRYFFINDOR, "g-wingardium-leviosa", ball=Q)
    state, events = close_window(state)
    assert "s-chaser-10a" in hand(state, SLYTHERIN)
    assert {"type": "card_returned", "seat": SLYTHERIN, "ball": Q, "by": "g-wingardium-leviosa"} in events
    assert "s-chaser-10a" not in str(events_for(events, GRYFFINDOR))
    assert "s-chaser-10a" in str(events_for(events, SLYTHERIN))
    side = ball(state, Q)["sides"][SLYTHERIN]
    assert side == {"seat": SLYTHERIN, "occupied": False, "card": None, "locked": True,
                    "locked_by": "wingardium_leviosa", "modifiers": []}
    # Slytherin, locked out of the Quaffle, no longer must play on it; it plays on the Bludger
    assert {"type": "done"} in GAME.legal_actions(state, SLYTHERIN)
    with pytest.raises(IllegalAction, match="Wingardium Leviosa keeps you off that ball"):
        act(state, SLYTHERIN, "play_card", card="s-chaser-10a", ball=Q)
    state, _ = act(state, SLYTHERIN, "play_card", card="s-beater-3a", ball="p-bludger-1")
    state, _ = close_window(state)
    assert state["stage"] == "follow"  # nothing left Slytherin may play on: its lead ended by itself
    # Gryffindor answers the Bludger, and only the Bludger: no card of Slytherin's lies on the Quaffle
    legal = GAME.legal_actions(state, GRYFFINDOR)
    assert {a["ball"] for a in legal if a["type"] == "play_card"} == {"p-bludger-1"}
    with pytest.raises(IllegalAction, match="only on the balls the pitcher has a card on"):
        act(state, GRYFFINDOR, "play_card", card="g-chaser-4a", ball=Q)
    state, _ = act(state, GRYFFINDOR, "play_card", card="g-beater-1a", ball="p-bludger-1")
    state, _ = close_window(state)
    state, events = close_window(state)
    assert "round_ended" in types(events)
    assert ball(state, Q) is not None and score(state, GRYFFINDOR) == score(state, SLYTHERIN) == 0


def test_wingardium_leviosa_cast_before_the_pitcher_plays_wins_the_follower_nothing():
    """Wingardium Leviosa only "prevents your opponent from playing on a ball"; "If the pitcher plays on a ball,
    the opposing player must also play on the ball" -- and only then. Cast by the follower on a freshly
    pitched Golden Snitch, it keeps the pitcher off it, and the follower's Seeker may not be laid there alone:
    the Snitch stays in play, the game goes on."""
    state = start([["g-seeker-11", "g-wingardium-leviosa", "g-chaser-4a"], ["s-chaser-10a", "s-keeper-6"]],
                  pitch_top=["p-snitch"])
    state, _ = special(state, GRYFFINDOR, "g-wingardium-leviosa", ball="p-snitch")
    state, events = close_window(state)
    assert {"type": "ball_locked", "seat": SLYTHERIN, "ball": "p-snitch", "by": "g-wingardium-leviosa"} in events
    # Slytherin has nothing it may play on, Gryffindor nothing to answer: the round ends by itself
    assert "round_ended" in types(events)
    assert GAME.result(state) is None and ball(state, "p-snitch") is not None
    assert "g-seeker-11" in hand(state, GRYFFINDOR)


def test_wingardium_leviosa_after_both_played_leaves_the_casters_card_alone():
    """Wingardium Leviosa: "If your opponent has already played a Player Card on the ball, they must return the
    Player Card to their hand." Cast once both cards are down, the caster's card stays and faces an empty side,
    which counts as a sacrifice (house rule): "Your opponent wins the Quaffle, provided they played a Player
    Card"."""
    state, _ = close_window(quaffle_round(["g-chaser-4a", "g-wingardium-leviosa"], ["s-chaser-10a", "s-keeper-6"]))
    state, _ = act(state, SLYTHERIN, "play_card", card="s-chaser-10a", ball=Q)
    state, _ = close_window(state)
    state, _ = act(state, GRYFFINDOR, "play_card", card="g-chaser-4a", ball=Q)
    state, _ = special(state, GRYFFINDOR, "g-wingardium-leviosa", ball=Q)
    state, _ = close_window(state)
    assert "s-chaser-10a" in hand(state, SLYTHERIN)
    state, events = close_window(state)
    assert score(state, GRYFFINDOR) == 10
    assert first(events, "ball_won")["compared"] == compared(("chaser", 4), None)


def test_wingardium_leviosa_after_the_reveal_takes_the_card_off_the_ball():
    """Wingardium Leviosa on a card already played, after the reveal: the Keeper that blocked goes back to its
    owner's hand, so the Chaser wins ("provided they played a Player Card")."""
    state = revealed(["g-keeper-10", "g-referee-a"], ["s-chaser-4a", "s-wingardium-leviosa"],
                     "s-chaser-4a", "g-keeper-10")
    state, _ = special(state, SLYTHERIN, "s-wingardium-leviosa", ball=Q)
    state, _ = close_window(state)
    assert score(state, SLYTHERIN) == 10
    assert "g-keeper-10" in hand(state, GRYFFINDOR)


def test_a_beater_against_a_locked_out_side_wins_the_bludger():
    """PLAYING ON A BLUDGER: "If you play a Beater and your opponent plays any other type of card ..., the
    Beater always wins" -- and a side left empty by Wingardium Leviosa counts as a sacrifice (house rule), so
    the locked-out player is Bludgered all the same."""
    state = start([["g-beater-3a", "g-chaser-4a", "g-keeper-6"],
                   ["s-beater-1a", "s-wingardium-leviosa", "s-chaser-4a"]], pitch_top=["p-bludger-1"])
    state, _ = special(state, SLYTHERIN, "s-wingardium-leviosa", ball="p-bludger-1")
    state, _ = close_window(state)
    state, _ = act(state, SLYTHERIN, "play_card", card="s-beater-1a", ball="p-bludger-1")
    state, _ = close_window(state)
    assert GAME.view(state, None)["window"]["after"] == "reveal"  # Gryffindor could not answer
    state, events = close_window(state)
    assert {"type": "bludgered", "seat": GRYFFINDOR, "hits": 1} in events
    assert GAME.view(state, None)["players"][GRYFFINDOR]["hand_count"] == 6


def test_alohomora_saves_a_card_from_wingardium_leviosa():
    """Alohomora "cancels any other spell or jinx card that has been played against you"."""
    state, _ = close_window(quaffle_round(["g-chaser-4a", "g-wingardium-leviosa"], ["s-chaser-10a", "s-alohomora"]))
    state, _ = act(state, SLYTHERIN, "play_card", card="s-chaser-10a", ball=Q)
    state, _ = special(state, GRYFFINDOR, "g-wingardium-leviosa", ball=Q)
    state, _ = special(state, SLYTHERIN, "s-alohomora", target="g-wingardium-leviosa")
    state, _ = close_window(state)
    assert ball(state, Q)["sides"][SLYTHERIN]["occupied"] is True
    assert ball(state, Q)["sides"][SLYTHERIN]["locked"] is False


# -- jinxes ------------------------------------------------------------------------------------------------


def test_jinx_reduces_a_keeper_by_two():
    """"Reduce opponent's card by 2 points." This card reduces the value of your opponent's Beater, Chaser,
    Seeker or Keeper by two points." -- a Keeper 10 falls to 8 and a Chaser 9 scores."""
    state = revealed(["g-keeper-10", "g-referee-a"], ["s-chaser-9a", "s-jinx-reduce"], "s-chaser-9a", "g-keeper-10")
    state, _ = special(state, SLYTHERIN, "s-jinx-reduce", ball=Q)
    state, _ = close_window(state)
    assert score(state, SLYTHERIN) == 10


def test_a_keeper_blocks_a_seeker_brought_below_it():
    """PLAYING FOR A QUAFFLE: "If you played a Keeper with an equal or higher value than your opponent's Player
    Card ..., you blocked the goal and saved the Quaffle, but you didn't win it." The Reduce jinx ("reduces
    the value of your opponent's Beater, Chaser, Seeker or Keeper by two points") brings a Seeker 11, which
    would win on value, down to 9, under a Keeper 10."""
    state = revealed(["g-keeper-10", "g-jinx-reduce"], ["s-seeker-11", "s-referee-a"], "s-seeker-11", "g-keeper-10")
    state, _ = special(state, GRYFFINDOR, "g-jinx-reduce", ball=Q)
    state, events = close_window(state)
    assert first(events, "ball_stays")["compared"] == compared(("keeper", 10), ("seeker", 9))
    assert score(state, GRYFFINDOR) == score(state, SLYTHERIN) == 0


def test_reduced_values_stop_at_zero():
    """House rule (docs/rules/quidditch.md): values never go below 0 -- a Beater 1 reduced by 2 ties a Beater 2
    reduced by 2 (both 0), so the Bludger stays."""
    state, _ = close_window(start([["g-beater-2a", "g-jinx-reduce", "g-chaser-4a"],
                                   ["s-beater-1a", "s-jinx-reduce", "s-chaser-4a"]],
                                  pitch_top=["p-bludger-1"]))
    state = contest(state, "s-beater-1a", "g-beater-2a", "p-bludger-1")
    state, _ = special(state, SLYTHERIN, "s-jinx-reduce", ball="p-bludger-1")
    state, _ = special(state, GRYFFINDOR, "g-jinx-reduce", ball="p-bludger-1")
    state, events = close_window(state)
    assert first(events, "ball_stays")["compared"] == compared(("beater", 0), ("beater", 0))


def test_jinx_takes_one_random_card():
    """"Take 1 card from opponent and discard." This card allows you to take 1 card at random from your
    opponent's hand and discard it. At the beginning of the next round, your opponent may draw enough cards to
    return their hand to 7."""
    state = quaffle_round(["g-chaser-7a", "g-jinx-discard"], ["s-chaser-8a", "s-keeper-6", "s-beater-1a"])
    state, _ = special(state, GRYFFINDOR, "g-jinx-discard")
    state, events = close_window(state)
    lost = [e for e in events if e["type"] == "discarded_from_hand"]
    assert len(lost) == 1 and lost[0]["seat"] == SLYTHERIN and lost[0]["cause"] == "g-jinx-discard"
    assert len(hand(state, SLYTHERIN)) == 2


def test_jinx_discards_a_played_card_and_locks_the_ball():
    """"Opponent can't play on a ball." This card allows you to select any Player Card your opponent has played
    on a ball and discard it. Your opponent can play no further cards (Player or Special) on the ball you
    jinxed. You do not have to play on the ball once your opponent's card has been discarded. However, if you
    play the proper Player Card on the ball, you automatically win that ball." """
    state, _ = close_window(quaffle_round(["g-chaser-4a", "g-jinx-block"],
                                          ["s-chaser-10a", "s-leg-locker", "s-keeper-6"]))
    # before Slytherin has played, there is nothing to discard: the jinx is not offered
    state, _ = act(state, SLYTHERIN, "play_card", card="s-chaser-10a", ball=Q)
    assert {"type": "play_special", "card": "g-jinx-block", "ball": Q} in specials_of(state, GRYFFINDOR)
    state, _ = special(state, GRYFFINDOR, "g-jinx-block", ball=Q)
    state, events = close_window(state)
    removed = next(e for e in events if e["type"] == "card_removed")
    assert removed["seat"] == SLYTHERIN and removed["card"]["id"] == "s-chaser-10a"
    assert "s-chaser-10a" in discard(state, SLYTHERIN)
    assert ball(state, Q)["sides"][SLYTHERIN]["locked_by"] == "jinx_block"
    assert state["stage"] == "follow"
    assert {"type": "done"} in GAME.legal_actions(state, GRYFFINDOR)  # "You do not have to play on the ball"
    state, _ = act(state, GRYFFINDOR, "play_card", card="g-chaser-4a", ball=Q)
    # "no further cards (Player or Special)": Slytherin's Leg-Locker cannot name the Quaffle
    assert all(a.get("ball") != Q for a in specials_of(state, SLYTHERIN))
    state, _ = close_window(state)
    state, _ = close_window(state)
    assert score(state, GRYFFINDOR) == 10


def test_jinx_lock_without_playing_leaves_the_quaffle():
    """The same jinx: "You do not have to play on the ball" -- and if nobody does, nobody wins it."""
    state, _ = close_window(quaffle_round(["g-chaser-4a", "g-jinx-block"], ["s-chaser-10a", "s-keeper-6"]))
    state, _ = act(state, SLYTHERIN, "play_card", card="s-chaser-10a", ball=Q)
    state, _ = special(state, GRYFFINDOR, "g-jinx-block", ball=Q)
    state, _ = close_window(state)
    state, events = act(state, GRYFFINDOR, "done")
    assert "round_ended" in types(events) and ball(state, Q) is not None


def test_jinx_takes_back_a_card_from_the_discard_pile():
    """"Take back any card from your card pile." This card allows you to retrieve any one of your cards that has
    been placed in your discard pile. This is a useful way to recover a Player Card - such as a Seeker"."""
    state = quaffle_round(["g-chaser-4a", "g-jinx-retrieve"], ["s-chaser-10a", "s-keeper-6"],
                          discards=(["g-seeker-12", "g-beater-1a"], []))
    offered = [a["target"] for a in specials_of(state, GRYFFINDOR) if a["card"] == "g-jinx-retrieve"]
    assert sorted(offered) == ["g-beater-1a", "g-seeker-12"]  # any card in the pile
    state, _ = special(state, GRYFFINDOR, "g-jinx-retrieve", target="g-seeker-12")
    state, events = close_window(state)
    assert "g-seeker-12" in hand(state, GRYFFINDOR)
    assert discard(state, GRYFFINDOR) == ["g-beater-1a", "g-jinx-retrieve"]
    # the public event says what came back, not which card (it is in a hand now)
    assert {"type": "card_taken_back", "seat": GRYFFINDOR, "kind": "seeker", "value": 12} in events
    assert "g-seeker-12" not in str(events_for(events, SLYTHERIN))


def test_take_back_cannot_take_itself_back():
    """The jinx retrieves a card "that has been placed in your discard pile"; while it is being played it lies
    face up on the table, not in the pile, so it cannot name itself (and it is the only one in the deck)."""
    state = quaffle_round(["g-chaser-4a", "g-jinx-retrieve"], ["s-chaser-10a"])
    assert all(a["card"] != "g-jinx-retrieve" for a in specials_of(state, GRYFFINDOR))  # empty pile: nothing


# -- fouls and the referee --------------------------------------------------------------------------------


def test_remove_keeper_foul_scores_with_any_player_card():
    """Foul: "Remove opponent's Keeper." - This card can only be played on your opponent after they have played
    a Keeper on a Quaffle, and it allows you to score a Quaffle using any Player Card." """
    state = revealed(["g-keeper-10", "g-chaser-5a"], ["s-beater-1a", "s-foul-remove-keeper"], "s-beater-1a",
                     "g-keeper-10")
    state, _ = special(state, SLYTHERIN, "s-foul-remove-keeper", ball=Q)
    state, events = close_window(state)
    assert {"type": "ball_won", "ball": Q, "seat": SLYTHERIN, "by": "foul"} in events
    assert score(state, SLYTHERIN) == 10
    assert "g-keeper-10" in discard(state, GRYFFINDOR)


def test_remove_keeper_foul_needs_a_revealed_keeper():
    """"Fouls can only be used after your opponent has revealed their Player Cards on the pitch" and this one
    "only ... after they have played a Keeper on a Quaffle"."""
    state, _ = close_window(quaffle_round(["g-keeper-10", "g-chaser-5a"],
                                          ["s-beater-1a", "s-foul-remove-keeper", "s-chaser-9a"]))
    state, _ = act(state, SLYTHERIN, "play_card", card="s-beater-1a", ball=Q)
    state, _ = close_window(state)
    state, _ = act(state, GRYFFINDOR, "play_card", card="g-keeper-10", ball=Q)
    assert specials_of(state, SLYTHERIN) == []  # face down still: too early
    state, _ = close_window(state)
    assert specials_of(state, SLYTHERIN) == [{"type": "play_special", "card": "s-foul-remove-keeper", "ball": Q}]
    state = revealed(["g-chaser-5a", "g-chaser-6a"], ["s-beater-1a", "s-foul-remove-keeper"], "s-beater-1a",
                     "g-chaser-5a")
    assert specials_of(state, SLYTHERIN) == []  # no Keeper to remove


def test_free_goal_foul_wins_the_quaffle_even_after_a_sacrifice():
    """Foul: "Free Goal." - Use this when a Quaffle is in play. You'll win the Quaffle, no matter the value of
    your opponent's Player Card, and even if you had to play a Special Card as a discard on that Quaffle." """
    state = revealed(["g-chaser-10a", "g-keeper-6"], ["s-referee-a", "s-foul-free-goal"], "s-referee-a",
                     "g-chaser-10a")
    state, _ = special(state, SLYTHERIN, "s-foul-free-goal", ball=Q)
    state, events = close_window(state)
    assert {"type": "ball_won", "ball": Q, "seat": SLYTHERIN, "by": "foul"} in events
    assert score(state, SLYTHERIN) == 10 and score(state, GRYFFINDOR) == 0
    assert {"s-referee-a", "s-foul-free-goal"} <= set(discard(state, SLYTHERIN))


@pytest.mark.parametrize("ball_id", ["p-snitch", "p-bludger-1"])
def test_fouls_do_not_win_other_balls(ball_id):
    """"NOTE: The Golden Snitch cannot be won by the use of a Foul Card." Both fouls name a Quaffle ("Use this
    when a Quaffle is in play"; "after they have played a Keeper on a Quaffle")."""
    state, _ = close_window(start([["g-seeker-11", "g-keeper-6"], ["s-chaser-4a", "s-foul-free-goal",
                                                                    "s-foul-remove-keeper"]], pitch_top=[ball_id]))
    state = contest(state, "s-chaser-4a", "g-seeker-11", ball_id)
    assert state["window"]["after"] == "reveal"
    assert specials_of(state, SLYTHERIN) == []


def test_referee_cancels_a_free_goal():
    """"Referee Card - A Referee cancels any Foul." -- "only a Referee Card can cancel them"."""
    state = revealed(["g-chaser-10a", "g-referee-a", "g-beater-3b"],
                     ["s-referee-a", "s-foul-free-goal", "s-beater-3b"], "s-referee-a", "g-chaser-10a")
    state, _ = special(state, SLYTHERIN, "s-foul-free-goal", ball=Q)
    assert specials_of(state, GRYFFINDOR) == [
        {"type": "play_special", "card": "g-referee-a", "target": "s-foul-free-goal"}]
    state, _ = special(state, GRYFFINDOR, "g-referee-a", target="s-foul-free-goal")
    state, events = close_window(state)
    cancelled = {"type": "special_cancelled", "seat": SLYTHERIN, "card": "s-foul-free-goal", "by": "g-referee-a"}
    assert cancelled in events
    # the foul gone, the cards decide: a Chaser against a sacrifice
    assert score(state, GRYFFINDOR) == 10 and score(state, SLYTHERIN) == 0


def test_referee_cancels_a_remove_keeper_foul():
    """"A Referee cancels any Foul." -- the Keeper stays and blocks the Beater."""
    state = revealed(["g-keeper-10", "g-referee-b", "g-beater-3b"],
                     ["s-beater-1a", "s-foul-remove-keeper", "s-beater-3b"], "s-beater-1a", "g-keeper-10")
    state, _ = special(state, SLYTHERIN, "s-foul-remove-keeper", ball=Q)
    state, _ = special(state, GRYFFINDOR, "g-referee-b", target="s-foul-remove-keeper")
    state, events = close_window(state)
    assert "card_removed" not in types(events)
    assert first(events, "ball_stays")["compared"] == compared(("keeper", 10), ("beater", 1))


def test_referee_needs_an_opponents_foul():
    """A Referee "cancels any Foul": with no foul played it has nothing to do and is not offered; it does not
    answer its owner's own foul, nor a spell."""
    state = revealed(["g-chaser-10a", "g-referee-a", "g-foul-free-goal"], ["s-chaser-9a", "s-leg-locker"],
                     "s-chaser-9a", "g-chaser-10a")
    assert all(a["card"] != "g-referee-a" for a in specials_of(state, GRYFFINDOR))
    state, _ = special(state, GRYFFINDOR, "g-foul-free-goal", ball=Q)
    assert all(a["card"] != "g-referee-a" for a in specials_of(state, GRYFFINDOR))
    state, _ = special(state, SLYTHERIN, "s-leg-locker", ball=Q)
    assert all(a["card"] != "g-referee-a" for a in specials_of(state, GRYFFINDOR))


def test_one_referee_per_foul_is_offered():
    """A second Referee on a foul already cancelled would do nothing: the game does not offer it."""
    state = revealed(["g-chaser-10a", "g-referee-a", "g-referee-b"], ["s-referee-a", "s-foul-free-goal"],
                     "s-referee-a", "g-chaser-10a")
    state, _ = special(state, SLYTHERIN, "s-foul-free-goal", ball=Q)
    state, _ = special(state, GRYFFINDOR, "g-referee-a", target="s-foul-free-goal")
    assert all(a["card"] != "g-referee-b" for a in specials_of(state, GRYFFINDOR))


def test_fouls_on_both_sides_each_need_their_own_referee():
    """"A Referee cancels any Foul": one foul each way, one Referee -- the unanswered foul stands. Both fouls
    name the same Quaffle; the Referee cancels Slytherin's, so Gryffindor's Free Goal scores."""
    state = revealed(["g-chaser-5a", "g-foul-free-goal", "g-referee-a"], ["s-chaser-6a", "s-foul-free-goal"],
                     "s-chaser-6a", "g-chaser-5a")
    state, _ = special(state, SLYTHERIN, "s-foul-free-goal", ball=Q)
    state, _ = special(state, GRYFFINDOR, "g-foul-free-goal", ball=Q)
    state, _ = special(state, GRYFFINDOR, "g-referee-a", target="s-foul-free-goal")
    state, _ = close_window(state)
    assert score(state, GRYFFINDOR) == 10 and score(state, SLYTHERIN) == 0


@pytest.mark.parametrize("first", [SLYTHERIN, GRYFFINDOR])
def test_effects_resolve_in_the_order_played(first):
    """SPECIAL CARDS: "The effects of Special Cards must be resolved in the order in which they are played. ...
    If you cast a Spell moments before your opponent does, your spell takes effect first, then your
    opponent's." -- two Free Goals on one Quaffle: the first played wins it, the second finds it gone."""
    state = revealed(["g-chaser-5a", "g-foul-free-goal", "g-beater-3b"],
                     ["s-chaser-6a", "s-foul-free-goal", "s-beater-3b"], "s-chaser-6a", "g-chaser-5a")
    cards = {SLYTHERIN: "s-foul-free-goal", GRYFFINDOR: "g-foul-free-goal"}
    state, _ = special(state, first, cards[first], ball=Q)
    state, _ = special(state, 1 - first, cards[1 - first], ball=Q)
    state, events = close_window(state)
    assert score(state, first) == 10 and score(state, 1 - first) == 0
    assert {"type": "special_no_effect", "seat": 1 - first, "card": cards[1 - first]} in events
