"""The examples in docs/api.md are valid against the exported schema."""

import re
from pathlib import Path

from graphql import build_schema, parse, validate

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"
SDL = Path(__file__).resolve().parents[2] / "schema" / "schema.graphql"


def test_graphql_examples_in_the_api_docs_validate():
    schema = build_schema(SDL.read_text(encoding="utf-8"))
    blocks = re.findall(r"```graphql\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 3
    for block in blocks:
        assert validate(schema, parse(block)) == [], block
