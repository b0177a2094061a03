"""GAME 1 - Hagrid's Challenge: Fluffy, the Three-Headed Dog.

Read beside the rule book (002_5ac5154540885c00.txt, "GAME 1 - HAGRID'S
CHALLENGE") and docs/rules/sorcerers-stone.md (every house rule, with its
source). The board interface is described in :mod:`.board`.

"OBJECT OF THE GAME: To put Fluffy to sleep so players can sneak by and go
through the trapdoor."

The path
--------
Position 0 is Start, "the door next to Start" where the pieces begin (and
where "go back to Start" sends them: house rule, the door and Start are one
place). Spaces 1 to 15 each hold one token at set-up, 14 flutes and Fluffy
(house rule after DESIGN.md: one space per token). Position 16 is the
trapdoor. A move that would go beyond space 15 ends on the trapdoor: the
notes left over are spent going through it (house rule; "must move the full
number of notes" is kept, the rest of the count is used up in the trapdoor).

Fluffy
------
A flipped Fluffy stays face up on its space for the rest of the game. He is
*asleep* from the song that put him to sleep until the singer "plays again",
else *awake* (also when he has just been flipped by a player without a
song: house rule). A move that ends on an awake Fluffy's space needs a song
(played automatically when held) or sends the mover back to Start; a move
from before Fluffy's space to beyond it (passing Fluffy) is legal only with
a song in the hand besides the card played, and plays it. Either song puts
Fluffy to sleep again for one full turn. Leaving Fluffy's space is not
passing him. A sleeping Fluffy is passed, or landed on, freely.

The actions
-----------
``hagrid_move {card}`` plays one card (by its notes, 1-4) and moves that many
spaces; ``hagrid_end`` ends the turn without moving. Either ends the turn
("may only play one card to move per turn").

State
-----
``mode``, ``seats``; ``pile`` (face-down draw pile, top last), ``discard``
(face-up discard pile, top last); ``tokens`` (spaces 1-15 in order: "flute",
"fluffy" or None once a flute is removed); ``fluffy_up`` (Fluffy has been
flipped); ``asleep`` (the seat whose song put Fluffy to sleep, None when he
is awake); ``last_turn`` (the seat whose regular turn on this board began
last); ``at`` (per seat: position 0-16, None before arriving), ``hands``
(per seat, sorted note counts) and ``finished`` (seats through the trapdoor,
in order).
"""

from __future__ import annotations

from typing import Any

from service.engine import Rng, load_data

from .board import Event, Outcome

NAME = "hagrid"
SCHEMA = load_data(__package__, "hagrid.schema.json")
DATA = load_data(__package__, "hagrid.json")

#: Every Musical Note Card, by its notes ("Each card shows a number of musical notes on it").
DECK: list[int] = sorted(entry["notes"] for entry in DATA["cards"] for _ in range(entry["count"]))
#: The face-down tokens, one per space.
TOKENS: list[str] = [entry["token"] for entry in DATA["tokens"] for _ in range(entry["count"])]
#: "a 1 note card, a 2 note card, a 3 note card, and a 4 note card".
SONG: list[int] = list(DATA["song"])
SPACES = len(TOKENS)
START = 0
TRAPDOOR = SPACES + 1


# -- set-up ------------------------------------------------------------------------------


def new_board(rng: Rng, seats: int, mode: str, options: dict[str, Any]) -> dict[str, Any]:
    """"1. Mix up the tokens and place them face down on the game board, one on
    each space. 2. Shuffle the cards ... Place the rest of the cards in a pile,
    face down." (The two cards each player is dealt come off the pile in
    :func:`arrive`.)"""
    tokens = list(TOKENS)
    rng.shuffle(tokens)
    pile = list(DECK)
    rng.shuffle(pile)
    return {
        "mode": mode,
        "seats": seats,
        "pile": pile,
        "discard": [],
        "tokens": tokens,
        "fluffy_up": False,
        "asleep": None,
        "last_turn": None,
        "at": [None] * seats,
        "hands": [[] for _ in range(seats)],
        "finished": [],
    }


