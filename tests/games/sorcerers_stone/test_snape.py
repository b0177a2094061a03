"""Snape's Challenge: Secret Potions (rule book 002_5ac5154540885c00.txt, GAME 6,
and "SNAPE'S CHALLENGE All rules are the same, except that: 1. Each player
starts with only two cards. 2. The game ends when one player collects the
lowest-numbered S and lowest-numbered R Potions Cards.").

Rule tests drive the ``snape`` variant through ``GAME``, the games in order
through a match of Quirrell's Challenge, Snape's Challenge and the Mirror of
Erised (``SorcerersStone(chain=...)``, the real boards), and the board
functions on hand-built boards for the corners; house rules are in
/tmp/ss_docs/snape.md (merged into docs/rules/sorcerers-stone.md).
"""

from __future__ import annotations

import collections

import jsonschema
import pytest

from service.engine import Rng, clone, events_for
from service.games.sorcerers_stone import GAME, mirror, quirrell, snape
from service.games.sorcerers_stone.game import SorcerersStone
from tests.games.contract import PROPERTY_GAMES, check_contract, random_playout

#: The games in order from Quirrell's Challenge on: the boards around Snape's Challenge.
TAIL = SorcerersStone(chain=(quirrell, snape, mirror))
SPACES = ["13S", "12S", "11S", "13R", "12R", "11R", "10S"]
VIEW = jsonschema.Draft202012Validator(snape.SCHEMA["view"])


def new(seats: int = 2, seed: int = 1) -> dict:
    return GAME.setup(GAME.check_options("snape", {}, seats), seats, seed)


def make(hands, *, mode: str = "individual", spaces=SPACES, up=None, discard=(), out=(), deck=None,
         pieces=None, reshuffles: int = 2, status=None) -> dict:
    """A hand-built board in play: ``hands`` per seat; the cards not placed
    elsewhere make the draw pile (its top is the last card), potions first."""
    seats = len(hands)
    placed = [c for h in hands for c in h] + list(spaces) + list(discard) + list(out)
    if deck is None:
        deck = list(snape.CARDS)
        for card in placed:
            deck.remove(card)
        deck.reverse()  # incantations at the bottom, the lowest potions on top
    else:
        rest = list(snape.CARDS)
        for card in placed + list(deck):
            rest.remove(card)
        out = list(out) + rest  # whatever is left over lies out of play
    return {
        "mode": mode, "seats": seats, "arrived": list(range(seats)), "ranks": [None] * seats,
        "status": list(status or ["playing"] * seats), "spaces": list(spaces),
        "up": list(up or [False] * len(spaces)), "deck": list(deck), "discard": list(discard), "out": list(out),
        "hands": [list(h) for h in hands], "pieces": list(pieces or [0 if h else None for h in hands]),
        "reshuffles": reshuffles, "setup": [], "turn": None, "giveaway": None, "claims": [], "finished": [],
        "winner": None,
    }


def act(board: dict, seat: int, action: dict, seed: int = 7):
    assert action in snape.legal_actions(board, seat), (action, snape.legal_actions(board, seat))
    return snape.play(board, seat, action, Rng(seed))


def start(board: dict, seat: int) -> None:
    snape.begin_turn(board, seat, Rng(0))


def types(events) -> list[str]:
    return [e["type"] for e in events]


def all_cards(board: dict) -> list[str]:
    cards = board["spaces"] + board["deck"] + board["discard"] + board["out"] + [c for h in board["hands"] for c in h]
    if board["giveaway"]:
        cards += board["giveaway"]["mixed"]
    return sorted(cards)


def regular(state: dict) -> bool:
    """Whether the seat to act has its regular turn (no out-of-turn decision)."""
    return GAME._owner(state) is None


# -- set-up ------------------------------------------------------------------------------------------


def test_components_and_set_up():
    """COMPONENTS: "26 Potions Cards, 14 Incantations Cards". SET UP: "2. Shuffle
    the Potions Cards and place seven Potions cards on the game board, face
    down. 3. Combine the remaining Potions Cards and the Incantations Cards,
    shuffle, and deal two cards to each player." Individually: "1. Each player
    starts with only two cards." House rule: 3 each of TAKE ANOTHER TURN, STEAL,
    LOOK, LOSE YOUR TURN, 2 NETTLE WINE."""
    assert sorted(snape.POTIONS) == sorted([f"{n}{k}" for n in range(1, 14) for k in "SR"])
    assert collections.Counter(c for c in snape.CARDS if not snape.is_potion(c)) == {
        "another_turn": 3, "steal": 3, "look": 3, "lose_turn": 3, "nettle_wine": 2}
    for seats in (2, 3, 4):
        board = new(seats, seed=seats)["boards"]["snape"]
        assert len(board["spaces"]) == 7 and all(snape.is_potion(c) for c in board["spaces"])
        assert board["up"] == [False] * 7
        assert [len(h) for h in board["hands"]] == [2] * seats
        assert len(board["deck"]) == 40 - 7 - 2 * seats and board["discard"] == []
        assert all_cards(board) == sorted(snape.CARDS)


def test_individual_pieces_then_the_youngest_goes_first():
    """SET UP: "The player then places his/her playing piece on top of one of
    his/her cards." House rule: each seat places its piece (a decision, in seat
    order), then "the youngest player" (seat 0) goes first, as in the other
    individual games."""
    state = new(3)
    for seat in range(3):
        assert GAME.to_act(state) == {seat}
        assert GAME.legal_actions(state, seat) == [{"type": "snape_piece", "position": 0},
                                                   {"type": "snape_piece", "position": 1}]
        state, _ = GAME.apply(state, seat, {"type": "snape_piece", "position": seat % 2})
    board = state["boards"]["snape"]
    assert board["pieces"] == [0, 1, 0]
    assert GAME.to_act(state) == {0} and regular(state) and state["turn"] == 0
    assert {"type": "snape_draw"} in GAME.legal_actions(state, 0)
    assert GAME.view(state, None)["boards"]["snape"]["phase"] == "play"


