"""The two API contracts front-end developers generate clients from.

``schema/schema.graphql`` (GraphQL SDL) and ``openapi/openapi.yaml`` (REST)
are generated from the hosted games and committed; tests fail when either
is stale. Regenerate with ``grimoire export-schema``.
"""

from pathlib import Path

import yaml

from schema import build_schema
from service.games import all_games
from service.rest.openapi import build_openapi

ROOT = Path(__file__).resolve().parent.parent
SDL_PATH = ROOT / "schema" / "schema.graphql"
OPENAPI_PATH = ROOT / "openapi" / "openapi.yaml"


def graphql_sdl() -> str:
    return build_schema(all_games()).as_str() + "\n"


def openapi_yaml(games=None) -> str:
    return yaml.safe_dump(build_openapi(all_games() if games is None else games), sort_keys=False,
                          allow_unicode=True, width=100)


def write_contracts() -> list[Path]:
    SDL_PATH.write_text(graphql_sdl(), encoding="utf-8")
    OPENAPI_PATH.write_text(openapi_yaml(), encoding="utf-8")
    return [SDL_PATH, OPENAPI_PATH]
