"""/play, the reference front end, in a real Chromium with every other host blocked (issue 19, item 2).

Each game is played to its end from the page alone, choosing at random among the controls the page
builds from the legal actions: two browser contexts against each other at Casting Stones; one against
bots at Spells and Potions (a bot added from the match page), Quidditch (across a restart of the
server, which the page's subscription must resume from the last version it saw) and the Sorcerer's
Stone. A spectator follows a Quidditch match, and its page never holds a card hidden from it; the replay
viewer steps through a finished match. Screenshots of every page are kept (tests/browser/conftest.py).
The small front end of docs/api.md, "Write a front end", is run as the docs give it, from another origin.
The last tests need no browser: the wheel ships every file of /play, and the vendored client is the one
VENDORED.md records.

Matches are kept short with their options (a turn or round limit ends them, as the rules say) so the
whole file stays within a few minutes of browser time."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import shutil
import threading
import random
import re
import time
import tomllib

import httpx
import pytest

from service.play import PLAY_DIR
from service.store.embedded import free_port
from tests.support.processes import ROOT, Service

ACT_TIMEOUT_MS = 30_000
MAX_ACTIONS = 400

#: A legal action's controls: a button, or a form whose select lists several actions of one type.
CONTROLS = "[data-actions]:not([data-busy]) [data-action-type]"
READY = f"[data-result], {CONTROLS}"


def assert_self_contained(context, *expected: str) -> None:
    """Nothing was asked of another host, and the pages logged no error but the ``expected`` ones."""
    assert context.blocked == [], f"the page asked another host for {context.blocked}"
    errors = [e for e in context.console_errors if not any(text in e for text in expected)]
    assert errors == [], errors


def take_a_legal_action(page, rng: random.Random) -> bool:
    """Click one of the page's legal-action controls at random (for a form: one of its options first).
    False when the page re-drew under the click (a newer version arrived): look again."""
    try:
        controls = page.query_selector_all(CONTROLS)
        if not controls:
            return False
        control = rng.choice(controls)
        if control.evaluate("element => element.tagName") == "FORM":
            count = len(control.query_selector_all("option"))
            control.query_selector("select").select_option(index=rng.randrange(count), timeout=2_000)
            control.query_selector("button").click(timeout=2_000)
        else:
            control.click(timeout=2_000)
        return True
    except Exception as error:  # the element was detached by a re-draw
        if "detached" in str(error) or "not attached" in str(error) or "Timeout" in str(error):
            return False
        raise


def play_to_the_end(page, rng: random.Random, *, before=None, between=None) -> int:
    """Play the page's seat until the match is over; returns how many actions it took.
    ``before(page)`` runs when the page offers actions, ``between(page, actions)`` after each action."""
    actions = 0
    for _ in range(MAX_ACTIONS):
        page.wait_for_selector(READY, timeout=ACT_TIMEOUT_MS)
        if page.query_selector("[data-result]"):
            return actions
        if before:
            before(page)
        if take_a_legal_action(page, rng):
            actions += 1
            if between:
                between(page, actions)
    pytest.fail(f"no end after {MAX_ACTIONS} actions")


def create_from_the_form(page, base: str, game: str, variant: str, seats: dict[int, str], options: dict) -> str:
    """Create a match on the home page (seat 0 is this page's; ``seats`` maps the others to a bot level or
    "open"), and return its id once the match page shows."""
    page.goto(f"{base}/play/")
    page.fill("[data-player-name]", "Ann")
    page.select_option("select[name=game]", game)
    page.select_option("select[name=variant]", variant)
    page.fill("input[name=seats]", str(len(seats) + 1))
    for seat, choice in seats.items():
        page.select_option(f"[data-seat-choice='{seat}']", choice)
    page.fill("textarea[name=options]", json.dumps(options))
    page.click("[data-create] button[type=submit]")
    page.wait_for_selector("[data-status][data-version]")
    return re.search(r"#/match/([^/]+)$", page.url).group(1)


def seat_token(page, match_id: str) -> str:
    """The token the page keeps for its seat (sessionStorage, never a URL)."""
    return json.loads(page.evaluate(f"sessionStorage.getItem('grimoire.seat.{match_id}')"))["token"]


def record_urls(context) -> list[str]:
    """Every URL the context's pages ask for or show from now on: HTTP requests, websockets, and each
    page's own address (a fragment change included)."""
    urls: list[str] = []
    context.on("request", lambda request: urls.append(request.url))

    def watch(page):
        page.on("websocket", lambda ws: urls.append(ws.url))
        page.on("framenavigated", lambda frame: urls.append(frame.url))

    context.on("page", watch)
    return urls