def test_play_waits_until_everyone_has_arrived():
    """SET UP "1. Play does not start until all players have reached Snape's
    Challenge." Nothing is dealt and nobody can play before the last arrives."""
    board = snape.new_board(Rng(3), 3, "chain", {})
    for seat, rank in ((1, 1), (0, 2)):
        snape.arrive(board, seat, Rng(0), {"facts": {"quirrell_rank": rank}})
        assert not any(snape.can_play(board, s) for s in range(3))
        assert snape.turn_owner(board) is None and board["hands"] == [[], [], []]
        assert snape.view(board, seat)["phase"] == "waiting"
    events = snape.arrive(board, 2, Rng(0), {"facts": {"quirrell_rank": 3}})
    assert "snape_dealt" in types(events)
    assert all(snape.can_play(board, s) for s in range(3))


def test_extra_cards_by_quirrell_place_and_discards_down_to_two():
    """SET UP "4. The first player to finish Quirrell's Challenge takes the top
    three cards from the deck, the second player takes the next two cards, and
    the third player takes the next card. The fourth player does not take any
    additional cards." STARTING THE GAME: "Players with more than two cards
    discard to start a discard pile, placing cards face up, so that they have
    only two cards left in their hands." House rules: the set-up goes in
    Quirrell order; a set-up discard of an Incantations Card does nothing."""
    board = snape.new_board(Rng(5), 4, "chain", {})
    ranks = {0: 3, 1: 1, 2: 4, 3: 2}
    for seat in (1, 3, 0, 2):
        events = snape.arrive(board, seat, Rng(0), {"facts": {"quirrell_rank": ranks[seat]}})
    assert [len(h) for h in board["hands"]] == [3, 5, 2, 4]
    dealt = [e for e in events if e["type"] == "snape_dealt"]
    assert [e.get("audience") for e in dealt] == [None, [0], None, [1], None, [2], None, [3]]
    assert all("cards" not in e for e in dealt if "audience" not in e)
    assert board["setup"] == [1, 3, 0, 2]
    for seat, discards in ((1, 3), (3, 2), (0, 1), (2, 0)):
        for _ in range(discards):
            assert snape.turn_owner(board) == seat
            card = board["hands"][seat][0]
            before = len(board["out"])
            outcome = act(board, seat, {"type": "snape_discard", "name": card})
            assert board["discard"][-1] == card and len(board["out"]) == before and outcome.wait == {}
        assert snape.turn_owner(board) == seat and len(board["hands"][seat]) == 2
        act(board, seat, {"type": "snape_piece", "position": 1})
    assert snape.turn_owner(board) is None and len(board["discard"]) == 6
    assert board["pieces"] == [1, 1, 1, 1]
    assert all_cards(board) == sorted(snape.CARDS)


def test_in_order_the_first_in_quirrell_goes_first():
    """TAKING A TURN "1. The player who finished first in Quirrell's Challenge
    goes first." (The match starts that turn once the set-up is done.)"""
    for seed in range(6):
        playout = random_playout(TAIL, "chain", 3, seed)
        for step in playout.steps:
            if step.action["type"].startswith("snape_") and step.state_before["turn"] is not None \
                    and TAIL._owner(step.state_before) is None:
                ranks = {s: p["facts"]["quirrell_rank"] for s, p in enumerate(step.state_before["players"])}
                assert ranks[step.seat] == 1
                break
        else:
            raise AssertionError("Snape's Challenge never began")


# -- a turn -------------------------------------------------------------------------------------------


def test_a_turn_is_a_pick_or_a_flip():
    """TAKING A TURN "2. On each turn, players may either pick a card from the
    deck or flip over a card on the game board." (and a claim, once holding an
    S and an R)."""
    board = make([["5S", "9S"], ["6R", "7S"]])
    start(board, 0)
    assert snape.legal_actions(board, 0) == [{"type": "snape_draw"}] + [
        {"type": "snape_flip", "space": s} for s in range(7)] + [{"type": "snape_piece", "position": 1}]
    assert snape.legal_actions(board, 1) == snape.legal_actions(board, 0)[:8] + [{"type": "snape_claim"}] + [
        {"type": "snape_piece", "position": 1}]


def test_pick_then_discard_one_face_up():
    """TAKING A TURN "2. ... When a player takes a card, that player must
    discard one card from his/her hand, face up. 3. Players may never have more
    than two cards in their hands at the end of each turn. 5. Players always
    discard face up, on top of the discard pile." House rule: the card picked
    lies where the discarded card lay (under the piece if it was there)."""
    board = make([["5S", "9S"], ["6R", "7S"]], deck=["4R"], discard=["8R"])
    start(board, 0)
    outcome = act(board, 0, {"type": "snape_draw"})
    assert not outcome.turn_over and board["hands"][0] == ["5S", "9S", "4R"]
    drew = [e for e in outcome.events if e["type"] == "snape_drew"]
    assert drew == [{"type": "snape_drew", "seat": 0},
                    {"type": "snape_drew", "seat": 0, "card": "4R", "audience": [0]}]
    assert snape.legal_actions(board, 0) == [{"type": "snape_discard", "name": c} for c in ("5S", "9S", "4R")]
    outcome = act(board, 0, {"type": "snape_discard", "name": "5S"})
    assert outcome.turn_over and board["turn"] is None
    assert board["hands"][0] == ["4R", "9S"] and board["pieces"][0] == 0 and board["discard"] == ["8R", "5S"]


def test_flipped_cards_stay_face_up():
    """TAKING A TURN "2. ... flip over a card on the game board." House rule: the
    card stays face up for all to see (it shows a potion that does not count:
    FINDING "1. The cards that are placed on the game board do not count")."""
    board = make([["5S", "9S"], ["6R", "7S"]])
    start(board, 0)
    outcome = act(board, 0, {"type": "snape_flip", "space": 3})
    assert outcome.turn_over and outcome.events == [{"type": "snape_flipped", "seat": 0, "space": 3, "card": "13R"}]
    for seat in (None, 0, 1):
        assert snape.view(board, seat)["spaces"][3] == {"space": 3, "face_up": True, "card": "13R"}
    start(board, 1)
    assert {"type": "snape_flip", "space": 3} not in snape.legal_actions(board, 1)


