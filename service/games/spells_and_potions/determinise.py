"""Spells and Potions: a full state rebuilt from one seat's view (:meth:`Game.determinise`).

Everything but the other wizards' hands is public in the view (Companion hands
are face up). The cards ``seat`` cannot see -- the duel's pack less its own
hand, the face-up Companion hands, the finished tricks and the trick on the
table -- are shuffled and dealt to the hidden hands, each keeping its public
size. Void suits shown by earlier tricks are not used (a plain, uniform sample).
The view's ``last_trick`` may come from the previous deal, so its cards are not
counted out of the pack (this duel's last trick is among ``tricks`` anyway).
"""

from __future__ import annotations

from typing import Any

from service.engine import Rng, State

from . import deck
from .table import POST_INDEX, team_of


def determinise(game, view: dict[str, Any], seat: int, rng: Rng) -> State:
    from .rules import _RULES  # the variant table (public data)

    rules = _RULES[view["variant"]]
    seats = len(view["scores"])
    posts = [place["wizard"] for place in view["table"]]
    phase = view["phase"]
    hands: list[list[str] | None] = [list(place["hand"]) if place["hand_visible"] else None for place in view["table"]]
    tricks = [{"lead": POST_INDEX[t["leader"]], "cards": [c["card"] for c in t["cards"]],
               "winner": POST_INDEX[t["winner"]], "points": t["points"]} for t in view["tricks"]]
    trick = [c["card"] for c in view["trick"]]
    seen = {c for h in hands if h is not None for c in h} | set(trick) | {c for t in tricks for c in t["cards"]}
    pool = [c for c in deck.deck(rules["spells"]) if c not in seen]
    rng.shuffle(pool)
    for post, place in enumerate(view["table"]):
        if hands[post] is None:
            size = place["hand_size"]
            hands[post], pool = deck.sort_cards(pool[:size]), pool[size:]
    lead = POST_INDEX[view["leader"]] if view["leader"] is not None else None
    chooser = view["to_act"][0] if phase in ("arrange", "choose_leader", "choose_trump", "name_leader") else None
    pending = [owed["choice"] for owed in view["choices_owed"][1:]]
    shown = view["last_trick"]
    last = None if shown is None else {
        "duel": shown["duel"] - 1, "number": shown["number"], "lead": POST_INDEX[shown["leader"]],
        "posts": list(shown["posts"]), "cards": [c["card"] for c in shown["cards"]],
        "winner": POST_INDEX[shown["winner"]], "points": shown["points"],
        "potion_points": shown["potion_points"], "rule": shown["ranking"]}
    history = [{"posts": list(d["posts"]), "points": list(d["team_points"]), "won": list(d["team_tricks"])}
               for d in view["duel_results"]]
    duel = view["duel"] - 1
    draws: list[list] = []
    by_round: dict[int, list] = {}
    for d in view["arrangement"]["draws"]:
        by_round.setdefault(d["round"], []).append([d["seat"], f"{d['element']}-{d['rank']}"])
    draws = [by_round[r] for r in sorted(by_round)]
    state: State = {
        "variant": view["variant"], "seats": seats, "opts": dict(view["options"]),
        "rng": rng.next64(), "phase": phase, "duel": duel, "posts": posts,
        "arranger": view["arrangement"]["arranger"], "draws": draws, "chooser": chooser,
        "last_chooser": None, "hands": hands, "trump": view["trump"], "lead": lead, "trick": trick,
        "tricks": tricks, "last": last, "pending": pending, "points": list(view["team_points"]), "won": list(view["team_tricks"]),
        "scores": list(view["scores"]), "history": history,
    }
    if rules["ritual"] and seats == 2:
        # Who made the last choose_leader choice is not shown; it is re-derived from the public duel results.
        chosen = duel + (0 if phase == "choose_leader" else 1)  # choose_leader actions played so far
        last = None
        for i in range(chosen):
            if i == 0:
                last = state["arranger"]
            else:
                ns, ew = history[i - 1]["points"]
                if ns == ew:
                    last = 1 - last
                else:
                    losing = 0 if ns < ew else 1
                    hp = history[i - 1]["posts"]
                    last = next(s for p, s in enumerate(hp) if s is not None and team_of(p) == losing)
        state["last_chooser"] = last
    return state
