"""200 concurrent trades between 50 players through 2 service processes, both SIGKILLed while trades are being
carried out, and started again: every stone and card is conserved (issue 25, "Done when").

Each player opens a Starter Set. 200 offers are made: each gives a stone its offerer owns for one its recipient
owns, and players trade with several others at once, so some trades must fail for want of a stone. Then all
200 are accepted, 24 at a time, half through each process, in two rounds of 100. In each round, as soon as a
watcher sees a trade being carried out, Redis stalls its writes for a moment (CLIENT PAUSE WRITE: every accept
in flight waits at its next step, wherever it is) and both processes are SIGKILLed meanwhile, then started
again on their ports. A request refused while a process is down goes to the other one; an accept cut by a kill
is not sent again: a ``grimoire worker`` sweeps the trades the kills left half-way. Afterwards every trade is
completed, failed or (its recipient no longer owning its side, so the offer stayed open) declined, none is left
half-way, the sweep finished the ones caught half-way, and the total of every stone and card over the 50
collections is what it was before: nothing duplicated, nothing lost.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import redis as sync_redis

from service.store.embedded import stop_process
from tests.support.processes import Service, start_worker
from workers.dispatch import _safe

from .conftest import bearer, unique_name

PLAYERS, TRADES = 50, 200


class Fleet:
    """Two service processes, one of which a killer may SIGKILL and restart at any moment."""

    def __init__(self, redis_url: str, key_prefix: str, logs):
        self.redis_url, self.key_prefix, self.logs = redis_url, key_prefix, logs
        self.services = [Service(redis_url, key_prefix, logs / f"service-{i}.log") for i in range(2)]
        self.kills = 0
        self.lock = threading.Lock()

    def request(self, method: str, path: str, token: str | None = None, json=None, *, prefer: int = 0,
                timeout: float = 600.0, resend: bool = True) -> httpx.Response | None:
        """Send to the preferred process, else the other. A request a kill cut is sent again, unless not
        ``resend``: then None (the request may or may not have done its work)."""
        deadline = time.monotonic() + timeout
        attempt = prefer
        while True:
            base = self.services[attempt % 2].base
            try:
                return httpx.request(method, base + path, json=json, headers=bearer(token) if token else None,
                                     timeout=30)
            except httpx.ConnectError:  # refused: the process is down, nothing was sent
                pass
            except httpx.TransportError:  # cut by a kill, perhaps half-way through
                if not resend:
                    return None
            assert time.monotonic() < deadline, f"{method} {path}: no process answered"
            attempt += 1
            time.sleep(0.05)

    def kill_and_restart(self, index: int) -> threading.Thread:
        """SIGKILL process ``index`` and start it again on its port, in a thread (join it: it is ready; a loaded
        machine takes a while). Meanwhile requests go to the other process."""
        service = self.services[index]
        service.process.kill()
        service.process.wait()
        service.log.close()
        with self.lock:
            self.kills += 1

        def restart():
            self.services[index] = Service(self.redis_url, self.key_prefix, self.logs / f"service-{index}.log",
                                           port=service.port, ready_timeout=300)

        thread = threading.Thread(target=restart, daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        for service in self.services:
            service.stop()


@pytest.fixture(scope="module")
def fleet(redis_url, key_prefix, tmp_path_factory):
    logs = tmp_path_factory.mktemp("trade-storm")
    started = Fleet(redis_url, key_prefix, logs)
    worker = start_worker(f"{_safe(key_prefix)}-trades-{time.monotonic_ns()}", REDIS_URL=redis_url,
                          GRIMOIRE_KEY_PREFIX=key_prefix, GRIMOIRE_LOG_LEVEL="WARNING")
    yield started
    stop_process(worker)
    started.stop()


def totals(connection, key_prefix: str, players: list[str]) -> Counter:
    """Every item over the players' collections, read straight from Redis."""
    summed: Counter = Counter()
    for player in players:
        for name, count in connection.hgetall(f"{key_prefix}:p:{{{player}}}:coll:casting-stones").items():
            summed[name.decode()] += int(count)
            assert int(count) >= 0, (player, name, count)
    return summed


