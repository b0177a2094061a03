"""Benchmark: the ``strong`` bot level against ``random`` and ``greedy``, and replay throughput.

Run it from the repository root (no Redis needed: it measures the bot algorithm on the engine)::

    python -m tests.benchmarks.bench_bots [--matches N] [--games ID,...] [--jobs J]
        [--iterations I] [--time-ms T] [--rollout-depth D]

It prints figures and exits 0; it asserts nothing.

What is measured
----------------
Per game (its first variant, or the one named as ``game:variant``; two seats), N seeded matches of strong
vs random and N of strong vs greedy (seed i; the strong bot takes seat 0 in even matches and seat 1 in odd
ones), played on the engine the way the bot job plays them: each bot gets its seat's view and legal actions only (``BotInput``), and the
action goes through ``game.apply``. Printed:

* wins, losses and draws of the strong level, its win rate over decided matches (draws left out: the
  issue's target is "at least 90% of decided games") and the 95% Wilson score interval of it;
* the time of each strong decision that had a real choice (more than one legal action): p50, p95, max;
  a decision with one legal action is played at once and is not counted;
* for the games in :data:`LUCK`, a line on what luck decided (Quidditch: losses to a Snitch the strong seat
  never held a Seeker for; the Sorcerer's Stone chain: its win rate when first and when second at the Mirror
  of Erised);
* replay throughput: every recorded match log re-applied from its seed, as actions per second, both with
  ``workers.replay.build_replay`` (what the replay job runs: apply, event and state checks, a frame per
  version; spectator replay) and with bare ``game.apply``.

The strong level's budget is its defaults (``workers.bots.strong.Budget``, which the environment variables
``GRIMOIRE_STRONG_*`` can change) unless given here. ``--jobs 2`` plays matches in two processes (faster
on two cores, but each decision then shares the machine, so its times are pessimistic).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

from service.engine import BOARD_SEAT
from service.games import all_games
from workers import bots
from workers.bots import BotInput, strong
from workers.replay import build_replay

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def play_match(game_id: str, opponent: str, seed: int, budget: strong.Budget, variant: str | None = None) -> dict:
    """One seeded match, strong against ``opponent``; returns the result, decision times and the log."""
    game = all_games()[game_id]
    levels = ["strong", opponent] if seed % 2 == 0 else [opponent, "strong"]
    options = game.check_options(variant, {}, 2)
    state = game.setup(options, 2, seed)
    rng = random.Random(seed)
    times: list[float] = []
    entries: list[dict] = []
    strong_seat = levels.index("strong")
    held_seeker = False  # Quidditch: whether the strong seat ever held a Seeker (see LUCK)
    while game.result(state) is None:
        seat = rng.choice(sorted(game.to_act(state)))
        legal = game.legal_actions(state, seat)
        bot_input = BotInput(game.id, seat, game.view(state, bots.viewer(seat)), legal)
        if game_id == "quidditch" and not held_seeker:
            held_seeker = any(card["kind"] == "seeker" for card in game.view(state, strong_seat)["hand"])
        if seat == BOARD_SEAT:  # McGonagall's colour that no player holds, as the bot job plays it
            action = bots.choose(bots.BOARD_LEVEL, bot_input, rng)
        elif levels[seat] == "strong":
            started = time.perf_counter()
            action = strong.choose(bot_input, rng, budget)
            if len(legal) > 1:
                times.append(time.perf_counter() - started)
        else:
            action = bots.choose(levels[seat], bot_input, rng)
        state, events = game.apply(state, seat, action)
        entries.append({"version": len(entries) + 1, "seat": seat, "action": action, "events": events,
                        "status": "finished" if game.result(state) is not None else "active",
                        "to_act": sorted(game.to_act(state)), "at": 0})
    winners = game.result(state)["winners"]
    outcome = "draw" if len(winners) != 1 else ("win" if levels[winners[0]] == "strong" else "loss")
    return {"outcome": outcome, "times": times, "seed": seed, "options": options, "entries": entries,
            "final": state, "strong_seat": strong_seat, "held_seeker": held_seeker}


def _quidditch_luck(results: list[dict]) -> str:
    """Losses to a Snitch the strong seat could not contest: the opponent caught it, and the strong seat
    never held a Seeker in the whole match (only a Seeker wins the Snitch; a deck holds two of 40)."""
    losses = [r for r in results if r["outcome"] == "loss"]
    snitch = [r for r in losses if "Golden Snitch" in r["final"]["result"]["reason"]]
    unseeded = [r for r in snitch if not r["held_seeker"]]
    return (f"{len(snitch)} of {len(losses)} losses ended by the opponent's Snitch; in {len(unseeded)} of them "
            f"the strong seat never held a Seeker")


def _mirror_luck(results: list[dict]) -> str:
    """The chain ends on the Mirror of Erised: ten face-down cards, one the Stone, flipped one a turn. Who
    arrives first flips first; with both there, each flip is a draw from the cards left."""
    def arrived_first(r: dict) -> bool:
        return next((e["seat"] for entry in r["entries"] for e in entry["events"]
                     if e["type"] == "mirror_arrived"), None) == r["strong_seat"]

    first = [r for r in results if arrived_first(r)]
    others = [r for r in results if not arrived_first(r)]  # not `r not in first`: that compares whole logs

    def won(group: list[dict]) -> str:
        return f"won {sum(r['outcome'] == 'win' for r in group)} of {len(group)}"

    return f"strong first at the Mirror: {won(first)}; second: {won(others)}"


#: What luck decided, per game and variant: a line printed under the game's win rates.
LUCK = {"quidditch": _quidditch_luck, "sorcerers-stone:chain": _mirror_luck, "sorcerers-stone": _mirror_luck}


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def replay_throughput(game_id: str, logs: list[dict]) -> tuple[float, float, int]:
    """Actions re-applied per second: (build_replay, bare game.apply, actions)."""
    game = all_games()[game_id]
    actions = sum(len(log["entries"]) for log in logs)
    started = time.perf_counter()
    for log in logs:
        replay = build_replay(game, match_id=f"bench-{log['seed']}", options=log["options"], seats=2,
                              seed=log["seed"], entries=log["entries"], final_state=log["final"], seat=None)
        assert replay["verified"], replay["mismatches"][:3]
    replay_rate = actions / (time.perf_counter() - started)
    started = time.perf_counter()
    for log in logs:
        state = game.setup(log["options"], 2, log["seed"])
        for entry in log["entries"]:
            state, _ = game.apply(state, entry["seat"], entry["action"])
    apply_rate = actions / (time.perf_counter() - started)
    return replay_rate, apply_rate, actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=200, help="matches per game and opponent (default 200)")
    parser.add_argument("--games", default=",".join(sorted(all_games())),
                        help="comma-separated game ids, each optionally with :variant (default: first variant)")
    parser.add_argument("--opponents", default="random,greedy")
    parser.add_argument("--jobs", type=int, default=1, help="processes playing matches (default 1)")
    defaults = strong.Budget.from_env()
    parser.add_argument("--iterations", type=int, default=defaults.iterations)
    parser.add_argument("--time-ms", type=int, default=defaults.time_ms)
    parser.add_argument("--rollout-depth", type=int, default=defaults.rollout_depth)
    args = parser.parse_args()
    budget = strong.Budget(args.iterations, args.time_ms, args.rollout_depth)
    print(f"strong budget: {budget.iterations} iterations, {budget.time_ms} ms cap, "
          f"rollout depth {budget.rollout_depth}; {args.matches} matches per game and opponent; "
          f"{args.jobs} process(es)")
    header = (f"{'game':<28} {'opponent':<8} {'W':>4} {'L':>4} {'D':>4} {'win rate':>9} {'95% Wilson':>15} "
              f"{'moves':>6} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} {'min/match':>9}")
    print(header)
    replay_logs: dict[str, list[dict]] = {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for entry in args.games.split(","):
            game_id, _, variant = entry.partition(":")
            for opponent in args.opponents.split(","):
                started = time.perf_counter()
                n = args.matches
                results = list(pool.map(play_match, [game_id] * n, [opponent] * n, range(n), [budget] * n,
                                        [variant or None] * n))
                elapsed = time.perf_counter() - started
                replay_logs.setdefault(entry, []).extend(results)
                wins = sum(r["outcome"] == "win" for r in results)
                losses = sum(r["outcome"] == "loss" for r in results)
                draws = n - wins - losses
                low, high = wilson(wins, wins + losses)  # the rate of decided matches (the target)
                rate = wins / (wins + losses) if wins + losses else float("nan")
                times = [t for r in results for t in r["times"]]
                print(f"{entry:<28} {opponent:<8} {wins:>4} {losses:>4} {draws:>4} {rate:>9.2f} "
                      f"{f'[{low:.2f}, {high:.2f}]':>15} {len(times):>6} {_percentile(times, .5) * 1e3:>7.0f} "
                      f"{_percentile(times, .95) * 1e3:>7.0f} {max(times, default=0) * 1e3:>7.0f} "
                      f"{elapsed / n / 60 * args.jobs:>9.2f}", flush=True)
                if entry in LUCK:
                    print(f"{'':<28} {'':<8} luck: {LUCK[entry](results)}", flush=True)
    print()
    print(f"{'game':<28} {'matches':>7} {'actions':>8} {'replay actions/s':>17} {'apply actions/s':>16} "
          f"{'mean plies':>10}")
    for entry, logs in replay_logs.items():
        replay_rate, apply_rate, actions = replay_throughput(entry.partition(":")[0], logs)
        print(f"{entry:<28} {len(logs):>7} {actions:>8} {replay_rate:>17.0f} {apply_rate:>16.0f} "
              f"{statistics.mean(len(log['entries']) for log in logs):>10.0f}")


if __name__ == "__main__":
    main()
