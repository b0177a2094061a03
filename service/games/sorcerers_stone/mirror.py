"""GAME 6 3/4 - The Mirror of Erised and the Sorcerer's Stone.

Read beside the rule book (002_5ac5154540885c00.txt, "GAME 6 3/4: THE MIRROR
OF ERISED AND THE SORCERER'S STONE") and docs/rules/sorcerers-stone.md (every
house rule, with its source). The board interface is described in
:mod:`.board`.

"OBJECT: To find the Sorcerer's Stone."

This board exists only in the games played in order (the rule book has no
individual rules for it); the match ends on it. The ten cards lie face down in
a row, numbered 0-9; one is the Sorcerer's Stone, the other nine show
You-Know-Who (house rule: the components list pictures only those two faces;
mirror.json). A flipped card stays face up. Wrong claimants of Snape's
Challenge wait their two turns in the match (:mod:`.game`), not here.

The action
----------
``mirror_flip {card}`` turns over the face-down card at that place.

State
-----
``mode``, ``seats``, ``cards`` (the ten faces, "stone" or "you_know_who", in
their places), ``up`` (per card: flipped), ``players`` (the seats at the
Mirror, in the order they arrived) and ``winner``.
"""

from __future__ import annotations

from typing import Any

from service.engine import Rng, load_data

from .board import Event, Outcome

NAME = "mirror"
SCHEMA = load_data(__package__, "mirror.schema.json")
DATA = load_data(__package__, "mirror.json")

STONE = "stone"
#: The ten Mirror of Erised Cards.
CARDS: list[str] = [entry["face"] for entry in DATA["cards"] for _ in range(entry["count"])]


def new_board(rng: Rng, seats: int, mode: str, options: dict[str, Any]) -> dict[str, Any]:
    """"1. Shuffle the Mirror of Erised Cards and place them face down on the
    table, with the mirror side facing up." """
    cards = list(CARDS)
    rng.shuffle(cards)
    return {"mode": mode, "seats": seats, "cards": cards, "up": [False] * len(cards), "players": [],
            "winner": None}


def arrive(board: dict[str, Any], seat: int, rng: Rng, player: dict[str, Any]) -> list[Event]:
    """"2. As players complete Snape's Challenge, they begin immediately on the
    Mirror of Erised, keeping their regular turn order. Players do NOT wait for
    all other players to reach the Mirror of Erised to begin." """
    board["players"].append(seat)
    return [{"type": "mirror_arrived", "seat": seat}]


def turn_owner(board: dict[str, Any]) -> int | None:
    """The Mirror has no decisions outside the regular turn order."""
    return None


def can_play(board: dict[str, Any], seat: int) -> bool:
    """"2. As other players complete Snape's Challenge, they join in flipping over
    Mirror of Erised cards when it is their turn." """
    return seat in board["players"] and board["winner"] is None and not all(board["up"])


def begin_turn(board: dict[str, Any], seat: int, rng: Rng) -> list[Event]:
    """Nothing happens before the flip, which is the player's action."""
    return []


def legal_actions(board: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """"1. On each turn, a player flips over one Mirror of Erised card." Any card
    still face down."""
    if not can_play(board, seat):
        return []
    return [{"type": "mirror_flip", "card": i} for i, up in enumerate(board["up"]) if not up]


def play(board: dict[str, Any], seat: int, action: dict[str, Any], rng: Rng) -> Outcome:
    """"If this player reveals the Sorcerer's Stone, he/she wins the game. If not,
    play continues." "4. The player who reveals the Sorcerer's Stone wins the
    game." """
    index = action["card"]
    board["up"][index] = True
    face = board["cards"][index]
    events: list[Event] = [{"type": "mirror_flipped", "seat": seat, "card": index, "face": face}]
    if face != STONE:
        return Outcome(events=events)
    board["winner"] = seat
    events.append({"type": "mirror_stone_found", "seat": seat, "card": index})
    return Outcome(events=events, winner=seat, closed=True)


def view(board: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """A face-down card shows only its mirror side, to everyone; a flipped card
    shows its face."""
    return {
        "cards": [board["cards"][i] if up else "face_down" for i, up in enumerate(board["up"])],
        "players": list(board["players"]),
        "winner": board["winner"],
        "mode": board["mode"],
        "seats": board["seats"],
    }


def determinise(board_view: dict[str, Any], seat: int | None, rng: Rng) -> dict[str, Any]:
    """The faces nobody has seen (the full set less the flipped cards) dealt at
    random to the face-down places."""
    shown = board_view["cards"]
    hidden = list(CARDS)
    for face in shown:
        if face != "face_down":
            hidden.remove(face)
    rng.shuffle(hidden)
    cards = [face if face != "face_down" else hidden.pop() for face in shown]
    return {"mode": board_view["mode"], "seats": board_view["seats"], "cards": cards,
            "up": [face != "face_down" for face in shown], "players": list(board_view["players"]),
            "winner": board_view["winner"]}
