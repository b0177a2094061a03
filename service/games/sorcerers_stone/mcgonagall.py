"""GAME 4 - McGonagall's Challenge: Chess.

Read beside the rule book, /work/shared/seeds/002_5ac5154540885c00.txt ("GAME 4 .
MCGONAGALL'S CHALLENGE: CHESS", "RULES FOR PLAYING CHESS" and, individually,
"McGONAGALL'S CHALLENGE All rules are the same."), and
docs/rules/sorcerers-stone.md (every house rule, with its source).

"NOTE: For McGonagall's Challenge, players may either play a complete game of
Chess, or the abbreviated rules of Chess." The option ``chess_rules`` chooses:

* ``abbreviated``: "The En Passant rule, the Check rule, and the Castling rule
  are not used"; OBJECT "To move your playing piece (Harry Potter) off the
  opposite end of the board from where it starts." Moves are python-chess's
  *pseudo-legal* moves (a king may be left attacked, and may be captured).
* ``complete``: OBJECT "To be first to capture the other color's king": check,
  checkmate, castling, en passant and promotion. Moves are python-chess's
  *legal* moves.

The board is one chess game kept as a FEN string; what FEN cannot hold (which
pieces are Ron, Hermione and each seat's Harry) is kept by square and carried
along as pieces move and are captured.

Actions
-------
``mcgonagall_replace {bishop}``
    An arriving seat (the :func:`turn_owner`) puts its Harry in place of a
    bishop (``bishop`` is the bishop's square), or, once every bishop is
    gone, on a captured bishop's starting square (``bishop`` names it).
``mcgonagall_move {uci}``
    Move a piece of the seat's colour (UCI: ``e7e5``, ``e2e1q`` promotes).
``mcgonagall_exit``
    Abbreviated rules: a Harry standing on the far rank steps off the board.
``mcgonagall_pass``
    Only when the seat has no move at all (the pieces it may move are stuck).
``mcgonagall_board_move {uci}`` and ``mcgonagall_board_pass``
    The board itself (:data:`~service.engine.BOARD_SEAT`): after each
    player's move, exit or pass, the colour that no player holds, if any,
    answers with one move, or passes when it has none. Until it has, the
    player's turn is not over and the match waits on ``BOARD_SEAT`` alone
    (:func:`turn_owner`); the bot workers choose the move (the ``board`` bot,
    workers/bots/board.py), never the rules.

State
-----
``mode``, ``rules``, ``seats``, ``game`` (1, 2... : a new game is set up for a
latecomer after the chained game's chess game has ended), ``fen``, ``ron`` and
``hermione`` (their squares, None once captured), ``players`` (per seat:
``state`` away | choosing | playing | exited | captured | done, ``colour``,
``square`` of its Harry, ``captured`` (1 for the first Harry captured...),
``left`` (reported finished to the match)), ``arrivals`` (seats still to
choose their bishop, first first), ``chosen`` (seats placed in this game),
``captured`` (pieces taken this game), ``captures`` (Harrys captured so far),
``plies`` (moves since the last arrival, for the cap), ``over`` (why the game
ended, None while it goes on), ``winner`` (the winning colour), ``last``
(the plies of the last turn: the player's and the board's answer) and
``board_to_move`` (the board owes its answer to the player's move).
"""

from __future__ import annotations

import functools
from typing import Any

import chess

from service.engine import BOARD_SEAT, Rng, load_data

from .board import Event, Outcome

NAME = "mcgonagall"
SCHEMA = load_data(__package__, "mcgonagall.schema.json")
DATA = load_data(__package__, "mcgonagall.json")

COLOURS = {chess.WHITE: "white", chess.BLACK: "black"}
COLOUR_OF = {"white": chess.WHITE, "black": chess.BLACK}
KINDS = {chess.PAWN: "pawn", chess.KNIGHT: "knight", chess.BISHOP: "bishop", chess.ROOK: "rook",
         chess.QUEEN: "queen", chess.KING: "king"}
ABBREVIATED, COMPLETE = "abbreviated", "complete"


# -- chess moves -------------------------------------------------------------------------------


def ready(cb: chess.Board, colour: bool) -> None:
    """Make ``colour`` the side to move.

    "Players take turns moving, in their regular turn order", so one colour
    may move twice in a row (three players, or two teams played in seat
    order). An en passant capture "may only be made on the turn immediately
    following the two-square move": when the colour to move is not the one
    python-chess expects, the en passant square lapses.
    """
    if cb.turn != colour:
        cb.turn = colour
        cb.ep_square = None


