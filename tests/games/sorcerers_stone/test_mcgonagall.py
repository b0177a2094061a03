"""McGonagall's Challenge: Chess (rule book 002_5ac5154540885c00.txt, GAME 4 and
"RULES FOR PLAYING CHESS"; house rules in docs/rules/sorcerers-stone.md).

The individual variants (``mcgonagall``: abbreviated rules, ``mcgonagall-complete``)
are driven through ``GAME``; the chained game's behaviour and the odd corners
through the board functions on hand-built boards. The board's own colour is an
actor of the match (``BOARD_SEAT``): these tests play its answers by hand; the
``board`` bot that chooses them in the workers is tested in tests/workers.
"""

from __future__ import annotations

import time

import chess
import pytest

from service.engine import BOARD_SEAT, NotYourTurn, Rng
from service.games.sorcerers_stone import GAME
from service.games.sorcerers_stone import mcgonagall as mc
from tests.games.contract import PROPERTY_GAMES, check_contract, random_playout
from tests.games.sorcerers_stone.helpers import board_types, check_board_schema

VARIANT = {"abbreviated": "mcgonagall", "complete": "mcgonagall-complete"}


# -- helpers -----------------------------------------------------------------------------------


def board_with(fen: str, players: list[tuple[str, str | None]], *, rules: str = "abbreviated",
               mode: str = "individual", ron: str | None = None, hermione: str | None = None) -> dict:
    """A board in ``fen`` with seat i playing colour players[i][0] with its Harry
    on players[i][1] (a None square: that seat has not arrived)."""
    board = mc.new_board(Rng(1), len(players), mode, {"chess_rules": rules})
    board.update(fen=fen, ron=ron, hermione=hermione, chosen=len(players))
    for seat, (colour, square) in enumerate(players):
        if square is not None:
            board["players"][seat].update(state="playing", colour=colour, square=square)
    return board


def state_with(fen: str, players: list[tuple[str, str]], *, rules: str = "abbreviated", **kwargs) -> dict:
    """A match of the individual variant whose board is replaced by a hand-built one."""
    seats = len(players)
    state = GAME.setup(GAME.check_options(VARIANT[rules], {}, seats), seats, 7)
    state["boards"]["mcgonagall"] = board_with(fen, players, rules=rules, **kwargs)
    state["turn"] = 0
    return state


def moves(board: dict, seat: int) -> set[str]:
    return {a["uci"] for a in mc.legal_actions(board, seat) if a["type"] == "mcgonagall_move"}


def move(uci: str) -> dict:
    return {"type": "mcgonagall_move", "uci": uci}


def board_move(uci: str) -> dict:
    """The board's own move (played by the bot workers in a real match)."""
    return {"type": "mcgonagall_board_move", "uci": uci}


def new_match(variant: str, seats: int, seed: int = 3) -> dict:
    return GAME.setup(GAME.check_options(variant, {}, seats), seats, seed)


# -- the engine contract and the schema --------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("variant", ["mcgonagall", "mcgonagall-complete"])
def test_contract(variant, seats):
    check_contract(GAME, variant, seats, range(1), view_every=5)


def test_schema_is_in_the_api_subset():
    """The GraphQL generator accepts the board's actions and view; every object
    is titled Mcgonagall..., closed, and its fields are described."""
    types = board_types(mc)
    assert set(types.action_types) == {"mcgonagall_replace", "mcgonagall_move", "mcgonagall_exit", "mcgonagall_pass",
                                       "mcgonagall_board_move", "mcgonagall_board_pass"}
    check_board_schema(mc)


# -- perft -------------------------------------------------------------------------------------


def perft(cb: chess.Board, depth: int) -> int:
    """Leaf count through the board's own move generation (bulk-counted last ply)."""
    found = mc.chess_moves(cb, cb.turn, "complete")
    if depth == 1:
        return len(found)
    total = 0
    for m in found:
        cb.push(m)
        total += perft(cb, depth - 1)
        cb.pop()
    return total


def test_perft_from_the_starting_position():
    """Issue #5: "Chess move generation for the complete rules passes the standard
    perft counts for the starting position to depth 4" (20, 400, 8902, 197281)."""
    started = time.monotonic()
    cb = chess.Board()
    assert [perft(cb, depth) for depth in (1, 2, 3, 4)] == [20, 400, 8902, 197281]
    assert time.monotonic() - started < 30


def test_perft_with_castling_en_passant_and_promotion():
    """"Kiwipete" (castling both ways, en passant, promotions): 48 and 2039 moves."""
    cb = chess.Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    assert [perft(cb, 1), perft(cb, 2)] == [48, 2039]


