"""A bot move is observable: it carries the id of the request that led to it, and its time is measured."""

from prometheus_client import REGISTRY
from rq.job import Job


def bot_moves(game: str) -> float:
    return REGISTRY.get_sample_value("grimoire_bot_move_seconds_count", {"game": game}) or 0.0


def test_a_bot_job_carries_the_request_id_and_its_move_time_is_measured(client, drain, rq_connection):
    before = bot_moves("casting-stones")
    created = client.post("/v1/matches", headers={"X-Request-ID": "req-bot-42"},
                          json={"game": "casting-stones", "bots": [{"seat": 0, "level": "random"}]})
    assert created.status_code == 201, created.text
    client.post(f"/v1/matches/{created.json()['id']}/seats", json={"name": "Ann"},
                headers={"X-Request-ID": "req-join-43"})
    job_ids = [k.decode().removeprefix("rq:job:") for k in rq_connection.scan_iter(match="rq:job:*")
               if created.json()["id"] in k.decode()]
    assert job_ids, "the bot move was not enqueued"
    metas = [Job.fetch(job_id, connection=rq_connection).meta for job_id in job_ids]
    assert any(meta.get("request_id") in {"req-bot-42", "req-join-43"} for meta in metas), metas
    drain()
    assert bot_moves("casting-stones") > before