def chess_moves(cb: chess.Board, colour: bool, rules: str, frozen: frozenset[int] | set[int] = frozenset()
                ) -> list[chess.Move]:
    """Every move ``colour`` may make in ``cb``, except moves of a piece on a
    ``frozen`` square, sorted by UCI: the players' moves and the board's own
    (:func:`legal_actions`).

    Complete rules: python-chess's legal moves (a king may not be left in
    check; castling; en passant; promotion to a queen, rook, bishop or
    knight: "its owner may transform it into any other piece (other than a
    king)"). Abbreviated rules: its pseudo-legal moves ("The En Passant
    rule, the Check rule, and the Castling rule are not used": the board
    holds no castling rights and no en passant square).

    ``frozen``: "players may move any Chess piece of their color, except for
    another player's playing piece (Harry Potter)".
    """
    ready(cb, colour)
    generated = cb.generate_legal_moves() if rules == COMPLETE else cb.generate_pseudo_legal_moves()
    moves = [move for move in generated if move.from_square not in frozen]
    moves.sort(key=chess.Move.uci)
    return moves


#: Boards by FEN (a pure function of the FEN: what ``chess.Board(fen)`` gives); started afresh when full.
_BOARDS: dict[str, chess.Board] = {}
_BOARDS_LIMIT = 1 << 14


def _parsed(fen: str) -> chess.Board:
    """``chess.Board(fen)``, remembered (never change it: copy it)."""
    cb = _BOARDS.get(fen)
    if cb is None:
        if len(_BOARDS) >= _BOARDS_LIMIT:
            _BOARDS.clear()
        cb = _BOARDS[fen] = chess.Board(fen)
    return cb


def _cb(board: dict) -> chess.Board:
    """The position as a python-chess board (a fresh copy: callers change it)."""
    return _parsed(board["fen"]).copy(stack=False)


_SYMBOLS = [(colour, piece_type, chess.Piece(piece_type, colour).symbol())
            for colour in (chess.WHITE, chess.BLACK) for piece_type in chess.PIECE_TYPES]
_RUNS = [("1" * n, str(n)) for n in range(8, 1, -1)]
_KIND_OF = {symbol: (KINDS[piece_type], COLOURS[colour]) for colour, piece_type, symbol in _SYMBOLS}
#: (square name, kind, colour) per square and piece symbol: the entries of :func:`_pieces_of`.
_ENTRIES = [{symbol: (name, *_KIND_OF[symbol]) for symbol in _KIND_OF} for name in chess.SQUARE_NAMES]
#: A rank's FEN text per rank of eight cells ("1" for an empty square, else the piece's symbol).
_ROWS: dict[str, str] = {}


def _row_text(cells: str) -> str:
    """One rank of a board FEN: runs of empty squares counted."""
    text = _ROWS.get(cells)
    if text is None:
        text = cells
        if "11" in text:
            for run, count in _RUNS:
                text = text.replace(run, count)
        text = _ROWS[cells] = text
    return text


def _cells(cb: chess.Board) -> list[str]:
    """The 64 squares of ``cb`` (a1, b1 ... h8): a piece's symbol, "1" when empty; read from the bitboards."""
    cells = ["1"] * 64
    black, white = cb.occupied_co  # indexed by colour: chess.BLACK is 0
    for mask, white_symbol, black_symbol in ((cb.pawns, "P", "p"), (cb.knights, "N", "n"), (cb.bishops, "B", "b"),
                                             (cb.rooks, "R", "r"), (cb.queens, "Q", "q"), (cb.kings, "K", "k")):
        for bb, symbol in ((mask & white, white_symbol), (mask & black, black_symbol)):
            while bb:
                low = bb & -bb
                cells[low.bit_length() - 1] = symbol
                bb ^= low
    return cells


def _board_fen_of(cells: list[str]) -> str:
    """``cb.board_fen()`` from :func:`_cells` of ``cb``."""
    return "/".join([_row_text("".join(cells[rank:rank + 8])) for rank in range(56, -1, -8)])


#: (square, kind, colour) of every piece per FEN (:func:`_pieces_of`), filled as :func:`_fen` writes a FEN.
_PIECES: dict[str, tuple[tuple[str, str, str], ...]] = {}


def _remember(cache: dict, key: Any, value: Any) -> None:
    """Keep ``value`` under ``key`` in one of the caches by FEN, started afresh when full."""
    if len(cache) >= _BOARDS_LIMIT:
        cache.clear()
    cache[key] = value


def _fen(cb: chess.Board) -> str:
    """``cb.fen()`` (the en passant square only when an en passant capture is legal, as there), faster.

    The board is remembered as :func:`_parsed` would build it from that FEN (castling rights cleaned,
    the en passant square as the FEN says, no promoted marks, no move stack), and its pieces as
    :func:`_pieces_of` reads them (the view's, next). ``cb`` itself becomes that remembered board (it
    is not copied, which cost as much again): callers pass a board of their own and drop it after."""
    ep = cb.ep_square if cb.ep_square is not None and cb.has_legal_en_passant() else None
    cells = _cells(cb)
    # No castling rights (always so under the abbreviated rules) are "-" whatever the pieces.
    castling = cb.castling_xfen() if cb.castling_rights else "-"
    fen = (f"{_board_fen_of(cells)} {'w' if cb.turn == chess.WHITE else 'b'} {castling} "
           f"{'-' if ep is None else chess.SQUARE_NAMES[ep]} {cb.halfmove_clock} {cb.fullmove_number}")
    if fen not in _BOARDS:
        rights = cb.clean_castling_rights() if cb.castling_rights else chess.BB_EMPTY  # read with its stack
        cb.clear_stack()
        cb.ep_square = ep
        cb.castling_rights = rights
        cb.promoted = chess.BB_EMPTY
        _remember(_BOARDS, fen, cb)
    if fen not in _PIECES:
        _remember(_PIECES, fen, tuple([_ENTRIES[square][symbol] for square, symbol in enumerate(cells)
                                       if symbol != "1"]))
    return fen


