"""What the client raises: a refusal of the service as an exception named after its problem ``code``.

Every refusal of the REST API is ``application/problem+json`` with a machine ``code`` (docs/api.md,
"Errors"); :func:`problem_error` turns one into the exception of its family, so a bot can catch what it
can act on (``except VersionConflict``: read again and choose again) and let the rest through. The
exception keeps the code, the HTTP status, the human ``detail`` and the whole problem body.
"""

from __future__ import annotations

from typing import Any

from grimoire.models import JSON, Match


class GrimoireError(Exception):
    """Anything this client raises."""


class ConnectionLost(GrimoireError):
    """The service could not be reached (or kept answering 503) for longer than the client retries."""


class StreamEnded(GrimoireError):
    """A stream ended for a reason the client cannot resume from (an ``internal_error`` of the service)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the stream ended: {reason}")
        self.reason = reason


class ProblemError(GrimoireError):
    """A problem+json answer: ``code`` is the machine code, ``problem`` the whole body."""

    def __init__(self, code: str, status: int, detail: str, problem: JSON | None = None) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.status = status
        self.detail = detail
        self.problem: JSON = problem if problem is not None else {"code": code, "status": status, "detail": detail}


class BadRequest(ProblemError):
    """The request itself is wrong (malformed body or action, bad options, unknown bot level...): fix the code."""


class IdempotencyKeyReused(BadRequest):
    """An idempotency key was sent again with a different request."""


class Unauthorized(ProblemError):
    """``token_required`` or ``invalid_token``: this token holds no seat in the match (left, handed to a bot)."""


class NotYourSeat(ProblemError):
    """The token is good but holds another seat of the match."""


class NotFound(ProblemError):
    """No such game, match, catalogue or replay (finished matches expire after 7 days)."""


class Conflict(ProblemError):
    """The match refuses this now (HTTP 409 and 412): read it again before deciding what to do."""


class VersionConflict(Conflict):
    """The match moved on since the version the action was based on; nothing was applied.

    ``current_version`` is the match's version; ``match`` is the match read again after the conflict
    (set by :meth:`grimoire.client.Seat.submit`, which refreshes before raising), so a caller can choose
    again at once.
    """

    def __init__(self, code: str, status: int, detail: str, problem: JSON | None = None) -> None:
        super().__init__(code, status, detail, problem)
        version = self.problem.get("current_version")
        self.current_version: int | None = version if isinstance(version, int) else None
        self.match: Match | None = None


class NotYourTurn(Conflict):
    """The match is not waiting on this seat."""


class RuleViolation(Conflict):
    """The rules do not allow this action now: ``illegal_action``, or a game's own rule code."""


class MatchNotStarted(Conflict):
    """Seats are still open."""


class MatchFinished(Conflict):
    """The match is over."""


class SeatUnavailable(Conflict):
    """Joining or adding a bot was refused: ``seat_taken``, ``match_full`` or ``no_such_seat``."""


class TooManyRequests(ProblemError):
    """``rate_limited`` or ``too_many_streams``; ``retry_after`` is the service's advice in seconds."""

    def __init__(self, code: str, status: int, detail: str, problem: JSON | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(code, status, detail, problem)
        self.retry_after = retry_after


class ServiceUnavailable(ProblemError):
    """``service_unavailable`` (Redis did not answer) after the client's own retries."""


#: the exception of each machine code the service documents (service/rest/problems.py)
BY_CODE: dict[str, type[ProblemError]] = {
    "malformed_request": BadRequest, "malformed_action": BadRequest, "invalid_options": BadRequest,
    "unsupported_media_type": BadRequest, "payload_too_large": BadRequest, "headers_too_large": BadRequest,
    "precondition_required": BadRequest, "unknown_bot_level": BadRequest, "method_not_allowed": BadRequest,
    "idempotency_key_reused": IdempotencyKeyReused,
    "token_required": Unauthorized, "invalid_token": Unauthorized,
    "not_your_seat": NotYourSeat,
    "unknown_game": NotFound, "match_not_found": NotFound, "not_found": NotFound, "replay_not_found": NotFound,
    "version_conflict": VersionConflict,
    "not_your_turn": NotYourTurn,
    "illegal_action": RuleViolation,
    "match_not_started": MatchNotStarted, "match_not_finished": Conflict,
    "match_finished": MatchFinished,
    "seat_taken": SeatUnavailable, "match_full": SeatUnavailable, "no_such_seat": SeatUnavailable,
    "rate_limited": TooManyRequests, "too_many_streams": TooManyRequests,
    "service_unavailable": ServiceUnavailable,
}


#: the family of a code not in BY_CODE (one added to the service later), by its HTTP status. 409: a game's
#: own code for a refused action (docs/api.md: "REST: that code in ``code``, status 409")
BY_STATUS: dict[int, type[ProblemError]] = {
    400: BadRequest, 401: Unauthorized, 404: NotFound, 409: RuleViolation, 412: Conflict, 415: BadRequest,
    422: BadRequest, 429: TooManyRequests, 503: ServiceUnavailable,
}


def problem_error(status: int, body: Any, retry_after: str | None = None) -> ProblemError:
    """The exception for a refusal with HTTP ``status`` and (decoded) ``body``: by its code, else by its status.

    A body that is no problem (a proxy's HTML page) keeps the status, with the code ``http_<status>``.
    """
    problem: JSON = body if isinstance(body, dict) and isinstance(body.get("code"), str) else {}
    code = problem.get("code") or f"http_{status}"
    detail = str(problem.get("detail") or problem.get("title") or f"HTTP {status}")
    kind = BY_CODE.get(code) or BY_STATUS.get(status, ProblemError)
    if kind is TooManyRequests:
        return TooManyRequests(code, status, detail, problem or None, _seconds(retry_after))
    return kind(code, status, detail, problem or None)


def _seconds(header: str | None) -> float | None:
    try:
        return float(header) if header is not None else None
    except ValueError:
        return None
