"""The client is typed: ``mypy --strict`` passes on the package and the example bot."""

from __future__ import annotations

import subprocess
import sys

from tests.support.processes import ROOT


def test_the_client_and_the_example_bot_pass_mypy_strict(tmp_path):
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path),
                          "clients/python/grimoire", "examples/bot_first_legal.py"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_bot_in_the_docs_is_the_example_bot():
    """docs/api.md, "Write a bot", shows examples/bot_first_legal.py in full: the two may not drift apart."""
    docs = (ROOT / "docs/api.md").read_text()
    example = (ROOT / "examples/bot_first_legal.py").read_text()
    assert f"```python\n{example}```" in docs
    assert len(example.splitlines()) < 30
