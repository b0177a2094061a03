"""Benchmark: the game engines in random playouts, and the strong bot's search speed, on one core.

Run it from the repository root (no Redis, no server)::

    .venv/bin/python -m tests.benchmarks.bench_engines [--seconds 2] [--strong-seconds 1] [--games ID,...]

It prints one table and exits 0; it asserts nothing (issue #18: targets live in benchmarks, not in tests).

What is measured
----------------
For every registered game and every variant (``service.games.all_games``; ``--seats`` players, default each
game's minimum), seeded random matches are played on this process pinned to one core, each step costing what
the service spends on one action:

* ``legal_actions(state, seat)`` for a seat to act (the client's read of its legal actions),
* ``apply(state, seat, action)`` (the submission: shape check, turn check, legality, copy, play),
* ``result``, ``to_act`` of the new state (what the store writes beside it) and ``view(new_state, seat)``
  (the answer to the submission; the spectator's view for the board's own moves).

``actions/s`` is steps over the time of those calls (setup and the random choice excluded), beside the
target of 20,000 (issue #18); the shares of that time in apply, legal actions and view say where it goes.
A match is played to its end, or cut at ``--max-steps``; matches go on until ``--seconds`` pass.

``strong it/s``: the strong bot (``workers/bots/strong.py``, ISMCTS) counts an iteration per call of its
``_iterate`` (determinise, select, expand, roll out, back up). It is given decisions taken from random
playouts of the variant (a seat with more than one legal action), each with a budget of
``--strong-ms`` ms and no iteration cap, until ``--strong-seconds`` of search pass; iterations over the time
spent in ``choose`` on decisions that searched (a decision the bot answers without searching, e.g. Casting
Stones' seconds, is skipped).

The machine is shared with whatever else runs: the header prints the load average, and the last column the
CPU share this process got while measuring (below ~95% the core was shared and figures are low).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time

from service.engine import BOARD_SEAT
from service.games import all_games
from workers import bots
from workers.bots import BotInput, strong

TARGET = 20_000


def _viewer(seat: int):
    return bots.viewer(seat)


def playouts(game, variant: str, seats: int, seconds: float, max_steps: int, seed: int) -> dict:
    """Random matches for ``seconds``; time spent in apply, legal_actions and view (+ result/to_act)."""
    options = game.check_options(variant, None, seats)
    rng = random.Random(seed)
    t_apply = t_legal = t_view = 0.0
    steps = matches = 0
    clock = time.perf_counter
    deadline = clock() + seconds
    cpu_start, wall_start = time.process_time(), clock()
    while clock() < deadline:
        state = game.setup(options, seats, rng.getrandbits(63))
        matches += 1
        for _ in range(max_steps):
            acting = sorted(game.to_act(state))
            if not acting:
                break
            seat = acting[0] if len(acting) == 1 else rng.choice(acting)
            t0 = clock()
            legal = game.legal_actions(state, seat)
            t1 = clock()
            if not legal:
                raise RuntimeError(f"{game.id}:{variant}: seat {seat} to act with no legal action")
            action = legal[rng.randrange(len(legal))]
            t2 = clock()
            state, _events = game.apply(state, seat, action)
            t3 = clock()
            finished = game.result(state) is not None
            game.to_act(state)
            game.view(state, _viewer(seat))
            t4 = clock()
            t_legal += t1 - t0
            t_apply += t3 - t2
            t_view += t4 - t3
            steps += 1
            if finished:
                break
    spent = t_apply + t_legal + t_view
    wall = clock() - wall_start
    return {"steps": steps, "matches": matches, "rate": steps / spent if spent else float("nan"),
            "apply": t_apply / spent, "legal": t_legal / spent, "view": t_view / spent,
            "cpu": (time.process_time() - cpu_start) / wall if wall else float("nan")}


def strong_rate(game, variant: str, seats: int, seconds: float, budget_ms: int, seed: int) -> tuple[float, int]:
    """(iterations per second of search, decisions searched)."""
    counted = {"n": 0}
    original = strong._iterate

    def counting(*args, **kwargs):
        counted["n"] += 1
        return original(*args, **kwargs)

    strong._iterate = counting
    try:
        options = game.check_options(variant, None, seats)
        rng = random.Random(seed)
        budget = strong.Budget(iterations=10 ** 9, time_ms=budget_ms, rollout_depth=strong.Budget().rollout_depth)
        searched_time, iterations, decisions = 0.0, 0, 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            state = game.setup(options, seats, rng.getrandbits(63))
            while game.result(state) is None and time.perf_counter() < deadline:
                acting = sorted(game.to_act(state))
                seat = acting[0] if len(acting) == 1 else rng.choice(acting)
                legal = game.legal_actions(state, seat)
                if seat != BOARD_SEAT and len(legal) > 1 and rng.random() < 0.3:
                    before = counted["n"]
                    started = time.perf_counter()
                    strong.choose(BotInput(game.id, seat, game.view(state, seat), legal), random.Random(seed), budget)
                    elapsed = time.perf_counter() - started
                    if counted["n"] > before:
                        searched_time += elapsed
                        iterations += counted["n"] - before
                        decisions += 1
                state, _ = game.apply(state, seat, legal[rng.randrange(len(legal))])
        return (iterations / searched_time if searched_time else float("nan")), decisions
    finally:
        strong._iterate = original


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bench_engines", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds of playouts per game and variant (default 2)")
    parser.add_argument("--strong-seconds", type=float, default=1.0,
                        help="seconds of strong search per game and variant (default 1; 0: skip)")
    parser.add_argument("--strong-ms", type=int, default=100, help="search budget per decision, ms (default 100)")
    parser.add_argument("--games", default="", help="comma-separated game ids (default: every game)")
    parser.add_argument("--seats", type=int, default=0, help="players per match (default: each game's minimum)")
    parser.add_argument("--max-steps", type=int, default=5000, help="steps before a match is cut (default 5000)")
    parser.add_argument("--core", type=int, default=None, help="core to pin to (default: the last usable one)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    games = all_games()
    chosen = [g.strip() for g in args.games.split(",") if g.strip()] or sorted(games)
    unknown = [g for g in chosen if g not in games]
    if unknown:
        parser.error(f"unknown game(s) {', '.join(unknown)}; registered: {', '.join(sorted(games))}")
    core = args.core if args.core is not None else sorted(os.sched_getaffinity(0))[-1]
    os.sched_setaffinity(0, {core})
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    rows, failures = [], []
    for game_id in chosen:
        game = games[game_id]
        seats = min(max(args.seats or game.min_seats, game.min_seats), game.max_seats)
        for variant in game.variant_ids():
            played = playouts(game, variant, seats, args.seconds, args.max_steps, args.seed)
            iterations, decisions = float("nan"), 0
            if args.strong_seconds > 0:
                try:
                    iterations, decisions = strong_rate(game, variant, seats, args.strong_seconds, args.strong_ms,
                                                        args.seed)
                except Exception as error:  # shown under the table; the other variants still run
                    failures.append(f"strong on {game_id}:{variant} (seed {args.seed}): "
                                    f"{type(error).__name__}: {error}")
            rows.append((game_id, variant, seats, played, iterations, decisions))
            print(f"  ... {game_id}:{variant} {played['rate']:.0f} actions/s", file=sys.stderr, flush=True)
    print("Grimoire engines benchmark: random playouts (legal actions + apply + view per step) and strong search")
    print(f"  machine  {os.cpu_count()} cores, pinned to core {core}; load {load} (1/5/15 min, at the start); "
          f"Python {platform.python_version()}")
    print(f"  settings {args.seconds:g} s of playouts and {args.strong_seconds:g} s of strong search "
          f"({args.strong_ms} ms a decision) per variant, seed {args.seed}")
    print()
    header = (f"{'game':<20} {'variant':<20} {'seats':>5} {'matches':>7} {'actions':>8} {'actions/s':>9} "
              f"{'target':>7} {'vs target':>9} {'apply':>6} {'legal':>6} {'view':>6} {'strong it/s':>11} "
              f"{'decisions':>9} {'CPU':>5}")
    print(header)
    print("-" * len(header))
    for game_id, variant, seats, p, iterations, decisions in rows:
        verdict = f"{p['rate'] / TARGET:.2f}x"
        print(f"{game_id:<20} {variant:<20} {seats:>5} {p['matches']:>7} {p['steps']:>8} {p['rate']:>9.0f} "
              f"{TARGET:>7} {verdict:>9} {100 * p['apply']:>5.0f}% {100 * p['legal']:>5.0f}% {100 * p['view']:>5.0f}% "
              f"{'-' if iterations != iterations else f'{iterations:.0f}':>11} {decisions:>9} {100 * p['cpu']:>4.0f}%")
    below = [f"{g}:{v}" for g, v, _, p, _, _ in rows if p["rate"] < TARGET]
    print()
    print(f"target: >= {TARGET:,} actions/s for every game and variant on one core; below it: "
          f"{', '.join(below) if below else 'none'}. 'view' includes result() and to_act() of the new state. "
          "CPU: this process's share of its core while playing (below ~95%: the core was shared, figures low).")
    print("strong it/s '-': no decision searched (an error below, or none in the time given with more than one "
          "legal action and a search).")
    for failure in failures:
        print(f"error  {failure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
