"""Quidditch: a full state rebuilt from one seat's view (:meth:`Game.determinise`).

Public in the view: every discard pile, the scoring piles, the pitch discard,
the balls (with revealed cards), the priority window, and each hand's and
deck's size. Hidden from ``seat``: the opponent's hand, the opponent's
face-down cards on unrevealed balls, both decks' order and the pitch deck's
order. A team card is always in its team's deck, hand, discard pile, on a ball
or in the window; so the opponent's unseen cards are its team deck less what
``seat`` sees, shuffled and dealt to its face-down cards, its hand (its public
size) and its deck; ``seat``'s own deck is its own unseen cards, shuffled; the
pitch deck is the pitch cards in no pile and on no ball, shuffled.
"""

from __future__ import annotations

from typing import Any

from service.engine import Rng, State

from .cards import PITCH_CARDS, PITCH_INDEX, TEAM_INDEX, team_deck


def _compared(compared: list[dict] | None) -> list | None:
    """A view's ``compared`` as the state keeps it."""
    return None if compared is None else [None if c["kind"] is None else [c["kind"], c["value"]] for c in compared]


def determinise(game, view: dict[str, Any], seat: int, rng: Rng) -> State:
    opp = 1 - seat
    players = view["players"]
    balls = []
    hidden_sides = []  # balls whose opponent card seat cannot see
    for b in view["balls"]:
        sides, locked, mods = [None, None], [None, None], [[], []]
        for side in b["sides"]:
            s = side["seat"]
            locked[s], mods[s] = side["locked_by"], list(side["modifiers"])
            if side["card"] is not None:
                sides[s] = TEAM_INDEX[side["card"]["id"]]
            elif side["occupied"]:
                hidden_sides.append((len(balls), s))
        balls.append({"card": PITCH_INDEX[b["id"]], "sides": sides, "locked": locked, "mods": mods,
                      "revealed": b["revealed"], "resolved": b["resolved"], "compared": _compared(b["compared"])})
    window = None
    if view["window"] is not None:
        w = view["window"]
        window = {"after": w["after"], "ball": None if w["ball"] is None else PITCH_INDEX[w["ball"]],
                  "passed": list(w["passed"]),
                  "pending": [{"seat": p["seat"], "card": TEAM_INDEX[p["card"]["id"]],
                               "ball": None if p["ball"] is None else PITCH_INDEX[p["ball"]],
                               "target": None if p["target"] is None else TEAM_INDEX[p["target"]]}
                              for p in w["pending"]]}
    hands: list[list[int]] = [[], []]
    hands[seat] = [TEAM_INDEX[c["id"]] for c in view["hand"]]
    discards = [[TEAM_INDEX[c["id"]] for c in players[s]["discard"]] for s in (0, 1)]
    seen: set[int] = set(hands[seat]) | set(discards[0]) | set(discards[1])
    seen |= {side for b in balls for side in b["sides"] if side is not None}
    if window is not None:
        seen |= {p["card"] for p in window["pending"]}
    decks: list[list[int]] = [[], []]
    for s in (0, 1):
        unseen = [c for c in team_deck(s) if c not in seen]
        rng.shuffle(unseen)
        if s == opp:
            for i, side_seat in hidden_sides:
                if side_seat == s:
                    balls[i]["sides"][s] = unseen.pop()
            count = players[s]["hand_count"]
            hands[s], unseen = sorted(unseen[:count]), unseen[count:]
        decks[s] = unseen
    used_pitch = {PITCH_INDEX[c["id"]] for c in view["pitch_discard"]}
    used_pitch |= {PITCH_INDEX[c["id"]] for p in players for c in p["scoring"]}
    used_pitch |= {b["card"] for b in balls}
    pitch_deck = [c for c in range(len(PITCH_CARDS)) if c not in used_pitch]
    rng.shuffle(pitch_deck)
    # may_pitch shows only through pitch_available (while no window is open). Inside a window opened by a
    # pitch or a face-down play it is False (both clear it); inside the window that opens a round without a
    # pitch it is what the round started with: a choice to pitch unless a Quaffle is in play.
    if view["window"] is None:
        may_pitch = bool(view["pitch_available"]) and view["stage"] == "lead"
    else:
        may_pitch = view["window"]["after"] == "round" and all(b["kind"] != "quaffle" for b in view["balls"])
    result = view["result"]
    last = view.get("last_settled")
    settled = None if last is None else {
        "round": last["round"], "balls": [{"card": PITCH_INDEX[b["ball"]], "winner": b["winner"], "by": b["by"],
                                           "compared": _compared(b["compared"])} for b in last["balls"]]}
    return {
        "rng": rng.next64(), "max_rounds": view["max_rounds"], "round": view["round"], "pitcher": view["pitcher"],
        "stage": view["stage"], "may_pitch": may_pitch,
        "decks": decks, "hands": hands, "discards": discards,
        "pitch_deck": pitch_deck, "pitch_discard": [PITCH_INDEX[c["id"]] for c in view["pitch_discard"]],
        "scoring": [[PITCH_INDEX[c["id"]] for c in p["scoring"]] for p in players],
        "balls": balls, "hits": [p["bludgers"] for p in players], "window": window, "settled": settled,
        "result": None if result is None else {"winners": list(result["winners"]), "scores": list(result["scores"]),
                                               "reason": result["reason"], "cause": result["cause"]},
    }
