"""GAME 3 - Flitwick's Challenge: The Winged Keys.

Read beside the rule book, /work/shared/seeds/002_5ac5154540885c00.txt
("GAME 3 - FLITWICK'S CHALLENGE: THE WINGED KEYS" and "RULES FOR PLAYING THE
GAMES INDIVIDUALLY - FLITWICK'S CHALLENGE"), and the house rules in
docs/rules/sorcerers-stone.md. See :mod:`.board` for the interface.

"OBJECT: To find the special silver winged key." "SET UP: Mix up all winged
key tokens and place them face down on the board, one token per space." The
board's size, the keys and the spinner's Flitwick-side faces are data
(``flitwick.json``): 6 x 6 spaces (DESIGN.md), 35 gold keys and 1 silver.

Spaces are named like chess squares: a letter ``a``-``f`` for the column,
a number ``1``-``6`` for the row, ``a1`` to ``f6``; inside the state a space
is its index ``(row - 1) * 6 + column``.

How a board plays
-----------------
Games in order (``chain``): nobody plays until every seat has arrived ("Play
does not begin until all players have taken a Fire token from Sprout's
Challenge"). Then

1. ``reveal``: by Fire token, highest first, each seat turns over as many
   face-down keys as its Fire token shows (``flitwick_reveal``, one key per
   action, out of the regular turn order: :func:`turn_owner`);
2. ``place``: by Fire token, highest first, every seat that has not advanced
   places its piece (``flitwick_place``);
3. ``play``: on its regular turn a seat spins (:func:`begin_turn`), then
   moves (``flitwick_move``, or ``flitwick_stay`` when hemmed in). The action
   that ends the placement names who takes the next regular turn
   (``Outcome.next_turn``): the first seat that advanced, else the highest
   Fire token.

Individually there is no reveal: seat 0 (the youngest player) places, then
the others in seat order, then seat 0 moves first; the first to find the
silver key wins.

State
-----
``mode``, ``seats``, ``phase`` (waiting | reveal | place | play | over),
``keys`` (per space: ``"gold"``, ``"silver"`` or None once removed; every key
on the board lies face down), ``pieces`` (per seat: a space or None),
``here`` (seats on this board, sorted), ``fire`` (per seat: its Fire token or
None), ``reveals`` (``[seat, keys left]`` in order), ``placing`` (seats still
to place, in order), ``advanced`` (seats that found the silver key, in order),
``mover`` and ``spin`` (the spin of the seat whose turn it is), ``winner``
and ``found`` (individually: the winner and the space of the silver key it
turned face up).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from service.engine import Rng, load_data

from .board import Event, Outcome

NAME = "flitwick"
SCHEMA = load_data(__package__, "flitwick.schema.json")
DATA = load_data(__package__, "flitwick.json")

SIZE: int = DATA["size"]
SPINNER: list[int] = list(DATA["spinner"])
GOLD, SILVER = "gold", "silver"
assert DATA["keys"][GOLD] + DATA["keys"][SILVER] == SIZE * SIZE, "one token per space"
assert DATA["keys"][SILVER] == 1, "the special winged key is the only silver key in the game"

#: Space names, by index: a1, b1 ... f1, a2 ... f6.
SQUARES: list[str] = [f"{chr(ord('a') + col)}{row + 1}" for row in range(SIZE) for col in range(SIZE)]
INDEX: dict[str, int] = {name: index for index, name in enumerate(SQUARES)}


def _neighbours(index: int) -> list[int]:
    """"Players may move in any direction (horizontally, vertically, and/or diagonally)." """
    row, col = divmod(index, SIZE)
    return [(row + dr) * SIZE + col + dc for dr in (-1, 0, 1) for dc in (-1, 0, 1)
            if (dr or dc) and 0 <= row + dr < SIZE and 0 <= col + dc < SIZE]


_NEIGHBOURS = [_neighbours(i) for i in range(SIZE * SIZE)]
_NEIGHBOUR_MASK = [sum(1 << n for n in _NEIGHBOURS[i]) for i in range(SIZE * SIZE)]
#: _WITHIN[i][r]: the spaces at most r king steps from space i.
_WITHIN = [[sum(1 << j for j in range(SIZE * SIZE)
                if max(abs(j // SIZE - i // SIZE), abs(j % SIZE - i % SIZE)) <= r)
            for r in range(max(SPINNER) + 1)]
           for i in range(SIZE * SIZE)]


@lru_cache(maxsize=1 << 16)
def walk_ends(start: int, steps: int, blocked: int) -> int:
    """The spaces (a bitmask) where a walk of exactly ``steps`` king steps from
    ``start`` can stop, visiting no space twice (``start`` included) and never
    entering a space of ``blocked`` (other players' pieces).

    "Players must move the full number of spaces that they spin, and may not
    visit the same space twice on a single turn."

    A depth-first search over walks that gathers the ends found so far in one
    mask, and skips

    * a walk state met before: (space, steps left, visited spaces near enough
      to matter -- a visited space more than ``r`` steps away can no longer be
      reached in the ``r`` steps left, so it is forgotten): its ends are
      already in the mask;
    * a walk whose every possible end (the unvisited spaces within its steps
      left) is already in the mask: it can add nothing.
    """
    if steps <= 0:
        return 0
    found = 0
    seen: set[tuple[int, int, int]] = set()
    within, neighbours, neighbour_mask = _WITHIN, _NEIGHBOURS, _NEIGHBOUR_MASK

    def walk(pos: int, left: int, visited: int) -> None:
        nonlocal found
        if left == 1:
            found |= neighbour_mask[pos] & ~visited
            return
        if not within[pos][left] & ~visited & ~found:
            return
        key = (pos, left, visited)
        if key in seen:
            return
        seen.add(key)
        for step in neighbours[pos]:
            if not visited >> step & 1:
                walk(step, left - 1, (visited | 1 << step) & within[step][left - 1])

    walk(start, steps, (blocked | 1 << start) & _WITHIN[start][steps])
    return found


def _mask(spaces) -> int:
    return sum(1 << s for s in spaces)


# -- the board's life ---------------------------------------------------------------


def new_board(rng: Rng, seats: int, mode: str, options: dict[str, Any]) -> dict[str, Any]:
    """"Mix up all winged key tokens and place them face down on the board, one token per space." """
    keys = [GOLD] * DATA["keys"][GOLD] + [SILVER] * DATA["keys"][SILVER]
    rng.shuffle(keys)
    return {
        "mode": mode,
        "seats": seats,
        "phase": "waiting",
        "keys": keys,
        "pieces": [None] * seats,
        "here": [],
        "fire": [None] * seats,
        "reveals": [],
        "placing": [],
        "advanced": [],
        "mover": None,
        "spin": None,
        "winner": None,
        "found": None,
    }


def _by_fire(board: dict[str, Any], seats) -> list[int]:
    """Highest Fire token first (house rule: a seat without one counts as 0; ties by seat)."""
    return sorted(seats, key=lambda s: (-(board["fire"][s] or 0), s))


def arrive(board: dict[str, Any], seat: int, rng: Rng, player: dict[str, Any]) -> list[Event]:
    """``seat`` reaches the board; once every seat is here, play begins.

    Games in order: "Play does not begin until all players have taken a Fire
    token from Sprout's Challenge. The player with the highest-numbered Fire
    token goes first, by turning over the number of winged key tokens
    indicated on his/her Fire token. When this player is done, play passes to
    the player with the second-highest Fire token. ... Note: Players do NOT
    follow their regular turn order for this part of the game."

    Individually: "The youngest player places his/her playing piece on any
    space on the game board. The remaining players place their playing pieces
    on any space on the game board."
    """
    board["here"] = sorted({*board["here"], seat})
    board["fire"][seat] = (player.get("facts") or {}).get("fire") if board["mode"] == "chain" else None
    events: list[Event] = [{"type": "flitwick_arrived", "seat": seat}]
    if len(board["here"]) < board["seats"] or board["phase"] != "waiting":
        return events
    if board["mode"] == "chain":
        board["reveals"] = [[s, board["fire"][s]] for s in _by_fire(board, board["here"]) if board["fire"][s]]
        board["phase"] = "reveal"
        events.append({"type": "flitwick_opening", "reveals": [{"seat": s, "keys": n} for s, n in board["reveals"]]})
        if not board["reveals"]:
            _end_reveals(board, events)
    else:
        board["placing"] = list(board["here"])
        board["phase"] = "place"
    return events


def turn_owner(board: dict[str, Any]) -> int | None:
    """The seat revealing keys (by Fire token) or placing its piece, outside the regular turn order."""
    if board["phase"] == "reveal":
        return board["reveals"][0][0]
    if board["phase"] == "place":
        return board["placing"][0]
    return None


def can_play(board: dict[str, Any], seat: int) -> bool:
    """Regular turns are played only once every piece is placed."""
    return board["phase"] == "play" and seat in board["here"]


def begin_turn(board: dict[str, Any], seat: int, rng: Rng) -> list[Event]:
    """"The first player spins the spinner and moves the number of spaces shown." """
    board["mover"] = seat
    board["spin"] = rng.choice(SPINNER)
    return [{"type": "flitwick_spin", "seat": seat, "spin": board["spin"]}]


def _occupied(board: dict[str, Any], but: int | None = None) -> int:
    return _mask(p for s, p in enumerate(board["pieces"]) if p is not None and s != but)


def _face_down(board: dict[str, Any]) -> list[int]:
    return [i for i, key in enumerate(board["keys"]) if key is not None]


def legal_actions(board: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    phase = board["phase"]
    if phase == "reveal" and turn_owner(board) == seat:
        return [{"type": "flitwick_reveal", "square": SQUARES[i]} for i in _face_down(board)]
    if phase == "place" and turn_owner(board) == seat:
        taken = _occupied(board)
        return [{"type": "flitwick_place", "square": name} for i, name in enumerate(SQUARES) if not taken >> i & 1]
    if phase == "play" and board["mover"] == seat and board["spin"] is not None:
        ends = walk_ends(board["pieces"][seat], board["spin"], _occupied(board, but=seat))
        if not ends:
            # House rule: "a spin that cannot be completed without revisiting a square" leaves the piece where it is.
            return [{"type": "flitwick_stay"}]
        return [{"type": "flitwick_move", "to": name} for i, name in enumerate(SQUARES) if ends >> i & 1]
    return []


def is_legal(board: dict[str, Any], seat: int, action: dict[str, Any]) -> bool:
    """``action in legal_actions(board, seat)``, a move read off the walk's ends (a bit of the mask)
    instead of the list of moves rebuilt for every submitted move."""
    if isinstance(action, dict) and action.get("type") == "flitwick_move" and len(action) == 2 \
            and type(action.get("to")) is str:
        if board["phase"] != "play" or board["mover"] != seat or board["spin"] is None:
            return False
        square = INDEX.get(action["to"])
        # No end at all lists only flitwick_stay: a move is never legal then (no bit is set).
        ends = walk_ends(board["pieces"][seat], board["spin"], _occupied(board, but=seat))
        return square is not None and bool(ends >> square & 1)
    return action in legal_actions(board, seat)


# -- actions --------------------------------------------------------------------------


def play(board: dict[str, Any], seat: int, action: dict[str, Any], rng: Rng) -> Outcome:
    kind = action["type"]
    if kind == "flitwick_reveal":
        return _reveal(board, seat, INDEX[action["square"]], rng)
    if kind == "flitwick_place":
        return _place(board, seat, INDEX[action["square"]])
    if kind == "flitwick_move":
        return _move(board, seat, INDEX[action["to"]], rng)
    if kind == "flitwick_stay":
        board["mover"] = board["spin"] = None
        return Outcome(events=[{"type": "flitwick_stayed", "seat": seat, "square": SQUARES[board["pieces"][seat]]}])
    raise ValueError(f"unknown action {kind!r}")


def _rehide_silver(board: dict[str, Any], rng: Rng) -> None:
    """"The other players close their eyes, and the player who found the
    special winged key places it back on the board, face down."

    House rule: the silver key takes a uniformly random place among the keys
    lying face down (its own space included); the gold key that lay there
    takes the silver key's space. Gold keys cannot be told apart face down,
    so this is the finder laying the silver key anywhere unseen, while no
    view (not even the finder's) learns where, and no empty space suddenly
    holds a token that would give the place away.
    """
    found = board["keys"].index(SILVER)
    place = rng.choice(_face_down(board))
    board["keys"][found], board["keys"][place] = board["keys"][place], board["keys"][found]


def _turn_over(board: dict[str, Any], seat: int, square: int, rng: Rng, outcome: Outcome) -> str | None:
    """Turn over the key on ``square``: "When a player turns over a winged key
    token that shows a "normal" key, that player removes that key from the
    board. When a player turns over the special winged key token, that player
    advances to McGonagall's Challenge." Individually: "The first player to
    find the special silver winged key wins the game." """
    key = board["keys"][square]
    if key == GOLD:
        board["keys"][square] = None
    elif key == SILVER:
        if board["mode"] == "individual":
            board["winner"], board["found"] = seat, square
            board["phase"] = "over"
            outcome.winner = seat
            outcome.cause, outcome.reason = "silver_key", "The first player found the silver winged key."
        else:
            _rehide_silver(board, rng)
            board["advanced"].append(seat)
            board["here"].remove(seat)
            board["pieces"][seat] = None
            outcome.finished.append(seat)
            outcome.events.append({"type": "flitwick_silver_hidden", "seat": seat})
    return key


def _reveal(board: dict[str, Any], seat: int, square: int, rng: Rng) -> Outcome:
    outcome = Outcome()
    key = _turn_over(board, seat, square, rng, outcome)
    outcome.events.insert(0, {"type": "flitwick_revealed", "seat": seat, "square": SQUARES[square], "key": key})
    entry = board["reveals"][0]
    entry[1] -= 1
    if key == SILVER or entry[1] <= 0:
        # House rule: a seat that finds the silver key turns over no more keys (it has advanced).
        board["reveals"].pop(0)
    if not board["reveals"]:
        _end_reveals(board, outcome.events)
        if board["phase"] == "over":
            outcome.closed = True
            outcome.next_turn = board["advanced"][0]
    return outcome


def _end_reveals(board: dict[str, Any], events: list[Event]) -> None:
    """"Beginning with the player with the highest-numbered Fire token, all
    players who have not advanced to McGonagall's Challenge place their
    playing pieces on any space on the game board." """
    board["placing"] = _by_fire(board, board["here"])
    board["phase"] = "place" if board["placing"] else "over"
    events.append({"type": "flitwick_placing", "order": list(board["placing"])})


def _place(board: dict[str, Any], seat: int, square: int) -> Outcome:
    """Placing a piece; the last placement names who takes the next regular turn.

    Games in order: "If one or more players advanced to McGonagall's
    Challenge, the first player to advance takes his/her turn on the
    McGonagall's Challenge game board. After this player completes his/her
    turn, players resume their regular turn order. If no player advanced to
    McGonagall's Challenge, the player with the highest-numbered Fire token
    goes first." Individually: "The youngest player goes first. Play passes
    to the left."
    """
    board["pieces"][seat] = square
    board["placing"].pop(0)
    outcome = Outcome(events=[{"type": "flitwick_placed", "seat": seat, "square": SQUARES[square]}])
    if not board["placing"]:
        board["phase"] = "play"
        if board["mode"] == "individual":
            outcome.next_turn = board["here"][0]
        elif board["advanced"]:
            outcome.next_turn = board["advanced"][0]
        else:
            outcome.next_turn = _by_fire(board, board["here"])[0]
    return outcome


def _move(board: dict[str, Any], seat: int, square: int, rng: Rng) -> Outcome:
    """"When players finish moving, they flip over the token on the space they
    occupy." A space whose key was removed has nothing to flip."""
    start = board["pieces"][seat]
    board["pieces"][seat] = square
    spin = board["spin"]
    board["mover"] = board["spin"] = None
    outcome = Outcome()
    key = _turn_over(board, seat, square, rng, outcome)
    outcome.events.insert(0, {"type": "flitwick_moved", "seat": seat, "from": SQUARES[start],
                              "to": SQUARES[square], "spin": spin, "key": key})
    if board["mode"] == "chain" and not board["here"]:
        board["phase"] = "over"
        outcome.closed = True
    return outcome


# -- reading --------------------------------------------------------------------------


def view(board: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """Everything on this board is public except which face-down key is the
    silver one, which nobody knows (not even the seat that put it back)."""
    on = {p: s for s, p in enumerate(board["pieces"]) if p is not None}
    squares = []
    for i, key in enumerate(board["keys"]):
        shown = "silver" if board["found"] == i else "none" if key is None else "face_down"
        squares.append({"square": SQUARES[i], "key": shown, "seat": on.get(i)})
    return {
        "mode": board["mode"],
        "phase": board["phase"],
        "size": SIZE,
        "spinner": list(SPINNER),
        "squares": squares,
        "face_down": sum(1 for square in squares if square["key"] == "face_down"),
        "players": [{"seat": s, "here": s in board["here"],
                     "square": None if board["pieces"][s] is None else SQUARES[board["pieces"][s]],
                     "fire": board["fire"][s]} for s in range(board["seats"])],
        "reveals": [{"seat": s, "left": n} for s, n in board["reveals"]],
        "placing": list(board["placing"]),
        "advanced": list(board["advanced"]),
        "mover": board["mover"],
        "spin": board["spin"],
        "winner": board["winner"],
    }


def determinise(board_view: dict[str, Any], seat: int | None, rng: Rng) -> dict[str, Any]:
    """A board matching ``board_view``: the silver key at a uniformly random
    face-down space (every face-down key is equally likely to be it, for every
    seat alike), gold keys on the other face-down spaces."""
    keys: list[str | None] = [None] * (SIZE * SIZE)
    down = [INDEX[sq["square"]] for sq in board_view["squares"] if sq["key"] == "face_down"]
    found = next((INDEX[sq["square"]] for sq in board_view["squares"] if sq["key"] == "silver"), None)
    for i in down:
        keys[i] = GOLD
    if found is not None:
        keys[found] = SILVER
    elif down:
        keys[rng.choice(down)] = SILVER
    players = board_view["players"]
    return {
        "mode": board_view["mode"],
        "seats": len(players),
        "phase": board_view["phase"],
        "keys": keys,
        "pieces": [None if p["square"] is None else INDEX[p["square"]] for p in players],
        "here": [p["seat"] for p in players if p["here"]],
        "fire": [p["fire"] for p in players],
        "reveals": [[r["seat"], r["left"]] for r in board_view["reveals"]],
        "placing": list(board_view["placing"]),
        "advanced": list(board_view["advanced"]),
        "mover": board_view["mover"],
        "spin": board_view["spin"],
        "winner": board_view["winner"],
        "found": found,
    }
