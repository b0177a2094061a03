"""The OpenAPI 3.1 description of the REST API, built from the hosted games.

The per-game view and action schemas come from each game's ``schema.json``,
so the typed clients front-end developers generate know every game's shapes.
``grimoire export-schema`` writes the result to ``openapi/openapi.yaml``; a
test fails when that file is stale.
"""

from typing import Any

from service.engine import BOARD_SEAT_NOTE, RESULT_CAUSE, Game

from service.store.bots import BOT_LEVELS

from .problems import STATUS


def _pascal(game_id: str) -> str:
    return "".join(part.capitalize() for part in game_id.replace("_", "-").split("-"))


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


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
#: ``to_act`` everywhere, and the seat that acted: either may be the board itself (BOARD_SEAT).
_TO_ACT = {"type": "array", "items": {"type": "integer"},
           "description": f"The seats the game waits on; {BOARD_SEAT_NOTE}"}
_ACTED = {"type": "integer", "description": f"The seat that acted; {BOARD_SEAT_NOTE}"}


def _json(schema: dict, description: str, headers: dict | None = None) -> dict:
    response = {"description": description, "content": {"application/json": {"schema": schema}}}
    if headers:
        response["headers"] = headers
    return response


_ETAG = {"ETag": {"description": "The match version, quoted.", "schema": {"type": "string"}}}


def _create_match_schema(game: Game) -> dict[str, Any]:
    return {
        "type": "object", "required": ["game"], "additionalProperties": False,
        "properties": {
            "game": {"const": game.id},
            "variant": {"type": "string", "enum": game.variant_ids()},
            "seats": {"type": "integer", "minimum": game.min_seats, "maximum": game.max_seats},
            "seed": {"type": "integer", "minimum": 0, "maximum": 2**63 - 1},
            "options": game.options_schema,
            "turn_seconds": {"type": "integer", "minimum": 1, "maximum": 86400,
                             "description": "A turn timer: a late seat's default move is played after this long."},
            "bots": {"type": "array", "maxItems": 16, "items": _ref("AddBot"),
                     "description": "Seats given to bots at once."},
        },
    }


