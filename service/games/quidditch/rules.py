"""Quidditch, the card game (Mattel, 2001): the rules engine.

Read it beside the rule book, ``seeds/001_7860e6019ee0192e.txt`` (an OCR'd
scan; the section names below are its headings). Where the book is silent or
garbled the decision is recorded in ``docs/rules/quidditch.md``; the comments
here say "house rule" and point there.

The match at a glance
---------------------
Seat 0 plays Gryffindor (red), seat 1 Slytherin (green). A match is a series of
rounds ("LET'S PLAY"). Each round has up to three stages, and a *priority
window* may open inside any of them:

``lead``
    The pitcher (Slytherin in round 1, then alternating) turns a pitch card
    when the rules call for it, then lays face-down cards on balls one at a
    time ("2. The Pitcher chooses to play", "3. The Pitcher plays first") and
    says ``done``.
``follow``
    The opponent must lay a face-down card on every ball the pitcher has a
    card on ("4. The opposing player plays"), and on no other ball, then says
    ``done``.
``reveal``
    Ball by ball, in the order the pitcher chooses, both cards on it are
    turned over, then the ball is resolved ("5. Both players compare their
    cards", "TYPES OF PITCH CARDS"). Then both draw back up ("7. Draw").

"You can play Spell and Jinx cards anytime you want" ("SPELL AND JINX CARDS"); DESIGN.md
turns that into priority windows: after each pitch, each face-down play and
each reveal, both seats may play special cards face up or pass; a round that
opens without a pitch (balls left in play) opens with a window too, so that
spells can come "before you or your opponent play Player Cards". Both seats act
at once (the first card sent is the first played, as in "If you cast a Spell
moments before your opponent does, your spell takes effect first"); a window
closes when both have passed with no card played in between, and only then do
its cards take effect, in the order played. A seat with no cards in hand has
nothing to play and is treated as having passed (a hand's size is public).

State
-----
A plain dict; team cards and pitch cards are integers (see :mod:`.cards`)::

    rng            int, the Rng state
    max_rounds     int, the round cap (match option)
    round          int, from 1
    pitcher        seat pitching this round
    stage          "lead" | "follow" | "reveal" | "over"
    may_pitch      whether the pitcher may still choose to pitch this round
    decks, hands, discards   [[card], [card]] per seat; a deck's top is its end
    pitch_deck     [pitch card], top at the end;  pitch_discard  [pitch card]
    scoring        [[pitch card], [pitch card]]
    balls          balls in play, in the order pitched:
                   {"card": pitch card, "sides": [card|None, card|None],
                    "locked": [kind|None, kind|None], "mods": [[kind], [kind]],
                    "revealed": bool, "resolved": bool,
                    "compared": None | [[kind, value]|None, [kind, value]|None]}
                   sides/locked/mods are per seat; "locked" holds the kind of the
                   card that locked the seat out (Wingardium Leviosa or the jinx),
                   "mods" the kinds of the spells and jinxes lowering that seat's
                   card (kinds, not cards: the cards themselves move on, even
                   back into a hand); "compared" what each side counted as when
                   the ball was resolved (see :func:`_effective`); all reset each
                   round
    hits           Bludgers that hit each seat this round
    settled        None, or the balls settled in the latest round that settled any, for the view's
                   ``last_settled``: {"round": int, "balls": [{"card": pitch card, "winner": seat|None,
                   "by": "play"|"foul"|None, "compared": as on a ball, or None for a Foul}]}; kept after
                   the round until a ball is settled in a later round (absent from older states)
    window         None or {"after": "round"|"pitch"|"play"|"reveal", "ball": pitch card|None,
                            "passed": [seat], "pending": [{"seat", "card", "ball", "target"}]}
    result         None or the match result
"""

from __future__ import annotations

from typing import Any

from service.engine import Catalogue, Game, Rng, Variant, load_data

from .cards import (
    ALOHOMORA, BEATER, BLUDGER, FAMILY, FOUL, FOUL_FREE_GOAL, FOUL_REMOVE_KEEPER, FULL_BODY_BIND, JINX,
    JINX_BLOCK, JINX_DISCARD, JINX_REDUCE, JINX_RETRIEVE, KEEPER, KIND, KINDS, LEG_LOCKER, OWNER, PITCH_CARDS,
    PITCH_INDEX, PITCH_KIND, PLAYER, POINTS, QUAFFLE, REFEREE, SEEKER, SNITCH, SPELL, TEAM_CARDS, TEAM_INDEX, TEAMS,
    VALUE, WINGARDIUM, GOAL, _CARD_VIEWS, _PITCH_VIEWS, card_view, catalogue, pitch_view, team_deck,
)
from .determinise import determinise as _determinise

SEATS = (0, 1)

#: "Each player draws the top 7 cards from their Team Deck to make up their hand." (SET UP)
HAND_SIZE = 7
#: "The Slytherin player always pitches for the first round." (ROUND 1, 1.)
FIRST_PITCHER = 1
#: "No more than four balls can be on the pitch at any one time - 1 Quaffle, 2 Bludgers,
#: and 1 Golden Snitch." (8. Pitch Again, NOTE)
MAX_BLUDGERS = 2
#: Leg-Locker: "reduces the value ... by one point"; the jinx: "by two points".
REDUCTION = {LEG_LOCKER: 1, JINX_REDUCE: 2}
#: Full Body-Bind takes 2 cards, the jinx 1 ("SPELL AND JINX CARDS").
RANDOM_DISCARDS = {FULL_BODY_BIND: 2, JINX_DISCARD: 1}

LEAD, FOLLOW, REVEAL, OVER = "lead", "follow", "reveal", "over"

