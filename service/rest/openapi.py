"""The OpenAPI 3.1 description of the REST API, built from the hosted games.

The per-game view and action schemas come from each game's ``schema.json``,
so the typed clients front-end developers generate know every game's shapes.
``grimoire export-schema`` writes the result to ``openapi/openapi.yaml``; a
test fails when that file is stale.
"""

import json
from typing import Any

from service.engine import BOARD_SEAT_NOTE, RESULT_CAUSE, Game

from service.store.bots import BOT_LEVELS

from .problems import STATUS


def _pascal(game_id: str) -> str:
    return "".join(part.capitalize() for part in game_id.replace("_", "-").split("-"))


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(schema: dict, **extra) -> dict:
    """``schema`` or null; a named schema stays a reference, so generators keep its name. A plain value gets
    ``null`` in its ``type`` list: as a member of ``anyOf`` it became a class of its own (datamodel-code-generator's
    ``AddBotSeat(RootModel[int])``), which a caller then had to build around a plain ``int``."""
    if "$ref" in schema or not isinstance(schema.get("type"), str) or "enum" in schema:
        return {"anyOf": [schema, {"type": "null"}], **extra}
    return {**schema, "type": [schema["type"], "null"], **extra}


def _union(names: dict[str, str], discriminator: str, **extra) -> dict:
    """One of the named schemas, told apart by ``discriminator``'s value (value -> schema name)."""
    return {"oneOf": [_ref(n) for n in names.values()],
            "discriminator": {"propertyName": discriminator,
                              "mapping": {value: f"#/components/schemas/{n}" for value, n in names.items()}},
            **extra}


#: The largest integer every JSON client reads exactly (JavaScript's Number.MAX_SAFE_INTEGER): a value
#: that can pass it (a seed) travels as a decimal string, as in GraphQL.
MAX_SAFE_INTEGER = 2**53 - 1
#: The bounds of a game's integer whose schema gives none: GraphQL carries the same fields as Int, 32-bit.
_GAME_INTEGER = {"minimum": -2**31, "maximum": 2**31 - 1}
#: Versions and times in milliseconds since the epoch.
_COUNT = {"type": "integer", "minimum": 0, "maximum": MAX_SAFE_INTEGER}
_MS = {**_COUNT, "description": "Milliseconds since the epoch."}
_SEAT = {"type": "integer", "minimum": 0, "maximum": 15}
_SEED = {"type": "string", "pattern": "^[0-9]{1,19}$", "maxLength": 19,
         "description": "A decimal integer from 0 to 2^63 - 1 (a string: JavaScript numbers lose digits past 2^53)."}
#: Fair play (docs/fairness.md): hashes and commitments are SHA-256 digests in lowercase hex.
_HEX64 = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
_SEED_SOURCE = {"type": "string", "enum": ["commitment", "creator", "server"],
                "description": "commitment: the server seed was committed at creation and mixed with the seats' "
                               "entropies (provable); creator: the creator fixed the seed (never rated); server: "
                               "drawn before commitments existed (not provable). docs/fairness.md."}
_RULES_VERSION = {"type": "string", "description": "The version of the game's rules the match is played with, "
                                                   "fixed at creation."}


def _has_type(schema: dict, kind: str) -> bool:
    types = schema.get("type")
    return kind in types if isinstance(types, list) else types == kind


class _GameSchemas:
    """One game's JSON Schemas as OpenAPI components, named ``<Game><title>``.

    Generators name a type by its title, so every titled sub-schema (object or
    enum) becomes one component, referenced wherever it is used; two uses of one
    title must be the same schema. The use keeps its own description and default.
    """

    def __init__(self, game: Game, schemas: dict[str, Any]):
        self.game = game
        self.prefix = _pascal(game.id)
        self.schemas = schemas

    def name(self, title: str) -> str:
        return title if title.startswith(self.prefix) else f"{self.prefix}{title}"

    def add(self, name: str, schema: dict) -> dict:
        """Publish ``schema`` as the component ``name``; return a reference to it."""
        self._define(name, {**self._copy(schema, name), "title": name})
        return _ref(name)

    def _define(self, name: str, schema: dict) -> None:
        known = self.schemas.setdefault(name, schema)
        strip = lambda s: {k: v for k, v in s.items() if k not in ("description", "default")}  # noqa: E731
        if strip(known) != strip(schema):
            raise ValueError(f"{self.game.id}: two different schemas are titled {schema.get('title')!r}")

    def _copy(self, schema: dict, where: str) -> dict:
        out = {}
        for key, value in schema.items():
            if key == "properties":
                out[key] = {k: self.use(v) for k, v in value.items()}
            elif key == "items":
                out[key] = self.use(value)
            else:
                out[key] = value
        if _has_type(out, "integer"):
            out = {**_GAME_INTEGER, **out}
        if isinstance(out.get("const"), str) and "type" not in out:
            out["type"] = "string"
        return out

    def use(self, schema: dict) -> dict:
        """A sub-schema as published: a reference to its component if it has a title."""
        if "title" not in schema:
            return self._copy(schema, "")
        name = self.name(schema["title"])
        usage = {k: schema[k] for k in ("description", "default") if k in schema}
        nullable = _has_type(schema, "null")
        body = {k: v for k, v in schema.items() if k != "default"}
        if nullable:
            body["type"] = next(t for t in body["type"] if t != "null")
            if "enum" in body:
                body["enum"] = [v for v in body["enum"] if v is not None]
        self._define(name, {**self._copy(body, name), "title": name})
        return _nullable(_ref(name), **usage) if nullable else {**_ref(name), **usage}


