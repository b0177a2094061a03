"""Front ends on other origins (issue 19): an origin listed in GRIMOIRE_CORS_ORIGINS may query, mutate and
subscribe (the websocket handshake follows the CORS list); an origin not listed may do none of it.

First with real websockets against a real server (every websocket route of the app, not only /graphql),
then in Chromium: a page served from another origin by a tiny static server (tests/browser/cors_page/)."""

from __future__ import annotations

import functools
import http.server
import threading
import time
from pathlib import Path

import httpx
import pytest
import websockets
from starlette.routing import WebSocketRoute
from websockets.sync.client import connect

from service.app import create_app
from service.settings import Settings
from service.store.embedded import free_port

PAGE = Path(__file__).resolve().parent / "cors_page"
LISTED = "http://allowed.test"


def websocket_paths() -> list[str]:
    """Every websocket route the app mounts (a new one is covered by these tests as soon as it exists)."""
    app = create_app(Settings(redis_url="redis://unused"))
    return [route.path for route in app.routes if isinstance(route, WebSocketRoute)]


def handshake(url: str, origin: str | None) -> int:
    """Open a graphql-transport-ws websocket with ``origin``; 101 once the server acknowledges, else its status."""
    headers = {"Origin": origin} if origin else {}
    try:
        with connect(url, subprotocols=["graphql-transport-ws"], additional_headers=headers, open_timeout=10) as ws:
            ws.send('{"type": "connection_init", "payload": {}}')
            assert '"connection_ack"' in ws.recv(timeout=10)
            return 101
    except websockets.exceptions.InvalidStatus as refused:
        return refused.response.status_code


@pytest.mark.parametrize("path", websocket_paths())
def test_websocket_handshakes_follow_the_cors_origins(start_server, path):
    base = start_server(cors_origins=(LISTED, "http://also-allowed.test:8080"))
    url = base.replace("http", "ws", 1) + path
    assert handshake(url, LISTED) == 101
    assert handshake(url, "http://also-allowed.test:8080") == 101
    assert handshake(url, None) == 101  # not a browser: no ambient credentials to abuse
    assert handshake(url, base) == 101  # same origin
    for origin in ("http://evil.test", "https://allowed.test", "http://allowed.test:8080", "null"):
        assert handshake(url, origin) == 403, origin


@pytest.mark.parametrize("path", websocket_paths())
def test_without_cors_origins_only_same_origin_pages_open_websockets(start_server, path):
    base = start_server(cors_origins=())
    url = base.replace("http", "ws", 1) + path
    assert handshake(url, base) == 101
    assert handshake(url, LISTED) == 403


# In a browser ---------------------------------------------------------------------------------------


class StaticSite:
    """``directory`` served over HTTP on a port of its own (a front end's origin), in a thread."""

    def __init__(self, directory: Path):
        handler = functools.partial(_QuietHandler, directory=str(directory))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
        self.origin = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


@pytest.fixture
def front_ends():
    """Two origins serving the same front end: the first will be listed in GRIMOIRE_CORS_ORIGINS."""
    sites = [StaticSite(PAGE), StaticSite(PAGE)]
    yield sites
    for site in sites:
        site.stop()


def probe(offline_context, site: StaticSite, api: str, match_id: str, screenshot, name: str) -> dict:
    """Open the probe page of ``site`` against ``api``; returns what it could do (window.probe)."""
    context = offline_context(site.origin)
    page = context.new_page()
    page.goto(f"{site.origin}/index.html?api={api}&match={match_id}")
    page.wait_for_function("window.probeDone === true", timeout=60_000)
    screenshot(page, name)
    assert context.blocked == []
    return page.evaluate("window.probe")


def test_a_listed_origin_can_query_mutate_and_subscribe_and_another_cannot(offline_context, start_server,
                                                                         front_ends, screenshot):
    listed, unlisted = front_ends
    api = start_server(cors_origins=(listed.origin,), worker=True)  # the worker plays the bots' match
    # a match for the unlisted page to try to follow (its own createMatch is refused)
    bots = [{"seat": 0, "level": "random"}, {"seat": 1, "level": "random"}]
    created = httpx.post(f"{api}/v1/matches", json={"game": "casting-stones", "variant": "basic", "seed": "7",
                                                    "bots": bots})
    assert created.status_code == 201, created.text
    match_id = created.json()["id"]

    allowed = probe(offline_context, listed, api, match_id, screenshot, "cors-listed-origin")
    assert allowed["query"].startswith("ok: ") and "casting-stones" in allowed["query"]
    assert allowed["mutation"].startswith("ok: ")
    assert allowed["subscription"].startswith("ok: MatchEvent"), allowed

    refused = probe(offline_context, unlisted, api, match_id, screenshot, "cors-unlisted-origin")
    assert refused["query"].startswith("refused: "), refused
    assert refused["mutation"].startswith("refused: "), refused
    assert refused["subscription"].startswith("refused: Error: websocket closed"), refused