# -- set-up and arrival ------------------------------------------------------------------------


def test_set_up_puts_ron_and_hermione_in_place_of_a_black_knight_and_rook():
    """SET UP "1. Players set up the board for Chess (see Fig. 1). 2. Players
    replace the black knight (horse) with the Ron token and the black rook
    (castle) with the Hermione token." (house rule: the queen's side ones)."""
    state = new_match("mcgonagall", 2)
    view = GAME.view(state, None)["boards"]["mcgonagall"]
    assert view["fen"].split()[0] == chess.STARTING_BOARD_FEN
    tokens = {p["square"]: (p["token"], p["kind"], p["colour"]) for p in view["pieces"] if p["token"]}
    assert tokens == {"b8": ("ron", "knight", "black"), "a8": ("hermione", "rook", "black")}


def test_the_first_player_replaces_a_black_bishop_then_either_colour():
    """SET UP "3. The first player to complete Flitwick's Challenge removes the
    black bishop of his/her choice from the board and replaces it with his/her
    playing piece (Harry Potter)." "5. As additional players reach McGonagall's
    Challenge, they replace the remaining bishops of their choice (of either
    color). The second player ... may opt to play on the same team as the
    first player." Individually, every seat arrives at set-up in seat order."""
    state = new_match("mcgonagall", 3)
    assert GAME.to_act(state) == {0}
    assert GAME.legal_actions(state, 0) == [{"type": "mcgonagall_replace", "bishop": "c8"},
                                            {"type": "mcgonagall_replace", "bishop": "f8"}]
    state, _ = GAME.apply(state, 0, {"type": "mcgonagall_replace", "bishop": "f8"})
    assert GAME.to_act(state) == {1}
    assert [a["bishop"] for a in GAME.legal_actions(state, 1)] == ["c1", "f1", "c8"]
    state, _ = GAME.apply(state, 1, {"type": "mcgonagall_replace", "bishop": "c8"})  # the same team
    state, events = GAME.apply(state, 2, {"type": "mcgonagall_replace", "bishop": "c1"})
    board = state["boards"]["mcgonagall"]
    assert [(p["colour"], p["square"]) for p in board["players"]] == [("black", "f8"), ("black", "c8"),
                                                                      ("white", "c1")]
    assert events[0] == {"type": "mcgonagall_replaced", "seat": 2, "bishop": "c1", "square": "c1", "colour": "white"}
    # "Players take turns moving, in their regular turn order": the youngest (seat 0) moves first.
    assert GAME.to_act(state) == {0} and state["turn"] == 0
    pieces = {p["square"]: p for p in GAME.view(state, 1)["boards"]["mcgonagall"]["pieces"]}
    assert pieces["c1"]["token"] == "harry" and pieces["c1"]["seat"] == 2 and pieces["c1"]["kind"] == "bishop"


def test_all_bishops_captured_before_a_player_arrives():
    """SET UP "6. If all remaining bishops have already been captured by the time
    that a player reaches McGonagall's Challenge, that player places his/her
    playing piece (Harry Potter) on the space where a captured bishop started."
    House rule: the Harry takes that bishop's colour (c1, f1 white; c8, f8
    black) and, when the square is taken, lands on the nearest empty square
    of the same shade."""
    # Chained: seat 0 (black Harry on d7) and seat 1 (white Harry on e2) play; the other
    # two bishops (white c1: dark squares; black c8: light squares) were captured.
    board = board_with("4k3/3b4/8/8/8/8/4B3/4K3 w - - 0 1",
                       [("black", "d7"), ("white", "e2"), ("black", None)], mode="chain", rules="complete")
    board["captured"] = [{"square": "g5", "kind": "bishop", "colour": "white", "token": None, "seat": None},
                         {"square": "a6", "kind": "bishop", "colour": "black", "token": None, "seat": None}]
    mc.arrive(board, 2, Rng(1), {"facts": {}})
    assert mc.turn_owner(board) == 2
    assert mc.legal_actions(board, 2) == [{"type": "mcgonagall_replace", "bishop": "c1"},
                                          {"type": "mcgonagall_replace", "bishop": "c8"}]
    assert mc.legal_actions(board, 0) == []  # the arriving seat chooses first
    mc.play(board, 2, {"type": "mcgonagall_replace", "bishop": "c1"}, Rng(1))
    assert board["players"][2] == {"state": "playing", "colour": "white", "square": "c1", "captured": None,
                                   "left": False}
    assert chess.Board(board["fen"]).piece_at(chess.C1) == chess.Piece(chess.BISHOP, chess.WHITE)
    assert mc.turn_owner(board) is None


