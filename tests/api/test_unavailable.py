"""With Redis unreachable the service says so: 503 with Retry-After, never a 500 or a hang."""

import socket

from starlette.testclient import TestClient

from service.app import create_app
from service.settings import Settings


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_readiness_and_requests_fail_with_503_when_redis_is_down(games):
    settings = Settings(redis_url=f"redis://127.0.0.1:{_closed_port()}/0", key_prefix="unreachable")
    with TestClient(create_app(settings, games=games)) as client:
        assert client.get("/healthz").status_code == 200
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.headers["retry-after"] == "1"
        created = client.post("/v1/matches", json={"game": "high-card"})
        assert created.status_code == 503 and created.headers["retry-after"] == "1"
        assert created.json()["code"] == "service_unavailable"
        assert client.get("/v1/matches/abc").status_code == 503
