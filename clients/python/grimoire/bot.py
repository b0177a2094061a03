"""``grimoire bot``: play one match with a strategy of your own, ``module:function``.

``function(view, legal_actions)`` gets the seat's view (the game's JSON, as ``GET /v1/matches/{id}`` gives
it) and the seat's legal actions, and returns one of them. The runner joins a match (``--match``, and
``--seat`` to choose the seat) or creates one (``--against LEVEL`` gives each other seat to a server bot;
without it the match waits for other players to join), then waits for its turns over the turn stream,
plays each, and prints the result. A dropped stream is opened again, and an action whose answer was lost
is sent again with the same idempotency key: the runner plays through a restart of the service.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from pathlib import Path

from grimoire.client import Client, Retry, Seat, Strategy
from grimoire.errors import GrimoireError, MatchFinished, NotYourTurn
from grimoire.models import Bot

log = logging.getLogger("grimoire.bot")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``grimoire bot`` (service/cli.py registers the command)."""
    parser.add_argument("--url", required=True, help="the service, e.g. http://127.0.0.1:8000")
    parser.add_argument("--game", required=True, help="a game id (GET /v1/games), e.g. spells-and-potions")
    parser.add_argument("--variant", default=None, help="the variant of a match created (default: the game's)")
    parser.add_argument("--match", default=None, help="join this match instead of creating one")
    parser.add_argument("--seat", type=int, default=None, help="the seat to join (default: the lowest free one)")
    parser.add_argument("--against", action="append", default=[], metavar="LEVEL",
                        help="creating: give another seat to a server bot of LEVEL (repeat for more seats)")
    parser.add_argument("--name", default="grimoire bot", help="the name shown at the seat")
    parser.add_argument("--give-up-after", type=float, default=300.0, metavar="SECONDS",
                        help="how long an unreachable service is waited for (a restart), default 300")
    parser.add_argument("--strategy", required=True, metavar="MODULE:FUNCTION",
                        help="function(view, legal_actions) -> action; MODULE is imported from the current directory")


def load_strategy(spec: str) -> Strategy:
    """The function named by ``module:function`` (``package.module:function``), the current directory on the path."""
    module_name, _, function_name = spec.partition(":")
    if not module_name or not function_name:
        raise ValueError(f"--strategy takes module:function, not {spec!r}")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # as `python -m` would: the bot's own module beside the caller
    function = getattr(importlib.import_module(module_name), function_name)
    if not callable(function):
        raise ValueError(f"{spec} is not a function")
    strategy: Strategy = function
    return strategy


def take_seat(client: Client, args: argparse.Namespace) -> Seat:
    """Join ``args.match``, or create a match of ``args.game`` (other seats to ``--against`` bots) and take seat 0."""
    if args.match is not None:
        seat = client.join(args.match, args.name, seat=args.seat)
        game = seat.view().game
        if game != args.game:
            raise GrimoireError(f"match {args.match} is a match of {game}, not {args.game}")
        return seat
    bots = [Bot(level, seat=index + 1) for index, level in enumerate(args.against)]
    match = client.create_match(args.game, variant=args.variant, seats=len(bots) + 1 if bots else None, bots=bots)
    seat = client.join(match.id, args.name, seat=0)
    if not bots:
        print(f"match {match.id} waits for players: POST /v1/matches/{match.id}/seats", flush=True)
    return seat


def play(seat: Seat, strategy: Strategy) -> None:
    """Play ``seat``'s turns until the match is over."""
    for notice in seat.turns():
        if not notice.your_turn:
            continue
        try:
            accepted = seat.play_turn(strategy)
        except NotYourTurn:  # another seat's simultaneous action moved the match on: a notice follows if ours
            continue
        except MatchFinished:
            return
        if accepted is not None:
            log.info("match %s: played version %d", seat.match_id, accepted.version)


def run(args: argparse.Namespace) -> int:
    """``grimoire bot``: exit status 0 once the match is over, 1 if the service refused or was lost."""
    strategy = load_strategy(args.strategy)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request would drown the bot's own
    try:
        with Client(args.url, retry=Retry(within=args.give_up_after)) as client:
            seat = take_seat(client, args)
            print(f"playing seat {seat.index} of match {seat.match_id}", flush=True)
            play(seat, strategy)
            match = seat.view()
    except GrimoireError as error:
        print(f"grimoire bot: {error}", file=sys.stderr)
        return 1
    print(json.dumps({"match": match.id, "status": match.status, "result": match.result}), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``grimoire-bot``: the same command for those who installed the client alone (clients/python/)."""
    parser = argparse.ArgumentParser(prog="grimoire-bot", description=__doc__.split("\n", 1)[0].strip("`: "))
    add_arguments(parser)
    return run(parser.parse_args(argv))