def build_openapi(games: dict[str, Game]) -> dict[str, Any]:
    views, actions = [], []
    schemas: dict[str, Any] = {}
    for game in games.values():
        prefix = _pascal(game.id)
        schemas[f"{prefix}View"] = game.view_schema
        views.append(_ref(f"{prefix}View"))
        for action_type, schema in sorted(game.action_schemas.items()):
            name = f"{prefix}{_pascal(action_type)}Action"
            schemas[name] = schema
            actions.append(_ref(name))
    catalogue_paths = {}
    for game in games.values():
        schemas[f"Create{_pascal(game.id)}Match"] = _create_match_schema(game)
        for catalogue in game.catalogues:
            item = f"{_pascal(game.id)}{catalogue.item_schema['title']}"
            schemas[item] = catalogue.item_schema
            filters = [{"name": f, "in": "query", "required": False,
                        "schema": catalogue.item_schema["properties"][f]} for f in catalogue.filters]
            filters += [{"name": name, "in": "query", "required": False, "schema": schema}
                        for name, schema in catalogue.params.items()]
            catalogue_paths[f"/v1/games/{game.id}/{catalogue.name}"] = {"get": {
                "operationId": f"{_pascal(game.id)[0].lower()}{_pascal(game.id)[1:]}{_pascal(catalogue.name)}",
                "summary": f"{game.title}: the {catalogue.name}, filtered by exact match.",
                "parameters": filters,
                "responses": {"200": _json({"type": "object", "required": ["items"], "properties": {
                    "items": {"type": "array", "items": _ref(item)}}}, f"The {catalogue.name}."),
                    **_problem_responses(*_COMMON)},
            }}
    any_of = lambda refs: {"anyOf": refs} if refs else {"type": "object"}  # noqa: E731

    schemas.update({
        "Problem": {
            "type": "object", "description": "RFC 9457 problem details with a machine code.",
            "required": ["type", "title", "status", "detail", "code"],
            "properties": {
                "type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"},
                "detail": {"type": "string"}, "code": {"type": "string", "enum": sorted(STATUS)},
                "current_version": {"type": "integer", "description": "With version_conflict."},
                "errors": {"type": "object", "description": "With malformed_request: the invalid fields."},
            },
        },
        "Variant": {"type": "object", "required": ["id", "title", "description"],
                    "properties": {"id": {"type": "string"}, "title": {"type": "string"},
                                   "description": {"type": "string"}}},
        "Game": {
            "type": "object",
            "required": ["id", "title", "min_seats", "max_seats", "variants", "summary", "options_schema",
                         "action_schemas", "view_schema"],
            "properties": {
                "id": {"type": "string"}, "title": {"type": "string"}, "min_seats": {"type": "integer"},
                "max_seats": {"type": "integer"}, "variants": {"type": "array", "items": _ref("Variant")},
                "summary": {"type": "string"}, "options_schema": {"type": "object"},
                "action_schemas": {"type": "object"}, "view_schema": {"type": "object"},
            },
        },
        "GameList": {"type": "object", "required": ["games"],
                     "properties": {"games": {"type": "array", "items": _ref("Game")}}},
        "Seat": {"type": "object", "required": ["seat", "name", "joined", "bot"],
                 "properties": {"seat": {"type": "integer"}, "name": {"type": ["string", "null"]},
                                "joined": {"type": "boolean"},
                                "bot": {"type": ["string", "null"], "description": "The bot level, if a bot."}}},
        "Result": {"type": ["object", "null"], "required": ["winners", "reason"],
                   "properties": {"winners": {"type": "array", "items": {"type": "integer"}},
                                  "scores": {"type": ["array", "null"], "items": {"type": "number"}},
                                  "reason": {"type": "string", "description": "A sentence for people."},
                                  "cause": {"type": ["string", "null"], "description": RESULT_CAUSE}}},
        "GameView": any_of(views),
        "GameAction": any_of(actions),
        "Match": {
            "type": "object",
            "required": ["id", "game", "variant", "version", "status", "options", "seed", "seats", "to_act",
                         "my_seat", "result", "view"],
            "properties": {
                "id": {"type": "string"}, "game": {"type": "string"}, "variant": {"type": "string"},
                "version": {"type": "integer", "minimum": 0},
                "status": {"type": "string", "enum": ["waiting", "active", "finished"]},
                "options": {"type": "object"},
                "seed": {"type": ["integer", "null"], "description": "Revealed once the match is finished."},
                "seats": {"type": "array", "items": _ref("Seat")},
                "to_act": _TO_ACT,
                "my_seat": {"type": ["integer", "null"]},
                "result": _ref("Result"),
                "view": _ref("GameView"),
            },
        },
        "CreateMatch": {
            "oneOf": [_ref(f"Create{_pascal(g.id)}Match") for g in games.values()] or [{"type": "object"}],
            "description": "A new match of one of the games; `game` selects which.",
        },
        "JoinSeat": {
            "type": "object", "required": ["name"], "additionalProperties": False,
            "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 64},
                           "seat": {"type": "integer", "minimum": 0, "maximum": 15}},
        },
        "SeatJoined": {
            "type": "object", "required": ["seat", "token", "match"],
            "properties": {"seat": {"type": "integer"},
                           "token": {"type": "string", "description": "The seat's bearer token, shown once."},
                           "match": _ref("Match")},
        },
        "SubmitAction": {
            "type": "object", "required": ["action"], "additionalProperties": False,
            "properties": {"action": _ref("GameAction")},
        },
        "ActionAccepted": {
            "type": "object", "required": ["version", "events", "duplicate", "match"],
            "properties": {"version": {"type": "integer"}, "events": {"type": "array", "items": {"type": "object"}},
                           "duplicate": {"type": "boolean"}, "match": _ref("Match")},
        },
        "LegalActions": {
            "type": "object", "required": ["version", "seat", "actions"],
            "properties": {"version": {"type": "integer"}, "seat": {"type": ["integer", "null"]},
                           "actions": {"type": "array", "items": _ref("GameAction")}},
        },
        "HistoryEntry": {
            "type": "object", "required": ["version", "seat", "action", "events", "at", "auto"],
            "properties": {"version": {"type": "integer"}, "seat": _ACTED,
                           "action": {"oneOf": [{"type": "null"}, _ref("GameAction")],
                                      "description": "Shown only to the seat that acted."},
                           "events": {"type": "array", "items": {"type": "object"}},
                           "at": {"type": "integer", "description": "Milliseconds since the epoch."},
                           "auto": _ref("AutoAction")},
        },
        "StreamUpdate": {
            "type": "object",
            "required": ["match_id", "version", "seat", "action", "events", "status", "to_act", "at", "auto"],
            "properties": {"match_id": {"type": "string"}, "version": {"type": "integer"},
                           "seat": _ACTED,
                           "action": {"oneOf": [{"type": "null"}, _ref("GameAction")],
                                      "description": "Shown only to the seat that acted."},
                           "events": {"type": "array", "items": {"type": "object"}},
                           "status": {"type": "string", "enum": ["active", "finished"]},
                           "to_act": _TO_ACT,
                           "at": {"type": "integer", "description": "Accepted at, in ms since the epoch."},
                           "auto": _ref("AutoAction")},
        },
        "TurnNotice": {
            "type": "object", "required": ["match_id", "seat", "version", "status", "to_act", "your_turn"],
            "properties": {"match_id": {"type": "string"}, "seat": {"type": "integer"}, "version": {"type": "integer"},
                           "status": {"type": "string", "enum": ["active", "finished"]},
                           "to_act": _TO_ACT,
                           "your_turn": {"type": "boolean"}},
        },
        "AddBot": {
            "type": "object", "required": ["level"], "additionalProperties": False,
            "properties": {"seat": {"type": ["integer", "null"], "minimum": 0, "maximum": 15,
                                    "description": "A seat number; the lowest free one if absent."},
                           "level": {"type": "string", "enum": list(BOT_LEVELS),
                                     "description": "The bot level (docs/bots.md). Another name is refused with "
                                                    "unknown_bot_level (422)."}},
        },
        "BotAdded": {"type": "object", "required": ["seat", "match"],
                     "properties": {"seat": {"type": "integer"}, "match": _ref("Match")}},
        "SeatLeft": {"type": "object", "required": ["seat", "match"],
                     "properties": {"seat": {"type": "integer", "description": "The seat given up, now free."},
                                    "match": _ref("Match")}},
        "StartReplay": {
            "type": "object", "additionalProperties": False,
            "properties": {"seat": {"type": ["integer", "null"], "minimum": 0, "maximum": 15,
                                    "description": "A seat (what it could see) or null: the spectator (everything)."}},
        },
        "AutoAction": {
            "type": ["object", "null"], "required": ["seat", "reason", "default"],
            "description": "Set when the service played the action for a late seat (turn timer); else null.",
            "properties": {"seat": {"type": "integer"}, "reason": {"type": "string", "enum": ["turn_timeout"]},
                           "default": {"type": "string", "enum": ["pass", "random"]},
                           "turn_seconds": {"type": ["integer", "null"]}},
        },
        "ReplayFrame": {
            "type": "object", "required": ["version", "seat", "action", "events", "view", "to_act", "auto"],
            "properties": {
                "version": {"type": "integer"},
                "seat": {"type": ["integer", "null"],
                         "description": f"The seat that acted; null for the set-up; {BOARD_SEAT_NOTE}"},
                "action": {"oneOf": [{"type": "null"}, _ref("GameAction")],
                           "description": "Shown to the seat that acted, and in the spectator replay."},
                "events": {"type": "array", "items": {"type": "object"}},
                "view": _ref("GameView"),
                "views": {"type": "array", "items": _ref("GameView"), "description": "Spectator replay: every seat's."},
                "to_act": _TO_ACT,
                "auto": _ref("AutoAction"),
            },
        },
        "Replay": {
            "type": ["object", "null"],
            "required": ["match_id", "game", "seat", "disclosure", "note", "seed", "verified", "mismatches",
                         "frames"],
            "properties": {
                "match_id": {"type": "string"}, "game": {"type": "string"}, "seat": {"type": ["integer", "null"]},
                "disclosure": {"type": "string", "enum": ["seat", "everything"]}, "note": {"type": "string"},
                "seed": {"type": ["integer", "null"]},
                "verified": {"type": "boolean", "description": "Every stored state matched the re-computed one."},
                "mismatches": {"type": "array", "items": {
                    "type": "object", "required": ["version", "what", "detail"],
                    "properties": {"version": {"type": "integer"}, "what": {"type": "string"},
                                   "detail": {"type": "string"}}}},
                "frames": {"type": "array", "items": _ref("ReplayFrame")},
            },
        },
        "ReplayJob": {
            "type": "object", "required": ["id", "status", "match_id", "seat", "replay"],
            "properties": {"id": {"type": "string"},
                           "status": {"type": "string", "enum": ["queued", "started", "finished", "failed"]},
                           "match_id": {"type": "string"}, "seat": {"type": ["integer", "null"]},
                           "replay": _ref("Replay")},
        },
        "History": {"type": "object", "required": ["entries"],
                    "properties": {"entries": {"type": "array", "items": _ref("HistoryEntry")}}},
        "LobbyEntry": {
            "type": "object", "description": "An open match: waiting for players, with a free seat.",
            "required": ["id", "game", "variant", "seats", "open_seats", "created", "updated"],
            "properties": {"id": {"type": "string"}, "game": {"type": "string"}, "variant": {"type": "string"},
                           "seats": {"type": "array", "items": _ref("Seat")},
                           "open_seats": {"type": "integer", "minimum": 1},
                           "created": {"type": "integer", "description": "Milliseconds since the epoch."},
                           "updated": {"type": "integer",
                                       "description": "When a seat was last taken (ms since the epoch)."}},
        },
        "Lobby": {"type": "object", "required": ["matches"],
                  "properties": {"matches": {"type": "array", "items": _ref("LobbyEntry")}}},
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
                                     "seat_taken", "unsupported_media_type", *_COMMON),
            },
        }},
        "/v1/matches/{match_id}": {"get": {
            "operationId": "getMatch", "summary": "A match as your seat (or a spectator) sees it.",
            "parameters": [_MATCH_ID], "security": _AUTH,
            "responses": {"200": _json(_ref("Match"), "The match.", _ETAG),
                          **_problem_responses("match_not_found", "invalid_token", *_COMMON)},
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
                                     "unsupported_media_type", *_COMMON),
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
                                               "match_not_found", *_COMMON)},
        }},
        "/v1/matches/{match_id}/legal-actions": {"get": {
            "operationId": "legalActions", "summary": "Every action your seat may take now.",
            "parameters": [_MATCH_ID], "security": _AUTH,
            "responses": {"200": _json(_ref("LegalActions"), "The legal actions.", _ETAG),
                          **_problem_responses("match_not_found", "invalid_token", *_COMMON)},
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
                                     "unsupported_media_type", *_COMMON),
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
                {"name": "after", "in": "query",
                 "schema": {"type": "integer", "minimum": 0, "maximum": 2**53 - 1, "default": 0}},
                {"name": "limit", "in": "query",
                 "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}},
            ],
            "security": _AUTH,
            "responses": {"200": _json(_ref("History"), "The history.", _ETAG),
                          **_problem_responses("match_not_found", "invalid_token", *_COMMON)},
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
                                     "no_such_seat", "invalid_token", "not_your_seat", "unsupported_media_type",
                                     *_COMMON),
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
                                     "unsupported_media_type", *_COMMON),
            },
        }},
        "/v1/replays/{job_id}": {"get": {
            "operationId": "getReplay", "summary": "A replay job's status, and the replay once it is finished.",
            "parameters": [{"name": "job_id", "in": "path", "required": True,
                            "schema": {"type": "string", "minLength": 1, "maxLength": 200}}],
            "responses": {"200": _json(_ref("ReplayJob"), "The replay job."),
                          **_problem_responses("replay_not_found", *_COMMON)},
        }},
        "/v1/matches/{match_id}/events": {"get": {
            "operationId": "matchEvents",
            "summary": "A live stream of accepted actions (Server-Sent Events, or NDJSON), resumable.",
            "description": "SSE: `event: action`, `id` = version, `data` = a StreamUpdate; resume with "
                           "`Last-Event-ID` (or `after`). `Accept: application/x-ndjson` (or `format=ndjson`) "
                           "gives one JSON object per line with `type` = action | keepalive | end. The stream "
                           "ends with an `end` message whose `reason` is finished, shutdown or slow_consumer.",
            "parameters": [
                _MATCH_ID,
                {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0, "default": 0}},
                {"name": "format", "in": "query", "schema": {"type": "string", "enum": ["sse", "ndjson"]}},
                {"name": "Last-Event-ID", "in": "header", "schema": {"type": "string", "pattern": "^[0-9]{1,15}$"}},
            ],
            "security": _AUTH,
            "responses": {
                "200": {"description": "The stream.", "content": {
                    "text/event-stream": {"schema": {"type": "string"}},
                    "application/x-ndjson": {"schema": _ref("StreamUpdate")}}},
                **_problem_responses("match_not_found", "invalid_token", "too_many_streams", *_COMMON),
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
                                     *_COMMON),
            },
        }},
        "/healthz": {"get": {
            "operationId": "healthz", "summary": "The process is up.",
            "responses": {"200": _json({"type": "object"}, "Up.")},
        }},
        "/readyz": {"get": {
            "operationId": "readyz", "summary": "Redis answers.",
            "responses": {"200": _json({"type": "object"}, "Ready."),
                          **_problem_responses("service_unavailable")},
        }},
    }
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
            "securitySchemes": {"seatToken": {"type": "http", "scheme": "bearer",
                                              "description": "The token returned when joining a seat."}},
        },
    }
