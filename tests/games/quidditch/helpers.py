"""Building Quidditch positions for rule tests.

Rule tests start from a chosen position (hands, balls in play, the top of the
pitch deck) rather than from a lucky seed, then drive it through the public
contract (``GAME.apply``, ``legal_actions``, ``view``). The position is built
the way a real round starts, so every card is somewhere and the conservation
invariants hold.
"""

from __future__ import annotations

from service.engine import Rng
from service.games.quidditch import GAME
from service.games.quidditch import rules
from service.games.quidditch.cards import PITCH_INDEX, TEAM_CARDS, TEAM_INDEX, team_deck

RULE_BOOK = "seeds/001_7860e6019ee0192e.txt"
GRYFFINDOR, SLYTHERIN = 0, 1


def start(hands, *, balls=(), pitch_top=(), pitcher=SLYTHERIN, round=1, max_rounds=100, deck_tops=((), ()),
          discards=((), ()), scoring=((), ()), decks=None, seed=0):
    """A state at the start of a round, after any automatic pitch.

    ``hands``: two lists of card ids; ``balls``: pitch card ids in play;
    ``pitch_top``: pitch card ids on top of the pitch deck, first on top;
    ``deck_tops``: team card ids on top of each team deck, first on top;
    ``decks``: if given, a pair whose non-None members give that team deck
    exactly (first on top), the rest of that team's cards going to its
    discard pile.
    """
    state = GAME.setup(GAME.check_options(None, {"max_rounds": max_rounds}, 2), 2, seed)
    placed = set()
    state["hands"] = [[TEAM_INDEX[c] for c in hands[s]] for s in (0, 1)]
    state["discards"] = [[TEAM_INDEX[c] for c in discards[s]] for s in (0, 1)]
    placed.update(c for zone in state["hands"] + state["discards"] for c in zone)
    for s in (0, 1):
        if decks is not None and decks[s] is not None:
            state["decks"][s] = [TEAM_INDEX[c] for c in reversed(decks[s])]
            placed.update(state["decks"][s])
            state["discards"][s] += [c for c in team_deck(s) if c not in placed]
        else:
            tops = [TEAM_INDEX[c] for c in deck_tops[s]]
            placed.update(tops)
            rest = [c for c in team_deck(s) if c not in placed]
            state["decks"][s] = rest + list(reversed(tops))
    in_play = [PITCH_INDEX[b] for b in balls]
    state["scoring"] = [[PITCH_INDEX[c] for c in scoring[s]] for s in (0, 1)]
    top = [PITCH_INDEX[c] for c in pitch_top]
    used = set(in_play) | set(top) | {c for pile in state["scoring"] for c in pile}
    state["pitch_deck"] = [c for c in range(28) if c not in used] + list(reversed(top))
    state["pitch_discard"] = []
    state["balls"] = [{"card": c, "sides": [None, None], "locked": [None, None], "mods": [[], []],
                       "revealed": False, "resolved": False, "compared": None} for c in in_play]
    state.update(pitcher=pitcher, round=round, window=None, result=None, hits=[0, 0])
    events: list = []
    rng = Rng(state["rng"])
    rules._start_round(state, events)
    rules._advance(state, rng, events)
    state["rng"] = rng.state
    return state


def act(state, seat, type, **fields):
    """Apply one action; return (new state, events)."""
    return GAME.apply(state, seat, {"type": type, **fields})


def close_window(state, first=None):
    """Both seats pass until the window open now closes; return (state, events of the closing pass).

    ``first``: the seat that passes first (default seat 0). Whatever the close
    leads to (a reveal, the next round and its pitch) has happened; a new
    window it opens is left open.
    """
    events = []
    window = state["window"]
    if window is None:
        return state, events
    order = [first, 1 - first] if first is not None else [0, 1]
    while True:
        waiting = GAME.to_act(state)
        seat = next(s for s in order if s in waiting)
        state, events = act(state, seat, "pass")
        if state["window"] is None or not state["window"]["passed"]:  # a pass into an open window is recorded
            return state, events


def pass_all(state):
    """Pass every window until some seat must do something other than pass (or the match is over)."""
    while state["window"] is not None:
        state, _ = close_window(state)
    return state


def ball(state, ball_id):
    """The view (from seat 0) of the ball ``ball_id``, or None if it has left play."""
    for b in GAME.view(state, 0)["balls"]:
        if b["id"] == ball_id:
            return b
    return None


def ids(cards):
    return [c["id"] for c in cards]


def hand(state, seat):
    return ids(GAME.view(state, seat)["hand"])


def discard(state, seat):
    return ids(GAME.view(state, seat)["players"][seat]["discard"])


def score(state, seat):
    return GAME.view(state, None)["players"][seat]["score"]


def first(events, type):
    """The first event of ``type`` in ``events``, or None."""
    return next((e for e in events if e["type"] == type), None)


def compared(*sides):
    """The ``compared`` of a resolved ball: seat 0's then seat 1's (kind, value), None for no Player Card."""
    return [{"seat": seat, "kind": None if side is None else side[0], "value": None if side is None else side[1]}
            for seat, side in enumerate(sides)]


def printed(card_id):
    """A player card's (kind, printed value)."""
    card = TEAM_CARDS[TEAM_INDEX[card_id]]
    return card["kind"], card["value"]


def types(events, seat=...):
    """Event types, optionally only those ``seat`` may see."""
    from service.engine import events_for
    if seat is not ...:
        events = events_for(events, seat)
    return [e["type"] for e in events]


def done_if_asked(state, seat):
    """Say ``done`` for ``seat`` if the game waits on it outside a window (it skips a forced ``done``)."""
    if state["window"] is None and seat in GAME.to_act(state) and {"type": "done"} in GAME.legal_actions(state, seat):
        state, _ = act(state, seat, "done")
    return state


def contest(state, pitcher_card, follower_card, ball_id, *, pitcher=None):
    """Pitcher lays ``pitcher_card`` on ``ball_id``, says done; follower answers; windows pass.

    Returns the state with the ball revealed and its window open (or resolved if the window auto-closed).
    """
    p = state["pitcher"] if pitcher is None else pitcher
    state, _ = act(state, p, "play_card", card=pitcher_card, ball=ball_id)
    state, _ = close_window(state)
    state = done_if_asked(state, p)
    state, _ = act(state, 1 - p, "play_card", card=follower_card, ball=ball_id)
    state, _ = close_window(state)
    return state