#: Why a match ends, the result's ``cause`` (listed with their meanings in docs/rules/quidditch.md).
CAUSES = ("snitch", "round_limit")


class Quidditch(Game):
    """Quidditch, the card game, for two players: Gryffindor (seat 0) and Slytherin (seat 1)."""

    id = "quidditch"
    title = "Quidditch"
    rules_version = load_data(__package__, "rules_version.json")["version"]
    min_seats = 2
    max_seats = 2
    variants = (
        Variant("standard", "Standard",
                "The 2001 card game: team decks of 40, a pitch deck of 28, hands of 7; "
                "the game ends when the Golden Snitch is caught."),
    )
    summary = ("Avoid brutal Bludgers, score as many Quaffles as you can, then capture the elusive Golden "
               "Snitch. Two players, Gryffindor against Slytherin, play face-down player cards on the balls "
               "turned from the pitch deck, and spells, jinxes and fouls against each other.")
    schema = load_data(__package__, "schema.json")
    catalogues = (Catalogue("cards", schema["card"], ("id", "deck"), catalogue),)

    # -- the contract ---------------------------------------------------------

    def setup(self, options: dict[str, Any], seats: int, seed: int) -> dict:
        """SET UP: shuffle the three decks, deal 7 to each hand; Slytherin pitches round 1."""
        rng = Rng.from_seed(seed)
        decks = []
        for seat in SEATS:
            deck = team_deck(seat)
            rng.shuffle(deck)
            decks.append(deck)
        pitch_deck = list(range(len(PITCH_CARDS)))
        rng.shuffle(pitch_deck)
        state = {
            "rng": 0, "max_rounds": options["max_rounds"], "round": 1, "pitcher": FIRST_PITCHER,
            "stage": LEAD, "may_pitch": False,
            "decks": decks, "hands": [[], []], "discards": [[], []],
            "pitch_deck": pitch_deck, "pitch_discard": [], "scoring": [[], []],
            "balls": [], "hits": [0, 0], "window": None, "result": None, "settled": None,
        }
        for seat in SEATS:
            for _ in range(HAND_SIZE):
                state["hands"][seat].append(state["decks"][seat].pop())
        events: list[dict] = []  # setup has no one to tell; the first pitch shows in the state
        _start_round(state, events)
        _advance(state, rng, events)
        state["rng"] = rng.state
        return state

    def to_act(self, state: dict) -> set[int]:
        if state["stage"] == OVER:
            return set()
        if state["window"] is not None:
            return set(_waiting(state))
        if state["stage"] == FOLLOW:
            return {1 - state["pitcher"]}
        return {state["pitcher"]}

    def result(self, state: dict) -> dict | None:
        return state["result"]

    def legal_actions(self, state: dict, seat: int) -> list[dict]:
        if seat not in self.to_act(state):
            return []
        if state["window"] is not None:
            return [{"type": "pass"}, *_special_plays(state, seat)]
        stage = state["stage"]
        if stage == REVEAL:
            return [{"type": "reveal", "ball": _ball_id(b)} for b in _to_reveal(state)]
        if stage == LEAD:
            actions = [{"type": "pitch"}] if _can_pitch(state) else []
            balls, must = _lead_balls(state), _pitcher_must_play(state)
        else:
            actions = []
            balls, must = _follow_balls(state), _follower_must_play(state)
        card_ids = [TEAM_CARDS[c]["id"] for c in sorted(state["hands"][seat])]
        actions += [{"type": "play_card", "card": cid, "ball": _ball_id(b)} for cid in card_ids for b in balls]
        if not must:
            actions.append({"type": "done"})
        return actions

    def play(self, state: dict, seat: int, action: dict) -> list[dict]:
        rng = Rng(state["rng"])
        events: list[dict] = []
        kind = action["type"]
        if kind == "pass":
            _pass(state, seat, events)
        elif kind == "play_special":
            _play_special(state, seat, action, events)
        elif kind == "pitch":
            _pitch(state, events)
        elif kind == "play_card":
            _play_face_down(state, seat, TEAM_INDEX[action["card"]], PITCH_INDEX[action["ball"]], events)
        elif kind == "done":
            _done(state, seat, events)
        elif kind == "reveal":
            _reveal(state, _ball(state, PITCH_INDEX[action["ball"]]), events)
        _advance(state, rng, events)
        state["rng"] = rng.state
        return events

    def explain_illegal(self, state: dict, seat: int, action: dict) -> str:
        """Why ``action`` is refused, from public facts and the caller's own hand only."""
        kind = action["type"]
        hand = state["hands"][seat]
        card = action.get("card")
        if card is not None and TEAM_INDEX.get(card) not in hand:
            return f"You do not hold a card {card!r}."
        ball = action.get("ball")
        if ball is not None and _ball(state, PITCH_INDEX.get(ball, -1)) is None:
            return f"There is no ball {ball!r} in play."
        if state["window"] is not None:
            if kind not in ("pass", "play_special"):
                return "A priority window is open: play a special card or pass."
            if FAMILY[TEAM_INDEX[card]] == PLAYER:
                return "Player cards are played face down on a ball, not in a priority window."
            return ("That special card cannot be played on that target now: spells and jinxes need a target "
                    "that is still in play, fouls follow your opponent's reveal on a Quaffle, and Alohomora "
                    "and the Referee answer a card your opponent played in this window.")
        if kind in ("pass", "play_special"):
            return ("Special cards are played in the priority windows: at the start of a round without a pitch, "
                    "and after a pitch, a face-down play or a reveal.")
        stage = state["stage"]
        if kind == "pitch":
            return ("The pitcher may pitch only at the start of their round, when no Quaffle is in play, "
                    "while the Pitch Deck has cards.")
        if kind == "reveal":
            return "The pitcher chooses which ball to reveal once both players have played."
        if kind == "done":
            if stage == LEAD:
                return "A pitcher must always play on a Quaffle."
            if stage == FOLLOW:
                return "Every ball the pitcher plays on, you must play on as well."
            return "The cards are being revealed: choose which ball to reveal next."
        if kind == "play_card":
            lock = _ball(state, PITCH_INDEX[ball])["locked"][seat]
            if isinstance(lock, str):
                return f"{KINDS[lock]['name']} keeps you off that ball this round."
            if stage == FOLLOW and _ball(state, PITCH_INDEX[ball])["sides"][state["pitcher"]] is None:
                return "You play only on the balls the pitcher has a card on."
            return "You cannot play a card on that ball now."
        return super().explain_illegal(state, seat, action)

    def view(self, state: dict, seat: int | None) -> dict:
        window = state["window"]
        return {
            "seat": seat,
            "round": state["round"],
            "max_rounds": state["max_rounds"],
            "pitcher": state["pitcher"],
            "stage": state["stage"],
            "to_act": sorted(self.to_act(state)),
            "pitch_available": _can_pitch(state) and window is None,
            "hand": [card_view(c) for c in sorted(state["hands"][seat])] if seat is not None else [],
            "players": [_player_view(state, s) for s in SEATS],
            "balls": [_ball_view(b, seat) for b in state["balls"]],
            "last_settled": _settled_view(state.get("settled")),  # absent from states stored before it existed
            "pitch_deck_count": len(state["pitch_deck"]),
            "pitch_discard": [pitch_view(c) for c in state["pitch_discard"]],
            "window": None if window is None else {
                "after": window["after"],
                "ball": None if window["ball"] is None else PITCH_CARDS[window["ball"]]["id"],
                "passed": sorted(window["passed"]),
                "pending": [_pending_view(p) for p in window["pending"]],
            },
            "result": None if state["result"] is None else {
                "winners": list(state["result"]["winners"]), "scores": list(state["result"]["scores"]),
                "reason": state["result"]["reason"],
                "cause": state["result"].get("cause"),  # absent from results stored before causes existed
            },
        }

    def determinise(self, view: dict, seat: int, rng: Rng) -> dict:
        """A state consistent with ``seat``'s view, hidden cards sampled (see :mod:`.determinise`)."""
        return _determinise(self, view, seat, rng)


