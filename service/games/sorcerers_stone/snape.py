"""GAME 6 - Snape's Challenge: Secret Potions.

Read beside the rule book (002_5ac5154540885c00.txt, "GAME 6 - SNAPE'S
CHALLENGE: SECRET POTIONS" and "SNAPE'S CHALLENGE All rules are the same,
except that: 1. Each player starts with only two cards. 2. The game ends when
one player collects the lowest-numbered S and lowest-numbered R Potions
Cards.") and docs/rules/sorcerers-stone.md (every house rule, with its
source). The board interface is described in :mod:`.board`.

"OBJECT: To collect the smallest (lowest-numbered "S" card) and roundest
(lowest-numbered "R" card) potions in the game."

The cards
---------
snape.json: 26 Potions Cards ``1S``-``13S`` and ``1R``-``13R``, and 14
Incantations Cards of five kinds (house rule: 3 each of ``another_turn``,
``steal``, ``look`` and ``lose_turn``, 2 ``nettle_wine``). Cards of one kind
are alike, so a card's id is its kind.

Where a card can be: on one of the seven spaces of the board (face down until
flipped; a flipped card stays face up), in the draw pile (``deck``, its top
the last card), on the face-up discard pile (``discard``, top last), out of
play (face up: used Incantations, the cards of claimants), in a hand, or mixed
face down during a give-away (``giveaway["mixed"]``).

Hands and playing pieces
------------------------
A hand is the row of cards face down in front of its player ("Each player
places their two cards face down on the table in front of them"); a card's
place in the row is its ``position``. ``pieces[seat]`` is the position the
player's playing piece stands on. A card taken in joins the end of the row;
when a card leaves the row, the last card of the row takes its place (so a
card drawn and kept lies where the discarded card lay, under the piece if the
piece was there).

A turn
------
``begin_turn`` opens the turn (``turn = {"seat", "step": "start",
"moved"}``). Steps and their actions:

``start``
    ``snape_draw`` (the top card of the draw pile), ``snape_flip`` (a
    face-down card on the board), ``snape_claim`` (holding one S and one R
    Potions Card), and once a turn ``snape_piece`` (move the playing piece to
    the other card; the turn goes on). With no card to draw and none to flip:
    ``snape_claim`` if the player can claim, else ``snape_drop_out``.
``discard``
    The hand holds three cards: ``snape_discard {name}`` one. A discarded Incantations
    Card is played: its instruction is followed.
``steal`` / ``look``
    The target of a played STEAL (``snape_steal``) or LOOK (``snape_look_board``,
    ``snape_look_hand``).
``again``
    TAKE ANOTHER TURN: ``snape_draw`` or ``snape_flip``, ``snape_pass`` when
    neither is possible.

Decisions outside the regular turn (``turn_owner``): the set-up (discard down
to two cards, then place the playing piece: ``setup`` lists the seats still to
do so) and a wrong claim's give-away (``snape_choose``, then ``snape_discard``
down to two cards: ``giveaway``).

State
-----
``mode``, ``seats``, ``arrived`` (seats in arrival order), ``ranks``
(``quirrell_rank`` per seat), ``status`` (per seat: None before arriving,
``playing``, ``finished`` (a correct claim) or ``out`` (a wrong claim, or
dropped out)), ``spaces`` and ``up`` (the seven board cards and whether each
is face up), ``deck``, ``discard``, ``out``, ``hands``, ``pieces``,
``reshuffles`` (times the discard pile may still become the draw pile),
``setup`` (None before the deal, then the seats still to settle), ``turn``,
``giveaway``, ``claims`` (every claim: seat, cards shown, correct, the
numbered rules applied), ``finished`` (correct claimants, in order) and
``winner`` (individually).
"""

from __future__ import annotations

from typing import Any

from service.engine import Rng, load_data

from .board import Event, Outcome

NAME = "snape"
SCHEMA = load_data(__package__, "snape.schema.json")
DATA = load_data(__package__, "snape.json")

POTIONS: list[str] = list(DATA["potions"])
INCANTATIONS: dict[str, int] = {kind["id"]: kind["count"] for kind in DATA["incantations"]}
#: Every card of Snape's Challenge, once per physical card.
CARDS: list[str] = POTIONS + [kind for kind, count in INCANTATIONS.items() for _ in range(count)]
SPACES: int = DATA["board_cards"]
HAND: int = DATA["hand"]
EXTRA: list[int] = list(DATA["extra_cards"])

ANOTHER_TURN, STEAL, LOOK, LOSE_TURN, NETTLE_WINE = "another_turn", "steal", "look", "lose_turn", "nettle_wine"
PLAYING, FINISHED, OUT = "playing", "finished", "out"


# -- cards ------------------------------------------------------------------------------------


