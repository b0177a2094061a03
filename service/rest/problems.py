"""RFC 9457 problem responses, with the machine codes GraphQL uses."""

from starlette.responses import JSONResponse

#: HTTP status of each machine code.
STATUS = {
    "malformed_request": 400,
    "token_required": 401,
    "invalid_token": 401,
    "not_your_seat": 403,
    "unknown_game": 404,
    "match_not_found": 404,
    "not_found": 404,
    "method_not_allowed": 405,
    "not_your_turn": 409,
    "match_finished": 409,
    "match_not_started": 409,
    "seat_taken": 409,
    "match_full": 409,
    "version_conflict": 412,
    "payload_too_large": 413,
    "headers_too_large": 431,
    "unsupported_media_type": 415,
    "invalid_options": 422,
    "illegal_action": 409,
    "malformed_action": 422,
    "no_such_seat": 409,
    "idempotency_key_reused": 422,
    "precondition_required": 428,
    "too_many_streams": 429,
    "rate_limited": 429,
    "unknown_bot_level": 422,
    "match_not_finished": 409,
    "replay_not_found": 404,
    "service_unavailable": 503,
    "internal_error": 500,
}

TITLES = {
    "malformed_request": "The request is not well formed",
    "token_required": "A seat token is required",
    "invalid_token": "The token does not hold a seat in this match",
    "not_your_seat": "The token holds another seat of this match",
    "unknown_game": "No such game",
    "match_not_found": "No such match",
    "not_found": "No such resource",
    "method_not_allowed": "Method not allowed",
    "not_your_turn": "Not your turn",
    "match_finished": "The match is over",
    "match_not_started": "The match has not started",
    "seat_taken": "The seat is taken",
    "match_full": "The match is full",
    "version_conflict": "The match has moved on",
    "payload_too_large": "The request body is too large",
    "headers_too_large": "The request headers are too large",
    "unsupported_media_type": "The body must be JSON",
    "invalid_options": "Invalid match options",
    "illegal_action": "Illegal action",
    "malformed_action": "Malformed action",
    "no_such_seat": "No such seat",
    "idempotency_key_reused": "Idempotency key reused",
    "precondition_required": "If-Match is required",
    "too_many_streams": "Too many open streams for this token",
    "rate_limited": "Too many requests",
    "unknown_bot_level": "No such bot level",
    "match_not_finished": "The match is not finished",
    "replay_not_found": "No such replay",
    "service_unavailable": "Service unavailable",
    "internal_error": "Internal error",
}


def problem(code: str, detail: str, *, headers: dict | None = None, **extra) -> JSONResponse:
    """A problem+json response for ``code`` (a game's own rule codes are illegal actions: 409)."""
    status = STATUS.get(code, 409)
    body = {"type": f"urn:grimoire:problem:{code}", "title": TITLES.get(code, "Action refused"), "status": status,
            "detail": detail, "code": code, **extra}
    response = JSONResponse(body, status_code=status, headers=headers, media_type="application/problem+json")
    return response