# -- driving the match ---------------------------------------------------------


def _advance(state: dict, rng: Rng, events: list) -> None:
    """Run every step that needs no decision, until some seat must act or the match is over.

    Steps are automatic only when public facts force them (an empty hand, no
    ball to play on, a single ball to reveal), so that skipping a seat never
    tells its opponent anything about that seat's hand.
    """
    while state["stage"] != OVER:
        window = state["window"]
        if window is not None:
            if _waiting(state):
                return
            _close_window(state, rng, events)
            continue
        stage = state["stage"]
        if stage == LEAD:
            if _can_pitch(state) or _lead_balls(state):
                return
            _done(state, state["pitcher"], events)  # nothing to pitch, nothing to play on
        elif stage == FOLLOW:
            if _follow_balls(state):
                return
            _done(state, 1 - state["pitcher"], events)
        else:
            balls = _to_reveal(state)
            if len(balls) > 1:
                return  # "the pitcher determines the order in which the player cards are turned over"
            if balls:
                _reveal(state, balls[0], events)
            else:
                _end_round(state, rng, events)


def _start_round(state: dict, events: list) -> None:
    """Open a round: "1. Release one ball into play" and "8. Pitch Again".

    With nothing in play the pitcher must pitch, so it happens at once. With a
    Quaffle in play there is no pitch: "If a Quaffle remains in play, the
    Pitcher for that round does not get to lead with a new card from the Pitch
    Deck." With only Bludgers or the Snitch left, "the new pitcher may choose
    to pitch a new ball from the deck OR play on the balls already in play".
    """
    state["stage"] = LEAD
    balls = state["balls"]
    state["may_pitch"] = bool(balls) and not any(PITCH_KIND[b["card"]] == QUAFFLE for b in balls)
    events.append({"type": "round_started", "round": state["round"], "pitcher": state["pitcher"]})
    if not balls and state["pitch_deck"]:
        state["may_pitch"] = True
        _pitch(state, events)
    elif balls:
        # "You can play Spell and Jinx cards anytime you want - before you or your opponent play Player
        # Cards": without a pitch no other window would come before the pitcher's first card.
        _open_window(state, "round", None)
    # Nothing in play and nothing left to pitch cannot happen with the shipped decks (the Snitch is in the
    # deck or on the pitch until the match ends); if it did, the lead ends by itself and the cap ends the match.


def _can_pitch(state: dict) -> bool:
    return state["stage"] == LEAD and state["may_pitch"] and bool(state["pitch_deck"])


def _pitch(state: dict, events: list) -> None:
    """Turn pitch cards until a ball comes into play or the Pitch Deck runs out.

    "PLAYING A GOAL CARD": a Goal scores 10 at once for the pitcher, "Draw
    another Pitch Card - it's still your round!". "If there are two Bludgers in
    play and you draw a third Bludger, place it in the Pitch discard pile and
    draw another card. It is still your pitch." The Pitch Deck is not
    reshuffled (house rule: the book's reshuffle is for "your deck", a team deck).
    """
    pitcher = state["pitcher"]
    state["may_pitch"] = False
    while state["pitch_deck"]:
        card = state["pitch_deck"].pop()
        kind = PITCH_KIND[card]
        if kind == GOAL:
            state["scoring"][pitcher].append(card)
            events.append({"type": "goal_scored", "seat": pitcher, "card": pitch_view(card)})
            continue
        if kind == BLUDGER and sum(PITCH_KIND[b["card"]] == BLUDGER for b in state["balls"]) >= MAX_BLUDGERS:
            state["pitch_discard"].append(card)
            events.append({"type": "third_bludger_discarded", "seat": pitcher, "card": pitch_view(card)})
            continue
        state["balls"].append({"card": card, "sides": [None, None], "locked": [None, None], "mods": [[], []],
                               "revealed": False, "resolved": False, "compared": None})
        events.append({"type": "pitched", "seat": pitcher, "card": pitch_view(card)})
        break
    else:
        events.append({"type": "pitch_deck_empty", "seat": pitcher})
    _open_window(state, "pitch", None)


