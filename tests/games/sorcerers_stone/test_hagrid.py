"""Hagrid's Challenge: Fluffy, the Three-Headed Dog (rule book
002_5ac5154540885c00.txt, GAME 1, and "HAGRID'S CHALLENGE All rules are the
same, except that: 1. The first player to reach the trapdoor at the end of the
cobblestone path wins the game.").

Rule tests drive the ``hagrid`` variant through ``GAME`` or the board functions
on hand-built boards; house rules are in /tmp/ss_docs/hagrid.md (merged into
docs/rules/sorcerers-stone.md).
"""

from __future__ import annotations

import collections

import jsonschema
import pytest

from service.engine import Rng, clone, events_for
from service.games.sorcerers_stone import GAME, hagrid
from tests.games.contract import PROPERTY_GAMES, check_contract, random_playout

TRAPDOOR = hagrid.TRAPDOOR


def new(seats: int = 2, seed: int = 1) -> dict:
    return GAME.setup(GAME.check_options("hagrid", {}, seats), seats, seed)


def board_of(state: dict) -> dict:
    return state["boards"]["hagrid"]


def make(*, seats: int = 2, mode: str = "individual", hands=None, at=None, fluffy: int = 10,
         fluffy_up: bool = False, asleep=None, last_turn=None, removed=(), pile=None, discard=None) -> dict:
    """A hand-built board: Fluffy under space ``fluffy``, flutes elsewhere (minus
    ``removed``); the cards not in hands or ``discard`` make the pile."""
    hands = [sorted(h) for h in (hands or [[] for _ in range(seats)])]
    discard = list(discard or [])
    tokens = ["flute"] * hagrid.SPACES
    tokens[fluffy - 1] = "fluffy"
    for space in removed:
        tokens[space - 1] = None
    if pile is None:
        pile = list(hagrid.DECK)
        for card in [c for h in hands for c in h] + discard:
            pile.remove(card)
    return {"mode": mode, "seats": seats, "pile": pile, "discard": discard, "tokens": tokens,
            "fluffy_up": fluffy_up, "asleep": asleep, "last_turn": last_turn,
            "at": list(at if at is not None else [0] * seats), "hands": hands, "finished": []}


def move(board: dict, seat: int, card: int):
    action = {"type": "hagrid_move", "card": card}
    assert action in hagrid.legal_actions(board, seat)
    return hagrid.play(board, seat, action, Rng(7))


def types(events) -> list[str]:
    return [e["type"] for e in events]


# -- set-up ----------------------------------------------------------------------------------


def test_set_up_tokens_cards_and_pieces():
    """COMPONENTS: "40 Musical Note Cards; 15 Tokens (14 Flutes, 1 Fluffy)". SET UP:
    "1. Mix up the tokens and place them face down on the game board, one on each
    space. 2. Shuffle the cards and deal two to each player. Place the rest of the
    cards in a pile, face down. 3. ... places it on the door next to Start."
    STARTING THE GAME: "1. The youngest player goes first, by picking a card from
    the deck and adding it to his/her hand." House rule: 10 cards each of 1-4 notes."""
    state = new(3)
    board = board_of(state)
    assert sorted(board["tokens"]) == ["fluffy"] + ["flute"] * 14
    assert collections.Counter(hagrid.DECK) == {1: 10, 2: 10, 3: 10, 4: 10}
    assert [len(h) for h in board["hands"]] == [3, 2, 2]  # seat 0, the youngest, has picked a card
    assert len(board["pile"]) == 40 - 7 and board["discard"] == []
    assert board["at"] == [0, 0, 0]
    assert GAME.to_act(state) == {0}
    view = GAME.view(state, 1)["boards"]["hagrid"]
    assert view["spaces"] == ["face_down"] * 15 and view["trapdoor"] == 16