def test_move_the_piece_once_a_turn():
    """TAKING A TURN "6. On each turn players may, at their option, move their
    playing piece to another card." House rule: once a turn, before the pick or
    flip; the turn goes on."""
    board = make([["5S", "9S"], ["6R", "7S"]])
    start(board, 0)
    outcome = act(board, 0, {"type": "snape_piece", "position": 1})
    assert not outcome.turn_over and board["pieces"][0] == 1
    assert not any(a["type"] == "snape_piece" for a in snape.legal_actions(board, 0))
    act(board, 0, {"type": "snape_draw"})
    assert not any(a["type"] == "snape_piece" for a in snape.legal_actions(board, 0))


def test_a_robbed_player_keeps_the_card_picked():
    """TAKING A TURN "3. Players may never have more than two cards in their
    hands at the end of each turn." House rule: the discard brings the hand
    down to two, so a player left with one card by a STEAL keeps the card
    picked (else the hand could never hold two again)."""
    board = make([["5S"], ["6R", "7S"]], deck=["4R"])
    start(board, 0)
    outcome = act(board, 0, {"type": "snape_draw"})
    assert outcome.turn_over and board["hands"][0] == ["5S", "4R"] and board["turn"] is None


# -- incantations ------------------------------------------------------------------------------------------


def test_another_turn():
    """INCANTATIONS "1. ... players may add the card to their hand (and discard)
    or play the card immediately." "TAKE ANOTHER TURN--Players either flip over
    a card on the board or pick another card." "3. Except for "Steal a Card"
    cards, players place used Incantations Cards out of play." House rule: a
    discarded Incantations Card is played."""
    board = make([["5S", "9S"], ["6R", "7S"]], deck=["3R", "another_turn"])
    start(board, 0)
    act(board, 0, {"type": "snape_draw"})
    outcome = act(board, 0, {"type": "snape_discard", "name": "another_turn"})
    assert not outcome.turn_over and board["out"][-1] == "another_turn" and "another_turn" not in board["discard"]
    assert snape.legal_actions(board, 0) == [{"type": "snape_draw"}] + [
        {"type": "snape_flip", "space": s} for s in range(7)]
    act(board, 0, {"type": "snape_draw"})
    outcome = act(board, 0, {"type": "snape_discard", "name": "9S"})
    assert outcome.turn_over and board["hands"][0] == ["5S", "3R"]


def test_an_incantation_kept_in_the_hand_is_played_when_discarded():
    """INCANTATIONS "1. ... players may add the card to their hand (and
    discard)". INCORRECT "5. When players discard after collecting Player 1's
    cards, they may not follow the instructions on any Incantations Cards that
    they discard." -- so other discards do follow them (house rule)."""
    board = make([["5S", "lose_turn"], ["6R", "7S"]], deck=["3R"])
    start(board, 0)
    act(board, 0, {"type": "snape_draw"})
    outcome = act(board, 0, {"type": "snape_discard", "name": "lose_turn"})
    assert outcome.wait == {0: 1} and board["hands"][0] == ["5S", "3R"] and board["out"][-1] == "lose_turn"


def test_another_turn_with_nothing_to_pick_or_flip_passes():
    """TAKE ANOTHER TURN with the draw pile empty (no reshuffle left) and every
    board card face up: the player can only pass (house rule)."""
    board = make([["5S", "9S"], ["6R", "7S"]], deck=["another_turn"], up=[True] * 7, reshuffles=0)
    start(board, 0)
    act(board, 0, {"type": "snape_draw"})
    act(board, 0, {"type": "snape_discard", "name": "another_turn"})
    assert snape.legal_actions(board, 0) == [{"type": "snape_pass"}]
    assert act(board, 0, {"type": "snape_pass"}).turn_over


def test_steal_a_card_then_discard():
    """"STEAL A CARD FROM ANOTHER PLAYER, THEN DISCARD--Players take any card
    from any player, then discard." "Players place used "Steal Card" cards on the
    discard pile." Any card: the one under a playing piece too (only LOOK
    excepts it). The thief and the robbed player alone learn which card it was."""
    board = make([["5S", "9S"], ["6R", "7S"], ["2R", "8S"]], deck=["steal"], pieces=[0, 1, 0])
    start(board, 0)
    act(board, 0, {"type": "snape_draw"})
    act(board, 0, {"type": "snape_discard", "name": "steal"})
    assert board["discard"][-1] == "steal"
    assert snape.legal_actions(board, 0) == [{"type": "snape_steal", "seat": s, "position": p}
                                             for s in (1, 2) for p in (0, 1)]
    outcome = act(board, 0, {"type": "snape_steal", "seat": 2, "position": 0})
    assert not outcome.turn_over and board["hands"][0] == ["5S", "9S", "2R"]
    assert board["hands"][2] == ["8S"] and board["pieces"][2] == 0
    for seat in (None, 0, 1, 2):
        seen = [e for e in events_for(outcome.events, seat) if e["type"] == "snape_stole"]
        assert [e.get("card") for e in seen] == ([None, "2R"] if seat in (0, 2) else [None])
    act(board, 0, {"type": "snape_discard", "name": "9S"})
    assert board["hands"][0] == ["5S", "2R"]


def test_steal_with_nobody_to_rob_does_nothing():
    """A STEAL played when no other player holds a card takes nothing (house rule)."""
    board = make([["5S", "9S"], []], deck=["steal"])
    start(board, 0)
    act(board, 0, {"type": "snape_draw"})
    outcome = act(board, 0, {"type": "snape_discard", "name": "steal"})
    assert outcome.turn_over and board["hands"][0] == ["5S", "9S"]


def test_look_at_a_face_down_card_alone():
    """"LOOK AT ANY FACE-DOWN CARD, THEN PUT IT BACK FACE DOWN--Players look at any
    face-down card on the game board or any card in another player's hand
    except for the cards with playing pieces on them. Players put the card back,
    face down." Issue #5: the look "reveals a card to one seat only"; the views
    do not remember it (house rule)."""
    board = make([["5S", "9S"], ["6R", "7S"]], deck=["look"], up=[True, False, True, True, True, True, False],
                 pieces=[0, 1])
    start(board, 0)
    act(board, 0, {"type": "snape_draw"})
    act(board, 0, {"type": "snape_discard", "name": "look"})
    assert board["out"][-1] == "look"
    assert snape.legal_actions(board, 0) == [{"type": "snape_look_board", "space": 1},
                                             {"type": "snape_look_board", "space": 6},
                                             {"type": "snape_look_hand", "seat": 1, "position": 0}]
    views = {seat: snape.view(board, seat) for seat in (None, 0, 1)}
    outcome = act(board, 0, {"type": "snape_look_hand", "seat": 1, "position": 0})
    assert outcome.turn_over
    assert [e.get("card") for e in events_for(outcome.events, 0)] == [None, "6R"]
    assert [e.get("card") for e in events_for(outcome.events, 1)] == [None]
    assert [e.get("card") for e in events_for(outcome.events, None)] == [None]
    after = {seat: snape.view(board, seat) for seat in (None, 0, 1)}
    for seat in (None, 1):
        assert after[seat]["spaces"] == views[seat]["spaces"] and after[seat]["players"][1] == views[seat]["players"][1]
    assert after[0]["players"][1]["cards"] == [None, None]