def is_potion(card: str) -> bool:
    return card[-1] in "SR" and card[:-1].isdigit()


def kind_of(card: str) -> str | None:
    """"S" (smallest) or "R" (roundest) for a Potions Card, None for an Incantation."""
    return card[-1] if is_potion(card) else None


def number_of(card: str) -> int:
    return int(card[:-1])


def _pair(hand: list[str]) -> tuple[str, str] | None:
    """The (S, R) Potions Cards of a hand holding exactly one of each, else None."""
    if len(hand) != HAND:
        return None
    kinds = {kind_of(card): card for card in hand}
    if set(kinds) != {"S", "R"}:
        return None
    return kinds["S"], kinds["R"]


# -- set-up -----------------------------------------------------------------------------------


def new_board(rng: Rng, seats: int, mode: str, options: dict[str, Any]) -> dict[str, Any]:
    """SET UP "2. Shuffle the Potions Cards and place seven Potions cards on the
    game board, face down. 3. Combine the remaining Potions Cards and the
    Incantations Cards, shuffle, and deal two cards to each player. Place the
    remaining cards in a pile on the table, face down." The deal waits for
    everyone ("1. Play does not start until all players have reached Snape's
    Challenge."): see :func:`arrive`."""
    potions = list(POTIONS)
    rng.shuffle(potions)
    deck = potions[SPACES:] + [card for card in CARDS if not is_potion(card)]
    rng.shuffle(deck)
    return {
        "mode": mode,
        "seats": seats,
        "arrived": [],
        "ranks": [None] * seats,
        "status": [None] * seats,
        "spaces": potions[:SPACES],
        "up": [False] * SPACES,
        "deck": deck,
        "discard": [],
        "out": [],
        "hands": [[] for _ in range(seats)],
        "pieces": [None] * seats,
        "reshuffles": DATA["reshuffles"],
        "setup": None,
        "turn": None,
        "giveaway": None,
        "claims": [],
        "finished": [],
        "winner": None,
    }


def arrive(board: dict[str, Any], seat: int, rng: Rng, player: dict[str, Any]) -> list[Event]:
    """A seat reaches Snape's Challenge. "1. Play does not start until all
    players have reached Snape's Challenge.": the cards are dealt when the last
    player arrives (:func:`_deal`)."""
    board["arrived"].append(seat)
    board["status"][seat] = PLAYING
    board["ranks"][seat] = (player.get("facts") or {}).get("quirrell_rank")
    events: list[Event] = [{"type": "snape_arrived", "seat": seat}]
    if len(board["arrived"]) == board["seats"]:
        events.extend(_deal(board))
    return events


def _setup_order(board: dict[str, Any]) -> list[int]:
    """The order of the set-up: by finishing place in Quirrell's Challenge
    (individually there is none: seat order, "the youngest player" first)."""
    return sorted(range(board["seats"]), key=lambda s: (board["ranks"][s] or board["seats"] + 1, s))


def _deal(board: dict[str, Any]) -> list[Event]:
    """SET UP "3. ... deal two cards to each player. 4. The first player to
    finish Quirrell's Challenge takes the top three cards from the deck, the
    second player takes the next two cards, and the third player takes the next
    card. The fourth player does not take any additional cards." Individually:
    "1. Each player starts with only two cards." Then every player settles in
    set-up order (:func:`turn_owner`): "Players with more than two cards
    discard ... so that they have only two cards left in their hands", and
    "places his/her playing piece on top of one of his/her cards"."""
    events: list[Event] = []
    order = _setup_order(board)
    for seat in range(board["seats"]):
        for _ in range(HAND):
            board["hands"][seat].append(board["deck"].pop())
    if board["mode"] == "chain":
        for seat in order:
            rank = board["ranks"][seat]
            extra = EXTRA[rank - 1] if rank is not None and 0 < rank <= len(EXTRA) else 0
            for _ in range(extra):
                board["hands"][seat].append(board["deck"].pop())
    for seat in range(board["seats"]):
        events.append({"type": "snape_dealt", "seat": seat, "count": len(board["hands"][seat])})
        events.append({"type": "snape_dealt", "seat": seat, "count": len(board["hands"][seat]),
                       "cards": list(board["hands"][seat]), "audience": [seat]})
    board["setup"] = order
    return events


# -- whose decision -----------------------------------------------------------------------------


def _decider(board: dict[str, Any]) -> tuple[int, str] | None:
    """The seat owing a decision outside the regular turn order, and which."""
    if board["setup"]:
        seat = board["setup"][0]
        return seat, ("setup_discard" if len(board["hands"][seat]) > HAND else "setup_piece")
    giveaway = board["giveaway"]
    if giveaway:
        if giveaway["mixed"]:
            return giveaway["chooser"], "choose"
        return giveaway["discarding"][0], "collect"
    return None