def test_the_deal_is_private():
    """Hands are the players' own: the two cards dealt go to their owner only
    (others learn the count)."""
    rng = Rng(3)
    board = hagrid.new_board(rng, 2, "individual", {})
    events = hagrid.arrive(board, 1, rng, {"facts": {}})
    assert events_for(events, 0) == [{"type": "hagrid_arrived", "seat": 1, "hand_size": 2}]
    assert {"type": "hagrid_hand", "seat": 1, "cards": board["hands"][1]} in events_for(events, 1)


# -- picking cards ------------------------------------------------------------------------------


def test_each_turn_starts_by_picking_a_card():
    """PLAYING CARDS TO MOVE AHEAD: "1. On each turn, players pick a card, then
    decide whether or not to move." The card is seen by its picker only."""
    board = make(hands=[[1], [2]], last_turn=1)
    top = board["pile"][-1]
    events = hagrid.begin_turn(board, 0, Rng(1))
    assert sorted(board["hands"][0]) == sorted([1, top]) and len(board["pile"]) == 37
    assert {"type": "hagrid_drew_card", "seat": 0, "card": top} in events_for(events, 0)
    assert all("card" not in e for e in events_for(events, 1))
    assert all("card" not in e for e in events_for(events, None))


def test_empty_pile_reshuffles_the_discard_pile():
    """"4. ... When there are no more cards in the face-down pile, players shuffle
    the discard pile and form a new face-down pile." """
    board = make(hands=[[1], [2]], pile=[], discard=[3, 4, 4])
    board["hands"][1] = [1] * 10 + [2] * 10 + [3] * 9 + [4] * 8 + [2]  # the rest of the 40
    events = hagrid.begin_turn(board, 0, Rng(5))
    assert "hagrid_reshuffled" in types(events)
    assert board["discard"] == [] and len(board["pile"]) == 2
    assert len(board["hands"][0]) == 2


def test_no_card_to_pick_when_both_piles_are_empty():
    """House rule: every card in a hand (the book does not limit hands) -- no card
    is picked, and the player may still end the turn."""
    board = make(hands=[[1, 2], [1] * 9 + [2] * 9 + [3] * 10 + [4] * 10], pile=[], discard=[])
    events = hagrid.begin_turn(board, 0, Rng(5))
    assert types(events) == ["hagrid_no_card"] and board["hands"][0] == [1, 2]
    assert hagrid.legal_actions(board, 0)[-1] == {"type": "hagrid_end"}


# -- moving ----------------------------------------------------------------------------------------


def test_play_one_card_or_end_the_turn():
    """"2. After picking a card, a player may play one card from his/her hand and move
    ahead one space for each note shown (see above), or end the turn." One action
    per distinct card, and ending the turn; "They do not have to move on any turn"."""
    board = make(hands=[[3, 1, 3], []])
    assert hagrid.legal_actions(board, 0) == [
        {"type": "hagrid_move", "card": 1}, {"type": "hagrid_move", "card": 3}, {"type": "hagrid_end"}]
    assert hagrid.legal_actions(board, 1) == [{"type": "hagrid_end"}]
    outcome = hagrid.play(board, 1, {"type": "hagrid_end"}, Rng(1))
    assert outcome.turn_over and board["at"] == [0, 0]


def test_move_the_full_number_of_notes_and_discard_the_card():
    """"3. Players must move the full number of notes shown on each card they play,
    and may only play one card to move per turn. 4. After playing a card, players
    place it in a discard pile on the table." """
    board = make(hands=[[3, 4], []], fluffy=15)
    outcome = move(board, 0, 3)
    assert board["at"][0] == 3 and board["hands"][0] == [4] and board["discard"] == [3]
    assert outcome.turn_over and outcome.winner is None