#: UCI of the move from square to square (a promotion adds its piece's letter).
_UCI = [[frm + to for to in chess.SQUARE_NAMES] for frm in chess.SQUARE_NAMES]


def _uci(move: chess.Move) -> str:
    """``move.uci()`` for the moves python-chess generates (never a drop or a null move)."""
    if move.promotion:
        return _UCI[move.from_square][move.to_square] + chess.piece_symbol(move.promotion)
    return _UCI[move.from_square][move.to_square]


@functools.lru_cache(maxsize=4096)
def _all_moves(fen: str, colour: bool, rules: str) -> tuple[tuple[str, int], ...]:
    """(UCI, from square) of every move :func:`chess_moves` gives ``colour`` in ``fen`` with no square
    frozen, by UCI; remembered per position: the players' lists (:func:`_moves_of`) and, under the
    complete rules, whether the side to move is mated or stalemated (:func:`_judge`) read the same one."""
    cb = _parsed(fen)
    if cb.turn != colour:
        # ready() changes the board: a copy (generating moves leaves a board as it was).
        cb = cb.copy(stack=False)
        ready(cb, colour)
    generated = cb.generate_legal_moves() if rules == COMPLETE else cb.generate_pseudo_legal_moves()
    # UCI strings of different moves differ, so sorting the pairs sorts by UCI alone, as chess_moves does.
    pairs = []
    for move in generated:
        frm = move.from_square
        pairs.append((_UCI[frm][move.to_square] + chess.piece_symbol(move.promotion) if move.promotion
                      else _UCI[frm][move.to_square], frm))  # _uci(move), inline: 40 moves a position
    pairs.sort()
    return tuple(pairs)


@functools.lru_cache(maxsize=4096)
def _moves_of(fen: str, colour: bool, rules: str, frozen: frozenset[int]) -> tuple[str, ...]:
    """:func:`chess_moves` as UCI strings, remembered per position."""
    return tuple([uci for uci, square in _all_moves(fen, colour, rules) if square not in frozen])


def _pieces_of(fen: str) -> tuple[tuple[str, str, str], ...]:
    """(square, kind, colour) of every piece of ``fen``, by square (a1, b1 ... h8): as :func:`_fen` wrote
    them, else read off the FEN."""
    pieces = _PIECES.get(fen)
    if pieces is None:
        cells = []
        for text in reversed(fen.split(" ", 1)[0].split("/")):
            for char in text:
                cells.extend("1" * int(char) if char.isdigit() else char)
        pieces = tuple([_ENTRIES[square][symbol] for square, symbol in enumerate(cells) if symbol != "1"])
        _remember(_PIECES, fen, pieces)
    return pieces


@functools.lru_cache(maxsize=4096)
def _checks_of(fen: str) -> tuple[str, ...]:
    """The colours whose king is attacked in ``fen``."""
    cb = _parsed(fen)
    check = []
    for colour in (chess.WHITE, chess.BLACK):
        king = cb.king(colour)
        if king is not None and cb.is_attacked_by(not colour, king):
            check.append(COLOURS[colour])
    return tuple(check)


def _sq(square: int) -> str:
    return chess.square_name(square)


def _harries(board: dict) -> dict[int, int]:
    """Square -> seat of every Harry on the board."""
    return {chess.parse_square(p["square"]): seat for seat, p in enumerate(board["players"]) if p["square"]}


def _token_at(board: dict, square: str) -> tuple[str | None, int | None]:
    """Which token stands on ``square``: ("ron"|"hermione"|"harry"|None, seat of a Harry)."""
    if board["ron"] == square:
        return "ron", None
    if board["hermione"] == square:
        return "hermione", None
    for seat, player in enumerate(board["players"]):
        if player["square"] == square:
            return "harry", seat
    return None, None


def _carry(board: dict, frm: str, to: str) -> None:
    """The token on ``frm`` (if any) now stands on ``to``."""
    for key in ("ron", "hermione"):
        if board[key] == frm:
            board[key] = to
    for player in board["players"]:
        if player["square"] == frm:
            player["square"] = to


def _held(board: dict) -> set[bool]:
    """The colours held by seats still playing."""
    return {COLOUR_OF[p["colour"]] for p in board["players"] if p["state"] == "playing"}


def board_colour(board: dict) -> bool | None:
    """The colour "played by the board itself" (house rule, DESIGN.md: "the
    side that no player sits on is played by the board itself"): the colour
    nobody still playing holds, while the other one is held."""
    held = _held(board)
    if len(held) != 1:
        return None
    return not next(iter(held))