def test_lose_your_turn_skips_the_next_turn():
    """"LOSE YOUR TURN--The player loses a turn.": the player's next regular turn
    is sat out (the match's waiting turns)."""
    state = new(2, seed=3)
    for seat in (0, 1):
        state, _ = GAME.apply(state, seat, {"type": "snape_piece", "position": 0})
    board = state["boards"]["snape"]
    board["deck"].remove("lose_turn")
    board["deck"].append("lose_turn")  # on top of the draw pile
    state, _ = GAME.apply(state, 0, {"type": "snape_draw"})
    state, events = GAME.apply(state, 0, {"type": "snape_discard", "name": "lose_turn"})
    assert state["players"][0]["waiting"] == 1 and state["turn"] == 1
    state, events = GAME.apply(state, 1, {"type": "snape_flip", "space": 0})
    assert {"type": "waited", "seat": 0, "board": "snape", "left": 0} in events
    assert state["turn"] == 1


def test_nettle_wine_has_no_effect():
    """"NETTLE WINE--No effect." It goes out of play."""
    board = make([["5S", "9S"], ["6R", "7S"]], deck=["nettle_wine"])
    start(board, 0)
    act(board, 0, {"type": "snape_draw"})
    outcome = act(board, 0, {"type": "snape_discard", "name": "nettle_wine"})
    assert outcome.turn_over and outcome.wait == {} and board["out"][-1] == "nettle_wine"
    assert board["hands"][0] == ["5S", "9S"]


# -- claims -----------------------------------------------------------------------------------------------


def test_a_claim_needs_one_s_and_one_r():
    """FINDING "2. When a player (Player 1) thinks that he/she has the
    lowest-numbered S and the lowest-numbered R Potions Cards ... that player
    shows the other players his/her cards." A claim shows two cards, one S and
    one R (house rule: only then may a player claim)."""
    for hand, can in ((["5S", "9S"], False), (["5S", "steal"], False), (["5S"], False), (["4R", "5S"], True)):
        board = make([hand, ["6R", "7S"]])
        start(board, 0)
        assert ({"type": "snape_claim"} in snape.legal_actions(board, 0)) is can


def test_board_cards_do_not_count():
    """FINDING "1. The cards that are placed on the game board do not count as
    the smallest or roundest for this game. For example, if the 1S, 2S, and 3S
    Potions Cards are on the game board, the smallest potion for this game is
    4S." "3. If Player 1 has the best (lowest-numbered) Potions Cards ...";
    individually "2. The game ends when one player collects the lowest-numbered S
    and lowest-numbered R Potions Cards." """
    board = make([["4S", "1R"], ["6R", "7S"]], spaces=["1S", "2S", "3S", "13R", "12R", "11R", "10S"])
    assert snape.lowest(board, "S") == "4S"
    start(board, 0)
    outcome = act(board, 0, {"type": "snape_claim"})
    assert outcome.winner == 0 and outcome.closed and board["winner"] == 0
    assert board["claims"] == [{"seat": 0, "cards": ["4S", "1R"], "correct": True, "rules": []}]


def test_the_claimant_checks_the_board_alone():
    """FINDING "2. ... that player shows the other players his/her cards. If
    there are still cards face down on the board, then Player 1 checks the cards
    on the board without showing any other players." """
    board = make([["1S", "1R"], ["6R", "7S"]], up=[True, True, True, True, True, False, False])
    start(board, 0)
    outcome = act(board, 0, {"type": "snape_claim"})
    assert {"type": "snape_claimed", "seat": 0, "cards": ["1S", "1R"]} in outcome.events
    private = [e for e in events_for(outcome.events, 0) if e["type"] == "snape_board_checked"]
    assert private[-1]["spaces"] == [{"space": 5, "card": "11R"}, {"space": 6, "card": "10S"}]
    for seat in (None, 1):
        assert [e for e in events_for(outcome.events, seat) if e["type"] == "snape_board_checked"] == [
            {"type": "snape_board_checked", "seat": 0}]
    board = make([["1S", "1R"], ["6R", "7S"]], up=[True] * 7)
    start(board, 0)
    assert "snape_board_checked" not in types(act(board, 0, {"type": "snape_claim"}).events)


def test_in_order_the_right_claimant_moves_on_and_play_goes_on():
    """FINDING "3. If Player 1 has the best (lowest-numbered) Potions Cards, then
    he/she begins to search for the Sorcerer's Stone. Player 1's cards are placed
    out of play, and play continues as the remaining players try to collect the
    new lowest-numbered S and R cards." CONTINUING "1. Play continues as the
    remaining players race to collect the next-lowest S and next-lowest R
    Potions." """
    board = make([["1S", "1R"], ["2R", "2S"], ["9S", "9R"]], mode="chain")
    start(board, 0)
    outcome = act(board, 0, {"type": "snape_claim"})
    assert outcome.finished == [0] and outcome.facts == {0: {"wrong_claim": False}} and not outcome.closed
    assert board["out"][-2:] == ["1S", "1R"] and board["status"][0] == "finished" and board["hands"][0] == []
    assert (snape.lowest(board, "S"), snape.lowest(board, "R")) == ("2S", "2R")
    start(board, 1)
    outcome = act(board, 1, {"type": "snape_claim"})
    assert outcome.finished == [1] and board["finished"] == [0, 1] and not outcome.closed
    assert not snape.can_play(board, 0) and snape.can_play(board, 2)


