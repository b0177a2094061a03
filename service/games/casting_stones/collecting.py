"""COLLECTING CASTING STONES: what each player brings to an Advanced Game, themed hands, packs.

Manual section D: "To play an Advanced Game, you and your opponent must each
have 10 Casting Stones and 3 Casting Cards in your Hands. Note: You may play
with more than 3 Casting Cards as long as you and your opponent have agreed to
this and you both play with the same number of Cards." ... "Choose 5 Casting
Stones for your Casting Hand and place the remainder in your Vault."

A collection is brought with one action, canonical lists sorted by id::

    {"type": "bring", "stones": [10 stone ids], "cards": [card ids], "hand": [5 of the stones]}

:func:`bring_problem` says what is wrong with one (or None); the rules accept
any collection it passes. The legal-action list cannot hold every possible
collection, so it offers :func:`themed_hands` (``hands.json``) and a few
collections opened from seeded Starter and Refill packs (:func:`open_pack`,
:func:`generated_collection`, weights in ``packs.json``).

Players also own collections (the service keeps them: service/store/collections.py). For those this
module says what a Starter or Refill Set a player opens holds (:func:`open_set`, a pure function of
the opening's recorded seed), what a ``bring`` needs its player to own (:func:`needs`, :func:`missing`)
and what makes a saved, named hand (:func:`saved_hand_problem`, :func:`saved_hand_action`).

Everything here is pure: the pack generator draws from a :class:`service.engine.Rng`
seeded by the caller.
"""

from __future__ import annotations

import bisect
import itertools
from typing import Any

from service.engine import Rng, load_data

from .cards import CARDS
from .catalogue import ARTIFACT, CHARACTER, CHASER, ELEMENT, STONES

PACKS: dict[str, Any] = load_data(__package__, "packs.json")
THEMES: list[dict[str, Any]] = load_data(__package__, "hands.json")["hands"]

STARTER, REFILL = "starter", "refill"


def _check_themes() -> None:
    for theme in THEMES:
        unknown = [s for s in theme["stones"] + theme["hand"] if s not in STONES]
        unknown += [c for c in theme["cards"] if c not in CARDS]
        if unknown or not set(theme["hand"]) <= set(theme["stones"]):
            raise ValueError(f"hands.json: theme {theme['id']!r} names unknown stones or cards {unknown}, "
                             "or a hand stone it does not bring")


_check_themes()


# -- checking a collection ----------------------------------------------------------------

def bring_problem(action: dict[str, Any], *, stones: int, cards: int, hand: int) -> str | None:
    """What is wrong with a ``bring`` action for a collection of ``stones`` stones, ``cards`` cards and a
    ``hand``-stone Casting Hand, as a sentence for the player; None when it is a valid collection.

    It names only the player's own stones and cards, so it reveals nothing hidden.
    """
    brought, chosen, library = action.get("stones"), action.get("hand"), action.get("cards")
    if not isinstance(brought, list) or not isinstance(chosen, list) or not isinstance(library, list):
        return "A collection lists its stones, its cards and its Casting Hand."
    unknown = [s for s in brought if s not in STONES]
    if unknown:
        return f"No such Casting Stone: {', '.join(map(str, unknown))} (stone ids are in the catalogue)."
    if len(set(brought)) != len(brought):
        return "Each stone of a collection must be a different one."
    if len(brought) != stones:
        return f"Bring exactly {stones} Casting Stones, not {len(brought)} (000: \"10 Casting Stones\")."
    unknown = [c for c in library if c not in CARDS]
    if unknown:
        return f"No such Casting Card: {', '.join(map(str, unknown))}."
    if len(set(library)) != len(library):
        return "Each Casting Card of a collection must be a different one."
    if len(library) != cards:
        return (f"This match is played with {cards} Casting Cards each (\"you both play with the same number of "
                f"Cards\"), not {len(library)}.")
    strays = [s for s in chosen if s not in brought]
    if strays:
        return f"The Casting Hand must come from the stones you bring; {', '.join(map(str, strays))} is not among them."
    if len(set(chosen)) != len(chosen) or len(chosen) != hand:
        return f"Choose exactly {hand} different stones of your collection for your Casting Hand."
    if brought != sorted(brought) or library != sorted(library) or chosen != sorted(chosen):
        return "List the stones, the cards and the Casting Hand each in alphabetical order of their ids."
    return None


