"""The REST mirror of the GraphQL API, under ``/v1``.

Resources: games, matches, seats, legal actions, actions and history. The
match version is the ``ETag``; a write takes ``If-Match`` and a stale one gets
``412``. Expected failures are ``application/problem+json`` with the same
machine codes as GraphQL. Handlers only translate HTTP to
:class:`service.store.MatchStore` calls and back: no rules live here.
"""

import asyncio
import functools
import re
from typing import Any

from marshmallow import Schema, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from service.engine import Game, RuleError
from service.store import Match, MatchStore, StoreError, VersionConflict, bearer_token
from service.store.connect import ReplicaAckTimeout
from service.store.bots import add_bot as store_add_bot, create_match as store_create_match
from service.store.records import match_record as store_match_record

from service import wire
from service.wire import JSONResponse  # orjson when installed

from .problems import problem
from .schemas import AddBotBody, CreateMatchBody, JoinSeatBody, StartReplayBody, SubmitActionBody

MAX_VERSION = 2**53 - 1  # versions stay exact in every JSON client
_ETAG = re.compile(r'^\s*(?:W/)?"?(\d{1,18})"?\s*$')


def _store(request: Request) -> MatchStore:
    return request.app.state.store


def _token(request: Request) -> str | None:
    return bearer_token(request.headers.get("authorization"))


def _error(error: RuleError | StoreError) -> Response:
    if isinstance(error, VersionConflict):
        return problem(error.code, error.message, current_version=error.current_version,
                       headers={"ETag": f'"{error.current_version}"'})
    headers = {"WWW-Authenticate": "Bearer"} if error.code in {"token_required", "invalid_token"} else None
    return problem(error.code, error.message, headers=headers, **getattr(error, "details", {}))


def _refused_media_type(content_type: str | None, *, has_body: bool) -> str | None:
    """Why a body's declared type is refused, or None: bodies are declared JSON, in UTF-8.

    A body without ``Content-Type`` is refused too (docs/security.md): a cross-site form or
    ``text/plain`` post cannot declare JSON without a CORS preflight.
    """
    if not content_type:
        return "Send the body with Content-Type: application/json." if has_body else None
    media_type, _, params = content_type.partition(";")
    media_type = media_type.strip().lower()
    if media_type != "application/json" and not media_type.endswith("+json"):
        return "Send the body as application/json."
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return "JSON bodies are UTF-8; send charset=utf-8 or no charset."
    return None


@functools.cache
def _schema(schema_class: type[Schema]) -> Schema:
    """One instance per body schema: building a marshmallow schema deep-copies its fields, which costs more
    than loading a body with it (and a loaded schema keeps no state between loads)."""
    return schema_class()


async def _body(request: Request, schema_class: type[Schema]) -> dict[str, Any] | Response:
    """The JSON body checked against a marshmallow schema (its class), or a problem response."""
    raw = await request.body()
    refused = _refused_media_type(request.headers.get("content-type"), has_body=bool(raw))
    if refused:
        return problem("unsupported_media_type", refused)
    try:
        data = wire.loads(raw or b"null")
    except wire.MalformedJson as error:
        return problem("malformed_request", error.message)
    if not isinstance(data, dict):
        return problem("malformed_request", "The body must be a JSON object.")
    try:
        return _schema(schema_class).load(data)
    except ValidationError as error:
        return problem("malformed_request", "The body has invalid fields.", errors=error.messages)


def _game_json(game: Game) -> dict[str, Any]:
    return {
        "id": game.id, "title": game.title, "min_seats": game.min_seats, "max_seats": game.max_seats,
        "variants": [{"id": v.id, "title": v.title, "description": v.description} for v in game.variants],
        "summary": game.summary, "options_schema": game.options_schema, "action_schemas": game.action_schemas,
        "view_schema": game.view_schema, "rules_version": game.rules_version,
    }


def _seed(seed: int | None) -> str | None:
    """A seed as REST carries it: a decimal string (it can pass 2**53, past what JavaScript reads exactly)."""
    return None if seed is None else str(seed)


def _replay_job_json(job: dict[str, Any]) -> dict[str, Any]:
    replay = job["replay"]
    return {**job, "replay": None if replay is None else {**replay, "seed": _seed(replay["seed"])}}


def match_json(match: Match, seat: int | None) -> dict[str, Any]:
    return {
        "id": match.id, "game": match.game.id, "variant": match.variant, "version": match.version,
        "status": match.status, "options": match.options,
        "seed": _seed(match.seed) if match.status == "finished" else None,
        "seed_source": match.seed_source, "seed_commitment": match.seed_commitment,
        "revealed_seed": match.revealed_seed, "rules_version": match.rules_version,
        "seats": [{"seat": s.index, "name": s.name, "joined": s.joined, "bot": s.bot} for s in match.seats],
        "to_act": match.acting, "my_seat": seat, "result": match.result, "view": match.view(seat),
    }


