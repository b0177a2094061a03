"""Re-vendor the explorers' third-party assets from the npm registry, or check them.

``python -m service.static.vendor``          fetch every package of ``vendor.json`` at its pinned version
                                            (``npm pack``), check the tarball against the pinned integrity,
                                            copy the listed files under ``explorers/vendor/`` and record
                                            each file's sha256 in ``vendor.json``
``python -m service.static.vendor --check``  no network: every listed file is there with its recorded sha256

To upgrade a package, change its ``version`` and ``integrity`` (``npm view NAME@VERSION dist.integrity``)
in ``vendor.json``, run the first command, then the browser tests (tests/browser/test_explorers.py).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "vendor.json"
VENDOR = HERE / "explorers" / "vendor"


def load_manifest() -> dict:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stale_files(manifest: dict) -> list[str]:
    """Vendored files that are missing or differ from the sha256 the manifest records (empty: all current)."""
    problems = []
    for package in manifest["packages"]:
        recorded = package.get("sha256", {})
        for target in package["files"].values():
            path = VENDOR / target
            if target not in recorded:
                problems.append(f"{target}: no sha256 recorded (run python -m service.static.vendor)")
            elif not path.is_file():
                problems.append(f"{target}: missing")
            elif sha256_of(path) != recorded[target]:
                problems.append(f"{target}: differs from {package['name']}@{package['version']}")
    return problems


def _integrity(tarball: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()


def vendor_package(package: dict, workdir: Path) -> dict[str, str]:
    """Fetch one pinned package with npm, copy its listed files; returns each copied file's sha256."""
    spec = f"{package['name']}@{package['version']}"
    packed = subprocess.run(["npm", "pack", spec, "--json", "--pack-destination", str(workdir)],
                            check=True, capture_output=True, text=True)
    tarball = workdir / json.loads(packed.stdout)[0]["filename"]
    if _integrity(tarball) != package["integrity"]:
        raise SystemExit(f"{spec}: the tarball's integrity is not the pinned one; refusing to vendor it")
    hashes = {}
    with tarfile.open(tarball) as archive:
        for source, target in package["files"].items():
            data = archive.extractfile(f"package/{source}").read()
            path = VENDOR / target
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            hashes[target] = hashlib.sha256(data).hexdigest()
            print(f"{spec}: {source} -> {path.relative_to(HERE)}")
    return hashes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify the vendored files, fetch nothing")
    args = parser.parse_args(argv)
    manifest = load_manifest()
    if args.check:
        problems = stale_files(manifest)
        print("\n".join(problems) or "every vendored file matches vendor.json")
        return 1 if problems else 0
    with tempfile.TemporaryDirectory() as workdir:
        for package in manifest["packages"]:
            package["sha256"] = vendor_package(package, Path(workdir))
    MANIFEST.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