def _far_rank(colour: bool) -> int:
    """0-based rank of the far edge: "off the opposite end of the board from where it starts"."""
    return DATA["far_rank"][COLOURS[colour]] - 1


# -- set-up and arrival ------------------------------------------------------------------------


def _new_game(board: dict) -> None:
    """SET UP "1. Players set up the board for Chess (see Fig. 1). 2. Players
    replace the black knight (horse) with the Ron token and the black rook
    (castle) with the Hermione token." Which knight and rook: data
    (``ron``, ``hermione``; house rule: the queen's side ones)."""
    cb = chess.Board(DATA["start_fen"])
    if board["rules"] == ABBREVIATED:
        cb.castling_rights = chess.BB_EMPTY
    board.update(fen=_fen(cb), ron=DATA["ron"], hermione=DATA["hermione"], arrivals=[], chosen=0, captured=[],
                 plies=0, over=None, winner=None, last=[], board_to_move=False)


def new_board(rng: Rng, seats: int, mode: str, options: dict[str, Any]) -> dict:
    board = {"mode": mode, "rules": options.get("chess_rules", ABBREVIATED), "seats": seats, "game": 1,
             "players": [{"state": "away", "colour": None, "square": None, "captured": None, "left": False}
                         for _ in range(seats)],
             "captures": 0}
    _new_game(board)
    return board


def arrive(board: dict, seat: int, rng: Rng, player: dict) -> list[Event]:
    """"Players start immediately on this game, keeping their regular turn
    order. Players do not wait for all players to reach McGonagall's Challenge
    to begin." The arriving seat first chooses its bishop (:func:`turn_owner`).

    House rule: once the chained game's chess game is over (complete rules:
    "play does not begin on Quirrell's Challenge until the game is over"; or
    the move cap), a seat arriving later finds a new game set up for it."""
    events: list[Event] = []
    if board["over"] is not None:
        board["game"] += 1
        _new_game(board)
        for other in board["players"]:
            other["square"] = None  # the last game's Harrys went with their players
        events.append({"type": "mcgonagall_new_game", "game": board["game"]})
    board["players"][seat] = {"state": "choosing", "colour": None, "square": None, "captured": None, "left": False}
    board["arrivals"].append(seat)
    events.append({"type": "mcgonagall_arrived", "seat": seat})
    return events


def _lost_bishop_starts(board: dict) -> list[str]:
    """Starting squares of the captured bishops. A bishop never leaves its
    square colour, so a captured bishop started on its colour's bishop square
    of that shade (c1/f1 for white, f8/c8 for black)."""
    starts = set()
    for piece in board["captured"]:
        if piece["kind"] == "bishop" and piece["token"] is None:
            square = chess.parse_square(piece["square"])
            shade = "light" if chess.BB_SQUARES[square] & chess.BB_LIGHT_SQUARES else "dark"
            starts.add(DATA["bishop_starts"][piece["colour"]][shade])
    return sorted(starts, key=chess.parse_square)


def replace_options(board: dict, seat: int) -> list[str]:
    """Where the arriving ``seat`` may put its Harry.

    "3. The first player to complete Flitwick's Challenge removes the black
    bishop of his/her choice from the board and replaces it with his/her
    playing piece (Harry Potter)." "5. As additional players reach
    McGonagall's Challenge, they replace the remaining bishops of their
    choice (of either color). The second player to reach McGonagall's
    Challenge does not have to play against the first player; instead,
    he/she may opt to play on the same team as the first player."
    "6. If all remaining bishops have already been captured by the time that
    a player reaches McGonagall's Challenge, that player places his/her
    playing piece (Harry Potter) on the space where a captured bishop
    started."

    A bishop is any bishop on the board that is not a Harry (a promoted one
    too). The first player of a game takes a black bishop (both always stand
    then: nothing moves before the first player arrives).
    """
    cb = _cb(board)
    harries = _harries(board)
    bishops = [sq for sq in chess.SQUARES
               if cb.piece_type_at(sq) == chess.BISHOP and sq not in harries]
    if board["chosen"] == 0:
        first_colour = COLOUR_OF[DATA["first_colour"]]
        black = [sq for sq in bishops if cb.color_at(sq) == first_colour]
        bishops = black or bishops
    if bishops:
        return [_sq(sq) for sq in bishops]
    starts = _lost_bishop_starts(board)
    if starts:
        return starts
    # Cannot happen (at most three seats replaced bishops before the last one
    # arrives, so one of the four was captured); kept so a seat always can act.
    return sorted((sq for shades in DATA["bishop_starts"].values() for sq in shades.values()),
                  key=chess.parse_square)


def _landing(cb: chess.Board, start: int) -> int:
    """House rule: a Harry placed on a captured bishop's starting square lands
    there if it is empty, else on the nearest empty square of the same shade
    (the bishop's colour of square: "These pieces move only on the color on
    which they start"); nearest by king steps, then by square index."""
    if cb.piece_at(start) is None:
        return start
    shade = chess.BB_LIGHT_SQUARES if chess.BB_SQUARES[start] & chess.BB_LIGHT_SQUARES else chess.BB_DARK_SQUARES
    empty = [sq for sq in chess.SQUARES if cb.piece_at(sq) is None and chess.BB_SQUARES[sq] & shade]
    return min(empty, key=lambda sq: (chess.square_distance(sq, start), sq))