def _lead_balls(state: dict) -> list[dict]:
    """Balls the pitcher may still lay a card on: "Pitcher can play on as many or as few balls as desired"."""
    pitcher = state["pitcher"]
    if state["stage"] != LEAD or not state["hands"][pitcher]:
        return []
    return [b for b in state["balls"] if not b["resolved"] and b["sides"][pitcher] is None
            and not b["locked"][pitcher]]


def _pitcher_must_play(state: dict) -> bool:
    """"A pitcher must ALWAYS play on a Quaffle." (unless locked out of it, or with an empty hand)"""
    return any(PITCH_KIND[b["card"]] == QUAFFLE for b in _lead_balls(state))


def _follow_balls(state: dict) -> list[dict]:
    """Balls the opponent may lay a card on.

    "If the pitcher plays on a ball, the opposing player must also play on the
    ball": the opponent answers the pitcher's cards, so it plays only where one
    lies. The one exception is the jinx "Opponent can't play on a ball", which
    discards the pitcher's card there: "You do not have to play on the ball
    once your opponent's card has been discarded. However, if you play the
    proper Player Card on the ball, you automatically win that ball."
    Wingardium Leviosa has no such clause: a pitcher's card it sends back
    leaves nothing to answer, so that ball is out of play for both this round.
    """
    pitcher = state["pitcher"]
    follower = 1 - pitcher
    if state["stage"] != FOLLOW or not state["hands"][follower]:
        return []
    return [b for b in state["balls"] if not b["resolved"] and b["sides"][follower] is None
            and not b["locked"][follower] and (b["sides"][pitcher] is not None or b["locked"][pitcher] == JINX_BLOCK)]


def _follower_must_play(state: dict) -> bool:
    pitcher = state["pitcher"]
    return any(b["sides"][pitcher] is not None for b in _follow_balls(state))


def _play_face_down(state: dict, seat: int, card: int, pitch_card: int, events: list) -> None:
    """"3. The Pitcher plays first" / "4. The opposing player plays": one card, face down, on one ball.

    Any card may be laid: a special card laid face down is a "sacrifice" and
    will be discarded without using its powers ("SPECIAL CARDS", and the HINT
    that you may sacrifice "even if you have Player Cards in your hand").
    """
    ball = _ball(state, pitch_card)
    state["hands"][seat].remove(card)
    ball["sides"][seat] = card
    if seat == state["pitcher"]:
        state["may_pitch"] = False  # the pitch comes first: "pitch a new ball ... OR play on the balls"
    ball_id = PITCH_CARDS[pitch_card]["id"]
    events.append({"type": "played_face_down", "seat": seat, "ball": ball_id})
    events.append({"type": "played_face_down_card", "seat": seat, "ball": ball_id,
                   "card": card_view(card), "audience": [seat]})
    _open_window(state, "play", pitch_card)


def _done(state: dict, seat: int, events: list) -> None:
    """The pitcher (or the opponent) lays no more cards this round.

    A pitcher who played on nothing has said "I choose not to play"; the round
    then ends with the draw, and the opponent pitches the next one.
    """
    played = sum(b["sides"][seat] is not None for b in state["balls"])
    events.append({"type": "done", "seat": seat, "balls_played": played})
    state["may_pitch"] = False
    state["stage"] = FOLLOW if state["stage"] == LEAD else REVEAL


def _to_reveal(state: dict) -> list[dict]:
    """Balls with a card on them, not yet turned over this round."""
    return [b for b in state["balls"] if not b["resolved"] and not b["revealed"]
            and (b["sides"][0] is not None or b["sides"][1] is not None)]


def _reveal(state: dict, ball: dict, events: list) -> None:
    """"Both players turn over their player card at the same time." Then a priority window (fouls, too)."""
    ball["revealed"] = True
    events.append({"type": "revealed", "ball": _ball_id(ball),
                   "cards": [None if c is None else card_view(c) for c in ball["sides"]]})
    _open_window(state, "reveal", ball["card"])


def _end_round(state: dict, rng: Rng, events: list) -> None:
    """"6. Discard", "7. Draw", "8. Pitch Again"; the round cap (house rule) may end the match here."""
    for ball in state["balls"]:
        for seat in SEATS:
            if ball["sides"][seat] is not None:  # every played card was discarded when its ball resolved
                state["discards"][seat].append(ball["sides"][seat])
        ball.update(sides=[None, None], locked=[None, None], mods=[[], []], revealed=False, resolved=False,
                    compared=None)
    pitcher = state["pitcher"]
    for seat in (pitcher, 1 - pitcher):
        _draw_up(state, rng, seat, events)
    state["hits"] = [0, 0]
    events.append({"type": "round_ended", "round": state["round"]})
    if state["round"] >= state["max_rounds"]:
        _finish(state, events, "round_limit",
                f"The round limit ({state['max_rounds']}) was reached; the game is scored on points.")
        return
    state["round"] += 1
    state["pitcher"] = 1 - pitcher
    _start_round(state, events)