def turn_owner(board: dict[str, Any]) -> int | None:
    """The set-up ("Players with more than two cards discard"; the playing piece)
    and a wrong claim's give-away (INCORRECT SMALLEST AND ROUNDEST CARDS 2-4)."""
    decider = _decider(board)
    return None if decider is None else decider[0]


def _playing(board: dict[str, Any]) -> list[int]:
    return [s for s in range(board["seats"]) if board["status"][s] == PLAYING]


def can_play(board: dict[str, Any], seat: int) -> bool:
    """"1. Play does not start until all players have reached Snape's
    Challenge." A player who claimed (rightly or wrongly) or dropped out no
    longer plays here."""
    return board["setup"] is not None and board["status"][seat] == PLAYING


def begin_turn(board: dict[str, Any], seat: int, rng: Rng) -> list[Event]:
    """A regular turn opens; nothing happens before the player's choice."""
    board["turn"] = {"seat": seat, "step": "start", "moved": False}
    return []


def _turn(board: dict[str, Any], seat: int) -> dict[str, Any]:
    turn = board["turn"]
    if turn is None or turn["seat"] != seat:
        turn = {"seat": seat, "step": "start", "moved": False}
    return turn


# -- what may be done -----------------------------------------------------------------------------


def can_take(board: dict[str, Any]) -> bool:
    """A card can be picked from the draw pile (house rule: an empty draw pile is
    made again from the shuffled discard pile, at most ``reshuffles`` times)."""
    return bool(board["deck"]) or (board["reshuffles"] > 0 and bool(board["discard"]))


def _face_down(board: dict[str, Any]) -> list[int]:
    return [space for space in range(SPACES) if not board["up"][space]]


def _distinct(cards: list[str]) -> list[str]:
    seen: list[str] = []
    for card in cards:
        if card not in seen:
            seen.append(card)
    return seen


