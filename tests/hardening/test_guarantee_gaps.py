"""The per-address rate limit refuses at exactly request N+1 of a window."""

import itertools
import time
import types

import pytest

import service.limits
from tests.hardening.test_limits import app_client

LIMIT = 5
_windows = itertools.count()


@pytest.fixture
def one_window(monkeypatch):
    """The limiter's clock held inside one second: a real window could close mid-burst and reset the count,
    which would hide an off-by-one behind a flaky pass. The second is an hour ahead, a window nobody else uses,
    and never the same for two tests (each starts its own count)."""
    second = int(time.time()) + 3600 + next(_windows)
    monkeypatch.setattr(service.limits, "time", types.SimpleNamespace(time=lambda: second + 0.5))


@pytest.mark.parametrize("with_token", [False, True])
def test_the_first_429_from_an_address_is_request_n_plus_one(settings, games, one_window, with_token):
    """Per-address limit N: requests 1..N of a window pass and N+1 is the first refused -- also when the
    requests carry a seat token, which counts against its address as well as itself."""
    with app_client(settings, games) as setup:
        match_id = setup.post("/v1/matches", json={"game": "high-card"}).json()["id"]
        token = setup.post(f"/v1/matches/{match_id}/seats", json={"name": "Ann"}).json()["token"]
    headers = {"Authorization": f"Bearer {token}"} if with_token else {}
    with app_client(settings, games, rate_limit_per_address=LIMIT, rate_limit_per_token=100) as client:
        responses = [client.get(f"/v1/matches/{match_id}", headers=headers) for _ in range(LIMIT + 2)]
    assert [r.status_code for r in responses] == [200] * LIMIT + [429, 429]
    refused = responses[LIMIT]
    assert refused.json()["code"] == "rate_limited" and "address" in refused.json()["detail"]
    assert refused.headers["retry-after"] == "1"
