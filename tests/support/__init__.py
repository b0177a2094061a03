"""Test support: the tiny high-card game and the set of games the test app hosts."""


def app_games_for_tests() -> dict:
    """The hosted games plus the tiny test game."""
    from service.games import all_games

    from .high_card import GAME

    return {**all_games(), GAME.id: GAME}


def open_collection(game, variant: str | None, seats: int | None = None) -> dict:
    """The options that let anonymous seats and bots play ``variant`` of ``game``: ``open_collection`` where
    the match would otherwise be played with owned collections (Casting Stones' Advanced Game), else none."""
    if game.collectibles is None:
        return {}
    options = game.check_options(variant, {}, seats or game.min_seats)
    return {"open_collection": True} if game.collectibles.policy(options) == "owned" else {}


def play_random(http, match_id: str, tokens: list[str], actions: int, chooser) -> int:
    """Submit up to ``actions`` random legal actions through ``http`` (an httpx client, the TestClient
    included), each as a seat to act, at the version read; return the last version (0 if none)."""
    version = 0
    for _ in range(actions):
        match = http.get(f"/v1/matches/{match_id}").json()
        if match["status"] == "finished":
            break
        seat = chooser.choice(match["to_act"])
        headers = {"Authorization": f"Bearer {tokens[seat]}"}
        legal = http.get(f"/v1/matches/{match_id}/legal-actions", headers=headers).json()
        response = http.post(f"/v1/matches/{match_id}/actions", json={"action": chooser.choice(legal["actions"])},
                             headers={**headers, "If-Match": f'"{legal["version"]}"'})
        assert response.status_code == 200, response.text
        version = response.json()["version"]
    return version
