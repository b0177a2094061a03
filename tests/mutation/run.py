#!/usr/bin/env python
"""The mutation run (a script, not in CI; docs/security.md, "Mutation testing").

    .venv/bin/pip install -e '.[test,mutation]'
    nice -n 19 .venv/bin/python tests/mutation/run.py                 # every module, in the order below
    nice -n 19 .venv/bin/python tests/mutation/run.py limits store    # some of them
    nice -n 19 .venv/bin/python tests/mutation/run.py store --mutants 'service.store.matches.*'   # re-run these
    nice -n 19 .venv/bin/python tests/mutation/run.py store --unkilled  # survivors and untested, after new tests
    nice -n 19 .venv/bin/python tests/mutation/run.py store --recheck  # timeouts and survivors, one at a time
    nice -n 19 .venv/bin/python tests/mutation/run.py store --recheck --mutants 'service.store.embedded.x__die*' \
        --tests tests/store/test_mutants_store.py::test_x   # mutants whose code runs out of mutmut's sight
    .venv/bin/python tests/mutation/run.py --summary       # the table, from the results so far
    .venv/bin/python tests/mutation/run.py --survivors store   # each survivor's diff

mutmut 3 (``[tool.mutmut]`` in pyproject.toml) copies the project to ``mutants/``
(git-ignored), turns every function there into a trampoline to its mutants, runs
the module's tests once to learn which tests call which function, and then runs,
for each mutant, only the tests that reach it (``-x``: the first failure kills
it), two at a time, with a wall-clock limit of 3 x (their measured time + 10 s).

Each module is run in its own process with its own test selection: the rate
limiter, say, is on the path of every request, and with the whole suite selected
every test would be mapped to it. The selection below is set over the one in
pyproject.toml (mutmut has no per-path selection of its own). Each module keeps
its own test-to-function map, and its results survive a change of its selection:
tests added to it are mapped when they appear and kill what they kill on a
re-run (``--unkilled``, ``--mutants`` or ``--recheck``). Tests removed from a
selection are forgotten, but what they killed stays killed: to be strict,
delete ``mutants/mutmut-stats.<module>.json`` and run the module again.

A timeout counts as a kill for mutmut, but on a loaded machine an innocent
mutant times out too. ``--recheck`` runs each of a module's timeouts (and
survivors) again, with a limit of 6 x (its tests' measured time + 10 s), twice
mutmut's (``--factor``): one that now passes is a survivor, one that fails a
kill, one that still runs out of time a real hang.

``tests/mutation/equivalent.json`` names the survivors that cannot change
behaviour: for each, the mutated line as ``--survivors`` shows it and the
one-line reason. ``--summary`` counts them apart, and reports an entry whose
mutant no longer exists or no longer makes that change (the code moved) as
stale instead of counting it.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EQUIVALENT = Path(__file__).with_name("equivalent.json")
#: each module's verdicts and test-to-function map, committed: a run takes hours and mutants/ is not kept
RESULTS = Path(__file__).with_name("results")
SOURCES = ("service", "schema", "workers")  # [tool.mutmut] source_paths

#: service/store/ as issue 23 found it: the matches, their log and lobby, bot seats, tokens, the Redis clients
STORE = ("archive", "bots", "connect", "embedded", "errors", "lobby", "matches", "tokens")

#: the schema of players, matchmaking and collections: run with their store ("players" below)
PLAYERS_SCHEMA = ["schema/players.py", "schema/collections.py", "schema/collection_types.py"]

#: whole matches through GraphQL, one of each game at two seats: the quicker of tests/api/test_play_through.py's
#: (all of them took 4 minutes, and a survivor of the GraphQL app's request path ran every one)
GRAPHQL_PLAY_THROUGHS = [
    f"tests/api/test_play_through.py::test_a_whole_match_through_graphql[{variant}-2]" for variant in (
        "sorcerers-stone-flitwick", "sorcerers-stone-hagrid", "sorcerers-stone-quirrell", "sorcerers-stone-snape",
        "sorcerers-stone-sprout", "sorcerers-stone-mcgonagall", "spells-and-potions-practice-1",
        "spells-and-potions-ritual", "casting-stones-basic", "quidditch-standard")]

# name: (files mutated, files not mutated, tests selected). In the order they are run; the live streams
# (service/store/live.py, schema/live.py) last, as their owners may still be changing them. The tests
# written against a module's survivors are tests/<area>/test_mutants_<module>.py. Slow tests that only
# repeat what a narrower one checks are left out: a survivor runs every selected test that reaches it.
MODULES: dict[str, tuple[list[str], list[str], list[str]]] = {
    # with the count they carry on a request's first Redis command (service/store/counting.py, issue 18)
    "limits": (["service/limits.py", "service/store/counting.py"], [],
               ["tests/hardening/test_limits.py", "tests/hardening/test_guarantee_gaps.py",
                "tests/hardening/test_mutants_limits.py", "tests/hardening/test_request_count.py"]),
    # not tests/hardening/test_hidden_audit.py (9 minutes: the views' secrecy, schema's and the games'),
    # test_faults.py (a killed service process: the Lua scripts' atomicity), tests/api/test_concurrency.py
    # (fifty racing clients over HTTP; tests/store/test_guarantees.py holds the compare-and-set itself),
    # test_store_state_machines.py (2 of the 3 minutes of the selection, reaching every function of the
    # store: a survivor or a timeout of it cost 10 minutes; tests/store/test_matches.py holds that a
    # refusal changes nothing)
    "store": ([f"service/store/{name}.py" for name in STORE], [],
              ["tests/store", "tests/api/test_rest.py", "tests/api/test_guarantee_gaps.py",
               "tests/api/test_unavailable.py", "tests/live/test_tokens.py", "tests/workers/test_store_retry.py",
               "tests/workers/test_guarantees.py",
               # the deal, rules versions and player credentials that matches.py took in (issues 20 and 21)
               "tests/fairness/test_randomness.py", "tests/fairness/test_rules_versions.py",
               "tests/players/test_identity.py"]),
    # not test_bots.py, test_strong.py, test_seconds.py: they test workers/bots/ and reach nothing mutated;
    # not tests/workers/test_serve.py: `grimoire serve` started under nice 19 on a loaded machine misses its
    # 30 s start-up deadline, and a flaky test's failure would count as a kill (test_mutants_workers.py
    # starts the embedded worker itself); the deferral of jobs a worker lacks the rules version for is
    # tested with the rules versions
    "workers": (["workers/jobs.py", "workers/dispatch.py", "workers/replay.py", "workers/runtime.py"], [],
                [f"tests/workers/test_{name}.py" for name in ("guarantees", "jobs", "observed_jobs", "store_retry",
                                                              "mutants_workers", "mutants_dispatch")]
                + ["tests/fairness/test_rules_versions.py::"
                   "test_workers_without_the_rules_version_defer_bot_moves_timers_and_replays"]),
    # the GraphQL schema as issue 23 found it; not test_hidden_audit.py, test_faults.py,
    # test_store_state_machines.py, test_concurrency.py (above), nor test_fuzz.py (schemathesis draws new
    # cases each run: a kill must not depend on the draw; tests/hardening/test_hostile_bodies.py is the
    # seeded one)
    "schema": (["schema/*"], ["schema/live.py"] + PLAYERS_SCHEMA,
               [f"tests/api/{name}.py" for name in (
                   "test_card_catalogues", "test_catalogues", "test_contracts", "test_docs", "test_graphql",
                   "test_graphql_contract", "test_guarantee_gaps", "test_openapi_responses",
                   "test_plain_execution", "test_rest", "test_unavailable")]
               + GRAPHQL_PLAY_THROUGHS + ["tests/api/test_stream_tickets.py"]
               + [f"tests/hardening/{name}.py" for name in (
                   "test_edges", "test_guarantee_gaps", "test_hostile_bodies", "test_limits", "test_wire_stack")]
               + ["tests/games/quidditch/test_contract.py",
                  # GraphQL's replays and bot seats, seeds and entropy, and tokens on every channel
                  "tests/workers/test_jobs.py", "tests/fairness/test_randomness.py", "tests/live/test_tokens.py",
                  "tests/fairness/test_records.py::test_a_finished_match_of_every_game_verifies",
                  # the tests written against the module's survivors
                  "tests/api/test_mutants_schema_errors.py", "tests/api/test_mutants_schema_execution.py",
                  "tests/api/test_mutants_schema_cost.py", "tests/api/test_mutants_schema_types.py",
                  "tests/api/test_extensions_runner.py"]),
    "live": (["service/store/live.py", "schema/live.py"], [],
             ["tests/live", "tests/store"]),
    # players, quick matches, ratings, match records and collections (issues 20, 21 and 22), in the store
    # and in the schema; not tests/fairness/test_rolling_rules.py (it serves two releases checked out of
    # git, and mutants/ is no checkout)
    "players": (["service/store/*"] + PLAYERS_SCHEMA,
                [f"service/store/{name}.py" for name in STORE] + ["service/store/live.py"],
                ["tests/players", "tests/collections"]
                + [f"tests/fairness/test_{name}.py" for name in ("randomness", "records", "rules_versions", "spec")]
                # the schema's descriptions, deprecations and argument defaults show only in its SDL
                + ["tests/api/test_contracts.py::test_schema_graphql_is_up_to_date",
                   # service/store/tickets.py, the stream tickets (issue 25), is in this module's files
                   "tests/api/test_stream_tickets.py"]),
}

#: Functions whose mutants mutmut would test with too few tests. mutmut maps to a function only the tests
#: that call it, and the schema is built once per app: the tests that share the session's app (most of them)
#: are mapped to none of the functions that build it, though each of their requests goes through what those
#: functions built. The GraphQL schema's types and resolvers are classes and closures inside ``build_schema``
#: (their annotations name the games' generated types), so every one of api.py's mutants is a mutant of
#: ``build_schema``; the games' types are generated, the cost rule's class made, the fast path's plain types
#: found and the ASGI app configured once per app too. These are the tests that go through them (test ids,
#: or prefixes of them).
_THROUGH_THE_SCHEMA = [
    "tests/api/test_contracts.py::test_schema_graphql_is_up_to_date", "tests/api/test_graphql.py",
    "tests/api/test_mutants_schema_errors.py", "tests/api/test_mutants_schema_execution.py",
    "tests/api/test_mutants_schema_cost.py", "tests/api/test_mutants_schema_types.py",
    "tests/api/test_graphql_contract.py", "tests/api/test_guarantee_gaps.py", "tests/hardening/test_edges.py",
    "tests/api/test_unavailable.py", "tests/fairness/test_randomness.py", "tests/live/test_tokens.py",
    # a finished match's record of every game, its typed fields against its document (causes, entropies)
    "tests/fairness/test_records.py::test_a_finished_match_of_every_game_verifies",
    "tests/api/test_plain_execution.py", "tests/api/test_card_catalogues.py", "tests/api/test_catalogues.py",
    # of test_jobs.py (47 s), the three that go through GraphQL (a survivor runs every test in this list)
    *[f"tests/workers/test_jobs.py::{name}" for name in (
        "test_graphql_add_bot_and_replay", "test_a_turn_timer_plays_the_late_seats_default_and_records_it",
        "test_nobody_can_act_as_the_board")],
    *GRAPHQL_PLAY_THROUGHS]
_ONCE_PER_APP = [
    "schema.api.x_build_schema", "schema.asgi.xǁGraphQLAppǁ__init__", "schema.cost.x_max_cost_rule",
    "schema.cost.x_limit_argument", "schema.validation.xǁDocumentValidationCacheǁ__init__",
    *[f"schema.execution.{name}" for name in (
        "xǁ_PlainTypesǁ__init__", "x__basic_fields", "x__leaf", "x__is_plain_type")],
    *[f"schema.game_types.{name}" for name in (
        "xǁGameTypesǁ__init__", "xǁGameTypesǁ_object", "xǁGameTypesǁ_field_type", "xǁGameTypesǁ_action_input",
        "xǁGameTypesǁcatalogue_type", "x__signature", "x__base_type", "x__attr", "x__field_names",
        "x__is_nullable", "x_graphql_enum", "x_action_type_enum")]]
TESTS_OF = {
    "schema": {function: _THROUGH_THE_SCHEMA for function in _ONCE_PER_APP},
    # the same for the players' and the collections' fields, closures inside their extend()
    "players": {
        "schema.players.x_extend": [
            "tests/api/test_contracts.py::test_schema_graphql_is_up_to_date", "tests/players/test_graphql.py",
            "tests/players/test_mutants_graphql_fields.py", "tests/players/test_rematch.py",
            "tests/players/test_contract.py", "tests/players/test_my_matches.py", "tests/players/test_ratings.py",
            "tests/players/test_quick_match.py", "tests/players/test_mutants_schema_players.py"],
        "schema.collections.x_extend": [
            "tests/api/test_contracts.py::test_schema_graphql_is_up_to_date",
            "tests/collections/test_mutants_graphql_fields.py", "tests/collections/test_api.py",
            "tests/collections/test_hands.py", "tests/collections/test_trades.py", "tests/collections/test_sets.py",
            "tests/players/test_mutants_schema_players.py"]},
}

#: Tests each mutant of a module runs before the others (mutmut runs the fastest first, by the time of the test's
#: call alone, so tests that build an app of their own in their set-up come early though they are slow). The
#: schema's SDL changes with most of ``build_schema``'s and the players' ``extend``'s mutants (a description,
#: a name, a union's member, a default): run first, it kills them in a second.
FIRST = {module: ["tests/api/test_contracts.py::test_schema_graphql_is_up_to_date"] for module in ("schema", "players")}

#: Top-level functions whose mutants run only the tests that run the mutated line (tests/mutation/lines.py
#: records which, in the original source), not every test of the function. ``build_schema`` defines every type
#: and resolver of the schema, so mutmut (with ``TESTS_OF``) gives each of its mutants all the tests through
#: the schema: a mutant of one resolver ran 340 tests to survive, and a test that kills it came after hundreds
#: that never call it. What runs when the schema is built keeps every test: the function's own statements,
#: class bodies, decorators and descriptions, and a nested function run in a test's phase that built an app;
#: a line no selected test runs too. Fewer tests can only miss a kill, never make one: a survivor is checked
#: again with all of them (``--recheck``).
BY_LINE = {"schema": {"schema.api.x_build_schema": "schema/api.py"},
           # the players' and the collections' fields and resolvers, closures inside their extend()
           "players": {"schema.players.x_extend": "schema/players.py",
                       "schema.collections.x_extend": "schema/collections.py"}}

#: Seconds one test may run in a module's mutant runs (pytest-timeout), where mutmut's own limit covers all of a
#: mutant's tests together: a mutant of the live streams that leaves a follower waiting forever hung in its first
#: test until the limit of all 73 (about 150 s), idle. A hung test now fails on its own, which is the kill the
#: timeout would have been. The longest test of the module takes 10 s alone.
PER_TEST_TIMEOUT = {"live": 45}

#: Every pytest here runs in one process, not on the suite's pytest-xdist workers (pyproject.toml's addopts):
#: mutmut's and tests/mutation/lines.py's records of what each test ran are kept in the process.
IN_ONE_PROCESS = ["-n", "0"]

KILLED = {"killed", "timeout", "segfault", "caught by type check"}
#: mutmut's exit codes, as --recheck records its verdicts
KILL, SURVIVE, TIMEOUT = 1, 0, 36


def _configure(name: str) -> None:
    import mutmut.configuration as configuration

    mutate, keep, tests = MODULES[name]
    base = configuration.config()
    timeout = [f"--timeout={PER_TEST_TIMEOUT[name]}"] if name in PER_TEST_TIMEOUT else []
    configuration._config = dataclasses.replace(
        base, only_mutate=mutate, do_not_mutate=base.do_not_mutate + keep,
        pytest_add_cli_args=base.pytest_add_cli_args + IN_ONE_PROCESS + timeout,
        pytest_add_cli_args_test_selection=tests)
    # mutmut forgets every result when the selection's fingerprint changes. The selection is the module's
    # own here, and tests only get added to it (see the docstring): the fingerprint names the module.
    fingerprint = configuration.Config.config_fingerprint

    # The per-test timeout turns a hang into a quicker failure, a kill either way: verdicts stand across it.
    def module_fingerprint(self) -> dict[str, str]:
        return {**fingerprint(self), "test_execution": fingerprint(base)["test_execution"],
                "test_selection": hashlib.sha256(name.encode()).hexdigest()[:12]}

    configuration.Config.config_fingerprint = module_fingerprint


def _refresh_copies(name: str) -> None:
    """Make mutants/ hold the files this module needs, as they are now.

    mutmut copies a file it does not mutate over its mutated copy, and takes a copy newer than its source
    for one it has mutated already: back to a module after another ran, its files would be plain copies,
    never mutated again, and every mutant would "survive". And it copies the other files (the Lua
    scripts, the game data) only once. So: this module's files without their trampolines are deleted (to
    be mutated again; results of unchanged functions are kept), and every other file is copied when it
    differs.
    """
    mutate, keep, _ = MODULES[name]
    for source in SOURCES:
        for path in (ROOT / source).rglob("*"):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            relative = str(path.relative_to(ROOT))
            copy = ROOT / "mutants" / relative
            if not copy.exists():
                continue
            ours = path.suffix == ".py" and any(fnmatch.fnmatch(relative, p) for p in mutate) and \
                not any(fnmatch.fnmatch(relative, p) for p in keep)
            if ours:
                if "_mutmut_mutated" not in copy.read_text():
                    copy.unlink()
            elif path.suffix != ".py" and copy.read_bytes() != path.read_bytes():
                shutil.copy2(path, copy)


def run_module(name: str, mutants: list[str], max_children: int) -> None:
    """In a process of its own: mutmut keeps its configuration and state in module globals."""
    os.chdir(ROOT)
    _configure(name)
    _refresh_copies(name)
    import mutmut.__main__
    from mutmut.__main__ import _run

    _map_tests_of(name, mutmut.__main__)
    current, own = _stats_files(name)
    current.unlink(missing_ok=True)
    if own.exists():
        shutil.copy(own, current)
    try:
        _run(mutants, max_children)
    finally:
        if current.exists():
            shutil.copy(current, own)


def _add_tests_of(name: str, mapped: dict, known) -> None:
    """Add to ``mapped`` (function: tests) the tests ``TESTS_OF`` gives its functions, of the ``known`` ones."""
    for function, wanted in TESTS_OF.get(name, {}).items():
        mapped[function] = set(mapped.get(function, ())) | {
            test for test in known if any(test == w or test.startswith(w + "::") or test.startswith(w + "[")
                                          for w in wanted)}


def _map_tests_of(name: str, main) -> None:
    """After mutmut has mapped tests to functions, give the functions of ``TESTS_OF`` theirs."""
    collect = main.collect_or_load_stats

    def collect_then_map(*args, **kwargs):
        # mutmut maps new tests in this process, and a test that runs an RQ worker here (tests/conftest.py,
        # `drain`) leaves RQ's SIGINT and SIGTERM handlers behind: the mutants' run then died of
        # rq.exceptions.StopRequested while it waited for its children
        handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
        collect(*args, **kwargs)
        for number, handler in handlers.items():
            signal.signal(number, handler)
        from mutmut.state import state

        known = state().duration_by_test
        mapped = state().tests_by_mangled_function_name
        _add_tests_of(name, mapped, known)
        for test in FIRST.get(name, ()):
            if test in known:
                known[test] = -1.0
        if name in BY_LINE:
            _select_by_line(name, main, known)

    main.collect_or_load_stats = collect_then_map


def _lines_run(name: str) -> dict[str, dict[str, list[list[str]]]]:
    """{path: {line: [[test id, phase], ...]}} for the files of ``BY_LINE[name]``, measured once per version
    of them and of ``TESTS_OF`` (tests/mutation/lines.py: a pytest of those tests in the original source, minutes)."""
    paths = sorted(set(BY_LINE[name].values()))
    tests = sorted({test for tests in TESTS_OF[name].values() for test in tests})
    version = hashlib.sha256(b"".join((ROOT / path).read_bytes() for path in paths) + str(tests).encode())
    saved = ROOT / "mutants" / f"lines.{name}.{version.hexdigest()[:16]}.json"
    if not saved.exists():
        print(f"Recording which test runs which line of {', '.join(paths)}", flush=True)
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.mutation.lines", "-p", "no:cacheprovider",
                               *IN_ONE_PROCESS, "-m", "not slow", "-q", *tests], cwd=ROOT, stdout=subprocess.DEVNULL,
                              env={**os.environ, "MUTATION_LINES_OF": ",".join(paths), "MUTATION_LINES_TO": str(saved)})
        if done.returncode:  # a failed test still ran its lines; a kill by it would be a flake's
            print(f"pytest exited {done.returncode} while recording lines: check the tests pass", flush=True)
    return json.loads(saved.read_text())


def _function_node(path: str, function: str):
    """The ast node of top-level ``function`` (mangled: ``module.x_name``) in the original ``path``."""
    import ast

    name = function.rpartition(".")[2].removeprefix("x_")
    return next(node for node in ast.parse((ROOT / path).read_text()).body
                if isinstance(node, ast.FunctionDef) and node.name == name)


def _changed_lines(path: str, function: str) -> dict[str, list[int]]:
    """{mutant: the lines of the original ``path`` it changes} for every mutant of top-level ``function``
    (``x_name`` as mutmut mangles it), read off mutants/<path> in one pass (mutmut's own diff re-reads the
    whole file for each mutant: 50 MB for schema/api.py)."""
    import difflib

    module = function.rpartition(".")[0]
    name = function.rpartition(".")[2]
    bodies: dict[str, list[str]] = {}
    current = None
    for line in (ROOT / "mutants" / path).read_text().splitlines():
        if not line.startswith((" ", "\t", ")")) and line.strip():
            current = None
            if line.startswith(f"def {name}__mutmut_"):
                current, _, rest = line[4:].partition("(")
                bodies[current] = []
                line = f"def {name}__mutmut_orig({rest}"  # the mutant's own name is no change
        if current is not None:
            bodies[current].append(line)
    original = bodies.pop(f"{name}__mutmut_orig")
    start = _function_node(path, function).lineno
    changed = {}
    for mutant, body in bodies.items():
        lines = []
        for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, original, body, autojunk=False).get_opcodes():
            if tag != "equal":
                lines.extend(range(start + i1, start + max(i2, i1 + 1)))
        changed[f"{module}.{mutant}"] = lines
    return changed


def _run_later(path: str, function: str) -> tuple[set[int], int]:
    """The lines of the bodies of the functions nested in top-level ``function`` (mangled) of ``path``, which
    may run when they are called (a resolver, per request), where the rest of ``function`` (its own statements,
    class bodies, decorators, defaults) runs when it does; and the line of ``function``'s first statement."""
    import ast

    outer = _function_node(path, function)
    lines = set()
    for node in ast.walk(outer):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not outer:
            lines.update(range(node.body[0].lineno, node.end_lineno + 1))
    statements = [node for node in outer.body
                  if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]  # a docstring
    return lines, statements[0].lineno


