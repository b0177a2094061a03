"""Quidditch, the card game (Mattel, 2001), for two players.

Rules: :mod:`.rules` (read it beside ``seeds/001_7860e6019ee0192e.txt``);
cards: :mod:`.cards` and the JSON data files beside it; house rules:
``docs/rules/quidditch.md``.
"""

from .rules import Quidditch

GAME = Quidditch()

__all__ = ["GAME", "Quidditch"]