def test_two_players_play_casting_stones_against_each_other(offline_context, browser_server, screenshot):
    """Ann creates a Basic Game with seat 1 open; Bob finds it in the lobby, takes the seat, and they play
    it out, each in a browser context of their own. Neither token ever goes into a URL."""
    ann_context, bob_context = offline_context(), offline_context()
    ann_urls, bob_urls = record_urls(ann_context), record_urls(bob_context)
    ann, bob = ann_context.new_page(), bob_context.new_page()
    match_id = create_from_the_form(ann, browser_server, "casting-stones", "basic", {1: "open"}, {"max_turns": 3})
    ann.wait_for_selector("[data-status='WAITING']")
    screenshot(ann, "play-casting-stones-waiting")

    bob.goto(f"{browser_server}/play/")
    bob.fill("[data-player-name]", "Bob")
    bob.wait_for_selector(f"[data-open-match='{match_id}']")  # the lobby lists the open match
    screenshot(bob, "play-home")
    bob.click(f"[data-open-match='{match_id}']")
    bob.click("[data-join-seat='1']")
    bob.wait_for_selector("[data-status='ACTIVE']")
    ann.wait_for_selector("[data-status='ACTIVE']")  # Ann's page notices the join (joins are not actions)
    assert "you are seat 1" in bob.inner_text("[data-status]")

    rng = random.Random(19)
    actions = 0
    deadline = time.monotonic() + 150
    while not (ann.query_selector("[data-result]") and bob.query_selector("[data-result]")):
        assert time.monotonic() < deadline, "the match did not end"
        acted = 0
        for page in (ann, bob):
            if page.query_selector(CONTROLS):
                acted += take_a_legal_action(page, rng)
        actions += acted
        if not acted:
            ann.wait_for_timeout(50)
    assert actions > 10  # the draft alone is ten picks
    result = ann.inner_text("[data-result]")
    assert result == bob.inner_text("[data-result]")
    assert "turn limit" in result or "four adjoining" in result, result
    screenshot(ann, "play-casting-stones-ann")
    screenshot(bob, "play-casting-stones-bob")
    for context, page, urls in ((ann_context, ann, ann_urls), (bob_context, bob, bob_urls)):
        token = seat_token(page, match_id)
        assert urls and all(token not in url for url in urls), "a seat token went into a URL"
        assert_self_contained(context)


def offered_action_types(page) -> tuple[int, list[str]]:
    """The version of the page's actions panel and the type of each action it offers (a button is one,
    a form one per option of its select)."""
    return page.eval_on_selector("[data-actions]", """panel => [Number(panel.dataset.version),
        [...panel.querySelectorAll('[data-action-type]')].flatMap(control =>
            Array(control.tagName === 'FORM' ? control.querySelectorAll('option').length : 1)
                .fill(control.dataset.actionType))]""")


