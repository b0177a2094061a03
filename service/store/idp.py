"""Tokens from an external identity provider: JWTs verified with PyJWT.

An operator who already signs players in elsewhere (Auth0, Keycloak, Cognito, their own
site) sets ``GRIMOIRE_JWT_ISSUER``, ``GRIMOIRE_JWT_AUDIENCE`` and either
``GRIMOIRE_JWT_JWKS_URL`` (the provider's key set, fetched and cached) or
``GRIMOIRE_JWT_PUBLIC_KEY`` (one PEM public key or JWK, for tests and small setups).
A JWT is then accepted wherever a player token is (service/store/players.py); its
``sub`` maps to a player, created on first use.

Every check is enforced, none is optional: the signature, with an algorithm from
``GRIMOIRE_JWT_ALGORITHMS`` only (asymmetric ones: ``none`` and HMAC are never
accepted, so a public key can never be used as a shared secret); ``iss`` and ``aud``
equal to the configured ones; ``exp`` present and not past (``nbf`` and ``iat``
when present), with :data:`LEEWAY` seconds for clock skew; ``sub`` present.

Why PyJWT (docs/security.md, "Player tokens and JWTs"): the most used JOSE library
in Python, maintained, small, with explicit algorithm allow-lists and required
claims, and ``cryptography`` (already a dependency of our dependencies' world) for
RSA, EC and EdDSA. We need verification of signed tokens only: joserfc's JWE and
authlib's OAuth client would be code we carry without using.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass

import jwt

from .errors import InvalidToken

log = logging.getLogger("grimoire.players")

#: Seconds of clock skew allowed on ``exp``, ``nbf`` and ``iat``.
LEEWAY = 30
#: Seconds a fetched key set is trusted before it is fetched again, and the least time between two fetches
#: (an unknown ``kid`` triggers one: the provider rotated its keys), so bad tokens cannot hammer the provider.
JWKS_TTL = 300
JWKS_MIN_INTERVAL = 10
ASYMMETRIC = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


def looks_like_jwt(token: str) -> bool:
    """A compact JWS: three base64url parts, the header a JSON object (``eyJ`` is ``{"``)."""
    return token.count(".") == 2 and token.startswith("eyJ")


@dataclass(frozen=True)
class JwtSettings:
    issuer: str
    audience: str
    jwks_url: str = ""
    public_key: str = ""
    algorithms: tuple[str, ...] = ("RS256", "ES256", "EdDSA")


class JwtVerifier:
    """Verifies JWTs against one issuer; raises InvalidToken with the reason."""

    def __init__(self, settings: JwtSettings):
        refused = [a for a in settings.algorithms if a not in ASYMMETRIC]
        if refused:
            raise ValueError(f"GRIMOIRE_JWT_ALGORITHMS allows asymmetric algorithms only, not {refused}")
        if not (settings.jwks_url or settings.public_key):
            raise ValueError("set GRIMOIRE_JWT_JWKS_URL or GRIMOIRE_JWT_PUBLIC_KEY with GRIMOIRE_JWT_ISSUER")
        self.settings = settings
        self._static = self._load_static(settings.public_key) if settings.public_key else None
        self._keys: dict[str | None, jwt.PyJWK] = {}
        self._fetched = float("-inf")
        self._lock = asyncio.Lock()

    @staticmethod
    def _load_static(text: str):
        text = text.strip()
        if text.startswith("{"):
            return jwt.PyJWK.from_dict(json.loads(text))
        return text  # PEM: PyJWT loads it for the token's algorithm

    async def verify(self, token: str) -> dict:
        """The claims of a valid token; raises InvalidToken saying what is wrong."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidToken("The bearer token is not a well-formed JWT.") from None
        if header.get("alg") not in self.settings.algorithms:
            raise InvalidToken(f"JWTs signed with {header.get('alg')!r} are not accepted "
                               f"(allowed: {', '.join(self.settings.algorithms)}).")
        key = self._static if self._static is not None else await self._key(header.get("kid"))
        try:
            return jwt.decode(token, key, algorithms=list(self.settings.algorithms), audience=self.settings.audience,
                              issuer=self.settings.issuer, leeway=LEEWAY,
                              options={"require": ["exp", "iss", "aud", "sub"]})
        except jwt.ExpiredSignatureError:
            raise InvalidToken("The JWT has expired.") from None
        except jwt.InvalidAudienceError:
            raise InvalidToken("The JWT is not for this service (aud).") from None
        except jwt.InvalidIssuerError:
            raise InvalidToken("The JWT is from another issuer (iss).") from None
        except jwt.InvalidSignatureError:
            raise InvalidToken("The JWT's signature does not verify.") from None
        except jwt.MissingRequiredClaimError as error:
            raise InvalidToken(f"The JWT has no {error.claim!r} claim.") from None
        except jwt.PyJWTError:
            raise InvalidToken("The JWT is not valid.") from None

    async def _key(self, kid: str | None):
        key = self._keys.get(kid)
        if key is None or time.monotonic() - self._fetched > JWKS_TTL:
            async with self._lock:
                if time.monotonic() - self._fetched >= JWKS_MIN_INTERVAL and (
                        kid not in self._keys or time.monotonic() - self._fetched > JWKS_TTL):
                    await self._fetch()
            key = self._keys.get(kid)
            if key is None and kid is None and len(self._keys) == 1:
                key = next(iter(self._keys.values()))
        if key is None:
            raise InvalidToken("The JWT's signing key (kid) is not one of the identity provider's keys.")
        return key

    async def _fetch(self) -> None:
        import httpx  # here: only a service with an identity provider fetches keys (a 0.15 s import)

        self._fetched = time.monotonic()
        try:
            async with httpx.AsyncClient(timeout=5) as client:
                response = await client.get(self.settings.jwks_url)
                response.raise_for_status()
                keys = jwt.PyJWKSet.from_dict(response.json()).keys
        except (httpx.HTTPError, ValueError, jwt.PyJWTError) as error:
            log.warning("could not fetch the identity provider's keys: %s", type(error).__name__)
            return  # keep the keys we had
        self._keys = {k.key_id: k for k in keys if k.public_key_use in (None, "sig")}


def verifier_from(settings) -> JwtVerifier | None:
    """The verifier ``settings`` (service.settings.Settings) configure, or None when no issuer is set."""
    if not settings.jwt_issuer:
        return None
    if not settings.jwt_audience:
        raise ValueError("GRIMOIRE_JWT_ISSUER needs GRIMOIRE_JWT_AUDIENCE: tokens for any audience are refused")
    return JwtVerifier(JwtSettings(settings.jwt_issuer, settings.jwt_audience, settings.jwt_jwks_url,
                                   settings.jwt_public_key, tuple(settings.jwt_algorithms)))