def arrive(board: dict[str, Any], seat: int, rng: Rng, player: dict[str, Any]) -> list[Event]:
    """"Shuffle the cards and deal two to each player." "Each player chooses a
    playing piece and places it on the door next to Start." """
    board["at"][seat] = START
    events: list[Event] = []
    cards = [card for card in (_draw(board, rng, events) for _ in range(DATA["deal"])) if card is not None]
    board["hands"][seat] = sorted(cards)
    return events + [
        {"type": "hagrid_arrived", "seat": seat, "hand_size": len(cards)},
        {"type": "hagrid_hand", "seat": seat, "cards": sorted(cards), "audience": [seat]},
    ]


# -- turns -----------------------------------------------------------------------------


def _here(board: dict[str, Any], seat: int) -> bool:
    return board["at"][seat] is not None and seat not in board["finished"]


def turn_owner(board: dict[str, Any]) -> int | None:
    """Hagrid's Challenge has no decisions outside the regular turn order."""
    return None


def can_play(board: dict[str, Any], seat: int) -> bool:
    """Everyone on the path plays on each regular turn ("They do not have to move
    on any turn", but they always pick a card)."""
    return _here(board, seat)


def _draw(board: dict[str, Any], rng: Rng, events: list[Event]) -> int | None:
    """The top card of the face-down pile. "When there are no more cards in the
    face-down pile, players shuffle the discard pile and form a new face-down
    pile." House rule: with both piles empty (every card in a hand), no card is
    picked."""
    if not board["pile"] and board["discard"]:
        board["pile"], board["discard"] = board["discard"], []
        rng.shuffle(board["pile"])
        events.append({"type": "hagrid_reshuffled", "pile_size": len(board["pile"])})
    return board["pile"].pop() if board["pile"] else None


def _turn_came_round(board: dict[str, Any], seat: int) -> bool:
    """Whether the regular turn order, going from ``last_turn`` to ``seat``,
    reaches (or passes, if that player has left the board) the seat that put
    Fluffy to sleep: "he stays asleep for one full turn (until the player who
    put Fluffy to sleep plays again)"."""
    seats, previous, singer = board["seats"], board["last_turn"], board["asleep"]
    if previous is None:
        return True
    to_singer = (singer - previous - 1) % seats + 1
    to_seat = (seat - previous - 1) % seats + 1
    return to_singer <= to_seat


def begin_turn(board: dict[str, Any], seat: int, rng: Rng) -> list[Event]:
    """"On each turn, players pick a card, then decide whether or not to move."
    Fluffy wakes first if this turn is the singer's next one (or the turn order
    has gone past the singer, who has left through the trapdoor)."""
    events: list[Event] = []
    if board["asleep"] is not None and _turn_came_round(board, seat):
        board["asleep"] = None
        events.append({"type": "hagrid_fluffy_woke", "space": fluffy_space(board)})
    board["last_turn"] = seat
    card = _draw(board, rng, events)
    if card is None:
        events.append({"type": "hagrid_no_card", "seat": seat})
        return events
    board["hands"][seat] = sorted(board["hands"][seat] + [card])
    events.append({"type": "hagrid_drew", "seat": seat, "pile_size": len(board["pile"]),
                   "hand_size": len(board["hands"][seat])})
    events.append({"type": "hagrid_drew_card", "seat": seat, "card": card, "audience": [seat]})
    return events


# -- the rules of a move -------------------------------------------------------------------


def fluffy_space(board: dict[str, Any]) -> int | None:
    """The space (1-15) of a flipped Fluffy; None while he is face down."""
    if not board["fluffy_up"]:
        return None
    return board["tokens"].index("fluffy") + 1


def _awake_fluffy(board: dict[str, Any]) -> int | None:
    """The space of Fluffy when he is face up and awake."""
    return fluffy_space(board) if board["asleep"] is None else None


def has_song(hand: list[int]) -> bool:
    """"To put Fluffy to sleep, a player must play four different cards (a 1 note
    card, a 2 note card, a 3 note card, and a 4 note card) at the same time." """
    return all(notes in hand for notes in SONG)


def _without(hand: list[int], card: int) -> list[int]:
    rest = list(hand)
    rest.remove(card)
    return rest