def test_one_player_against_three_bots_at_spells_and_potions(offline_context, browser_server, screenshot):
    """Two seats go to bots at creation, the last one from the match page's "Add bot"; then the page
    plays its seat through a whole practice game (13 tricks, Fire trumps, the Spells and Potions Cards),
    offering each time exactly the legal actions the API gives its token."""
    context = offline_context()
    page = context.new_page()
    match_id = create_from_the_form(page, browser_server, "spells-and-potions", "practice-3",
                                    {1: "greedy", 2: "greedy", 3: "open"}, {})
    page.select_option("[data-bot-level='3']", "random")
    page.click("[data-add-bot='3']")
    page.wait_for_selector("[data-status='ACTIVE']")
    assert "random bot (seat 3)" in page.inner_text("[data-seats]")
    auth = {"Authorization": f"Bearer {seat_token(page, match_id)}"}
    compared = []

    def offers_exactly_the_legal_actions(page):
        version, offered = offered_action_types(page)
        legal = httpx.get(f"{browser_server}/v1/matches/{match_id}/legal-actions", headers=auth).json()
        assert legal["version"] == version  # nobody else can act while the match waits on this seat
        assert sorted(offered) == sorted(action["type"] for action in legal["actions"])
        compared.append(len(offered))

    play_to_the_end(page, random.Random(3), before=offers_exactly_the_legal_actions)
    assert len(compared) >= 13 and max(compared) > 1
    assert page.query_selector("[data-trick]")
    screenshot(page, "play-spells-and-potions")
    assert_self_contained(context)


def log_versions(page) -> list[int]:
    """The versions of the updates in the page's log, in the order they came, after the version the
    page started following from."""
    start = int(page.get_attribute("[data-log] [data-from]", "data-from"))
    return [start, *(int(v) for v in page.eval_on_selector_all("[data-log] > li[data-version]",
                                                                "items => items.map(i => i.dataset.version)"))]


def test_quidditch_from_the_page_resumes_after_the_server_restarts(offline_context, browser_server, browser_settings,
                                                                    tmp_path, screenshot):
    """A seat plays Quidditch against a bot on a `grimoire serve` of its own, which is stopped and started
    again on its port mid-match: the page's subscription ends (shutdown), reconnects, and resumes from the
    last version it saw. Its log then holds every version once, in order: none lost, none twice."""
    # Same Redis and key prefix as browser_server, whose worker plays this server's bots too.
    service = Service(browser_settings.redis_url, browser_settings.key_prefix, tmp_path / "service.log")
    try:
        context = offline_context(service.base)
        page = context.new_page()
        create_from_the_form(page, service.base, "quidditch", "standard", {1: "greedy"}, {"max_rounds": 2})
        page.wait_for_selector("[data-live='live']")
        restarted_at = []

        def restart_once(page, actions):
            nonlocal service
            if actions != 2 or restarted_at:
                return
            restarted_at.append(int(page.get_attribute("[data-status]", "data-version")))
            port = service.port
            service.stop()  # SIGTERM: open streams end with "shutdown"
            page.wait_for_selector("[data-live='reconnecting']", timeout=ACT_TIMEOUT_MS)
            service = Service(browser_settings.redis_url, browser_settings.key_prefix, tmp_path / "service.log",
                              port=port)
            page.wait_for_selector("[data-live='live']", timeout=ACT_TIMEOUT_MS)

        play_to_the_end(page, random.Random(5), between=restart_once)
        screenshot(page, "play-quidditch-seat")
        assert restarted_at, "the match ended before the restart"
        final = int(page.get_attribute("[data-status]", "data-version"))
        versions = log_versions(page)
        assert versions == list(range(versions[0], final + 1)), versions
        assert versions[0] < restarted_at[0] < final  # the log spans the restart
        assert "Result:" in page.inner_text("[data-view]")
        assert_self_contained(context, "ERR_CONNECTION_REFUSED")  # the page's requests while the server was down
    finally:
        service.stop()


def hidden_from_spectators(view: dict) -> set[str]:
    """The card ids a Quidditch seat's view shows that a spectator may not see: its hand, and its own
    cards lying face down on balls not yet revealed."""
    hidden = {card["id"] for card in view["hand"]}
    for ball in view["balls"]:
        side = ball["sides"][view["seat"]]
        if side["card"] and not ball["revealed"]:
            hidden.add(side["card"]["id"])
    return hidden


