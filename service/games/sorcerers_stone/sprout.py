"""GAME 2 - Sprout's Challenge: The Devil's Snare.

Read beside the rule book (002_5ac5154540885c00.txt, "GAME 2 - SPROUT'S
CHALLENGE" and "RULES FOR PLAYING THE GAMES INDIVIDUALLY: SPROUT'S
CHALLENGE") and docs/rules/sorcerers-stone.md (every house rule, with its
source). The board interface is described in :mod:`.board`.

"OBJECT OF THE GAME: To build complete rings of Devil's Snare pieces to
surround the other players and be the last player who is not surrounded."

The board
---------
"Each of the four areas on the board has an identical Devil's Snare path
around it." Each area is a ring of 10 shaped spaces (DESIGN.md); the shape of
each space, in ring order, is ``RING`` (sprout.json), the same in every area,
and space ``i`` is next to spaces ``i - 1`` and ``i + 1`` (the ring closes:
space 9 is next to space 0). There are 4 tokens of each shape, so the 40
tokens fill the 40 spaces exactly.

Arriving
--------
A seat reaching the board (:func:`arrive`) owes a decision at once
(:func:`turn_owner`): ``sprout_enter {area}`` "places his/her playing piece in
the center of one of the [remaining] areas" and picks two tokens. An area
holds one piece. The areas offered are the *open* ones (no piece, ring not
complete); a seat that finds none ("areas will be surrounded while some players
are still playing Hagrid's Challenge") enters an area whose ring is already
complete and is surrounded on arrival (see Fire tokens). Individually every
seat arrives at set-up and decides in seat order, seat 0 first.

Rule 6 of SURROUNDING PLAYERS: "If more than one area is surrounded before
players place their playing pieces, the last player to finish Hagrid's
Challenge picks the Fire token with the number 1 on it. The next to last
player to finish Hagrid's Challenge picks the Fire token with the number 2 on
it, and so on." The match option ``sprout_late_arrivals`` says who that is:
``no_open_area`` (default): a seat that finds no open area -- the case the
book's condition stands for, where the surrounded areas are empty ones and
the latecomers can only enter them; ``more_than_one_surrounded`` (the book's
words taken literally): every seat placing its piece while more than one
ring is complete, whichever area it takes -- also when those rings surround
the players already there, who then hand their low Fire tokens to the
latecomers and move up. Either way such a seat is surrounded on arrival,
still picks two tokens and plays on its turns ("players still place their
playing pieces in the center of an area, pick two tokens, and begin play on
their turn").

A turn
------
:func:`begin_turn` picks the top token of the draw pile ("On each turn, a
player picks a token from the draw pile"). Once the pile is empty, the player
must first take a token from another player holding one ("players take one
token from any other player on each turn"): ``sprout_steal {victim}``; the
token taken is drawn at random (the tokens lie face down). Then the player
places one of his/her tokens, ``sprout_place {area, space}`` (the shape is the
space's), on an empty matching space; in an area already holding a token only
on a space next to one. Placing is compulsory when possible; a player who can
place nothing plays ``sprout_pass``.

Fire tokens
-----------
A completed ring surrounds the area's player, who takes the lowest Fire
token left; a ring completed around an area without a piece closes that
area. ``surrounded`` lists the surrounded seats lowest Fire token first (its
Fire token is its place in that list plus one). A seat surrounded on arrival
goes to the *front* of that list: "the last player to finish Hagrid's
Challenge picks the Fire token with the number 1 on it. The next to last
player ... 2, and so on"; the Fire tokens already taken move up one each.
"Play stops" once every seat has entered and at most one is not surrounded;
that one, "the remaining player", takes the highest Fire token left, which is
always 4. When every seat holds a Fire token the board is over: in the chain
every seat finishes (highest Fire token first); individually "The player with
the largest number on his/her Fire token wins the game."

Ending
------
No cap is needed. The pile shrinks every turn it is drawn from. Once it is
empty, some token in a hand can always be placed (an empty area takes any
shape, and an unfinished arc's two end spaces have their tokens in hands), and
the holder places it on its next turn unless another player takes it first
and then places a token itself; so every round of turns places a token, and
the 40 tokens fill every ring.

State
-----
``mode``, ``seats``; ``pile`` (the face-down draw pile, top last);
``hands`` (per seat, the face-down tokens in front of the player, sorted in
ring order); ``areas`` (four ``{"player", "filled"}``: the seat whose piece is
in the center, and per space whether a token is on it); ``arrived`` (seats in
the order they reached the board); ``entering`` (arrived seats still to choose
an area, the first decides now); ``surrounded`` (see Fire tokens); ``fire``
(per seat, None until taken); ``turn`` and ``phase`` (the seat whose regular
turn on this board is under way and whether it must still ``steal`` or
``place``); ``over``; ``late_arrivals`` (the option above).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from service.engine import Rng, load_data

from .board import Event, Outcome

NAME = "sprout"
SCHEMA = load_data(__package__, "sprout.schema.json")
DATA = load_data(__package__, "sprout.json")

#: The shape of each space of an area's ring, in ring order (every area alike).
RING: list[str] = list(DATA["ring"])
SPACES = len(RING)
#: "one of the four areas on the board"
AREAS: int = DATA["areas"]
#: The space of each shape on a ring.
SPACE_OF: dict[str, int] = {shape: space for space, shape in enumerate(RING)}
#: "40 Devil's Snare Tokens", by shape.
TOKENS: list[str] = [shape for shape in RING for _ in range(DATA["tokens"][shape])]
#: "4 Fire Tokens", by number.
FIRE: list[int] = sorted(DATA["fire"])
#: "picks two Devil's Snare tokens from the draw pile"
PICK: int = DATA["pick_on_arrival"]
#: The values of the match option ``sprout_late_arrivals`` (see the module docstring).
NO_OPEN_AREA, MORE_THAN_ONE_SURROUNDED = "no_open_area", "more_than_one_surrounded"
#: A board, or a match's options, from before the option existed was played under this reading (the default).
BEFORE_THE_OPTION = NO_OPEN_AREA

assert set(DATA["tokens"]) == set(RING) and len(TOKENS) == AREAS * SPACES, "every token has a space"


def _sorted(tokens: list[str]) -> list[str]:
    return sorted(tokens, key=SPACE_OF.__getitem__)


# -- set-up ------------------------------------------------------------------------------


def new_board(rng: Rng, seats: int, mode: str, options: dict[str, Any]) -> dict[str, Any]:
    """"1. Mix up the Devil's Snare tokens and lay them, face down, on the table
    to create a draw pile. 2. Place the four Fire tokens, face up, on the
    table." """
    pile = list(TOKENS)
    rng.shuffle(pile)
    return {
        "mode": mode,
        "seats": seats,
        "pile": pile,
        "hands": [[] for _ in range(seats)],
        "areas": [{"player": None, "filled": [False] * SPACES} for _ in range(AREAS)],
        "arrived": [],
        "entering": [],
        "surrounded": [],
        "fire": [None] * seats,
        "turn": None,
        "phase": None,
        "over": False,
        "late_arrivals": options.get("sprout_late_arrivals", BEFORE_THE_OPTION),
    }


