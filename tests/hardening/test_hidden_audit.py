"""The hidden-information audit (issue #10): for every game and variant, seeded
random matches are played through the REST API, and at every step, for every
seat and the spectator, every identifier hidden from that reader (cards,
stones and tokens in other hands, face-down piles and deck orders, private
collections, the RNG state) is looked for in everything the reader can get:

* its view and legal actions (``GET /v1/matches/{id}``, ``/legal-actions``);
* the events and action of the step, as its history entry (``/history``);
* an error: the acting seat's legal action sent with the reader's token (an
  error that echoed the action would leak it) -- every step, one reader;
* at the end, its live stream from the start (NDJSON), its GraphQL
  ``matchEvents`` subscription (graphql-transport-ws, every field of the
  game's action types) and its replay, built by a real RQ worker, frame by
  frame.

When the match waits on the board itself (McGonagall's chess: ``to_act`` holds
-1), a real RQ worker plays the board's move (``drain``); the audit reads that
move from the action log to keep its own state in step, and meanwhile a seat
sending the board's action is refused like any seat out of turn.

What is hidden comes from the full state (kept beside the match by applying
the same actions: the engines are deterministic), per game, below. An
identifier counts as hidden from a reader at a step if the state hides it
then and neither the reader's views so far showed it nor an event addressed
to the reader alone revealed it (a card once shown face up, a stone the
reader owns too, or a card it looked at may be named later).
"""

from __future__ import annotations

import json

import pytest

from service.engine import BOARD_SEAT, Rng
from service.games import all_games
from tests.games.quidditch.invariants import hidden_ids as quidditch_hidden
from tests.support import open_collection
from tests.games.spells_and_potions.helpers import hidden_from as spells_hidden, strings_in
from tests.workers.test_jobs import log_entries

def casting_stones_hidden(state: dict, seat: int | None) -> set[str]:
    """000, THE VAULT (ADVANCED): "What is stored in your Vault is for you and you alone"; a brought
    collection is private until both are in. (Basic and Intermediate hide nothing on the table.)"""
    from service.games.casting_stones import GAME
    hidden: set[str] = set()
    shared = GAME._rules(state).shared_vault
    for other in (0, 1):
        if other == seat:
            continue
        if not shared:
            hidden |= set(state["vault"][other]) | set(state["vc"][other])
        pending = state.get("br", [None, None])[other]
        if pending:
            hidden |= set(pending["stones"]) | set(pending.get("cards", []))
    if seat is not None and "br" in state and None in state["br"]:
        # While collections are brought, the themed collections are a public menu: a stone named on
        # the reader's own menu is no secret; which collection the other player brought is.
        hidden -= {x for action in GAME.legal_actions(state, seat) for x in action.get("stones", []) +
                   action.get("cards", [])}
    return hidden


def sorcerers_stone_hidden(state: dict, seat: int | None) -> set[str]:
    """002, SNAPE'S CHALLENGE: potions "face down" on the board, the cards each player places "face down
    on the table in front of them", and the draw pile. (The other boards' secrets -- Hagrid's hands and
    tokens, Sprout's tokens, the silver key's place, the Mirror's cards -- have no names of their own; the
    boards' tests check that swapping them changes no view.) Potion ids are unique; Incantation ids are
    their kind, so only potions are looked for."""
    from service.games.sorcerers_stone import snape
    board = state["boards"].get("snape")
    if not board:
        return set()
    hidden = {c for c, up in zip(board["spaces"], board["up"]) if not up}
    hidden |= set(board["deck"])
    for other, hand in enumerate(board["hands"]):
        if other != seat:
            hidden |= set(hand)
    # "that player shows the other players his/her cards": a claim's cards are public from then on
    shown = {c for claim in board["claims"] for c in claim["cards"]}
    return {c for c in hidden - shown if snape.is_potion(c)}


HIDDEN = {
    "sorcerers-stone": sorcerers_stone_hidden,
    "casting-stones": casting_stones_hidden,
    "quidditch": quidditch_hidden,
    "spells-and-potions": spells_hidden,
}

#: (game, variant, seats): every variant, Spells and Potions at 2, 3 and 4 wizards.
CASES = [
    ("casting-stones", "basic", 2), ("casting-stones", "intermediate", 2), ("casting-stones", "advanced", 2),
    ("quidditch", None, 2),
    ("spells-and-potions", "ritual", 2), ("spells-and-potions", "ritual", 3), ("spells-and-potions", "practice-3", 4),
    ("sorcerers-stone", "snape", 3), ("sorcerers-stone", "snape", 4), ("sorcerers-stone", "chain", 3),
]
#: Long matches are audited for their first steps only (every kind of step occurs early), but a whole chain.
MAX_STEPS = {"chain": 3000}
DEFAULT_MAX_STEPS = 400


def auth(token: str | None) -> dict:
    return {"Authorization": f"Bearer {token}"} if token else {}


class Reader:
    """One seat (or the spectator) and what it has legitimately seen so far."""

    def __init__(self, seat: int | None, token: str | None):
        self.seat, self.token = seat, token
        self.seen: set[str] = set()
        self.secrets_at: dict[int, set[str]] = {}  # version -> what was hidden from it then


def check(reader: Reader, version: int, what: str, data) -> None:
    """No string inside the JSON ``data`` the reader got is hidden from it at ``version``."""
    leaked = reader.secrets_at[version] & strings_in(data)
    assert not leaked, f"seat {reader.seat} reads hidden {sorted(leaked)[:5]} in {what} at version {version}"


