"""Benchmark: a match log's compaction, appended to its archive against compressed whole each time.

Run it from the repository root (no Redis, no server; a script, not a test: it asserts nothing)::

    .venv/bin/python -m tests.benchmarks.bench_archive [--matches 5] [--games ID,...]

What is measured
----------------
For every game and variant, ``--matches`` seeded random matches are played to their end with the engine,
and each accepted action becomes a log entry shaped as commit.lua writes it (seat, action, events, at,
status, to_act). Their compaction is then replayed as the service's settings run it (every
``GRIMOIRE_LOG_COMPACT_EVERY`` actions, the ``GRIMOIRE_LOG_KEEP_RECENT`` newest kept, and whole at the end),
once per way of writing the archive, on this process's CPU (``time.process_time``):

``append``
    what the service does (``service/store/archive.py`` ``encode``): the new entries' blocks appended to
    the archive, compressed against the 32 KB of log before them;
``whole``
    the whole log compressed again at every compaction (``encode(..., whole=True)``), as every release
    before 2026-11-29 did.

It prints, per game and variant: the mean match length, the CPU of ``encode`` per action on each side and
their ratio, and the archive's size half-way through a match (what an in-progress match holds) and at its
end (both sides compress a finished match whole, so those are equal). The round trips of a compaction (read
the archive and the entries, then the script that moves them) are the same on both sides and not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time

from service.games import all_games
from service.settings import Settings
from service.store import archive


def played_log(game, variant: str, seed: int, max_steps: int = 5000) -> list[archive.Entry]:
    """The log of one seeded random match of ``game``'s ``variant`` at its minimum number of seats."""
    seats = game.min_seats
    options = game.check_options(variant, None, seats)
    rng = random.Random(seed)
    state = game.setup(options, seats, rng.getrandbits(63))
    log = []
    for version in range(1, max_steps + 1):
        acting = sorted(game.to_act(state))
        if not acting:
            break
        seat = acting[0] if len(acting) == 1 else rng.choice(acting)
        legal = game.legal_actions(state, seat)
        action = legal[rng.randrange(len(legal))]
        state, events = game.apply(state, seat, action)
        over = game.result(state) is not None
        log.append((f"{version}-0", {"seat": str(seat), "action": json.dumps(action), "events": json.dumps(events),
                                     "at": str(1_764_400_000_000 + 1_000 * version),
                                     "status": "finished" if over else "active",
                                     "to_act": json.dumps(sorted(game.to_act(state)))}))
        if over:
            break
    return log


def compactions(log: list[archive.Entry], every: int, keep: int, whole: bool) -> tuple[float, int, int]:
    """Replay ``log``'s compactions: (CPU seconds in encode, archive bytes half-way, archive bytes at the end)."""
    raw, upto, spent, halfway = None, 0, 0.0, 0
    last = len(log)
    for version in range(1, last + 1):
        finished = version == last
        if not (version % every == 0 or finished):
            continue
        through = version - keep  # as archive.compact: the newest ``keep`` stay in the stream, at the end too
        if through <= upto:
            continue
        started = time.process_time()
        raw = archive.encode(through, log[upto:through], raw, whole=whole or finished)
        spent += time.process_time() - started
        upto = through
        if not halfway and version >= last / 2:
            halfway = len(raw)
    return spent, halfway, len(raw) if raw else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bench_archive",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=5, help="seeded random matches per game and variant")
    parser.add_argument("--games", default="", help="comma-separated game ids (default: every game)")
    args = parser.parse_args(argv)
    settings = Settings()
    every, keep = settings.log_compact_every, settings.log_keep_recent
    games = all_games()
    chosen = [g.strip() for g in args.games.split(",") if g.strip()] or sorted(games)
    print("Grimoire log archive benchmark: compaction's encode, appended against compressed whole each time")
    print(f"  machine  {os.cpu_count()} cores; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"Python {platform.python_version()}; compaction every {every} actions, {keep} kept; "
          f"{args.matches} matches per variant")
    print()
    header = (f"{'game':<20} {'variant':<20} {'actions':>7} {'append us/act':>13} {'whole us/act':>12} "
              f"{'ratio':>6} {'half-way B append':>17} {'whole':>7} {'end B':>7}")
    print(header)
    print("-" * len(header))
    for game_id in chosen:
        game = games[game_id]
        for variant in game.variant_ids():
            logs = [played_log(game, variant, seed) for seed in range(1, args.matches + 1)]
            actions = sum(len(log) for log in logs)
            sides = {}
            for whole in (False, True):
                runs = [compactions(log, every, keep, whole) for log in logs]
                sides[whole] = (sum(r[0] for r in runs) / actions * 1e6, statistics.mean(r[1] for r in runs),
                                statistics.mean(r[2] for r in runs))
            (append_us, append_half, end), (whole_us, whole_half, _) = sides[False], sides[True]
            print(f"{game_id:<20} {variant:<20} {actions / len(logs):>7.0f} {append_us:>13.1f} {whole_us:>12.1f} "
                  f"{whole_us / append_us if append_us else float('nan'):>5.1f}x {append_half:>17.0f} "
                  f"{whole_half:>7.0f} {end:>7.0f}")
    print()
    print("us/act: CPU microseconds of encode per action, compactions of the whole match over its actions; "
          "ratio: whole over append. Half-way: the archive's bytes at the compaction half-way through the match.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