def test_a_captured_bishop_start_that_is_occupied():
    """House rule for SET UP 6: the starting square is taken (here c8 by a white
    rook): the Harry lands on the nearest empty light square (b7... d7 by index)."""
    board = board_with("2R1k3/8/8/8/8/8/8/4K3 w - - 0 1", [("white", None), ("black", None)], mode="chain")
    board["chosen"] = 1
    board["captured"] = [{"square": "e6", "kind": "bishop", "colour": "black", "token": None, "seat": None}]
    mc.arrive(board, 1, Rng(1), {"facts": {}})
    assert mc.legal_actions(board, 1) == [{"type": "mcgonagall_replace", "bishop": "c8"}]
    outcome = mc.play(board, 1, {"type": "mcgonagall_replace", "bishop": "c8"}, Rng(1))
    assert outcome.events[0]["square"] == "b7"
    assert board["players"][1]["colour"] == "black"
    assert chess.Board(board["fen"]).piece_at(chess.B7) == chess.Piece(chess.BISHOP, chess.BLACK)


# -- moving ------------------------------------------------------------------------------------


def test_players_move_their_colour_but_not_another_players_harry():
    """PLAYING THE GAME "3. On their turns, players may move any Chess piece of
    their color, except for another player's playing piece (Harry Potter)."
    "Playing pieces (Harry Potter) move like bishops"."""
    board = board_with("2b1kb2/8/8/8/8/8/8/4K3 w - - 0 1", [("black", "c8"), ("black", "f8")])
    own = moves(board, 0)
    assert "c8d7" in own and "c8a6" in own          # its own Harry, as a bishop
    assert not any(u.startswith("f8") for u in own)  # the team-mate's Harry
    assert "e8d8" in own                             # the black king
    assert not any(u.startswith("e1") for u in own)  # not the other colour


def test_the_board_answers_with_the_colour_no_player_holds():
    """House rule (DESIGN.md: "the side that no player sits on is played by the
    board itself, through the bot workers"): after a player's move the match
    waits on the board alone (``BOARD_SEAT``), whose colour nobody holds; its
    one move ends the player's turn, which then passes to the left."""
    state = new_match("mcgonagall", 2)
    state, _ = GAME.apply(state, 0, {"type": "mcgonagall_replace", "bishop": "c8"})
    state, _ = GAME.apply(state, 1, {"type": "mcgonagall_replace", "bishop": "f8"})
    assert GAME.view(state, 0)["boards"]["mcgonagall"]["board_colour"] == "white"
    assert GAME.legal_actions(state, BOARD_SEAT) == []
    state, events = GAME.apply(state, 0, move("e7e5"))
    assert [(e["type"], e["seat"]) for e in events] == [("mcgonagall_moved", 0)]
    assert GAME.to_act(state) == {BOARD_SEAT} and state["turn"] == 0
    assert GAME.view(state, None)["to_act"] == [BOARD_SEAT]
    assert GAME.view(state, 1)["boards"]["mcgonagall"]["board_to_move"] is True
    assert GAME.legal_actions(state, 0) == [] and GAME.legal_actions(state, 1) == []
    answers = GAME.legal_actions(state, BOARD_SEAT)
    assert board_move("g1f3") in answers and all(a["uci"][:2] in {"a2", "b2", "c2", "d2", "e2", "f2", "g2", "h2",
                                                                  "b1", "g1"} for a in answers)
    with pytest.raises(NotYourTurn, match="board's move"):
        GAME.apply(state, 1, move("e5e4"))
    state, events = GAME.apply(state, BOARD_SEAT, board_move("g1f3"))
    assert events[0] == {"type": "mcgonagall_moved", "seat": None, "colour": "white", "kind": "move", "uci": "g1f3",
                         "captured": None}
    assert events[1] == {"type": "turn_began", "seat": 1, "board": "mcgonagall"}
    last = GAME.view(state, None)["boards"]["mcgonagall"]["last"]
    assert [(p["seat"], p["uci"]) for p in last] == [(0, "e7e5"), (None, "g1f3")]
    assert GAME.to_act(state) == {1} and state["turn"] == 1
    assert GAME.view(state, None)["boards"]["mcgonagall"]["board_to_move"] is False
    assert GAME.legal_actions(state, BOARD_SEAT) == []


