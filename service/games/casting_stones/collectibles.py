"""Casting Stones' collectibles, as the service asks for them (service/engine/collectibles.py).

The rules are in :mod:`.collecting` (sets, what a ``bring`` needs, saved hands) and :mod:`.collectors`
(collectors' views); this class is how the service reaches them. Which matches are played with owned
collections: the Advanced Game ("In order to play the Advanced Game you will need to collect additional
Casting Stones and Casting Cards to build up your Casting Hand", 000), unless the match is an
``open_collection`` one (docs/rules/casting-stones.md, "Collections").
"""

from __future__ import annotations

from typing import Any

from service.engine import IllegalAction
from service.engine.collectibles import Collectibles, Items

from . import collecting, collectors
from .catalogue import VARIANTS


class StoneCollectibles(Collectibles):
    kinds = collecting.KINDS
    set_kinds = collecting.SET_KINDS
    once_per_player = (collecting.STARTER,)

    def open_set(self, seed: int, kind: str) -> dict[str, list[str]]:
        return collecting.open_set(seed, kind)

    def unknown_items(self, items: Items) -> list[str]:
        return collecting.unknown_items(items)

    def policy(self, options: dict[str, Any]) -> str | None:
        variant = VARIANTS.get(options.get("variant", ""))
        if variant is None or not variant.brings_collections:
            return None
        return "open" if options.get("open_collection") else "owned"

    def needs(self, options: dict[str, Any], action: dict[str, Any]) -> Items | None:
        if action.get("type") != "bring" or self.policy(options) != "owned":
            return None
        return collecting.needs(action)

    def hand_problem(self, hand: dict[str, Any]) -> str | None:
        return collecting.saved_hand_problem(hand.get("stones"), hand.get("cards"), hand.get("hand"))

    def hand_needs(self, hand: dict[str, Any]) -> Items:
        return collecting.counts(hand["stones"], hand["cards"])

    def hand_action(self, options: dict[str, Any], hand: dict[str, Any]) -> dict[str, Any]:
        variant = VARIANTS.get(options.get("variant", ""))
        if variant is None or not variant.brings_collections:
            raise IllegalAction("Only the Advanced Game is played with hands brought from a collection.")
        cards = options.get("cards_per_player", 3)
        action = collecting.saved_hand_action(hand["stones"], hand["cards"], hand["hand"], cards)
        if action is None:
            raise IllegalAction(f"This match is played with {cards} Casting Cards each; the hand lists "
                                f"{len(hand['cards'])}.")
        return action

    def listed(self, items: Items) -> dict[str, list[dict[str, Any]]]:
        return collectors.items(items)

    def progress(self, items: Items) -> dict[str, Any]:
        return collectors.progress(items)
