"""Casting Stones: a full state rebuilt from one seat's view (:meth:`Game.determinise`).

Almost everything is on the table. Hidden from ``seat``: the RNG state (a
fresh random value here, so future casts are sampled), the order of the
Intermediate set-up's face-down cards (shuffled), and in the Advanced Game
the other player's private Vault (stones and cards drawn at random from those
the other player could hold, keeping its public sizes) and, until both have
brought, the other player's collection (a themed collection stands in) and
the pack seeds (fresh).

A few facts the view does not spell out are re-derived from public ones: the
Seconds progress (``done``), the queue of card bonuses still to take (from the
last turn's used cards and bonus actions), and the cast history of streak
cards (the last compared turn's casts only; older turns are not shown).
"""

from __future__ import annotations

from typing import Any

from service.engine import Rng, State

from .cards import CARDS, LONGEST_STREAK, OF_CARDS
from .casts import LEANER, NUMBER, SYMBOL, UNCAST
from .catalogue import STONES, VARIANTS
from .collecting import bring_action, themed_hands

_FACE_CODES = {"symbol": SYMBOL, "number": NUMBER, "leaner": LEANER, "uncast": UNCAST}
UNDECIDED, KEPT, RECAST = 0, 1, 2
_SETUP = ("pick", "library", "bring")
_BEFORE_COMPARE = ("cast", "tip", "declare", "seconds")


def _action(shown: dict[str, Any] | None) -> dict[str, Any] | None:
    if shown is None:
        return None
    return {k: v for k, v in shown.items() if v is not None}


def determinise(game, view: dict[str, Any], seat: int, rng: Rng) -> State:
    rules = VARIANTS[view["variant"]]
    phase = view["phase"]
    players = view["players"]
    to_act = view["to_act"]
    first = view["first_caster"]
    last_view = view["last_turn"]
    bring_phase = phase == "bring"

    hands = [[h["id"] for h in players[s]["hand"]] for s in (0, 1)]
    if phase in _SETUP:
        faces = ["", ""]
    else:
        faces = ["".join(_FACE_CODES[h["face"]] for h in players[s]["hand"]) for s in (0, 1)]
    done = [RECAST if players[s]["recast"] else UNDECIDED for s in (0, 1)]
    if phase in _BEFORE_COMPARE:
        if done[first] == UNDECIDED and ((phase == "seconds" and to_act == [1 - first]) or done[1 - first] == RECAST):
            done[first] = KEPT
    elif phase not in _SETUP:
        done = [d if d == RECAST else KEPT for d in done]

    last = None
    if last_view is not None:
        last = {"turn": last_view["turn"], "winner": last_view["winner"],
                "kinds": [c["kind"] for c in last_view["casts"]], "powers": [c["power"] for c in last_view["casts"]],
                "counter": list(last_view["counter_spells"]),
                "cards": [[c["seat"], c["card"]] for c in last_view["cards"]],
                "void": last_view["void"], "action": _action(last_view["action"]),
                "replacement": last_view["replacement"], "bonus": [_action(a) for a in last_view["bonus_actions"]]}

    victory = view["victory"]
    state: State = {
        "v": rules.id, "opt": dict(view["options"]), "rng": 0, "ph": phase,
        "act": None if bring_phase or not to_act else to_act[0],
        "turn": view["turn"], "first": first,
        "pool": [x["id"] for x in view["pool"]],
        "hands": hands,
        "vault": [[x["id"] for x in view["vault"]]] if rules.shared_vault else [[], []],
        "faces": faces, "done": done,
        "gems": [t["seat"] for t in view["turrets"]],
        "line": [p["gems_in_line"] for p in players],
        "vic": None if victory is None else {"seat": victory["seat"], "kind": victory["kind"]},
        "bq": [], "knocked": view["knocked"], "last": last,
        "winner": view["winner"], "end": None if view["end"] == "none" else view["end"],
    }
    if rules.library or rules.brings_collections:
        keep = LONGEST_STREAK - 1
        hist = [[last["kinds"][s]][-keep:] if last is not None and keep > 0 else [] for s in (0, 1)]
        state.update(lib=[[c["id"] for c in p["library"]] for p in players],
                     down=[[c["id"] for c in p["used_cards"]] for p in players], hist=hist)
        if last is not None and phase not in _SETUP:
            state["bq"] = _bonus_queue(state, view, rules)
    if rules.library:
        deck = list(rules.library) if view["face_down_cards"] else []
        rng.shuffle(deck)
        state["deck"] = deck
    if rules.wild_chasers:
        state["decl"] = [{h["id"]: h["declared"] for h in players[s]["hand"] if h["declared"] != "none"}
                         for s in (0, 1)]
    if rules.brings_collections:
        _private_vaults(state, view, seat, rng)
    state["rng"] = rng.next64()
    return state


