"""Typed rule errors.

Every refusal a game engine makes is a :class:`RuleError` with a stable,
machine-readable ``code`` and a ``message`` a player understands. The APIs map
codes to GraphQL union members and to RFC 9457 problem types; nothing else may
be raised for a bad action. Messages must never name another seat's hidden
cards: they are shown to the caller verbatim.
"""


class RuleError(Exception):
    """An action or option refused by a game's rules. Changes nothing."""

    code = "rule_error"

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class NotYourTurn(RuleError):
    """The seat is not among those the game waits on."""

    code = "not_your_turn"


class IllegalAction(RuleError):
    """A well-formed action that the rules do not allow now."""

    code = "illegal_action"


class MalformedAction(RuleError):
    """An action that is not a JSON object of one of the game's action types."""

    code = "malformed_action"


class MatchFinished(RuleError):
    """The match is over; no more actions are taken."""

    code = "match_finished"


class InvalidOptions(RuleError):
    """Match options or variant that the game does not offer."""

    code = "invalid_options"
