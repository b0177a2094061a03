"""Issue 24, done when: five client generators nobody here wrote turn the contracts into typed clients
with no warning and no schema left out, the generated code type-checks strictly (mypy --strict, tsc
--strict) with the example programs of examples/clients/, and each program plays a whole match of every
game against a running service, a stale write coming back as the generated conflict type.

The generators run as docs/api.md says (tests/contracts/generators.py holds the commands; a test checks
the page shows them), in a copy of the contracts and examples/clients/ in a temporary directory, all at
once: then the type checks, then the programs against one service process and one worker.

The TypeScript half needs node and npm, and ``npm ci`` in examples/clients/ts (.ci/run runs it); without
node it is skipped, loudly. The ariadne-codegen half runs in its own virtualenv (.venv-codegen; made here
when .ci/run has not).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import yaml
from graphql import build_schema

from service.store.embedded import stop_process
from tests.contracts import generators as g
from tests.support.processes import ROOT, Service, start_worker

GAMES = {"casting-stones", "quidditch", "spells-and-potions", "sorcerers-stone"}
#: What the test copies: the contracts and the examples (less what npm and the generators put there).
COPIED = ("openapi/openapi.yaml", "schema/schema.graphql", "examples/clients")
NOT_COPIED = shutil.ignore_patterns("node_modules", "generated", "dist", "__pycache__")
PROGRAM_TIMEOUT = 600


def _node_missing() -> str | None:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not found: the TypeScript generators were NOT tested" if missing else None


def _run(command: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """A documented command, in the copy, with this venv's tools first on PATH; output and errors together."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "NO_COLOR": "1", "FORCE_COLOR": "0"}
    return subprocess.run(command, shell=True, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout)


def _codegen_venv() -> None:
    """.venv-codegen with examples/clients/python/codegen-requirements.txt, unless .ci/run has made it."""
    venv = ROOT / g.CODEGEN_VENV
    if (venv / "bin" / "ariadne-codegen").exists() and (venv / "bin" / "mypy").exists():
        return
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "-r",
                    str(ROOT / "examples/clients/python/codegen-requirements.txt")], check=True)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A copy of the contracts and examples/clients/ laid out as in the repository, npm's packages and the
    codegen virtualenv linked in."""
    copy = tmp_path_factory.mktemp("clients")
    for path in COPIED:
        source, target = ROOT / path, copy / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=NOT_COPIED)
        else:
            shutil.copy(source, target)
    if (ROOT / g.TS / "node_modules").is_dir():
        (copy / g.TS / "node_modules").symlink_to(ROOT / g.TS / "node_modules")
    return copy


@pytest.fixture(scope="module")
def pipeline(workspace) -> dict[str, dict[str, subprocess.CompletedProcess]]:
    """Every generator, then its type check, the Python ones and the TypeScript ones side by side:
    generator name -> {"generate": ..., "check": ...}."""
    (workspace / g.CODEGEN_VENV).symlink_to(ROOT / g.CODEGEN_VENV, target_is_directory=True)
    results: dict[str, dict[str, subprocess.CompletedProcess]] = {}

    def python(generator: g.Generator) -> None:
        if generator is g.ARIADNE_CODEGEN:
            _codegen_venv()
        made = results.setdefault(generator.name, {})
        made["generate"] = _run(generator.generate, workspace)
        if made["generate"].returncode == 0:
            made["check"] = _run(generator.check, workspace)

    def typescript() -> None:
        if _node_missing() or not (ROOT / g.TS / "node_modules").is_dir():
            return
        for generator in g.TYPESCRIPT:
            results[generator.name] = {"generate": _run(generator.generate, workspace)}
        if all(results[t.name]["generate"].returncode == 0 for t in g.TYPESCRIPT):
            check = _run(g.OPENAPI_TYPESCRIPT.check, workspace)  # one tsc run checks both programs
            for generator in g.TYPESCRIPT:
                results[generator.name]["check"] = check

    with ThreadPoolExecutor(max_workers=4) as pool:
        for done in [pool.submit(python, generator) for generator in g.PYTHON] + [pool.submit(typescript)]:
            done.result()
    return results


def _made(pipeline, generator: g.Generator, step: str) -> subprocess.CompletedProcess:
    if generator in g.TYPESCRIPT:
        if reason := _node_missing():
            warnings.warn(reason)
            pytest.skip(reason.upper())
        if not (ROOT / g.TS / "node_modules").is_dir():
            pytest.fail(f"no {g.TS}/node_modules: run `npm ci` there (.ci/run does)")
    result = pipeline.get(generator.name, {}).get(step)
    if result is None:
        pytest.fail(f"{generator.name}: no {step}, its generation failed")
    return result


def _deprecated_input_fields() -> set[tuple[str, str]]:
    """(input type, field) of every deprecated input field of the SDL: renamed fields accepted under their
    old name until release 2.0 (docs/changelog.md)."""
    schema = build_schema((ROOT / "schema/schema.graphql").read_text())
    return {(name, field) for name, kind in schema.type_map.items() if hasattr(kind, "fields")
            and type(kind).__name__ == "GraphQLInputObjectType"
            for field, value in kind.fields.items() if value.deprecation_reason}


def warning_lines(output: str) -> list[str]:
    """The lines of a generator's output that warn, complain or say something was skipped.

    One kind is expected and allowed: ariadne-codegen names each deprecated input field it generates
    (with the line of its own source that warned), and the SDL keeps renamed fields under their old names,
    deprecated, for one release: a line naming a field the SDL does not deprecate still fails."""
    allowed = _deprecated_input_fields()
    found, lines = [], output.splitlines()
    skip_next = False
    for line in lines:
        if skip_next and line.startswith(" "):
            skip_next = False
            continue
        skip_next = False
        deprecation = re.search(r"DeprecationWarning: Input field '(\w+)' on input '(\w+)' is deprecated", line)
        if deprecation and (deprecation[2], deprecation[1]) in allowed:
            skip_next = True
            continue
        if g.WARNING.search(line):
            found.append(line)
    return found


@pytest.mark.parametrize("generator", g.ALL, ids=lambda gen: gen.name)
def test_generates_without_a_warning(pipeline, generator):
    made = _made(pipeline, generator, "generate")
    assert made.returncode == 0, made.stdout
    assert not warning_lines(made.stdout), made.stdout


def test_ariadne_codegen_deprecations_are_only_the_documented_renames():
    """The one allowance of warning_lines, broken on purpose: an unknown field's deprecation still counts."""
    ((kind, field), *_) = sorted(_deprecated_input_fields())
    known = f"x.py:86: DeprecationWarning: Input field '{field}' on input '{kind}' is deprecated: renamed\n  warn()"
    unknown = "x.py:86: DeprecationWarning: Input field 'nope' on input 'Nothing' is deprecated: renamed"
    assert warning_lines(known) == []
    assert warning_lines(f"{known}\n{unknown}") == [unknown]


