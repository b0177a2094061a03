"""Test support: the tiny high-card game and the set of games the test app hosts."""


def app_games_for_tests() -> dict:
    """The hosted games plus the tiny test game."""
    from service.games import all_games

    from .high_card import GAME

    return {**all_games(), GAME.id: GAME}
