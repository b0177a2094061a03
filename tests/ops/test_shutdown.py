"""Graceful shutdown of a real ``grimoire serve`` process, and what its logs hold.

On SIGTERM the service stops taking connections, finishes the request in
flight (here: one whose body is still arriving), ends live streams with the
reason "shutdown", and exits. Its log lines are JSON, carry request ids, and
never a seat token.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx

from service.store.embedded import free_port
from tests.support.processes import wait_ready


def test_sigterm_finishes_requests_in_flight_and_ends_streams(redis_url, key_prefix, tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    stderr = open(tmp_path / "serve.log", "w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
        env={**os.environ, "REDIS_URL": redis_url, "GRIMOIRE_KEY_PREFIX": key_prefix,
             "GRIMOIRE_EMBEDDED_WORKER": "0", "GRIMOIRE_LOG_FORMAT": "json", "GRIMOIRE_SHUTDOWN_TIMEOUT": "10",
             "GRIMOIRE_STREAM_KEEPALIVE": "1"},
        stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        wait_ready(base, process, timeout=20)

        with httpx.Client(base_url=base, timeout=10) as http:
            match_id = http.post("/v1/matches", json={"game": "spells-and-potions", "seed": 1},
                                 headers={"X-Request-ID": "create-1"}).json()["id"]
            tokens = [http.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"}).json()["token"]
                      for i in range(2)]

        stream_messages: list[dict] = []
        stream_open = threading.Event()

        def follow():
            headers = {"Accept": "application/x-ndjson", "Authorization": f"Bearer {tokens[0]}"}
            with httpx.stream("GET", f"{base}/v1/matches/{match_id}/events", headers=headers, timeout=20) as r:
                stream_open.set()
                for line in r.iter_lines():
                    stream_messages.append(json.loads(line))
                    if stream_messages[-1]["type"] == "end":
                        return

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        assert stream_open.wait(10)

        # a request in flight: its headers and half its body are in, the rest comes after SIGTERM
        body = json.dumps({"game": "spells-and-potions", "seed": 2}).encode()
        slow = socket.create_connection(("127.0.0.1", port), timeout=15)
        slow.sendall(b"POST /v1/matches HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                     b"X-Request-ID: in-flight-1\r\n"
                     + f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:10])
        time.sleep(0.3)

        process.send_signal(signal.SIGTERM)
        follower.join(10)
        assert stream_messages and stream_messages[-1] == {"type": "end", "reason": "shutdown"}

        deadline = time.monotonic() + 5
        while True:  # no new connections once shutdown began
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            except OSError:
                break
            assert time.monotonic() < deadline, "the service still accepts connections after SIGTERM"
            time.sleep(0.05)
        assert process.poll() is None, "the service quit with a request in flight"

        slow.sendall(body[10:])
        response = b""
        while b"\r\n\r\n" not in response or len(response.split(b"\r\n\r\n", 1)[1]) < 10:
            chunk = slow.recv(65536)
            if not chunk:
                break
            response += chunk
        slow.close()
        status_line, _, rest = response.partition(b"\r\n")
        assert status_line.startswith(b"HTTP/1.1 201"), response[:300]
        assert b"x-request-id: in-flight-1" in rest.lower()

        assert process.wait(timeout=15) in (0, -signal.SIGTERM)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    stderr.seek(0)
    lines = [line for line in stderr.read().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line is a JSON object
    access = [r for r in records if r["logger"] == "grimoire.access"]
    assert {"create-1", "in-flight-1"} <= {r.get("request_id") for r in access}
    assert any(r.get("route") is None and r["path"] == "/v1/matches" and r["status"] == 201 for r in access)
    text = "\n".join(lines)
    assert not any(token in text or token.split(".")[-1] in text for token in tokens)
