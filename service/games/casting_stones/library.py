"""Setting up the Casting Cards: the Intermediate Library deal and the Advanced collections.

THE LIBRARY (section C): "after you and your opponent have chosen your Casting
Stones, divide the Casting Cards. Place the Cards face-down on the table and
have the youngest player select one. The oldest player takes the remaining
Card. Both players place them face-up in front of them. This is called the
Library."

CASTING HANDS (ADVANCED) and THE VAULT (ADVANCED) (section D): each player
brings 10 stones and 3 (or more, by agreement) cards, chooses 5 stones for the
Casting Hand and places "the remainder in your Vault"; "Set up the game the
same way you would for Intermediate play. This time, instead of 1 Casting Card
you will have at least 3 Casting Cards face-up in your Library." Both players
bring at once; neither sees what the other brings until both have, and then
only the Casting Hands and Libraries are shown: "What is stored in your Vault
is for you and you alone."
"""

from __future__ import annotations

import hashlib
from typing import Any

from service.engine import Action, Event, Rng, State

from .catalogue import VariantRules
from .collecting import PACKS, bring_action, bring_problem, generated_collection, themed_hands


# -- Intermediate: the face-down deal --------------------------------------------------------

def offer_library(state: State, rules: VariantRules, events: list[Event]) -> None:
    """Shuffle the variant's cards face-down for the youngest (seat 0) to choose from.

    The order is drawn from the match RNG and kept only in the state (``deck``):
    views show how many cards lie face-down, never which is which.
    """
    rng = Rng(state["rng"])
    deck = list(rules.library)
    rng.shuffle(deck)
    state["rng"] = rng.state
    state["deck"] = deck
    events.append({"type": "library_offered", "face_down": len(deck)})


def take_card(state: State, seat: int, slot: int, events: list[Event]) -> None:
    """``seat`` takes the face-down card at ``slot``; "The oldest player takes the remaining Card"."""
    deck = state["deck"]
    state["lib"][seat].append(deck.pop(slot))
    state["lib"][1 - seat].extend(deck)
    state["deck"] = []
    # "Both players place them face-up in front of them": from here on the Libraries are public.
    events.append({"type": "library_dealt", "seat": seat, "slot": slot, "libraries": [list(x) for x in state["lib"]]})


# -- Advanced: bringing a collection ----------------------------------------------------------

def pack_seeds(rng_state: int) -> list[int]:
    """The seeds of each seat's pack generator, one-way derived from the match RNG.

    The generated collections are shown to their seat as legal actions, and a
    SplitMix64 output reveals its state; hashing keeps the match RNG (and so
    every future cast) out of reach.
    """
    return [int.from_bytes(hashlib.sha256(f"casting-stones/packs/{rng_state}/{seat}".encode()).digest()[:8], "big")
            for seat in (0, 1)]


def bring_offers(state: State, seat: int, rules: VariantRules) -> list[Action]:
    """The ready-made collections offered to ``seat``: the themed hands, then collections opened from
    ``seat``'s own seeded packs. Any other valid collection is accepted too (:func:`problem`)."""
    cards = state["opt"]["cards_per_player"]
    offers = [offer["action"] for offer in themed_hands(cards)]
    rng = Rng(state["pk"][seat])
    for _ in range(PACKS["offered"]):
        action = generated_collection(rng.next64(), cards, stones=rules.collection_size, hand=rules.hand_size)
        if action not in offers:
            offers.append(action)
    return offers


def problem(state: State, action: Action, rules: VariantRules) -> str | None:
    """What is wrong with a ``bring`` action in this match, or None."""
    return bring_problem(action, stones=rules.collection_size, cards=state["opt"]["cards_per_player"],
                         hand=rules.hand_size)


def bring(state: State, seat: int, action: Action, events: list[Event]) -> bool:
    """Record ``seat``'s collection, hidden from the other seat. Returns True once both are in."""
    state["br"][seat] = bring_action(action["stones"], action["cards"], action["hand"])
    detail = {k: v for k, v in state["br"][seat].items() if k != "type"}
    # The collection is secret until the table is set: a private event for its owner, a public twin without it.
    events.append({"type": "brought", "seat": seat, **detail, "audience": [seat]})
    events.append({"type": "brought", "seat": seat})
    return all(b is not None for b in state["br"])


def set_table(state: State, events: list[Event]) -> None:
    """Both collections are in: Casting Hands and Libraries go on the table, the rest into private Vaults."""
    for seat, brought in enumerate(state["br"]):
        state["hands"][seat] = list(brought["hand"])
        state["vault"][seat] = [s for s in brought["stones"] if s not in brought["hand"]]
        state["lib"][seat] = list(brought["cards"])
        events.append({"type": "vaulted", "seat": seat, "stones": list(state["vault"][seat]), "audience": [seat]})
    state["br"] = [None, None]
    state["pk"] = None
    events.append({"type": "table_set", "hands": [list(h) for h in state["hands"]],
                   "libraries": [list(x) for x in state["lib"]],
                   "vault_sizes": [len(v) for v in state["vault"]]})


def pending_collection(state: State, seat: int) -> dict[str, Any] | None:
    """``seat``'s collection while waiting for the other player (for its own view only)."""
    return state["br"][seat]
