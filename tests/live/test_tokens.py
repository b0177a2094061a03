"""One rule for tokens on every channel (issue: "subscriptions downgrade a bad token to
spectator"): a non-empty token that holds no seat in the match is ``invalid_token`` on REST,
GraphQL queries and mutations, both subscriptions, SSE and NDJSON; no token is the spectator
(or ``token_required`` where a seat is needed); another seat's token acts and sees as that seat only.

Real uvicorn server (the session's ``live_server``), real Redis.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from service.app import create_app
from tests.live import clients
from tests.live.conftest import ThreadedServer

pytestmark = pytest.mark.anyio

READ = """query Read($id: ID!) { match(id: $id) { __typename ... on Match { mySeat } ... on Problem { code } } }"""
LEAVE = """mutation Leave($input: LeaveSeatInput!) { leaveSeat(input: $input) { __typename
  ... on SeatLeft { seat } ... on Problem { code } } }"""
CASES = ["none", "other_seat", "other_match", "garbage", "revoked"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def _match(http: httpx.AsyncClient, seats: int = 2) -> tuple[str, list[str]]:
    match_id = (await http.post("/v1/matches", json={"game": "high-card", "seed": 8})).json()["id"]
    tokens = [(await http.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"})).json()["token"]
              for i in range(seats)]
    return match_id, tokens


@pytest.fixture
async def world(live_server):
    """Match A after one round (versions 1 and 2: seat 0 then seat 1 played); match B; match C whose
    seat 1 left (its token revoked)."""
    async with httpx.AsyncClient(base_url=live_server, timeout=10) as http:
        a, (a0, a1) = await _match(http)
        b, (b0, _) = await _match(http)
        c, (_, c1) = await _match(http)
        for token in (a0, a1):
            hand = (await http.get(f"/v1/matches/{a}", headers={"Authorization": f"Bearer {token}"})).json()
            legal = (await http.get(f"/v1/matches/{a}/legal-actions",
                                    headers={"Authorization": f"Bearer {token}"})).json()
            sent = await http.post(f"/v1/matches/{a}/actions", json={"action": legal["actions"][0]},
                                   headers={"Authorization": f"Bearer {token}", "If-Match": f'"{hand["version"]}"'})
            assert sent.status_code == 200, sent.text
        left = await http.delete(f"/v1/matches/{c}/seats/1", headers={"Authorization": f"Bearer {c1}"})
        assert left.status_code == 200, left.text
    return {"base": live_server, "a": a, "a0": a0, "a1": a1, "b": b, "b0": b0, "c": c, "c1": c1}


def _case(world: dict, case: str) -> tuple[str, str | None, list[str]]:
    """(match followed, the token presented, the tokens a "my matches" stream lists)."""
    forged = f"gt.{world['a']}.{world['b0'].split('.')[2]}"  # another match's secret under A's id
    return {
        "none": (world["a"], None, []),
        "other_seat": (world["a"], world["a1"], [world["a1"]]),
        "other_match": (world["a"], world["b0"], [forged]),
        "garbage": (world["a"], "not-a-token", ["not-a-token"]),
        "revoked": (world["c"], world["c1"], [world["c1"]]),
    }[case]


async def _first(stream, until_version: int | None = None) -> list[dict]:
    """The stream's messages up to a refusal, an end, or the update at ``until_version``."""
    seen = []
    async with asyncio.timeout(15):
        async for message in stream:
            if message["type"] == "keepalive":
                continue
            seen.append(message)
            if message["type"] != "action" or message.get("version") == until_version:
                break
    return seen


def _refused(messages: list[dict], code: str) -> bool:
    return len(messages) == 1 and messages[0]["type"] == "problem" and messages[0]["code"] == code


