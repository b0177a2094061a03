"""The Sorcerer's Stone board game for 2 to 4 players (rule book
002_5ac5154540885c00.txt): six challenges and the Mirror of Erised, played in
order or one at a time. The match is in :mod:`.game`; each board is a module
of its own (see :mod:`.board` for what a board provides)."""

from .game import GAME, SorcerersStone

__all__ = ["GAME", "SorcerersStone"]
