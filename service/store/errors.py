"""Expected failures of match operations that are not rule errors.

Each has a stable ``code`` shared by both APIs (GraphQL union members and
REST problem types). Messages go to the caller verbatim, so they never carry
hidden state.
"""


class StoreError(Exception):
    code = "store_error"
    #: Members a problem carries beside its code and message (REST problem+json; GraphQL fields of its type).
    details: dict = {}

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class UnknownGame(StoreError):
    code = "unknown_game"


class MatchNotFound(StoreError):
    code = "match_not_found"


class VersionConflict(StoreError):
    """The caller's expected version is not the match's current one."""

    code = "version_conflict"

    def __init__(self, message: str, current_version: int):
        super().__init__(message)
        self.current_version = current_version


class SeatTaken(StoreError):
    code = "seat_taken"


class MatchFull(StoreError):
    code = "match_full"


class NoSuchSeat(StoreError):
    code = "no_such_seat"


class TokenRequired(StoreError):
    code = "token_required"


class InvalidToken(StoreError):
    code = "invalid_token"


class NotYourSeat(StoreError):
    """A valid seat token used for another seat of the same match (leaving it, handing it to a bot).

    Not ``invalid_token``: the token is good and re-authenticating would not help.
    """

    code = "not_your_seat"


class MatchNotStarted(StoreError):
    code = "match_not_started"


class IdempotencyKeyReused(StoreError):
    """The same idempotency key came with a different request."""

    code = "idempotency_key_reused"


class TooManyStreams(StoreError):
    """A token (a seat's or a player's) already holds as many open streams as allowed."""

    code = "too_many_streams"


class UnknownBotLevel(StoreError):
    """A bot level the service does not offer (see service/store/bots.py)."""

    code = "unknown_bot_level"


class MatchNotFinished(StoreError):
    """Replays are of finished matches only."""

    code = "match_not_finished"


class ReplayNotFound(StoreError):
    code = "replay_not_found"


class AlreadySeated(StoreError):
    """A player joining a second seat of a match that is not a hot-seat match."""

    code = "already_seated"


class InvalidName(StoreError):
    """A player name outside the rules (service/players/names.py)."""

    code = "invalid_name"


class NameTaken(StoreError):
    """A name that is, or reads as, another player's."""

    code = "name_taken"


class PlayerNotFound(StoreError):
    code = "player_not_found"


class PlayerRequired(StoreError):
    """An operation for players (my matches, quick match, profile) called with no player credential."""

    code = "player_required"


class PlayerTokenNotFound(StoreError):
    """Revoking or replacing a player token the player does not have."""

    code = "player_token_not_found"


class TooManyPlayerTokens(StoreError):
    code = "too_many_player_tokens"


class AlreadyQueued(StoreError):
    """A player already waiting in a quick-match queue (or just paired)."""

    code = "already_queued"


class NotQueued(StoreError):
    code = "not_queued"


class RematchUnavailable(StoreError):
    """A rematch of a match that is not finished, or offered by someone who did not play it."""

    code = "rematch_unavailable"


class InvalidEntropy(StoreError):
    """A seat's entropy the service does not accept (service/engine/seeds.py, check_entropy)."""

    code = "invalid_entropy"


class RulesVersionUnavailable(Exception):
    """The match was created with a version of its game's rules that this process does not have.

    Not a StoreError: no API answers it as an expected outcome. It is a 503 with ``Retry-After`` on
    both APIs, so that a load balancer retries on another process during a rolling deployment; nothing
    is read through other rules and nothing is written (docs/operations.md, "Rolling out a rules change").
    """

    code = "rules_version_unavailable"
    #: Seconds a client (or load balancer) should wait before trying again.
    retry_after = 1

    def __init__(self, game_id: str, rules_version: str, installed: list[str]):
        self.game_id, self.rules_version, self.installed = game_id, rules_version, installed
        self.message = (f"This match plays {game_id} rules version {rules_version}, which this server does not "
                        f"have (it has {', '.join(installed) or 'none'}); try again: another server may.")
        super().__init__(self.message)


# -- collections and trading (service/store/collections.py, trades.py) ---------------------------------------


class NotInCollection(StoreError):
    """Items a player does not own (enough of): ``missing`` lists them as the APIs do, kind ->
    ``[{"id", "count"}]`` (the count: how many more the player would need)."""

    code = "not_in_collection"

    def __init__(self, message: str, missing: dict[str, list[dict]]):
        super().__init__(message)
        self.missing = missing
        self.details = {"missing": missing}


class CollectionRequired(StoreError):
    """A seat with no player (a bot) in a match played with owned collections."""

    code = "collection_required"


class CollectionPrivate(StoreError):
    code = "collection_private"


class UnknownSetKind(StoreError):
    code = "unknown_set"


class SetOpenedBefore(StoreError):
    """A set a player opens once (the starter), opened again."""

    code = "set_opened_before"


class NoSetLeft(StoreError):
    """No set of that kind left to open today, and none granted: ``next_at`` (ms) is when one comes back."""

    code = "no_set_left"

    def __init__(self, message: str, next_at: int):
        super().__init__(message)
        self.next_at = next_at
        self.details = {"next_at": next_at}


class InvalidHand(StoreError):
    code = "invalid_hand"


class HandNotFound(StoreError):
    code = "hand_not_found"


class TooManyHands(StoreError):
    code = "too_many_hands"


class InvalidTrade(StoreError):
    code = "invalid_trade"


class TradeNotFound(StoreError):
    code = "trade_not_found"


class NotYourTrade(StoreError):
    """A trade acted on by a player who is not the party that may (only its recipient accepts)."""

    code = "not_your_trade"


class TradeClosed(StoreError):
    """A trade no longer open: accepted, declined, cancelled, failed or expired (``status`` says which)."""

    code = "trade_closed"

    def __init__(self, message: str, status: str):
        super().__init__(message)
        self.status = status
        self.details = {"trade_status": status}


class TradeFailed(StoreError):
    """An accepted trade that could not be made (a party no longer owned its side): nothing moved."""

    code = "trade_failed"

    def __init__(self, message: str, trade: dict):
        super().__init__(message)
        self.trade = trade
        self.details = {"trade": trade}