def test_200_concurrent_trades_through_two_killed_processes_conserve_every_stone(fleet, redis_url, key_prefix):
    rng = random.Random(25)
    players: dict[str, str] = {}
    for i in range(PLAYERS):
        made = fleet.request("POST", "/v1/players", json={"name": unique_name("Storm")}, prefer=i)
        assert made.status_code == 201, made.text
        players[made.json()["player"]["id"]] = made.json()["token"]
    owned: dict[str, list[str]] = {}
    for i, (player, token) in enumerate(players.items()):
        opened = fleet.request("POST", "/v1/players/me/packs", token, {"kind": "starter"}, prefer=i)
        assert opened.status_code == 201, opened.text
        owned[player] = opened.json()["opening"]["stones"]
    connection = sync_redis.Redis.from_url(redis_url)
    before = totals(connection, key_prefix, list(players))
    assert sum(before.values()) == PLAYERS * 14

    ids = list(players)
    offers = []
    for i in range(TRADES):
        offerer, recipient = rng.sample(ids, 2)
        give = {"stones": [{"id": rng.choice(owned[offerer])}]}
        get = {"stones": [{"id": rng.choice(owned[recipient])}]}
        if i % 5 == 0:
            give["cards"] = [{"id": "charms"}]  # cards move too
        made = fleet.request("POST", "/v1/trades", players[offerer], {"to": recipient, "give": give, "get": get},
                             prefer=i)
        assert made.status_code == 201, made.text
        offers.append((made.json()["id"], offerer, recipient))

    # Two rounds of 100 accepts, 24 at a time. In each, a watcher waits until it sees a trade of the round being
    # carried out, stalls Redis's writes (CLIENT PAUSE WRITE: every accept in flight waits at its next step,
    # wherever it is), SIGKILLs both processes meanwhile, lets Redis go and starts them again on their ports.
    # The trades the kills cut half-way are left to the worker's sweep.
    busy = {b"accepting", b"settling", b"aborting"}
    caught: list[str] = []

    def status(trade_id: str) -> bytes | None:
        return connection.hget(f"{key_prefix}:t:{{{trade_id}}}", "status")

    def stall_and_kill(round_trades: set[str], finished: threading.Event) -> None:
        while not finished.is_set():
            live = [t.decode() for t in connection.zrange(f"{key_prefix}:trades:live", 0, -1)]
            if any(t in round_trades and status(t) in busy for t in live):
                connection.execute_command("CLIENT", "PAUSE", 20000, "WRITE")
                try:
                    halfway = [t for t in live if t in round_trades and status(t) in busy]
                    if halfway:
                        restarts = [fleet.kill_and_restart(i) for i in (0, 1)]
                        caught.extend(halfway)
                finally:
                    connection.execute_command("CLIENT", "UNPAUSE")
                if halfway:
                    for restart in restarts:
                        restart.join()
                    return
            time.sleep(0.001)

    def accept(item):
        """Accept; an accept a kill cut is not sent again: the sweep must finish what it left half-way."""
        i, (trade_id, _offerer, recipient) = item
        response = fleet.request("POST", f"/v1/trades/{trade_id}/accept", players[recipient], prefer=i, resend=False)
        return (None, "cut") if response is None else (response.status_code, response.json().get("code"))

    answers = []
    for chunk in (offers[:TRADES // 2], offers[TRADES // 2:]):
        finished = threading.Event()
        chaos = threading.Thread(target=stall_and_kill, args=({t for t, _, _ in chunk}, finished), daemon=True)
        chaos.start()
        with ThreadPoolExecutor(24) as pool:
            answers += list(pool.map(accept, enumerate(chunk)))
        finished.set()
        chaos.join()
    assert caught and fleet.kills >= 2, "no kill landed while a trade was being carried out"
    assert all(status in (200, 409, None) for status, _ in answers), Counter(answers)
    assert {code for status, code in answers if status == 409} <= {"trade_failed", "not_in_collection"}

    time.sleep(7)  # the worker's sweep takes over what the killed processes left (5 s grace)
    final = {}
    for trade_id, offerer, recipient in offers:
        trade = fleet.request("GET", f"/v1/trades/{trade_id}", players[offerer]).json()
        if trade["status"] == "offered":  # its accept never reached the trade, or was refused: accept it now
            again = fleet.request("POST", f"/v1/trades/{trade_id}/accept", players[recipient])
            if again.status_code == 409 and again.json()["code"] == "not_in_collection":  # the offer stays open
                fleet.request("POST", f"/v1/trades/{trade_id}/decline", players[recipient])
            trade = fleet.request("GET", f"/v1/trades/{trade_id}", players[offerer]).json()
        final[trade_id] = trade
    statuses = Counter(t["status"] for t in final.values())
    assert set(statuses) <= {"completed", "failed", "declined"}, statuses
    assert statuses["completed"] >= TRADES // 2, statuses
    after = totals(connection, key_prefix, list(players))
    assert after == before, {k: (before[k], after[k]) for k in before.keys() | after.keys() if before[k] != after[k]}
    recovered = [t for t in final.values() if t["recovered"]]
    print(f"{fleet.kills} kills, {len(caught)} trades caught half-way, {len(recovered)} finished by the sweep; "
          f"{dict(statuses)}; accept answers {dict(Counter(answers))}")
    assert {t["id"] for t in recovered} >= set(caught)  # the sweep, not a reader, finished them
    for player, token in players.items():  # every trade is in both players' histories
        listed = fleet.request("GET", "/v1/players/me/trades?limit=100", token).json()["trades"]
        mine = {t for t, o, r in offers if player in (o, r)}
        assert {t["id"] for t in listed} == mine
    connection.close()