def arrive(board: dict[str, Any], seat: int, rng: Rng, player: dict[str, Any]) -> list[Event]:
    """"As players complete Hagrid's Challenge, they move immediately to this
    game." The seat then chooses its area at once (:func:`turn_owner`)."""
    board["arrived"].append(seat)
    board["entering"].append(seat)
    return [{"type": "sprout_arrived", "seat": seat}]


# -- the board -------------------------------------------------------------------------------


def area_of(board: dict[str, Any], seat: int) -> int | None:
    """The area whose center holds ``seat``'s piece, None before it enters."""
    for index, area in enumerate(board["areas"]):
        if area["player"] == seat:
            return index
    return None


def complete(area: dict[str, Any]) -> bool:
    """A complete ring of Devil's Snare: every space of the area holds a token."""
    return all(area["filled"])


def surrounded_on_arrival(board: dict[str, Any], index: int) -> bool:
    """Whether a seat placing its piece in area ``index`` now is surrounded at once.

    Its ring is complete; or (option ``more_than_one_surrounded``, rule 6 taken
    literally) "more than one area is surrounded before players place their
    playing pieces": more than one ring is complete, whichever area it takes."""
    if complete(board["areas"][index]):
        return True
    if board.get("late_arrivals", BEFORE_THE_OPTION) != MORE_THAN_ONE_SURROUNDED:
        return False
    return sum(1 for area in board["areas"] if complete(area)) > 1