def _replace(board: dict, seat: int, bishop: str, outcome: Outcome) -> None:
    cb = _cb(board)
    square = chess.parse_square(bishop)
    piece = cb.piece_at(square)
    if piece is not None and piece.piece_type == chess.BISHOP and square not in _harries(board):
        colour, land = piece.color, square
    else:
        colour = chess.WHITE if chess.square_rank(square) == 0 else chess.BLACK
        land = _landing(cb, square)
        cb.set_piece_at(land, chess.Piece(chess.BISHOP, colour))
        if board["rules"] == ABBREVIATED:
            cb.ep_square = None
        board["fen"] = _fen(cb)
    board["players"][seat].update(state="playing", colour=COLOURS[colour], square=_sq(land))
    board["arrivals"].remove(seat)
    board["chosen"] += 1
    board["plies"] = 0
    outcome.events.append({"type": "mcgonagall_replaced", "seat": seat, "bishop": bishop, "square": _sq(land),
                           "colour": COLOURS[colour]})


# -- the match's questions ---------------------------------------------------------------------


def board_to_move(board: dict) -> bool:
    """Whether the board itself owes its answer to the last player's move.
    (A board saved before the board became an actor of the match has no
    such key: it never owes one.)"""
    return board.get("board_to_move", False)


def turn_owner(board: dict) -> int | None:
    """The board itself (``BOARD_SEAT``) while it owes its answer: the tail of
    the player's regular turn. Else the first arriving seat still to choose
    its bishop (the two never overlap: nobody arrives while the board thinks)."""
    if board_to_move(board):
        return BOARD_SEAT
    return board["arrivals"][0] if board["arrivals"] else None


def can_play(board: dict, seat: int) -> bool:
    """"If a player's playing piece (Harry Potter) is captured, that player may
    no longer play in the Chess game." A seat plays while its Harry is on the
    board and the game goes on."""
    return board["over"] is None and board["players"][seat]["state"] in ("choosing", "playing")


def begin_turn(board: dict, seat: int, rng: Rng) -> list[Event]:
    return []


def _frozen(board: dict, seat: int | None) -> set[int]:
    """Squares of the Harrys ``seat`` may not move (every other seat's)."""
    return {sq for sq, owner in _harries(board).items() if owner != seat}


def legal_actions(board: dict, seat: int) -> list[dict]:
    if seat == BOARD_SEAT:
        return _board_actions(board)
    if board["arrivals"]:
        if board["arrivals"][0] != seat:
            return []
        return [{"type": "mcgonagall_replace", "bishop": square} for square in replace_options(board, seat)]
    moves = _listed_moves(board, seat, "mcgonagall_move")
    if moves is None:
        return []
    actions: list[dict] = [{"type": "mcgonagall_move", "uci": uci} for uci in moves]
    player = board["players"][seat]
    colour = COLOUR_OF[player["colour"]]
    if board["rules"] == ABBREVIATED and chess.square_rank(chess.parse_square(player["square"])) == _far_rank(colour):
        actions.append({"type": "mcgonagall_exit"})
    return actions or [{"type": "mcgonagall_pass"}]


def _board_actions(board: dict) -> list[dict]:
    """The board's own answers: a move of the colour no player holds with any
    of its pieces but a Harry (:func:`_frozen` of nobody: every Harry), or a
    pass when it has none."""
    moves = _listed_moves(board, BOARD_SEAT, "mcgonagall_board_move")
    if moves is None:
        return []
    return [{"type": "mcgonagall_board_move", "uci": uci} for uci in moves] or [{"type": "mcgonagall_board_pass"}]


def _listed_moves(board: dict, seat: int, kind: str) -> tuple[str, ...] | None:
    """The UCI moves :func:`legal_actions` lists for ``seat`` as actions of type ``kind``
    (``mcgonagall_move``, or ``mcgonagall_board_move`` for the board itself); None when it lists no
    action of that type at all (not the seat's move)."""
    if seat == BOARD_SEAT:
        if kind != "mcgonagall_board_move" or not board_to_move(board):
            return None
        return _moves_of(board["fen"], board_colour(board), board["rules"], frozenset(_frozen(board, None)))
    if kind != "mcgonagall_move" or board["arrivals"]:
        return None
    player = board["players"][seat]
    if board["over"] is not None or player["state"] != "playing":
        return None
    return _moves_of(board["fen"], COLOUR_OF[player["colour"]], board["rules"], frozenset(_frozen(board, seat)))