def _select_by_line(name: str, main, known: dict[str, float]) -> None:
    """Give each mutant of the functions of ``BY_LINE[name]`` the tests that run its lines (see there)."""
    from coverage.parser import PythonParser
    from mutmut.state import state

    lines_run = _lines_run(name)
    mapped = state().tests_by_mangled_function_name
    chosen: dict[str, set[str]] = {}
    for function, path in BY_LINE[name].items():
        parser = PythonParser(filename=str(ROOT / path))
        parser.parse_source()
        run = lines_run.get(path, {})
        later, first = _run_later(path, function)
        # a nested function the build calls (one that makes a field) runs with it: a line run in a test's
        # phase that built an app counts as built (a resolver run in the same phase is given every test too)
        building = {tuple(context) for context in run.get(str(parser.first_line(first)), [])}
        for mutant, lines in _changed_lines(path, function).items():
            runs = [run.get(str(parser.first_line(line))) for line in lines]
            if not lines or not all(runs) or not later.issuperset(lines) or \
                    any(tuple(context) in building for r in runs for context in r):
                continue  # run when the app is built, or by no test: every test of the function
            tests = {test for r in runs for test, _ in r if test in known}
            if tests:
                chosen[mutant] = tests
    print(f"{len(chosen)} mutants of {', '.join(BY_LINE[name])} get the tests that run their lines", flush=True)

    class MutantKey(str):
        """A function's name that remembers which of its mutants asked (mutmut looks tests up by function)."""
        mutant: str

    class TestsByFunction(type(mapped)):
        def get(self, key, default=None):
            mutant = getattr(key, "mutant", None)
            return chosen[mutant] if mutant in chosen else super().get(key, default)

    function_of = main.mangled_name_from_mutant_name

    def mangled_name_from_mutant_name(mutant_name: str) -> str:
        key = MutantKey(function_of(mutant_name))
        key.mutant = mutant_name
        return key

    state().tests_by_mangled_function_name = TestsByFunction(mapped.default_factory, mapped)
    main.mangled_name_from_mutant_name = mangled_name_from_mutant_name