def test_the_boards_answer_keeps_the_regular_turn_order():
    """"Players take turns moving, in their regular turn order": with three
    black players, the board answers each of them in turn, and the turn goes
    0, board, 1, board, 2, board, 0."""
    state = new_match("mcgonagall", 3)
    for seat, bishop in enumerate(["c8", "f8", "c1"]):
        state, _ = GAME.apply(state, seat, {"type": "mcgonagall_replace", "bishop": bishop})
    board = state["boards"]["mcgonagall"]
    board["players"][2].update(state="captured", square=None, captured=1)  # only black is held now
    board["fen"] = chess.Board(board["fen"]).fen().replace("RNBQKBNR", "RN1QKBNR")
    order = []
    for uci, answer in [("e7e6", "e2e3"), ("d7d6", "d2d3"), ("b8c6", "b1c3")]:
        order.append(state["turn"])
        state, _ = GAME.apply(state, state["turn"], move(uci))
        assert GAME.to_act(state) == {BOARD_SEAT}
        state, _ = GAME.apply(state, BOARD_SEAT, board_move(answer))
    assert order == [0, 1, 0] and state["turn"] == 1  # seat 2 is out of the game: its turns are skipped


def test_the_board_moves_its_own_pieces_and_passes_only_when_stuck():
    """The board moves any piece of its colour (the same moves a player of that
    colour would have); it passes (``mcgonagall_board_pass``) only when it has
    no move."""
    board = board_with("3q4/8/8/8/b2R4/8/8/k3K2B w - - 0 1", [("black", "a4")])
    board["board_to_move"] = True
    answers = {a["uci"] for a in mc.legal_actions(board, BOARD_SEAT)}
    assert answers == {m.uci() for m in mc.chess_moves(chess.Board(board["fen"]), chess.WHITE, "abbreviated")}
    assert {"d4a4", "e1d2", "h1a8"} <= answers
    stuck = board_with("2b2b2/1p1p4/1P1P4/8/8/8/8/8 w - - 0 1", [("white", None)])
    stuck["players"][0].update(state="playing", colour="black", square=None)
    stuck["board_to_move"] = True
    assert mc.legal_actions(stuck, BOARD_SEAT) == [{"type": "mcgonagall_board_pass"}]


def test_no_board_answer_when_both_colours_are_held():
    """"The second player ... does not have to play against the first player":
    when it does, the players move both colours in their regular turn order."""
    board = board_with("2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1", [("black", "c8"), ("white", "c1")])
    assert mc.board_colour(board) is None
    outcome = mc.play(board, 0, move("e8e7"), Rng(1))
    assert [e["type"] for e in outcome.events] == ["mcgonagall_moved"]
    assert outcome.turn_over and mc.turn_owner(board) is None and mc.legal_actions(board, BOARD_SEAT) == []


def test_a_seat_with_nothing_to_move_passes():
    """House rule: "Every seat given the turn must have at least one legal
    action": a seat whose pieces are all stuck passes (so does the board)."""
    board = board_with("2b2b2/1p1p4/1P1P4/8/8/8/8/8 w - - 0 1", [("black", "c8"), ("black", "f8")])
    assert mc.legal_actions(board, 0) == [{"type": "mcgonagall_pass"}]
    outcome = mc.play(board, 0, {"type": "mcgonagall_pass"}, Rng(1))
    assert [(e["type"], e["seat"]) for e in outcome.events] == [("mcgonagall_passed", 0)]
    assert not outcome.turn_over and mc.turn_owner(board) == BOARD_SEAT
    assert mc.legal_actions(board, BOARD_SEAT) == [{"type": "mcgonagall_board_pass"}]
    outcome = mc.play(board, BOARD_SEAT, {"type": "mcgonagall_board_pass"}, Rng(1))
    assert outcome.events == [{"type": "mcgonagall_passed", "seat": None, "colour": "white"}]
    assert outcome.turn_over and mc.turn_owner(board) is None
    assert board["plies"] == 2


# -- the abbreviated rules ---------------------------------------------------------------------


def test_abbreviated_rules_have_no_check_castling_or_en_passant():
    """PLAYING THE GAME "4. Players may only move one piece per turn (Castling is
    not allowed)." "6. The En Passant rule, the Check rule, and the Castling
    rule are not used"."""
    state = new_match("mcgonagall", 2)
    assert chess.Board(state["boards"]["mcgonagall"]["fen"]).castling_rights == chess.BB_EMPTY
    # The black king may step next to the white rook's file (no check rule) and nothing castles.
    board = board_with("r3k2r/8/8/8/8/8/8/3RK3 b - - 0 1", [("black", None), ("white", None)])
    board["players"][0].update(state="playing", colour="black", square=None)
    board["fen"] = "r3kb1r/8/8/8/8/8/8/3RK3 b - - 0 1"
    board["players"][0]["square"] = "f8"
    legal = moves(board, 0)
    assert "e8d8" in legal and "e8d7" in legal
    assert "e8c8" not in legal and "e8g8" not in legal
    # A white pawn's double step gives no en passant capture.
    board = board_with("4kb2/8/8/8/3p4/8/4P3/4K3 w - - 0 1", [("black", "f8"), ("white", None)])
    board["players"][1].update(state="playing", colour="white", square=None)
    mc.play(board, 1, move("e2e4"), Rng(1))
    assert "d4e3" not in moves(board, 0)


