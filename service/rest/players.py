"""REST for players: identity, my matches, the player's turn stream, quick match, rematch, ratings.

``POST /v1/players``                      make a player; its first player token, shown once
``GET /v1/players/me``                    your profile (``GET /v1/players/{id}``: anyone's public one)
``GET|POST /v1/players/me/tokens``        list your tokens (ids only) / make one (``replace``: rotate)
``DELETE /v1/players/me/tokens/{id}``     revoke one, at once
``GET /v1/me/matches``                    your matches, newest first: ``?status=active|finished&cursor=``
``GET /v1/me/turns``                      a live stream (SSE or NDJSON) of turn notices across them all
``POST|GET|DELETE /v1/quick-match``       wait for a match / where you stand / stop waiting
``POST|GET /v1/matches/{id}/rematch``     offer or accept a rematch / its state
``GET /v1/leaderboards/{game}``           top players by conservative rating: ``?variant=&cursor=``

A player's credential is the bearer token: a player token, or the identity
provider's JWT when one is configured (service/store/idp.py). Handlers only
translate HTTP to the stores (service/store/players.py, quickmatch.py,
rematch.py, ratings.py) and back.
"""

from __future__ import annotations

import contextlib

from marshmallow import RAISE, Schema, fields, validate
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from service.engine import RuleError
from service.store import StoreError
from service.store.live import guarded, turns
from service.store.players import PlayerStore, idp_player_id  # noqa: F401 (idp_player_id: docs)
from service.store.quickmatch import QuickMatch
from service.store.ratings import leaderboard as store_leaderboard
from service.store.rematch import Rematches
from service.wire import JSONResponse

from .problems import problem
from .routes import _body, _error, _token, _with_etag, match_json
from .schemas import JsonBoolean, WholeNumber
from .streams import EventStream, _format, _refused, seat_check


class CreatePlayerBody(Schema):
    class Meta:
        unknown = RAISE

    name = fields.String(required=True, validate=validate.Length(min=1, max=64))


class NewTokenBody(Schema):
    class Meta:
        unknown = RAISE

    replace = fields.String(validate=validate.Length(min=1, max=64))


class QuickMatchBody(Schema):
    class Meta:
        unknown = RAISE

    game = fields.String(required=True, validate=validate.Length(min=1, max=64))
    variant = fields.String(validate=validate.Length(min=1, max=64))
    seats = WholeNumber(validate=validate.Range(min=2, max=4))
    rated = JsonBoolean(load_default=True)
    bots_after = WholeNumber(validate=validate.Range(min=0, max=3600), allow_none=True)
    turn_seconds = WholeNumber(validate=validate.Range(min=1, max=86400), allow_none=True)


def _players(request: Request) -> PlayerStore:
    return request.app.state.players


async def _me(request: Request) -> str:
    """The player the bearer credential proves; raises PlayerRequired or InvalidToken."""
    return await _players(request).identify(_token(request))


def _page_params(request: Request) -> tuple[str | None, int] | Response:
    cursor = request.query_params.get("cursor") or None
    raw = request.query_params.get("limit", "20")
    if not raw.isdigit() or not 1 <= int(raw) <= 100:
        return problem("malformed_request", "limit must be a whole number from 1 to 100.")
    if cursor is not None and len(cursor) > 400:
        return problem("malformed_request", "cursor is not one this service gave.")
    return cursor, int(raw)


def _player_json(player) -> dict:
    return {"id": player.id, "name": player.name, "created": player.created}


# -- identity -----------------------------------------------------------------------------------------


async def create_player(request: Request) -> Response:
    body = await _body(request, CreatePlayerBody)
    if isinstance(body, Response):
        return body
    try:
        player, token, token_id = await _players(request).create(body["name"])
    except StoreError as error:
        return _error(error)
    return JSONResponse({"player": _player_json(player), "token": token, "token_id": token_id}, status_code=201,
                        headers={"Location": f"/v1/players/{player.id}"})


