"""Browser-test fixtures: Debian's Chromium driven by Playwright (Python), a real service to point it at.

* ``chromium_browser`` (module): the system Chromium (``/usr/bin/chromium``, or ``GRIMOIRE_CHROMIUM``);
  Playwright's own browser download is never used (it cannot reach the internet here). Without a
  Chromium, or without the ``playwright`` package, every test using it is skipped with a loud message.
* ``browser_server`` (session): the base URL of a real uvicorn server (every hosted game, no rate limits)
  with a ``grimoire worker`` subprocess on its queues, so bots, timers and replays run. Its keys live
  under ``<key_prefix>:browser``: the in-process ``drain`` worker of other tests never races it.
* ``start_server(**settings)``: another such server with settings of the test's own (``cors_origins``...);
  stopped after the test. Returns its base URL.
* ``offline_context(**context_options)``: a new browser context in which every request (HTTP and
  websocket) to a host other than the servers started here is aborted and recorded in
  ``context.blocked``: a test asserts that list is empty to prove a page loads nothing from elsewhere.
  ``context.console_errors`` collects its pages' console errors (a CSP refusal is one) and uncaught errors.
* ``screenshot(page, name)``: saves ``<name>.png`` under ``test-artifacts/screenshots/`` (git-ignored;
  ``GRIMOIRE_TEST_ARTIFACTS`` moves it), prints and returns the path.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import threading
import time
import warnings
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import uvicorn

from service.app import create_app
from service.games import all_games
from service.store.embedded import free_port, stop_process
from tests.support.processes import ROOT, start_worker
from workers.dispatch import _safe

#: Chromium's switches for a headless run as root in a container, with nothing phoning home.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]

ARTIFACTS = Path(os.environ.get("GRIMOIRE_TEST_ARTIFACTS") or ROOT / "test-artifacts")


def find_chromium() -> str | None:
    """The system Chromium's path: ``GRIMOIRE_CHROMIUM``, else Debian's, else whatever is on PATH."""
    candidates = [os.environ.get("GRIMOIRE_CHROMIUM"), "/usr/bin/chromium",
                  shutil.which("chromium"), shutil.which("chromium-browser")]
    return next((path for path in candidates if path and os.access(path, os.X_OK)), None)


def _skip_loudly(why: str) -> None:
    message = (f"\n{'!' * 78}\nBROWSER TESTS SKIPPED: {why}\nInstall Debian's chromium "
               f"(apt-get install chromium) and `pip install -e '.[test]'`; .ci/run does both.\n{'!' * 78}")
    warnings.warn(message)  # in the warnings summary at the end of the run, not only in -rs
    pytest.skip(message)


@pytest.fixture(scope="module")
def chromium_browser():
    """Playwright's Chromium ``Browser`` running the system Chromium, for one test module.

    Not for the session: while Playwright's sync API is started, its event loop counts as running
    on the main thread, so ``asyncio.run`` (and anyio's test runner) in any later test would fail.
    A module that drives the browser must not run event loops of its own in the main thread."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _skip_loudly("the playwright Python package is not installed.")
    executable = find_chromium()
    if executable is None:
        _skip_loudly("no chromium executable found (looked at GRIMOIRE_CHROMIUM, /usr/bin/chromium, PATH).")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class ThreadedService:
    """``create_app(settings)`` served by uvicorn in a thread of this process, plus a ``grimoire worker``."""

    def __init__(self, settings, *, worker: bool = True):
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.server = uvicorn.Server(uvicorn.Config(create_app(settings, games=all_games()), host="127.0.0.1",
                                                    port=port, log_level="warning", lifespan="on",
                                                    timeout_graceful_shutdown=3))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the browser-test server did not start")
            time.sleep(0.02)
        self.worker = None
        if worker:  # bots move in it: the server's own dispatcher only enqueues
            self.worker = start_worker(f"{_safe(settings.key_prefix)}-browser-{port}", stderr=None,
                                       REDIS_URL=settings.redis_url, GRIMOIRE_KEY_PREFIX=settings.key_prefix,
                                       GRIMOIRE_LOG_LEVEL="WARNING")

    def stop(self) -> None:
        if self.worker is not None:
            stop_process(self.worker)
        self.server.should_exit = True
        self.thread.join(timeout=15)


#: Origins (scheme://host:port) of every server started by these fixtures: offline contexts allow them.
_SERVED_ORIGINS: set[str] = set()


def _origin(url: str) -> str:
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    return f"{scheme}://{parts.netloc}"


@pytest.fixture(scope="session")
def browser_settings(settings, rq_connection):
    """The session's settings under a key prefix of the browser tests' own (cleaned up with the session's)."""
    # rq_connection: its teardown deletes the RQ keys of every prefix starting with the session's
    return dataclasses.replace(settings, key_prefix=f"{settings.key_prefix}:browser")


@pytest.fixture(scope="session")
def browser_server(browser_settings):
    """Base URL of a real server (every hosted game) with a worker for bots, for the whole session."""
    service = ThreadedService(browser_settings)
    _SERVED_ORIGINS.add(service.url)
    yield service.url
    service.stop()


@pytest.fixture
def start_server(browser_settings):
    """``start_server(**settings_overrides) -> base URL``: a server of the test's own (same Redis and keys
    as ``browser_server``, so it sees the same matches), stopped after the test."""
    started: list[ThreadedService] = []

    def start(*, worker: bool = False, **overrides) -> str:
        service = ThreadedService(dataclasses.replace(browser_settings, **overrides), worker=worker)
        started.append(service)
        _SERVED_ORIGINS.add(service.url)
        return service.url

    yield start
    for service in started:
        service.stop()
        _SERVED_ORIGINS.discard(service.url)


@pytest.fixture
def offline_context(chromium_browser):
    """``offline_context(*also_allowed, **context_options)``: a browser context that aborts every
    request (HTTP or websocket) whose origin is neither a server started by these fixtures nor one of
    ``also_allowed`` (origins such as ``http://127.0.0.1:5555``); each aborted URL is appended to
    ``context.blocked``, each console error or uncaught exception of its pages to
    ``context.console_errors``. Contexts are closed after the test."""
    contexts = []

    def open_context(*also_allowed: str, **options):
        context = chromium_browser.new_context(**options)
        context.blocked = []
        context.console_errors = []  # console errors (CSP refusals among them) and uncaught exceptions

        def watch(page):
            page.on("console", lambda message: message.type == "error" and context.console_errors.append(
                f"{message.text} ({message.location.get('url')})"))
            page.on("pageerror", lambda error: context.console_errors.append(f"uncaught: {error}"))

        context.on("page", watch)

        def elsewhere(url: str) -> bool:
            return _origin(url) not in _SERVED_ORIGINS | {_origin(o) for o in also_allowed}

        def block(route):
            context.blocked.append(route.request.url)
            route.abort("blockedbyclient")

        def block_websocket(ws):
            context.blocked.append(ws.url)
            ws.close()

        # data: and blob: URLs never reach route handlers; everything with a host does
        context.route(re.compile(r"^https?://"), lambda route: block(route) if elsewhere(route.request.url)
                      else route.continue_())
        context.route_web_socket(elsewhere, block_websocket)
        contexts.append(context)
        return context

    yield open_context
    for context in contexts:
        context.close()


@pytest.fixture
def screenshot():
    """``screenshot(page, name) -> Path``: a full-page PNG kept as a test artefact (path printed)."""

    def take(page, name: str) -> Path:
        folder = ARTIFACTS / "screenshots"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.png"
        page.screenshot(path=str(path), full_page=True)
        print(f"screenshot: {path}")
        return path

    return take
