"""/metrics for Prometheus, structured logs with request ids that reach jobs, no secrets in logs."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import httpx
import pytest

import redis
from prometheus_client.parser import text_string_to_metric_families

from service.store.embedded import free_port
from service.logs import JsonFormatter, job_context, job_meta, redact, request_id
from service.metrics import observe_bot_move, time_bot_move
from tests.support.processes import wait_ready


def scrape(client) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples, name, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def started_match(client) -> tuple[str, list[str]]:
    match_id = client.post("/v1/matches", json={"game": "high-card", "seed": 4}).json()["id"]
    tokens = [client.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"}).json()["token"] for i in range(2)]
    return match_id, tokens


def test_metrics_count_requests_actions_rejections_and_conflicts(client):
    before = scrape(client)
    match_id, tokens = started_match(client)
    auth = {"Authorization": f"Bearer {tokens[0]}"}
    legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth).json()
    accepted = client.post(f"/v1/matches/{match_id}/actions", json={"action": legal["actions"][0]},
                           headers={**auth, "If-Match": '"0"'})
    assert accepted.status_code == 200
    stale = client.post(f"/v1/matches/{match_id}/actions", json={"action": legal["actions"][1]},
                        headers={"Authorization": f"Bearer {tokens[1]}", "If-Match": '"0"'})
    assert stale.status_code == 412
    illegal = client.post(f"/v1/matches/{match_id}/actions", json={"action": {"type": "play", "card": 99}},
                          headers={"Authorization": f"Bearer {tokens[1]}", "If-Match": '"1"'})
    assert illegal.status_code in (409, 422)
    client.get("/v1/matches/no-such-match")
    after = scrape(client)

    def grew(name, by=1, **labels):
        assert value(after, name, **labels) - value(before, name, **labels) == by, (name, labels)

    grew("grimoire_http_requests_total", method="POST", route="/v1/matches", status="201")
    grew("grimoire_http_requests_total", method="POST", route="/v1/matches/{match_id}/seats", status="201", by=2)
    grew("grimoire_http_requests_total", method="POST", route="/v1/matches/{match_id}/actions", status="412")
    grew("grimoire_http_requests_total", method="GET", route="/v1/matches/{match_id}", status="404")
    grew("grimoire_http_request_duration_seconds_count", method="POST", route="/v1/matches/{match_id}/actions", by=3)
    grew("grimoire_actions_accepted_total", game="high-card")
    grew("grimoire_actions_rejected_total", code="version_conflict")
    grew("grimoire_actions_rejected_total", code=illegal.json()["code"])
    grew("grimoire_version_conflicts_total")
    assert ("grimoire_live_subscribers", ()) in after
    assert not any("no-such-match" in str(labels) for _, labels in after), "raw paths are never labels"


def test_queue_depth_is_read_from_the_queue_redis(client, redis_url):
    connection = redis.Redis.from_url(redis_url)
    name = "ops-test-depth"
    try:
        connection.sadd("rq:queues", f"rq:queue:{name}")
        connection.rpush(f"rq:queue:{name}", "a", "b", "c")
        assert value(scrape(client), "grimoire_queue_depth", queue=name) == 3
    finally:
        connection.srem("rq:queues", f"rq:queue:{name}")
        connection.delete(f"rq:queue:{name}")
        connection.close()


def test_bot_move_time_is_a_histogram_the_worker_feeds(client):
    before = value(scrape(client), "grimoire_bot_move_seconds_count", game="high-card")
    observe_bot_move("high-card", 0.004)
    with time_bot_move("high-card"):
        pass
    after = scrape(client)
    assert value(after, "grimoire_bot_move_seconds_count", game="high-card") == before + 2
    assert value(after, "grimoire_bot_move_seconds_bucket", game="high-card", le="0.005") >= 2


def test_each_request_gets_an_id_echoed_and_logged(client, caplog):
    with caplog.at_level(logging.INFO, logger="grimoire.access"):
        given = client.get("/healthz", headers={"X-Request-ID": "trace-42"})
        made = client.get("/healthz")
        refused = client.get("/healthz", headers={"X-Request-ID": "bad id with spaces"})
    assert given.headers["x-request-id"] == "trace-42"
    assert len(made.headers["x-request-id"]) == 32
    assert refused.headers["x-request-id"] != "bad id with spaces"
    lines = [json.loads(JsonFormatter().format(r)) for r in caplog.records if r.name == "grimoire.access"]
    assert {"trace-42", made.headers["x-request-id"]} <= {line["request_id"] for line in lines}
    line = next(line for line in lines if line["request_id"] == "trace-42")
    assert line["status"] == 200 and line["path"] == "/healthz" and line["level"] == "info"


def test_the_request_id_reaches_jobs_through_their_meta():
    class Job:
        meta: dict = {}

    token = request_id.set("req-7")
    try:
        meta = job_meta({"other": 1})
    finally:
        request_id.reset(token)
    assert meta == {"other": 1, "request_id": "req-7"}
    job = Job()
    job.meta = meta
    record = logging.LogRecord("workers.bots", logging.INFO, __file__, 1, "moved", (), None)
    with job_context(job) as rid:
        assert rid == "req-7" and request_id.get() == "req-7"
        assert json.loads(JsonFormatter().format(record))["request_id"] == "req-7"
    assert request_id.get() is None
    with job_context(object()) as fresh:  # a job enqueued outside any request gets an id of its own
        assert fresh and request_id.get() == fresh


def test_rq_jobs_run_under_their_request_id(redis_url):
    from rq import Queue, SimpleWorker

    from service.logs import RequestIdJob

    connection = redis.Redis.from_url(redis_url)
    queue = Queue("ops-test-request-id", connection=connection, job_class=RequestIdJob)
    token = request_id.set("req-rq-1")
    try:
        job = queue.enqueue("service.logs.request_id.get", meta=job_meta())
    finally:
        request_id.reset(token)
    SimpleWorker([queue], connection=connection, job_class=RequestIdJob).work(burst=True)
    job.refresh()
    assert job.return_value() == "req-rq-1"
    queue.delete(delete_jobs=True)
    connection.close()


def test_secrets_never_reach_a_log_line():
    token = "gt.AbCdEfGhIjKl.q9Wx_secretsecretsecretsecretsecretsecret-x"
    assert "secret" not in redact(f"refused {token}")
    assert "s3cr3t" not in redact("Authorization: Bearer s3cr3t-value")
    assert "hunter2" not in redact("redis://:hunter2@redis:6379/0")
    record = logging.LogRecord("grimoire", logging.WARNING, __file__, 1, "token %s", (token,), None)
    record.header = f"Bearer {token}"
    line = JsonFormatter().format(record)
    assert "secretsecret" not in line and json.loads(line)["header"] == "Bearer ***"


@pytest.mark.parametrize("text", [
    "BEARER s3cr3t", "bEaReR s3cr3t", "REDIS://:hunter2@h:6379/0", "rediss://u:hunter2@h/0",
    "x gt.AbCdEfGhIjKl.q9Wx_secretsecret y",
    # letters Python's case-insensitive match takes as i or s, which str.lower() does not give
    "REDİS://:hunter2@h/0", "redıs://:hunter2@h/0", "rediſ://:hunter2@h/0",
    "/v1/matches/abc/actions", "GET", "", "café gt. Bearer",
])
def test_redaction_looks_before_it_substitutes_but_masks_the_same(text):
    """redact() skips its substitutions for text that holds no secret's marks: the result is the same."""
    from service.logs import _SECRETS

    masked = text
    for pattern, replacement in _SECRETS:
        masked = pattern.sub(replacement, masked)
    assert redact(text) == masked