def test_landing_on_a_flute_removes_it():
    """LANDING ON A TOKEN: "1. When a player ends his/her move on a space with a token
    on it, that player flips the token over. 2. If the token shows a flute, that
    player removes the token from the board. The turn is over." Tokens passed over
    are not flipped."""
    board = make(hands=[[2], []], fluffy=1)
    outcome = move(board, 0, 2)  # passes the face-down Fluffy on space 1
    assert board["tokens"][1] is None and board["tokens"][0] == "fluffy" and not board["fluffy_up"]
    assert "hagrid_flute" in types(outcome.events) and outcome.turn_over
    assert hagrid.view(board, None)["spaces"][:3] == ["face_down", "empty", "face_down"]


def test_landing_on_an_empty_space_flips_nothing():
    """Only "a space with a token on it" is flipped; an emptied space is just a space."""
    board = make(hands=[[2], []], removed=[2])
    outcome = move(board, 0, 2)
    assert types(outcome.events) == ["hagrid_moved"]


# -- Fluffy ---------------------------------------------------------------------------------------------


def test_fluffy_with_a_song_falls_asleep():
    """"3. If the token has Fluffy on it, that player must play a song to put Fluffy
    to sleep. To put Fluffy to sleep, a player must play four different cards (a 1
    note card, a 2 note card, a 3 note card, and a 4 note card) at the same time."
    Holding a song, the player must play it (automatically)."""
    board = make(hands=[[1, 2, 3, 4, 4, 2], []], fluffy=2)
    outcome = move(board, 0, 2)
    assert types(outcome.events) == ["hagrid_moved", "hagrid_fluffy_found", "hagrid_song"]
    assert board["at"][0] == 2 and board["hands"][0] == [4] and board["asleep"] == 0
    assert board["fluffy_up"] and sorted(board["discard"]) == [1, 2, 2, 3, 4]
    assert hagrid.view(board, 1)["spaces"][1] == "fluffy"


def test_fluffy_without_a_song_sends_the_player_back_to_start():
    """"4. If the player does not have all four cards, he/she must go back to Start."
    Fluffy stays face up, awake (house rule)."""
    board = make(hands=[[1, 2, 3, 3], []], fluffy=3, at=[0, 0])
    outcome = move(board, 0, 3)
    assert board["at"][0] == 0 and "hagrid_back_to_start" in types(outcome.events)
    assert board["fluffy_up"] and board["asleep"] is None and board["hands"][0] == [1, 2, 3]


def test_a_song_counts_only_the_cards_left_after_the_move():
    """The card played to move is on the discard pile before Fluffy is met: the song
    is four more cards ("four different cards ... at the same time")."""
    board = make(hands=[[1, 2, 3, 4], []], fluffy=4)
    move(board, 0, 4)
    assert board["at"][0] == 0 and board["hands"][0] == [1, 2, 3]


def test_a_sleeping_fluffy_may_be_passed_and_landed_on():
    """PASSING FLUFFY: "1. Once Fluffy has been put to sleep, he stays asleep for one
    full turn (until the player who put Fluffy to sleep plays again). Any other
    player may pass Fluffy without playing a song." """
    board = make(hands=[[], [4, 3]], fluffy=3, fluffy_up=True, asleep=0, at=[3, 0], last_turn=0)
    hagrid.begin_turn(board, 1, Rng(1))
    assert board["asleep"] == 0
    assert {"type": "hagrid_move", "card": 4} in hagrid.legal_actions(board, 1)
    move(board, 1, 3)  # ends on the sleeping Fluffy's space: no song, no Start
    assert board["at"][1] == 3 and board["asleep"] == 0


def test_fluffy_wakes_when_the_singer_plays_again():
    """"he stays asleep for one full turn (until the player who put Fluffy to sleep
    plays again)": Fluffy wakes as the singer's next turn starts, not before."""
    board = make(seats=3, hands=[[], [], []], fluffy=5, fluffy_up=True, asleep=1, last_turn=1, at=[0, 5, 0])
    hagrid.begin_turn(board, 2, Rng(1))
    hagrid.begin_turn(board, 0, Rng(1))
    assert board["asleep"] == 1
    events = hagrid.begin_turn(board, 1, Rng(1))
    assert board["asleep"] is None and events[0] == {"type": "hagrid_fluffy_woke", "space": 5}


