"""Seat tokens: 256-bit random bearer secrets, stored only as SHA-256 hashes."""

import hashlib
import secrets


def new_token() -> str:
    return "gt_" + secrets.token_urlsafe(32)


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