def entry_areas(board: dict[str, Any]) -> list[int]:
    """Where an arriving seat may place its piece: "in the center of one of the
    remaining areas" -- an area without a piece whose ring is not complete.
    House rule: when there is none, any area without a piece (its ring is
    complete, so the seat is surrounded on arrival: "It is possible that areas
    will be surrounded while some players are still playing Hagrid's
    Challenge. After completing Hagrid's Challenge, players still place their
    playing pieces in the center of an area"). Some area is always free: fewer
    than four seats have entered when one arrives."""
    free = [index for index, area in enumerate(board["areas"]) if area["player"] is None]
    open_areas = [index for index in free if not complete(board["areas"][index])]
    return open_areas or free


def victims(board: dict[str, Any], seat: int) -> list[int]:
    """The other players ``seat`` may take a token from: "When there are no more
    face-down tokens in the draw pile, players take one token from any other
    player on each turn" (those holding at least one), in seat order."""
    return [other for other in range(board["seats"])
            if other != seat and board["hands"][other] and area_of(board, other) is not None]


def placements(board: dict[str, Any], seat: int) -> list[tuple[int, int]]:
    """Every ``(area, space)`` where ``seat`` may place a token, area by area:
    "players place one of their tokens on a matching space on the board that
    does not already have a token on it. The token must match the space on the
    board. Players may place a token in any of the four areas. Once a token has
    been placed in an area, players may only place tokens next to a token
    already placed in that area." """
    shapes = set(board["hands"][seat])
    found = []
    for index, area in enumerate(board["areas"]):
        filled = area["filled"]
        started = any(filled)
        for space, shape in enumerate(RING):
            if shape not in shapes or filled[space]:
                continue
            if not started or filled[space - 1] or filled[(space + 1) % SPACES]:
                found.append((index, space))
    return found


# -- turns -----------------------------------------------------------------------------


def turn_owner(board: dict[str, Any]) -> int | None:
    """An arriving seat places its piece at once: "As the other players complete
    Hagrid's Challenge they place their playing pieces in the center of one of
    the remaining areas on the board and pick two Devil's Snare tokens." """
    if board["over"] or not board["entering"]:
        return None
    return board["entering"][0]


def can_play(board: dict[str, Any], seat: int) -> bool:
    """Whether ``seat`` has a turn here: it has entered an area ("begin play on
    their turn"; surrounded players too: "On their turns, players who have
    taken a Fire token continue to place Devil's Snare tokens") and it can pick
    a token, take one from another player or place one. House rule: a seat
    that can do none of these (every token is on the board, or it alone holds
    tokens, none of which fits) has its turn passed."""
    if board["over"] or seat in board["entering"] or area_of(board, seat) is None:
        return False
    return bool(board["pile"]) or bool(victims(board, seat)) or bool(placements(board, seat))


def begin_turn(board: dict[str, Any], seat: int, rng: Rng) -> list[Event]:
    """"On each turn, a player picks a token from the draw pile." With the pile
    empty the player must first take a token from another player
    (``sprout_steal``)."""
    board["turn"] = seat
    events: list[Event] = []
    if board["pile"]:
        shape = board["pile"].pop()
        board["hands"][seat] = _sorted(board["hands"][seat] + [shape])
        events.append({"type": "sprout_drew", "seat": seat, "pile_size": len(board["pile"]),
                       "hand_size": len(board["hands"][seat])})
        events.append({"type": "sprout_drew_token", "seat": seat, "shape": shape, "audience": [seat]})
        board["phase"] = "place"
    elif victims(board, seat):
        board["phase"] = "steal"
    else:
        board["phase"] = "place"
    return events