def test_a_spectator_follows_quidditch_and_never_sees_a_hidden_card(offline_context, browser_server, screenshot):
    """The test plays seat 0 over REST against a bot; a spectator's page follows the match. Whenever the
    match waits on seat 0 (so it cannot move on), the page is compared, at that very version, with the
    cards seat 0's token shows it: no hidden card id is anywhere in the page's text or HTML."""
    http = httpx.Client(base_url=browser_server, timeout=10)
    created = http.post("/v1/matches", json={"game": "quidditch", "options": {"max_rounds": 3}, "seed": "12",
                                             "bots": [{"seat": 1, "level": "greedy"}]}).json()
    match_id = created["id"]
    token = http.post(f"/v1/matches/{match_id}/seats", json={"name": "Seat zero", "seat": 0}).json()["token"]
    auth = {"Authorization": f"Bearer {token}"}

    context = offline_context()
    page = context.new_page()
    page.goto(f"{browser_server}/play/#/match/{match_id}")
    page.wait_for_selector("[data-status][data-version]")
    assert "watching as a spectator" in page.inner_text("[data-status]")

    rng = random.Random(7)
    checked = 0
    deadline = time.monotonic() + 120
    while True:
        assert time.monotonic() < deadline, "the match did not end"
        match = http.get(f"/v1/matches/{match_id}", headers=auth).json()
        if match["status"] == "finished":
            break
        if 0 not in match["to_act"]:
            time.sleep(0.05)
            continue
        if match["to_act"] == [0]:  # the match waits on seat 0 alone: it stays at this version meanwhile
            hidden = hidden_from_spectators(match["view"])
            page.wait_for_selector(f"[data-status][data-version='{match['version']}']", timeout=ACT_TIMEOUT_MS)
            html, text = page.content(), page.inner_text("body")
            assert not [card for card in hidden if card in html or card in text], f"hidden cards shown at v{match['version']}"
            checked += bool(hidden)
        legal = http.get(f"/v1/matches/{match_id}/legal-actions", headers=auth).json()
        response = http.post(f"/v1/matches/{match_id}/actions", json={"action": rng.choice(legal["actions"])},
                             headers={**auth, "If-Match": f'"{legal["version"]}"'})
        assert response.status_code in (200, 412), response.text  # 412: the bot acted first in a window
    assert checked >= 3
    page.wait_for_selector("[data-result]", timeout=ACT_TIMEOUT_MS)
    assert "watching as a spectator" in page.inner_text("[data-status]")
    assert not page.query_selector("[data-actions]")  # a spectator is offered nothing to do
    screenshot(page, "play-quidditch-spectator")
    assert_self_contained(context)


@pytest.mark.parametrize("variant", ["hagrid", "sprout", "flitwick", "mcgonagall", "snape"])
def test_the_sorcerers_stone_from_the_page(offline_context, browser_server, screenshot, variant):
    """A challenge of the Sorcerer's Stone against a bot, to its end, with its board drawn. (Quirrell's
    challenge, a spinner and nothing to choose, is left out for time; the chain plays every board.)"""
    context = offline_context()
    page = context.new_page()
    create_from_the_form(page, browser_server, "sorcerers-stone", variant, {1: "greedy"}, {})
    page.wait_for_selector(f"[data-board='{variant}']")
    play_to_the_end(page, random.Random(11))
    screenshot(page, f"play-sorcerers-stone-{variant}")
    assert_self_contained(context)


def finished_bot_match(http: httpx.Client, game: str, variant: str) -> dict:
    """A match of two bots, once it has finished."""
    match_id = http.post("/v1/matches", json={"game": game, "variant": variant, "seed": "19",
                                              "bots": [{"seat": 0, "level": "random"}, {"seat": 1, "level": "random"}]}).json()["id"]
    deadline = time.monotonic() + 60
    while (match := http.get(f"/v1/matches/{match_id}").json())["status"] != "finished":
        assert time.monotonic() < deadline, "the bots did not finish"
        time.sleep(0.2)
    return match