def _problem_responses(*codes: str) -> dict[str, Any]:
    responses: dict[str, Any] = {}
    for code in codes:
        status = str(STATUS[code])
        entry = responses.setdefault(status, {"description": "", "content": {
            "application/problem+json": {"schema": _ref("Problem")}}})
        entry["description"] = ", ".join(filter(None, [entry["description"], code]))
    return responses


_MATCH_ID = {"name": "match_id", "in": "path", "required": True,
             "schema": {"type": "string", "minLength": 1, "maxLength": 64}}
_AUTH = [{}, {"seatToken": []}]
_COMMON = ("malformed_request", "payload_too_large", "rate_limited", "service_unavailable")
#: What every request about one match may also get: this process lacks the match's rules version (a rolling
#: deployment), 503 with Retry-After like service_unavailable (docs/operations.md).
_ON_MATCH = (*_COMMON, "rules_version_unavailable")
#: ``to_act`` everywhere, and the seat that acted: either may be the board itself (BOARD_SEAT).
_TO_ACT = {"type": "array", "items": {"type": "integer", "minimum": -1, "maximum": 15},
           "description": f"The seats the game waits on; {BOARD_SEAT_NOTE}"}
_ACTED = {"type": "integer", "minimum": -1, "maximum": 15, "description": f"The seat that acted; {BOARD_SEAT_NOTE}"}
_FREE_FORM = {"type": "object", "additionalProperties": True}


def _json(schema: dict, description: str, headers: dict | None = None) -> dict:
    response = {"description": description, "content": {"application/json": {"schema": schema}}}
    if headers:
        response["headers"] = headers
    return response


_ETAG = {"ETag": {"description": "The match version, quoted.", "schema": {"type": "string"}}}