def _draw_up(state: dict, rng: Rng, seat: int, events: list) -> None:
    """"7. Draw": back up to 7, or to 6 (5 after two Bludgers) in the round the seat was Bludgered.

    "When they go to draw new cards next round, they can only draw a hand of 6,
    not 7 cards. This only lasts for one round." A hand already at or above its
    limit (a Wingardium Leviosa or a take-back can grow it) is kept as it is.
    "If you get through your deck before the game ends, shuffle your discard
    pile and continue play."
    """
    hand, deck, discard = state["hands"][seat], state["decks"][seat], state["discards"][seat]
    limit = HAND_SIZE - min(state["hits"][seat], MAX_BLUDGERS)
    drawn = []
    while len(hand) < limit:
        if not deck:
            if not discard:
                break
            deck.extend(discard)
            discard.clear()
            rng.shuffle(deck)
            events.append({"type": "reshuffled", "seat": seat, "count": len(deck)})
        card = deck.pop()
        hand.append(card)
        drawn.append(card)
    if drawn:
        events.append({"type": "drew", "seat": seat, "count": len(drawn)})
        events.append({"type": "drew_cards", "seat": seat, "cards": [card_view(c) for c in drawn], "audience": [seat]})


def _finish(state: dict, events: list, cause: str, reason: str) -> None:
    """"9. Winning the Game": the higher total wins; equal totals share the win (house rule).

    ``cause`` is one of :data:`CAUSES`, ``reason`` the sentence for people.
    """
    scores = [sum(POINTS[c] for c in state["scoring"][seat]) for seat in SEATS]
    best = max(scores)
    state["result"] = {"winners": [s for s in SEATS if scores[s] == best], "scores": scores, "reason": reason,
                       "cause": cause}
    state["stage"] = OVER
    state["window"] = None
    events.append({"type": "game_over", "winners": list(state["result"]["winners"]), "scores": list(scores),
                   "reason": reason, "cause": cause})


# -- resolving a ball ----------------------------------------------------------


def _effective(ball: dict, seat: int) -> tuple[str, int] | None:
    """What ``seat``'s card on ``ball`` counts as: (kind, value), or None for no Player Card.

    None covers an empty side, a sacrifice ("discard your Special Card without
    using any of its powers") and a Keeper hit by Leg-Locker ("the Keeper
    becomes useless"). House rule: all three count alike, as a sacrifice does;
    values never go below 0.
    """
    card = ball["sides"][seat]
    if card is None or FAMILY[card] != PLAYER:
        return None
    mods = ball["mods"][seat]
    if KIND[card] == KEEPER and LEG_LOCKER in mods:
        return None
    return KIND[card], max(0, VALUE[card] - sum(REDUCTION[m] for m in mods))


def quaffle_winner(cards: list) -> int | None:
    """"PLAYING FOR A QUAFFLE": "The higher-numbered Player Card wins the round" (5.), except where a Keeper
    stands in the way.

    * "If you both played cards of the same value, you have a tie. ... the
      Quaffle remains in play".
    * A Keeper "with an equal or higher value than your opponent's Player Card
      (Chaser, Beater)" blocks: nobody wins ("you blocked the goal and saved the
      Quaffle, but you didn't win it").
    * "If you both played a Keeper, the Keeper with the higher value wins".
    * Any other higher card wins, whatever its kind: "Beaters and Seekers may be
      played on Quaffles, but they are better saved for Bludgers and the Golden
      Snitch" -- advice, not a bar (the Chaser rule is the common case of it).
    * Against a sacrifice, "Your opponent wins the Quaffle, provided they played
      a Player Card. If you both sacrifice ... the Quaffle stays in play."
    """
    a, b = cards
    if a is None or b is None:
        return None if a is b else (0 if a is not None else 1)
    if a[1] == b[1]:
        return None
    high = 0 if a[1] > b[1] else 1
    if cards[high][0] == KEEPER and cards[1 - high][0] != KEEPER:
        return None
    return high


def _one_kind_wins(cards: list, kind: str) -> int | None:
    """The rule the Bludger (Beaters) and the Snitch (Seekers) share.

    "If you both play a Beater, the card with the higher value wins. If you play
    a Beater and your opponent plays any other type of card ..., the Beater
    always wins." "If you both play a Beater and there is a tie, ... the Bludger
    stays in play." "If you both play non-Beater cards, ... the Bludger stays".
    The Snitch reads the same with Seekers.
    """
    a, b = (c is not None and c[0] == kind for c in cards)
    if a and b:
        if cards[0][1] == cards[1][1]:
            return None
        return 0 if cards[0][1] > cards[1][1] else 1
    if a or b:
        return 0 if a else 1
    return None


def _resolve_ball(state: dict, rng: Rng, pitch_card: int, events: list) -> None:
    """Compare the two cards on a revealed ball and settle it ("5. Both players compare their cards").

    Both played cards go to their owners' discard piles whatever happens
    ("6. Discard"). A ball nobody wins stays on the table for later rounds.
    """
    ball = _ball(state, pitch_card)
    if ball is None:
        return  # already won by a foul in the window after its reveal
    ball["resolved"] = True
    cards = [_effective(ball, seat) for seat in SEATS]
    ball["compared"] = [None if c is None else list(c) for c in cards]
    kind = PITCH_KIND[pitch_card]
    if kind == QUAFFLE:
        winner = quaffle_winner(cards)
    else:
        winner = _one_kind_wins(cards, BEATER if kind == BLUDGER else SEEKER)
    _clear_ball(state, ball)
    ball_id = PITCH_CARDS[pitch_card]["id"]
    compared = _compared_view(ball["compared"])
    _record_settled(state, pitch_card, winner, None if winner is None else "play", ball["compared"])
    if winner is None:
        events.append({"type": "ball_stays", "ball": ball_id, "compared": compared})
        return
    state["balls"].remove(ball)
    events.append({"type": "ball_won", "ball": ball_id, "seat": winner, "by": "play", "compared": compared})
    if kind == BLUDGER:
        # "Pick a card from your opponent's hand (no peeking) and send it to their discard pile. Remove the
        # Bludger from the pitch and place it across the table in the Pitch discard pile."
        state["pitch_discard"].append(pitch_card)
        loser = 1 - winner
        state["hits"][loser] += 1
        events.append({"type": "bludgered", "seat": loser, "hits": state["hits"][loser]})
        _discard_random(state, rng, loser, 1, ball_id, events)
        return
    state["scoring"][winner].append(pitch_card)
    if kind == SNITCH:
        # "the one with the higher value catches the Golden Snitch and the game ends!"
        _finish(state, events, "snitch", f"{TEAMS[winner]['name']} caught the Golden Snitch.")


