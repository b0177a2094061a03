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
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from service.engine.seeds import RECORD_FORMAT as FORMAT

if TYPE_CHECKING:
    from .matches import Match, MatchStore

DISCLOSURES = ("everything", "seat", "public")


async def match_record(store: "MatchStore", match_id: str, token: str | None) -> dict[str, Any]:
    """The record of a match as the holder of ``token`` (None: a spectator) may see it now."""
    match, seat = await store.read_as(match_id, token)
    first_hash, entropies = await store.redis.hmget(store.key(match_id), "hash0", "entropies")
    entries = await store.log_entries(match_id, after=0, limit=max(match.version, 1))
    return build_record(match, seat, entries, first_hash, json.loads(entropies) if entropies else None)


def build_record(match: "Match", seat: int | None, entries: list[tuple[str, dict[str, str]]],
                 first_hash: str | None, entropies: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The record of ``match`` for ``seat`` (None: a spectator) from its raw log ``entries`` (pure)."""
    finished = match.status == "finished"
    hashes = finished or match.seed_source == "commitment"
    actions = []
    for entry_id, fields in entries:
        version = int(entry_id.split("-")[0])
        if version > match.version:  # logged after the match was read: the next read has it
            break
        acted = int(fields["seat"])
        actions.append({
            "version": version, "seat": acted,
            "action": json.loads(fields["action"]) if finished or acted == seat else None,
            "state_hash": fields.get("hash") if hashes else None,
        })
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
        "initial_state_hash": first_hash if hashes else None,
        "actions": actions,
        "status": match.status,
        "version": match.version,
        "result": match.result,
        "disclosure": "everything" if finished else "public" if seat is None else "seat",
        "seat": seat,
    }