def test_serve_can_keep_metrics_off_the_public_port(redis_url, key_prefix, tmp_path):
    """Issue #23 item 9: with GRIMOIRE_METRICS_PORT, /metrics answers there only, and the API only on its
    own port; the server does not name itself (item 8: no ``Server: uvicorn``)."""
    port, metrics_port = free_port(), free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
        env={**os.environ, "REDIS_URL": redis_url, "GRIMOIRE_KEY_PREFIX": key_prefix,
             "GRIMOIRE_EMBEDDED_WORKER": "0", "GRIMOIRE_METRICS_PORT": str(metrics_port)},
        stdout=subprocess.DEVNULL, stderr=open(tmp_path / "serve.log", "w"))
    try:
        public, private = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{metrics_port}"
        wait_ready(public, process, timeout=20)
        games = httpx.get(f"{public}/v1/games")
        assert games.status_code == 200 and "server" not in games.headers
        assert httpx.get(f"{public}/metrics").status_code == 404
        scraped = httpx.get(f"{private}/metrics")
        assert scraped.status_code == 200 and "grimoire_http_requests_total" in scraped.text
        assert httpx.get(f"{private}/v1/games").status_code == 404
        assert httpx.get(f"{private}/readyz").status_code == 200  # the probes may use either port
    finally:
        process.terminate()
        process.wait(timeout=20)
