"""The games Grimoire hosts, one package each, readable beside its rule book."""

from service.engine import Game

from . import casting_stones, quidditch, sorcerers_stone, spells_and_potions


def all_games() -> dict[str, Game]:
    """Every hosted game by id, in the order they are listed to clients."""
    games: list[Game] = [casting_stones.GAME, quidditch.GAME, spells_and_potions.GAME, sorcerers_stone.GAME]
    return {game.id: game for game in games}
