"""Match records: one JSON document from which anyone can check a match offline (docs/fairness.md).

After the end a record holds everything: the game, variant, options and rules version, the seed
commitment and the revealed seed, the seat entropies and the RNG seed derived from them, every
action with its seat and version, the chained hash of the state after each action, and the result.
``grimoire verify RECORD.json`` (service/fairness/verify.py) checks it without Redis.

During the match a record is the match up to now with the hidden parts withheld: the seeds, and
the actions of other seats (a seat sees its own, as in its history; a spectator none). The state
hashes of a ``commitment`` match are shown as the match goes, so a player can keep them and hold the
final record to them: they are keyed with the secret server seed, so nobody can test guesses of hidden
cards against them before it is revealed. A ``creator`` match's creator knows its seed, so there they
are withheld until the end. Matches from before the chain have none (``server``).

The store keeps only the chain's head (``state_hash``, written with each action by commit.lua: a hash
per log entry would add a fifth to a match's memory). The record recomputes every link by re-applying
the log from the seed with the match's rules, and refuses to answer unless the last link is the head
the store wrote as the match was played.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from service.engine import seeds
from service.engine.seeds import RECORD_FORMAT as FORMAT

if TYPE_CHECKING:
    from .matches import Match, MatchStore

DISCLOSURES = ("everything", "seat", "public")


async def match_record(store: "MatchStore", match_id: str, token: str | None) -> dict[str, Any]:
    """The record of a match as the holder of ``token`` (None: a spectator) may see it now."""
    match, seat = await store.read_as(match_id, token)
    entropies = await store.redis.hget(store.key(match_id), "entropies")
    entries = await store.log_entries(match_id, after=0, limit=max(match.version, 1))
    # re-applying a long match takes a moment of CPU: not on the event loop
    return await asyncio.to_thread(build_record, match, seat, entries, json.loads(entropies) if entropies else None)


class ChainMismatch(RuntimeError):
    """Re-applying a match's log does not reach the state hash the store wrote: a bug (the rules of its
    version changed, or were not deterministic), never shown as a record."""


def chain(match: "Match", logged: list[tuple[int, dict[str, Any]]]) -> list[str]:
    """The match's state hashes, the set-up's first, by re-applying ``logged`` ((seat, action) pairs)
    from its seed; checked against the head the store wrote. Empty for a match without a chain."""
    if not match.secret_seed or not match.state_hash or not match.dealt:
        return []
    game, secret = match.game, match.secret_seed
    state = game.setup(match.options, len(match.seats), match.seed)
    hashes = [seeds.state_hash(secret, match.seed_commitment, seeds.dumps(state).encode())]
    for seat, action in logged:
        state, _ = game.apply(state, seat, action)
        hashes.append(seeds.state_hash(secret, hashes[-1], seeds.dumps(state).encode()))
    if hashes[-1] != match.state_hash:
        raise ChainMismatch(f"match {match.id}: its log re-applied with {game.id} rules version "
                            f"{match.rules_version} does not reach the stored state hash at version {match.version}")
    return hashes


def build_record(match: "Match", seat: int | None, entries: list[tuple[str, dict[str, str]]],
                 entropies: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The record of ``match`` for ``seat`` (None: a spectator) from its raw log ``entries`` (pure)."""
    finished = match.status == "finished"
    logged = []
    for entry_id, fields in entries:
        version = int(entry_id.split("-")[0])
        if version > match.version:  # logged after the match was read: the next read has it
            break
        logged.append((version, int(fields["seat"]), json.loads(fields["action"])))
    shown = finished or match.seed_source == "commitment"  # a creator could recompute them: not before the end
    hashes = chain(match, [(acted, action) for _, acted, action in logged]) if shown else []
    shown = bool(hashes)
    actions = [{"version": version, "seat": acted, "action": action if finished or acted == seat else None,
                "state_hash": hashes[version] if shown else None} for version, acted, action in logged]
    return {
        "format": FORMAT,
        "match_id": match.id,
        "game": match.game.id,
        "variant": match.variant,
        "options": match.options,
        "seats": len(match.seats),
        "rules_version": match.rules_version,
        "seed_source": match.seed_source,
        "seed_commitment": match.seed_commitment,
        "revealed_seed": match.revealed_seed,
        "rng_seed": str(match.seed) if finished else None,
        "entropies": entropies,
        "initial_state_hash": hashes[0] if shown else None,
        "actions": actions,
        "status": match.status,
        "version": match.version,
        "result": match.result,
        "disclosure": "everything" if finished else "public" if seat is None else "seat",
        "seat": seat,
    }