def _saved(name: str) -> list[tuple[Path, Path]]:
    """(file in mutants/, its committed copy) for a module's verdicts and its test-to-function map."""
    mutate, keep, _ = MODULES[name]
    pairs = [(_stats_files(name)[1], RESULTS / name / "mutmut-stats.json")]
    for source in SOURCES:
        for path in sorted((ROOT / source).rglob("*.py")):
            relative = str(path.relative_to(ROOT))
            if any(fnmatch.fnmatch(relative, p) for p in mutate) and \
                    not any(fnmatch.fnmatch(relative, p) for p in keep):
                pairs.append((ROOT / "mutants" / f"{relative}.meta", RESULTS / name / f"{relative}.meta"))
    return pairs


def save(name: str) -> None:
    """Commit-ready copies of a module's results (tests/mutation/results/<module>/)."""
    for working, committed in _saved(name):
        if working.exists():
            committed.parent.mkdir(parents=True, exist_ok=True)
            data = json.loads(working.read_text())
            for times in ("durations_by_key", "estimated_durations_by_key"):  # to 10 ms: smaller diffs
                if times in data:
                    data[times] = {key: round(value, 2) for key, value in data[times].items()}
            committed.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")


def restore(name: str) -> None:
    """On a new machine, start from the committed results: mutmut then runs again only the mutants of
    functions changed since (it compares each function's hash with the one the results hold)."""
    for working, committed in _saved(name):
        if committed.exists() and not working.exists():
            working.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(committed, working)