def is_legal(board: dict, seat: int, action: dict) -> bool:
    """``action in legal_actions(board, seat)``, without building the list of move actions that
    every submitted move would otherwise rebuild: a move (of the seat, or of the board) is legal when
    it is exactly ``{"type", "uci"}`` with a UCI among the listed moves."""
    kind = action.get("type") if isinstance(action, dict) else None
    if (kind == "mcgonagall_move" or kind == "mcgonagall_board_move") and len(action) == 2 \
            and type(action.get("uci")) is str:
        moves = _listed_moves(board, seat, kind)
        return moves is not None and action["uci"] in moves
    return action in legal_actions(board, seat)


def copy(board: dict) -> dict:
    """A copy of ``board`` that :func:`play` and :func:`arrive` may change, ``board`` staying as it was:
    the board's own dict, its players and its lists are copied; the captured pieces and the plies
    in those lists are shared (each is a new dict when made and never changed after)."""
    new = dict(board)
    new["players"] = [dict(player) for player in board["players"]]
    new["arrivals"] = list(board["arrivals"])
    new["captured"] = list(board["captured"])
    new["last"] = list(board["last"])
    return new


# -- playing -----------------------------------------------------------------------------------


def _push(board: dict, seat: int | None, move: chess.Move, colour: bool, outcome: Outcome) -> None:
    """Make one move of ``colour`` (by ``seat``, None: the board itself).

    CAPTURING "1. Whenever a player moves a piece onto a square with an
    opponent's piece on it, the player captures the opponent's piece by
    removing it from play." Ron, Hermione and the Harrys travel with their
    pieces; castling carries the rook (Hermione too: she "moves like a rook").
    """
    cb = _cb(board)
    ready(cb, colour)
    frm, to = move.from_square, move.to_square
    target = None
    if cb.is_en_passant(move):
        target = to - 8 if colour == chess.WHITE else to + 8
    elif cb.piece_at(to) is not None:
        target = to
    rook = None
    if cb.is_castling(move):
        rank = chess.square_rank(frm)
        rook = ((chess.square(7, rank), chess.square(5, rank)) if cb.is_kingside_castling(move)
                else (chess.square(0, rank), chess.square(3, rank)))
    captured = None
    if target is not None:
        piece = cb.piece_at(target)
        token, owner = _token_at(board, _sq(target))
        captured = {"square": _sq(target), "kind": KINDS[piece.piece_type], "colour": COLOURS[piece.color],
                    "token": token, "seat": owner}
        board["captured"].append(captured)
        if token in ("ron", "hermione"):
            board[token] = None
        elif token == "harry":
            board["players"][owner]["square"] = None
    _carry(board, _sq(frm), _sq(to))
    if rook is not None:
        _carry(board, _sq(rook[0]), _sq(rook[1]))
    cb.push(move)
    if board["rules"] == ABBREVIATED:
        cb.ep_square = None
    board["fen"] = _fen(cb)
    board["plies"] += 1
    ply = {"seat": seat, "colour": COLOURS[colour], "kind": "move", "uci": move.uci(), "captured": captured}
    board["last"].append(ply)
    outcome.events.append({"type": "mcgonagall_moved", **ply})
    if captured is not None and captured["token"] == "harry":
        _harry_captured(board, captured["seat"], outcome)


def _harry_captured(board: dict, seat: int, outcome: Outcome) -> None:
    """CAPTURING "4. If a player's playing piece (Harry Potter) is captured,
    that player may no longer play in the Chess game." The fact ``captured``
    (1 for the first player captured, 2...) orders the waits in Quirrell's
    Challenge. Chained, abbreviated rules: the seat moves on at once;
    complete rules: "play does not begin on Quirrell's Challenge until the
    game is over", so it waits here for the end of the game."""
    board["captures"] += 1
    player = board["players"][seat]
    player.update(state="captured", square=None, captured=board["captures"])
    outcome.facts.setdefault(seat, {})["captured"] = board["captures"]
    outcome.events.append({"type": "mcgonagall_harry_captured", "seat": seat, "captured": board["captures"]})
    if board["mode"] == "chain" and board["rules"] == ABBREVIATED:
        _leave(board, seat, outcome)


def _leave(board: dict, seat: int, outcome: Outcome) -> None:
    board["players"][seat]["left"] = True
    outcome.finished.append(seat)


def _judge(board: dict, colour: bool, seat: int | None, outcome: Outcome) -> None:
    """After a move of ``colour``: has the game ended?

    Complete rules: OBJECT "To be first to capture the other color's king";
    CHECKMATE "If a player is in check and cannot move in such a way that the
    king is no longer in check ..., the king is in "checkmate" and the game
    ends." The king can only be captured when one colour moves twice in a
    row and the other left its king in check. House rules: stalemate (the
    other colour cannot move and is not in check), insufficient material and
    the 75-move rule end the game drawn. Both rules: the move cap."""
    if board["rules"] == COMPLETE:
        cb = _cb(board)
        other = not colour
        if cb.king(other) is None:
            _end(board, "king_captured", colour, seat, outcome)
            return
        ready(cb, other)
        # cb.is_checkmate() and cb.is_stalemate() (a standard board has no variant end), from the legal
        # moves the next legal actions read too: both ask whether ``other`` has any.
        stuck = not _all_moves(board["fen"], other, COMPLETE)
        if stuck and cb.is_check():
            _end(board, "checkmate", colour, seat, outcome)
            return
        if stuck:
            _end(board, "stalemate", None, None, outcome)
            return
        if cb.is_insufficient_material():
            _end(board, "insufficient_material", None, None, outcome)
            return
        if cb.halfmove_clock >= DATA["seventy_five_move_plies"]:
            _end(board, "seventy_five_moves", None, None, outcome)
            return
    _cap(board, outcome)


