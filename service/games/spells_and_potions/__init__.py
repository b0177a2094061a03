"""Spells and Potions, the trick-taking game for 2 to 4 wizards (rule book
004_3d98a563beabace2.txt). The rules are in :mod:`.rules`, cards in
:mod:`.deck`, seating in :mod:`.table` and trick-taking in :mod:`.tricks`."""

from .rules import GAME, SpellsAndPotions

__all__ = ["GAME", "SpellsAndPotions"]
