"""The five client generators of issue 24, as docs/api.md ("Generate a client") tells a user to run them.

Every command runs from the repository's root (the test runs them in a copy of the contracts and of
examples/clients/, so that the generated code lands in a temporary directory) and writes under
``examples/clients/python/generated/`` or ``examples/clients/ts/generated/`` (git-ignored).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PYTHON_OUT = "examples/clients/python/generated"
TS = "examples/clients/ts"
#: The ariadne-codegen virtualenv: it needs graphql-core < 3.3, the service 3.3.
CODEGEN_VENV = ".venv-codegen"


@dataclass(frozen=True)
class Generator:
    name: str
    #: the shell command that generates the client, run from the repository's root
    generate: str
    #: the strict type check of the generated code with its example program
    check: str
    #: how the example program runs against a service (its URL appended)
    play: str


OPENAPI_PYTHON_CLIENT = Generator(
    "openapi-python-client",
    f"openapi-python-client generate --path openapi/openapi.yaml --meta none --overwrite "
    f"--output-path {PYTHON_OUT}/grimoire_rest_client --config examples/clients/python/openapi-python-client.yaml",
    f"MYPYPATH={PYTHON_OUT} mypy --strict {PYTHON_OUT}/grimoire_rest_client "
    "examples/clients/python/play_openapi_python_client.py",
    f"PYTHONPATH={PYTHON_OUT} python examples/clients/python/play_openapi_python_client.py",
)
DATAMODEL_CODE_GENERATOR = Generator(
    "datamodel-code-generator",
    f"datamodel-codegen --input openapi/openapi.yaml --input-file-type openapi "
    f"--output {PYTHON_OUT}/grimoire_models.py --output-model-type pydantic_v2.BaseModel "
    "--target-python-version 3.11 --use-annotated --capitalise-enum-members --naming-strategy parent-prefixed "
    "--deserialize-default-values enum --formatters builtin --disable-timestamp",
    f"MYPYPATH={PYTHON_OUT} mypy --strict {PYTHON_OUT}/grimoire_models.py "
    "examples/clients/python/play_datamodel_codegen.py",
    f"PYTHONPATH={PYTHON_OUT} python examples/clients/python/play_datamodel_codegen.py",
)
ARIADNE_CODEGEN = Generator(
    "ariadne-codegen",
    f"mkdir -p {PYTHON_OUT} && {CODEGEN_VENV}/bin/ariadne-codegen "
    "--config examples/clients/python/ariadne-codegen.toml",
    f"MYPYPATH={PYTHON_OUT} {CODEGEN_VENV}/bin/mypy --strict {PYTHON_OUT}/grimoire_graphql_client "
    "examples/clients/python/play_ariadne_codegen.py",
    f"PYTHONPATH={PYTHON_OUT} {CODEGEN_VENV}/bin/python examples/clients/python/play_ariadne_codegen.py",
)
OPENAPI_TYPESCRIPT = Generator(
    "openapi-typescript",
    f"cd {TS} && node_modules/.bin/openapi-typescript ../../../openapi/openapi.yaml -o generated/rest.ts",
    f"cd {TS} && node_modules/.bin/tsc -p tsconfig.json --strict",
    f"node {TS}/dist/src/play-openapi-fetch.js",
)
GRAPHQL_CODEGEN = Generator(
    "graphql-codegen",
    f"cd {TS} && node_modules/.bin/graphql-codegen --config codegen.ts",
    f"cd {TS} && node_modules/.bin/tsc -p tsconfig.json --strict",
    f"node {TS}/dist/src/play-graphql-codegen.js",
)
PYTHON = (OPENAPI_PYTHON_CLIENT, DATAMODEL_CODE_GENERATOR, ARIADNE_CODEGEN)
TYPESCRIPT = (OPENAPI_TYPESCRIPT, GRAPHQL_CODEGEN)
ALL = PYTHON + TYPESCRIPT

#: A line of a generator's output that says something went wrong or was left out.
WARNING = re.compile(r"warn|⚠|deprecat|skipp|could not|cannot|unable|unsupported|error|fail", re.IGNORECASE)