def _cap(board: dict, outcome: Outcome) -> None:
    """House rule: random chess can run very long. When ``move_cap`` plies
    (players' moves, exits and passes and the board's answers together) have
    been played since the last player arrived, the game ends with no winner."""
    if board["over"] is None and board["plies"] >= DATA["move_cap"]:
        _end(board, "cap", None, None, outcome)


#: The match's result reason for each way a chess game ends (played individually).
REASONS = {
    "exited": "A Harry left the board by the far edge.",
    "checkmate": "Checkmate: the team that mated wins.",
    "king_captured": "A king was captured: its enemies win.",
    "board_won": "The board's own side won: no player wins.",
    "no_players": "Every player's Harry was captured: no player wins.",
    "stalemate": "Stalemate: a draw, no winner.",
    "insufficient_material": "Neither side can mate: a draw, no winner.",
    "seventy_five_moves": "Seventy-five moves without a capture or a pawn move: a draw, no winner.",
    "cap": "The move cap was reached (house rule): no winner.",
}


def _end(board: dict, reason: str, colour: bool | None, seat: int | None, outcome: Outcome) -> None:
    """The chess game is over.

    Individually: the seat that moved its Harry off the board wins; a
    checkmate (or a captured king) wins for the whole team still playing.
    A game won by the board's own colour, drawn or capped has no winner.

    Chained: "When playing a complete game of Chess, play does not begin on
    Quirrell's Challenge until the game is over": every seat still in the
    game finishes now, the winning team first ("The team that checkmates the
    other team's king goes first", fact ``checkmated``), then the others in
    seat order, then the captured seats in the order they were captured.
    """
    board["over"] = reason
    board["winner"] = None if colour is None else COLOURS[colour]
    outcome.events.append({"type": "mcgonagall_game_over", "reason": reason, "winner": board["winner"],
                           "seat": seat})
    players = board["players"]
    winners = [s for s, p in enumerate(players)
               if colour is not None and reason in ("checkmate", "king_captured")
               and p["state"] == "playing" and p["colour"] == COLOURS[colour]]
    for s in winners:
        outcome.facts.setdefault(s, {})["checkmated"] = True
    playing = [s for s, p in enumerate(players) if p["state"] == "playing"]
    for s in playing:
        players[s]["state"] = "done"
    if board["mode"] == "individual":
        # The result's cause is the same code as the event's reason, so programs can match the two.
        outcome.cause = "board_won" if seat is None and colour is not None else reason
        outcome.reason = REASONS[outcome.cause]
        if seat is not None and colour is not None:
            outcome.winners = winners if reason in ("checkmate", "king_captured") else [seat]
        else:
            outcome.closed = True
        return
    captured = sorted((s for s, p in enumerate(players) if p["state"] == "captured" and not p["left"]),
                      key=lambda s: players[s]["captured"])
    for s in winners + [s for s in playing if s not in winners] + captured:
        _leave(board, s, outcome)


def _settle(board: dict, outcome: Outcome) -> None:
    """After a turn: the game with nobody left in it, and whether the board closes.

    Individually, every seat arrived at set-up: when no Harry is left, the
    game ends with no winner. Chained, complete rules: when every seat in the
    game was captured the game is over (nobody is left to play it).
    Chained: the board closes once every seat has arrived and left it."""
    players = board["players"]
    if board["over"] is None and not any(p["state"] in ("choosing", "playing") for p in players):
        if board["mode"] == "individual" or board["rules"] == COMPLETE:
            _end(board, "no_players", None, None, outcome)
    if board["mode"] == "chain" and all(p["state"] != "away" and p["left"] for p in players):
        outcome.closed = True


def play(board: dict, seat: int, action: dict, rng: Rng) -> Outcome:
    outcome = Outcome()
    kind = action["type"]
    if kind == "mcgonagall_replace":
        _replace(board, seat, action["bishop"], outcome)
        return outcome
    if seat == BOARD_SEAT:
        _answer(board, action, outcome)
        _settle(board, outcome)
        return outcome
    player = board["players"][seat]
    colour = COLOUR_OF[player["colour"]]
    board["last"] = []
    if kind == "mcgonagall_move":
        _push(board, seat, chess.Move.from_uci(action["uci"]), colour, outcome)
        _judge(board, colour, seat, outcome)
    elif kind == "mcgonagall_exit":
        _exit(board, seat, colour, outcome)
    else:
        _pass(board, seat, colour, outcome)
    if board["over"] is None and board_colour(board) is not None:
        # The colour no player holds answers before the turn passes: the match waits on the board.
        board["board_to_move"] = True
        outcome.turn_over = False
    _settle(board, outcome)
    return outcome


