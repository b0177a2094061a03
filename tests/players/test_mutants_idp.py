"""An identity provider's JWTs (service/store/idp.py) and the players they make (service/store/players.py), held to
their exact behaviour: each refusal's reason as the API says it, the clock-skew leeway, a static JWK, the key set's
cache (trusted for JWKS_TTL, an unknown ``kid`` fetching again at most every JWKS_MIN_INTERVAL), kid-less tokens,
a failed fetch keeping the keys it had, and the name and record of a player made on first use. Written against the
mutation run's survivors (tests/mutation/run.py, module ``players``).

Keys are made here and served by a JWKS server of this test's own over HTTP, as in test_jwt.py. The key set's
cache is driven by a clock of the test's own (the ``time`` that service/store/idp.py reads), never by waiting."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import hashlib
import json
import logging
import re
import threading
import time
import types
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import jwt
import pytest
import redis as sync_redis
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from starlette.testclient import TestClient

from service.app import create_app
from service.store import idp
from service.store.errors import InvalidToken
from service.store.idp import JwtSettings, JwtVerifier, looks_like_jwt
from service.players.names import name_key
from service.store.players import idp_player_id

from .conftest import bearer, unique_name

ISSUER = "https://id.mutants.example.test/"
AUDIENCE = "grimoire-mutant-tests"


@pytest.fixture(scope="module")
def keys():
    return {"one": rsa.generate_private_key(public_exponent=65537, key_size=2048),
            "two": rsa.generate_private_key(public_exponent=65537, key_size=2048),
            "ec": ec.generate_private_key(ec.SECP256R1())}


def jwk(private_key, kid: str | None) -> dict:
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private_key.public_key()))
    return {**public, "use": "sig", "alg": "RS256", **({"kid": kid} if kid is not None else {})}


@contextlib.contextmanager
def jwks_server(*jwks: dict):
    """A JWKS endpoint serving ``{"keys": jwks}``; yields (url, state): ``state.keys`` (replace it to rotate),
    ``state.status`` (500: the provider fails) and ``state.fetches``."""
    state = types.SimpleNamespace(keys=list(jwks), status=200, fetches=0)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # http.server's name
            state.fetches += 1
            body = json.dumps({"keys": state.keys}).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks.json", state
    finally:
        server.shutdown()
        server.server_close()


def token(key, *, kid: str | None = "k1", alg: str = "RS256", **claims) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": f"user-{uuid.uuid4().hex}", "iat": now, "exp": now + 300,
            **claims}
    body = {k: v for k, v in body.items() if v is not None}
    return jwt.encode(body, key, algorithm=alg, headers={"kid": kid} if kid is not None else None)


class Clock:
    """The monotonic clock service/store/idp.py reads, moved by hand."""

    def __init__(self):
        self.now = 5000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    moved = Clock()
    monkeypatch.setattr(idp, "time", moved)  # idp's own reference only: asyncio keeps the real clock
    return moved


def refusal(verifier: JwtVerifier, jwt_token: str) -> str:
    """The reason ``verifier`` refuses the token with (run in the caller's event loop)."""
    async def check():
        with pytest.raises(InvalidToken) as refused:
            await verifier.verify(jwt_token)
        return refused.value.message
    return check()


# -- the key set's cache ---------------------------------------------------------------------------------------------


def test_the_key_set_is_cached_an_unknown_kid_refetches_at_most_every_ten_seconds_and_expires_after_five_minutes(
        keys, clock):
    """The first token fetches the key set; more tokens of a known key fetch nothing; a token of an unknown kid is
    refused (and fetches again only once ten seconds passed since the last fetch: bad tokens cannot hammer the
    provider), and accepted once the provider published its key; after 300 s the set is fetched again, so a key
    the provider dropped stops working."""
    unknown = "The JWT's signing key (kid) is not one of the identity provider's keys."
    with jwks_server(jwk(keys["one"], "k1")) as (url, provider):
        verifier = JwtVerifier(JwtSettings(ISSUER, AUDIENCE, jwks_url=url))

        async def scenario():
            subject = f"user-{uuid.uuid4().hex}"
            assert (await verifier.verify(token(keys["one"], sub=subject)))["sub"] == subject
            assert provider.fetches == 1
            await verifier.verify(token(keys["one"]))
            assert provider.fetches == 1  # cached
            assert await refusal(verifier, token(keys["two"], kid="k2")) == unknown
            clock.now += 5
            assert await refusal(verifier, token(keys["two"], kid="k2")) == unknown
            assert provider.fetches == 1  # fetched less than ten seconds ago: not again
            provider.keys = [jwk(keys["one"], "k1"), jwk(keys["two"], "k2")]  # the provider rotates its keys
            clock.now += 5
            await verifier.verify(token(keys["two"], kid="k2"))  # unknown, and ten seconds since the fetch: fetched
            assert provider.fetches == 2
            clock.now += 100
            await verifier.verify(token(keys["one"]))
            await verifier.verify(token(keys["two"], kid="k2"))
            assert provider.fetches == 2  # both known, the set fresh
            provider.keys = [jwk(keys["two"], "k2")]  # k1 retired
            clock.now += 150
            await verifier.verify(token(keys["one"]))  # 250 s old: still trusted
            assert provider.fetches == 2
            clock.now += 51
            assert await refusal(verifier, token(keys["one"])) == unknown  # 301 s: fetched again, k1 is gone
            assert provider.fetches == 3
            await verifier.verify(token(keys["two"], kid="k2"))

        asyncio.run(scenario())


def test_a_token_without_kid_uses_the_only_key_and_a_kid_never_picks_the_kidless_key(keys, clock):
    """A token without ``kid`` is checked with the provider's key when it has exactly one (refused when it has
    several: which one is unknowable); a key published without a kid never stands in for a token's kid."""
    unknown = "The JWT's signing key (kid) is not one of the identity provider's keys."
    with jwks_server(jwk(keys["one"], "k1")) as (url, _):
        verifier = JwtVerifier(JwtSettings(ISSUER, AUDIENCE, jwks_url=url))

        async def one_key():
            for _ in range(2):
                subject = f"user-{uuid.uuid4().hex}"
                assert (await verifier.verify(token(keys["one"], kid=None, sub=subject)))["sub"] == subject

        asyncio.run(one_key())
    with jwks_server(jwk(keys["one"], "k1"), jwk(keys["two"], "k2")) as (url, _):
        verifier = JwtVerifier(JwtSettings(ISSUER, AUDIENCE, jwks_url=url))
        assert asyncio.run(refusal(verifier, token(keys["one"], kid=None))) == unknown
    with jwks_server(jwk(keys["two"], None), jwk(keys["one"], "k1")) as (url, provider):
        verifier = JwtVerifier(JwtSettings(ISSUER, AUDIENCE, jwks_url=url))

        async def kidless_key_beside():
            for _ in range(3):  # the first fetches, the others use the cache: the key of kid k1 each time
                await verifier.verify(token(keys["one"], kid="k1"))
            await verifier.verify(token(keys["two"], kid=None))
            assert provider.fetches == 1

        asyncio.run(kidless_key_beside())


def test_a_failed_fetch_keeps_the_keys_it_had_and_says_why_in_the_log(keys, clock):
    """The provider answers 500 when the set is due again: its keys so far keep working, and the warning names the
    error's type (never a token)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("grimoire.players")
    logger.addHandler(handler)
    try:
        with jwks_server(jwk(keys["one"], "k1")) as (url, provider):
            verifier = JwtVerifier(JwtSettings(ISSUER, AUDIENCE, jwks_url=url))

            async def scenario():
                await verifier.verify(token(keys["one"]))
                provider.status = 500
                clock.now += 301
                await verifier.verify(token(keys["one"]))  # the refetch failed: the old key still verifies
                assert provider.fetches == 2

            asyncio.run(scenario())
    finally:
        logger.removeHandler(handler)
    warnings = [r for r in records if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warnings] == ["could not fetch the identity provider's keys: HTTPStatusError"]


def test_the_key_set_is_fetched_with_a_five_second_timeout(keys, clock, monkeypatch):
    """A provider that never answers must not hold a request forever: the fetch's HTTP client has a 5 s timeout
    (a spy on the client records it; the fetch itself is real)."""
    seen = []

    class Spy(httpx.AsyncClient):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen.append(self.timeout)

    monkeypatch.setattr(httpx, "AsyncClient", Spy)  # the fetch imports httpx when it runs
    with jwks_server(jwk(keys["one"], "k1")) as (url, _):
        verifier = JwtVerifier(JwtSettings(ISSUER, AUDIENCE, jwks_url=url))
        asyncio.run(verifier.verify(token(keys["one"])))
    assert seen == [httpx.Timeout(5)]


# -- configuration -------------------------------------------------------------------------------------------------


def test_a_misconfigured_verifier_says_what_to_set(keys):
    pem = keys["ec"].public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    with pytest.raises(ValueError) as symmetric:
        JwtVerifier(JwtSettings(ISSUER, AUDIENCE, public_key=pem, algorithms=("ES256", "HS256")))
    assert str(symmetric.value) == "GRIMOIRE_JWT_ALGORITHMS allows asymmetric algorithms only, not ['HS256']"
    with pytest.raises(ValueError) as keyless:
        JwtVerifier(JwtSettings(ISSUER, AUDIENCE))
    assert str(keyless.value) == "set GRIMOIRE_JWT_JWKS_URL or GRIMOIRE_JWT_PUBLIC_KEY with GRIMOIRE_JWT_ISSUER"


def test_a_static_public_key_given_as_a_jwk_verifies(settings, games, keys):
    """GRIMOIRE_JWT_PUBLIC_KEY may be a JWK (JSON) rather than a PEM."""
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(keys["ec"].public_key()))
    configured = dataclasses.replace(settings, jwt_issuer=ISSUER, jwt_audience=AUDIENCE,
                                     jwt_public_key="\n " + json.dumps(public) + "\n", jwt_algorithms=("ES256",))
    subject = f"user-{uuid.uuid4().hex}"
    with TestClient(create_app(configured, games=games)) as client:
        good = client.get("/v1/players/me", headers=bearer(token(keys["ec"], alg="ES256", sub=subject)))
        assert good.status_code == 200, good.text
        assert good.json()["id"] == idp_player_id(ISSUER, subject)


# -- the API's answers ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def idp_app(settings, games, keys):
    with jwks_server(jwk(keys["one"], "k1")) as (url, _):
        configured = dataclasses.replace(settings, jwt_issuer=ISSUER, jwt_audience=AUDIENCE, jwt_jwks_url=url)
        with TestClient(create_app(configured, games=games)) as client:
            yield client


def test_each_refused_jwt_says_why(idp_app, keys):
    """401 invalid_token, and the detail names the check that failed."""
    now = int(time.time())
    cases = {
        "eyJub3QganNvbg.e30.c2ln": "The bearer token is not a well-formed JWT.",
        token(keys["one"], kid="k-unknown"): "The JWT's signing key (kid) is not one of the identity provider's keys.",
        token(keys["one"], exp=now - 120, iat=now - 600): "The JWT has expired.",
        token(keys["one"], aud="another-service"): "The JWT is not for this service (aud).",
        token(keys["one"], iss="https://evil.example.test/"): "The JWT is from another issuer (iss).",
        token(keys["two"]): "The JWT's signature does not verify.",
        token(keys["one"], sub=None): "The JWT has no 'sub' claim.",
        token(keys["one"], exp=None): "The JWT has no 'exp' claim.",
        token(keys["one"], nbf=now + 600): "The JWT is not valid.",
    }
    for jwt_token, reason in cases.items():
        refused = idp_app.get("/v1/players/me", headers=bearer(jwt_token))
        assert refused.status_code == 401 and refused.json()["code"] == "invalid_token", reason
        assert refused.json()["detail"] == reason


def test_an_algorithm_not_allowed_is_named_with_the_allowed_ones(settings, games, keys):
    pem = keys["ec"].public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    configured = dataclasses.replace(settings, jwt_issuer=ISSUER, jwt_audience=AUDIENCE, jwt_public_key=pem,
                                     jwt_algorithms=("ES256", "EdDSA"))
    with TestClient(create_app(configured, games=games)) as client:
        refused = client.get("/v1/players/me", headers=bearer(token(keys["one"])))
        assert refused.status_code == 401 and refused.json()["code"] == "invalid_token"
        assert refused.json()["detail"] == "JWTs signed with 'RS256' are not accepted (allowed: ES256, EdDSA)."


def test_thirty_seconds_of_clock_skew_are_allowed_on_exp_and_nbf(idp_app, keys):
    now = int(time.time())
    for skewed in (token(keys["one"], exp=now - 10, iat=now - 300), token(keys["one"], nbf=now + 10)):
        assert idp_app.get("/v1/players/me", headers=bearer(skewed)).status_code == 200
    late = idp_app.get("/v1/players/me", headers=bearer(token(keys["one"], exp=now - 90, iat=now - 300)))
    assert late.status_code == 401


def test_with_an_issuer_set_a_seat_token_is_still_a_seat_token_not_a_jwt(idp_app):
    """A seat token (``gt.<match>.<secret>``: two dots too) is no JWT: it still holds its seat, and where a
    player is required it is no player credential (player_required, not invalid_token)."""
    assert looks_like_jwt("gt.abc.def") is False and looks_like_jwt("eyJhbGciOiJSUzI1NiJ9") is False
    match_id = idp_app.post("/v1/matches", json={"game": "high-card"}).json()["id"]
    seat = idp_app.post(f"/v1/matches/{match_id}/seats", json={"seat": 1, "name": "Ginny"}).json()["token"]
    assert idp_app.get(f"/v1/matches/{match_id}", headers=bearer(seat)).json()["my_seat"] == 1
    refused = idp_app.get("/v1/me/matches", headers=bearer(seat))
    assert refused.status_code == 401 and refused.json()["code"] == "player_required"


# -- the players a JWT makes ------------------------------------------------------------------------------------------


def test_a_jwt_players_id_is_x_and_twenty_lowercase_base32_characters_of_sha256_of_issuer_and_subject():
    subject = "user-1234"
    digest = hashlib.sha256(f"{ISSUER}\n{subject}".encode()).digest()
    expected = "x" + base64.b32encode(digest).decode().lower()[:20]
    assert idp_player_id(ISSUER, subject) == expected
    assert re.fullmatch(r"x[a-z2-7]{20}", expected)


def test_a_player_made_on_first_use_is_named_from_the_claims_in_order_else_after_its_id(idp_app, keys, settings):
    """The name is the first valid, free one of ``preferred_username``, ``nickname``, ``name``; with none, "Player "
    and characters 1 to 8 of the id. The record holds the name, the creation time and ``idp``: 1."""
    raw = sync_redis.Redis.from_url(settings.redis_url, decode_responses=True)
    nickname, full_name, last = unique_name("Nick"), unique_name("Full"), unique_name("Last")
    cases = [({"nickname": nickname}, nickname),
             ({"name": full_name}, full_name),
             ({"preferred_username": "<b>", "nickname": "x", "name": last}, last),  # the first two break the rules
             ({}, None)]
    for claims, name in cases:
        subject = f"user-{uuid.uuid4().hex}"
        player_id = idp_player_id(ISSUER, subject)
        me = idp_app.get("/v1/players/me", headers=bearer(token(keys["one"], sub=subject, **claims)))
        assert me.status_code == 200, me.text
        assert me.json()["name"] == (name or f"Player {player_id[1:9]}"), claims
        assert abs(me.json()["created"] - time.time() * 1000) < 600_000
        record = raw.hgetall(f"{settings.key_prefix}:p:{{{player_id}}}")
        assert record == {"id": player_id, "name": me.json()["name"], "created": str(me.json()["created"]),
                          "idp": "1"}
    raw.close()


def test_a_first_use_cut_short_is_finished_by_the_next_and_never_takes_another_players_name(idp_app, keys, settings,
                                                                                            raw):
    """A process that died between claiming the name and writing the record (the old order left a record with
    only ``id``) does not leave the player broken: the next request finishes the record with the name already
    claimed. A fallback name that reads as another player's is not taken from them: the longer one is used."""
    names = f"{settings.key_prefix}:names"
    wanted = unique_name("Cut")
    subject = f"user-{uuid.uuid4().hex}"
    player_id = idp_player_id(ISSUER, subject)
    raw.hset(f"{settings.key_prefix}:p:{{{player_id}}}", "id", player_id)  # what the crash left
    raw.hset(names, name_key(wanted), player_id)
    me = idp_app.get("/v1/players/me", headers=bearer(token(keys["one"], sub=subject, nickname=wanted)))
    assert me.status_code == 200 and me.json()["name"] == wanted, me.text
    assert raw.hget(names, name_key(wanted)) == player_id

    subject = f"user-{uuid.uuid4().hex}"
    player_id = idp_player_id(ISSUER, subject)
    raw.hset(names, name_key(f"Player {player_id[1:9]}"), "someone-else")
    me = idp_app.get("/v1/players/me", headers=bearer(token(keys["one"], sub=subject)))
    assert me.status_code == 200 and me.json()["name"] == f"Player {player_id[1:17]}", me.text
    assert raw.hget(names, name_key(f"Player {player_id[1:9]}")) == "someone-else"
    assert raw.hget(names, name_key(f"Player {player_id[1:17]}")) == player_id