def _with_etag(body: dict, version: int, status_code: int = 200, headers: dict | None = None) -> JSONResponse:
    return JSONResponse(body, status_code=status_code, headers={"ETag": f'"{version}"', **(headers or {})})


async def list_games(request: Request) -> Response:
    return JSONResponse({"games": [_game_json(g) for g in _store(request).games.values()]})


async def get_game(request: Request) -> Response:
    try:
        game = _store(request).game(request.path_params["game_id"])
    except StoreError as error:
        return _error(error)
    return JSONResponse(_game_json(game))


async def game_catalogue(request: Request) -> Response:
    """A game's reference data, filtered by exact match on the query parameters it allows."""
    try:
        game = _store(request).game(request.path_params["game_id"])
    except StoreError as error:
        return _error(error)
    catalogue = next((c for c in game.catalogues if c.name == request.path_params["catalogue"]), None)
    if catalogue is None:
        return problem("not_found", f"{game.title} has no {request.path_params['catalogue']!r} catalogue.")
    unknown = set(request.query_params) - set(catalogue.filters) - set(catalogue.params)
    if unknown:
        known = ", ".join([*catalogue.filters, *catalogue.params]) or "nothing"
        return problem("malformed_request", f"{catalogue.name} takes {known}, not {', '.join(sorted(unknown))}.")
    params = {}
    for name, schema in catalogue.params.items():
        raw = request.query_params.get(name, str(schema["default"]))
        if not raw.isdigit() or not schema["minimum"] <= int(raw) <= schema["maximum"]:
            return problem("malformed_request",
                           f"{name} must be a whole number from {schema['minimum']} to {schema['maximum']}.")
        params[name] = int(raw)
    wanted = {k: v for k, v in request.query_params.items() if k in catalogue.filters}
    for name, value in wanted.items():
        allowed = catalogue.item_schema["properties"][name].get("enum")
        if allowed is not None and value not in allowed:
            return problem("malformed_request", f"{name} must be one of {', '.join(map(str, allowed))}.")
    items = [item for item in catalogue.items(**params) if all(str(item.get(k)) == v for k, v in wanted.items())]
    return JSONResponse({"items": items})


async def create_match(request: Request) -> Response:
    body = await _body(request, CreateMatchBody)
    if isinstance(body, Response):
        return body
    try:
        match = await store_create_match(_store(request), body["game"], variant=body.get("variant"),
                                         options=body.get("options"), seats=body.get("seats"), seed=body.get("seed"),
                                         turn_seconds=body.get("turn_seconds"), bots=body.get("bots"),
                                         hot_seat=body.get("hot_seat", False))
    except (RuleError, StoreError) as error:
        return _error(error)
    return _with_etag(match_json(match, None), match.version, 201, {"Location": f"/v1/matches/{match.id}"})


async def get_match(request: Request) -> Response:
    try:
        match, seat = await _store(request).read_as(request.path_params["match_id"], _token(request))
    except StoreError as error:
        return _error(error)
    return _with_etag(match_json(match, seat), match.version)


async def join_seat(request: Request) -> Response:
    body = await _body(request, JoinSeatBody)
    if isinstance(body, Response):
        return body
    from .players import join_as_player, player_credential  # a module that imports this one

    if player_credential(request):  # the seat is bound to the player (service/rest/players.py)
        return await join_as_player(request, body)
    if "name" not in body:
        return problem("player_required", "Send a name, or join with a player token as the bearer token.")
    try:
        match, seat, token = await _store(request).join(request.path_params["match_id"], body["name"],
                                                        body.get("seat"), entropy=body.get("entropy"))
    except StoreError as error:
        return _error(error)
    return _with_etag({"seat": seat, "token": token, "match": match_json(match, seat)}, match.version, 201)


async def leave_seat(request: Request) -> Response:
    """Give up your seat: the bearer token is revoked and the seat is free to join again."""
    try:
        seat = int(request.path_params["seat"])
    except ValueError:
        return problem("malformed_request", "seat must be a whole number.")
    try:
        match, _ = await _store(request).leave(request.path_params["match_id"], _token(request), seat)
    except StoreError as error:
        return _error(error)
    return _with_etag({"seat": seat, "match": match_json(match, None)}, match.version)


async def legal_actions(request: Request) -> Response:
    try:
        match, seat = await _store(request).read_as(request.path_params["match_id"], _token(request))
    except StoreError as error:
        return _error(error)
    return _with_etag({"game": match.game.id, "version": match.version, "seat": seat,
                       "actions": match.legal_actions(seat)}, match.version)