def test_fluffy_wakes_when_the_turn_order_passes_a_singer_who_left():
    """In order, a singer who went through the trapdoor plays on another board: Fluffy
    still sleeps only "one full turn", until the turn order comes round to the
    singer's place (house rule)."""
    board = make(seats=3, mode="chain", hands=[[], [], []], fluffy=5, fluffy_up=True, asleep=1, last_turn=1,
                 at=[0, TRAPDOOR, 0])
    board["finished"] = [1]
    hagrid.begin_turn(board, 2, Rng(1))
    hagrid.begin_turn(board, 0, Rng(1))
    assert board["asleep"] == 1
    hagrid.begin_turn(board, 2, Rng(1))  # seat 1's place in the order has come and gone
    assert board["asleep"] is None


def test_fluffy_wakes_for_a_lone_player_after_a_full_round():
    """Two players, the singer gone: the other passes freely on the next turn, and
    Fluffy is awake on the turn after ("one full turn")."""
    board = make(seats=2, mode="chain", hands=[[], []], fluffy=5, fluffy_up=True, asleep=1, last_turn=1,
                 at=[0, TRAPDOOR])
    board["finished"] = [1]
    hagrid.begin_turn(board, 0, Rng(1))
    assert board["asleep"] == 1
    hagrid.begin_turn(board, 0, Rng(1))
    assert board["asleep"] is None


def test_an_awake_fluffy_cannot_be_passed_without_a_song():
    """"2. After one full turn is over, players may not pass Fluffy unless they can
    play a song (four different cards)." Moves that would pass him are not legal;
    ending on his space or short of it is."""
    board = make(hands=[[1, 2, 3, 3], []], fluffy=3, fluffy_up=True, at=[1, 0])
    assert hagrid.legal_actions(board, 0) == [
        {"type": "hagrid_move", "card": 1}, {"type": "hagrid_move", "card": 2}, {"type": "hagrid_end"}]


def test_passing_an_awake_fluffy_plays_a_song():
    """"players may not pass Fluffy unless they can play a song": with a song besides
    the card played, the move is legal, the song is played and Fluffy sleeps again
    (house rule: for one full turn, as after any song)."""
    board = make(hands=[[1, 2, 3, 4, 4], []], fluffy=3, fluffy_up=True, at=[1, 0])
    outcome = move(board, 0, 4)
    assert board["at"][0] == 5 and board["hands"][0] == []
    assert types(outcome.events)[:2] == ["hagrid_moved", "hagrid_song"] and board["asleep"] == 0
    # the song must be four cards besides the one played
    board = make(hands=[[1, 2, 3, 4], []], fluffy=3, fluffy_up=True, at=[1, 0])
    assert {"type": "hagrid_move", "card": 4} not in hagrid.legal_actions(board, 0)


def test_landing_on_an_awake_face_up_fluffy_needs_a_song():
    """A face-up, awake Fluffy met again: "that player must play a song to put Fluffy
    to sleep ... If the player does not have all four cards, he/she must go back
    to Start" (house rule: the same as when he is first flipped)."""
    board = make(hands=[[2, 1], [2, 1, 2, 3, 4]], fluffy=2, fluffy_up=True)
    move(board, 0, 2)
    assert board["at"][0] == 0
    outcome = move(board, 1, 2)
    assert board["at"][1] == 2 and board["asleep"] == 1 and "hagrid_song" in types(outcome.events)


def test_leaving_fluffys_space_is_not_passing_him():
    """House rule: a piece on Fluffy's space (it sang him to sleep there, or stopped
    there while he slept) moves on freely when he wakes."""
    board = make(hands=[[4], []], fluffy=6, fluffy_up=True, at=[6, 0])
    assert {"type": "hagrid_move", "card": 4} in hagrid.legal_actions(board, 0)
    move(board, 0, 4)
    assert board["at"][0] == 10


