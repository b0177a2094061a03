"""A pytest plugin for tests/mutation/run.py: which test runs which line.

    MUTATION_LINES_OF=schema/api.py MUTATION_LINES_TO=lines.json python -m pytest -p tests.mutation.lines ...

For each line of the files named in ``MUTATION_LINES_OF`` (comma-separated), the tests that ran it, each
test's set-up apart from its call and teardown: ``{path: {line: [[nodeid, "setup" | "call" | "teardown"],
...]}}`` in ``MUTATION_LINES_TO``. A line run in the phase of a test that built an app (the session's app is
built in the set-up of the first test that asks for it) may be one every test goes through; run.py
(``BY_LINE``) decides which.
"""

from __future__ import annotations

import json
import os

import coverage
import pytest

_coverage: coverage.Coverage | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _coverage
    if "MUTATION_LINES_OF" not in os.environ or _coverage is not None:
        return
    files = [os.path.abspath(path) for path in os.environ["MUTATION_LINES_OF"].split(",")]
    _coverage = coverage.Coverage(data_file=None, include=files)
    _coverage.start()


def _phase(item: pytest.Item, phase: str):
    if _coverage is not None:
        # flushes what every thread ran so far under the previous context (the app runs in the test
        # client's thread)
        _coverage.switch_context(json.dumps([item.nodeid, phase]))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    _phase(item, "setup")
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    _phase(item, "call")
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item):
    _phase(item, "teardown")
    yield


def pytest_unconfigure(config: pytest.Config) -> None:
    global _coverage
    if _coverage is None:
        return
    _coverage.stop()
    data = _coverage.get_data()
    lines = {}
    for path in data.measured_files():
        by_line = data.contexts_by_lineno(path)
        lines[os.path.relpath(path)] = {line: sorted(json.loads(c) for c in contexts if c)
                                        for line, contexts in sorted(by_line.items())}
    with open(os.environ["MUTATION_LINES_TO"], "w") as out:
        json.dump(lines, out, indent=0)
    _coverage = None