def _clear_ball(state: dict, ball: dict) -> None:
    for seat in SEATS:
        card = ball["sides"][seat]
        if card is not None:
            state["discards"][OWNER[card]].append(card)
            ball["sides"][seat] = None


def _win_quaffle(state: dict, ball: dict, seat: int, events: list) -> None:
    """A Quaffle won by a foul: it goes to the fouler's scoring pile, both cards to the discards."""
    _clear_ball(state, ball)
    state["balls"].remove(ball)
    state["scoring"][seat].append(ball["card"])
    _record_settled(state, ball["card"], seat, "foul", None)
    events.append({"type": "ball_won", "ball": _ball_id(ball), "seat": seat, "by": "foul"})


def _record_settled(state: dict, pitch_card: int, winner: int | None, by: str | None, compared: list | None) -> None:
    """Keep what settled a ball for the view (``last_settled``): a won ball leaves the pitch and a ball left in
    play is reset when the round ends, so without it a table could not show what decided them."""
    settled = state.get("settled")  # absent from states stored before it existed
    if settled is None or settled["round"] != state["round"]:
        settled = state["settled"] = {"round": state["round"], "balls": []}
    settled["balls"].append({"card": pitch_card, "winner": winner, "by": by,
                             "compared": None if compared is None else [None if c is None else list(c)
                                                                        for c in compared]})


def _discard_random(state: dict, rng: Rng, seat: int, count: int, cause: str, events: list) -> None:
    """Discard ``count`` random cards from ``seat``'s hand (Bludger, Full Body-Bind, jinx)."""
    hand = state["hands"][seat]
    for _ in range(count):
        if not hand:
            break
        card = hand.pop(rng.below(len(hand)))
        state["discards"][seat].append(card)
        events.append({"type": "discarded_from_hand", "seat": seat, "card": card_view(card), "cause": cause})


# -- priority windows and special cards ----------------------------------------


def _open_window(state: dict, after: str, pitch_card: int | None) -> None:
    state["window"] = {"after": after, "ball": pitch_card, "passed": [], "pending": []}


def _waiting(state: dict) -> list[int]:
    """Seats the open window still waits on: not passed since the last card, and holding cards."""
    window = state["window"]
    return [s for s in SEATS if s not in window["passed"] and state["hands"][s]]


def _pass(state: dict, seat: int, events: list) -> None:
    state["window"]["passed"].append(seat)
    events.append({"type": "passed", "seat": seat})


def _play_special(state: dict, seat: int, action: dict, events: list) -> None:
    """"To play a Special Card, place it face up on the table and declare what it does."

    The card waits in the window until the window closes, so the opponent can
    answer it (Alohomora, Referee); every card played resets the passes.
    """
    card = TEAM_INDEX[action["card"]]
    window = state["window"]
    state["hands"][seat].remove(card)
    ball = PITCH_INDEX[action["ball"]] if "ball" in action else None
    target = TEAM_INDEX[action["target"]] if "target" in action else None
    window["pending"].append({"seat": seat, "card": card, "ball": ball, "target": target})
    window["passed"] = []
    event = {"type": "special_played", "seat": seat, "card": card_view(card)}
    for key in ("ball", "target"):
        if key in action:
            event[key] = action[key]
    events.append(event)


def _open_balls(state: dict) -> list[dict]:
    """Balls a spell or jinx can still matter on this round.

    While the pitcher leads, any unresolved ball; while the opponent follows,
    the balls it may or did play on (:func:`_follow_balls`); while revealing,
    the balls with cards on them.
    """
    stage, pitcher = state["stage"], state["pitcher"]
    out = []
    for ball in state["balls"]:
        if ball["resolved"]:
            continue
        sides = ball["sides"]
        if stage == LEAD:
            out.append(ball)
        elif stage == FOLLOW:
            if sides[pitcher] is not None or ball["locked"][pitcher] == JINX_BLOCK or sides[1 - pitcher] is not None:
                out.append(ball)
        elif sides[0] is not None or sides[1] is not None:
            out.append(ball)
    return out


