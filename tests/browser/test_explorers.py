"""The landing page, GraphiQL and the REST docs page in a real Chromium, with every other host blocked
(issue 19, item 1): each renders, GraphiQL runs a query, the docs page lists every REST operation, and
no page asks for anything outside the service or trips its Content-Security-Policy.

The last tests need no browser: the vendored files are the pinned ones and the wheel ships them all."""

from __future__ import annotations

import re
import json
import tomllib
from pathlib import Path

import httpx
import yaml

from service.contracts import graphql_sdl
from service.guards import HTML_POLICY
from service.static import HERE as STATIC
from service.static.vendor import load_manifest, stale_files
from tests.support.processes import ROOT

LANDING_LINKS = {"/play", "/graphql", "/docs", "/openapi.yaml", "/schema.graphql", "/healthz", "/readyz"}


def assert_self_contained(context) -> None:
    assert context.blocked == [], f"the page asked another host for {context.blocked}"
    assert context.console_errors == [], context.console_errors


def test_the_landing_page_links_every_entry_point(offline_context, browser_server, screenshot):
    context = offline_context()
    page = context.new_page()
    page.goto(browser_server + "/")
    assert page.locator("h1").inner_text() == "Grimoire"
    links = set(page.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))"))
    assert links == LANDING_LINKS
    for link in LANDING_LINKS - {"/play"}:  # /play is the reference front end's (tests/browser/test_play*.py)
        assert page.request.get(browser_server + link).status == 200, link
    screenshot(page, "landing")
    assert_self_contained(context)


def test_graphiql_runs_a_query_with_other_hosts_blocked(offline_context, browser_server, screenshot):
    context = offline_context()
    page = context.new_page()
    page.goto(browser_server + "/graphql")
    page.locator(".graphiql-query-editor .CodeMirror").wait_for()
    page.locator(".graphiql-execute-button").click()
    # the default query lists the games: the answer in the result pane is the server's
    page.locator(".graphiql-response").get_by_text('"casting-stones"').wait_for(timeout=60_000)
    shown = json.loads(page.locator(".graphiql-response .CodeMirror").evaluate("editor => editor.CodeMirror.getValue()"))
    listed = httpx.get(browser_server + "/v1/games").json()
    assert [game["id"] for game in shown["data"]["games"]] == [game["id"] for game in listed["games"]]
    screenshot(page, "graphiql")
    assert_self_contained(context)


def test_graphiql_subscribes_over_its_websocket_under_the_pages_policy(offline_context, browser_server):
    bots = [{"seat": 0, "level": "random"}, {"seat": 1, "level": "random"}]
    created = httpx.post(browser_server + "/v1/matches",
                         json={"game": "casting-stones", "variant": "basic", "seed": "5", "bots": bots})
    assert created.status_code == 201, created.text
    context = offline_context()
    page = context.new_page()
    page.goto(browser_server + "/graphql")
    editor = page.locator(".graphiql-query-editor .CodeMirror")
    editor.wait_for()
    subscription = ('subscription { matchEvents(matchId: "%s", after: 0) { __typename '
                    '... on MatchEvent { version } ... on StreamEnded { reason message } } }' % created.json()["id"])
    editor.evaluate("(editor, text) => editor.CodeMirror.setValue(text)", subscription)
    response = page.locator(".graphiql-response")
    # GraphiQL picks the transport from its parse of the editor, which trails a programmatic setValue (as
    # it would a fast typist): a click that comes first sends the subscription over HTTP, which the service
    # refuses with the websocket named (tests/api/test_graphql.py). Give it the time a person takes, and
    # click again if it still was not enough; that refusal is then the only console error allowed.
    page.wait_for_timeout(1000)
    for _ in range(5):
        page.locator(".graphiql-execute-button").click()
        response.get_by_text(re.compile('"MatchEvent"|"errors"')).first.wait_for(timeout=60_000)
        if '"MatchEvent"' in response.inner_text():
            break
        assert "over the websocket" in response.inner_text(), response.inner_text()
        page.wait_for_timeout(1000)
    refused = f"the server responded with a status of 400 (Bad Request) ({browser_server}/graphql)"
    context.console_errors[:] = [e for e in context.console_errors if not e.endswith(refused)]
    # the bots' first move arrives over graphql-transport-ws, which the page's connect-src 'self' allows
    assert '"MatchEvent"' in response.inner_text()
    assert_self_contained(context)


def test_the_docs_page_lists_every_rest_operation_with_other_hosts_blocked(offline_context, browser_server,
                                                                           screenshot):
    document = yaml.safe_load(httpx.get(browser_server + "/openapi.yaml").text)
    expected = {(method.upper(), path) for path, item in document["paths"].items() for method in item
                if method in ("get", "post", "put", "patch", "delete")}
    context = offline_context()
    page = context.new_page()
    page.goto(browser_server + "/docs")
    page.locator(".opblock").first.wait_for(timeout=60_000)
    rendered = (page.locator(".opblock-summary").evaluate_all(
        """blocks => blocks.map(b => [b.querySelector('.opblock-summary-method').textContent,
                                      b.querySelector('.opblock-summary-path').getAttribute('data-path')])"""))
    assert {tuple(pair) for pair in rendered} == expected and len(rendered) == len(expected)
    screenshot(page, "docs")
    assert_self_contained(context)


def test_html_pages_allow_scripts_and_styles_from_their_own_origin_only(browser_server):
    for path in ("/", "/docs", "/graphql"):
        response = httpx.get(browser_server + path, headers={"Accept": "text/html"})
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/html"), path
        policy = dict(part.strip().split(" ", 1) for part in response.headers["content-security-policy"].split(";"))
        assert policy["script-src"] == "'self'" and policy["style-src"] == "'self'", path
        assert policy["default-src"] == "'self'" and policy["connect-src"] == "'self'", path
        assert response.headers["content-security-policy"] == HTML_POLICY
        assert "http" not in response.text.replace('href="/', ""), f"{path} names another host"


def test_static_assets_are_revalidated_not_refetched(browser_server):
    url = browser_server + "/explorers/vendor/graphiql/graphiql.min.js"
    first = httpx.get(url)
    assert first.status_code == 200 and first.headers["cache-control"] == "no-cache"
    again = httpx.get(url, headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304


def test_the_sdl_served_is_the_exported_one(browser_server):
    served = httpx.get(browser_server + "/schema.graphql")
    assert served.status_code == 200 and served.headers["content-type"].startswith("text/plain")
    assert served.text == graphql_sdl()  # what grimoire export-schema writes to schema/schema.graphql


def test_the_vendored_files_are_the_pinned_ones():
    assert stale_files(load_manifest()) == []


def test_the_wheel_ships_every_page_and_asset():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    shipped = {path for pattern in patterns["service.static"] + patterns["*"] for path in STATIC.glob(pattern)}
    served = {path for path in STATIC.rglob("*") if path.is_file() and path.suffix not in (".py", ".pyc")}
    assert served - shipped == set()
    assert any(Path(p).name == "graphiql.min.js" for p in shipped)
