"""REST for collections and trading (docs/api.md, "Collections and trading").

``GET /v1/players/me/collection``                 your collection: counts, the sets you can open
``POST /v1/players/me/collection/visibility``     ``{"public": true|false}``: others may read your counts
``GET /v1/players/{id}/collection``               another's counts, if public (``collection_private`` if not)
``GET /v1/players/me|{id}/collection/progress``   collectors' view: completion per rarity, missing, duplicates
``POST /v1/players/me/packs``                     ``{"kind": "starter"|"refill"}``: open a set (Idempotency-Key)
``GET /v1/players/me/packs``                      the sets you opened, with their seeds, newest first
``GET|POST /v1/players/me/hands``                 your saved hands / save one (replace by name)
``GET|DELETE /v1/players/me/hands/{name}``        one saved hand / delete it
``POST /v1/matches/{id}/saved-hand``              ``{"name"}`` (none: your default): bring it (If-Match)
``POST /v1/trades``                               offer a trade
``GET /v1/players/me/trades``                     your trades, made and received, newest first
``GET /v1/trades/{id}``                           a trade of yours
``POST /v1/trades/{id}/accept|decline|cancel``    answer it (the recipient) or take it back (the offerer)

Every route acts as the player the bearer credential proves (a player token, or the identity provider's
JWT: service/rest/players.py), but the public collection reads. Handlers only translate HTTP to the stores
(service/store/collections.py, trades.py) and back; the rules are the game's.
"""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from service.engine import RuleError
from service.store import StoreError
from service.store.collections import Collections
from service.store.connect import ReplicaAckTimeout
from service.store.trades import Trades
from service.wire import JSONResponse

from .players import _by_method, _me, _page_params
from .problems import problem
from .routes import _ETAG, _body, _error, _token, _with_etag, match_json
from .schemas import WholeNumber


class _Strict(Schema):
    class Meta:
        unknown = RAISE


class OpenSetBody(_Strict):
    kind = fields.String(required=True, validate=validate.Length(min=1, max=32))


class VisibilityBody(_Strict):
    public = fields.Boolean(required=True)


class _Ids(fields.List):
    def __init__(self, **kwargs):
        super().__init__(fields.String(validate=validate.Length(min=1, max=64)), validate=validate.Length(max=30),
                         **kwargs)


class SaveHandBody(_Strict):
    name = fields.String(required=True, validate=validate.Length(min=1, max=40))
    stones = _Ids(required=True)
    cards = _Ids(required=True)
    hand = _Ids(required=True)
    default = fields.Boolean(load_default=False)


class BringHandBody(_Strict):
    name = fields.String(validate=validate.Length(min=1, max=40))


class _Line(_Strict):
    id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    count = WholeNumber(load_default=1, validate=validate.Range(min=1, max=100))


class _Side(_Strict):
    stones = fields.List(fields.Nested(_Line), load_default=list, validate=validate.Length(max=30))
    cards = fields.List(fields.Nested(_Line), load_default=list, validate=validate.Length(max=30))


class OfferBody(_Strict):
    to = fields.String(required=True, validate=validate.Length(min=1, max=64))
    give = fields.Nested(_Side, load_default=dict)
    get = fields.Nested(_Side, load_default=dict)
    expires_in = WholeNumber(validate=validate.Range(min=60, max=30 * 24 * 3600))


async def _me_and_body(request: Request, schema_class) -> tuple[str, dict] | Response:
    """The player the credential proves, then the checked body: who asks comes before what they ask (a request
    without a credential is 401 whatever its body)."""
    try:
        player_id = await _me(request)
    except StoreError as error:
        return _error(error)
    body = await _body(request, schema_class)
    return body if isinstance(body, Response) else (player_id, body)


def _collections(request: Request) -> Collections:
    return request.app.state.collections


def _trades(request: Request) -> Trades:
    return request.app.state.trades


# -- collections -----------------------------------------------------------------------------------------