def subscription_updates(client, game, match_id: str, token: str | None) -> list[dict]:
    """Every ``matchEvents`` message of a finished match, over graphql-transport-ws, for ``token``'s seat."""
    from tests.api.test_play_through import game_fragments

    _view, actions = game_fragments(game)
    query = ("subscription($id: ID!) { matchEvents(matchId: $id, after: 0) { __typename "
             f"... on MatchEvent {{ version seat events toAct action {{ __typename {actions} }} }} }} }}")
    updates = []
    with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        ws.send_json({"type": "connection_init", "payload": {"token": token} if token else {}})
        assert ws.receive_json()["type"] == "connection_ack"
        ws.send_json({"id": "1", "type": "subscribe", "payload": {"query": query, "variables": {"id": match_id}}})
        while True:
            message = ws.receive_json()
            if message["type"] == "complete":
                return updates
            assert message["type"] == "next" and "errors" not in message["payload"], message
            update = message["payload"]["data"]["matchEvents"]
            if update["__typename"] == "MatchEvent":  # the last message is a StreamEnded, holding nothing hidden
                updates.append(update)


@pytest.mark.parametrize("game_id, variant, seats", CASES)
def test_nothing_hidden_reaches_a_reader(client, drain, rq_connection, key_prefix, game_id, variant, seats):
    game = all_games()[game_id]
    hidden_from = HIDDEN[game_id]
    body = {"game": game_id, "seats": seats, "seed": 7, **({"variant": variant} if variant else {}),
            "options": open_collection(game, variant, seats)}
    created = client.post("/v1/matches", json=body)
    assert created.status_code == 201, created.text
    match_id = created.json()["id"]
    tokens = [client.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"}).json()["token"]
              for i in range(seats)]
    readers = [Reader(None, None)] + [Reader(s, tokens[s]) for s in range(seats)]
    options = game.check_options(variant, {}, seats)
    state = game.setup(options, seats, 7)
    chooser = Rng(99)
    version = 0
    audited = 0
    while True:
        rng_state = str(state["rng"])
        for reader in readers:
            reader.secrets_at[version] = (hidden_from(state, reader.seat) - reader.seen) | {rng_state}
            match = client.get(f"/v1/matches/{match_id}", headers=auth(reader.token))
            assert match.status_code == 200 and match.json()["version"] == version
            check(reader, version, "the view", match.json())
            reader.seen |= strings_in(match.json()["view"])
            legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth(reader.token)).json()
            check(reader, version, "the legal actions", legal)
            if version:
                entry = client.get(f"/v1/matches/{match_id}/history", params={"after": version - 1},
                                   headers=auth(reader.token)).json()["entries"]
                assert [e["version"] for e in entry] == [version]
                check(reader, version, "the history", entry)
            audited += 1
        if game.result(state) is not None or version >= MAX_STEPS.get(variant, DEFAULT_MAX_STEPS):
            break
        seat = chooser.choice(sorted(game.to_act(state)))
        action = chooser.choice(game.legal_actions(state, seat))
        waiting = [s for s in range(seats) if s not in game.to_act(state)]
        if waiting:  # a seat that may not act now sends the action: refused, and the error must not echo it
            prober = readers[1 + waiting[version % len(waiting)]]
            refused = client.post(f"/v1/matches/{match_id}/actions", json={"action": action},
                                  headers={**auth(prober.token), "If-Match": f'"{version}"'})
            assert refused.status_code == 409, refused.text
            check(prober, version, "an error", refused.json())
        if seat == BOARD_SEAT:  # the board's move is the workers' to play; read it back from the log
            drain()
            logged = log_entries(rq_connection, key_prefix, match_id)[version]
            assert logged["version"] == version + 1 and int(logged["seat"]) == BOARD_SEAT
            action = json.loads(logged["action"])
        else:
            accepted = client.post(f"/v1/matches/{match_id}/actions", json={"action": action},
                                   headers={**auth(tokens[seat]), "If-Match": f'"{version}"'})
            assert accepted.status_code == 200, accepted.text
        state, events = game.apply(state, seat, action)
        version += 1
        for reader in readers:  # what a step shows a reader privately ("look at a card") it knows from then on
            reader.seen |= {x for e in events if reader.seat in e.get("audience", ()) for x in strings_in(e)}

    finished = game.result(state) is not None
    for reader in readers:
        if finished:
            stream = client.get(f"/v1/matches/{match_id}/events", params={"format": "ndjson"},
                                headers=auth(reader.token))
            messages = [json.loads(line) for line in stream.text.splitlines() if line]
            actions = [m for m in messages if m["type"] == "action"]
            assert [m["version"] for m in actions] == list(range(1, version + 1))
            for message in actions:
                check(reader, message["version"], "the stream", message)
            updates = subscription_updates(client, game, match_id, reader.token)
            assert [u["version"] for u in updates] == list(range(1, version + 1))
            for update in updates:
                check(reader, update["version"], "the GraphQL subscription", update)
            if reader.seat is None:
                continue  # the spectator replay shows everything, by design, once the match is over
            started = client.post(f"/v1/matches/{match_id}/replays", json={"seat": reader.seat})
            assert started.status_code == 202, started.text
            drain()
            replay = client.get(f"/v1/replays/{started.json()['id']}").json()["replay"]
            assert replay["verified"] and len(replay["frames"]) == version + 1
            for frame in replay["frames"]:
                check(reader, frame["version"], "the replay", frame)
    print(f"{game_id}/{variant}/{seats}: {version} steps, {audited} reader-states audited")
