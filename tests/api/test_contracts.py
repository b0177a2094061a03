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


# -- what generators need (issue 24): checked on the exported documents, as generators read them -----------

MAX_SAFE_INTEGER = 2**53 - 1


def _openapi() -> dict:
    return yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))


def _walk(node, path=""):
    """Every schema-like mapping in the document, with its JSON pointer."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, f"{path}/{index}")


def _types(schema: dict) -> set:
    kind = schema.get("type")
    return set(kind) if isinstance(kind, list) else {kind}


def _is_schema(path: str) -> bool:
    """Not a property name, a mapping of names or an example: a place a schema stands."""
    return not path.endswith(("/properties", "/mapping", "/schemas", "/responses", "/paths", "/content",
                              "/headers", "/links", "/securitySchemes"))


def test_openapi_titles_are_unique_and_every_object_is_a_named_component():
    """Generators name types by title (or by component name): two schemas with one title lose one of them,
    and an inline object gets a name made up from where it stands (and collides)."""
    spec = _openapi()
    titles, inline = {}, []
    for path, node in _walk(spec):
        if not _is_schema(path):
            continue
        if isinstance(node.get("title"), str):
            assert node["title"] not in titles, f"title {node['title']!r} at {titles.get(node['title'])} and {path}"
            titles[node["title"]] = path
        named = path.count("/") == 3 and path.startswith("/components/schemas/")
        if "object" in _types(node) and node.get("properties") and not named:
            inline.append(path)
    assert not inline, f"objects not under components: {inline[:5]}"
    for name, schema in spec["components"]["schemas"].items():
        assert schema.get("title", name) == name, f"{name} is titled {schema['title']}"


def test_openapi_integers_are_exact_in_javascript():
    """An integer JavaScript cannot read exactly (past 2^53) travels as a decimal string: every integer
    schema in the document is bounded within +-(2^53 - 1). Exempt: the deprecated forms still accepted for
    one release (docs/changelog.md), such as a seed sent as a number."""
    unbounded = [path for path, node in _walk(_openapi()) if _is_schema(path) and "integer" in _types(node)
                 and not node.get("deprecated")
                 and not (node.get("maximum", 2**63) <= MAX_SAFE_INTEGER
                          and node.get("minimum", -2**63) >= -MAX_SAFE_INTEGER)]
    assert not unbounded, f"integers without bounds under 2^53: {unbounded[:5]}"


def test_openapi_has_no_bare_objects():
    """A bare ``type: object`` becomes ``Record<string, never>``: every object has properties, or says that
    it is a free-form map (``additionalProperties``)."""
    bare = [path for path, node in _walk(_openapi()) if _is_schema(path) and "object" in _types(node)
            and "properties" not in node and "additionalProperties" not in node]
    assert not bare, f"bare objects: {bare[:5]}"


def _union_members(schema: dict, discriminator: str) -> dict[str, str]:
    """value -> component name of a oneOf with a discriminator; every member listed in the mapping."""
    assert schema["discriminator"]["propertyName"] == discriminator
    mapping = {value: ref.rsplit("/", 1)[1] for value, ref in schema["discriminator"]["mapping"].items()}
    assert sorted(ref["$ref"].rsplit("/", 1)[1] for ref in schema["oneOf"]) == sorted(mapping.values())
    return mapping


def test_matches_actions_and_events_are_told_apart_by_game_and_type():
    """A client narrows a match's view, options, actions and events from ``match.game``, and an action or
    event from its ``type``: each per-game schema pins the discriminator's value as a const."""
    from service.games import all_games

    schemas = _openapi()["components"]["schemas"]
    games = all_games()
    for union in ("Match", "CreateMatch", "LegalActions", "History", "ActionAccepted", "Replay"):
        members = _union_members(schemas[union], "game")
        assert set(members) == set(games), union
        for game_id, name in members.items():
            assert schemas[name]["properties"]["game"]["const"] == game_id
            assert "game" in schemas[name]["required"]
    for game_id, name in _union_members(schemas["Match"], "game").items():
        match = schemas[name]["properties"]
        prefix = name.removesuffix("Match")
        assert match["view"] == {"$ref": f"#/components/schemas/{prefix}View"}
        assert match["options"] == {"$ref": f"#/components/schemas/{prefix}MatchOptions"}
        for union, kinds in ((f"{prefix}Action", games[game_id].action_schemas),
                             (f"{prefix}Event", games[game_id].event_schemas)):
            members = _union_members(schemas[union], "type")
            assert set(members) == set(kinds), union
            for kind, member in members.items():
                assert schemas[member]["properties"]["type"]["const"] == kind
        legal = schemas[f"{prefix}LegalActions"]["properties"]["actions"]["items"]
        assert legal == {"$ref": f"#/components/schemas/{prefix}Action"}
        entry = schemas[f"{prefix}HistoryEntry"]["properties"]
        assert {"$ref": f"#/components/schemas/{prefix}Action"} in entry["action"]["anyOf"]
        assert entry["events"]["items"] == {"$ref": f"#/components/schemas/{prefix}Event"}
    submitted = schemas["SubmitAction"]["properties"]["action"]
    assert submitted == {"$ref": "#/components/schemas/GameAction"}
    assert {ref["$ref"].rsplit("/", 1)[1] for ref in schemas["GameAction"]["anyOf"]} == {
        f"{name.removesuffix('Match')}Action" for name in _union_members(schemas["Match"], "game").values()}