async def submit_action(request: Request) -> Response:
    if_match = request.headers.get("if-match")
    if if_match is None:
        return problem("precondition_required",
                       'Send If-Match with the match version you read (its ETag), e.g. If-Match: "3".')
    parsed = _ETAG.match(if_match)
    if parsed is None:
        return problem("malformed_request", 'If-Match must be the match version as an ETag, e.g. "3".')
    body = await _body(request, SubmitActionBody)
    if isinstance(body, Response):
        return body
    key = request.headers.get("idempotency-key")
    if key is not None and not 1 <= len(key) <= 255:
        return problem("malformed_request", "Idempotency-Key must be 1 to 255 characters.")
    try:
        accepted = await _store(request).submit(request.path_params["match_id"], _token(request),
                                                int(parsed.group(1)), body["action"], key)
    except (RuleError, StoreError) as error:
        return _error(error)
    except ReplicaAckTimeout as error:  # not the generic outage answer: the client must learn the action's fate
        return problem("service_unavailable", str(error), headers={"Retry-After": "1"})
    body = {"game": accepted.match.game.id, "version": accepted.version,
            "events": accepted.events_for(accepted.seat), "duplicate": accepted.duplicate, "match": match_json(accepted.match, accepted.seat)}
    return _with_etag(body, accepted.match.version)


async def lobby(request: Request) -> Response:
    """Open matches (waiting, with a free seat), longest waiting first; ``?game=`` narrows to one game."""
    game = request.query_params.get("game")
    if game == "":
        return problem("malformed_request", "game must name a game; leave it out for every game.")
    try:
        limit = int(request.query_params.get("limit", "50"))
    except ValueError:
        return problem("malformed_request", "limit must be a whole number.")
    if not 1 <= limit <= 200:
        return problem("malformed_request", "limit must be 1 to 200.")
    try:
        matches = await _store(request).lobby(game, limit=limit)
    except StoreError as error:
        return _error(error)
    return JSONResponse({"matches": matches})


async def history(request: Request) -> Response:
    store = _store(request)
    try:
        after = int(request.query_params.get("after", "0"))
        limit = int(request.query_params.get("limit", "100"))
    except ValueError:
        return problem("malformed_request", "after and limit must be whole numbers.")
    if not 0 <= after <= MAX_VERSION or not 1 <= limit <= 1000:
        return problem("malformed_request", f"after must be 0 to {MAX_VERSION} and limit 1 to 1000.")
    try:
        match, seat = await store.read_as(request.path_params["match_id"], _token(request))
        entries = await store.history(match.id, seat, after=after, limit=limit)
    except StoreError as error:
        return _error(error)
    return _with_etag({"game": match.game.id, "entries": [e.__dict__ for e in entries]}, match.version)


async def match_record(request: Request) -> Response:
    """The match's record (docs/fairness.md): everything once it is over; before, as the caller may see it."""
    try:
        record = await store_match_record(_store(request), request.path_params["match_id"], _token(request))
    except StoreError as error:
        return _error(error)
    return _with_etag(record, record["version"])


async def add_bot(request: Request) -> Response:
    body = await _body(request, AddBotBody)
    if isinstance(body, Response):
        return body
    try:
        match, seat = await store_add_bot(_store(request), request.path_params["match_id"], body.get("seat"),
                                          body["level"], _token(request))
    except StoreError as error:
        return _error(error)
    return _with_etag({"seat": seat, "match": match_json(match, None)}, match.version, 201)


async def start_replay(request: Request) -> Response:
    body = await _body(request, StartReplayBody)
    if isinstance(body, Response):
        return body
    try:
        match = await _store(request).get(request.path_params["match_id"])
        job = await asyncio.to_thread(request.app.state.jobs.start_replay, match, body.get("seat"))
    except StoreError as error:
        return _error(error)
    return JSONResponse(_replay_job_json(job), status_code=202, headers={"Location": f"/v1/replays/{job['id']}"})


async def get_replay(request: Request) -> Response:
    try:
        job = await asyncio.to_thread(request.app.state.jobs.replay, request.path_params["job_id"])
    except StoreError as error:
        return _error(error)
    return JSONResponse(_replay_job_json(job))


routes = [
    Route("/v1/games", list_games, methods=["GET"]),
    Route("/v1/games/{game_id}", get_game, methods=["GET"]),
    Route("/v1/games/{game_id}/{catalogue}", game_catalogue, methods=["GET"]),
    Route("/v1/matches", create_match, methods=["POST"]),
    Route("/v1/lobby", lobby, methods=["GET"]),
    Route("/v1/matches/{match_id}", get_match, methods=["GET"]),
    Route("/v1/matches/{match_id}/seats", join_seat, methods=["POST"]),
    Route("/v1/matches/{match_id}/seats/{seat}", leave_seat, methods=["DELETE"]),
    Route("/v1/matches/{match_id}/legal-actions", legal_actions, methods=["GET"]),
    Route("/v1/matches/{match_id}/actions", submit_action, methods=["POST"]),
    Route("/v1/matches/{match_id}/history", history, methods=["GET"]),
    Route("/v1/matches/{match_id}/record", match_record, methods=["GET"]),
    Route("/v1/matches/{match_id}/bots", add_bot, methods=["POST"]),
    Route("/v1/matches/{match_id}/replays", start_replay, methods=["POST"]),
    Route("/v1/replays/{job_id}", get_replay, methods=["GET"]),
]