def test_abbreviated_kings_may_be_captured_and_play_goes_on():
    """OBJECT (abbreviated) "To move your playing piece (Harry Potter) off the
    opposite end of the board from where it starts": taking a king does not
    end the game."""
    state = state_with("4kb2/8/8/8/8/8/8/4K2r b - - 0 1", [("black", "f8"), ("black", None)])
    state["boards"]["mcgonagall"]["players"][1].update(state="playing", colour="black", square=None)
    state, events = GAME.apply(state, 0, move("h1e1"))
    assert GAME.result(state) is None
    assert events[0]["captured"]["kind"] == "king"


def test_a_harry_on_the_far_rank_steps_off_the_board_and_wins():
    """OBJECT "To move your playing piece (Harry Potter) off the opposite end of
    the board from where it starts." House rule: a Harry standing on the far
    rank (rank 1 for black) leaves the board as its move; individually
    ("All rules are the same") the first one off wins."""
    state = state_with("4k3/8/8/8/8/8/8/4K2b w - - 0 1", [("black", "h1"), ("white", None)])
    state["boards"]["mcgonagall"]["players"][1].update(state="playing", colour="white", square=None)
    assert {"type": "mcgonagall_exit"} in GAME.legal_actions(state, 0)
    state, events = GAME.apply(state, 0, {"type": "mcgonagall_exit"})
    assert GAME.result(state)["winners"] == [0]
    assert events[0] == {"type": "mcgonagall_exited", "seat": 0, "square": "h1"}
    board = state["boards"]["mcgonagall"]
    assert board["over"] == "exited" and board["players"][0]["state"] == "exited"
    assert chess.Board(board["fen"]).piece_at(chess.H1) is None
    # A Harry not yet on its far rank cannot leave.
    other = board_with("4k3/8/8/8/8/8/7b/4K3 w - - 0 1", [("black", "h2")])
    assert {"type": "mcgonagall_exit"} not in mc.legal_actions(other, 0)


def test_abbreviated_promotion_as_in_the_complete_rules():
    """House rule: the abbreviated rules are silent on promotion; "All pieces
    move in the same ways that traditional Chess pieces move", so a pawn on
    the far rank becomes a queen, rook, bishop or knight of its player's choice."""
    board = board_with("4kb2/8/8/8/8/8/1p6/8 b - - 0 1", [("black", "f8")])
    assert {"b2b1q", "b2b1r", "b2b1b", "b2b1n"} <= moves(board, 0)


def test_captured_harrys_individually_and_chained():
    """CAPTURING "4. If a player's playing piece (Harry Potter) is captured, that
    player may no longer play in the Chess game." Fact ``captured``: 1 for the
    first, 2 for the second (Quirrell's Challenge: "The last player captured
    must wait 1 turn ..."). Chained, abbreviated: the seat moves on at once."""
    fen = "4k3/8/8/8/8/2b5/8/R3K2b w - - 0 1"
    board = board_with(fen, [("black", "c3"), ("black", "h1"), ("white", None)], mode="chain")
    board["players"][2].update(state="playing", colour="white", square=None)
    outcome = mc.play(board, 2, move("a1h1"), Rng(1))
    assert outcome.finished == [1] and outcome.facts == {1: {"captured": 1}}
    assert board["players"][1]["state"] == "captured" and mc.can_play(board, 1) is False
    assert not outcome.closed
    # Individually the seat is out of the game; the last Harry captured ends it with no winner.
    board = board_with("4k3/8/8/8/8/8/8/R6b b - - 0 1", [("black", "h1"), ("black", None)])
    board["players"][1].update(state="captured", captured=1)
    board["captures"] = 1
    mc.play(board, 0, move("e8e7"), Rng(1))
    outcome = mc.play(board, BOARD_SEAT, board_move("a1h1"), Rng(1))  # the board takes the last Harry
    assert outcome.facts[0] == {"captured": 2}
    assert board["over"] == "no_players" and outcome.closed and outcome.winner is None


