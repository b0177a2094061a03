"""The client is a distribution of its own (clients/python/, DESIGN.md): a bot author installs it without the
service, and it brings httpx and httpx-sse, never the server's packages."""

from __future__ import annotations

import subprocess
import sys

from tests.support.processes import ROOT


def test_the_client_installs_and_runs_without_the_service(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", str(ROOT / "clients" / "python")],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stdout + install.stderr
    probe = ("import importlib.util, grimoire.client, grimoire.bot; "
             "print(sorted(m for m in ('service', 'schema', 'workers', 'starlette', 'redis', 'strawberry') "
             "if importlib.util.find_spec(m)))")
    found = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[]", f"the client's install brought the server's packages: {found.stdout}"
    usage = subprocess.run([str(venv / "bin" / "grimoire-bot"), "--help"], capture_output=True, text=True,
                           timeout=60, cwd=tmp_path)
    assert usage.returncode == 0 and "--strategy" in usage.stdout, usage.stdout + usage.stderr
