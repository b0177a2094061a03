"""Playing matches to the end for the fair-play tests, and reading what the store keeps secret."""

from __future__ import annotations

from service.engine import Rng
from service.store import Match, MatchStore

#: One variant of every game, short enough to play out in a test; McGonagall's board plays the colour
#: nobody holds (BOARD_SEAT actions in the record), the chain visits every board (spinners, dice, draws).
CASES = [("casting-stones", "basic"), ("casting-stones", "advanced"), ("quidditch", "standard"),
         ("spells-and-potions", "practice-1"), ("spells-and-potions", "ritual"),
         ("sorcerers-stone", "mcgonagall"), ("sorcerers-stone", "chain")]
CASE_IDS = [f"{game}/{variant}" for game, variant in CASES]


async def play_out(store: MatchStore, match_id: str, *, chooser: int = 7, until: int | None = None) -> Match:
    """Play random legal actions for whoever is to act (the board too) until the end, or version ``until``."""
    rng = Rng(chooser)
    match = await store.get(match_id)
    while match.status == "active" and (until is None or match.version < until):
        seat = rng.choice(sorted(match.to_act))
        action = rng.choice(match.game.legal_actions(match.state, seat))
        match = (await store.submit(match_id, None, match.version, action, acting_seat=seat)).match
    return match


async def seated(store: MatchStore, game_id: str, variant: str | None = None, *, seed: int | None = None,
                 entropies: list[str | None] | None = None, seats: int | None = None) -> tuple[Match, list[str]]:
    """A match with every seat joined (``entropies``: what each seat brings; None: generated), and the
    seats' tokens."""
    match = await store.create(game_id, variant=variant, seed=seed, seats=seats)
    tokens = []
    for i in range(len(match.seats)):
        _, _, token = await store.join(match.id, f"P{i}", entropy=(entropies or [None] * len(match.seats))[i])
        tokens.append(token)
    return await store.get(match.id), tokens


async def active_at(store: MatchStore, game_id: str, version: int, **seating) -> tuple[Match, list[str]]:
    """A match (seated as :func:`seated` seats it) played at random to ``version`` and still active: a server
    seed is drawn anew for each match, and a deal may end one sooner, so another is dealt until one lasts."""
    for _ in range(20):
        match, tokens = await seated(store, game_id, **seating)
        match = await play_out(store, match.id, until=version)
        if match.status == "active":
            return match, tokens
    raise AssertionError(f"no {game_id} match of 20 lasted {version} actions")


async def secrets_of(store: MatchStore, match_id: str) -> tuple[str, str]:
    """The server seed and the RNG seed, as only the store knows them before the end."""
    secret, seed = await store.redis.hmget(store.key(match_id), "secret_seed", "seed")
    return secret, seed