def bring_action(stones: list[str], cards: list[str], hand: list[str]) -> dict[str, Any]:
    """A ``bring`` action in canonical form."""
    return {"type": "bring", "stones": sorted(stones), "cards": sorted(cards), "hand": sorted(hand)}


# -- ready-made collections -----------------------------------------------------------------

def _cards_for(preferred: list[str], count: int) -> list[str] | None:
    """``count`` cards: the preferred ones that exist, then the rest of the catalogue in its order."""
    chosen = [c for c in preferred if c in CARDS]
    chosen += [c for c in CARDS if c not in chosen]
    return chosen[:count] if len(chosen) >= count else None


def themed_hands(cards_per_player: int = 3) -> list[dict[str, Any]]:
    """The themed collections of ``hands.json`` for a match of ``cards_per_player`` cards each.

    Each is ``{"id", "title", "description", "action"}``, where ``action`` is the
    ``bring`` action that brings it, ready to send.
    """
    offers = []
    for theme in THEMES:
        cards = _cards_for(theme["cards"], cards_per_player)
        if cards is not None:
            offers.append({"id": theme["id"], "title": theme["title"], "description": theme["description"],
                           "action": bring_action(theme["stones"], cards, theme["hand"])})
    return offers


def _weighted_pick(rng: Rng, candidates: list[str], weight) -> str:
    total = sum(weight(c) for c in candidates)
    ticket = rng.below(total)
    for candidate in candidates:
        ticket -= weight(candidate)
        if ticket < 0:
            return candidate
    raise AssertionError("unreachable")


def _stone_weight(stone_id: str) -> int:
    return PACKS["rarity_weights"][STONES[stone_id].rarity]


#: Each stone's weight in a pack draw (:func:`_stone_weight`), looked up once.
_STONE_WEIGHTS = {stone_id: _stone_weight(stone_id) for stone_id in STONES}
#: Every stone in concordance order, and those of each type: the pools packs draw from.
_BY_N = sorted(STONES, key=lambda s: STONES[s].n)
_BY_N_OF_TYPE = {stone_type: [s for s in _BY_N if STONES[s].type == stone_type]
                 for stone_type in {STONES[s].type for s in _BY_N}}


def _draw_stones(rng: Rng, pool: list[str], count: int) -> list[str]:
    """``count`` different stones of ``pool`` (no stone twice in it), each draw weighted by rarity.

    Each draw is :func:`_weighted_pick` over the stones left, in their order: the first stone whose
    running weight exceeds ``rng.below(total weight)``. The running weights are summed in C and the
    stone found by bisection (the ticket is below the running total there for the first time); generated
    collections, opened pack after pack in every Advanced Game's legal actions, spent most of their time
    here."""
    pool = list(pool)
    weights = [_STONE_WEIGHTS[stone] for stone in pool]
    drawn = []
    for _ in range(min(count, len(pool))):
        running = list(itertools.accumulate(weights))
        index = bisect.bisect_right(running, rng.below(running[-1]))
        drawn.append(pool.pop(index))
        del weights[index]
    return drawn