def _answer(board: dict, action: dict, outcome: Outcome) -> None:
    """The board's answer to the player's move (``seat: None`` in its plies and
    events): one move of the colour no player holds, or a pass."""
    colour = board_colour(board)
    board["board_to_move"] = False
    if action["type"] == "mcgonagall_board_move":
        _push(board, None, chess.Move.from_uci(action["uci"]), colour, outcome)
        _judge(board, colour, None, outcome)
    else:
        _pass(board, None, colour, outcome)


def _pass(board: dict, seat: int | None, colour: bool, outcome: Outcome) -> None:
    """House rule: a seat (or the board) whose pieces cannot move passes; the
    pass counts towards the move cap."""
    board["plies"] += 1
    board["last"].append({"seat": seat, "colour": COLOURS[colour], "kind": "pass", "uci": None, "captured": None})
    outcome.events.append({"type": "mcgonagall_passed", "seat": seat, "colour": COLOURS[colour]})
    _cap(board, outcome)


def _exit(board: dict, seat: int, colour: bool, outcome: Outcome) -> None:
    """OBJECT (abbreviated rules) "To move your playing piece (Harry Potter)
    off the opposite end of the board from where it starts." ADVANCING "As
    each player moves his/her playing piece (Harry Potter) off of the
    opposite edge of the board, he/she places it on the door ... of the
    Quirrell's Challenge". House rule: a Harry standing on the far rank (rank
    1 for black, rank 8 for white) leaves the board as its move."""
    player = board["players"][seat]
    cb = _cb(board)
    square = player["square"]
    cb.remove_piece_at(chess.parse_square(square))
    cb.ep_square = None
    board["fen"] = _fen(cb)
    board["plies"] += 1
    player.update(state="exited", square=None)
    ply = {"seat": seat, "colour": COLOURS[colour], "kind": "exit", "uci": None, "captured": None}
    board["last"].append(ply)
    outcome.events.append({"type": "mcgonagall_exited", "seat": seat, "square": square})
    if board["mode"] == "individual":
        _end(board, "exited", colour, seat, outcome)
    else:
        _leave(board, seat, outcome)
        _cap(board, outcome)


# -- reading -----------------------------------------------------------------------------------


def view(board: dict, seat: int | None) -> dict:
    """Everything in chess is public: the same view for every seat and spectator."""
    tokens: dict[str, tuple[str, int | None]] = {}
    for seat, player in reversed(list(enumerate(board["players"]))):
        if player["square"] is not None:
            tokens[player["square"]] = ("harry", seat)
    for name in ("hermione", "ron"):
        if board[name] is not None:
            tokens[board[name]] = (name, None)
    none = (None, None)
    pieces = []
    for square, kind, colour in _pieces_of(board["fen"]):
        token, owner = tokens.get(square, none)
        pieces.append({"square": square, "kind": kind, "colour": colour, "token": token, "seat": owner})
    check = list(_checks_of(board["fen"])) if board["rules"] == COMPLETE else []
    reply = board_colour(board)
    return {
        "mode": board["mode"],
        "rules": board["rules"],
        "game": board["game"],
        "fen": board["fen"],
        "pieces": pieces,
        "ron": board["ron"],
        "hermione": board["hermione"],
        "players": [dict(p, seat=s) for s, p in enumerate(board["players"])],
        "arrivals": list(board["arrivals"]),
        "choosing": turn_owner(board),
        "chosen": board["chosen"],
        "board_colour": None if reply is None else COLOURS[reply],
        "board_to_move": board_to_move(board),
        "check": check,
        "captured": [dict(p) for p in board["captured"]],
        "captures": board["captures"],
        "plies": board["plies"],
        "move_cap": DATA["move_cap"],
        "over": board["over"],
        "winner": board["winner"],
        "last": [dict(ply, captured=None if ply["captured"] is None else dict(ply["captured"]))
                 for ply in board["last"]],
    }


def determinise(board_view: dict, seat: int, rng: Rng) -> dict:
    """Nothing in chess is hidden: the board is read back from the view."""
    return {
        "mode": board_view["mode"],
        "rules": board_view["rules"],
        "seats": len(board_view["players"]),
        "game": board_view["game"],
        "fen": board_view["fen"],
        "ron": board_view["ron"],
        "hermione": board_view["hermione"],
        "players": [{k: v for k, v in p.items() if k != "seat"} for p in board_view["players"]],
        "arrivals": list(board_view["arrivals"]),
        "chosen": board_view["chosen"],
        "captured": [dict(p) for p in board_view["captured"]],
        "captures": board_view["captures"],
        "plies": board_view["plies"],
        "over": board_view["over"],
        "winner": board_view["winner"],
        "last": [dict(ply, captured=None if ply["captured"] is None else dict(ply["captured"]))
                 for ply in board_view["last"]],
        "board_to_move": board_view["board_to_move"],
    }