def test_chained_abbreviated_exit_moves_the_seat_on_and_the_board_closes():
    """ADVANCING "As each player moves his/her playing piece (Harry Potter) off of
    the opposite edge of the board, he/she places it on the door ... of the
    Quirrell's Challenge". Players "do not wait for all players": the board
    closes once every seat has arrived and left."""
    board = board_with("4k3/8/8/8/8/8/8/2b1K2b w - - 0 1", [("black", "h1"), ("black", None)], mode="chain")
    outcome = mc.play(board, 0, {"type": "mcgonagall_exit"}, Rng(1))
    assert outcome.finished == [0] and not outcome.closed and board["over"] is None
    assert [e["type"] for e in outcome.events] == ["mcgonagall_exited"]  # nobody left to answer
    mc.arrive(board, 1, Rng(1), {"facts": {}})
    assert mc.legal_actions(board, 1) == [{"type": "mcgonagall_replace", "bishop": "c1"}]
    mc.play(board, 1, {"type": "mcgonagall_replace", "bishop": "c1"}, Rng(1))
    assert {"type": "mcgonagall_exit"} in mc.legal_actions(board, 1)
    outcome = mc.play(board, 1, {"type": "mcgonagall_exit"}, Rng(1))
    assert outcome.finished == [1] and outcome.closed


# -- the complete rules ------------------------------------------------------------------------


def test_complete_rules_check_castling_en_passant_and_promotion():
    """CHECK "3. The player whose king is in check must immediately make a move
    that gets the king out of check"; CASTLING (a.-d.); EN PASSANT "This
    special capture may only be made on the turn immediately following the
    two-square move"; PROMOTING PAWNS "its owner may transform it into any
    other piece (other than a king)". Illegal moves are not offered."""
    # In check from the rook on e1 (the Harry on h8 is shut in): only king moves are legal.
    board = board_with("4k2b/6p1/8/8/8/8/8/K3R3 b - - 0 1", [("black", "h8")], rules="complete")
    assert moves(board, 0) == {"e8d8", "e8d7", "e8f7", "e8f8"}
    # Castling both ways, Hermione (a8) goes with the king.
    board = board_with("r3kb1r/8/8/8/8/8/8/4K3 b kq - 0 1", [("black", "f8")], rules="complete",
                       hermione="a8")
    assert {"e8c8"} <= moves(board, 0) and "e8g8" not in moves(board, 0)  # f8 is in the way
    mc.play(board, 0, move("e8c8"), Rng(1))
    assert board["hermione"] == "d8"
    assert chess.Board(board["fen"]).piece_at(chess.D8) == chess.Piece(chess.ROOK, chess.BLACK)
    # En passant right after the double step, promotion to any piece but a king.
    board = board_with("4kb2/8/8/8/3p4/8/4P3/4K3 w - - 0 1", [("black", "f8"), ("white", None)],
                       rules="complete")
    board["players"][1].update(state="playing", colour="white", square=None)
    mc.play(board, 1, move("e2e4"), Rng(1))
    assert "d4e3" in moves(board, 0)
    outcome = mc.play(board, 0, move("d4e3"), Rng(1))
    assert outcome.events[0]["captured"] == {"square": "e4", "kind": "pawn", "colour": "white", "token": None,
                                             "seat": None}
    board = board_with("4kb2/8/8/8/8/8/1p6/4K3 b - - 0 1", [("black", "f8")], rules="complete")
    assert {u for u in moves(board, 0) if u.startswith("b2")} == {"b2b1q", "b2b1r", "b2b1b", "b2b1n"}


def test_en_passant_lapses_when_the_same_colour_moves_again():
    """EN PASSANT "This special capture may only be made on the turn immediately
    following the two-square move": when a team-mate of the same colour moves
    next (the regular turn order), the chance is gone."""
    board = board_with("4kb2/8/8/8/3p4/8/4P3/4K3 w - - 0 1",
                       [("black", "f8"), ("white", None), ("white", None)], rules="complete")
    board["players"][1].update(state="playing", colour="white", square=None)
    board["players"][2].update(state="playing", colour="white", square=None)
    mc.play(board, 1, move("e2e4"), Rng(1))
    mc.play(board, 2, move("e1f1"), Rng(1))
    assert "d4e3" not in moves(board, 0)


