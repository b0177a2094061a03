"""What REST answers matches what openapi.yaml says it answers: every body of a played match, validated
against the response schema the document gives its operation and status (the schemas clients generate)."""

import jsonschema
import pytest
import yaml

from service.engine import Rng
from service.games import all_games

ACTIONS = 40  # per match: enough for most action and event types to show up, a few seconds per game


@pytest.fixture(scope="module")
def spec(client):
    return yaml.safe_load(client.get("/openapi.yaml").text)


def check(spec, response, path: str, method: str = "get"):
    """Assert that ``response`` is one the document describes for ``method path``."""
    described = spec["paths"][path][method]["responses"][str(response.status_code)]
    media_type = response.headers["content-type"].split(";")[0]
    schema = described["content"][media_type]["schema"]
    jsonschema.Draft202012Validator({**schema, "components": spec["components"]}).validate(response.json())
    return response.json()


@pytest.mark.parametrize("game_id", [*sorted(all_games()), "high-card"])
def test_every_response_of_a_match_is_as_documented(client, spec, game_id):
    created = check(spec, client.post("/v1/matches", json={"game": game_id, "seed": "5351128756732142153"}),
                    "/v1/matches", "post")
    match_id = created["id"]
    seats = len(created["seats"])
    tokens = [check(spec, client.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"}),
                    "/v1/matches/{match_id}/seats", "post")["token"] for i in range(seats)]
    auth = [{"Authorization": f"Bearer {token}"} for token in tokens]
    chooser = Rng(3)
    for _ in range(ACTIONS if game_id != "high-card" else 1000):
        match = check(spec, client.get(f"/v1/matches/{match_id}"), "/v1/matches/{match_id}")
        if match["status"] == "finished" or -1 in match["to_act"]:
            break
        seat = chooser.choice(match["to_act"])
        legal = check(spec, client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth[seat]),
                      "/v1/matches/{match_id}/legal-actions")
        submitted = client.post(f"/v1/matches/{match_id}/actions", json={"action": chooser.choice(legal["actions"])},
                                headers={**auth[seat], "If-Match": f'"{match["version"]}"'})
        check(spec, submitted, "/v1/matches/{match_id}/actions", "post")
    stale = client.post(f"/v1/matches/{match_id}/actions", json={"action": {"type": "pass"}},
                        headers={**auth[0], "If-Match": '"0"'})
    check(spec, stale, "/v1/matches/{match_id}/actions", "post")
    for seat in range(seats):
        check(spec, client.get(f"/v1/matches/{match_id}", headers=auth[seat]), "/v1/matches/{match_id}")
        check(spec, client.get(f"/v1/matches/{match_id}/history", headers=auth[seat]),
              "/v1/matches/{match_id}/history")
    if game_id == "high-card":
        assert match["status"] == "finished" and match["seed"] == "5351128756732142153"
