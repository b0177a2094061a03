"""The contract of a game whose players own collectibles (Casting Stones: stones and cards).

A game with collectibles sets :attr:`service.engine.Game.collectibles` to an object of this shape. The
service keeps each player's collection (counts per kind and item id: service/store/collections.py) and asks
the game everything that is a rule: what a set holds, what an action needs its player to own, what makes a
saved hand, how complete a collection is. The game never sees a collection store, so its rules stay pure.

Shapes:

``Items``
    ``{kind: {item id: count}}`` for every kind in :attr:`Collectibles.kinds`, e.g.
    ``{"stones": {"harry-potter": 2}, "cards": {"charms": 1}}``.
``Hand``
    ``{"stones": [...], "cards": [...], "hand": [...]}``: a hand a player saves to bring by name.
"""

from __future__ import annotations

from typing import Any

Items = dict[str, dict[str, int]]


class Collectibles:
    """What a game with collectibles tells the service. Every method is pure."""

    #: The kinds of item a collection holds (keys of ``Items``).
    kinds: tuple[str, ...] = ()
    #: The sets a player can open, and those a player opens once only (a starter set).
    set_kinds: tuple[str, ...] = ()
    once_per_player: tuple[str, ...] = ()

    def open_set(self, seed: int, kind: str) -> dict[str, list[str]]:
        """What a set of ``kind`` opened with ``seed`` holds (kind -> item ids, repeats allowed): a pure
        function of the two, so that an opening can be checked from its recorded seed."""
        raise NotImplementedError

    def unknown_items(self, items: Items) -> list[str]:
        """The items of ``items`` the game does not know, named for a person (empty: all known)."""
        raise NotImplementedError

    def policy(self, options: dict[str, Any]) -> str | None:
        """How a match with these (full) options treats collections: ``"owned"`` (every seat is a player's
        and brings only what that player owns: :meth:`needs`), ``"open"`` (any seat brings anything: for
        unrated matches only) or None (the match uses no collectibles)."""
        raise NotImplementedError

    def needs(self, options: dict[str, Any], action: dict[str, Any]) -> Items | None:
        """What the acting seat's player must own for a legal ``action`` in a match with ``options``; None:
        nothing (the action uses no collectible, or the match is not played with owned collections)."""
        raise NotImplementedError

    def hand_problem(self, hand: dict[str, Any]) -> str | None:
        """Why ``hand`` cannot be saved, as a sentence; None when it can."""
        raise NotImplementedError

    def hand_needs(self, hand: dict[str, Any]) -> Items:
        """What a player must own to save (and bring) a valid ``hand``."""
        raise NotImplementedError

    def hand_action(self, options: dict[str, Any], hand: dict[str, Any]) -> dict[str, Any]:
        """The action that brings a saved ``hand`` into a match with ``options``; raises a RuleError
        (``illegal_action``) saying why when it cannot be brought there."""
        raise NotImplementedError

    def listed(self, items: Items) -> dict[str, list[dict[str, Any]]]:
        """``items`` as the APIs list them: kind -> ``[{"id", "count"}]`` in catalogue order, no zeros."""
        raise NotImplementedError

    def progress(self, items: Items) -> dict[str, Any]:
        """Collectors' view of a collection: completion per rarity, what is missing, the duplicates."""
        raise NotImplementedError
