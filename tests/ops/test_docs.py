"""docs/operations.md documents every setting, with its real default."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from service.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "operations.md"
_ROW = re.compile(r"^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|\s*([^|]*)\|")


def documented_settings() -> dict[str, str]:
    """Environment variable -> the default cell of its row in the settings table."""
    rows = {}
    for line in DOC.read_text().splitlines():
        match = _ROW.match(line)
        if match:
            rows[match.group(1)] = match.group(2).strip()
    return rows


def read_settings() -> dict[str, str]:
    """Environment variable -> Settings field, as ``Settings.from_env`` reads them."""
    source = (ROOT / "service" / "settings.py").read_text()
    body = source[source.index("def from_env"):]
    return {env: field for field, env in re.findall(r'(\w+)=\s*[^\n]*?\(\s*"([A-Z][A-Z0-9_]+)"', body)}


def render(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value))
    return str(value)


def test_every_setting_is_documented_with_its_default():
    documented = documented_settings()
    fields = {f.name: f for f in dataclasses.fields(Settings)}
    read = read_settings()
    assert len(read) >= 30, "the settings parser lost track of Settings.from_env"
    missing = sorted(set(read) - set(documented))
    assert not missing, f"settings missing from docs/operations.md: {missing}"
    for env, field in read.items():
        default = render(fields[field].default)
        cell = documented[env]
        shown = re.findall(r"`([^`]*)`", cell)
        shown = shown[0] if shown else cell
        if default == "":
            assert shown in {"", "(empty)"} or cell.startswith("(empty"), f"{env}: documented {cell!r}, is empty"
        else:
            assert shown == default, f"{env}: documented default {cell!r}, the code says {default!r}"


def test_the_figures_and_the_sizing_guide_are_there():
    text = DOC.read_text()
    for heading in ("## Settings", "## Deploying", "## Redis Cluster", "## Lobby", "## Metrics", "## Logs",
                    "## Graceful shutdown", "## Measured", "## Sizing"):
        assert heading in text, heading
