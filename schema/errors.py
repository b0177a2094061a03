"""Unexpected GraphQL errors: logged by whose they are, and masked before they reach a client.

Expected failures are data (union members, :mod:`schema.problems`). What is left in
``errors`` is either the client's (a syntax or validation error, a limit), which
passes as it is, or not: an unreachable store becomes ``service_unavailable`` (HTTP
503 with ``Retry-After``, schema/asgi.py) and anything else ``internal_error``, with
the request id to find it in the logs, never an exception's own text (which can
name internal hosts).
"""

from __future__ import annotations

import logging
import re

from graphql import GraphQLError, OperationDefinitionNode
from strawberry.extensions import MaskErrors, SchemaExtension

from service.logs import request_id
from service.store.connect import STORE_UNAVAILABLE, ReplicaAckTimeout
from service.store.counting import RateLimited
from service.store.errors import RulesVersionUnavailable

log = logging.getLogger("grimoire.graphql")

UNAVAILABLE_MESSAGE = "The match store is unavailable; try again shortly."
INTERNAL_MESSAGE = "Something went wrong on our side; it has been logged."


def code_of(error: GraphQLError) -> str | None:
    return (error.extensions or {}).get("code")


def _unexpected(error: GraphQLError) -> bool:
    original = error.original_error
    return original is not None and not isinstance(original, GraphQLError)


#: graphql-core's words for a variable's value that does not fit its type. Its validation rules also start
#: "Variable '$x' ..." (never used, not defined, used in a position expecting another type): the
#: document's own mistakes, not its input's.
_BAD_VARIABLE_VALUE = re.compile(r"Variable '\$\w+' has invalid value")


def client_error_code(message: str) -> str:
    """The code of a client's own error that graphql-core leaves uncoded (the names Apollo made usual)."""
    if message.startswith("Syntax Error"):
        return "graphql_parse_failed"
    if _BAD_VARIABLE_VALUE.match(message):
        return "bad_user_input"
    return "graphql_validation_failed"


class MaskUnexpectedErrors(MaskErrors):
    """Unexpected errors leave as a code and the request id; the client's own errors pass."""

    def __init__(self):
        super().__init__(should_mask_error=_unexpected)

    def _process_result(self, result: object) -> None:
        # strawberry's asks isinstance() of a runtime-checkable Protocol, which walks the Protocol's members on
        # every call: for every subscription event to every subscriber, about a tenth of a websocket
        # follower's cost (issue 18)
        errors = getattr(result, "errors", None)
        if errors:
            result.errors = self._process_errors(errors)

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        if isinstance(error.original_error, RulesVersionUnavailable):  # a rolling deployment: 503, try elsewhere
            return GraphQLError(error.original_error.message, nodes=error.nodes, source=error.source,
                                positions=error.positions, path=error.path,
                                extensions={"code": RulesVersionUnavailable.code, "request_id": request_id.get()})
        unavailable = isinstance(error.original_error, STORE_UNAVAILABLE)
        message = UNAVAILABLE_MESSAGE if unavailable else INTERNAL_MESSAGE
        if isinstance(error.original_error, ReplicaAckTimeout):  # our own words: how to learn the action's fate
            message = str(error.original_error).replace("Idempotency-Key", "idempotencyKey")
        return GraphQLError(message, nodes=error.nodes,
                            source=error.source, positions=error.positions, path=error.path,
                            extensions={"code": "service_unavailable" if unavailable else "internal_error",
                                        "request_id": request_id.get()})


def log_errors(errors: list[GraphQLError]) -> None:
    """Log a request's errors before they are masked.

    A client's mistake is INFO without a traceback (an attacker cannot flood the logs
    with them); an unreachable store is one WARNING line; anything else is a bug: ERROR
    with its traceback.
    """
    for error in errors:
        original = error.original_error
        if not _unexpected(error):
            log.info("graphql request refused: %s", error.message,
                     extra={"code": code_of(error) or "invalid_request"})
        elif isinstance(original, STORE_UNAVAILABLE):
            log.warning("redis unavailable: %s", type(original).__name__)
        elif isinstance(original, RateLimited):  # answered 429 by the limiter (service/limits.py)
            log.info("graphql request refused: %s", original, extra={"code": "rate_limited"})
        elif isinstance(original, RulesVersionUnavailable):
            log.warning("rules version unavailable: %s %s", original.game_id, original.rules_version)
        else:
            log.error("unhandled error in a GraphQL resolver",
                      exc_info=(type(original), original, original.__traceback__))


class OperationNameRequired(SchemaExtension):
    """A document with several operations names the one to run (GraphQL spec, "GetOperation").

    Without this, strawberry would run the first one: a client would get an answer to a
    question it may not have meant to ask.
    """

    def on_validate(self):
        context = self.execution_context
        document = context.graphql_document
        if context._provided_operation_name is None and document is not None:  # no public accessor
            operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
            if len(operations) > 1:
                # set before validation runs: strawberry then skips it and answers with these errors
                context.pre_execution_errors = [GraphQLError(
                    "Must provide operationName if the document contains several operations.",
                    extensions={"code": "operation_name_required"})]
        yield