def _game_components(game: Game, schemas: dict[str, Any]) -> dict[str, str]:
    """Add one game's components; return the names of its match-level ones by role."""
    g = _GameSchemas(game, schemas)
    p = g.prefix
    view = g.add(f"{p}View", game.view_schema)
    options = g.add(f"Create{p}MatchOptions", game.options_schema)
    published = schemas[f"Create{p}MatchOptions"]
    schemas[f"{p}MatchOptions"] = {
        **published, "title": f"{p}MatchOptions", "required": ["variant"],
        "description": "The match's options: the variant and every option (options added since a match was "
                       "created are missing from it).",
        "properties": {"variant": {"type": "string", "enum": game.variant_ids()}, **published["properties"]}}
    actions = {kind: f"{p}{_pascal(kind)}Action" for kind in sorted(game.action_schemas)}
    for kind, name in actions.items():
        g.add(name, game.action_schemas[kind])
    schemas[f"{p}Action"] = _union(actions, "type", title=f"{p}Action",
                                   description=f"An action of {game.title}; `type` tells which.")
    events = {kind: f"{p}{_pascal(kind)}Event" for kind in sorted(game.event_schemas)}
    for kind, name in events.items():
        g.add(name, game.event_schemas[kind])
    schemas[f"{p}Event"] = _union(events, "type", title=f"{p}Event",
                                  description=f"An event of {game.title}, as your seat may see it; `type` tells "
                                              "which.") if events else {**_FREE_FORM, "title": f"{p}Event"}
    game_const = {"type": "string", "const": game.id}
    action, event_list = _ref(f"{p}Action"), {"type": "array", "items": _ref(f"{p}Event")}
    shown_action = _nullable(action, description="Shown only to the seat that acted.")
    schemas.update({
        f"{p}Match": {
            "type": "object", "title": f"{p}Match", "description": f"A match of {game.title}.",
            "required": ["id", "game", "variant", "version", "status", "options", "seed", "seats", "to_act",
                         "my_seat", "result", "view", "seed_source", "seed_commitment", "revealed_seed",
                         "rules_version"],
            "properties": {
                "id": {"type": "string"}, "game": game_const, "variant": {"type": "string"},
                "version": {**_COUNT, "description": "Starts at 0 and grows by one per accepted action."},
                "status": {"type": "string", "enum": ["waiting", "active", "finished"]},
                "options": _ref(f"{p}MatchOptions"),
                "seed": _nullable(_SEED, description="Revealed once the match is finished."),
                "seed_source": _SEED_SOURCE,
                "seed_commitment": _nullable(_HEX64, description="SHA-256 of the seed, published at creation; "
                                                                 "null for server."),
                "revealed_seed": _nullable({"type": "string"}, description="The committed seed, revealed once "
                                                                           "the match is finished."),
                "rules_version": _RULES_VERSION,
                "seats": {"type": "array", "items": _ref("Seat")},
                "to_act": _TO_ACT,
                "my_seat": _nullable(_SEAT, description="The caller's seat; null for a spectator."),
                "result": _nullable(_ref("Result")),
                "view": view,
            },
        },
        f"Create{p}Match": {
            "type": "object", "title": f"Create{p}Match", "required": ["game"], "additionalProperties": False,
            "properties": {
                "game": game_const,
                "variant": {"type": "string", "enum": game.variant_ids()},
                "seats": {"type": "integer", "minimum": game.min_seats, "maximum": game.max_seats},
                "seed": {"anyOf": [_SEED, {"type": "integer", "minimum": 0, "maximum": 2**63 - 1,
                                           "deprecated": True}],
                         "description": "A seed for a reproducible match, as a decimal string. A JSON number is "
                                        "accepted until release 2.0 (docs/changelog.md)."},
                "options": options,
                "turn_seconds": {"type": "integer", "minimum": 1, "maximum": 86400,
                                 "description": "A turn timer: a late seat's default move is played after this "
                                                "long."},
                "bots": {"type": "array", "maxItems": 16, "items": _ref("AddBot"),
                         "description": "Seats given to bots at once."},
                "hot_seat": {"type": "boolean", "default": False,
                             "description": "One player may hold several seats (players joining with their player "
                                            "token); else a player gets one seat of the match."},
            },
        },
        f"{p}LegalActions": {
            "type": "object", "title": f"{p}LegalActions", "required": ["game", "version", "seat", "actions"],
            "properties": {"game": game_const, "version": _COUNT, "seat": _nullable(_SEAT),
                           "actions": {"type": "array", "items": action}},
        },
        f"{p}ActionAccepted": {
            "type": "object", "title": f"{p}ActionAccepted", "required": ["game", "version", "events", "duplicate",
                                                                          "match"],
            "properties": {"game": game_const, "version": _COUNT, "events": event_list,
                           "duplicate": {"type": "boolean"}, "match": _ref(f"{p}Match")},
        },
        f"{p}StreamUpdate": {
            "type": "object", "title": f"{p}StreamUpdate",
            "required": ["game", "match_id", "version", "seat", "action", "events", "status", "to_act", "at",
                         "auto"],
            "properties": {"game": game_const, "match_id": {"type": "string"}, "version": _COUNT, "seat": _ACTED,
                           "action": shown_action, "events": event_list,
                           "status": {"type": "string", "enum": ["active", "finished"]}, "to_act": _TO_ACT,
                           "at": {**_MS, "description": "Accepted at, in ms since the epoch."},
                           "auto": _nullable(_ref("AutoAction"))},
        },
        f"{p}HistoryEntry": {
            "type": "object", "title": f"{p}HistoryEntry",
            "required": ["version", "seat", "action", "events", "at", "auto"],
            "properties": {"version": _COUNT, "seat": _ACTED, "action": shown_action, "events": event_list,
                           "at": _MS, "auto": _nullable(_ref("AutoAction"))},
        },
        f"{p}History": {
            "type": "object", "title": f"{p}History", "required": ["game", "entries"],
            "properties": {"game": game_const, "entries": {"type": "array", "items": _ref(f"{p}HistoryEntry")}},
        },
        f"{p}RecordedAction": {
            "type": "object", "title": f"{p}RecordedAction", "required": ["version", "seat", "action", "state_hash"],
            "properties": {
                "version": _COUNT, "seat": _ACTED,
                "action": _nullable(action, description="Shown to the seat that acted, and to everyone once the "
                                                        "match is over."),
                "state_hash": _nullable(_HEX64, description="The chained hash of the state after it "
                                                            "(docs/fairness.md); null where withheld."),
            },
        },
        f"{p}MatchRecord": {
            "type": "object", "title": f"{p}MatchRecord",
            "description": f"The record of a {game.title} match (docs/fairness.md): after the end, everything "
                           "`grimoire verify` needs; before, the match so far with hidden parts withheld.",
            "required": ["format", "match_id", "game", "variant", "options", "seats", "rules_version",
                         "seed_source", "seed_commitment", "revealed_seed", "rng_seed", "entropies",
                         "initial_state_hash", "actions", "status", "version", "result", "disclosure", "seat"],
            "properties": {
                "format": {"type": "string", "const": "grimoire-match-record/1"},
                "match_id": {"type": "string"}, "game": game_const, "variant": {"type": "string"},
                "options": _ref(f"{p}MatchOptions"),
                "seats": {"type": "integer", "minimum": game.min_seats, "maximum": game.max_seats},
                "rules_version": _RULES_VERSION, "seed_source": _SEED_SOURCE,
                "seed_commitment": _nullable(_HEX64, description="null for server."),
                "revealed_seed": _nullable({"type": "string"}, description="Once the match is over."),
                "rng_seed": _nullable(_SEED, description="The RNG seed derived from it, once the match is over."),
                "entropies": {"type": ["array", "null"], "items": _ref("SeatEntropy"),
                              "description": "What each seat brought, once every seat has joined; null for "
                                             "creator and server."},
                "initial_state_hash": _nullable(_HEX64, description="The set-up's hash, the chain's start."),
                "actions": {"type": "array", "items": _ref(f"{p}RecordedAction")},
                "status": {"type": "string", "enum": ["waiting", "active", "finished"]},
                "version": _COUNT, "result": _nullable(_ref("Result")),
                "disclosure": {"type": "string", "enum": ["everything", "seat", "public"]},
                "seat": _nullable(_SEAT, description="The caller's seat; null for a spectator."),
            },
        },
        f"{p}ReplayFrame": {
            "type": "object", "title": f"{p}ReplayFrame",
            "required": ["version", "seat", "action", "events", "view", "to_act", "auto"],
            "properties": {
                "version": _COUNT,
                "seat": {**_nullable(_ACTED),
                         "description": f"The seat that acted; null for the set-up; {BOARD_SEAT_NOTE}"},
                "action": _nullable(action, description="Shown to the seat that acted, and in the spectator "
                                                        "replay."),
                "events": event_list, "view": view,
                "views": {"type": "array", "items": view, "description": "Spectator replay: every seat's."},
                "to_act": _TO_ACT,
                "auto": _nullable(_ref("AutoAction")),
            },
        },
        f"{p}Replay": {
            "type": "object", "title": f"{p}Replay",
            "required": ["match_id", "game", "seat", "disclosure", "note", "seed", "verified", "mismatches",
                         "frames"],
            "properties": {
                "match_id": {"type": "string"}, "game": game_const, "seat": _nullable(_SEAT),
                "disclosure": {"type": "string", "enum": ["seat", "everything"]}, "note": {"type": "string"},
                "seed": _nullable(_SEED, description="The spectator replay's seed; null in a seat's."),
                "verified": {"type": "boolean", "description": "Every stored state matched the re-computed one."},
                "mismatches": {"type": "array", "items": _ref("ReplayMismatch")},
                "frames": {"type": "array", "items": _ref(f"{p}ReplayFrame")},
            },
        },
    })
    for catalogue in game.catalogues:
        g.add(g.name(catalogue.item_schema["title"]), catalogue.item_schema)
    return {"game": game.id, "prefix": p}