def destination(board: dict[str, Any], seat: int, card: int) -> int:
    """Where a card of ``card`` notes takes the seat's piece: "move ahead one
    space for each note shown"; a move beyond space 15 ends on the trapdoor."""
    return min(board["at"][seat] + card, TRAPDOOR)


def passes_fluffy(board: dict[str, Any], seat: int, card: int) -> bool:
    """Whether the move starts before an awake Fluffy's space and ends beyond it."""
    fluffy = _awake_fluffy(board)
    return fluffy is not None and board["at"][seat] < fluffy < destination(board, seat, card)


def can_move(board: dict[str, Any], seat: int, card: int) -> bool:
    """"After one full turn is over, players may not pass Fluffy unless they can
    play a song (four different cards)": passing an awake Fluffy needs a song
    among the cards left after the one played to move."""
    hand = board["hands"][seat]
    if card not in hand:
        return False
    return not passes_fluffy(board, seat, card) or has_song(_without(hand, card))


def legal_actions(board: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """"After picking a card, a player may play one card from his/her hand and
    move ahead one space for each note shown (see above), or end the turn." One
    ``hagrid_move`` per distinct card that may be played, then ``hagrid_end``."""
    if not _here(board, seat):
        return []
    moves = [{"type": "hagrid_move", "card": card}
             for card in sorted(set(board["hands"][seat])) if can_move(board, seat, card)]
    return moves + [{"type": "hagrid_end"}]


def _sing(board: dict[str, Any], seat: int, events: list[Event]) -> None:
    """Play a song (one card of each note count) onto the discard pile: Fluffy sleeps.
    "Once Fluffy has been put to sleep, he stays asleep for one full turn (until
    the player who put Fluffy to sleep plays again)." """
    hand = board["hands"][seat]
    for notes in SONG:
        hand.remove(notes)
    board["discard"].extend(SONG)
    board["asleep"] = seat
    events.append({"type": "hagrid_song", "seat": seat, "space": fluffy_space(board), "cards": list(SONG)})


def play(board: dict[str, Any], seat: int, action: dict[str, Any], rng: Rng) -> Outcome:
    """``hagrid_end`` ends the turn. ``hagrid_move``: "move ahead one space for each
    note shown"; "After playing a card, players place it in a discard pile on the
    table." Passing an awake Fluffy plays the song on the way; then the piece
    lands (:func:`_land`) or goes through the trapdoor."""
    if action["type"] == "hagrid_end":
        return Outcome(events=[{"type": "hagrid_ended", "seat": seat}])
    card = action["card"]
    events: list[Event] = []
    start = board["at"][seat]
    target = destination(board, seat, card)
    passing = passes_fluffy(board, seat, card)
    # "After playing a card, players place it in a discard pile on the table."
    board["hands"][seat].remove(card)
    board["discard"].append(card)
    events.append({"type": "hagrid_moved", "seat": seat, "card": card, "from": start, "to": target})
    if passing:
        # "players may not pass Fluffy unless they can play a song": the song is played on the way.
        _sing(board, seat, events)
    board["at"][seat] = target
    if target == TRAPDOOR:
        return _through_the_trapdoor(board, seat, events)
    _land(board, seat, target, events)
    return Outcome(events=events)


def _land(board: dict[str, Any], seat: int, space: int, events: list[Event]) -> None:
    """LANDING ON A TOKEN: "1. When a player ends his/her move on a space with a
    token on it, that player flips the token over. 2. If the token shows a
    flute, that player removes the token from the board. The turn is over.
    3. If the token has Fluffy on it, that player must play a song to put
    Fluffy to sleep. ... 4. If the player does not have all four cards, he/she
    must go back to Start." A player holding a song plays it (it is a must).
    A face-up Fluffy is met again by whoever ends a move on his space while he
    is awake; asleep, "Any other player may pass Fluffy" and may stop there."""
    token = board["tokens"][space - 1]
    if token == "flute":
        board["tokens"][space - 1] = None
        events.append({"type": "hagrid_flute", "seat": seat, "space": space})
        return
    if token != "fluffy":
        return
    if not board["fluffy_up"]:
        board["fluffy_up"] = True
        events.append({"type": "hagrid_fluffy_found", "seat": seat, "space": space})
    if board["asleep"] is not None:
        return
    if has_song(board["hands"][seat]):
        _sing(board, seat, events)
    else:
        board["at"][seat] = START
        events.append({"type": "hagrid_back_to_start", "seat": seat, "space": space})


def _through_the_trapdoor(board: dict[str, Any], seat: int, events: list[Event]) -> Outcome:
    """Individually: "The first player to reach the trapdoor at the end of the
    cobblestone path wins the game." In order: "As each player reaches the
    trapdoor, he/she moves on to Sprout's Challenge ... The rest of the players
    continue to play Hagrid's Challenge." House rule: the cards left in the hand
    go face up onto the discard pile, so that they stay in play."""
    board["finished"].append(seat)
    events.append({"type": "hagrid_trapdoor", "seat": seat, "rank": len(board["finished"])})
    if board["mode"] == "individual":
        return Outcome(events=events, winner=seat, closed=True, cause="trapdoor",
                       reason="The first player reached the trapdoor.")
    hand = board["hands"][seat]
    if hand:
        events.append({"type": "hagrid_hand_discarded", "seat": seat, "cards": list(hand)})
        board["discard"].extend(hand)
        board["hands"][seat] = []
    everyone_through = len(board["finished"]) == board["seats"]
    return Outcome(events=events, finished=[seat], closed=everyone_through)


# -- views -----------------------------------------------------------------------------------


def _space_view(board: dict[str, Any], index: int) -> str:
    token = board["tokens"][index]
    if token is None:
        return "empty"
    if token == "fluffy" and board["fluffy_up"]:
        return "fluffy"
    return "face_down"


def view(board: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """Public: the path (face-down tokens as ``face_down``, a flipped Fluffy as
    ``fluffy``), the pieces, the hand sizes, the size of the face-down pile and
    the face-up discard pile. Private: only the viewer's own hand."""
    return {
        "mode": board["mode"],
        "spaces": [_space_view(board, i) for i in range(SPACES)],
        "trapdoor": TRAPDOOR,
        "fluffy_asleep_by": board["asleep"],
        "last_turn": board["last_turn"],
        "pile_size": len(board["pile"]),
        "discard": list(board["discard"]),
        "players": [
            {
                "seat": s,
                "position": board["at"][s],
                "hand_size": len(board["hands"][s]),
                "hand": list(board["hands"][s]) if s == seat else [],
                "finished": s in board["finished"],
            }
            for s in range(board["seats"])
        ],
        "finished": list(board["finished"]),
    }


def determinise(board_view: dict[str, Any], seat: int | None, rng: Rng) -> dict[str, Any]:
    """A board ``seat`` cannot tell from the real one: the cards it has not seen
    (the 40 less its hand and the discard pile) dealt at random to the other
    hands and the pile by their sizes; Fluffy, while face down, under one of
    the face-down spaces at random."""
    players = board_view["players"]
    unseen = list(DECK)
    for card in board_view["discard"]:
        unseen.remove(card)
    if seat is not None:
        for card in players[seat]["hand"]:
            unseen.remove(card)
    rng.shuffle(unseen)
    hands = []
    for p in players:
        if p["seat"] == seat:
            hands.append(list(p["hand"]))
        else:
            hands.append(sorted(unseen[:p["hand_size"]]))
            del unseen[:p["hand_size"]]
    assert len(unseen) == board_view["pile_size"], "the view's card counts do not add up to the deck"
    spaces = board_view["spaces"]
    tokens: list[str | None] = [None if s == "empty" else "fluffy" if s == "fluffy" else "flute" for s in spaces]
    fluffy_up = "fluffy" in spaces
    if not fluffy_up:
        tokens[rng.choice([i for i, s in enumerate(spaces) if s == "face_down"])] = "fluffy"
    return {
        "mode": board_view["mode"],
        "seats": len(players),
        "pile": unseen,
        "discard": list(board_view["discard"]),
        "tokens": tokens,
        "fluffy_up": fluffy_up,
        "asleep": board_view["fluffy_asleep_by"],
        "last_turn": board_view["last_turn"],
        "at": [p["position"] for p in players],
        "hands": hands,
        "finished": list(board_view["finished"]),
    }