def open_pack(rng: Rng, kind: str, owned_cards: list[str] = ()) -> dict[str, list[str]]:
    """Open one Starter or Refill pack: ``{"stones": [...], "cards": [...]}``.

    Starter (000: "12 Casting Stones (2 Silver, 4 White, 6 Brown)" and "the same two Casting Cards"): stones
    of each colour by rarity, no Chaser; the cards marked ``starter``. Refill ("4 Casting Stones and 1 Casting
    Card"): any stones by rarity, Chasers included; one card, by rarity, that is not a starter card and not
    in ``owned_cards`` when there is one (else any card not owned), so collections grow.
    """
    if kind == STARTER:
        stones = []
        for stone_type, count in PACKS["starter"]["stones"].items():
            stones += _draw_stones(rng, _BY_N_OF_TYPE.get(stone_type, []), count)
        return {"stones": stones, "cards": [c for c in CARDS if CARDS[c].starter]}
    stones = _draw_stones(rng, _BY_N, PACKS["refill"]["stones"])
    cards = []
    for _ in range(PACKS["refill"]["cards"]):
        fresh = [c for c in CARDS if c not in owned_cards and c not in cards]
        candidates = [c for c in fresh if not CARDS[c].starter] or fresh
        if candidates:
            cards.append(_weighted_pick(rng, candidates, lambda c: PACKS["rarity_weights"][CARDS[c].rarity]))
    return {"stones": stones, "cards": cards}


def open_packs(seed: int, starters: int = 1, refills: int = 1) -> list[dict[str, Any]]:
    """Open ``starters`` Starter and then ``refills`` Refill packs from ``seed``, for a pack-opening query:
    ``[{"kind": "starter"|"refill", "stones": [...], "cards": [...]}, ...]``. Refill cards avoid the cards already
    opened, as a growing collection would."""
    rng = Rng(seed)
    opened: list[dict[str, Any]] = []
    owned: list[str] = []
    for kind in [STARTER] * starters + [REFILL] * refills:
        pack = open_pack(rng, kind, owned)
        owned += [c for c in pack["cards"] if c not in owned]
        opened.append({"kind": kind, **pack})
    return opened


def _best(stones: list[str]) -> list[str]:
    """Highest number first, then concordance order."""
    return sorted(stones, key=lambda s: (-STONES[s].number, STONES[s].n))


def generated_collection(seed: int, cards_per_player: int = 3, *, stones: int = 10, hand: int = 5
                         ) -> dict[str, Any]:
    """The ``bring`` action of a collection opened from seeded packs: one Starter and as many Refills as it
    takes to hold ``stones`` different stones and ``cards_per_player`` cards (000: "Both you and your opponent
    will need to buy at least one Refill Set apiece to play the Advanced Game").

    The Casting Hand is built to cast Spells: the best character, artifact and element (a Chaser stands in for
    a missing one, being wild), then the two best other stones; the collection adds the next best stones.
    """
    rng = Rng(seed)
    opened = open_pack(rng, STARTER)
    owned_stones, owned_cards = list(opened["stones"]), list(opened["cards"])
    refills = 0
    while refills < 1 or len(set(owned_stones)) < stones or len(owned_cards) < cards_per_player:
        refills += 1
        if refills > 50:
            raise ValueError(f"no collection of {stones} stones and {cards_per_player} cards in 50 Refill packs")
        pack = open_pack(rng, REFILL, owned_cards)
        owned_stones += pack["stones"]
        owned_cards += [c for c in pack["cards"] if c not in owned_cards]
    ranked = _best(list(dict.fromkeys(owned_stones)))
    chosen: list[str] = []
    for stone_type in (CHARACTER, ARTIFACT, ELEMENT):
        pick = next((s for s in ranked if STONES[s].type == stone_type and s not in chosen), None)
        pick = pick or next((s for s in ranked if STONES[s].type == CHASER and s not in chosen), None)
        if pick:
            chosen.append(pick)
    chosen += [s for s in ranked if s not in chosen][:hand - len(chosen)]
    brought = chosen + [s for s in ranked if s not in chosen][:stones - hand]
    return bring_action(brought, owned_cards[:cards_per_player], chosen)


# -- collections players own ------------------------------------------------------------------

#: The two kinds of collectible, as a collection, a trade and a ``not_in_collection`` answer name them.
STONE_KIND, CARD_KIND = "stones", "cards"
KINDS = (STONE_KIND, CARD_KIND)
#: Sets a player can open (000: "Starter Set", "Refill Sets").
SET_KINDS = (STARTER, REFILL)
#: Stones and Casting Hand of a saved hand (000, D: "10 Casting Stones and 3 Casting Cards in your Hands";
#: "Choose 5 Casting Stones for your Casting Hand"), and the fewest cards it may list.
HAND_STONES, HAND_SIZE, HAND_MIN_CARDS = 10, 5, 3


