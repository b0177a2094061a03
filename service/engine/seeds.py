"""Provable randomness: the seed commitment, seat entropy, the RNG seed's derivation, state hashes.

docs/fairness.md specifies all of this for people who write their own verifier; this module is
the reference. In short, for a match whose ``seed_source`` is ``commitment``:

* at creation the service draws a **server seed** (32 bytes from :mod:`secrets`, written as 64
  lowercase hex characters) and publishes its **commitment**: the SHA-256 of that text;
* each seat brings an **entropy** string when it joins (or the service generates one for it);
* when the last seat joins, the **RNG seed** is derived: HMAC-SHA256 keyed with the server seed
  over the seat entropies in seat order (:func:`entropy_message`), its first 8 bytes read
  big-endian with the top bit cleared -- and only then is the match set up (dealt): no random
  draw happens before every entropy is fixed;
* after every accepted action the store writes a **state hash** chained to the previous one
  (:func:`state_hash`), keyed with the server seed so that nobody can test guesses of hidden
  cards against the hashes before the seed is revealed at the end.

A creator-fixed seed (``seed_source`` ``creator``) commits to its decimal text instead and is
used as the RNG seed as it is. Everything here is pure and cheap: :func:`state_hash` is one
HMAC over the JSON the store writes anyway.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import unicodedata
from typing import Any

#: Where a match's RNG seed came from. ``commitment``: the server seed committed at creation and the
#: seat entropies (provable); ``creator``: the creator fixed it (tests, tournaments: never rated);
#: ``server``: drawn by the service before commitments existed (older matches: not provable).
SEED_SOURCES = ("commitment", "creator", "server")
#: The seed a ``commitment`` match is laid out with while seats are still open: public and
#: meaningless. Views show that layout to spectators only; the real deal comes with the last seat.
PLACEHOLDER_SEED = 0
#: Seeds are below 2**63 (GraphQL and REST carry them as decimal strings of up to 19 digits).
SEED_MASK = (1 << 63) - 1
#: A seat's entropy: 1 to this many characters, none of them a control character.
ENTROPY_MAX_LENGTH = 128
#: The format of a match record (service/store/records.py); a verifier refuses one it does not know.
RECORD_FORMAT = "grimoire-match-record/1"


class EntropyError(ValueError):
    """An entropy string the service does not accept (see :func:`check_entropy`)."""


def dumps(data: Any) -> str:
    """The canonical JSON of a state: what the store writes and what a state hash covers.

    Keys sorted, no whitespace, non-ASCII escaped (``\\uXXXX``): Python's ``json.dumps`` with
    ``separators=(",", ":")`` and ``sort_keys=True``."""
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


def new_server_seed() -> str:
    """A fresh server seed: 32 random bytes as 64 lowercase hex characters."""
    return secrets.token_hex(32)


def commitment(seed_text: str) -> str:
    """The commitment to a seed: the SHA-256 of its UTF-8 text, 64 lowercase hex characters."""
    return hashlib.sha256(seed_text.encode("utf-8")).hexdigest()


def creator_seed_text(seed: int) -> str:
    """The text a creator-fixed seed is committed as: its decimal digits."""
    return str(seed)


def new_entropy() -> str:
    """The entropy the service generates for a seat that brings none: 16 random bytes in hex."""
    return secrets.token_hex(16)


def check_entropy(value: Any) -> str:
    """``value`` if it is an acceptable entropy string, else :class:`EntropyError` saying why."""
    if not isinstance(value, str):
        raise EntropyError("entropy must be a string.")
    if not 1 <= len(value) <= ENTROPY_MAX_LENGTH:
        raise EntropyError(f"entropy must be 1 to {ENTROPY_MAX_LENGTH} characters.")
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in value):
        raise EntropyError("entropy must not contain control characters.")
    return value


def entropy_message(entropies: list[str]) -> bytes:
    """The message the RNG seed's HMAC covers: for each seat in seat order, the length of its entropy's
    UTF-8 bytes as 4 bytes big-endian, then those bytes (lengths keep ``["ab", "c"]`` apart from
    ``["a", "bc"]``)."""
    parts = []
    for entropy in entropies:
        raw = entropy.encode("utf-8")
        parts.append(len(raw).to_bytes(4, "big") + raw)
    return b"".join(parts)


def derive_rng_seed(server_seed: str, entropies: list[str]) -> int:
    """The RNG seed of a ``commitment`` match: HMAC-SHA256 keyed with the server seed's UTF-8 text over
    :func:`entropy_message`, the first 8 bytes of the digest big-endian, top bit cleared."""
    digest = hmac.digest(server_seed.encode("utf-8"), entropy_message(entropies), "sha256")
    return int.from_bytes(digest[:8], "big") & SEED_MASK


def state_hash(seed_text: str, previous: str, state_json: bytes) -> str:
    """The hash of one state in a match's chain: HMAC-SHA256 keyed with the seed text over the previous
    hash (64 ASCII hex characters; for the set-up, the seed commitment) followed by the state's canonical
    JSON (:func:`dumps`, UTF-8). 64 lowercase hex characters."""
    return hmac.digest(seed_text.encode("utf-8"), previous.encode("ascii") + state_json, "sha256").hex()