def test_problem_codes_are_the_machine_codes():
    """REST publishes ``Problem.code`` as an enum: exactly the codes with an HTTP status, and every code the
    service raises has one (a code missing from STATUS would go out as an undocumented 409)."""
    import ast
    import pathlib

    from service.rest.problems import STATUS, TITLES

    schemas = _openapi()["components"]["schemas"]
    assert schemas["Problem"]["properties"]["code"]["enum"] == sorted(STATUS)
    assert set(TITLES) == set(STATUS)
    raised = set()
    for path in pathlib.Path(OPENAPI_PATH).parent.parent.joinpath("service").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):  # `code = "..."` on an error class
                for stmt in node.body:
                    if (isinstance(stmt, ast.Assign) and [t.id for t in stmt.targets if isinstance(t, ast.Name)]
                            == ["code"] and isinstance(stmt.value, ast.Constant)):
                        raised.add(stmt.value.value)
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "problem" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                raised.add(node.args[0].value)
            if isinstance(node, ast.Call):  # RuleError(message, code="...")
                raised |= {k.value.value for k in node.keywords if k.arg == "code" and isinstance(k.value, ast.Constant)}
    # the base classes' codes: never raised themselves; store_unavailable ends a stream, it is no problem
    assert raised - set(STATUS) == {"rule_error", "store_error", "store_unavailable"}


def test_create_match_documents_exactly_the_problems_it_returns(client):
    """Each problem ``createMatch`` documents beyond the common ones is one a request can get, and back."""
    from service.rest.openapi import _COMMON

    responses = _openapi()["paths"]["/v1/matches"]["post"]["responses"]
    documented = {(int(status), code) for status, response in responses.items() if status[0] in "45"
                  for code in response["description"].split(", ")} - _statuses(_COMMON)
    bot = {"level": "random"}
    requests = [
        {"json": {"game": "snap"}},
        {"json": {"game": "high-card", "variant": "speed"}},
        {"json": {"game": "high-card", "bots": [{"level": "godlike"}]}},
        {"json": {"game": "high-card", "bots": [{**bot, "seat": 2}]}},
        {"json": {"game": "high-card", "bots": [bot, bot, bot]}},
        {"json": {"game": "high-card", "bots": [{**bot, "seat": 0}, {**bot, "seat": 0}]}},
        {"json": {"game": "casting-stones", "variant": "advanced", "bots": [bot]}},  # a bot owns no collection
        {"content": b'{"game": "high-card"}', "headers": {"content-type": "text/plain"}},
    ]
    returned = set()
    for request in requests:
        response = client.post("/v1/matches", **request)
        returned.add((response.status_code, response.json()["code"]))
    assert returned == documented


def _statuses(codes):
    from service.rest.problems import STATUS

    return {(STATUS[code], code) for code in codes}


def _nullable(schema: dict) -> bool:
    return "null" in _types(schema) or any(member.get("type") == "null" for member in schema.get("anyOf", ()))


def _graphql_type(sdl, name: str, prefix: str):
    """The GraphQL type of a REST component: the same name (GraphQL keeps a title's game prefix twice)."""
    return sdl.type_map.get(name) or sdl.type_map.get(f"{prefix}{name}")


def test_rest_and_graphql_agree_on_nullability():
    """One source of truth per field: a field non-null in one contract is required and non-nullable in the
    other, for every field of every view (and the objects in it), action and match."""
    from graphql import GraphQLNonNull, build_schema

    from service.games import all_games

    schemas = _openapi()["components"]["schemas"]
    sdl = build_schema(SDL_PATH.read_text(encoding="utf-8"))
    pairs = []  # (REST component, GraphQL type)
    for game in all_games().values():
        prefix = "".join(part.capitalize() for part in game.id.split("-"))
        names = _view_objects(schemas, f"{prefix}View")
        names |= {ref["$ref"].rsplit("/", 1)[1] for ref in schemas[f"{prefix}Action"]["oneOf"]}
        pairs += [(name, _graphql_type(sdl, name, prefix)) for name in sorted(names)]
        pairs.append((f"{prefix}Match", sdl.type_map["Match"]))
    assert all(graphql is not None for _, graphql in pairs), [rest for rest, graphql in pairs if graphql is None]
    disagree = []
    for rest, graphql in pairs:
        schema = schemas[rest]
        for key, prop in schema["properties"].items():
            camel = key.split("_")[0] + "".join(part.capitalize() for part in key.split("_")[1:])
            name = next((n for n in (prop.get("x-graphql-name"), key, camel) if n in graphql.fields), None)
            assert name is not None, f"{rest}.{key} is not in GraphQL's {graphql.name}"
            rest_non_null = key in schema.get("required", ()) and not _nullable(prop)
            if rest_non_null != isinstance(graphql.fields[name].type, GraphQLNonNull):
                disagree.append(f"{rest}.{key} (GraphQL {graphql.name}.{name}: {graphql.fields[name].type})")
    assert not disagree, disagree


def _view_objects(schemas: dict, root: str) -> set[str]:
    """The components of the view and of every object it holds, however deep."""
    seen: set[str] = set()
    pending = [root]
    while pending:
        name = pending.pop()
        seen.add(name)
        for _, node in _walk(schemas[name]):
            ref = node.get("$ref", "").rsplit("/", 1)[-1]
            if ref and ref not in seen and "properties" in schemas[ref]:
                pending.append(ref)
    return seen