def test_a_face_down_fluffy_is_passed_unknowingly():
    """Only a player who "ends his/her move on a space" flips a token: passing a
    face-down Fluffy needs no song."""
    board = make(hands=[[4], []], fluffy=2)
    move(board, 0, 4)
    assert board["at"][0] == 4 and not board["fluffy_up"]


# -- the trapdoor -------------------------------------------------------------------------------------


def test_the_first_through_the_trapdoor_wins_individually():
    """"HAGRID'S CHALLENGE All rules are the same, except that: 1. The first player
    to reach the trapdoor at the end of the cobblestone path wins the game." A
    move beyond space 15 ends on the trapdoor (house rule: no exact count)."""
    state = new(2, seed=4)
    board = board_of(state)
    board["at"][0], board["hands"][0] = 14, [4]
    board["tokens"] = ["fluffy"] + ["flute"] * 14
    state, events = GAME.apply(state, 0, {"type": "hagrid_move", "card": 4})
    assert board_of(state)["at"][0] == TRAPDOOR
    assert GAME.result(state)["winners"] == [0]
    assert {"type": "hagrid_trapdoor", "seat": 0, "rank": 1} in events


def test_in_order_each_player_goes_through_and_the_rest_play_on():
    """ADVANCING TO THE NEXT CHALLENGE: "1. As each player reaches the trapdoor,
    he/she moves on to Sprout's Challenge: The Devil's Snare. The rest of the
    players continue to play Hagrid's Challenge." House rule: the cards left in
    the hand go onto the discard pile."""
    board = make(mode="chain", hands=[[3, 1, 2], [4]], at=[15, 13], fluffy=1)
    outcome = move(board, 0, 3)
    assert outcome.finished == [0] and not outcome.closed and outcome.winner is None
    assert board["hands"][0] == [] and sorted(board["discard"]) == [1, 2, 3]
    assert not hagrid.can_play(board, 0) and hagrid.legal_actions(board, 0) == []
    outcome = move(board, 1, 4)
    assert outcome.finished == [1] and outcome.closed
    assert hagrid.view(board, None)["finished"] == [0, 1]


# -- hidden information ------------------------------------------------------------------------------------


def test_views_hide_other_hands_and_face_down_tokens():
    """Hands are hidden from other seats (they see the count); a face-down token shows
    nothing of itself: the view is the same wherever the face-down Fluffy lies."""
    board = make(hands=[[1, 4], [2, 3, 3]], fluffy=7, removed=[2])
    moved = clone(board)
    moved["tokens"][6], moved["tokens"][11] = "flute", "fluffy"
    for seat in (None, 0, 1):
        assert hagrid.view(board, seat) == hagrid.view(moved, seat)
    view = hagrid.view(board, 0)
    assert view["players"][0]["hand"] == [1, 4] and view["players"][1]["hand"] == []
    assert view["players"][1]["hand_size"] == 3
    assert all(p["hand"] == [] for p in hagrid.view(board, None)["players"])
    assert "pile" not in view and view["pile_size"] == len(board["pile"])