def _stats_files(name: str) -> tuple[Path, Path]:
    """mutmut's test-to-function map, and this module's own copy of it."""
    return ROOT / "mutants" / "mutmut-stats.json", ROOT / "mutants" / f"mutmut-stats.{name}.json"


def _module_of(path: str) -> str | None:
    for name, (mutate, keep, _) in MODULES.items():
        if any(fnmatch.fnmatch(path, p) for p in mutate) and not any(fnmatch.fnmatch(path, p) for p in keep):
            return name
    return None


def _results(module: str | None = None):
    """(module, meta file path, meta data) of every mutated file (of ``module``)."""
    for meta in sorted((ROOT / "mutants").rglob("*.py.meta")):
        path = str(meta.relative_to(ROOT / "mutants"))[:-len(".meta")]
        owner = _module_of(path)
        if owner is None or path.endswith("__init__.py") or module not in (None, owner):
            continue
        yield owner, meta, json.loads(meta.read_text())


def mutation_of(key: str) -> str:
    """The changed line of a mutant (``+ ...``), as mutmut's diff shows it (several joined by `` / ``)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    os.chdir(ROOT)
    try:
        diff = get_diff_for_mutant(key)
    except FileNotFoundError:  # its function is gone from the source since the verdict: a run drops it
        return ""
    return " / ".join(line[1:].strip() for line in diff.splitlines()
                      if line.startswith("+") and not line.startswith("+++"))


def summary() -> int:
    from mutmut.stats import status_by_exit_code

    os.chdir(ROOT)
    equivalent = json.loads(EQUIVALENT.read_text()) if EQUIVALENT.exists() else {}
    rows: dict[str, dict[str, int]] = {}
    survivors: list[tuple[str, str]] = []
    known: set[str] = set()
    stale: list[str] = []
    for module, _meta, data in _results():
        row = rows.setdefault(module, dict.fromkeys(
            ("mutants", "killed", "timeouts", "equivalent", "survived", "no tests", "not run"), 0))
        for key, code in data["exit_code_by_key"].items():
            known.add(key)
            status = status_by_exit_code[code]
            row["mutants"] += 1
            if status in KILLED:
                row["killed"] += 1
                row["timeouts"] += status == "timeout"
            elif status == "not checked":
                row["not run"] += 1
            elif key in equivalent and equivalent[key]["mutation"] == mutation_of(key):
                row["equivalent"] += 1
            else:
                if key in equivalent:
                    stale.append(key)
                row["no tests" if status == "no tests" else "survived"] += 1
                survivors.append((key, status))
    print("| module | mutants | killed (of them timeouts) | equivalent | survivors (holes) | no tests | not run "
          "| killed of behaviour-changing |")
    print("|---|---|---|---|---|---|---|---|")
    for module in MODULES:
        if module not in rows:
            print(f"| {module} | not yet run | | | | | | |")
            continue
        r = rows[module]
        changing = r["mutants"] - r["equivalent"] - r["not run"]
        score = f"{r['killed']} / {changing} = {100 * r['killed'] / changing:.1f}%" if changing else "-"
        print(f"| {module} | {r['mutants']} | {r['killed']} ({r['timeouts']}) | {r['equivalent']} | "
              f"{r['survived']} | {r['no tests']} | {r['not run']} | {score} |")
    if survivors:
        print("\nNot killed and not named equivalent:")
        for key, status in survivors:
            print(f"  {status:10} {key}")
    stale += [key for key in equivalent if key not in known and _module_of_key(key) in rows]
    if stale:
        print("\nStale entries of equivalent.json (the mutant is gone or makes another change now):")
        for key in stale:
            print(f"  {key}")
    return 0


def _module_of_key(key: str) -> str | None:
    """The module of a mutant's name (``service.limits.xǁRateLimitǁ_count__mutmut_1``: limits)."""
    dotted = re.split(r"\.x[ǁ_]", key)[0]
    return _module_of(dotted.replace(".", "/") + ".py")