def test_checkmate_wins_for_the_team():
    """OBJECT "To be first to capture the other color's king"; CHECKMATE "If a
    player is in check and cannot move in such a way that the king is no
    longer in check ..., the king is in "checkmate" and the game ends."
    Individually the whole team still playing wins ("The team that checkmates
    the other team's king"), and each of its seats gets ``checkmated``."""
    state = state_with("r1b1kb2/8/8/8/8/8/5PPP/6K1 b - - 0 1", [("black", "c8"), ("black", "f8")],
                       rules="complete", hermione="a8")
    state, events = GAME.apply(state, 0, move("a8a1"))
    assert GAME.result(state)["winners"] == [0, 1]
    assert GAME.result(state)["reason"] == "Checkmate: the team that mated wins."
    assert state["players"][1]["facts"] == {"checkmated": True}
    over = [e for e in events if e["type"] == "mcgonagall_game_over"]
    assert over == [{"type": "mcgonagall_game_over", "reason": "checkmate", "winner": "black", "seat": 0}]


def test_the_boards_checkmate_has_no_winner():
    """The colour played by the board (house rule) can checkmate the players:
    the individual game then ends with no winner."""
    board = board_with("r5k1/8/8/8/6P1/7B/5PPP/N5K1 w - - 0 1", [("white", "h3")], rules="complete")
    mc.play(board, 0, move("g4g5"), Rng(1))
    outcome = mc.play(board, BOARD_SEAT, board_move("a8a1"), Rng(1))  # black (the board) mates
    assert [e.get("uci") for e in outcome.events[:1]] == ["a8a1"]
    assert board["last"] == [
        {"seat": 0, "colour": "white", "kind": "move", "uci": "g4g5", "captured": None},
        {"seat": None, "colour": "black", "kind": "move", "uci": "a8a1",
         "captured": {"square": "a1", "kind": "knight", "colour": "white", "token": None, "seat": None}}]
    assert board["over"] == "checkmate" and board["winner"] == "black"
    assert outcome.winner is None and outcome.closed


def test_a_king_left_in_check_is_captured_when_a_colour_moves_twice():
    """"Players take turns moving, in their regular turn order", so a colour may
    move twice in a row; the OBJECT is "To be first to capture the other
    color's king", so a king left in check may be taken: that wins."""
    state = state_with("2b1rb1k/8/8/8/8/8/8/4K3 b - - 0 1", [("black", "c8"), ("black", "f8")], rules="complete")
    assert "e8e1" in {a.get("uci") for a in GAME.legal_actions(state, 0)}
    state, _ = GAME.apply(state, 0, move("e8e1"))
    assert GAME.result(state)["winners"] == [0, 1]  # the team: both black Harrys are still playing
    assert state["boards"]["mcgonagall"]["over"] == "king_captured"


def test_stalemate_is_a_draw():
    """House rule: the rule book is silent on stalemate; as in chess, a colour
    that cannot move and is not in check draws the game (no winner)."""
    state = state_with("1qb2b2/8/8/8/8/8/2k5/K7 b - - 0 1", [("black", "c8"), ("black", "f8")], rules="complete")
    state, _ = GAME.apply(state, 0, move("b8b3"))
    assert GAME.result(state)["winners"] == []
    assert state["boards"]["mcgonagall"]["over"] == "stalemate"


def test_chained_complete_game_finishes_everybody_when_it_ends():
    """ADVANCING (complete rules) "1. When playing a complete game of Chess, play
    does not begin on Quirrell's Challenge until the game is over." "3. The
    team that checkmates the other team's king goes first." "5. ... the last
    player captured must wait 1 turn". A captured seat waits on the board;
    at the end every seat still here finishes, the winners first."""
    board = board_with("r3k3/8/8/B7/8/7b/5PPP/6K1 w - - 0 1",
                       [("black", "h3"), ("white", "a5"), ("black", None), ("black", None)],
                       rules="complete", mode="chain", hermione="a8")
    board["players"][2].update(state="captured", colour="black", captured=1)
    board["captures"] = 1
    outcome = mc.play(board, 1, move("a5c7"), Rng(1))  # both colours held: no answer from the board
    assert outcome.finished == [] and len(outcome.events) == 1 and mc.can_play(board, 2) is False
    outcome = mc.play(board, 0, move("a8a1"), Rng(1))
    assert board["over"] == "checkmate"
    assert outcome.finished == [0, 1, 2]
    assert outcome.facts == {0: {"checkmated": True}}
    assert not outcome.closed                              # seat 3 has not arrived yet
    # A latecomer finds a new game set up for it.
    events = mc.arrive(board, 3, Rng(1), {"facts": {}})
    assert events[0] == {"type": "mcgonagall_new_game", "game": 2}
    assert board["fen"].split()[0] == chess.STARTING_BOARD_FEN and board["over"] is None
    assert [p["token"] for p in mc.view(board, 3)["pieces"] if p["token"]] == ["hermione", "ron"]
    assert [p["state"] for p in board["players"]] == ["done", "done", "captured", "choosing"]
    assert [a["bishop"] for a in mc.legal_actions(board, 3)] == ["c8", "f8"]