async def my_profile(request: Request) -> Response:
    try:
        return JSONResponse(await _players(request).profile(await _me(request)))
    except StoreError as error:
        return _error(error)


async def player_profile(request: Request) -> Response:
    try:
        return JSONResponse(await _players(request).profile(request.path_params["player_id"]))
    except StoreError as error:
        return _error(error)


async def list_tokens(request: Request) -> Response:
    try:
        return JSONResponse({"tokens": await _players(request).list_tokens(await _me(request))})
    except StoreError as error:
        return _error(error)


async def new_token(request: Request) -> Response:
    try:
        player_id = await _me(request)  # who asks before what they ask: 401 comes first
    except StoreError as error:
        return _error(error)
    body = await _body(request, NewTokenBody)
    if isinstance(body, Response):
        return body
    try:
        token, token_id = await _players(request).issue_token(player_id, body.get("replace"))
    except StoreError as error:
        return _error(error)
    return JSONResponse({"token": token, "token_id": token_id, "replaced": body.get("replace")}, status_code=201)


async def revoke_token(request: Request) -> Response:
    token_id = request.path_params["token_id"]
    try:
        await _players(request).revoke(await _me(request), token_id)
    except StoreError as error:
        return _error(error)
    return JSONResponse({"token_id": token_id, "revoked": True})


async def join_as_player(request: Request, body: dict) -> Response:
    """``POST /v1/matches/{id}/seats`` with a player's credential: the seat is bound to the player
    (service/rest/routes.py sends it here)."""
    players = _players(request)
    try:
        match, seat, token = await players.join(request.path_params["match_id"], await _me(request),
                                                body.get("seat"), entropy=body.get("entropy"))
    except StoreError as error:
        return _error(error)
    return _with_etag({"seat": seat, "token": token, "match": match_json(match, seat)}, match.version, 201)


def player_credential(request: Request) -> bool:
    """Whether the request's bearer token is a player's credential."""
    token = _token(request)
    players = getattr(request.app.state, "players", None)
    return bool(token) and players is not None and players.claims(token)


# -- my matches ---------------------------------------------------------------------------------------


async def my_matches(request: Request) -> Response:
    status = request.query_params.get("status", "active")
    if status not in ("active", "finished"):
        return problem("malformed_request", "status must be active or finished.")
    paging = _page_params(request)
    if isinstance(paging, Response):
        return paging
    try:
        entries, cursor = await _players(request).matches(await _me(request), status, *paging)
    except StoreError as error:
        return _error(error)
    except ValueError:
        return problem("malformed_request", "cursor is not one this service gave.")
    return JSONResponse({"matches": entries, "next_cursor": cursor})


async def my_turns(request: Request) -> Response:
    """The turn stream of ``GET /v1/turns`` for every seat of the player, new matches included."""
    store, live, settings = request.app.state.store, request.app.state.live, request.app.state.settings
    players = _players(request)
    token = _token(request)
    try:
        player_id = await guarded(lambda: players.identify(token), live.timeout)
        seats = await guarded(lambda: players.active_seats(player_id), live.timeout)
        lease = await request.app.state.stream_limit.acquire(store, [token], keepalive=settings.stream_keepalive)
    except StoreError as error:
        if error.code in ("player_required", "invalid_token"):
            return _error(error)
        return _refused(error)

    async def discover():
        return await players.active_seats(player_id)

    async def items():
        notices = turns(live, seats, idle=settings.stream_keepalive,
                        seat_checks={s: seat_check(store, s[0], token) for s in seats}, discover=discover,
                        check=lambda match_id: seat_check(store, match_id, token))
        async with contextlib.aclosing(notices):
            async for notice in notices:
                yield None if notice is None else ("turn", notice, f"{notice['match_id']}:{notice['version']}")

    return EventStream(items(), _format(request), settings.stream_send_timeout, live, lease.release, lease=lease)


