"""Test support: the tiny high-card game and the set of games the test app hosts."""


def app_games_for_tests() -> dict:
    """The hosted games plus the tiny test game."""
    from service.games import all_games

    from .high_card import GAME

    return {**all_games(), GAME.id: GAME}


def open_collection(game, variant: str | None, seats: int | None = None) -> dict:
    """The options that let anonymous seats and bots play ``variant`` of ``game``: ``open_collection`` where
    the match would otherwise be played with owned collections (Casting Stones' Advanced Game), else none."""
    if game.collectibles is None:
        return {}
    options = game.check_options(variant, {}, seats or game.min_seats)
    return {"open_collection": True} if game.collectibles.policy(options) == "owned" else {}