@pytest.mark.parametrize("seats", [2, 4])
def test_no_view_or_event_shows_a_secret(seats):
    """Over random games: no seat's view holds another hand or an unflipped Fluffy,
    and no visible event carries another seat's card."""
    for seed in range(max(2, PROPERTY_GAMES // 20)):
        playout = random_playout(GAME, "hagrid", seats, seed)
        for step in playout.steps:
            board = board_of(step.state_after)
            for seat in [None, *range(seats)]:
                view = GAME.view(step.state_after, seat)["boards"]["hagrid"]
                for p in view["players"]:
                    assert p["hand"] == (board["hands"][p["seat"]] if p["seat"] == seat else [])
                assert ("fluffy" in view["spaces"]) == board["fluffy_up"]
                for event in events_for(step.events, seat):
                    if event["type"] in ("hagrid_drew_card", "hagrid_hand"):
                        assert event["seat"] == seat


def test_determinise_keeps_the_view():
    """view(determinise(view(b, s), s, rng), s) == view(b, s), the unseen cards and
    Fluffy's place sampled (the 40 cards always add up)."""
    rng = Rng(99)
    for seed in range(6):
        playout = random_playout(GAME, "hagrid", 2 + seed % 3, seed)
        for step in playout.steps[::3]:
            board = board_of(step.state_after)
            for seat in [None, *range(board["seats"])]:
                seen = hagrid.view(board, seat)
                guess = hagrid.determinise(clone(seen), seat, rng)
                assert hagrid.view(guess, seat) == seen
                assert sorted(guess["pile"] + guess["discard"] + [c for h in guess["hands"] for c in h]) == hagrid.DECK
                assert sorted(t for t in guess["tokens"] if t) == sorted(t for t in board["tokens"] if t)


def test_determinise_samples_fluffy_among_face_down_spaces():
    board = make(hands=[[1], [2]], fluffy=3, removed=[1, 2])
    places = {hagrid.determinise(hagrid.view(board, 0), 0, Rng(s))["tokens"].index("fluffy") for s in range(60)}
    assert places <= set(range(2, 15)) and len(places) > 5


# -- the contract and random play -------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_contract(seats):
    check_contract(GAME, "hagrid", seats, range(3))


def test_view_schema_of_a_hand_built_board():
    validator = jsonschema.Draft202012Validator(hagrid.SCHEMA["view"])
    board = make(hands=[[1, 2], [3]], fluffy=4, fluffy_up=True, asleep=1, removed=[1])
    for seat in (None, 0, 1):
        validator.validate(hagrid.view(board, seat))


def _check_invariants(board: dict) -> None:
    assert sorted(board["pile"] + board["discard"] + [c for h in board["hands"] for c in h]) == hagrid.DECK
    assert all(at is None or 0 <= at <= TRAPDOOR for at in board["at"])
    assert board["tokens"].count("fluffy") == 1


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_random_individual_games_end_with_a_winner(seats):
    """Every random game ends with one winner, the first through the trapdoor; the
    40 cards are always all somewhere (hands, pile, discard pile)."""
    for seed in range(seats, PROPERTY_GAMES, 3):
        playout = random_playout(GAME, "hagrid", seats, seed)
        result = GAME.result(playout.final)
        assert result is not None and len(result["winners"]) == 1
        board = board_of(playout.final)
        assert board["at"][result["winners"][0]] == TRAPDOOR
        assert [s for s in range(seats) if board["at"][s] == TRAPDOOR] == result["winners"]
        for step in playout.steps:
            _check_invariants(board_of(step.state_after))


def chain_playout(seats: int, seed: int, max_actions: int = 5000) -> list[int]:
    """In-order play of this board alone, as the match drives it: the regular turn
    order among the seats still here, ``begin_turn`` then one random legal action."""
    rng, chooser = Rng(seed), Rng(seed ^ 0x5EED)
    board = hagrid.new_board(rng, seats, "chain", {})
    for seat in range(seats):
        hagrid.arrive(board, seat, rng, {"facts": {}})
    order, seat = [], 0
    for _ in range(max_actions):
        if hagrid.can_play(board, seat):
            hagrid.begin_turn(board, seat, rng)
            outcome = hagrid.play(board, seat, chooser.choice(hagrid.legal_actions(board, seat)), rng)
            _check_invariants(board)
            order += outcome.finished
            if outcome.closed:
                return order
        seat = (seat + 1) % seats
    raise AssertionError("the board did not close")


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_random_games_in_order_take_everyone_through(seats):
    """In order, random play takes every player through the trapdoor, one by one,
    and then the board closes."""
    for seed in range(seats, PROPERTY_GAMES // 2, 3):
        assert sorted(chain_playout(seats, seed)) == list(range(seats))