def test_chained_complete_game_with_every_harry_captured_ends():
    """A chained complete game whose players were all captured is over (nobody is
    left to play it): the captured seats move on in capture order."""
    board = board_with("4k3/8/8/8/8/8/8/R3K2b w - - 0 1", [("black", "h1"), ("black", None)],
                       rules="complete", mode="chain")
    board["players"][1].update(state="captured", captured=1)
    board["captures"] = 1
    board["fen"] = "4k3/8/8/8/8/8/8/R5Kb b - - 0 1"
    mc.play(board, 0, move("e8e7"), Rng(1))
    outcome = mc.play(board, BOARD_SEAT, board_move("g1h1"), Rng(1))  # the board takes the Harry on h1
    assert board["over"] == "no_players"
    assert outcome.finished == [1, 0] and outcome.closed
    assert outcome.facts == {0: {"captured": 2}}


# -- the move cap ------------------------------------------------------------------------------


@pytest.mark.parametrize("rules", ["abbreviated", "complete"])
def test_the_move_cap_ends_the_game(rules):
    """House rule: random chess can run very long; after ``move_cap`` plies since
    the last arrival the game ends with no winner (chained: the players still
    on the board move on)."""
    state = state_with("4kb2/8/8/8/8/8/8/R3K3 b - - 0 1", [("black", "f8"), ("black", None)], rules=rules)
    state["boards"]["mcgonagall"]["plies"] = mc.DATA["move_cap"] - 1
    state, _ = GAME.apply(state, 0, move("e8d8"))
    assert GAME.result(state)["winners"] == []
    assert state["boards"]["mcgonagall"]["over"] == "cap"
    board = board_with("4kb2/8/8/8/8/8/8/R3K3 b - - 0 1", [("black", "f8"), ("black", None)], rules=rules,
                       mode="chain")
    board["plies"] = mc.DATA["move_cap"] - 1
    outcome = mc.play(board, 0, move("e8d8"), Rng(1))
    assert board["over"] == "cap" and outcome.finished == [0] and not outcome.closed


# -- views -------------------------------------------------------------------------------------


def test_everything_is_public_and_determinise_reads_the_board_back():
    """Chess has no hidden information: every seat and the spectator see the
    same board, and ``determinise`` gives a board with the same view."""
    playout = random_playout(GAME, "mcgonagall-complete", 3, 11)
    for step in playout.steps[::7] + [playout.steps[-1]]:
        state = step.state_after
        views = [GAME.view(state, seat)["boards"]["mcgonagall"] for seat in (None, 0, 1, 2)]
        assert all(v == views[0] for v in views)
        board_view = views[1]
        assert mc.view(mc.determinise(board_view, 0, Rng(3)), 0) == board_view
    waiting = [step.state_after for step in playout.steps if BOARD_SEAT in GAME.to_act(step.state_after)]
    assert waiting  # the board's own turns read back too
    board_view = GAME.view(waiting[0], 0)["boards"]["mcgonagall"]
    assert board_view["board_to_move"] and mc.view(mc.determinise(board_view, 0, Rng(3)), 0) == board_view


# -- property test -----------------------------------------------------------------------------

#: Seeded random matches per variant and seat count (a chess match is ~100 actions).
GAMES = max(2, PROPERTY_GAMES // 20)


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("variant", ["mcgonagall", "mcgonagall-complete"])
def test_random_games_always_end(variant, seats):
    """Every random game ends: a winner (a Harry off the far edge, or the
    team that checkmated or took the king) or a documented no-winner end
    (every Harry captured, the board's colour winning, a draw, the cap)."""
    for seed in range(GAMES):
        final = random_playout(GAME, variant, seats, seed).final
        result = GAME.result(final)
        assert result is not None, (variant, seats, seed)
        board = final["boards"]["mcgonagall"]
        if result["winners"]:
            assert board["over"] in ("exited", "checkmate", "king_captured")
            if board["over"] == "exited":
                assert len(result["winners"]) == 1
            for winner in result["winners"]:
                assert board["players"][winner]["colour"] == board["winner"]
        else:
            assert board["over"] in ("no_players", "cap", "stalemate", "insufficient_material",
                                     "seventy_five_moves", "checkmate", "king_captured")
            if board["winner"] is not None:  # the board's own colour won
                assert not any(p["state"] in ("playing", "done") and p["colour"] == board["winner"]
                               for p in board["players"])