async def my_collection(request: Request) -> Response:
    try:
        return JSONResponse(await _collections(request).collection(await _me(request)))
    except StoreError as error:
        return _error(error)


async def player_collection(request: Request) -> Response:
    try:
        return JSONResponse(await _collections(request).public_collection(request.path_params["player_id"]))
    except StoreError as error:
        return _error(error)


async def set_visibility(request: Request) -> Response:
    asked = await _me_and_body(request, VisibilityBody)
    if isinstance(asked, Response):
        return asked
    player_id, body = asked
    collections = _collections(request)
    try:
        await collections.set_public(player_id, body["public"])
        return JSONResponse(await collections.collection(player_id))
    except StoreError as error:
        return _error(error)


async def my_progress(request: Request) -> Response:
    try:
        return JSONResponse(await _collections(request).progress(await _me(request), owner=True))
    except StoreError as error:
        return _error(error)


async def player_progress(request: Request) -> Response:
    try:
        return JSONResponse(await _collections(request).progress(request.path_params["player_id"], owner=False))
    except StoreError as error:
        return _error(error)


# -- sets --------------------------------------------------------------------------------------------------


async def open_set(request: Request) -> Response:
    asked = await _me_and_body(request, OpenSetBody)
    if isinstance(asked, Response):
        return asked
    player_id, body = asked
    key = request.headers.get("idempotency-key")
    if key is not None and not 1 <= len(key) <= 255:
        return problem("malformed_request", "Idempotency-Key must be 1 to 255 characters.")
    try:
        opening, repeated = await _collections(request).open_set(player_id, body["kind"], key)
    except StoreError as error:
        return _error(error)
    return JSONResponse({"opening": opening, "duplicate": repeated}, status_code=200 if repeated else 201)


async def my_openings(request: Request) -> Response:
    paging = _page_params(request)
    if isinstance(paging, Response):
        return paging
    try:
        openings, cursor = await _collections(request).openings(await _me(request), *paging)
    except StoreError as error:
        return _error(error)
    except ValueError:
        return problem("malformed_request", "cursor is not one this service gave.")
    return JSONResponse({"openings": openings, "next_cursor": cursor})


# -- saved hands ---------------------------------------------------------------------------------------------


async def my_hands(request: Request) -> Response:
    try:
        return JSONResponse({"hands": await _collections(request).hands(await _me(request))})
    except StoreError as error:
        return _error(error)


async def save_hand(request: Request) -> Response:
    asked = await _me_and_body(request, SaveHandBody)
    if isinstance(asked, Response):
        return asked
    player_id, body = asked
    hand = {"stones": body["stones"], "cards": body["cards"], "hand": body["hand"]}
    try:
        saved = await _collections(request).save_hand(player_id, body["name"], hand, default=body["default"])
    except StoreError as error:
        return _error(error)
    return JSONResponse(saved, status_code=201)


async def get_hand(request: Request) -> Response:
    try:
        return JSONResponse(await _collections(request).hand(await _me(request), request.path_params["name"]))
    except StoreError as error:
        return _error(error)


async def delete_hand(request: Request) -> Response:
    name = request.path_params["name"]
    try:
        await _collections(request).delete_hand(await _me(request), name)
    except StoreError as error:
        return _error(error)
    return JSONResponse({"name": name, "deleted": True})