def _bonus_queue(state: State, view: dict[str, Any], rules) -> list[dict[str, Any]]:
    """The card bonuses still owed this turn, replayed from the last turn's used cards and bonus actions."""
    last = state["last"]
    if last["turn"] != state["turn"] or state["ph"] in ("over",):
        return []
    queue = []
    for s, card_id in last["cards"]:
        if last["counter"][s] == card_id:
            continue  # turned as a Counter Spell (it may also have worked; not shown, taken as not)
        for i, step in enumerate(CARDS[card_id].effect):
            if rules.card_actions or set(step.of) - {OF_CARDS}:
                queue.append({"seat": s, "card": card_id, "step": i, "left": step.count})
    for action in last["bonus"]:
        if not queue or action["type"] == "replace":
            continue
        if action["type"] == "pass":   # a match stored while a bonus could still be declined
            head = queue[0]
            queue = [q for q in queue if (q["seat"], q["card"]) != (head["seat"], head["card"])]
            continue
        queue[0]["left"] -= 1
        if queue[0]["left"] == 0:
            queue.pop(0)
    bonus = view["bonus"]
    if bonus is not None:
        while queue and (queue[0]["seat"], queue[0]["card"]) != (bonus["seat"], bonus["card"]):
            queue.pop(0)  # a step with nothing to act on passed by itself
        if not queue:
            queue = [{"seat": bonus["seat"], "card": bonus["card"], "step": 0, "left": bonus["left"]}]
        queue[0]["left"] = bonus["left"]
    return queue


def _private_vaults(state: State, view: dict[str, Any], seat: int, rng: Rng) -> None:
    """Advanced Game: own Vault as shown, the other's sampled; collections while bringing; pack seeds."""
    players = view["players"]
    opp = 1 - seat
    mine = players[seat]
    state["vault"][seat] = [x["id"] for x in mine["vault"]]
    state["vc"] = [[], []]
    state["vc"][seat] = [c["id"] for c in mine["vault_cards"]]
    theirs = players[opp]
    stones = [s for s in sorted(STONES) if s not in state["hands"][opp]]
    rng.shuffle(stones)
    state["vault"][opp] = stones[:theirs["vault_size"]]
    cards = [c for c in sorted(CARDS) if c not in state["lib"][opp] and c not in state["down"][opp]]
    rng.shuffle(cards)
    state["vc"][opp] = cards[:theirs["vault_card_count"]]
    state["pk"] = None
    state["br"] = [None, None]
    if view["phase"] == "bring":
        state["pk"] = [rng.next64(), rng.next64()]
        state["hands"] = [[], []]
        state["vault"] = [[], []]
        state["lib"] = [[], []]
        if mine["ready"]:
            state["br"][seat] = bring_action([h["id"] for h in mine["hand"]] + [x["id"] for x in mine["vault"]],
                                             [c["id"] for c in mine["library"]], [h["id"] for h in mine["hand"]])
        if theirs["ready"]:
            offers = [offer["action"] for offer in themed_hands(view["options"]["cards_per_player"])]
            pick = offers[rng.below(len(offers))]
            state["br"][opp] = bring_action(pick["stones"], pick["cards"], pick["hand"])
