"""Stream clients for the live tests: NDJSON, SSE and graphql-transport-ws, each yielding
messages in one shape: ``{"type": "action" | "turn" | "keepalive" | "end" | "problem" | "closed", ...}``."""

from __future__ import annotations

import json
from typing import Any, AsyncIterator

import httpx
import websockets

EVENTS = """subscription Follow($id: ID!, $after: Int!) { matchEvents(matchId: $id, after: $after) { __typename
  ... on MatchEvent { version seat action { __typename } } ... on StreamEnded { reason message }
  ... on Problem { code message } } }"""
TURNS = """subscription Turns { myTurns { __typename ... on TurnNotice { matchId seat version yourTurn }
  ... on StreamEnded { reason message } ... on Problem { code message } } }"""


async def http_stream(base: str, path: str, *, fmt: str = "ndjson", headers: dict | None = None,
                      params: dict | None = None, timeout: float = 30) -> AsyncIterator[dict[str, Any]]:
    """A REST stream's messages; a refusal is one ``problem`` message with the status."""
    headers = dict(headers or {})
    params = dict(params or {})
    if fmt == "ndjson":
        headers["Accept"] = "application/x-ndjson"
    async with httpx.AsyncClient(base_url=base, timeout=timeout) as http:
        async with http.stream("GET", path, headers=headers, params=params) as response:
            if response.status_code != 200:
                body = json.loads(await response.aread())
                yield {**body, "type": "problem", "status": response.status_code}
                return
            if fmt == "ndjson":
                async for line in response.aiter_lines():
                    if line:
                        yield json.loads(line)
                return
            event, data, event_id = None, None, None
            async for line in response.aiter_lines():
                if line.startswith(": "):
                    yield {"type": "keepalive"}
                elif line.startswith("id: "):
                    event_id = line[4:]
                elif line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    data = json.loads(line[6:])
                elif not line and event is not None:
                    yield {"type": event, **data, **({"id": event_id} if event_id else {})}
                    event, data, event_id = None, None, None


def _bearer(token: str | None) -> dict:
    return {"Authorization": f"Bearer {token}"} if token is not None else {}


def events(base: str, match_id: str, token: str | None = None, after: int = 0, fmt: str = "ndjson",
           last_event_id: int | None = None):
    headers = _bearer(token)
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    return http_stream(base, f"/v1/matches/{match_id}/events", fmt=fmt, headers=headers, params={"after": after})


def turns(base: str, tokens: list[str], fmt: str = "ndjson"):
    return http_stream(base, "/v1/turns", fmt=fmt, headers={"Seat-Tokens": ", ".join(tokens)})


async def subscription(base: str, init: Any, query: str, variables: dict | None = None,
                       timeout: float = 30) -> AsyncIterator[dict[str, Any]]:
    """One graphql-transport-ws subscription's messages, ending with ``end``/``problem`` (then ``complete``)
    or ``closed`` (the server closed the socket, with its code)."""
    url = base.replace("http", "ws", 1) + "/graphql"
    async with websockets.connect(url, subprotocols=["graphql-transport-ws"], open_timeout=timeout) as ws:
        try:
            await ws.send(json.dumps({"type": "connection_init", "payload": init}))
            ack = json.loads(await ws.recv())
            if ack["type"] != "connection_ack":
                yield {"type": "problem", "code": "no_ack", "message": str(ack)}
                return
            await ws.send(json.dumps({"id": "1", "type": "subscribe",
                                      "payload": {"query": query, "variables": variables or {}}}))
            while True:
                message = json.loads(await ws.recv())
                if message["type"] == "complete":
                    return
                if message["type"] != "next":
                    yield {"type": "problem", "code": "graphql_error", "message": json.dumps(message)}
                    return
                data = next(iter(message["payload"]["data"].values()))
                kind = data.pop("__typename")
                if kind == "MatchEvent":
                    yield {"type": "action", **data}
                elif kind == "TurnNotice":
                    yield {"type": "turn", **data}
                elif kind == "StreamEnded":
                    yield {"type": "end", **data}
                else:  # GraphQL spells codes as enum values (VERSION_CONFLICT): compare them as REST's
                    yield {"type": "problem", **data, "code": str(data.get("code", "")).lower()}
        except websockets.ConnectionClosed as closed:
            yield {"type": "closed", "code": closed.rcvd.code if closed.rcvd else None}


def match_subscription(base: str, match_id: str, init: Any, after: int = 0):
    return subscription(base, init, EVENTS, {"id": match_id, "after": after})


def turns_subscription(base: str, tokens: list[str]):
    return subscription(base, {"tokens": tokens}, TURNS)
