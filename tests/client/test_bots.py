"""Bots written with the client finish matches against the service's greedy bot: the example bot, and
``grimoire bot`` (run as a command) through a restart of the service."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from grimoire.client import Client
from tests.support.processes import ROOT

GRIMOIRE = Path(sys.executable).with_name("grimoire")  # the console script beside this Python


def finished_match(url: str, match_id: str):
    with Client(url) as grimoire:
        spectator = grimoire.watch(match_id)
        return spectator.view(), spectator.history(limit=1000)


def test_the_example_bot_finishes_a_match_against_greedy(stack):
    run = subprocess.run([sys.executable, "examples/bot_first_legal.py", stack.url], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    match, history = finished_match(stack.url, run.stdout.split()[0])
    assert match.status == "finished" and match.result is not None
    assert [(s.seat, s.bot) for s in match.seats] == [(0, None), (1, "greedy")]
    assert [e.version for e in history] == list(range(1, match.version + 1))
    assert {e.seat for e in history} == {0, 1}


def test_grimoire_bot_finishes_a_match_against_greedy_through_a_service_restart(stack, tmp_path):
    stderr = open(tmp_path / "bot.log", "w")
    bot = subprocess.Popen([str(GRIMOIRE), "bot", "--url", stack.url, "--game", "spells-and-potions",
                            "--variant", "practice-1", "--against", "greedy",
                            "--strategy", "examples.bot_first_legal:first_legal"],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr, text=True)
    try:
        first = bot.stdout.readline()
        assert first.startswith("playing seat 0 of match "), first + (tmp_path / "bot.log").read_text()
        match_id = first.split()[-1]
        with Client(stack.url) as grimoire:
            spectator = grimoire.watch(match_id)
            while (seen := spectator.view()).version < 8:
                assert seen.status != "finished"
                time.sleep(0.05)
        stack.restart()
        out, _ = bot.communicate(timeout=300)
    finally:
        if bot.poll() is None:
            bot.kill()
        stderr.close()
    log = (tmp_path / "bot.log").read_text()
    assert bot.returncode == 0, log
    assert json.loads(out.splitlines()[-1])["status"] == "finished"
    match, history = finished_match(stack.url, match_id)
    assert match.status == "finished" and match.seats[1].bot == "greedy"
    assert [e.version for e in history] == list(range(1, match.version + 1))
    assert any(e.seat == 0 and e.version > seen.version + 1 for e in history), "the bot did not play after the restart"
    assert "resuming after" in log or "trying again" in log, "the bot never noticed the restart"