@pytest.mark.parametrize("case", CASES)
async def test_rest_and_graphql_queries_and_mutations(world, case):
    match_id, token, _ = _case(world, case)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(base_url=world["base"], timeout=10) as http:
        rest = await http.get(f"/v1/matches/{match_id}", headers=headers)
        read = (await http.post("/graphql", json={"query": READ, "variables": {"id": match_id}},
                                headers=headers)).json()["data"]["match"]
        # a mutation naming seat 0: only seat 0's own token may give it up
        leave = (await http.post("/graphql", headers=headers, json={"query": LEAVE, "variables": {"input": {
            "matchId": match_id, "seat": 0}}})).json()["data"]["leaveSeat"]
    if case in ("other_match", "garbage", "revoked"):
        assert rest.status_code == 401 and rest.json()["code"] == "invalid_token"
        assert read["__typename"] == "InvalidToken" and read["code"].lower() == "invalid_token"
        assert leave["code"].lower() == "invalid_token"
    elif case == "none":
        assert rest.status_code == 200 and rest.json()["my_seat"] is None
        assert read["mySeat"] is None
        assert leave["code"].lower() == "token_required"
    else:  # seat 1's token reads and acts as seat 1, never as seat 0
        assert rest.json()["my_seat"] == 1 and read["mySeat"] == 1
        assert leave["code"].lower() == "not_your_seat"


@pytest.mark.parametrize("channel", ["ndjson", "sse", "subscription"])
@pytest.mark.parametrize("case", CASES)
async def test_match_streams(world, case, channel):
    match_id, token, _ = _case(world, case)
    base = world["base"]
    if channel == "subscription":
        stream = clients.match_subscription(base, match_id, {"token": token} if token else {})
    else:
        stream = clients.events(base, match_id, token, fmt=channel)
    messages = await _first(stream, until_version=2)
    if case in ("other_match", "garbage", "revoked"):
        assert _refused(messages, "invalid_token"), messages
        if channel != "subscription":
            assert messages[0]["status"] == 401
        return
    assert [m["version"] for m in messages] == [1, 2], messages
    seats = [m["seat"] for m in messages]
    assert sorted(seats) == [0, 1]
    # an action is shown to the seat that made it only: seat 0's never reaches these followers
    shown = {m["seat"] for m in messages if m["action"] is not None}
    assert shown == (set() if case == "none" else {1}), messages


@pytest.mark.parametrize("channel", ["ndjson", "sse", "subscription"])
@pytest.mark.parametrize("case", CASES)
async def test_my_turns_streams(world, case, channel):
    _, _, listed = _case(world, case)
    base = world["base"]
    if channel == "subscription":
        stream = clients.turns_subscription(base, listed)
    else:
        stream = clients.turns(base, listed, fmt=channel)
    messages = await _first(stream)
    if case == "none":
        assert _refused(messages, "token_required"), messages
    elif case == "other_seat":
        assert messages[0]["type"] == "turn", messages  # match A waits on both seats after a round
        assert messages[0]["seat"] == 1
    else:
        assert _refused(messages, "invalid_token"), messages


@pytest.mark.parametrize("init", [{"token": 12345}, {"tokens": "gt.x.y"}, {"authorization": "Basic abc"},
                                  {"tokens": [None]}])
async def test_a_subscription_refuses_malformed_tokens(world, init):
    messages = await _first(clients.match_subscription(world["base"], world["a"], init))
    assert _refused(messages, "invalid_token"), messages


async def test_a_stream_ends_when_its_token_is_revoked(settings, games):
    """Seat 1 leaves while following: its stream ends (invalid_token) instead of serving the seat's private
    view to whoever joins it next."""
    server = ThreadedServer(create_app(settings, games=games))
    try:
        await _revoked_mid_stream(server)
    finally:
        server.stop()


async def _revoked_mid_stream(server):
    base = server.base
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        match_id, (_, t1) = await _match(http)
    streams = [clients.events(base, match_id, t1), clients.events(base, match_id, t1, fmt="sse"),
               clients.match_subscription(base, match_id, {"token": t1}), clients.turns(base, [t1]),
               clients.turns_subscription(base, [t1])]
    seen: list[list[dict]] = [[] for _ in streams]

    async def read(stream, into):
        async for message in stream:
            into.append(message)
            if message["type"] in ("end", "problem", "closed"):
                return

    readers = [asyncio.create_task(read(s, into)) for s, into in zip(streams, seen)]
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        async with asyncio.timeout(10):
            while server.app.state.live.followers < len(streams):
                await asyncio.sleep(0.05)
        left = await http.delete(f"/v1/matches/{match_id}/seats/1", headers={"Authorization": f"Bearer {t1}"})
        assert left.status_code == 200
    async with asyncio.timeout(15):
        await asyncio.gather(*readers)
    for messages in seen:
        assert messages[-1] == {"type": "end", "reason": "invalid_token", **(
            {"message": messages[-1]["message"]} if "message" in messages[-1] else {})}, messages