def _special_plays(state: dict, seat: int) -> list[dict]:
    """Every special card ``seat`` may play now, with every target it may name.

    A seat locked out of a ball ("Your opponent can play no further cards
    (Player or Special) on the ball you jinxed") names that ball with nothing.
    """
    opp = 1 - seat
    window = state["window"]
    balls = [b for b in _open_balls(state) if not b["locked"][seat]]
    answered = {p["target"] for p in window["pending"] if p["seat"] == seat and KIND[p["card"]] in (ALOHOMORA, REFEREE)}
    actions = []
    by_kind: dict[str, list[dict]] = {}  # the ball targets of each kind, worked out once per call
    for card in sorted(state["hands"][seat]):
        kind = KIND[card]
        if FAMILY[card] == PLAYER:
            continue  # no special card: nothing below applies to it
        cid = TEAM_CARDS[card]["id"]
        targets_ball: list[dict] = []
        targets_card: list[int] = []
        if kind in (LEG_LOCKER, JINX_REDUCE):
            # "reduces the value of one of your opponent's ... cards": their card on a ball, or the card
            # they are yet to lay there (house rule: the spell waits on that side of the ball this round)
            targets_ball = by_kind.get(LEG_LOCKER)
            if targets_ball is None:
                targets_ball = by_kind[LEG_LOCKER] = [b for b in balls
                                                      if b["sides"][opp] is not None or not b["locked"][opp]]
        elif kind == WINGARDIUM:
            targets_ball = by_kind.get(WINGARDIUM)
            if targets_ball is None:
                targets_ball = by_kind[WINGARDIUM] = [b for b in balls if not b["locked"][opp]]
        elif kind == JINX_BLOCK:
            # "select any Player Card your opponent has played on a ball and discard it"
            targets_ball = by_kind.get(JINX_BLOCK)
            if targets_ball is None:
                targets_ball = by_kind[JINX_BLOCK] = [b for b in balls if b["sides"][opp] is not None]
        elif kind in (FULL_BODY_BIND, JINX_DISCARD):
            actions.append({"type": "play_special", "card": cid})
        elif kind == JINX_RETRIEVE:
            targets_card = sorted(state["discards"][seat])
        elif kind == ALOHOMORA:
            # "cancels any other spell or jinx card that has been played against you"
            targets_card = [p["card"] for p in window["pending"] if p["seat"] == opp
                            and FAMILY[p["card"]] in (SPELL, JINX) and KIND[p["card"]] != JINX_RETRIEVE
                            and p["card"] not in answered]
        elif kind == REFEREE:
            # "A Referee cancels any Foul."
            targets_card = [p["card"] for p in window["pending"] if p["seat"] == opp
                            and FAMILY[p["card"]] == FOUL and p["card"] not in answered]
        elif kind in (FOUL_FREE_GOAL, FOUL_REMOVE_KEEPER):
            ball = _foul_target(state, seat, kind)
            targets_ball = [ball] if ball is not None else []
        actions += [{"type": "play_special", "card": cid, "ball": _ball_id(b)} for b in targets_ball]
        actions += [{"type": "play_special", "card": cid, "target": TEAM_CARDS[t]["id"]} for t in targets_card]
    return actions


def _foul_target(state: dict, seat: int, kind: str) -> dict | None:
    """The Quaffle a foul may be played on now, if any.

    "Fouls can only be used after your opponent has revealed their Player Cards
    on the pitch": only in the window after a Quaffle's reveal (both fouls are
    about Quaffles, and "The Golden Snitch cannot be won by the use of a Foul
    Card"). "Remove opponent's Keeper" further needs a revealed Keeper.
    """
    window = state["window"]
    if window["after"] != "reveal":
        return None
    ball = _ball(state, window["ball"])
    if ball is None or PITCH_KIND[ball["card"]] != QUAFFLE or ball["locked"][seat]:
        return None
    theirs = ball["sides"][1 - seat]
    if theirs is None or (kind == FOUL_REMOVE_KEEPER and KIND[theirs] != KEEPER):
        return None
    return ball


def _close_window(state: dict, rng: Rng, events: list) -> None:
    """Both seats have passed: the window's cards take effect, then play moves on.

    "The effects of Special Cards must be resolved in the order in which they
    are played." Cancelling is settled first, latest card first, so that an
    Alohomora answered by another Alohomora cancels nothing; then every card
    that was not cancelled acts, in the order played. Every card ends in its
    owner's discard pile. After a reveal's window, the ball is resolved.
    """
    window = state["window"]
    state["window"] = None
    pending = window["pending"]
    cancelled: dict[int, int] = {}
    for i in range(len(pending) - 1, -1, -1):
        if i in cancelled or KIND[pending[i]["card"]] not in (ALOHOMORA, REFEREE):
            continue
        for j in range(i):
            if pending[j]["card"] == pending[i]["target"]:
                cancelled[j] = pending[i]["card"]
    for i, entry in enumerate(pending):
        card, seat = entry["card"], entry["seat"]
        if i in cancelled:
            events.append({"type": "special_cancelled", "seat": seat, "card": TEAM_CARDS[card]["id"],
                           "by": TEAM_CARDS[cancelled[i]]["id"]})
        elif KIND[card] not in (ALOHOMORA, REFEREE):
            _special_effect(state, rng, entry, events)
        state["discards"][seat].append(card)
    if window["after"] == "reveal":
        _resolve_ball(state, rng, window["ball"], events)


