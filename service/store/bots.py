"""Bot seats: a seat whose record says ``"bot": {"level": ...}``.

A bot seat is claimed like any other (``join.lua``), with a bearer token that
is generated and thrown away: nobody can act for a bot seat through the APIs.
Its moves are played by RQ jobs (``workers/jobs.py``), which submit through
:meth:`MatchStore.submit` with ``acting_seat`` -- the same compare-and-set path
as any client. The store stays game- and bot-agnostic: it only records the level.
"""

from __future__ import annotations

from .errors import NoSuchSeat, SeatTaken, UnknownBotLevel
from .matches import Match, MatchStore, canonical

#: The levels a seat can be given, weakest first (workers/bots/ has one module each).
BOT_LEVELS: tuple[str, ...] = ("random", "greedy", "strong")


def check_level(level: str) -> str:
    if level in BOT_LEVELS:
        return level
    raise UnknownBotLevel(f"There is no bot level {level!r}; choose one of {', '.join(BOT_LEVELS)}.")


async def add_bot(store: MatchStore, match_id: str, seat: int | None, level: str,
                  token: str | None = None) -> tuple[Match, int]:
    """Give a free seat (the lowest free one if ``seat`` is None) to a bot of ``level``.

    With ``token``, the caller hands its own seat to the bot instead, at any
    point of the match: the token is revoked in the same atomic step
    (:meth:`MatchStore.leave`). Raises UnknownBotLevel, MatchNotFound, SeatTaken,
    MatchFull, NoSuchSeat, InvalidToken or NotYourSeat. When the match starts (or a bot is
    to act), the store's listeners enqueue its move.
    """
    check_level(level)
    if token is not None:
        return await store.leave(match_id, token, seat, bot={"level": level})
    match, seat, _token = await store.join(match_id, f"{level} bot", seat, bot={"level": level})
    return match, seat


async def create_match(store: MatchStore, game_id: str, *, variant: str | None = None, options: dict | None = None,
                       seats: int | None = None, seed: int | None = None, turn_seconds: int | None = None,
                       bots: list[dict] | None = None, hot_seat: bool = False) -> Match:
    """Create a match with some seats given to bots at once (``bots``: ``[{"seat", "level"}]``);
    ``hot_seat``: one player may hold several of its seats.

    Everything is checked before the match is created: UnknownGame, InvalidOptions,
    UnknownBotLevel, NoSuchSeat (a seat out of range) or SeatTaken (a seat listed twice).
    """
    bots = bots or []
    game = store.game(game_id)
    count = game.min_seats if seats is None else seats
    taken: set[int] = set()
    for bot in bots:
        check_level(bot["level"])
        seat = bot.get("seat")
        if seat is not None and not 0 <= seat < count:
            raise NoSuchSeat(f"This match has no seat {seat}.")
        if seat is not None:  # bots without a seat take the lowest free ones, any number of them
            if seat in taken:
                raise SeatTaken(f"Seat {seat} is given to two bots.")
            taken.add(seat)
    if len(bots) > count:
        raise NoSuchSeat(f"This match has {count} seats, not enough for {len(bots)} bots.")
    if bots:
        options_in_full = game.check_options(variant, canonical(options), count)
        for guard in store.guards:  # e.g. owned collections: a bot owns none (service/store/collections.py)
            guard.check_bots(game, options_in_full)
    match = await store.create(game_id, variant=variant, options=options, seats=seats, seed=seed,
                               turn_seconds=turn_seconds, hot_seat=hot_seat)
    for bot in sorted(bots, key=lambda b: b.get("seat") is None):  # numbered seats first
        match, _seat = await add_bot(store, match.id, bot.get("seat"), bot["level"])
    return match
