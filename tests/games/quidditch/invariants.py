"""Invariants every Quidditch state and step must keep, shared by the property and hidden-information tests."""

from __future__ import annotations

import json
import re
from collections import Counter

from service.engine import events_for
from service.games.quidditch import GAME
from service.games.quidditch.cards import OWNER, PITCH_CARDS, PITCH_KIND, POINTS, TEAM_CARDS, team_deck

SEATS = (0, 1)


def check_state(state: dict) -> None:
    """Conservation of cards and of points in one state (see the two checks below)."""
    view = GAME.view(state, None)
    check_conservation(state, view)
    check_scores(state, view)


def check_conservation(state: dict, view: dict | None = None) -> None:
    """Rule book EQUIPMENT: 40 cards per team deck and 28 pitch cards, each always in exactly one place."""
    window = state["window"]
    pending = [p["card"] for p in window["pending"]] if window else []
    on_balls = [c for b in state["balls"] for c in b["sides"] if c is not None]
    for seat in SEATS:
        places = (state["decks"][seat] + state["hands"][seat] + state["discards"][seat]
                  + [c for c in on_balls + pending if OWNER[c] == seat])
        assert sorted(places) == team_deck(seat), f"team cards of seat {seat} not conserved"
    pitch = (state["pitch_deck"] + state["pitch_discard"] + [b["card"] for b in state["balls"]]
             + state["scoring"][0] + state["scoring"][1])
    assert sorted(pitch) == list(range(len(PITCH_CARDS))), "pitch cards not conserved"
    # "No more than four balls can be on the pitch at any one time - 1 Quaffle, 2 Bludgers, and 1 Golden Snitch"
    kinds = Counter(PITCH_KIND[b["card"]] for b in state["balls"])
    assert kinds["quaffle"] <= 1 and kinds["bludger"] <= 2 and kinds["snitch"] <= 1 and kinds["goal"] == 0
    # the public counts add up too
    view = view or GAME.view(state, None)
    pending_seats = [p["seat"] for p in view["window"]["pending"]] if view["window"] else []
    for seat, player in enumerate(view["players"]):
        shown = (player["hand_count"] + player["deck_count"] + len(player["discard"])
                 + sum(b["sides"][seat]["occupied"] for b in view["balls"]) + pending_seats.count(seat))
        assert shown == 40


def check_scores(state: dict, view: dict | None = None) -> None:
    """Quaffles and Goals score 10, the Snitch 150 (DESIGN.md); the score is exactly the scoring pile."""
    view = view or GAME.view(state, None)
    scores = [sum(POINTS[c] for c in state["scoring"][seat]) for seat in SEATS]
    assert [p["score"] for p in view["players"]] == scores
    assert [sum(c["points"] for c in p["scoring"]) for p in view["players"]] == scores
    result = GAME.result(state)
    if result is not None:
        assert result["scores"] == scores
        assert result["winners"] == [s for s in SEATS if scores[s] == max(scores)]


def hidden_ids(state: dict, viewer: int | None) -> set[str]:
    """Card ids ``viewer`` must not see: the other hands, cards face down on the pitch, every deck."""
    hidden = set()
    for seat in SEATS:
        if seat != viewer:
            hidden.update(state["hands"][seat])
            hidden.update(b["sides"][seat] for b in state["balls"]
                          if b["sides"][seat] is not None and not b["revealed"])
        hidden.update(state["decks"][seat])
    names = {TEAM_CARDS[c]["id"] for c in hidden}
    names.update(PITCH_CARDS[c]["id"] for c in state["pitch_deck"])
    return names


_CARD_ID = re.compile(r'"([gsp]-[a-z0-9-]+)"')


def _mentions(text: str, names: set[str]) -> set[str]:
    """The card ids among ``names`` that appear as JSON strings in ``text``."""
    return names.intersection(_CARD_ID.findall(text))


def check_view_hides(state: dict) -> None:
    """No view shows a card id hidden from its viewer, nor the RNG state."""
    for viewer in (None, *SEATS):
        text = json.dumps(GAME.view(state, viewer))
        leaked = _mentions(text, hidden_ids(state, viewer))
        assert not leaked, f"view for {viewer} shows hidden cards {sorted(leaked)}"
        assert str(state["rng"]) not in text


def check_events_hide(after: dict, events: list) -> None:
    """No event a seat may see names a card that is hidden from it once the step is over.

    Cards do become public during a step (a reveal, a discard), so the check is
    against the state after it: a card in the other hand, face down or in a
    deck then must not have been named -- in particular not as it went back
    into a hand. The one legitimate exception: a card named while it was public
    (discarded face up) and reshuffled into its deck later in the same step.
    """
    for viewer in (None, *SEATS):
        visible = events_for(events, viewer)
        hidden = hidden_ids(after, viewer)
        last_reshuffle = {e["seat"]: i for i, e in enumerate(visible) if e["type"] == "reshuffled"}
        for i, event in enumerate(visible):
            for name in _mentions(json.dumps(event), hidden):
                owner = 0 if name.startswith("g-") else 1 if name.startswith("s-") else None
                assert owner is not None and last_reshuffle.get(owner, -1) > i, \
                    f"event {event['type']} shows {viewer} the hidden card {name}"
