"""The OpenAPI description of the players' routes (service/rest/players.py), merged by service/rest/openapi.py."""

from __future__ import annotations

from typing import Any

from service.players.names import MAX_LENGTH, MIN_LENGTH, NAME_PATTERN

from .openapi import _COMMON, _COUNT, _MS, _SEAT, _TO_ACT, _json, _nullable, _problem_responses, _ref

_PLAYER = [{"playerToken": []}]
_NUMBER = {"type": "number"}
_STRING = {"type": "string"}
_CURSOR = {"name": "cursor", "in": "query", "required": False,
           "schema": {"type": "string", "maxLength": 400,
                      "description": "The `next_cursor` of the page before; absent for the first page."}}
_LIMIT = {"name": "limit", "in": "query", "required": False,
          "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}}
_CREDENTIAL = ("player_required", "invalid_token")
_STREAM = {"description": "The stream.", "content": {"text/event-stream": {"schema": _STRING},
                                                    "application/x-ndjson": {"schema": _ref("TurnNotice")}}}


def _object(required: list[str], properties: dict, description: str = "", **extra) -> dict:
    schema = {"type": "object", "required": required, "properties": properties, **extra}
    if description:
        schema["description"] = description
    return schema


def components() -> dict[str, Any]:
    rating = {"rating": {**_NUMBER, "description": "The conservative rating players are ranked on: mu - 3 sigma."},
              "mu": {**_NUMBER, "description": "openskill's estimate of the player's strength (25 to start)."},
              "sigma": {**_NUMBER, "description": "Its uncertainty (8.33 to start): shrinks as the player plays."},
              "games": _COUNT, "wins": _COUNT, "losses": _COUNT, "draws": _COUNT,
              "provisional": {"type": "boolean", "description": "Fewer than 5 rated matches of this game and "
                                                                 "variant: the rating is still settling."}}
    return {
        "CreatePlayer": _object(["name"], {"name": {
            "type": "string", "minLength": MIN_LENGTH, "maxLength": MAX_LENGTH, "pattern": NAME_PATTERN,
            "description": f"{MIN_LENGTH} to {MAX_LENGTH} letters, digits, spaces and _ - . ', starting with a letter "
                           "or digit, no leading, trailing or doubled space (docs/api.md, Players)."}},
            additionalProperties=False),
        "Player": _object(["id", "name", "created"], {"id": _STRING, "name": _STRING, "created": _MS}),
        "PlayerCreated": _object(["player", "token", "token_id"], {
            "player": _ref("Player"),
            "token": {**_STRING, "description": "The player token, shown once: the bearer token of every player "
                                                "operation, and of every seat the player joins."},
            "token_id": {**_STRING, "description": "Its id, to revoke it."}}),
        "PlayerToken": _object(["id", "created"], {"id": _STRING, "created": _MS}),
        "PlayerTokenList": _object(["tokens"], {"tokens": {"type": "array", "items": _ref("PlayerToken")}}),
        "NewPlayerToken": _object([], {"replace": {**_STRING, "minLength": 1, "maxLength": 64,
                                                   "description": "A token id to revoke in the same step (rotation)."}},
                                  additionalProperties=False),
        "PlayerTokenIssued": _object(["token", "token_id", "replaced"], {
            "token": {**_STRING, "description": "The new player token, shown once."}, "token_id": _STRING,
            "replaced": {"type": ["string", "null"], "description": "The id of the token revoked, if any."}}),
        "PlayerTokenRevoked": _object(["token_id", "revoked"], {"token_id": _STRING, "revoked": {"type": "boolean"}}),
        "Rating": _object(["game", "variant", *rating], {"game": _STRING, "variant": _STRING, **rating},
                          "A rating in one game and variant, with the counts of rated results."),
        "PlayerProfile": _object(["id", "name", "created", "ratings"], {
            "id": _STRING, "name": _STRING, "created": _MS, "ratings": {"type": "array", "items": _ref("Rating")}},
            "A player's public profile."),
        "SeatHolder": _object(["seat", "name", "player", "bot"], {
            "seat": _SEAT, "name": {"type": ["string", "null"]},
            "player": {"type": ["string", "null"], "description": "The player id, if a player holds the seat."},
            "bot": {"type": ["string", "null"], "description": "The bot level, if a bot."}}),
        "MyMatch": _object(
            ["match_id", "game", "variant", "status", "rated", "my_seats", "opponents", "to_act", "your_turn",
             "result", "created", "updated"],
            {"match_id": _STRING, "game": _STRING, "variant": _STRING,
             "status": {"type": "string", "enum": ["waiting", "active", "finished"]},
             "rated": {"type": "boolean"}, "my_seats": {"type": "array", "items": _SEAT},
             "opponents": {"type": "array", "items": _ref("SeatHolder")}, "to_act": _TO_ACT,
             "your_turn": {"type": "boolean"}, "result": _nullable(_ref("Result")),
             "created": _MS, "updated": _MS},
            "One of your matches."),
        "MyMatchList": _object(["matches", "next_cursor"], {
            "matches": {"type": "array", "items": _ref("MyMatch")},
            "next_cursor": {"type": ["string", "null"], "description": "The next page's cursor; null at the end."}}),
        "QuickMatchRequest": _object(["game"], {
            "game": {"type": "string", "minLength": 1, "maxLength": 64},
            "variant": {"type": "string", "minLength": 1, "maxLength": 64},
            "seats": {"type": "integer", "minimum": 2, "maximum": 4},
            "rated": {"type": "boolean", "default": True},
            "bots_after": _nullable({"type": "integer", "minimum": 0, "maximum": 3600},
                                    description="Seconds after which bots may fill the seats no player took; "
                                                "absent or null: wait for players."),
            "turn_seconds": _nullable({"type": "integer", "minimum": 1, "maximum": 86400},
                                      description="A turn timer for the match (docs/bots.md); players are paired "
                                                  "only with players who asked for the same. In a rated match a "
                                                  "turn that times out loses the match.")},
            additionalProperties=False),
        "QuickMatchQueue": _object(["game", "variant", "seats", "rated", "turn_seconds", "since"], {
            "game": _STRING, "variant": _STRING, "seats": {"type": "integer", "minimum": 2, "maximum": 4},
            "rated": {"type": "boolean"}, "turn_seconds": _nullable({"type": "integer", "minimum": 1, "maximum": 86400}),
            "since": _nullable(_MS)}),
        "QuickMatchPlacement": _object(["match_id", "seat", "at"], {"match_id": _STRING, "seat": _SEAT, "at": _MS}),
        "QuickMatchStatus": _object(["status", "queue", "last"], {
            "status": {"type": "string", "enum": ["idle", "waiting", "pairing", "matched"],
                       "description": "waiting in `queue`; pairing: in a group whose match is being made; "
                                      "matched: `last` is your newest quick match; idle: none of these."},
            "queue": _nullable(_ref("QuickMatchQueue")), "last": _nullable(_ref("QuickMatchPlacement"))}),
        "RematchStatus": _object(["match_id", "rematch_id", "accepted", "waiting_for", "seat", "token"], {
            "match_id": _STRING, "rematch_id": {"type": ["string", "null"]},
            "accepted": {"type": "array", "items": _SEAT}, "waiting_for": {"type": "array", "items": _SEAT},
            "seat": _nullable(_SEAT, description="Your seat in the rematch, once made."),
            "token": {"type": ["string", "null"], "description": "Your new seat token, shown once, for a seat "
                                                                 "held without a player token."}}),
        "LeaderboardRow": _object(["rank", "player_id", "name", *rating], {
            "rank": {"type": "integer", "minimum": 1, "maximum": 2**53 - 1}, "player_id": _STRING,
            "name": {"type": ["string", "null"]}, **rating}),
        "Leaderboard": _object(["game", "variant", "players", "next_cursor"], {
            "game": _STRING, "variant": _STRING, "players": {"type": "array", "items": _ref("LeaderboardRow")},
            "next_cursor": {"type": ["string", "null"]}}),
    }


def paths() -> dict[str, Any]:
    match_id = {"name": "match_id", "in": "path", "required": True,
                "schema": {"type": "string", "minLength": 1, "maxLength": 64}}
    return {
        "/v1/players": {"post": {
            "operationId": "createPlayer", "summary": "Make a player; the answer carries its first token, shown once.",
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("CreatePlayer")}}},
            "responses": {"201": _json(_ref("PlayerCreated"), "The player and its token."),
                          **_problem_responses("invalid_name", "name_taken", "unsupported_media_type", *_COMMON)},
        }},
        "/v1/players/me": {"get": {
            "operationId": "myProfile", "summary": "Your profile.", "security": _PLAYER,
            "responses": {"200": _json(_ref("PlayerProfile"), "Your profile."),
                          **_problem_responses(*_CREDENTIAL, *_COMMON)},
        }},
        "/v1/players/me/tokens": {
            "get": {"operationId": "listPlayerTokens", "summary": "Your player tokens (ids, never the tokens).",
                    "security": _PLAYER,
                    "responses": {"200": _json(_ref("PlayerTokenList"), "Your tokens."),
                                  **_problem_responses(*_CREDENTIAL, *_COMMON)}},
            "post": {"operationId": "createPlayerToken",
                     "summary": "A new player token, shown once; `replace` revokes another in the same step.",
                     "security": _PLAYER,
                     "requestBody": {"required": True,
                                     "content": {"application/json": {"schema": _ref("NewPlayerToken")}}},
                     "responses": {"201": _json(_ref("PlayerTokenIssued"), "The new token."),
                                   **_problem_responses(*_CREDENTIAL, "player_token_not_found",
                                                        "too_many_player_tokens", "unsupported_media_type",
                                                        *_COMMON)}},
        },
        "/v1/players/me/tokens/{token_id}": {"delete": {
            "operationId": "revokePlayerToken", "summary": "Revoke one of your tokens, at once.", "security": _PLAYER,
            "parameters": [{"name": "token_id", "in": "path", "required": True,
                            "schema": {"type": "string", "minLength": 1, "maxLength": 64}}],
            "responses": {"200": _json(_ref("PlayerTokenRevoked"), "Revoked."),
                          **_problem_responses(*_CREDENTIAL, "player_token_not_found", *_COMMON)},
        }},
        "/v1/players/{player_id}": {"get": {
            "operationId": "getPlayer", "summary": "A player's public profile: name, ratings, results.",
            "parameters": [{"name": "player_id", "in": "path", "required": True,
                            "schema": {"type": "string", "minLength": 1, "maxLength": 64}}],
            "responses": {"200": _json(_ref("PlayerProfile"), "The profile."),
                          **_problem_responses("player_not_found", *_COMMON)},
        }},
        "/v1/me/matches": {"get": {
            "operationId": "myMatches", "summary": "Your matches, newest first, a page at a time.",
            "security": _PLAYER,
            "parameters": [{"name": "status", "in": "query", "required": False,
                            "schema": {"type": "string", "enum": ["active", "finished"], "default": "active",
                                       "description": "active: not finished yet (waiting or being played)."}},
                           _CURSOR, _LIMIT],
            "responses": {"200": _json(_ref("MyMatchList"), "A page of your matches."),
                          **_problem_responses(*_CREDENTIAL, *_COMMON)},
        }},
        "/v1/me/turns": {"get": {
            "operationId": "myPlayerTurns",
            "summary": "A live stream (SSE or NDJSON) of turn notices across all your matches, new ones included.",
            "description": "A `turn` message (a TurnNotice) whenever one of your matches waits on your seat, "
                           "when it ends, and once when a new match of yours (a quick match) starts.",
            "security": _PLAYER,
            "parameters": [{"name": "format", "in": "query", "schema": {"type": "string", "enum": ["sse", "ndjson"]}}],
            "responses": {"200": _STREAM, **_problem_responses(*_CREDENTIAL, "too_many_streams", *_COMMON)},
        }},
        "/v1/quick-match": {
            "post": {"operationId": "joinQuickMatch",
                     "summary": "Wait for a match of a game: paired with players of similar rating, bots after "
                                "`bots_after` seconds if asked.",
                     "security": _PLAYER,
                     "requestBody": {"required": True,
                                     "content": {"application/json": {"schema": _ref("QuickMatchRequest")}}},
                     "responses": {"201": _json(_ref("QuickMatchStatus"), "Paired at once: `last` is the match."),
                                   "202": _json(_ref("QuickMatchStatus"), "Waiting."),
                                   **_problem_responses(*_CREDENTIAL, "unknown_game", "invalid_options",
                                                        "already_queued", "hand_not_found", "collection_required",
                                                        "unsupported_media_type", *_COMMON)}},
            "get": {"operationId": "quickMatchStatus", "summary": "Where you stand: waiting, or your newest match.",
                    "security": _PLAYER,
                    "responses": {"200": _json(_ref("QuickMatchStatus"), "Your quick-match status."),
                                  **_problem_responses(*_CREDENTIAL, *_COMMON)}},
            "delete": {"operationId": "leaveQuickMatch", "summary": "Stop waiting.", "security": _PLAYER,
                       "responses": {"200": _json(_ref("QuickMatchStatus"), "No longer waiting."),
                                     **_problem_responses(*_CREDENTIAL, "not_queued", *_COMMON)}},
        },
        "/v1/matches/{match_id}/rematch": {
            "post": {"operationId": "offerRematch",
                     "summary": "Offer (or accept) a rematch of a finished match, as your seat.",
                     "parameters": [match_id], "security": [{"seatToken": []}, *_PLAYER],
                     "responses": {"201": _json(_ref("RematchStatus"), "Everyone accepted: the rematch is made."),
                                   "202": _json(_ref("RematchStatus"), "Waiting for the others."),
                                   **_problem_responses("token_required", "invalid_token", "match_not_found",
                                                        "rematch_unavailable", *_COMMON)}},
            "get": {"operationId": "rematchStatus", "summary": "The rematch's state (and your new seat token, once).",
                    "parameters": [match_id], "security": [{"seatToken": []}, *_PLAYER],
                    "responses": {"200": _json(_ref("RematchStatus"), "The rematch's state."),
                                  **_problem_responses("token_required", "invalid_token", "match_not_found",
                                                       "rematch_unavailable", *_COMMON)}},
        },
        "/v1/leaderboards/{game_id}": {"get": {
            "operationId": "leaderboard", "summary": "Top players of a game and variant, by conservative rating.",
            "parameters": [{"name": "game_id", "in": "path", "required": True,
                            "schema": {"type": "string", "minLength": 1, "maxLength": 64}},
                           {"name": "variant", "in": "query", "required": False,
                            "schema": {"type": "string", "description": "The game's first variant if absent."}},
                           _CURSOR, _LIMIT],
            "responses": {"200": _json(_ref("Leaderboard"), "A page of the leaderboard."),
                          **_problem_responses("unknown_game", "not_found", *_COMMON)},
        }},
    }


SECURITY = {"playerToken": {"type": "http", "scheme": "bearer",
                            "description": "A player token (POST /v1/players), or the identity provider's JWT "
                                           "where one is configured: acts for every seat of the player."}}