def _by_game(games: dict[str, Game], role: str, description: str) -> dict:
    """The union of every game's ``<Game><role>``, told apart by ``game``."""
    return _union({g.id: f"{_pascal(g.id)}{role}" for g in games.values()}, "game", description=description)


def build_openapi(games: dict[str, Game]) -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    for game in games.values():
        _game_components(game, schemas)
    catalogue_paths = {}
    for game in games.values():
        for catalogue in game.catalogues:
            g = _GameSchemas(game, schemas)
            item = g.name(catalogue.item_schema["title"])
            listing = f"{item}List"
            schemas[listing] = {"type": "object", "title": listing, "required": ["items"], "properties": {
                "items": {"type": "array", "items": _ref(item)}}}
            filters = [{"name": f, "in": "query", "required": False,
                        "schema": g.use(catalogue.item_schema["properties"][f])} for f in catalogue.filters]
            filters += [{"name": name, "in": "query", "required": False, "schema": schema}
                        for name, schema in catalogue.params.items()]
            catalogue_paths[f"/v1/games/{game.id}/{catalogue.name}"] = {"get": {
                "operationId": f"{_pascal(game.id)[0].lower()}{_pascal(game.id)[1:]}{_pascal(catalogue.name)}",
                "summary": f"{game.title}: the {catalogue.name}, filtered by exact match.",
                "parameters": filters,
                "responses": {"200": _json(_ref(listing), f"The {catalogue.name}."), **_problem_responses(*_COMMON)},
            }}
    prefixes = [_pascal(g.id) for g in games.values()]

    schemas.update({
        "Problem": {
            "type": "object", "description": "RFC 9457 problem details with a machine code.",
            "required": ["type", "title", "status", "detail", "code"],
            "properties": {
                "type": {"type": "string"}, "title": {"type": "string"},
                "status": {"type": "integer", "minimum": 400, "maximum": 599},
                "detail": {"type": "string"}, "code": {"type": "string", "enum": sorted(STATUS)},
                "current_version": {**_COUNT, "description": "With version_conflict."},
                "errors": {**_FREE_FORM, "description": "With malformed_request: the invalid fields (field name "
                                                        "-> messages)."},
            },
        },
        "Variant": {"type": "object", "required": ["id", "title", "description"],
                    "properties": {"id": {"type": "string"}, "title": {"type": "string"},
                                   "description": {"type": "string"}}},
        "JsonSchema": {**_FREE_FORM, "description": "A JSON Schema (draft 2020-12) document."},
        "Game": {
            "type": "object",
            "required": ["id", "title", "min_seats", "max_seats", "variants", "summary", "options_schema",
                         "action_schemas", "view_schema", "rules_version"],
            "properties": {
                "id": {"type": "string"}, "title": {"type": "string"}, "min_seats": _SEAT, "max_seats": _SEAT,
                "variants": {"type": "array", "items": _ref("Variant")},
                "summary": {"type": "string"}, "options_schema": _ref("JsonSchema"),
                "action_schemas": {"type": "object", "additionalProperties": _ref("JsonSchema"),
                                   "description": "Action type -> its JSON Schema."},
                "view_schema": _ref("JsonSchema"),
                "rules_version": {"type": "string", "description": "The version of the game's rules new matches "
                                                                   "get (a match keeps its own)."},
            },
        },
        "GameList": {"type": "object", "required": ["games"],
                     "properties": {"games": {"type": "array", "items": _ref("Game")}}},
        "Seat": {"type": "object", "required": ["seat", "name", "joined", "bot"],
                 "properties": {"seat": _SEAT, "name": {"type": ["string", "null"]},
                                "joined": {"type": "boolean"},
                                "bot": {"type": ["string", "null"], "description": "The bot level, if a bot."}}},
        "Result": {"type": "object", "required": ["winners", "reason"],
                   "properties": {"winners": {"type": "array", "items": _SEAT},
                                  "scores": {"type": ["array", "null"], "items": {"type": "number"}},
                                  "reason": {"type": "string", "description": "A sentence for people."},
                                  "cause": {"type": ["string", "null"], "description": RESULT_CAUSE}}},
        "GameAction": {"anyOf": [_ref(f"{p}Action") for p in prefixes],
                       "description": "An action of one of the games (the match's `game` tells which)."},
        "Match": _by_game(games, "Match", "A match of one of the games; `game` tells which, and so the types of "
                                          "its `view`, `options` and actions."),
        "CreateMatch": _union({g.id: f"Create{_pascal(g.id)}Match" for g in games.values()}, "game",
                              description="A new match of one of the games; `game` selects which."),
        "JoinSeat": {
            "type": "object", "required": [], "additionalProperties": False,
            "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 64,
                                    "description": "Required, unless you join with a player token (the bearer "
                                                   "token): then the seat is bound to your player and named after "
                                                   "it."}, "seat": _SEAT,
                           "entropy": {"type": "string", "minLength": 1, "maxLength": 128,
                                       "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]*$",
                                       "description": "Your contribution to the match's RNG seed, no control "
                                                      "characters; one is generated if absent (docs/fairness.md)."}},
        },
        "SeatJoined": {
            "type": "object", "required": ["seat", "token", "match"],
            "properties": {"seat": _SEAT,
                           "token": {"type": "string", "description": "The seat's bearer token, shown once."},
                           "match": _ref("Match")},
        },
        "SubmitAction": {
            "type": "object", "required": ["action"], "additionalProperties": False,
            "properties": {"action": _ref("GameAction")},
        },
        "ActionAccepted": _by_game(games, "ActionAccepted", "The accepted action's version and events (as your "
                                                            "seat may see them) and the match after it."),
        "LegalActions": _by_game(games, "LegalActions", "Every action the seat may take now; send one back as "
                                                        "it is."),
        "History": _by_game(games, "History", "Accepted actions, as the caller's seat may see them."),
        "MatchRecord": _by_game(games, "MatchRecord", "A match's record (docs/fairness.md); `game` tells which."),
        "SeatEntropy": {
            "type": "object", "required": ["seat", "entropy", "generated"],
            "description": "The entropy a seat brought to the match's RNG seed.",
            "properties": {"seat": _SEAT, "entropy": {"type": "string"},
                           "generated": {"type": "boolean", "description": "Generated by the service for the seat."}}},
        "Replay": _by_game(games, "Replay", "A finished match re-played from its seed and action log."),
        "ReplayMismatch": {
            "type": "object", "required": ["version", "what", "detail"],
            "properties": {"version": _COUNT, "what": {"type": "string"}, "detail": {"type": "string"}}},
        "StreamUpdate": _by_game(games, "StreamUpdate", "One accepted action on a live stream, as your seat may "
                                                        "see it; `game` tells which game's actions and events."),
        "TurnNotice": {
            "type": "object", "required": ["match_id", "seat", "version", "status", "to_act", "your_turn"],
            "properties": {"match_id": {"type": "string"}, "seat": _SEAT, "version": _COUNT,
                           "status": {"type": "string", "enum": ["active", "finished"]},
                           "to_act": _TO_ACT,
                           "your_turn": {"type": "boolean"}},
        },
        "AddBot": {
            "type": "object", "required": ["level"], "additionalProperties": False,
            "properties": {"seat": _nullable(_SEAT, description="A seat number; the lowest free one if absent."),
                           "level": {"type": "string", "enum": list(BOT_LEVELS),
                                     "description": "The bot level (docs/bots.md). Another name is refused with "
                                                    "unknown_bot_level (422)."}},
        },
        "BotAdded": {"type": "object", "required": ["seat", "match"],
                     "properties": {"seat": _SEAT, "match": _ref("Match")}},
        "StreamTicket": {
            "type": "object", "required": ["ticket", "match_id", "seat", "expires_in", "events_url"],
            "description": "A ticket for your seat's live stream in a browser (whose EventSource cannot send a "
                           "token): open `events_url` once, within `expires_in` seconds.",
            "properties": {"ticket": {"type": "string"}, "match_id": {"type": "string"}, "seat": _SEAT,
                           "expires_in": {**_COUNT, "description": "Seconds the ticket is good for."},
                           "events_url": {"type": "string",
                                          "description": "The stream's path, the ticket in its query string."}},
        },
        "SeatLeft": {"type": "object", "required": ["seat", "match"],
                     "properties": {"seat": {**_SEAT, "description": "The seat given up, now free."},
                                    "match": _ref("Match")}},
        "StartReplay": {
            "type": "object", "additionalProperties": False,
            "properties": {"seat": _nullable(_SEAT, description="A seat (what it could see) or null: the spectator "
                                                                "(everything).")},
        },
        "AutoAction": {
            "type": "object", "required": ["seat", "reason", "default"],
            "description": "Set when the service played the action for a late seat (turn timer); else null.",
            "properties": {"seat": _SEAT, "reason": {"type": "string", "enum": ["turn_timeout"]},
                           "default": {"type": "string", "enum": ["pass", "random"]},
                           "turn_seconds": _nullable({"type": "integer", "minimum": 1, "maximum": 86400})},
        },
        "ReplayJob": {
            "type": "object", "required": ["id", "status", "match_id", "seat", "replay"],
            "properties": {"id": {"type": "string"},
                           "status": {"type": "string", "enum": ["queued", "started", "finished", "failed"]},
                           "match_id": {"type": "string"}, "seat": _nullable(_SEAT),
                           "replay": _nullable(_ref("Replay"))},
        },
        "LobbyEntry": {
            "type": "object", "description": "An open match: waiting for players, with a free seat.",
            "required": ["id", "game", "variant", "seats", "open_seats", "created", "updated"],
            "properties": {"id": {"type": "string"}, "game": {"type": "string"}, "variant": {"type": "string"},
                           "seats": {"type": "array", "items": _ref("Seat")},
                           "open_seats": {"type": "integer", "minimum": 1, "maximum": 16},
                           "created": _MS,
                           "updated": {**_MS, "description": "When a seat was last taken (ms since the epoch)."}},
        },
        "Lobby": {"type": "object", "required": ["matches"],
                  "properties": {"matches": {"type": "array", "items": _ref("LobbyEntry")}}},
        "Status": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}},
    })

    paths = {
        "/v1/games": {"get": {
            "operationId": "listGames", "summary": "Every hosted game, with its variants and JSON Schemas.",
            "responses": {"200": _json(_ref("GameList"), "The games."), **_problem_responses(*_COMMON)},
        }},
        "/v1/games/{game_id}": {"get": {
            "operationId": "getGame", "summary": "One game.",
            "parameters": [{"name": "game_id", "in": "path", "required": True,
                            "schema": {"type": "string", "minLength": 1}}],
            "responses": {"200": _json(_ref("Game"), "The game."),
                          **_problem_responses("unknown_game", *_COMMON)},
        }},
        **catalogue_paths,
        "/v1/matches": {"post": {
            "operationId": "createMatch", "summary": "Create a match; then join its seats.",
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("CreateMatch")}}},
            "responses": {
                "201": {**_json(_ref("Match"), "The match, seen by a spectator.", _ETAG),
                        "links": {
                            "JoinSeat": {"operationId": "joinSeat", "parameters": {"match_id": "$response.body#/id"}},
                            "GetMatch": {"operationId": "getMatch", "parameters": {"match_id": "$response.body#/id"}},
                        }},
                **_problem_responses("unknown_game", "invalid_options", "unknown_bot_level", "no_such_seat",
                                     "seat_taken", "collection_required", "unsupported_media_type", *_COMMON),
            },
        }},
        "/v1/matches/{match_id}": {"get": {
            "operationId": "getMatch", "summary": "A match as your seat (or a spectator) sees it.",
            "parameters": [_MATCH_ID], "security": _AUTH,
            "responses": {"200": _json(_ref("Match"), "The match.", _ETAG),
                          **_problem_responses("match_not_found", "invalid_token", *_ON_MATCH)},
        }},
        "/v1/matches/{match_id}/seats": {"post": {
            "operationId": "joinSeat", "summary": "Take a seat; the response carries its token, shown once.",
            "parameters": [_MATCH_ID],
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("JoinSeat")}}},
            "responses": {
                "201": {**_json(_ref("SeatJoined"), "The seat and its token.", _ETAG),
                        "links": {"SubmitAction": {"operationId": "submitAction",
                                                   "parameters": {"match_id": "$request.path.match_id"}}}},
                **_problem_responses("match_not_found", "seat_taken", "match_full", "no_such_seat",
                                     "already_seated", "invalid_entropy", "invalid_token", "player_required",
                                     "collection_required", "unsupported_media_type", *_ON_MATCH),
            },
        }},
        "/v1/matches/{match_id}/seats/{seat}": {"delete": {
            "operationId": "leaveSeat",
            "summary": "Give up your seat: its token is revoked at once and the seat is free to join again.",
            "parameters": [_MATCH_ID, {"name": "seat", "in": "path", "required": True,
                                       "schema": {"type": "integer", "minimum": 0, "maximum": 15}}],
            "security": [{"seatToken": []}],
            "responses": {"200": _json(_ref("SeatLeft"), "The seat is free; the match as a spectator sees it.",
                                       _ETAG),
                          **_problem_responses("token_required", "invalid_token", "not_your_seat",
                                               "match_not_found", *_ON_MATCH)},
        }},
        "/v1/matches/{match_id}/legal-actions": {"get": {
            "operationId": "legalActions", "summary": "Every action your seat may take now.",
            "parameters": [_MATCH_ID], "security": _AUTH,
            "responses": {"200": _json(_ref("LegalActions"), "The legal actions.", _ETAG),
                          **_problem_responses("match_not_found", "invalid_token", *_ON_MATCH)},
        }},
        "/v1/matches/{match_id}/actions": {"post": {
            "operationId": "submitAction",
            "summary": "Submit one of your legal actions, at the version you read (If-Match).",
            "parameters": [
                _MATCH_ID,
                {"name": "If-Match", "in": "header", "required": True,
                 "description": 'The match version you read, as its ETag: "3".',
                 "schema": {"type": "string", "pattern": '^"[0-9]{1,18}"$'}},
                {"name": "Idempotency-Key", "in": "header", "required": False,
                 "description": "Repeat a request with the same key to get its first outcome again.",
                 "schema": {"type": "string", "minLength": 1, "maxLength": 255}},
            ],
            "security": [{"seatToken": []}],
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("SubmitAction")}}},
            "responses": {
                "200": _json(_ref("ActionAccepted"), "The action was accepted.", _ETAG),
                **_problem_responses("token_required", "invalid_token", "match_not_found", "not_your_turn",
                                     "match_finished", "match_not_started", "version_conflict", "illegal_action",
                                     "malformed_action", "idempotency_key_reused", "precondition_required",
                                     "not_in_collection", "collection_required", "unsupported_media_type",
                                     *_ON_MATCH),
            },
        }},
        "/v1/lobby": {"get": {
            "operationId": "lobby",
            "summary": "Open matches (waiting, with a free seat), longest waiting first; then join one.",
            "parameters": [
                {"name": "game", "in": "query", "description": "Only this game's matches.",
                 "schema": {"type": "string", "minLength": 1}},
                {"name": "limit", "in": "query",
                 "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}},
            ],
            "responses": {"200": _json(_ref("Lobby"), "The open matches."),
                          **_problem_responses("unknown_game", *_COMMON)},
        }},
        "/v1/matches/{match_id}/history": {"get": {
            "operationId": "matchHistory", "summary": "Accepted actions after a version, as your seat may see them.",
            "parameters": [
                _MATCH_ID,
                {"name": "after", "in": "query", "schema": {**_COUNT, "default": 0}},
                {"name": "limit", "in": "query",
                 "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}},
            ],
            "security": _AUTH,
            "responses": {"200": _json(_ref("History"), "The history.", _ETAG),
                          **_problem_responses("match_not_found", "invalid_token", *_ON_MATCH)},
        }},
        "/v1/matches/{match_id}/record": {"get": {
            "operationId": "matchRecord",
            "summary": "The match's record: after the end, everything needed to verify it offline (grimoire verify).",
            "description": "docs/fairness.md. During the match: the match so far as your seat (or a spectator) may "
                           "see it, the seeds and other seats' actions withheld.",
            "parameters": [_MATCH_ID], "security": _AUTH,
            "responses": {"200": _json(_ref("MatchRecord"), "The record.", _ETAG),
                          **_problem_responses("match_not_found", "invalid_token", *_ON_MATCH)},
        }},
        "/v1/matches/{match_id}/bots": {"post": {
            "operationId": "addBot", "summary": "Give a free seat to a bot (docs/bots.md); it plays when the "
                                                "match waits on it.",
            "description": "With a seat token (Authorization), hand that seat to the bot instead, at any point "
                           "of the match: the token is revoked in the same step.",
            "parameters": [_MATCH_ID], "security": _AUTH,
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("AddBot")}}},
            "responses": {
                "201": _json(_ref("BotAdded"), "The bot holds the seat.", _ETAG),
                **_problem_responses("unknown_bot_level", "match_not_found", "seat_taken", "match_full",
                                     "no_such_seat", "invalid_token", "not_your_seat", "collection_required",
                                     "unsupported_media_type", *_ON_MATCH),
            },
        }},
        "/v1/matches/{match_id}/replays": {"post": {
            "operationId": "startReplay",
            "summary": "Start the replay of a finished match, for a seat or the spectator; poll the job.",
            "parameters": [_MATCH_ID],
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("StartReplay")}}},
            "responses": {
                "202": {**_json(_ref("ReplayJob"), "The replay job.", {
                    "Location": {"description": "Where to poll it.", "schema": {"type": "string"}}}),
                        "links": {"GetReplay": {"operationId": "getReplay",
                                                "parameters": {"job_id": "$response.body#/id"}}}},
                **_problem_responses("match_not_found", "match_not_finished", "no_such_seat",
                                     "unsupported_media_type", *_ON_MATCH),
            },
        }},
        "/v1/replays/{job_id}": {"get": {
            "operationId": "getReplay", "summary": "A replay job's status, and the replay once it is finished.",
            "parameters": [{"name": "job_id", "in": "path", "required": True,
                            "schema": {"type": "string", "minLength": 1, "maxLength": 200}}],
            "responses": {"200": _json(_ref("ReplayJob"), "The replay job."),
                          **_problem_responses("replay_not_found", *_COMMON)},
        }},
        "/v1/matches/{match_id}/stream-tickets": {"post": {
            "operationId": "createStreamTicket",
            "summary": "A short-lived, single-use ticket for your seat's stream, for a browser's EventSource.",
            "description": "A browser's EventSource cannot send an Authorization header, and a seat token never "
                           "goes in a URL: open `events_url` (`/v1/matches/{match_id}/events?ticket=...`) instead, "
                           "once, within `expires_in` seconds (GRIMOIRE_STREAM_TICKET_TTL). The ticket is bound to "
                           "this match and the token's seat; no request body.",
            "parameters": [_MATCH_ID], "security": [{"seatToken": []}],
            "responses": {"201": _json(_ref("StreamTicket"), "The ticket, shown once."),
                          **_problem_responses("token_required", "invalid_token", "match_not_found", *_ON_MATCH)},
        }},
        "/v1/matches/{match_id}/events": {"get": {
            "operationId": "matchEvents",
            "summary": "A live stream of accepted actions (Server-Sent Events, or NDJSON), resumable.",
            "description": "SSE: `event: action`, `id` = version, `data` = a StreamUpdate; resume with "
                           "`Last-Event-ID` (or `after`). `Accept: application/x-ndjson` (or `format=ndjson`) "
                           "gives one JSON object per line with `type` = action | keepalive | end. The stream "
                           "ends with an `end` message whose `reason` is finished, shutdown or slow_consumer. "
                           "A seat's stream: its token in Authorization, or (a browser) a stream ticket in "
                           "`ticket`, spent by its first use (createStreamTicket); neither: the spectator's.",
            "parameters": [
                _MATCH_ID,
                {"name": "after", "in": "query", "schema": {**_COUNT, "default": 0}},
                {"name": "format", "in": "query", "schema": {"type": "string", "enum": ["sse", "ndjson"]}},
                {"name": "Last-Event-ID", "in": "header", "schema": {"type": "string", "pattern": "^[0-9]{1,15}$"}},
            ],
            "security": [{}, {"seatToken": []}, {"streamTicket": []}],  # fresh dicts: no YAML anchors
            "responses": {
                "200": {"description": "The stream.", "content": {
                    "text/event-stream": {"schema": {"type": "string"}},
                    "application/x-ndjson": {"schema": _ref("StreamUpdate")}}},
                **_problem_responses("match_not_found", "invalid_token", "invalid_stream_ticket",
                                     "stream_ticket_expired", "stream_ticket_used", "stream_ticket_wrong_match",
                                     "too_many_streams", *_ON_MATCH),
            },
        }},
        "/v1/turns": {"get": {
            "operationId": "myTurns",
            "summary": "A live stream of turn notices across your matches (SSE or NDJSON).",
            "description": "List your seat tokens, comma-separated, in the `Seat-Tokens` header. A `turn` "
                           "message (a TurnNotice) comes whenever one of those matches waits on your seat, and "
                           "when it ends.",
            "parameters": [
                {"name": "Seat-Tokens", "in": "header", "required": True, "schema": {"type": "string"}},
                {"name": "format", "in": "query", "schema": {"type": "string", "enum": ["sse", "ndjson"]}},
            ],
            "responses": {
                "200": {"description": "The stream.", "content": {
                    "text/event-stream": {"schema": {"type": "string"}},
                    "application/x-ndjson": {"schema": _ref("TurnNotice")}}},
                **_problem_responses("token_required", "invalid_token", "match_not_found", "too_many_streams",
                                     *_ON_MATCH),
            },
        }},
        "/healthz": {"get": {
            "operationId": "healthz", "summary": "The process is up.",
            "responses": {"200": _json(_ref("Status"), "Up.")},
        }},
        "/readyz": {"get": {
            "operationId": "readyz", "summary": "Redis answers.",
            "responses": {"200": _json(_ref("Status"), "Ready."),
                          **_problem_responses("service_unavailable")},
        }},
    }
    from . import players_openapi  # the players' routes (service/rest/players.py)

    schemas.update(players_openapi.components())
    paths.update(players_openapi.paths())
    from . import collections_openapi  # collections and trading (service/rest/collections.py)

    schemas.update(collections_openapi.components())
    schemas["Problem"]["properties"].update(collections_openapi.problem_properties())
    paths.update(collections_openapi.paths())
    _describe_request_defaults(paths, schemas)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Grimoire REST API",
            "version": "1.0.0",
            "description": "The REST mirror of Grimoire's GraphQL API (/graphql). Errors are "
                           "application/problem+json with machine codes shared with GraphQL.",
        },
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {**players_openapi.SECURITY, "seatToken": {"type": "http", "scheme": "bearer",
                                              "description": "The token returned when joining a seat."},
                                "streamTicket": {"type": "apiKey", "in": "query", "name": "ticket",
                                                 "description": "A stream ticket (createStreamTicket): "
                                                                "short-lived, single-use, for one seat's stream."}},
        },
    }


def _describe_request_defaults(paths: dict[str, Any], schemas: dict[str, Any]) -> None:
    """Move ``default`` into the description in the schemas a request body reaches.

    openapi-typescript reads a component property with a ``default`` as always present (the server
    fills it in), so a client had to send ``hot_seat`` and every option to create a match. In a request
    a default means the opposite: the field may be left out. The description keeps the value.
    """
    reached: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            name = node.get("$ref", "").rpartition("/")[2]
            if name and name not in reached:
                reached.add(name)
                walk(schemas[name])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk([operation.get("requestBody") for item in paths.values() for operation in item.values()
          if isinstance(operation, dict)])
    for name in reached:
        for prop in schemas[name].get("properties", {}).values():
            if "default" in prop:
                default = json.dumps(prop.pop("default"))
                prop["description"] = f"{prop.get('description', '').rstrip()} Default: {default}.".lstrip()