def test_wrong_rule_1_a_lower_card_not_on_the_board():
    """INCORRECT "1. If a lower S or lower R card is on the board, Player 1
    announces this to the other players and places his/her cards face up next
    to the board and play continues." House rule: read with FINDING 1 (board
    cards do not count), this is the case the board check settles -- a lower
    card is neither on the board nor in another hand (it is in the draw or
    discard pile). "6. ... he/she does not continue to play Snape's Challenge,
    and must wait to move on to the Mirror of Erised" (in order: fact
    ``wrong_claim``)."""
    for pile in ("deck", "discard"):
        board = make([["2S", "1R"], ["6R", "7S"], ["9S", "9R"]], mode="chain",
                     deck=[] if pile == "discard" else None, discard=["1S"] if pile == "discard" else ())
        start(board, 0)
        outcome = act(board, 0, {"type": "snape_claim"})
        assert outcome.finished == [0] and outcome.facts == {0: {"wrong_claim": True}} and not outcome.closed
        assert board["claims"][-1]["rules"] == [1] and board["out"][-2:] == ["2S", "1R"]
        assert board["status"][0] == "out" and board["giveaway"] is None and snape.turn_owner(board) is None
        wrong = [e for e in outcome.events if e["type"] == "snape_claim_wrong"]
        assert wrong == [{"type": "snape_claim_wrong", "seat": 0, "cards": ["2S", "1R"], "rules": [1]}]


def test_wrong_rule_2_the_holder_collects_and_discards_without_incantations():
    """INCORRECT "2. If another player has a lower-numbered S or R card, then
    Player 1 must give his/her cards to that player, who adds the cards to
    his/her hand, then discards the same number of cards that he/she added. 5.
    When players discard after collecting Player 1's cards, they may not follow
    the instructions on any Incantations Cards that they discard." Then the
    regular turn passes to the claimant's left."""
    state = new(3, seed=4)
    for seat in range(3):
        state, _ = GAME.apply(state, seat, {"type": "snape_piece", "position": 0})
    board = state["boards"]["snape"]
    fixed = make([["3S", "2R"], ["steal", "5S"], ["1R", "lose_turn"]], spaces=board["spaces"])
    fixed["turn"] = board["turn"]
    state["boards"]["snape"] = fixed
    state, events = GAME.apply(state, 0, {"type": "snape_claim"})
    assert {"type": "snape_given", "seat": 0, "to": 2, "cards": ["3S", "2R"]} in events
    assert fixed_of(state)["claims"][-1]["rules"] == [2]
    assert GAME.to_act(state) == {2} and fixed_of(state)["hands"][2] == ["1R", "lose_turn", "3S", "2R"]
    state, _ = GAME.apply(state, 2, {"type": "snape_discard", "name": "lose_turn"})
    state, _ = GAME.apply(state, 2, {"type": "snape_discard", "name": "2R"})
    board = fixed_of(state)
    assert board["discard"][-2:] == ["lose_turn", "2R"] and board["hands"][2] == ["1R", "3S"]
    assert state["players"][2]["waiting"] == 0 and GAME.result(state) is None
    assert GAME.to_act(state) == {1} and state["turn"] == 1 and board["status"][0] == "out"


def fixed_of(state: dict) -> dict:
    return state["boards"]["snape"]


def test_wrong_rule_3_mixed_cards_the_s_holder_chooses():
    """INCORRECT "3. If one player has a lower-numbered S card and one player has
    a lower-numbered R card, then Player 1 mixes up his/her cards and places them
    face down on the table. The player with the lower S card chooses one of these
    cards and adds it to his/her hand; the player with the lower R card gets the
    remaining card. Both players must discard." The mixed order is hidden from
    every seat; the two receivers learn who got which."""
    board = make([["4S", "4R"], ["1S", "9R"], ["8S", "2R"]])
    start(board, 0)
    outcome = act(board, 0, {"type": "snape_claim"})
    assert board["claims"][-1]["rules"] == [3] and snape.turn_owner(board) == 1
    mixed = list(board["giveaway"]["mixed"])
    assert sorted(mixed) == ["4R", "4S"]
    for seat in (None, 0, 1, 2):
        seen = snape.view(board, seat)["giveaway"]
        assert seen["mixed"] == 2 and seen["mixed_cards"] == ["4R", "4S"] and seen["chooser"] == 1
    assert snape.legal_actions(board, 1) == [{"type": "snape_choose", "position": 0},
                                             {"type": "snape_choose", "position": 1}]
    outcome = act(board, 1, {"type": "snape_choose", "position": 1})
    assert board["hands"][1] == ["1S", "9R", mixed[1]] and board["hands"][2] == ["8S", "2R", mixed[0]]
    for seat in (None, 0, 1, 2):
        cards = [e.get("card") for e in events_for(outcome.events, seat)]
        assert cards == ([None, mixed[1]] if seat in (1, 2) else [None])
    assert snape.turn_owner(board) == 1
    act(board, 1, {"type": "snape_discard", "name": "9R"})
    assert snape.turn_owner(board) == 2
    act(board, 2, {"type": "snape_discard", "name": "8S"})
    assert snape.turn_owner(board) is None and board["giveaway"] is None
    assert all_cards(board) == sorted(snape.CARDS)


def test_wrong_rule_4_the_lowest_collect():
    """INCORRECT "4. If more than one player has a lower S and/or lower R card,
    the player(s) with the lowest cards collects the cards from Player 1." """
    board = make([["5S", "5R"], ["3S", "9R"], ["2S", "8R"], ["9S", "4R"]])
    start(board, 0)
    act(board, 0, {"type": "snape_claim"})
    assert board["claims"][-1]["rules"] == [4, 3]
    assert (board["giveaway"]["chooser"], board["giveaway"]["other"]) == (2, 3)
    board = make([["5S", "5R"], ["3S", "9R"], ["2S", "1R"], ["9S", "10R"]])
    start(board, 0)
    act(board, 0, {"type": "snape_claim"})
    assert board["claims"][-1]["rules"] == [4, 2] and board["hands"][2] == ["2S", "1R", "5S", "5R"]


def settled(seats: int, seed: int = 3) -> dict:
    """A ``snape`` match whose set-up is done: every seat has placed its piece; seat 0's turn."""
    state = new(seats, seed=seed)
    for seat in range(seats):
        state, _ = GAME.apply(state, seat, {"type": "snape_piece", "position": 0})
    return state


