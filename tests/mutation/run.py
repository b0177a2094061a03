#!/usr/bin/env python
"""The mutation run (a script, not in CI; docs/security.md, "Mutation testing").

    .venv/bin/pip install -e '.[test,mutation]'
    .venv/bin/python tests/mutation/run.py                 # every module, in the order below
    .venv/bin/python tests/mutation/run.py limits store    # some of them
    .venv/bin/python tests/mutation/run.py store --mutants 'service.store.matches.*'   # re-run these
    .venv/bin/python tests/mutation/run.py --summary       # the table, from the results so far

mutmut 3 (``[tool.mutmut]`` in pyproject.toml) copies the project to ``mutants/``
(git-ignored), turns every function there into a trampoline to its mutants, runs
the module's tests once to learn which tests call which function, and then runs,
for each mutant, only the tests that reach it (``-x``: the first failure kills
it), two at a time, with a wall-clock limit of 3 x (their measured time + 10 s).

Each module is run in its own process with its own test selection: the rate
limiter, say, is on the path of every request, and with the whole suite selected
every test would be mapped to it. The selection below is set over the one in
pyproject.toml (mutmut has no per-path selection of its own). A change of the
selection makes mutmut forget the results of the files being mutated (only of
those), so re-run a module's mutants through this script, not a bare
``mutmut run``.

``tests/mutation/equivalent.json`` names the survivors that cannot change
behaviour, each with its one-line reason; ``--summary`` counts them apart.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EQUIVALENT = Path(__file__).with_name("equivalent.json")

# name: (files mutated, files not mutated, tests selected). In the order they are run; the live streams
# (service/store/live.py, schema/live.py) last, as their owners may still be changing them.
MODULES: dict[str, tuple[list[str], list[str], list[str]]] = {
    "limits": (["service/limits.py"], [],
               ["tests/hardening/test_limits.py", "tests/hardening/test_guarantee_gaps.py"]),
    "store": (["service/store/*"], ["service/store/live.py"],
              ["tests/store", "tests/hardening", "tests/api/test_concurrency.py", "tests/api/test_rest.py",
               "tests/api/test_guarantee_gaps.py", "tests/api/test_unavailable.py", "tests/live/test_tokens.py",
               "tests/workers/test_store_retry.py", "tests/workers/test_guarantees.py"]),
    "workers": (["workers/jobs.py", "workers/dispatch.py", "workers/replay.py", "workers/runtime.py"], [],
                ["tests/workers"]),
    "schema": (["schema/*"], ["schema/live.py"],
               ["tests/api", "tests/hardening"]),
    "live": (["service/store/live.py", "schema/live.py"], [],
             ["tests/live", "tests/store"]),
}

KILLED = {"killed", "timeout", "segfault", "caught by type check"}


def _configure(name: str) -> None:
    import mutmut.configuration as configuration

    mutate, keep, tests = MODULES[name]
    base = configuration.config()
    configuration._config = dataclasses.replace(
        base, only_mutate=mutate, do_not_mutate=base.do_not_mutate + keep,
        pytest_add_cli_args_test_selection=tests)


def run_module(name: str, mutants: list[str], max_children: int) -> None:
    """In a process of its own: mutmut keeps its configuration and state in module globals."""
    os.chdir(ROOT)
    _configure(name)
    from mutmut.__main__ import _run

    # mutmut keeps one mapping of tests to functions (mutants/mutmut-stats.json) and, when the test
    # selection it was made with changes, forgets the results of the files it mutates. Each module has its
    # own selection, so each keeps its own mapping: coming back to a module (to re-run its survivors after
    # a test was added) neither redoes its mapping nor loses its results.
    current, own = ROOT / "mutants" / "mutmut-stats.json", ROOT / "mutants" / f"mutmut-stats.{name}.json"
    current.unlink(missing_ok=True)
    if own.exists():
        shutil.copy(own, current)
    try:
        _run(mutants, max_children)
    finally:
        if current.exists():
            shutil.copy(current, own)


def _module_of(path: str) -> str | None:
    for name, (mutate, keep, _) in MODULES.items():
        if any(fnmatch.fnmatch(path, p) for p in mutate) and not any(fnmatch.fnmatch(path, p) for p in keep):
            return name
    return None


def summary() -> int:
    from mutmut.stats import status_by_exit_code

    equivalent = json.loads(EQUIVALENT.read_text()) if EQUIVALENT.exists() else {}
    rows: dict[str, dict[str, int]] = {}
    survivors: list[tuple[str, str]] = []
    for meta in sorted((ROOT / "mutants").rglob("*.py.meta")):
        path = str(meta.relative_to(ROOT / "mutants"))[:-len(".meta")]
        module = _module_of(path)
        if module is None or path.endswith("__init__.py"):
            continue
        row = rows.setdefault(module, dict.fromkeys(
            ("mutants", "killed", "equivalent", "survived", "no tests", "not run"), 0))
        for key, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            status = status_by_exit_code[code]
            row["mutants"] += 1
            if status in KILLED:
                row["killed"] += 1
            elif status == "not checked":
                row["not run"] += 1
            elif key in equivalent:
                row["equivalent"] += 1
            else:
                row["no tests" if status == "no tests" else "survived"] += 1
                survivors.append((key, status))
    print("| module | mutants | killed | equivalent | survivors (holes) | no tests | not run | killed of behaviour-changing |")
    print("|---|---|---|---|---|---|---|---|")
    for module in MODULES:
        if module not in rows:
            print(f"| {module} | not yet run | | | | | | |")
            continue
        r = rows[module]
        changing = r["mutants"] - r["equivalent"] - r["not run"]
        score = f"{100 * r['killed'] / changing:.1f}%" if changing else "-"
        print(f"| {module} | {r['mutants']} | {r['killed']} | {r['equivalent']} | {r['survived']} | "
              f"{r['no tests']} | {r['not run']} | {score} |")
    if survivors:
        print("\nNot killed and not named equivalent:")
        for key, status in survivors:
            print(f"  {status:10} {key}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"of {', '.join(MODULES)} (default: all)")
    parser.add_argument("--mutants", nargs="*", default=[], help="mutant names or globs to (re-)run")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_module(args.one, args.mutants, args.max_children)
        return 0
    if args.summary:
        return summary()
    unknown = set(args.modules) - set(MODULES)
    if unknown:
        parser.error(f"no module {', '.join(sorted(unknown))}: choose from {', '.join(MODULES)}")
    for name in args.modules or list(MODULES):
        print(f"== {name}", flush=True)
        code = subprocess.call([sys.executable, __file__, "--one", name, "--max-children", str(args.max_children),
                                "--mutants", *args.mutants], cwd=ROOT)
        if code:
            print(f"mutmut stopped on {name} with exit code {code}", flush=True)
            return code
    return summary()


if __name__ == "__main__":
    sys.exit(main())