def open_set(seed: int, kind: str) -> dict[str, list[str]]:
    """What the Starter or Refill Set a player opens holds: ``{"stones": [...], "cards": [...]}``.

    A pure function of the opening's ``seed`` (recorded with it, so anyone can open it again) and ``kind``:
    :func:`open_pack` on a fresh :class:`~service.engine.Rng` of the match RNG's family, with no owned cards --
    so a Refill's card is drawn by rarity among the cards that are not starter cards, and a player can
    open duplicates to trade, as with stones.
    """
    if kind not in SET_KINDS:
        raise ValueError(f"no set kind {kind!r}")
    return open_pack(Rng(seed), kind)


def counts(stones: list[str] = (), cards: list[str] = ()) -> dict[str, dict[str, int]]:
    """Item lists as counts per kind: ``{"stones": {id: n}, "cards": {id: n}}``."""
    tally: dict[str, dict[str, int]] = {STONE_KIND: {}, CARD_KIND: {}}
    for kind, items in ((STONE_KIND, stones), (CARD_KIND, cards)):
        for item in items:
            tally[kind][item] = tally[kind].get(item, 0) + 1
    return tally


def unknown_items(items: dict[str, dict[str, int]]) -> list[str]:
    """The ids in ``items`` (counts per kind) that are no stone or card of the catalogue."""
    known = {STONE_KIND: STONES, CARD_KIND: CARDS}
    return [f"{kind[:-1]} {item!r}" for kind in KINDS for item in items.get(kind, {}) if item not in known[kind]]


def needs(action: dict[str, Any]) -> dict[str, dict[str, int]]:
    """What a valid ``bring`` action needs its player to own: one of each stone and card it brings.
    Bringing does not use them up (000, D: the Hand is built from the collection, not spent)."""
    return counts(action.get("stones", []), action.get("cards", []))


def missing(needed: dict[str, dict[str, int]], owned: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """What of ``needed`` ``owned`` lacks, per kind and id (empty kinds kept): all zeros is nothing missing."""
    return {kind: {item: count - owned.get(kind, {}).get(item, 0)
                   for item, count in sorted(needed.get(kind, {}).items())
                   if count > owned.get(kind, {}).get(item, 0)}
            for kind in KINDS}


def saved_hand_problem(stones: Any, cards: Any, hand: Any) -> str | None:
    """What is wrong with a hand a player saves to bring by name, as a sentence; None when it is one.

    A saved hand is what a ``bring`` of the Advanced Game lists: 10 different stones and the 5 of them in
    the Casting Hand, with at least 3 different cards in the order the player prefers them (a match of
    ``cards_per_player`` cards takes the first ones: :func:`saved_hand_action`)."""
    if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
        return "List the hand's Casting Cards by id."
    if not HAND_MIN_CARDS <= len(cards) <= len(CARDS):
        return (f"A saved hand lists {HAND_MIN_CARDS} to {len(CARDS)} different Casting Cards (000, D: \"3 "
                f"Casting Cards\"; more for matches played with more), not {len(cards)}.")
    if not isinstance(stones, list) or not isinstance(hand, list):
        return "A saved hand lists its stones, its cards and its Casting Hand."
    action = {"stones": sorted(stones, key=str), "cards": sorted(cards, key=str), "hand": sorted(hand, key=str)}
    return bring_problem(action, stones=HAND_STONES, cards=len(cards), hand=HAND_SIZE)


def saved_hand_action(stones: list[str], cards: list[str], hand: list[str], cards_per_player: int
                      ) -> dict[str, Any] | None:
    """The ``bring`` action of a saved hand in a match of ``cards_per_player`` cards (its first ones, in the
    player's order); None when the hand lists fewer cards than the match is played with."""
    if len(cards) < cards_per_player:
        return None
    return bring_action(stones, cards[:cards_per_player], hand)