def test_individually_a_wrong_claim_hands_the_win_to_nobody():
    """Individually: "2. The game ends when one player collects the lowest-numbered
    S and lowest-numbered R Potions Cards." INCORRECT "6. If Player 1 did not have
    the lowest-numbered S and lowest-number R cards, then he/she does not continue
    to play Snape's Challenge". The issue's case: in a 2-player game a hasty wrong
    claim no longer hands the win to an opponent who has not taken a turn; the
    lone player left keeps playing until it can claim, and wins only by a correct
    claim."""
    state = settled(2)
    fixed = make([["3S", "2R"], ["9S", "9R"]], deck=["5S", "1R", "1S"])
    fixed["turn"] = state["boards"]["snape"]["turn"]
    state["boards"]["snape"] = fixed
    state, events = GAME.apply(state, 0, {"type": "snape_claim"})  # 1S and 1R are in the draw pile
    assert fixed_of(state)["status"] == ["out", "playing"]
    assert GAME.result(state) is None and GAME.to_act(state) == {1} and state["turn"] == 1
    assert "game_over" not in types(events)
    for worse in ("9S", "9R"):
        state, _ = GAME.apply(state, 1, {"type": "snape_draw"})
        state, _ = GAME.apply(state, 1, {"type": "snape_discard", "name": worse})
        assert GAME.result(state) is None and state["turn"] == 1  # alone: every regular turn is seat 1's
    assert sorted(fixed_of(state)["hands"][1]) == ["1R", "1S"]
    state, events = GAME.apply(state, 1, {"type": "snape_claim"})
    assert GAME.result(state) == {"winners": [1], "scores": None, "cause": "correct_claim",
                                  "reason": "A correct claim: the lowest S and R Potions Cards that count."}
    assert events[-1] == {"type": "game_over", "winners": [1]}


def test_individually_nobody_left_ends_the_game_with_no_winner():
    """Individually "The game ends when one player collects the lowest-numbered S
    and lowest-numbered R Potions Cards"; INCORRECT "6. ... he/she does not
    continue to play Snape's Challenge". House rule: when every player has claimed
    wrongly, or dropped out once the draw pile (with its reshuffles) and the
    board ran out, the game ends with no winner (cause ``no_correct_claim``)."""
    wrong = settled(2)
    fixed = make([["3S", "2R"], ["4S", "4R"]], deck=["1R", "1S"], status=["out", "playing"])
    fixed["hands"][0], fixed["pieces"][0] = [], None
    fixed["out"] += ["3S", "2R"]
    state = clone(wrong)
    state["boards"]["snape"] = fixed
    state["turn"], fixed["turn"] = 1, {"seat": 1, "step": "start", "moved": False}
    state, _ = GAME.apply(state, 1, {"type": "snape_claim"})  # the lone player claims wrongly too
    assert GAME.result(state) == {
        "winners": [], "scores": None, "cause": "no_correct_claim",
        "reason": "Nobody claimed the lowest S and R correctly (wrong claims, or the cards ran out): no winner."}
    # The cards run out: nothing to draw, nothing face down on the board, no S and R to claim with.
    fixed = make([[], ["5S", "9S"]], deck=[], up=[True] * 7, reshuffles=0, status=["out", "playing"])
    state = clone(wrong)
    state["boards"]["snape"] = fixed
    state["turn"], fixed["turn"] = 1, {"seat": 1, "step": "start", "moved": False}
    assert GAME.legal_actions(state, 1) == [{"type": "snape_drop_out"}, {"type": "snape_piece", "position": 1}]
    state, events = GAME.apply(state, 1, {"type": "snape_drop_out"})
    assert GAME.result(state)["winners"] == [] and GAME.result(state)["cause"] == "no_correct_claim"
    assert fixed_of(state)["winner"] is None and snape.view(fixed_of(state), None)["phase"] == "over"


# -- the end of the draw pile -----------------------------------------------------------------------------


def test_empty_draw_pile_reshuffles_the_discard_pile():
    """Issue #5's odd corner, "an empty draw pile in Snape's Challenge". House
    rule: the discard pile is shuffled into a new draw pile, at most twice (the
    book sends used "Steal Card" cards "on the discard pile" and the others out
    of play, which matters only if the discard pile comes back)."""
    board = make([["5S", "9S"], ["6R", "7S"]], deck=[], discard=["3R", "steal", "8S"], reshuffles=1)
    start(board, 0)
    assert {"type": "snape_draw"} in snape.legal_actions(board, 0)
    outcome = act(board, 0, {"type": "snape_draw"})
    assert {"type": "snape_reshuffled", "cards": 3, "left": 0} in outcome.events
    assert board["discard"] == [] and len(board["deck"]) == 2 and board["reshuffles"] == 0
    act(board, 0, {"type": "snape_discard", "name": "9S"})
    start(board, 1)
    assert {"type": "snape_draw"} in snape.legal_actions(board, 1)  # two cards left in the new pile
    board["deck"] = []
    assert {"type": "snape_draw"} not in snape.legal_actions(board, 1)  # no reshuffle left


def test_nothing_left_to_pick_or_flip_claim_or_drop_out():
    """House rule (every game must end): with nothing to pick (the draw pile
    empty, no reshuffle left) and no card face down on the board, a player who
    can claim must; one who cannot drops out like a wrong claimant, the cards
    face up out of play."""
    board = make([["5S", "9S"], ["6R", "7R"], ["1S", "1R"]], mode="chain", deck=[], up=[True] * 7, reshuffles=0)
    start(board, 0)
    assert snape.legal_actions(board, 0) == [{"type": "snape_drop_out"}, {"type": "snape_piece", "position": 1}]
    outcome = act(board, 0, {"type": "snape_drop_out"})
    assert outcome.finished == [0] and outcome.facts == {0: {"wrong_claim": True}}
    assert board["out"][-2:] == ["5S", "9S"] and board["status"][0] == "out"
    start(board, 2)
    assert snape.legal_actions(board, 2) == [{"type": "snape_claim"}, {"type": "snape_piece", "position": 1}]
    outcome = act(board, 2, {"type": "snape_claim"})
    assert outcome.finished == [2] and not outcome.closed
    start(board, 1)
    outcome = act(board, 1, {"type": "snape_drop_out"})
    assert outcome.closed and snape.view(board, None)["phase"] == "over"