def legal_actions(board: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """The arriving seat's choice of area; else, on the seat's turn, the
    players it may take a token from, then its placements (or a pass when
    nothing fits). House rule: a seat given the turn here before its turn on
    this board began (it arrived during its own turn on Hagrid's board) may
    only pass."""
    if board["over"]:
        return []
    if board["entering"]:
        if board["entering"][0] != seat:
            return []
        return [{"type": "sprout_enter", "area": index} for index in entry_areas(board)]
    if area_of(board, seat) is None:
        return []
    if board["turn"] != seat:
        return [{"type": "sprout_pass"}]
    if board["phase"] == "steal":
        thieving = [{"type": "sprout_steal", "victim": other} for other in victims(board, seat)]
        if thieving:
            return thieving
    places = [{"type": "sprout_place", "area": area, "space": space} for area, space in placements(board, seat)]
    return places or [{"type": "sprout_pass"}]


def play(board: dict[str, Any], seat: int, action: dict[str, Any], rng: Rng) -> Outcome:
    """Carry out one legal action of ``seat``."""
    outcome = Outcome()
    kind = action["type"]
    if kind == "sprout_enter":
        _enter(board, seat, action["area"], outcome.events)
    elif kind == "sprout_steal":
        _steal(board, seat, action["victim"], rng, outcome.events)
        outcome.turn_over = False
        return outcome
    elif kind == "sprout_place":
        _place(board, seat, action["area"], action["space"], outcome.events)
        _end_turn(board)
    else:
        outcome.events.append({"type": "sprout_passed", "seat": seat})
        _end_turn(board)
    _settle(board, outcome)
    return outcome


def _end_turn(board: dict[str, Any]) -> None:
    board["turn"] = None
    board["phase"] = None


def _enter(board: dict[str, Any], seat: int, index: int, events: list[Event]) -> None:
    """"places his/her playing piece in the center of one of the four areas on
    the board and picks two Devil's Snare tokens from the draw pile. Players
    place their Devil's Snare tokens face down on the table in front of them."
    A seat surrounded on arrival (:func:`surrounded_on_arrival`) goes to the
    front of the Fire token order ("the last player to finish Hagrid's
    Challenge picks the Fire token with the number 1 on it. The next to last
    player ... 2, and so on": seats enter in the order they finished Hagrid's
    Challenge, so each one in front of the last). House rule: with fewer than
    two tokens in the pile, the seat picks what is left."""
    board["entering"].remove(seat)
    surrounded = surrounded_on_arrival(board, index)
    area = board["areas"][index]
    area["player"] = seat
    events.append({"type": "sprout_entered", "seat": seat, "area": index, "surrounded": surrounded})
    if surrounded:
        board["surrounded"].insert(0, seat)
    picked = [board["pile"].pop() for _ in range(min(PICK, len(board["pile"])))]
    board["hands"][seat] = _sorted(board["hands"][seat] + picked)
    events.append({"type": "sprout_picked", "seat": seat, "count": len(picked), "pile_size": len(board["pile"])})
    events.append({"type": "sprout_picked_tokens", "seat": seat, "shapes": _sorted(picked), "audience": [seat]})


def _steal(board: dict[str, Any], seat: int, victim: int, rng: Rng, events: list[Event]) -> None:
    """"players take one token from any other player": the tokens lie face down
    in front of their owner, so the one taken is drawn at random (house rule).
    The taker and the owner know which token it was; the others only that one
    changed hands."""
    hand = board["hands"][victim]
    shape = hand.pop(rng.below(len(hand)))
    board["hands"][seat] = _sorted(board["hands"][seat] + [shape])
    board["phase"] = "place"
    events.append({"type": "sprout_took", "seat": seat, "victim": victim})
    events.append({"type": "sprout_took_token", "seat": seat, "victim": victim, "shape": shape,
                   "audience": [seat, victim]})


def _place(board: dict[str, Any], seat: int, index: int, space: int, events: list[Event]) -> None:
    """"Players may only place one token per turn." A ring completed around a
    piece surrounds its player ("When a player is surrounded, that player picks
    up the Fire token with the number 1 on it ... The second player to be
    surrounded picks the Fire token with the number 2 on it"); around an empty
    area it closes the area (house rule: no Fire token is taken)."""
    shape = RING[space]
    board["hands"][seat].remove(shape)
    area = board["areas"][index]
    area["filled"][space] = True
    events.append({"type": "sprout_placed", "seat": seat, "area": index, "space": space, "shape": shape})
    if not complete(area):
        return
    player = area["player"]
    if player is None:
        events.append({"type": "sprout_area_closed", "area": index})
    elif board["fire"][player] is None:
        board["surrounded"].append(player)
        events.append({"type": "sprout_surrounded", "seat": player, "area": index})


def _settle(board: dict[str, Any], outcome: Outcome) -> None:
    """Hand out the Fire tokens after an action.

    The surrounded seats hold 1, 2, 3... in the order of ``surrounded``; a seat
    whose number changed (a latecomer surrounded on arrival went in front of
    it) hands its token up. "Play stops, and the remaining player picks the
    Fire token with the number 4 on it": once every seat has entered and only
    one is not surrounded, it takes the highest Fire token left (4, with any
    number of players). "When all players have a Fire token, they move on to
    Flitwick's Challenge" (highest Fire token first); individually "The player
    with the largest number on his/her Fire token wins the game." """
    fire = board["fire"]
    for rank, seat in enumerate(board["surrounded"]):
        if fire[seat] != FIRE[rank]:
            fire[seat] = FIRE[rank]
            outcome.facts[seat] = {"fire": fire[seat]}
            outcome.events.append({"type": "sprout_fire", "seat": seat, "fire": fire[seat]})
    everyone = len(board["arrived"]) == board["seats"] and not board["entering"]
    if not everyone:
        return
    remaining = [seat for seat in board["arrived"] if fire[seat] is None]
    if len(remaining) == 1:
        seat = remaining[0]
        fire[seat] = max(set(FIRE) - set(fire))
        outcome.facts[seat] = {"fire": fire[seat]}
        outcome.events.append({"type": "sprout_fire", "seat": seat, "fire": fire[seat]})
        remaining = []
    if remaining:
        return
    board["over"] = True
    _end_turn(board)
    outcome.finished = sorted(range(board["seats"]), key=lambda seat: -fire[seat])
    outcome.closed = True
    if board["mode"] == "individual":
        outcome.winner = outcome.finished[0]
        outcome.cause = "largest_fire_token"
        outcome.reason = "Every player holds a Fire token: the largest wins."
    outcome.events.append({"type": "sprout_over", "fire": list(fire)})


# -- reading -----------------------------------------------------------------------------


def view(board: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """Everything on the board is public (the Fire tokens lie face up); the draw
    pile is face down (its size is shown), and the tokens in front of a player
    lie face down: that player sees them, the others their number."""
    taken = {fire for fire in board["fire"] if fire is not None}
    return {
        "mode": board["mode"],
        "ring": list(RING),
        "pile_size": len(board["pile"]),
        "fire_left": [fire for fire in FIRE if fire not in taken],
        "areas": [{"area": index, "player": area["player"], "filled": list(area["filled"]),
                   "complete": complete(area)} for index, area in enumerate(board["areas"])],
        "players": [{"seat": other, "arrived": other in board["arrived"], "area": area_of(board, other),
                     "hand_size": len(board["hands"][other]),
                     "hand": list(board["hands"][other]) if other == seat else [],
                     "fire": board["fire"][other], "surrounded": other in board["surrounded"]}
                    for other in range(board["seats"])],
        "arrived": list(board["arrived"]),
        "entering": list(board["entering"]),
        "surrounded": list(board["surrounded"]),
        "turn": board["turn"],
        "phase": board["phase"],
        "over": board["over"],
        "late_arrivals": board.get("late_arrivals", BEFORE_THE_OPTION),
    }


def determinise(board_view: dict[str, Any], seat: int | None, rng: Rng) -> dict[str, Any]:
    """A board matching ``board_view``: the tokens ``seat`` cannot see (the
    pile and the other players' hands) dealt at random from those not on the
    board and not in its own hand, keeping every count."""
    players = board_view["players"]
    seats = len(players)
    areas = [{"player": area["player"], "filled": list(area["filled"])} for area in board_view["areas"]]
    unseen = Counter(TOKENS)
    for area in areas:
        for space, filled in enumerate(area["filled"]):
            if filled:
                unseen[RING[space]] -= 1
    own = list(players[seat]["hand"]) if seat is not None else []
    unseen.subtract(own)
    pool = list(unseen.elements())
    rng.shuffle(pool)
    hands = []
    for other in range(seats):
        if other == seat:
            hands.append(_sorted(own))
        else:
            size = players[other]["hand_size"]
            hands.append(_sorted(pool[:size]))
            pool = pool[size:]
    assert len(pool) == board_view["pile_size"], "the view's counts add up to the 40 tokens"
    fire = [player["fire"] for player in players]
    return {
        "mode": board_view["mode"],
        "seats": seats,
        "pile": pool,
        "hands": hands,
        "areas": areas,
        "arrived": list(board_view["arrived"]),
        "entering": list(board_view["entering"]),
        "surrounded": list(board_view["surrounded"]),
        "fire": fire,
        "turn": board_view["turn"],
        "phase": board_view["phase"],
        "over": board_view["over"],
        "late_arrivals": board_view["late_arrivals"],
    }