def _discards(board: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    return [{"type": "snape_discard", "name": card} for card in _distinct(board["hands"][seat])]


def _steal_targets(board: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """"Players take any card from any player": any card of another player still
    playing here, the one under a playing piece included (only LOOK excepts it)."""
    return [{"type": "snape_steal", "seat": other, "position": position}
            for other in _playing(board) if other != seat
            for position in range(len(board["hands"][other]))]


def _look_targets(board: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """"Players look at any face-down card on the game board or any card in another
    player's hand except for the cards with playing pieces on them." """
    targets = [{"type": "snape_look_board", "space": space} for space in _face_down(board)]
    targets += [{"type": "snape_look_hand", "seat": other, "position": position}
                for other in _playing(board) if other != seat
                for position in range(len(board["hands"][other])) if position != board["pieces"][other]]
    return targets


def _take_or_flip(board: dict[str, Any]) -> list[dict[str, Any]]:
    actions = [{"type": "snape_draw"}] if can_take(board) else []
    return actions + [{"type": "snape_flip", "space": space} for space in _face_down(board)]


def legal_actions(board: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    decider = _decider(board)
    if decider is not None:
        owner, step = decider
        if owner != seat:
            return []
        if step in ("setup_discard", "collect"):
            return _discards(board, seat)
        if step == "setup_piece":
            return [{"type": "snape_piece", "position": p} for p in range(len(board["hands"][seat]))]
        return [{"type": "snape_choose", "position": p} for p in range(len(board["giveaway"]["mixed"]))]
    if not can_play(board, seat):
        return []
    turn = _turn(board, seat)
    step = turn["step"]
    hand = board["hands"][seat]
    if step == "discard":
        return _discards(board, seat)
    if step == "steal":
        return _steal_targets(board, seat)
    if step == "look":
        return _look_targets(board, seat)
    if step == "again":
        return _take_or_flip(board) or [{"type": "snape_pass"}]
    # step == "start"
    actions = _take_or_flip(board)
    if not actions:
        # House rule: nothing left to pick or flip -- claim, or drop out.
        actions = [{"type": "snape_claim"} if _pair(hand) else {"type": "snape_drop_out"}]
    elif _pair(hand):
        actions.append({"type": "snape_claim"})
    if not turn["moved"] and len(hand) > 1:
        actions += [{"type": "snape_piece", "position": p} for p in range(len(hand)) if p != board["pieces"][seat]]
    return actions


# -- moving cards -----------------------------------------------------------------------------------


def _remove(board: dict[str, Any], seat: int, position: int) -> str:
    """Take the card at ``position`` out of ``seat``'s row: the last card of the
    row takes its place, and the playing piece stays where it stands (on the
    card that took the place), or follows the last card, or -- its card gone
    and none to take its place -- moves onto the last card left."""
    hand = board["hands"][seat]
    last = len(hand) - 1
    card = hand[position]
    hand[position] = hand[last]
    hand.pop()
    piece = board["pieces"][seat]
    if piece is not None:
        if piece == last and position != last:
            board["pieces"][seat] = position
        elif piece >= len(hand):
            board["pieces"][seat] = len(hand) - 1 if hand else None
    return card


def _add(board: dict[str, Any], seat: int, card: str) -> None:
    board["hands"][seat].append(card)
    if board["pieces"][seat] is None:
        board["pieces"][seat] = 0


def _position_of(board: dict[str, Any], seat: int, card: str) -> int:
    """Which of ``seat``'s cards a discard of ``card`` means: of two alike, the one
    not under the playing piece, the newest first."""
    hand = board["hands"][seat]
    places = [p for p, c in enumerate(hand) if c == card]
    free = [p for p in places if p != board["pieces"][seat]]
    return (free or places)[-1]


def _draw(board: dict[str, Any], seat: int, rng: Rng, events: list[Event]) -> str:
    """"pick a card from the deck". House rule: an empty draw pile is made again
    from the shuffled discard pile (at most ``reshuffles`` times): the book sends
    used "Steal a Card" cards to the discard pile and the other Incantations
    out of play, a difference that matters only if the discard pile is played
    again."""
    if not board["deck"]:
        board["deck"] = board["discard"]
        board["discard"] = []
        rng.shuffle(board["deck"])
        board["reshuffles"] -= 1
        events.append({"type": "snape_reshuffled", "cards": len(board["deck"]), "left": board["reshuffles"]})
    card = board["deck"].pop()
    _add(board, seat, card)
    events.append({"type": "snape_drew", "seat": seat})
    events.append({"type": "snape_drew", "seat": seat, "card": card, "audience": [seat]})
    return card


# -- playing ------------------------------------------------------------------------------------------


def play(board: dict[str, Any], seat: int, action: dict[str, Any], rng: Rng) -> Outcome:
    kind = action["type"]
    decider = _decider(board)
    if decider is not None:
        return _decide(board, seat, decider[1], action, rng)
    turn = _turn(board, seat)
    board["turn"] = turn
    events: list[Event] = []
    if kind == "snape_piece":
        # TAKING A TURN "6. On each turn players may, at their option, move their playing piece to another card."
        board["pieces"][seat] = action["position"]
        turn["moved"] = True
        events.append({"type": "snape_piece_moved", "seat": seat, "position": action["position"]})
        return Outcome(events=events, turn_over=False)
    if kind == "snape_draw":
        # "2. On each turn, players may either pick a card from the deck or flip over a card on the game board.
        # When a player takes a card, that player must discard one card from his/her hand, face up."
        _draw(board, seat, rng, events)
        if len(board["hands"][seat]) > HAND:
            turn["step"] = "discard"
            return Outcome(events=events, turn_over=False)
        # House rule: a player holding fewer than two cards (robbed by a STEAL) keeps the card.
        return _end_turn(board, events)
    if kind == "snape_flip":
        space = action["space"]
        board["up"][space] = True
        events.append({"type": "snape_flipped", "seat": seat, "space": space, "card": board["spaces"][space]})
        return _end_turn(board, events)
    if kind == "snape_discard":
        return _discard(board, seat, action["name"], events)
    if kind == "snape_steal":
        return _steal(board, seat, action["seat"], action["position"], events)
    if kind in ("snape_look_board", "snape_look_hand"):
        return _look(board, seat, action, events)
    if kind == "snape_pass":
        events.append({"type": "snape_passed", "seat": seat})
        return _end_turn(board, events)
    if kind == "snape_claim":
        return _claim(board, seat, rng, events)
    if kind == "snape_drop_out":
        return _drop_out(board, seat, events)
    raise ValueError(f"not a Snape's Challenge action: {kind}")


def _end_turn(board: dict[str, Any], events: list[Event], **outcome: Any) -> Outcome:
    board["turn"] = None
    return Outcome(events=events, **outcome)


def _discard(board: dict[str, Any], seat: int, card: str, events: list[Event]) -> Outcome:
    """"5. Players always discard face up, on top of the discard pile."
    INCANTATIONS CARDS "1. ... players may add the card to their hand (and
    discard) or play the card immediately." House rule: a discarded
    Incantations Card is played, whether just picked ("play the card
    immediately") or kept in the hand earlier -- the book forbids it only for
    the discards after a give-away ("they may not follow the instructions on
    any Incantations Cards that they discard")."""
    _remove(board, seat, _position_of(board, seat, card))
    turn = board["turn"]
    if is_potion(card):
        board["discard"].append(card)
        events.append({"type": "snape_discarded", "seat": seat, "card": card})
        return _end_turn(board, events)
    # "3. Except for "Steal a Card" cards, players place used Incantations Cards out of play.
    # Players place used "Steal Card" cards on the discard pile."
    (board["discard"] if card == STEAL else board["out"]).append(card)
    events.append({"type": "snape_incantation", "seat": seat, "card": card})
    if card == ANOTHER_TURN:
        # "TAKE ANOTHER TURN--Players either flip over a card on the board or pick another card."
        turn["step"] = "again"
        return Outcome(events=events, turn_over=False)
    if card == STEAL and _steal_targets(board, seat):
        turn["step"] = "steal"
        return Outcome(events=events, turn_over=False)
    if card == LOOK and _look_targets(board, seat):
        turn["step"] = "look"
        return Outcome(events=events, turn_over=False)
    if card == LOSE_TURN:
        # "LOSE YOUR TURN--The player loses a turn.": the player's next regular turn (the match's waiting turns).
        return _end_turn(board, events, wait={seat: 1})
    # NETTLE WINE--No effect (and a STEAL or LOOK with nothing to take or look at).
    return _end_turn(board, events)


def _steal(board: dict[str, Any], seat: int, victim: int, position: int, events: list[Event]) -> Outcome:
    """"STEAL A CARD FROM ANOTHER PLAYER, THEN DISCARD--Players take any card from
    any player, then discard." The card is picked face down; the thief and the
    robbed player know which it was."""
    card = _remove(board, victim, position)
    _add(board, seat, card)
    events.append({"type": "snape_stole", "seat": seat, "from": victim, "position": position})
    events.append({"type": "snape_stole", "seat": seat, "from": victim, "position": position, "card": card,
                   "audience": [seat, victim]})
    if len(board["hands"][seat]) > HAND:
        board["turn"]["step"] = "discard"
        return Outcome(events=events, turn_over=False)
    return _end_turn(board, events)


def _look(board: dict[str, Any], seat: int, action: dict[str, Any], events: list[Event]) -> Outcome:
    """"LOOK AT ANY FACE-DOWN CARD, THEN PUT IT BACK FACE DOWN": the card is shown
    to the looking player alone (an event; views do not remember it)."""
    if action["type"] == "snape_look_board":
        target = {"space": action["space"]}
        card = board["spaces"][action["space"]]
    else:
        target = {"owner": action["seat"], "position": action["position"]}
        card = board["hands"][action["seat"]][action["position"]]
    events.append({"type": "snape_looked", "seat": seat, **target})
    events.append({"type": "snape_looked", "seat": seat, **target, "card": card, "audience": [seat]})
    return _end_turn(board, events)


# -- claims ---------------------------------------------------------------------------------------------


def _in_game(board: dict[str, Any]) -> list[str]:
    """The cards that still count ("The cards that are placed on the game board do
    not count"; the cards of earlier claimants are "placed out of play"): the
    hands of the players still playing, the draw pile and the discard pile."""
    cards = list(board["deck"]) + list(board["discard"])
    for seat in _playing(board):
        cards += board["hands"][seat]
    return cards


def lowest(board: dict[str, Any], kind: str) -> str | None:
    """The lowest-numbered Potions Card of ``kind`` ("S" or "R") that counts."""
    potions = [card for card in _in_game(board) if kind_of(card) == kind]
    return min(potions, key=number_of) if potions else None


def _lower_holder(board: dict[str, Any], claimant: int, card: str) -> int | None:
    """The other player holding the lowest card of ``card``'s kind below it, if any."""
    kind, best, holder = kind_of(card), number_of(card), None
    for seat in _playing(board):
        if seat == claimant:
            continue
        for held in board["hands"][seat]:
            if kind_of(held) == kind and number_of(held) < best:
                best, holder = number_of(held), seat
    return holder


def _lower_holders(board: dict[str, Any], claimant: int, card: str) -> set[int]:
    """The other players holding a card of ``card``'s kind below it."""
    kind = kind_of(card)
    return {seat for seat in _playing(board) if seat != claimant
            and any(kind_of(c) == kind and number_of(c) < number_of(card) for c in board["hands"][seat])}


def _claim(board: dict[str, Any], seat: int, rng: Rng, events: list[Event]) -> Outcome:
    """FINDING THE SMALLEST AND ROUNDEST CARDS "2. When a player (Player 1) thinks
    that he/she has the lowest-numbered S and the lowest-numbered R Potions
    Cards that are not on the board, that player shows the other players
    his/her cards. If there are still cards face down on the board, then Player
    1 checks the cards on the board without showing any other players."

    The claim is right when no S and no R Potions Card lower than the claimant's
    still counts (:func:`_in_game`): every lower one lies on the board or is out
    of play. Otherwise INCORRECT SMALLEST AND ROUNDEST CARDS: rules 2-4 when
    another player holds a lower card; rule 1 when none does (house rule: the
    book's "If a lower S or lower R card is on the board" cannot mean a card on
    the board, which "do not count"; it is the case the board check settles --
    the lower card is neither on the board nor in another hand, so it is in the
    draw or discard pile)."""
    s_card, r_card = _pair(board["hands"][seat])
    shown = [s_card, r_card]
    events.append({"type": "snape_claimed", "seat": seat, "cards": shown})
    hidden = _face_down(board)
    if hidden:
        events.append({"type": "snape_board_checked", "seat": seat})
        events.append({"type": "snape_board_checked", "seat": seat, "audience": [seat],
                       "spaces": [{"space": space, "card": board["spaces"][space]} for space in hidden]})
    right = lowest(board, "S") == s_card and lowest(board, "R") == r_card
    board["hands"][seat] = []
    board["pieces"][seat] = None
    if right:
        return _right_claim(board, seat, shown, events)
    return _wrong_claim(board, seat, shown, rng, events)


def _right_claim(board: dict[str, Any], seat: int, shown: list[str], events: list[Event]) -> Outcome:
    """"3. If Player 1 has the best (lowest-numbered) Potions Cards, then he/she
    begins to search for the Sorcerer's Stone. Player 1's cards are placed out
    of play, and play continues as the remaining players try to collect the
    new lowest-numbered S and R cards." Individually: "2. The game ends when one
    player collects the lowest-numbered S and lowest-numbered R Potions Cards." """
    board["out"] += shown
    board["status"][seat] = FINISHED
    board["finished"].append(seat)
    board["claims"].append({"seat": seat, "cards": shown, "correct": True, "rules": []})
    events.append({"type": "snape_claim_right", "seat": seat, "cards": shown})
    board["turn"] = None
    if board["mode"] == "individual":
        board["winner"] = seat
        return Outcome(events=events, winner=seat, closed=True, cause="correct_claim",
                       reason="A correct claim: the lowest S and R Potions Cards that count.")
    return Outcome(events=events, finished=[seat], facts={seat: {"wrong_claim": False}},
                   closed=not _playing(board))


def _wrong_claim(board: dict[str, Any], seat: int, shown: list[str], rng: Rng, events: list[Event]) -> Outcome:
    """INCORRECT SMALLEST AND ROUNDEST CARDS
    "1. If a lower S or lower R card is on the board, Player 1 announces this to
    the other players and places his/her cards face up next to the board and
    play continues.
    2. If another player has a lower-numbered S or R card, then Player 1 must
    give his/her cards to that player, who adds the cards to his/her hand, then
    discards the same number of cards that he/she added.
    3. If one player has a lower-numbered S card and one player has a
    lower-numbered R card, then Player 1 mixes up his/her cards and places them
    face down on the table. The player with the lower S card chooses one of
    these cards and adds it to his/her hand; the player with the lower R card
    gets the remaining card. Both players must discard.
    4. If more than one player has a lower S and/or lower R card, the player(s)
    with the lowest cards collects the cards from Player 1.
    6. If Player 1 did not have the lowest-numbered S and lowest-number R cards,
    then he/she does not continue to play Snape's Challenge, and must wait to
    move on to the Mirror of Erised." """
    s_card, r_card = shown
    s_holder = _lower_holder(board, seat, s_card)
    r_holder = _lower_holder(board, seat, r_card)
    holders = _lower_holders(board, seat, s_card) | _lower_holders(board, seat, r_card)
    receivers = {s for s in (s_holder, r_holder) if s is not None}
    # Rule 4 is cited when it decided something: more players hold a lower card than collect.
    rule_4 = [4] if len(holders) > len(receivers) else []
    board["status"][seat] = OUT
    board["turn"] = None
    if not receivers:
        rules = [1]
        board["out"] += shown
        events.append({"type": "snape_claim_wrong", "seat": seat, "cards": shown, "rules": rules})
    elif len(receivers) == 2:
        rules = rule_4 + [3]
        mixed = list(shown)
        rng.shuffle(mixed)
        board["giveaway"] = {"claimant": seat, "mixed": mixed, "chooser": s_holder, "other": r_holder,
                             "discarding": []}
        events.append({"type": "snape_claim_wrong", "seat": seat, "cards": shown, "rules": rules})
        events.append({"type": "snape_mixed", "seat": seat, "chooser": s_holder, "other": r_holder})
    else:
        (receiver,) = receivers
        rules = rule_4 + [2]
        for card in shown:
            _add(board, receiver, card)
        if len(board["hands"][receiver]) > HAND:
            board["giveaway"] = {"claimant": seat, "mixed": [], "chooser": None, "other": None,
                                 "discarding": [receiver]}
        events.append({"type": "snape_claim_wrong", "seat": seat, "cards": shown, "rules": rules})
        events.append({"type": "snape_given", "seat": seat, "to": receiver, "cards": shown})
    board["claims"].append({"seat": seat, "cards": shown, "correct": False, "rules": rules})
    return _out(board, seat, events)


def _out(board: dict[str, Any], seat: int, events: list[Event]) -> Outcome:
    """A player who leaves without the potions. In order: "must wait to move on to
    the Mirror of Erised" (fact ``wrong_claim``; the match holds the seat).
    Individually the player "does not continue to play" and the others play on:
    "The game ends when one player collects the lowest-numbered S and
    lowest-numbered R Potions Cards", so only a correct claim wins -- a lone
    player left keeps playing for it, and being the last one left wins nothing.
    When nobody is left (everyone claimed wrongly or, the cards run out,
    dropped out), the game ends with no winner."""
    playing = _playing(board)
    if board["mode"] == "individual":
        if playing:
            return Outcome(events=events)
        return Outcome(events=events, closed=True, cause="no_correct_claim",
                       reason="Nobody claimed the lowest S and R correctly (wrong claims, or the cards ran out): "
                              "no winner.")
    return Outcome(events=events, finished=[seat], facts={seat: {"wrong_claim": True}}, closed=not playing)


def _drop_out(board: dict[str, Any], seat: int, events: list[Event]) -> Outcome:
    """House rule: with no card left to pick (the draw pile empty and no more
    reshuffles) and none face down on the board, a player who cannot claim has
    no way left to the potions: the player drops out like a wrong claimant, the
    cards face up out of play. (One who can claim must: see
    :func:`legal_actions`.) So every game ends."""
    cards = list(board["hands"][seat])
    board["out"] += cards
    board["hands"][seat] = []
    board["pieces"][seat] = None
    board["status"][seat] = OUT
    board["turn"] = None
    events.append({"type": "snape_dropped_out", "seat": seat, "cards": cards})
    return _out(board, seat, events)


# -- decisions outside the turn ---------------------------------------------------------------------------


def _decide(board: dict[str, Any], seat: int, step: str, action: dict[str, Any], rng: Rng) -> Outcome:
    events: list[Event] = []
    if step == "setup_discard":
        # "Players with more than two cards discard to start a discard pile, placing cards face up."
        # House rule: no Incantation is played at the set-up.
        card = action["name"]
        _remove(board, seat, _position_of(board, seat, card))
        board["discard"].append(card)
        events.append({"type": "snape_discarded", "seat": seat, "card": card})
        return Outcome(events=events)
    if step == "setup_piece":
        # "The player then places his/her playing piece on top of one of his/her cards."
        board["pieces"][seat] = action["position"]
        board["setup"].pop(0)
        events.append({"type": "snape_piece_moved", "seat": seat, "position": action["position"]})
        if not board["setup"]:
            events.append({"type": "snape_play_begins"})
        return Outcome(events=events)
    giveaway = board["giveaway"]
    if step == "choose":
        # Rule 3: "The player with the lower S card chooses one of these cards and adds it to his/her hand;
        # the player with the lower R card gets the remaining card. Both players must discard."
        mixed = giveaway["mixed"]
        chosen = mixed.pop(action["position"])
        other_card = mixed.pop()
        chooser, other = giveaway["chooser"], giveaway["other"]
        _add(board, chooser, chosen)
        _add(board, other, other_card)
        events.append({"type": "snape_chose", "seat": seat, "position": action["position"], "other": other})
        events.append({"type": "snape_chose", "seat": seat, "position": action["position"], "other": other,
                       "card": chosen, "other_card": other_card, "audience": sorted({chooser, other})})
        giveaway["discarding"] = [s for s in (chooser, other) if len(board["hands"][s]) > HAND]
    else:
        # Rules 2-3: "discards the same number of cards that he/she added" (house rule: down to two cards,
        # the same for a player holding two). Rule 5: "When players discard after collecting Player 1's
        # cards, they may not follow the instructions on any Incantations Cards that they discard."
        card = action["name"]
        _remove(board, seat, _position_of(board, seat, card))
        board["discard"].append(card)
        events.append({"type": "snape_discarded", "seat": seat, "card": card})
        if len(board["hands"][seat]) <= HAND:
            giveaway["discarding"].pop(0)
    if not giveaway["mixed"] and not giveaway["discarding"]:
        board["giveaway"] = None
    return Outcome(events=events)


# -- what a seat sees -------------------------------------------------------------------------------------


def _phase(board: dict[str, Any]) -> str:
    if board["setup"] is None:
        return "waiting"
    if board["winner"] is not None or not _playing(board):
        return "over"
    if board["setup"]:
        return "setup"
    return "play"


def view(board: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """Public: the face-up board cards (a flipped card stays face up), how many
    cards the draw pile holds, the face-up discard pile and the cards out of
    play, each player's row of cards (how many, where the playing piece
    stands), claims and the give-away under way. Private: a player's own cards.
    Never shown: face-down board cards, the draw pile's order, other players'
    cards, and the order of a give-away's mixed cards. Cards once looked at
    are not remembered by the view (the events told the seat)."""
    giveaway = board["giveaway"]
    turn = board["turn"]
    return {
        "mode": board["mode"],
        "phase": _phase(board),
        "arrived": list(board["arrived"]),
        "spaces": [{"space": space, "face_up": board["up"][space],
                    "card": board["spaces"][space] if board["up"][space] else None} for space in range(SPACES)],
        "deck": len(board["deck"]),
        "reshuffles_left": board["reshuffles"],
        "discard": list(board["discard"]),
        "out_of_play": list(board["out"]),
        "players": [
            {
                "seat": s,
                "status": board["status"][s] or "absent",
                "rank": board["ranks"][s],
                "hand_size": len(board["hands"][s]),
                "cards": [card if s == seat else None for card in board["hands"][s]],
                "piece": board["pieces"][s],
            }
            for s in range(board["seats"])
        ],
        "setup": list(board["setup"] or []),
        "turn": None if turn is None else {"seat": turn["seat"], "step": turn["step"], "piece_moved": turn["moved"]},
        "giveaway": None if giveaway is None else {
            "claimant": giveaway["claimant"],
            "chooser": giveaway["chooser"],
            "other": giveaway["other"],
            "mixed": len(giveaway["mixed"]),
            "mixed_cards": sorted(giveaway["mixed"]),
            "discarding": list(giveaway["discarding"]),
        },
        "claims": [{"seat": c["seat"], "cards": list(c["cards"]), "correct": c["correct"], "rules": list(c["rules"])}
                   for c in board["claims"]],
        "finished": list(board["finished"]),
        "winner": board["winner"],
    }


def determinise(board_view: dict[str, Any], seat: int | None, rng: Rng) -> dict[str, Any]:
    """A board consistent with ``seat``'s view: the cards ``seat`` cannot see (other
    players' cards, face-down board cards, the draw pile) dealt at random from
    the cards not in sight, the mixed cards of a give-away in random order."""
    players = board_view["players"]
    seats = len(players)
    unseen = list(CARDS)
    seen = [space["card"] for space in board_view["spaces"] if space["face_up"]]
    seen += board_view["discard"] + board_view["out_of_play"]
    giveaway = board_view["giveaway"]
    if giveaway is not None:
        seen += giveaway["mixed_cards"]
    for player in players:
        seen += [card for card in player["cards"] if card is not None]
    for card in seen:
        unseen.remove(card)
    rng.shuffle(unseen)
    hands = [[card if card is not None else unseen.pop() for card in player["cards"]] for player in players]
    spaces = [space["card"] if space["face_up"] else unseen.pop() for space in board_view["spaces"]]
    deck = [unseen.pop() for _ in range(board_view["deck"])]
    assert not unseen, "every card is somewhere"
    mixed: list[str] = []
    if giveaway is not None:
        mixed = list(giveaway["mixed_cards"])
        rng.shuffle(mixed)
    turn = board_view["turn"]
    return {
        "mode": board_view["mode"],
        "seats": seats,
        "arrived": list(board_view["arrived"]),
        "ranks": [p["rank"] for p in players],
        "status": [None if p["status"] == "absent" else p["status"] for p in players],
        "spaces": spaces,
        "up": [space["face_up"] for space in board_view["spaces"]],
        "deck": deck,
        "discard": list(board_view["discard"]),
        "out": list(board_view["out_of_play"]),
        "hands": hands,
        "pieces": [p["piece"] for p in players],
        "reshuffles": board_view["reshuffles_left"],
        "setup": None if board_view["phase"] == "waiting" else list(board_view["setup"]),
        "turn": None if turn is None else {"seat": turn["seat"], "step": turn["step"], "moved": turn["piece_moved"]},
        "giveaway": None if giveaway is None else {
            "claimant": giveaway["claimant"], "mixed": mixed, "chooser": giveaway["chooser"],
            "other": giveaway["other"], "discarding": list(giveaway["discarding"])},
        "claims": [{"seat": c["seat"], "cards": list(c["cards"]), "correct": c["correct"], "rules": list(c["rules"])}
                   for c in board_view["claims"]],
        "finished": list(board_view["finished"]),
        "winner": board_view["winner"],
    }