def at_snape(seats: int, seed: int) -> dict:
    """The games in order from Quirrell's Challenge (``TAIL``), played at random
    until Snape's Challenge is set up and its first regular turn has begun."""
    state = TAIL.setup(TAIL.check_options("chain", {}, seats), seats, seed)
    chooser = Rng(seed)
    while not (all(p["board"] == "snape" for p in state["players"]) and state["boards"]["snape"]["setup"] == []
               and state["turn"] is not None and regular(state)):
        (seat,) = TAIL.to_act(state)
        state, _ = TAIL.apply(state, seat, chooser.choice(TAIL.legal_actions(state, seat)))
    return state


def test_in_order_nobody_right_everyone_goes_on_to_the_mirror():
    """The games in order when nobody claims correctly. INCORRECT "6. ... he/she
    does not continue to play Snape's Challenge, and must wait to move on to the
    Mirror of Erised"; Mirror "3. Players who play incorrect smallest and/or
    roundest cards in Snape's Challenge must wait 2 turns after the last player
    begins flipping over Mirror of Erised cards to begin this game." House rule:
    with nobody flipping, the holds end once Snape's board is empty; everyone
    then waits the same 2 turns and the Mirror is played, so the match still
    ends with the Stone (cause ``sorcerers_stone``)."""
    state = at_snape(3, seed=2)
    board = state["boards"]["snape"]
    fixed = make([["5S", "9S"], ["6R", "7R"], ["2S", "3R"]], mode="chain", deck=[], up=[True] * 7, reshuffles=0,
                 discard=["1S", "1R"])  # the lowest potions are out of reach on the discard pile
    fixed.update(ranks=board["ranks"], turn=board["turn"])
    state["boards"]["snape"] = fixed
    log = []
    while any(p["board"] == "snape" for p in state["players"]):
        seat = state["turn"]
        actions = TAIL.legal_actions(state, seat)
        state, events = TAIL.apply(state, seat, {"type": "snape_claim"} if {"type": "snape_claim"} in actions
                                   else {"type": "snape_drop_out"})
        log += events
    assert [c["correct"] for c in fixed_of(state)["claims"]] == [False]
    assert [p["facts"]["wrong_claim"] for p in state["players"]] == [True] * 3
    assert [p["board"] for p in state["players"]] == ["mirror"] * 3 and TAIL.result(state) is None
    assert sorted(e["seat"] for e in log if e["type"] == "wait_begins") == [0, 1, 2]
    while TAIL.result(state) is None:
        (seat,) = TAIL.to_act(state)
        state, events = TAIL.apply(state, seat, TAIL.legal_actions(state, seat)[0])
        log += events
    first_flip = types(log).index("mirror_flipped")
    waited = collections.Counter(e["seat"] for e in log[:first_flip] if e["type"] == "waited")
    assert waited == {0: 2, 1: 2, 2: 2}
    result = TAIL.result(state)
    assert len(result["winners"]) == 1 and result["cause"] == "sorcerers_stone"


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_random_individual_games_always_end(seats):
    """Every game ends (the drop-out rule above): "The game ends when one player
    collects the lowest-numbered S and lowest-numbered R Potions Cards" -- the
    winner is always the one right claim, which holds the lowest S and R that
    count; with no right claim (everyone claimed wrongly or dropped out), no
    winner."""
    outcomes = collections.Counter()
    for seed in range(max(2, PROPERTY_GAMES // 2)):
        playout = random_playout(GAME, "snape", seats, seed, max_actions=2000)
        result = GAME.result(playout.final)
        assert result is not None, (seats, seed)
        board = fixed_of(playout.final)
        assert all_cards(board) == sorted(snape.CARDS)
        right = [c for c in board["claims"] if c["correct"]]
        if right:
            (winner,) = result["winners"]
            assert right == [board["claims"][-1]] and right[0]["seat"] == winner and right[0]["rules"] == []
            assert result["cause"] == "correct_claim"
            outcomes["right claim"] += 1
        else:
            assert result["winners"] == [] and result["cause"] == "no_correct_claim"
            assert all(status == "out" for status in board["status"]), (seats, seed)
            outcomes["no winner"] += 1
    assert outcomes["no winner"] > 0 and outcomes["right claim"] > 0, outcomes


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_random_games_in_order_send_everyone_on(seats):
    """In order, every player leaves Snape's Challenge (right claim, wrong claim
    or dropped out) and the board closes: "As each player completes Snape's
    Challenge, he/she moves on to the Mirror of Erised." """
    for seed in range(max(2, PROPERTY_GAMES // 10)):
        playout = random_playout(TAIL, "chain", seats, seed, max_actions=3000)
        assert TAIL.result(playout.final) is not None
        board = playout.final["boards"]["snape"]
        if playout.final["result"]["winners"]:
            left = [s for s, p in enumerate(playout.final["players"]) if p["board"] in ("mirror", None)]
            assert left and all(board["status"][s] in ("finished", "out") for s in left)
        for seat, player in enumerate(playout.final["players"]):
            if board["status"][seat] in ("finished", "out"):
                assert player["facts"]["wrong_claim"] is (board["status"][seat] == "out")


def test_long_random_games_reach_the_end_of_the_draw_pile():
    """The reshuffles and the drop-out rule are reached in random play (players
    who claim only when nothing else is possible)."""
    reached = collections.Counter()
    for seed in range(max(4, PROPERTY_GAMES // 20)):
        state = new(3, seed)
        chooser = Rng(seed)
        while GAME.result(state) is None:
            (seat,) = GAME.to_act(state)
            actions = GAME.legal_actions(state, seat)
            patient = [a for a in actions if a["type"] != "snape_claim"] or actions
            state, events = GAME.apply(state, seat, chooser.choice(patient))
            reached.update(e["type"] for e in events)
        assert all_cards(fixed_of(state)) == sorted(snape.CARDS)
    assert reached["snape_reshuffled"] > 0 and reached["snape_dropped_out"] + reached["snape_claim_right"] > 0


# -- hidden information ------------------------------------------------------------------------------------


def scramble(board: dict, seat: int | None, rng: Rng) -> dict:
    """The board with every card ``seat`` cannot see shuffled among the places
    hidden from it (other hands, face-down spaces, the draw pile), and the
    mixed cards of a give-away among themselves."""
    other = clone(board)
    slots = [("deck", i) for i in range(len(board["deck"]))]
    slots += [("space", i) for i in range(7) if not board["up"][i]]
    slots += [("hand", s, i) for s in range(board["seats"]) if s != seat for i in range(len(board["hands"][s]))]
    if board["giveaway"]:
        rng.shuffle(other["giveaway"]["mixed"])  # which of the two shown cards lies where

    def cell(slot):
        if slot[0] == "deck":
            return other["deck"], slot[1]
        if slot[0] == "space":
            return other["spaces"], slot[1]
        return other["hands"][slot[1]], slot[2]

    cards = [cell(slot)[0][cell(slot)[1]] for slot in slots]
    rng.shuffle(cards)
    for slot, card in zip(slots, cards):
        where, index = cell(slot)
        where[index] = card
    return other


SECRET_KEYS = {"card", "cards", "spaces", "other_card"}
PRIVATE = {"snape_dealt", "snape_drew", "snape_stole", "snape_looked", "snape_board_checked", "snape_chose"}


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_views_and_events_keep_secrets(seats):
    """Hidden: "place seven Potions cards on the game board, face down"; "Place the
    remaining cards in a pile on the table, face down"; "Each player places their
    two cards face down on the table in front of them"; "Player 1 checks the
    cards on the board without showing any other players"; the mixed cards "face
    down". A view never changes when the cards hidden from its seat are shuffled
    among their places; a private event reaches only its audience, and its
    public twin carries no card."""
    rng = Rng(11)
    for seed in range(max(2, PROPERTY_GAMES // 100)):
        playout = random_playout(GAME, "snape", seats, seed)
        for step in playout.steps:
            board = fixed_of(step.state_after)
            for seat in [None, *range(seats)]:
                assert snape.view(scramble(board, seat, rng), seat) == snape.view(board, seat)
            for event in step.events:
                if event["type"] in PRIVATE and "audience" not in event:
                    assert not SECRET_KEYS & set(event), event
                if "audience" in event:
                    assert event["type"] in PRIVATE
                    allowed = {"snape_stole": {event["seat"], event.get("from")},
                               "snape_chose": {event["seat"], event.get("other")}}.get(event["type"], {event["seat"]})
                    assert set(event["audience"]) == allowed


def test_a_seat_sees_its_own_cards_only():
    """"Each player looks at their cards": the owner sees its row; the others and
    spectators see how many cards and where the piece stands."""
    state = new(3, seed=2)
    board = fixed_of(state)
    for seat in (None, 0, 1, 2):
        players = GAME.view(state, seat)["boards"]["snape"]["players"]
        for player in players:
            mine = player["seat"] == seat
            assert player["cards"] == (board["hands"][player["seat"]] if mine else [None, None])
            assert player["hand_size"] == 2
        spaces = GAME.view(state, seat)["boards"]["snape"]["spaces"]
        assert all(space["card"] is None for space in spaces)


@pytest.mark.parametrize("seats", [2, 4])
def test_determinise_keeps_the_view(seats):
    """``determinise``: a board consistent with the seat's view, hidden cards
    sampled; its view is the same and the seat to act has the same choices."""
    rng = Rng(5)
    for seed in range(3):
        playout = random_playout(GAME, "snape", seats, seed)
        for step in playout.steps[::2]:
            board = fixed_of(step.state_before)
            for seat in [None, *range(seats)]:
                seen = snape.view(board, seat)
                sampled = snape.determinise(clone(seen), seat, rng)
                assert snape.view(sampled, seat) == seen
                assert all_cards(sampled) == sorted(snape.CARDS)
            acting = step.seat
            sampled = snape.determinise(snape.view(board, acting), acting, rng)
            assert snape.legal_actions(sampled, acting) == snape.legal_actions(board, acting)
    state = random_playout(GAME, "snape", 3, 1).steps[5].state_after
    assert GAME.view(GAME.determinise(GAME.view(state, 1), 1, rng), 1) == GAME.view(state, 1)


# -- the contract --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_contract(seats):
    """The engine contract; schema validation of the views dominates, so one step
    in five has its views validated (every step is checked otherwise)."""
    check_contract(GAME, "snape", seats, range(2), view_every=5)


def test_contract_in_order():
    """The games in order from Quirrell's Challenge on: arrivals one by one, the
    set-up decisions, claims and hand-overs to the Mirror keep the contract."""
    for seats in (2, 4):
        check_contract(TAIL, "chain", seats, range(2), view_every=5)


def test_view_schema_of_hand_built_boards():
    """Views of boards in every phase match the schema (waiting, set-up, a
    give-away under way, over)."""
    waiting = snape.new_board(Rng(1), 2, "chain", {})
    snape.arrive(waiting, 1, Rng(0), {"facts": {"quirrell_rank": 1}})
    giving = make([["4S", "4R"], ["1S", "9R"], ["8S", "2R"]])
    start(giving, 0)
    act(giving, 0, {"type": "snape_claim"})
    done = make([["1S", "1R"], ["6R", "7S"]])
    start(done, 0)
    act(done, 0, {"type": "snape_claim"})
    for board in (waiting, fixed_of(new(4)), giving, done):
        for seat in (None, 0, 1):
            VIEW.validate(snape.view(board, seat))
    assert snape.view(giving, None)["phase"] == "play" and snape.view(done, 1)["phase"] == "over"


def test_action_fields_agree_with_the_other_boards():
    """The APIs merge every action's fields into one input type: a field name
    shared with another board's action must have the same type (schema/game_types.py)."""
    from schema.game_types import _signature
    fields: dict[str, set] = collections.defaultdict(set)
    for action in GAME.action_schemas.values():
        for key, prop in action["properties"].items():
            if key != "type":
                fields[key].add(_signature(prop))
    for kind, action in snape.SCHEMA["actions"].items():
        assert kind.startswith("snape_") and action["title"].startswith("Snape")
        for key, prop in action["properties"].items():
            if key != "type":
                assert fields[key] == {_signature(prop)}, (kind, key)
