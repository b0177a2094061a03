"""The GraphQL endpoint: strawberry's ASGI app with our context, bounded JSON and coded HTTP errors.

* A body that is not UTF-8 JSON, or nests deeper than :data:`service.wire.MAX_DEPTH`, is
  HTTP 400 with an error coded ``malformed_request``; on a websocket the connection closes
  with 4400. Nothing walks such a body.
* A subscription sent over plain HTTP is HTTP 400 ``malformed_request`` naming the websocket
  (strawberry would run it as a query, which cannot work, and answer an internal error).
* The store unreachable: HTTP 503 with ``Retry-After`` (the error is coded
  ``service_unavailable`` by :class:`schema.errors.MaskUnexpectedErrors`); the same for a
  match whose rules version this process lacks (``rules_version_unavailable``).
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from cross_web import HTTPException
from graphql import GraphQLError, OperationType, get_operation_ast, parse
from starlette.requests import Request
from starlette.responses import HTMLResponse
from strawberry.asgi import GraphQL
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL

from service import wire
from service.static import page
from service.store import bearer_token
from service.wire import JSONResponse

from .errors import client_error_code, code_of

RETRY_AFTER = "1"
_SUB_RESPONSE = "grimoire.graphql_response"
#: Error codes answered with HTTP 503 and Retry-After: another try (on another process) may succeed.
_RETRY_ELSEWHERE = ("service_unavailable", "rules_version_unavailable")


class GraphQLApp(GraphQL):
    """GraphiQL in the browser; only the ``graphql-transport-ws`` protocol for subscriptions."""

    def __init__(self, schema, *, max_subscriptions_per_connection: int = 10, allowed_origins=()):
        # allowed_origins: other origins whose pages may open the websocket (same-origin and
        # Origin-less handshakes always may); the rest are refused with 403 before any frame
        super().__init__(schema, graphql_ide="graphiql", allow_queries_via_get=False,
                         subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL,),
                         connection_init_wait_timeout=timedelta(seconds=10),
                         max_subscriptions_per_connection=max_subscriptions_per_connection,
                         allowed_origins=allowed_origins)

    async def render_graphql_ide(self, request):
        # strawberry's own page loads GraphiQL from a CDN; ours from this service (service/static/)
        return HTMLResponse(page("graphiql.html"))

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await super().__call__(scope, receive, send)
        try:
            response = await self.run(Request(scope=scope, receive=receive))
        except HTTPException as error:  # strawberry's own refusals, coded like every other error. Each is a 400:
            # the route admits only GET and POST (Starlette answers the other methods), and a GET without a
            # query is GraphiQL
            body = {"errors": [{"message": error.reason, "extensions": {"code": "malformed_request"}}]}
            response = JSONResponse(body, status_code=error.status_code)
        await response(scope, receive, send)

    async def execute_single(self, request, request_adapter, sub_response, context, root_value, request_data):
        if _is_subscription(request_data.query, request_data.operation_name):
            raise HTTPException(400, "Subscriptions are served over the websocket at /graphql (the "
                                     "graphql-transport-ws protocol), not over HTTP.")
        return await super().execute_single(request, request_adapter, sub_response, context, root_value,
                                            request_data)

    def decode_json(self, data: str | bytes) -> object:
        try:
            return wire.loads(data)
        except wire.MalformedJson as error:  # strawberry answers 400 (HTTP) or closes with 4400 (websocket)
            raise json.JSONDecodeError(error.message, "", 0) from None

    def encode_json(self, data: object) -> str:
        # text, not bytes: strawberry sends bytes over the websocket as binary frames, which
        # graphql-transport-ws clients refuse
        return wire.dumps(data).decode("utf-8")

    async def get_context(self, request, response):
        request.scope[_SUB_RESPONSE] = response
        return {"request": request, "store": request.app.state.store,
                "token": bearer_token(request.headers.get("authorization"))}

    async def process_result(self, request, result) -> Any:
        if any(code_of(error) in _RETRY_ELSEWHERE for error in result.errors or ()):
            # strawberry copies the status and headers of the context's response onto the answer
            response = request.scope.get(_SUB_RESPONSE)
            if response is not None and not hasattr(response, "send"):  # HTTP, not a websocket
                response.status_code = 503
                response.headers["Retry-After"] = RETRY_AFTER
        answer = await super().process_result(request, result)
        for error in answer.get("errors") or ():  # every error a client sees carries a code
            extensions = error.setdefault("extensions", {})
            extensions.setdefault("code", client_error_code(error["message"]))
        return answer


def _is_subscription(query: object, operation_name: str | None) -> bool:
    """Whether the operation a request runs is a subscription. Only a document that says "subscription"
    is parsed here: queries and mutations pay for one substring search."""
    if not isinstance(query, str) or "subscription" not in query:
        return False
    try:
        operation = get_operation_ast(parse(query), operation_name)
    except GraphQLError:
        return False  # strawberry reports the syntax error as usual
    return operation is not None and operation.operation == OperationType.SUBSCRIPTION
