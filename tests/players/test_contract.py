"""The players' REST routes are in openapi.yaml, and what they answer is what it says (issue 20)."""

from __future__ import annotations

import jsonschema
import yaml

from service.contracts import OPENAPI_PATH
from service.rest.players import routes

from .conftest import bearer, unique_name


def test_every_player_route_is_documented():
    spec = yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))
    documented = {(path, method) for path, ops in spec["paths"].items() for method in ops}
    for route in routes:
        for method in route.methods - {"HEAD"}:
            assert (route.path, method.lower()) in documented, f"{method} {route.path} is not in openapi.yaml"


def test_player_answers_are_as_documented(client, new_player):
    spec = yaml.safe_load(client.get("/openapi.yaml").text)

    def check(response, path: str, method: str = "get"):
        described = spec["paths"][path][method]["responses"][str(response.status_code)]
        schema = described["content"][response.headers["content-type"].split(";")[0]]["schema"]
        jsonschema.Draft202012Validator({**schema, "components": spec["components"]}).validate(response.json())
        return response.json()

    name = unique_name("Cho")
    check(client.post("/v1/players", json={"name": name}), "/v1/players", "post")
    check(client.post("/v1/players", json={"name": name}), "/v1/players", "post")  # 409 name_taken
    player_id, token = new_player()
    _, rival = new_player()
    check(client.get("/v1/players/me", headers=bearer(token)), "/v1/players/me")
    check(client.get(f"/v1/players/{player_id}"), "/v1/players/{player_id}")
    check(client.get("/v1/players/nobody"), "/v1/players/{player_id}")
    check(client.get("/v1/players/me/tokens", headers=bearer(token)), "/v1/players/me/tokens")
    issued = check(client.post("/v1/players/me/tokens", json={}, headers=bearer(token)), "/v1/players/me/tokens",
                   "post")
    check(client.delete(f"/v1/players/me/tokens/{issued['token_id']}", headers=bearer(token)),
          "/v1/players/me/tokens/{token_id}", "delete")
    ask = {"game": "high-card", "rated": True, "turn_seconds": 60}
    check(client.post("/v1/quick-match", json=ask, headers=bearer(token)), "/v1/quick-match", "post")
    check(client.get("/v1/quick-match", headers=bearer(token)), "/v1/quick-match")
    paired = check(client.post("/v1/quick-match", json=ask, headers=bearer(rival)), "/v1/quick-match", "post")
    check(client.delete("/v1/quick-match", headers=bearer(rival)), "/v1/quick-match", "delete")
    check(client.get("/v1/me/matches", headers=bearer(token)), "/v1/me/matches")
    check(client.get("/v1/me/matches", params={"status": "finished"}, headers=bearer(token)), "/v1/me/matches")
    check(client.get("/v1/me/matches"), "/v1/me/matches")
    match_id = paired["last"]["match_id"]
    check(client.post(f"/v1/matches/{match_id}/rematch", headers=bearer(token)), "/v1/matches/{match_id}/rematch",
          "post")
    check(client.get("/v1/leaderboards/high-card"), "/v1/leaderboards/{game_id}")
    check(client.get("/v1/leaderboards/high-card", params={"variant": "nope"}), "/v1/leaderboards/{game_id}")