#: Type errors in generated code that are the generator's own bug, not the contract's: generator -> the
#: mypy error lines (file and message) it makes. Each is matched exactly, so any other error still fails,
#: and the test fails once the bug is gone (then drop the entry).
GENERATOR_BUGS: dict[str, set[tuple[str, str]]] = {
    # (empty: openapi-python-client's local variable for a property named `cast` shadowed typing.cast in the
    # Casting Stones player's from_dict; the view's key is `conjured` since Casting Stones rules version 2)
}


def _type_errors(output: str) -> set[tuple[str, str]]:
    return {(Path(path).name, message) for path, message in
            re.findall(r"^(\S+\.py):\d+: error: (.*)$", output, re.M)}


@pytest.mark.parametrize("generator", g.ALL, ids=lambda gen: gen.name)
def test_generated_code_and_its_program_type_check_strictly(pipeline, generator):
    checked = _made(pipeline, generator, "check")
    known = GENERATOR_BUGS.get(generator.name)
    if known and checked.returncode != 0 and _type_errors(checked.stdout) == known:
        pytest.xfail(f"{generator.name}'s own bug, and only it: {sorted(known)}")
    assert checked.returncode == 0, checked.stdout
    assert not known, f"{generator.name} no longer makes {sorted(known)}: drop it from GENERATOR_BUGS"


def _components(workspace: Path) -> dict[str, dict]:
    """The component schemas of the openapi.yaml the generators read (the copy's)."""
    return yaml.safe_load((workspace / "openapi/openapi.yaml").read_text())["components"]["schemas"]


def test_no_schema_left_out_by_datamodel_code_generator(pipeline, workspace):
    _made(pipeline, g.DATAMODEL_CODE_GENERATOR, "generate")
    classes = set(re.findall(r"^class (\w+)\(", (workspace / g.PYTHON_OUT / "grimoire_models.py").read_text(), re.M))
    assert set(_components(workspace)) - classes == set()


def test_no_schema_left_out_by_openapi_python_client(pipeline, workspace):
    """Every component that is an object is a model class (unions become Python unions of those)."""
    _made(pipeline, g.OPENAPI_PYTHON_CLIENT, "generate")
    objects = {name for name, schema in _components(workspace).items()
               if schema.get("type") == "object" and "properties" in schema}
    models = workspace / g.PYTHON_OUT / "grimoire_rest_client" / "models"
    classes = {name for path in models.glob("*.py") for name in re.findall(r"^class (\w+)", path.read_text(), re.M)}
    assert objects - classes == set()


def test_no_schema_left_out_by_openapi_typescript(pipeline, workspace):
    _made(pipeline, g.OPENAPI_TYPESCRIPT, "generate")
    declared = set(re.findall(r"^        (\w+): ", (workspace / g.TS / "generated/rest.ts").read_text(), re.M))
    assert set(_components(workspace)) - declared == set()


