"""``grimoire freeze-rules GAME DIR``: keep a game's current rules installable beside newer ones.

A match is played only with the rules version it was created with (service/engine/versions.py). To roll
out a rules change while matches of the old version are in progress, the new release keeps the old
version installed: this command, run with the old release, copies the game's package as it is now into
``DIR`` under a module name of its own (``grimoire_rules_<game>_<version>``), with a ``.dist-info`` that
declares it in the ``grimoire.rules`` entry-point group -- the layout ``pip install --target`` makes. Put
``DIR`` on ``PYTHONPATH`` (or copy its contents into site-packages) of the new release's processes and
they play both versions. docs/operations.md, "Rolling out a rules change", has the whole procedure.

The copy works because a game package imports only :mod:`service.engine` and itself (relatively) and
reads its data files through its own package name.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from importlib import import_module
from pathlib import Path

from service.engine.versions import ENTRY_POINT_GROUP


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()


def module_name(game_id: str, rules_version: str) -> str:
    """The module a frozen rules version is importable as."""
    return f"grimoire_rules_{_safe(game_id)}_{_safe(rules_version)}"


def freeze(game_id: str, target: Path) -> Path:
    """Copy ``game_id``'s current package into ``target`` as an installed distribution; return its module dir."""
    from service.games import all_games

    games = all_games()
    if game_id not in games:
        raise SystemExit(f"grimoire freeze-rules: there is no game {game_id!r} (games: {', '.join(games)})")
    game = games[game_id]
    package = type(game).__module__.rsplit(".", 1)[0]
    source = Path(import_module(package).__file__).parent
    module = module_name(game.id, game.rules_version)
    destination = target / module
    if destination.exists():
        raise SystemExit(f"grimoire freeze-rules: {destination} exists already ({game.id} rules version "
                         f"{game.rules_version} is frozen there)")
    target.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    distribution = f"grimoire_rules_{_safe(game.id)}_{_safe(game.rules_version)}"
    info = target / f"{distribution}-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0\n"
        f"Summary: {game.title} rules version {game.rules_version}, frozen from {package} by grimoire "
        "freeze-rules\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\n{game.id}-{_safe(game.rules_version)} = {module}:GAME\n", encoding="utf-8")
    (info / "top_level.txt").write_text(f"{module}\n", encoding="utf-8")
    return destination


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", help="the game's id, e.g. quidditch")
    parser.add_argument("directory", help="where to write it (put it on PYTHONPATH, or copy it into site-packages)")


def run(args: argparse.Namespace) -> int:
    destination = freeze(args.game, Path(args.directory))
    print(f"wrote {destination} and its .dist-info: {args.game} rules as they are now, entry point group "
          f"{ENTRY_POINT_GROUP}", file=sys.stdout)
    return 0