def survivors(modules: list[str]) -> int:
    """Each survivor of ``modules`` not named equivalent, with its mutation: the work list."""
    from mutmut.stats import status_by_exit_code

    equivalent = json.loads(EQUIVALENT.read_text()) if EQUIVALENT.exists() else {}
    for module in modules or list(MODULES):
        for _module, _meta, data in _results(module):
            for key, code in data["exit_code_by_key"].items():
                status = status_by_exit_code[code]
                if status in KILLED or status == "not checked":
                    continue
                change = mutation_of(key)
                if key in equivalent and equivalent[key]["mutation"] == change:
                    continue
                print(f"{status:9} {key}\n          {change}")
    return 0


def unkilled(name: str) -> list[str]:
    """The mutants of module ``name`` that survived or had no test, not named equivalent."""
    from mutmut.stats import status_by_exit_code

    equivalent = json.loads(EQUIVALENT.read_text()) if EQUIVALENT.exists() else {}
    return [key for _module, _meta, data in _results(name) for key, code in data["exit_code_by_key"].items()
            if status_by_exit_code[code] in ("survived", "no tests") and key not in equivalent]


def recheck(name: str, factor: float, patterns: list[str], tests: list[str], parallel: int) -> int:
    """Run each timeout and survivor of module ``name`` (of those matching ``patterns``, if any) again,
    ``parallel`` at a time, with a limit of ``factor`` x (its tests' measured time + 10 s).

    Its selected tests that reach the mutant, fastest first, stopping at the first failure, in a pytest of
    its own in mutants/ with the mutant switched on: a failure is a kill; a pass, a survivor; still out of
    time, a timeout (a real hang). The verdict goes where mutmut keeps its own.

    ``tests`` replaces the tests mutmut mapped, and takes the "no tests" mutants too: code that runs where
    mutmut cannot see it reach (a ``preexec_fn`` runs in the forked child of a subprocess) is tested by
    naming the test that exercises it.
    """
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from mutmut.stats import status_by_exit_code

    os.chdir(ROOT)
    _configure(name)
    _, own = _stats_files(name)
    stats = json.loads(own.read_text())
    tests_of, duration = stats["tests_by_mangled_function_name"], stats["duration_by_test"]
    _add_tests_of(name, tests_of, duration)  # mutmut's own map is the one it saved
    wanted = ("timeout", "survived", "no tests") if tests else ("timeout", "survived")
    work = []
    for _module, meta, data in _results(name):
        for key, code in data["exit_code_by_key"].items():
            if status_by_exit_code[code] not in wanted or \
                    (patterns and not any(fnmatch.fnmatch(key, p) for p in patterns)):
                continue
            run = tests or sorted(tests_of.get(key.partition("__mutmut_")[0], []), key=lambda t: duration.get(t, 0))
            if run:
                work.append((meta, key, code, run))
    written = threading.Lock()

    def one(meta: Path, key: str, code: int, run: list[str]) -> None:
        limit = factor * (sum(duration.get(t, 0) for t in run) + 10)
        try:
            result = subprocess.run(
                [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", "--rootdir=.", *run,
                 "-p", "no:cacheprovider", *IN_ONE_PROCESS, "-m", "not slow"],
                cwd=ROOT / "mutants", env={**os.environ, "MUTANT_UNDER_TEST": key},
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=limit)
            verdict = SURVIVE if result.returncode == 0 else KILL
        except subprocess.TimeoutExpired:
            verdict = TIMEOUT
        with written:  # one meta file holds many mutants; another run of mutmut may write it too
            print(f"{status_by_exit_code[code]:9} -> {status_by_exit_code[verdict]:9} {key}", flush=True)
            fresh = json.loads(meta.read_text())
            fresh["exit_code_by_key"][key] = verdict
            meta.write_text(json.dumps(fresh, indent=4))

    with ThreadPoolExecutor(parallel) as pool:
        for future in [pool.submit(one, *item) for item in work]:
            future.result()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"of {', '.join(MODULES)} (default: all)")
    parser.add_argument("--mutants", nargs="*", default=[], help="mutant names or globs to (re-)run")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--summary", action="store_true", help="the table of results so far")
    parser.add_argument("--survivors", action="store_true", help="the modules' survivors and their mutations")
    parser.add_argument("--recheck", action="store_true",
                        help="run the modules' timeouts and survivors again, with more time (--factor)")
    parser.add_argument("--factor", type=float, default=6.0,
                        help="with --recheck: the limit is this x (the tests' time + 10 s); mutmut's is 3")
    parser.add_argument("--unkilled", action="store_true",
                        help="run the modules' survivors and 'no tests' mutants again (after tests were added)")
    parser.add_argument("--tests", nargs="*", default=[],
                        help="with --recheck: run these tests instead of those mutmut mapped (and on 'no tests' too)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_module(args.one, args.mutants, args.max_children)
        return 0
    unknown = set(args.modules) - set(MODULES)
    if unknown:
        parser.error(f"no module {', '.join(sorted(unknown))}: choose from {', '.join(MODULES)}")
    for name in MODULES:
        restore(name)
    # niced on a loaded machine, `grimoire serve` can take more than the tests' 30 s to start
    os.environ.setdefault("GRIMOIRE_TEST_READY_TIMEOUT", "180")
    if args.summary:
        return summary()
    if args.survivors:
        return survivors(args.modules)
    if args.recheck:
        for name in args.modules or list(MODULES):
            recheck(name, args.factor, args.mutants, args.tests, args.max_children)
            save(name)
        return summary()
    for name in args.modules or list(MODULES):
        print(f"== {name}", flush=True)
        mutants = args.mutants + (unkilled(name) if args.unkilled else [])
        if args.unkilled and not mutants:
            continue
        code = subprocess.call([sys.executable, __file__, "--one", name, "--max-children", str(args.max_children),
                                "--mutants", *mutants], cwd=ROOT)
        save(name)
        if code:
            print(f"mutmut stopped on {name} with exit code {code}", flush=True)
            return code
    return summary()


if __name__ == "__main__":
    sys.exit(main())