# -- quick match and rematch --------------------------------------------------------------------------------


def _quick(request: Request) -> QuickMatch:
    return request.app.state.quick_match


async def join_quick_match(request: Request) -> Response:
    try:
        player_id = await _me(request)  # who asks before what they ask: 401 comes first
    except StoreError as error:
        return _error(error)
    body = await _body(request, QuickMatchBody)
    if isinstance(body, Response):
        return body
    quick = _quick(request)
    try:
        queue = quick.queue(body["game"], body.get("variant"), body.get("seats"), body["rated"],
                            body.get("turn_seconds"))
        status = await quick.join(player_id, queue, body.get("bots_after"))
    except (RuleError, StoreError) as error:
        return _error(error)
    return JSONResponse(status, status_code=201 if status["status"] == "matched" else 202)


async def quick_match_status(request: Request) -> Response:
    try:
        return JSONResponse(await _quick(request).status(await _me(request)))
    except StoreError as error:
        return _error(error)


async def leave_quick_match(request: Request) -> Response:
    quick = _quick(request)
    try:
        player_id = await _me(request)
        await quick.leave(player_id)
        return JSONResponse(await quick.status(player_id))
    except StoreError as error:
        return _error(error)


def _rematches(request: Request) -> Rematches:
    return Rematches(request.app.state.store, _players(request))


async def offer_rematch(request: Request) -> Response:
    try:
        state = await _rematches(request).offer(request.path_params["match_id"], _token(request))
    except StoreError as error:
        return _error(error)
    return JSONResponse(state, status_code=201 if state["rematch_id"] else 202)


async def rematch_status(request: Request) -> Response:
    try:
        return JSONResponse(await _rematches(request).offer(request.path_params["match_id"], _token(request),
                                                            accept=False))
    except StoreError as error:
        return _error(error)


# -- ratings ---------------------------------------------------------------------------------------------------


async def leaderboard(request: Request) -> Response:
    store = request.app.state.store
    paging = _page_params(request)
    if isinstance(paging, Response):
        return paging
    try:
        game = store.game(request.path_params["game_id"])
        variant = request.query_params.get("variant") or game.variant_ids()[0]
        if variant not in game.variant_ids():  # no such leaderboard: 404, as for a game that is not hosted
            return problem("not_found", f"{game.title} has no variant {variant!r}, so no leaderboard of it.")
        rows, cursor = await store_leaderboard(_players(request), game.id, variant, *paging)
    except StoreError as error:
        return _error(error)
    except ValueError:
        return problem("malformed_request", "cursor is not one this service gave.")
    return JSONResponse({"game": game.id, "variant": variant, "players": rows, "next_cursor": cursor})


def _by_method(**handlers):
    """One endpoint for a path with several methods, so that a 405's ``Allow`` names them all."""

    async def endpoint(request: Request) -> Response:
        return await handlers[request.method.lower()](request)

    return endpoint


routes = [
    Route("/v1/players", create_player, methods=["POST"]),
    Route("/v1/players/me", my_profile, methods=["GET"]),
    Route("/v1/players/me/tokens", _by_method(get=list_tokens, post=new_token), methods=["GET", "POST"]),
    Route("/v1/players/me/tokens/{token_id}", revoke_token, methods=["DELETE"]),
    Route("/v1/players/{player_id}", player_profile, methods=["GET"]),
    Route("/v1/me/matches", my_matches, methods=["GET"]),
    Route("/v1/me/turns", my_turns, methods=["GET"]),
    Route("/v1/quick-match", _by_method(post=join_quick_match, get=quick_match_status, delete=leave_quick_match),
          methods=["GET", "POST", "DELETE"]),
    Route("/v1/matches/{match_id}/rematch", _by_method(post=offer_rematch, get=rematch_status),
          methods=["GET", "POST"]),
    Route("/v1/leaderboards/{game_id}", leaderboard, methods=["GET"]),
]