@pytest.fixture(scope="module")
def service(redis_url, key_prefix, rq_connection, tmp_path_factory):
    """``grimoire serve`` and one ``grimoire worker`` (the bots' seats), on a key prefix of their own."""
    prefix, log = f"{key_prefix}:clients", tmp_path_factory.mktemp("service") / "service.log"
    server = Service(redis_url, prefix, log)
    with open(log, "a") as worker_log:
        worker = start_worker(f"clients-{os.getpid()}", stderr=worker_log, REDIS_URL=redis_url,
                              GRIMOIRE_KEY_PREFIX=prefix, GRIMOIRE_LOG_LEVEL="WARNING")
        yield server.base
        stop_process(worker)
    server.stop()


@pytest.fixture(scope="module")
def plays(pipeline, workspace, service) -> dict[str, subprocess.CompletedProcess]:
    """Each program whose client type-checked, all at once against the service: name -> its run."""
    ready = [gen for gen in g.ALL if pipeline.get(gen.name, {}).get("check") is not None
             and (pipeline[gen.name]["check"].returncode == 0
                  or _type_errors(pipeline[gen.name]["check"].stdout) == GENERATOR_BUGS.get(gen.name))]
    with ThreadPoolExecutor(max_workers=len(ready) or 1) as pool:
        runs = {gen.name: pool.submit(_run, f"{gen.play} {service}", workspace, PROGRAM_TIMEOUT) for gen in ready}
        return {name: run.result() for name, run in runs.items()}


@pytest.mark.parametrize("generator", g.ALL, ids=lambda gen: gen.name)
def test_program_plays_a_whole_match_of_every_game(pipeline, plays, service, generator):
    """The program exits 0 once it has played a match of each game to the end, its stale write refused
    as the generated conflict type (the program checks that and fails otherwise); the service confirms
    every match it names is finished."""
    _made(pipeline, generator, "check")
    run = plays.get(generator.name)
    assert run is not None, f"{generator.name}: its client did not type-check"
    assert run.returncode == 0, run.stdout
    finished = re.findall(r"^finished (\S+) (\S+) (\d+)$", run.stdout, re.M)
    assert sorted(game for game, _, _ in finished) == sorted(GAMES), run.stdout
    with httpx.Client(base_url=service, timeout=30) as http:
        for game, match_id, version in finished:
            match = http.get(f"/v1/matches/{match_id}").json()
            assert (match["game"], match["status"], match["version"]) == (game, "finished", int(version))
            assert match["result"] is not None


#: What "no casts" rules out in an example program: a cast or a silenced checker, by language (comments and
#: strings taken out first, so that prose may say "as").
CASTS = {".py": re.compile(r"\bcast\(|type: ?ignore|\bAny\b"),
         ".ts": re.compile(r"\bas\s+(?!const\b)[\w{\[(]|(?:[=(,:]|return)\s*<\w+>\s*[\w(]|\bany\b")}
_PROSE = {".py": re.compile(r'""".*?"""|#[^\n]*|"[^"\n]*"|\'[^\'\n]*\'', re.S),
          ".ts": re.compile(r"//[^\n]*|/\*.*?\*/|`[^`]*`|\"[^\"\n]*\"", re.S)}


def casts(path: Path) -> list[str]:
    """The casts in a program's code (its comments, docstrings and strings left out; type-checker
    directives live in comments, so those are looked for first)."""
    text = path.read_text()
    directives = re.findall(r"type: ?ignore|@ts-\w+", text)
    return directives + CASTS[path.suffix].findall(_PROSE[path.suffix].sub("", text))


def test_the_example_programs_use_no_casts(tmp_path):
    programs = sorted((ROOT / "examples/clients/python").glob("play_*.py")) + sorted((ROOT / g.TS / "src").glob("*.ts"))
    assert len(programs) == 5
    assert {p.name: casts(p) for p in programs} == {p.name: [] for p in programs}
    # and the check sees one: each kind, broken on purpose
    for name, code in (("x.py", "n = cast(int, value)"), ("y.py", "n = value  # type: ignore"),
                       ("z.ts", "const m = value as Match;"), ("w.ts", "const m: any = value;"),
                       ("v.ts", "const m = <Match>value;"), ("u.ts", "// @ts-expect-error\nconst m: Match = 1;")):
        (tmp_path / name).write_text(code)
        assert casts(tmp_path / name), code


def test_docs_show_each_generator_command():
    """docs/api.md, "Generate a client", gives every command the test runs, word for word."""
    page = (ROOT / "docs/api.md").read_text()
    section = page[page.index("## Generate a client"):]
    section = re.sub(r"\\\n\s*", "", section)  # shell line continuations
    for generator in g.ALL:
        for command in (generator.generate, generator.check, generator.play):
            assert command in section, command
