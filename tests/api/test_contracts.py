"""The committed API contracts match the code: regenerate with `grimoire export-schema`."""

import yaml

from service.contracts import OPENAPI_PATH, SDL_PATH, graphql_sdl, openapi_yaml


def test_schema_graphql_is_up_to_date():
    assert SDL_PATH.read_text(encoding="utf-8") == graphql_sdl(), "run: grimoire export-schema"


def test_openapi_yaml_is_up_to_date():
    assert OPENAPI_PATH.read_text(encoding="utf-8") == openapi_yaml(), "run: grimoire export-schema"


def test_openapi_describes_every_rest_route():
    from service.rest import routes as rest_routes
    from service.rest.streams import routes as stream_routes

    spec = yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))
    documented = {(path, method) for path, ops in spec["paths"].items() for method in ops}
    from service.games import all_games

    for game in all_games().values():  # the catalogue route is documented once per catalogue
        for catalogue in game.catalogues:
            assert (f"/v1/games/{game.id}/{catalogue.name}", "get") in documented
    for route in rest_routes + stream_routes:
        if route.path == "/v1/games/{game_id}/{catalogue}":
            continue
        for method in route.methods - {"HEAD"}:
            assert (route.path, method.lower()) in documented, f"{method} {route.path} is not in openapi.yaml"