def _special_effect(state: dict, rng: Rng, entry: dict, events: list) -> None:
    """What one special card does ("SPELL AND JINX CARDS", "FOUL AND REFEREE CARDS").

    A card whose target has gone (its ball was won by an earlier foul, its card
    already left the discard pile) does nothing.
    """
    seat, card = entry["seat"], entry["card"]
    opp, kind, cid = 1 - seat, KIND[card], TEAM_CARDS[card]["id"]
    ball = _ball(state, entry["ball"]) if entry["ball"] is not None else None
    if kind in RANDOM_DISCARDS:
        # "Take 2 cards at random from your opponent's hand and discard them." / "Take 1 card ..."
        _discard_random(state, rng, opp, RANDOM_DISCARDS[kind], cid, events)
        return
    if kind == JINX_RETRIEVE:
        # "retrieve any one of your cards that has been placed in your discard pile"
        target = entry["target"]
        if target in state["discards"][seat]:
            state["discards"][seat].remove(target)
            state["hands"][seat].append(target)
            # the public twin names no id: the card is in a hand now
            events.append({"type": "card_taken_back", "seat": seat, "kind": KIND[target], "value": VALUE[target]})
            events.append({"type": "card_taken_back_card", "seat": seat, "card": card_view(target),
                           "audience": [seat]})
            return
    elif ball is not None:
        ball_id = _ball_id(ball)
        theirs = ball["sides"][opp]
        if kind in REDUCTION:
            ball["mods"][opp].append(kind)
            events.append({"type": "card_weakened", "seat": opp, "ball": ball_id, "by": cid})
            return
        if kind == WINGARDIUM:
            # "prevents your opponent from playing on a ball ... If your opponent has already played a
            # Player Card on the ball, they must return the Player Card to their hand."
            ball["locked"][opp] = WINGARDIUM
            if theirs is not None:
                ball["sides"][opp] = None
                state["hands"][opp].append(theirs)
                events.append({"type": "card_returned", "seat": opp, "ball": ball_id, "by": cid})
                events.append({"type": "card_returned_card", "seat": opp, "ball": ball_id,
                               "card": card_view(theirs), "audience": [opp]})
            events.append({"type": "ball_locked", "seat": opp, "ball": ball_id, "by": cid})
            return
        if kind == JINX_BLOCK:
            # "select any Player Card your opponent has played on a ball and discard it. Your opponent can
            # play no further cards (Player or Special) on the ball you jinxed."
            ball["locked"][opp] = JINX_BLOCK
            if theirs is not None:
                ball["sides"][opp] = None
                state["discards"][opp].append(theirs)
                events.append({"type": "card_removed", "seat": opp, "ball": ball_id, "card": card_view(theirs),
                               "by": cid})
            events.append({"type": "ball_locked", "seat": opp, "ball": ball_id, "by": cid})
            return
        if kind == FOUL_FREE_GOAL:
            # "You'll win the Quaffle, no matter the value of your opponent's Player Card, and even if you
            # had to play a Special Card as a discard on that Quaffle."
            _win_quaffle(state, ball, seat, events)
            return
        if kind == FOUL_REMOVE_KEEPER:
            # "it allows you to score a Quaffle using any Player Card"
            if theirs is not None and KIND[theirs] == KEEPER:
                ball["sides"][opp] = None
                state["discards"][opp].append(theirs)
                events.append({"type": "card_removed", "seat": opp, "ball": ball_id, "card": card_view(theirs),
                               "by": cid})
                mine = ball["sides"][seat]
                if mine is not None and FAMILY[mine] == PLAYER:
                    _win_quaffle(state, ball, seat, events)
                return
    events.append({"type": "special_no_effect", "seat": seat, "card": cid})


# -- small helpers and views ---------------------------------------------------


def _ball(state: dict, pitch_card: int) -> dict | None:
    for ball in state["balls"]:
        if ball["card"] == pitch_card:
            return ball
    return None


def _ball_id(ball: dict) -> str:
    return PITCH_CARDS[ball["card"]]["id"]


def _player_view(state: dict, seat: int) -> dict:
    team = TEAMS[seat]
    return {
        "seat": seat, "team": team["team"], "name": team["name"], "colour": team["colour"],
        "hand_count": len(state["hands"][seat]),
        "deck_count": len(state["decks"][seat]),
        "discard": [_CARD_VIEWS[c].copy() for c in state["discards"][seat]],
        "scoring": [_PITCH_VIEWS[c].copy() for c in state["scoring"][seat]],
        "score": sum(POINTS[c] for c in state["scoring"][seat]),
        "bludgers": state["hits"][seat],
        "next_hand_size": HAND_SIZE - min(state["hits"][seat], MAX_BLUDGERS),
    }


def _ball_view(ball: dict, viewer: int | None) -> dict:
    card = PITCH_CARDS[ball["card"]]
    sides = []
    for seat in SEATS:
        placed = ball["sides"][seat]
        shown = placed is not None and (ball["revealed"] or seat == viewer)  # face down: no id for others
        lock = ball["locked"][seat]  # True in a state stored before locks named their card
        sides.append({"seat": seat, "occupied": placed is not None, "card": card_view(placed) if shown else None,
                      "locked": bool(lock), "locked_by": lock if isinstance(lock, str) else None,
                      "modifiers": list(ball["mods"][seat])})
    return {"id": card["id"], "kind": card["kind"], "name": card["name"], "points": card["points"],
            "revealed": ball["revealed"], "resolved": ball["resolved"], "sides": sides,
            "compared": _compared_view(ball.get("compared"))}  # absent from balls stored before it existed


def _settled_view(settled: dict | None) -> dict | None:
    if settled is None:
        return None
    return {"round": settled["round"],
            "balls": [{"ball": PITCH_CARDS[b["card"]]["id"], "kind": PITCH_KIND[b["card"]], "winner": b["winner"],
                       "by": b["by"], "compared": _compared_view(b["compared"])} for b in settled["balls"]]}


def _compared_view(compared: list | None) -> list[dict] | None:
    """What each side counted as when its ball was resolved: kind and value after spells, or nulls for no
    Player Card (an empty side, a sacrifice, a useless Keeper)."""
    if compared is None:
        return None
    return [{"seat": seat, "kind": None if c is None else c[0], "value": None if c is None else c[1]}
            for seat, c in enumerate(compared)]


def _pending_view(entry: dict) -> dict:
    return {"seat": entry["seat"], "card": card_view(entry["card"]),
            "ball": None if entry["ball"] is None else PITCH_CARDS[entry["ball"]]["id"],
            "target": None if entry["target"] is None else TEAM_CARDS[entry["target"]]["id"]}