def test_the_replay_viewer_steps_through_a_finished_match(offline_context, browser_server, screenshot):
    match = finished_bot_match(httpx.Client(base_url=browser_server, timeout=10), "sorcerers-stone", "hagrid")
    context = offline_context()
    page = context.new_page()
    page.goto(f"{browser_server}/play/#/replay/{match['id']}")
    frame = page.locator("[data-frame]")
    frame.wait_for(timeout=ACT_TIMEOUT_MS)

    def at(version: int) -> None:
        page.wait_for_selector(f"[data-frame][data-version='{version}']")
        assert f"version {version}" in page.inner_text("[data-replay-position]")

    at(0)
    assert "The set-up." in frame.inner_text()
    page.click("[data-replay-step='next']")
    at(1)
    after_one = frame.inner_text()
    page.click("[data-replay-step='last']")
    at(match["version"])
    assert "trapdoor" in frame.inner_text()
    page.click("[data-replay-step='prev']")
    at(match["version"] - 1)
    page.click("[data-replay-step='first']")
    at(0)
    page.click("[data-replay-step='next']")
    assert frame.inner_text() == after_one  # the same step shows the same frame
    # every seat's own view, as the spectator replay keeps them: seat 0's hand of notes shows
    spectator_hands = page.inner_text("[data-board='hagrid']")
    page.select_option("[data-replay-seat]", "0")
    assert page.inner_text("[data-board='hagrid']") != spectator_hands
    screenshot(page, "play-replay")
    assert_self_contained(context)


def docs_front_end() -> dict[str, str]:
    """index.html and app.js as docs/api.md's "Write a front end" gives them."""
    text = (ROOT / "docs" / "api.md").read_text()
    section = text[text.index("## Write a front end"):text.index("## Write a bot")]
    return {"index.html": re.search(r"```html\n(.*?)```", section, re.S).group(1),
            "app.js": re.search(r"```js\n(.*?)```", section, re.S).group(1)}


def test_the_docs_front_end_plays_a_match_from_another_origin(offline_context, browser_server, start_server,
                                                                tmp_path, screenshot):
    """The docs' two files, with the vendored graphql-ws beside them, served by a static server of their
    own: the service lists that origin in GRIMOIRE_CORS_ORIGINS, and the page plays to the end."""
    files = docs_front_end()
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    api = start_server(cors_origins=(origin,))  # browser_server's worker plays its bots (same key prefix)
    assert 'const API = "http://127.0.0.1:8000";' in files["app.js"]
    (tmp_path / "index.html").write_text(files["index.html"])
    (tmp_path / "app.js").write_text(files["app.js"].replace("http://127.0.0.1:8000", api))
    shutil.copytree(PLAY_DIR / "vendor" / "graphql-ws", tmp_path / "graphql-ws")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None
    static = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=static.serve_forever, daemon=True).start()
    try:
        context = offline_context(origin)
        page = context.new_page()
        page.goto(f"{origin}/")
        rng = random.Random(23)
        for _ in range(MAX_ACTIONS):
            page.wait_for_selector("#actions button, #actions:has-text('Over:')", timeout=ACT_TIMEOUT_MS)
            if "Over:" in page.inner_text("#actions"):
                break
            try:
                rng.choice(page.query_selector_all("#actions button")).click(timeout=2_000)
            except Exception as error:  # re-drawn under the click
                if not ("detached" in str(error) or "not attached" in str(error) or "Timeout" in str(error)):
                    raise
        else:
            pytest.fail("no end")
        screenshot(page, "docs-front-end")
        assert_self_contained(context)
    finally:
        static.shutdown()


def test_the_wheel_ships_every_file_of_play():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    shipped = {path for pattern in patterns["service.play"] + patterns["*"] for path in PLAY_DIR.glob(pattern)}
    served = {path for path in PLAY_DIR.rglob("*") if path.is_file() and path.suffix not in (".py", ".pyc")}
    assert served - shipped == set()
    assert PLAY_DIR / "vendor" / "graphql-ws" / "client.js" in shipped


def test_the_vendored_graphql_ws_is_the_published_one():
    """Each vendored file hashes as VENDORED.md records (the npm package's files, unmodified)."""
    recorded = dict((name, digest) for digest, name in re.findall(r"^ {4}([0-9a-f]{64})  (\S+)$",
                                                                   (PLAY_DIR / "VENDORED.md").read_text(), re.M))
    vendored = PLAY_DIR / "vendor" / "graphql-ws"
    assert set(recorded) == {path.name for path in vendored.glob("*.js")}
    for name, digest in recorded.items():
        assert hashlib.sha256((vendored / name).read_bytes()).hexdigest() == digest, name
