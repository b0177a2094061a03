"""GAME 5 - Quirrell's Challenge: The Troll.

Read beside the rule book (002_5ac5154540885c00.txt, "GAME 5 - QUIRRELL'S
CHALLENGE" and "RULES FOR PLAYING THE GAMES INDIVIDUALLY") and
docs/rules/sorcerers-stone.md (every house rule, with its source). The board
interface is described in :mod:`.board`.

"OBJECT: To race past the sleeping troll before it wakes up."

The path
--------
Position 0 is "the door at the top left corner of the board", where every
piece starts; spaces 1 to N follow (N is the match option ``quirrell_path``,
default 20: the scan does not show the board), and N + 1 is "the door at the
end of the path". A spin that reaches or passes the end door ends there (house
rule: no exact count).

The spinner
-----------
The scan shows only "2 5 1" of the spinner's Quirrell side. House rule
(quirrell.json): six equal sectors, 1, 2, 3, 4, 5 and the Troll.

The action
----------
``quirrell_spin`` is a player's only action on this board: the spin happens on
the player's own action, not at the start of the turn. Waiting turns (players
captured in McGonagall's Challenge) are the match's business.

State
-----
``mode``, ``seats``, ``length`` (N), ``at`` (per seat: position 0 to N + 1,
None before arriving), ``finished`` (seats through the end door, in order) and
``last_spin`` (``{"seat", "face"}``, face a number or "troll"; None before the
first spin).
"""

from __future__ import annotations

from typing import Any

from service.engine import Rng, load_data

from .board import Event, Outcome

NAME = "quirrell"
SCHEMA = load_data(__package__, "quirrell.schema.json")
DATA = load_data(__package__, "quirrell.json")

#: The Quirrell's Challenge side of the spinner: numbers of spaces, and "troll".
SPINNER: list[int | str] = list(DATA["spinner"])
TROLL = "troll"
DOOR = 0


def new_board(rng: Rng, seats: int, mode: str, options: dict[str, Any]) -> dict[str, Any]:
    """"Unsnap the spinner arrow, then flip over the spinner so that the
    Quirrell's Challenge side is face up." Nothing is hidden or shuffled."""
    return {
        "mode": mode,
        "seats": seats,
        "length": int(options.get("quirrell_path", DATA["path"])),
        "at": [None] * seats,
        "finished": [],
        "last_spin": None,
    }


def arrive(board: dict[str, Any], seat: int, rng: Rng, player: dict[str, Any]) -> list[Event]:
    """"As players reach Quirrell's Challenge, they place their playing pieces on
    the door at the top left corner of the board." (Individually: "Players place
    their playing pieces on the door at the top left corner of the board.")"""
    board["at"][seat] = DOOR
    return [{"type": "quirrell_arrived", "seat": seat}]


def end_door(board: dict[str, Any]) -> int:
    """The position of "the door at the end of the path"."""
    return board["length"] + 1


def _here(board: dict[str, Any], seat: int) -> bool:
    return board["at"][seat] is not None and seat not in board["finished"]


def turn_owner(board: dict[str, Any]) -> int | None:
    """Quirrell's Challenge has no decisions outside the regular turn order."""
    return None


def can_play(board: dict[str, Any], seat: int) -> bool:
    """"As players complete McGonagall's Challenge, they start immediately on this
    game, keeping their regular turn order." """
    return _here(board, seat)


def begin_turn(board: dict[str, Any], seat: int, rng: Rng) -> list[Event]:
    """Nothing happens before the spin, which is the player's action."""
    return []


def legal_actions(board: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """"The first player spins the spinner and moves the number of spaces shown." """
    return [{"type": "quirrell_spin"}] if _here(board, seat) else []


def play(board: dict[str, Any], seat: int, action: dict[str, Any], rng: Rng) -> Outcome:
    """MOVING ALONG THE BOARD: "1. The first player spins the spinner and moves the
    number of spaces shown. 2. When a player spins the troll, the troll wakes up
    and that player moves back to the door at the top left corner." """
    face = rng.choice(SPINNER)
    start = board["at"][seat]
    board["last_spin"] = {"seat": seat, "face": face}
    if face == TROLL:
        board["at"][seat] = DOOR
        events = [{"type": "quirrell_troll", "seat": seat, "from": start, "to": DOOR}]
        return Outcome(events=events)
    target = min(start + face, end_door(board))
    board["at"][seat] = target
    events = [{"type": "quirrell_spun", "seat": seat, "spin": face, "from": start, "to": target}]
    if target < end_door(board):
        return Outcome(events=events)
    return _through_the_door(board, seat, events)


def _through_the_door(board: dict[str, Any], seat: int, events: list[Event]) -> Outcome:
    """Individually: "The first player to reach the door at the end of the path
    wins the game." In order: "When all players have reached the door at the end
    of the path, they move on to Snape's Challenge" -- each player leaves this
    board on reaching the door, with its finishing rank (``quirrell_rank``, for
    "The first player to finish Quirrell's Challenge takes the top three cards"
    in Snape's Challenge, whose board waits for everyone)."""
    board["finished"].append(seat)
    rank = len(board["finished"])
    events.append({"type": "quirrell_door", "seat": seat, "rank": rank})
    if board["mode"] == "individual":
        return Outcome(events=events, winner=seat, closed=True, cause="end_door",
                       reason="The first player reached the door at the end of the path.")
    return Outcome(events=events, finished=[seat], facts={seat: {"quirrell_rank": rank}},
                   closed=rank == board["seats"])


def _face_view(face: int | str) -> str:
    return str(face)


def view(board: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """Everything on this board is public."""
    spin = board["last_spin"]
    return {
        "mode": board["mode"],
        "length": board["length"],
        "end_door": end_door(board),
        "spinner": [_face_view(face) for face in SPINNER],
        "last_spin": None if spin is None else {"seat": spin["seat"], "face": _face_view(spin["face"])},
        "players": [
            {
                "seat": s,
                "position": board["at"][s],
                "finished": s in board["finished"],
                "rank": board["finished"].index(s) + 1 if s in board["finished"] else None,
            }
            for s in range(board["seats"])
        ],
        "finished": list(board["finished"]),
    }


def determinise(board_view: dict[str, Any], seat: int | None, rng: Rng) -> dict[str, Any]:
    """Nothing is hidden: the board is read back from the view."""
    spin = board_view["last_spin"]
    return {
        "mode": board_view["mode"],
        "seats": len(board_view["players"]),
        "length": board_view["length"],
        "at": [p["position"] for p in board_view["players"]],
        "finished": list(board_view["finished"]),
        "last_spin": None if spin is None else {
            "seat": spin["seat"], "face": TROLL if spin["face"] == TROLL else int(spin["face"])},
    }
