"""Which versions of each game's rules this process has: the current ones and any kept installed beside them.

A match records its game's :attr:`~service.engine.Game.rules_version` at creation and is only ever
played, viewed or replayed with that version. The current version of a game is the one its package
ships (``service/games/<game>/``); new matches get it. Older versions, kept for the matches still in
progress when a rules change is rolled out, are separate distributions installed side by side: each
declares an entry point in the group :data:`ENTRY_POINT_GROUP` whose object is a
:class:`~service.engine.Game` (``grimoire freeze-rules`` writes one from a game's current package;
docs/operations.md, "Rolling out a rules change").
"""

from __future__ import annotations

import functools
from importlib import metadata

from .game import Game

#: The entry-point group of rules versions installed beside the current ones.
ENTRY_POINT_GROUP = "grimoire.rules"
#: The version of a match stored before matches recorded one: every game's first version, which is
#: the rules those matches were created with.
LEGACY_RULES_VERSION = "1"


class RulesPackageError(RuntimeError):
    """An installed rules version that cannot be used (stops the start-up, naming the entry point)."""


@functools.cache
def installed_extra() -> tuple[Game, ...]:
    """The games of every ``grimoire.rules`` entry point installed in this environment (read once)."""
    extra = []
    for entry in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            game = entry.load()
        except Exception as error:  # a broken package must not be skipped silently: its matches would stall
            raise RulesPackageError(f"rules entry point {entry.name!r} ({entry.value}) cannot be loaded: "
                                    f"{error}") from error
        if not isinstance(game, Game) or not game.id or not game.rules_version:
            raise RulesPackageError(f"rules entry point {entry.name!r} ({entry.value}) is not a Game with an id "
                                    "and a rules_version")
        extra.append(game)
    return tuple(extra)


def rules_by_version(current: dict[str, Game]) -> dict[tuple[str, str], Game]:
    """Every (game id, rules version) this process can play: ``current`` (the games new matches get)
    and the installed older versions of those games. A current version wins over an installed copy."""
    rules = {(game.id, game.rules_version): game for game in installed_extra() if game.id in current}
    rules.update({(game.id, game.rules_version): game for game in current.values()})
    return rules
