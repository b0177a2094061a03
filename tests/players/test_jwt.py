"""An external identity provider's JWTs as player credentials (issue 20): keys this test makes, a JWKS this
test serves over HTTP, and every way a token must be refused."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from starlette.testclient import TestClient

from service.app import create_app
from service.store.players import idp_player_id

from .conftest import bearer

ISSUER = "https://id.example.test/"
AUDIENCE = "grimoire-tests"


class _Jwks(BaseHTTPRequestHandler):
    body = b"{}"
    fetches = 0

    def do_GET(self):  # noqa: N802 (http.server's name)
        type(self).fetches += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def keys():
    return {"rsa": rsa.generate_private_key(public_exponent=65537, key_size=2048),
            "other": rsa.generate_private_key(public_exponent=65537, key_size=2048),
            "ec": ec.generate_private_key(ec.SECP256R1())}


@pytest.fixture(scope="module")
def jwks_url(keys):
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(keys["rsa"].public_key()))
    _Jwks.body = json.dumps({"keys": [{**public, "kid": "k1", "use": "sig", "alg": "RS256"}]}).encode()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Jwks)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/.well-known/jwks.json"
    server.shutdown()


@pytest.fixture(scope="module")
def idp_client(settings, games, jwks_url):
    with TestClient(create_app(dataclasses.replace(settings, jwt_issuer=ISSUER, jwt_audience=AUDIENCE,
                                                   jwt_jwks_url=jwks_url), games=games)) as client:
        yield client


def token(key, *, kid="k1", alg="RS256", **claims) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": f"user-{uuid.uuid4().hex}", "iat": now, "exp": now + 300,
            **claims}
    body = {k: v for k, v in body.items() if v is not None}
    return jwt.encode(body, key, algorithm=alg, headers={"kid": kid})


def test_a_valid_jwt_is_a_player_created_on_first_use_and_seen_again_as_the_same(idp_client, keys):
    subject = f"user-{uuid.uuid4().hex}"
    first = idp_client.get("/v1/players/me", headers=bearer(token(keys["rsa"], sub=subject,
                                                                    preferred_username=f"Hermione{subject[-8:]}")))
    assert first.status_code == 200, first.text
    assert first.json()["id"] == idp_player_id(ISSUER, subject) and first.json()["name"] == f"Hermione{subject[-8:]}"
    again = idp_client.get("/v1/players/me", headers=bearer(token(keys["rsa"], sub=subject)))
    assert again.json()["id"] == first.json()["id"]
    # it acts like a player token: joins a seat bound to the player and acts for it
    match_id = idp_client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
    joined = idp_client.post(f"/v1/matches/{match_id}/seats", json={}, headers=bearer(token(keys["rsa"], sub=subject)))
    assert joined.status_code == 201, joined.text
    seen = idp_client.get(f"/v1/matches/{match_id}", headers=bearer(token(keys["rsa"], sub=subject)))
    assert seen.json()["my_seat"] == joined.json()["seat"]
    mine = idp_client.get("/v1/me/matches", headers=bearer(token(keys["rsa"], sub=subject))).json()["matches"]
    assert [m["match_id"] for m in mine] == [match_id]


@pytest.mark.parametrize("case", ["bad_signature", "unknown_kid", "wrong_issuer", "wrong_audience", "expired",
                                  "no_expiry", "no_subject", "alg_none", "hmac_with_the_public_key",
                                  "not_yet_valid", "garbage"])
def test_a_bad_jwt_is_refused_401_invalid_token(idp_client, keys, case):
    rsa_key = keys["rsa"]
    public_pem = rsa_key.public_key().public_bytes(serialization.Encoding.PEM,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo)
    now = int(time.time())
    made = {
        "bad_signature": lambda: token(keys["other"]),
        "unknown_kid": lambda: token(rsa_key, kid="k-unknown"),
        "wrong_issuer": lambda: token(rsa_key, iss="https://evil.example.test/"),
        "wrong_audience": lambda: token(rsa_key, aud="another-service"),
        "expired": lambda: token(rsa_key, exp=now - 120, iat=now - 600),
        "no_expiry": lambda: token(rsa_key, exp=None),
        "no_subject": lambda: token(rsa_key, sub=None),
        # alg none: a header {"alg": "none"} and no signature at all
        "alg_none": lambda: jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "mallory", "exp": now + 300}, None,
                                       algorithm="none"),
        # the classic confusion: the public key (which anyone has) used as an HMAC secret
        "hmac_with_the_public_key": lambda: _hs256(public_pem, now),
        "not_yet_valid": lambda: token(rsa_key, nbf=now + 600),
        "garbage": lambda: "eyJhbGciOiJSUzI1NiJ9.not-base64!.sig",
    }[case]()
    refused = idp_client.get("/v1/players/me", headers=bearer(made))
    assert refused.status_code == 401 and refused.json()["code"] == "invalid_token", (case, refused.text)
    assert refused.headers.get("www-authenticate") == "Bearer"


def _hs256(secret: bytes, now: int) -> str:
    header = {"alg": "HS256", "typ": "JWT", "kid": "k1"}
    signing = jwt.api_jws.PyJWS()
    signing._algorithms["HS256"].prepare_key = lambda key: key  # PyJWT itself refuses a PEM as an HMAC key
    return signing.encode(json.dumps({"iss": ISSUER, "aud": AUDIENCE, "sub": "mallory", "exp": now + 300}).encode(),
                          secret, algorithm="HS256", headers=header)


def test_without_an_issuer_configured_a_jwt_is_no_credential(client, keys):
    refused = client.get("/v1/players/me", headers=bearer(token(keys["rsa"])))
    assert refused.status_code == 401 and refused.json()["code"] == "player_required"


def test_a_static_public_key_works_too_and_other_algorithms_are_refused(settings, games, keys):
    pem = keys["ec"].public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    configured = dataclasses.replace(settings, jwt_issuer=ISSUER, jwt_audience=AUDIENCE, jwt_public_key=pem,
                                     jwt_algorithms=("ES256",))
    with TestClient(create_app(configured, games=games)) as client:
        good = client.get("/v1/players/me", headers=bearer(token(keys["ec"], alg="ES256")))
        assert good.status_code == 200, good.text
        rs256 = client.get("/v1/players/me", headers=bearer(token(keys["rsa"])))
        assert rs256.status_code == 401 and "not accepted" in rs256.json()["detail"]
    with pytest.raises(ValueError):
        create_app(dataclasses.replace(configured, jwt_algorithms=("HS256",)))
