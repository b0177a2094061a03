"""Seat tokens: 256-bit random bearer secrets, stored only as SHA-256 hashes.

A token reads ``gt.<match id>.<secret>``: the match id is not secret and lets
a client holding many tokens (a "my matches" stream) be routed without a
lookup; only the 256-bit secret part proves the seat.
"""

import hashlib
import secrets


def new_id() -> str:
    """A random id of 12 URL-safe characters (72 bits): a match's, a player's, a trade's, a set opening's.
    Never one starting with ``-``, which a command line (``grimoire grant-refill <player>``) reads as an option."""
    while (made := secrets.token_urlsafe(9)).startswith("-"):
        pass
    return made


def new_token(match_id: str) -> str:
    return f"gt.{match_id}.{secrets.token_urlsafe(32)}"


def token_match(token: str) -> str | None:
    """The match id a token claims to be for, or None if it is not shaped like one."""
    parts = token.split(".")
    return parts[1] if len(parts) == 3 and parts[0] == "gt" and parts[1] else None


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return ""  # present but unusable: authenticate() refuses it as invalid
    return token.strip()