async def bring_saved_hand(request: Request) -> Response:
    """Bring a saved hand into a match: the action the game makes of it, submitted as any action is."""
    if_match = request.headers.get("if-match")
    if if_match is None:
        return problem("precondition_required",
                       'Send If-Match with the match version you read (its ETag), e.g. If-Match: "3".')
    parsed = _ETAG.match(if_match)
    if parsed is None:
        return problem("malformed_request", 'If-Match must be the match version as an ETag, e.g. "3".')
    body = await _body(request, BringHandBody)
    if isinstance(body, Response):
        return body
    key = request.headers.get("idempotency-key")
    if key is not None and not 1 <= len(key) <= 255:
        return problem("malformed_request", "Idempotency-Key must be 1 to 255 characters.")
    try:
        accepted = await _collections(request).bring_hand(request.path_params["match_id"], _token(request),
                                                          int(parsed.group(1)), body.get("name"), key)
    except (RuleError, StoreError) as error:
        return _error(error)
    except ReplicaAckTimeout as error:  # as for any action: the client must learn its fate
        return problem("service_unavailable", str(error), headers={"Retry-After": "1"})
    return _with_etag({"game": accepted.match.game.id, "version": accepted.version,
                       "events": accepted.events_for(accepted.seat), "duplicate": accepted.duplicate,
                       "match": match_json(accepted.match, accepted.seat)}, accepted.match.version)


# -- trades --------------------------------------------------------------------------------------------------


def _side(side: dict) -> dict:
    return {kind: [{"id": line["id"], "count": line["count"]} for line in side.get(kind, [])]
            for kind in ("stones", "cards")}


async def offer_trade(request: Request) -> Response:
    asked = await _me_and_body(request, OfferBody)
    if isinstance(asked, Response):
        return asked
    player_id, body = asked
    try:
        trade = await _trades(request).offer(player_id, body["to"], _side(body["give"]), _side(body["get"]),
                                             body.get("expires_in"))
    except StoreError as error:
        return _error(error)
    return JSONResponse(trade, status_code=201, headers={"Location": f"/v1/trades/{trade['id']}"})


async def my_trades(request: Request) -> Response:
    paging = _page_params(request)
    if isinstance(paging, Response):
        return paging
    try:
        trades, cursor = await _trades(request).history(await _me(request), *paging)
    except StoreError as error:
        return _error(error)
    except ValueError:
        return problem("malformed_request", "cursor is not one this service gave.")
    return JSONResponse({"trades": trades, "next_cursor": cursor})


async def get_trade(request: Request) -> Response:
    try:
        return JSONResponse(await _trades(request).get(request.path_params["trade_id"], await _me(request)))
    except StoreError as error:
        return _error(error)


def _answer(operation: str):
    async def answer(request: Request) -> Response:
        trades = _trades(request)
        try:
            trade = await getattr(trades, operation)(request.path_params["trade_id"], await _me(request))
        except StoreError as error:
            return _error(error)
        return JSONResponse(trade)

    answer.__name__ = f"{operation}_trade"
    return answer


routes = [
    Route("/v1/players/me/collection", my_collection, methods=["GET"]),
    Route("/v1/players/me/collection/visibility", set_visibility, methods=["POST"]),
    Route("/v1/players/me/collection/progress", my_progress, methods=["GET"]),
    Route("/v1/players/me/packs", _by_method(post=open_set, get=my_openings), methods=["GET", "POST"]),
    Route("/v1/players/me/hands", _by_method(get=my_hands, post=save_hand), methods=["GET", "POST"]),
    Route("/v1/players/me/hands/{name}", _by_method(get=get_hand, delete=delete_hand), methods=["GET", "DELETE"]),
    Route("/v1/players/me/trades", my_trades, methods=["GET"]),
    Route("/v1/players/{player_id}/collection", player_collection, methods=["GET"]),
    Route("/v1/players/{player_id}/collection/progress", player_progress, methods=["GET"]),
    Route("/v1/matches/{match_id}/saved-hand", bring_saved_hand, methods=["POST"]),
    Route("/v1/trades", offer_trade, methods=["POST"]),
    Route("/v1/trades/{trade_id}", get_trade, methods=["GET"]),
    Route("/v1/trades/{trade_id}/accept", _answer("accept"), methods=["POST"]),
    Route("/v1/trades/{trade_id}/decline", _answer("decline"), methods=["POST"]),
    Route("/v1/trades/{trade_id}/cancel", _answer("cancel"), methods=["POST"]),
]
