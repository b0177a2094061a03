"""The GraphQL API through the ASGI app: expected failures are union members,
never `errors`; the document limits hold; GraphiQL is served."""

import pytest

from tests.players.conftest import bearer, play_out

CREATE = """mutation($input: CreateMatchInput!) { createMatch(input: $input) {
  __typename ... on MatchCreated { match { id version status seats { seat joined } } } ... on Problem { code message } } }"""
JOIN = """mutation($input: JoinMatchInput!) { joinMatch(input: $input) {
  __typename ... on SeatJoined { seat token match { mySeat } } ... on Problem { code message } } }"""
SUBMIT = """mutation($input: SubmitActionInput!) { submitAction(input: $input) {
  __typename ... on ActionAccepted { version events duplicate }
  ... on VersionConflict { currentVersion } ... on Problem { code message } } }"""
READ = """query($id: ID!) { match(id: $id) { __typename
  ... on Match { version toAct mySeat view { ... on HighCardView { hand handSizes: hand_sizes } } history { version } }
  ... on Problem { code } } }"""


def gql(client, query, variables=None, token=None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = client.post("/graphql", json={"query": query, "variables": variables or {}}, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def data(client, query, variables=None, token=None):
    body = gql(client, query, variables, token)
    assert "errors" not in body, body
    return body["data"]


def play_first_legal_action(client, match_id, token):
    """Play the seat's first legal action over REST, the match at version 0; returns the action."""
    [action, *_] = client.get(f"/v1/matches/{match_id}/legal-actions", headers=bearer(token)).json()["actions"]
    played = client.post(f"/v1/matches/{match_id}/actions", json={"action": action},
                         headers={**bearer(token), "If-Match": '"0"'})
    assert played.status_code == 200, played.text
    return action


def started(client):
    match = data(client, CREATE, {"input": {"game": "high-card", "seed": "5"}})["createMatch"]["match"]
    tokens = [data(client, JOIN, {"input": {"matchId": match["id"], "name": n}})["joinMatch"]["token"]
              for n in ("Ann", "Bob")]
    return match["id"], tokens


def test_create_join_read(client):
    match_id, (t0, t1) = started(client)
    mine = data(client, READ, {"id": match_id}, t0)["match"]
    assert (mine["__typename"], mine["version"], mine["mySeat"], mine["toAct"]) == ("Match", 0, 0, [0, 1])
    assert len(mine["view"]["hand"]) == 3
    spectator = data(client, READ, {"id": match_id})["match"]
    assert spectator["mySeat"] is None and spectator["view"]["hand"] is None


@pytest.mark.parametrize("game_input, code", [
    ({"game": "snap"}, "UNKNOWN_GAME"),
    ({"game": "high-card", "variant": "speed"}, "INVALID_OPTIONS"),
    ({"game": "high-card", "options": {"rounds": 0}}, "INVALID_OPTIONS"),
    ({"game": "high-card", "options": [1]}, "INVALID_OPTIONS"),
    ({"game": "high-card", "seed": "minus one"}, "INVALID_OPTIONS"),
])
def test_create_failures_are_problems(client, game_input, code):
    result = data(client, CREATE, {"input": game_input})["createMatch"]
    assert result["code"] == code and result["message"]


def test_join_failures_are_problems(client):
    match_id, _ = started(client)
    assert data(client, JOIN, {"input": {"matchId": match_id, "name": "Eve"}})["joinMatch"]["code"] == "MATCH_FULL"
    assert data(client, JOIN, {"input": {"matchId": "nope", "name": "Eve"}})["joinMatch"]["code"] == "MATCH_NOT_FOUND"
    assert data(client, READ, {"id": "nope"})["match"]["code"] == "MATCH_NOT_FOUND"
    assert data(client, READ, {"id": match_id}, "gt_forged")["match"]["code"] == "INVALID_TOKEN"


def test_submit_outcomes(client):
    match_id, (t0, t1) = started(client)
    hand = data(client, READ, {"id": match_id}, t0)["match"]["view"]["hand"]
    play = {"highCard": {"type": "PLAY", "card": hand[0]}}

    def submit(action, version=0, token=t0, key=None):
        payload = {"matchId": match_id, "expectedVersion": version, "action": action}
        if key:
            payload["idempotencyKey"] = key
        return data(client, SUBMIT, {"input": payload}, token)["submitAction"]

    assert submit(play, token=None)["code"] == "TOKEN_REQUIRED"
    assert submit(play, token="gt_forged")["code"] == "INVALID_TOKEN"
    assert submit(play, version=3) == {"__typename": "VersionConflict", "currentVersion": 0,
                                       "code": "VERSION_CONFLICT",
                                       "message": "The match is at version 0, not 3; read it again."}
    assert submit({"highCard": {"type": "PLAY", "card": 99}})["code"] == "ILLEGAL_ACTION"
    assert submit({"highCard": {"type": "PLAY"}})["code"] == "MALFORMED_ACTION"
    accepted = submit(play, key="once")
    assert (accepted["__typename"], accepted["version"], accepted["duplicate"]) == ("ActionAccepted", 1, False)
    assert submit(play, key="once")["duplicate"] is True
    assert submit(play, version=1)["code"] in {"NOT_YOUR_TURN", "ILLEGAL_ACTION"}
    assert data(client, READ, {"id": match_id}, t0)["match"]["history"] == [{"version": 1}]


def test_an_action_for_another_game_is_malformed(client, games):
    from schema.game_types import pascal, screaming
    match_id, (t0, _) = started(client)
    other = next(g for g in games.values() if g.id != "high-card")
    field = pascal(other.id)[0].lower() + pascal(other.id)[1:]
    action = {field: {"type": screaming(sorted(other.action_schemas)[0])}}
    result = data(client, SUBMIT, {"input": {"matchId": match_id, "expectedVersion": 0, "action": action}}, t0)
    assert result["submitAction"]["code"] == "ILLEGAL_ACTION"
    assert "High Card" in result["submitAction"]["message"]


ONE_KEY = "OneOf Input Object 'ActionInput' must specify exactly one key."


@pytest.mark.parametrize("action, message", [
    ({}, ONE_KEY),
    ({"highCard": None}, "Value for member field 'highCard' must be non-null"),
    ({"highCard": {"type": "PLAY"}, "castingStones": None}, ONE_KEY),
], ids=["none", "null", "two"])
def test_action_input_takes_exactly_one_game(client, action, message):
    """@oneOf is checked by GraphQL itself, before any resolver: what reaches one has exactly one game."""
    match_id, (t0, _) = started(client)
    body = gql(client, SUBMIT, {"input": {"matchId": match_id, "expectedVersion": 0, "action": action}}, t0)
    assert body["data"] is None
    [error] = body["errors"]
    assert error["extensions"]["code"] == "graphql_validation_failed"
    assert message in error["message"], error


def test_alias_and_token_limits(client, settings):
    assert "errors" not in gql(client, "{ games { id } }")
    aliases = "{ " + " ".join(f"a{i}: games {{ id }}" for i in range(settings.graphql_max_aliases + 1)) + " }"
    assert "alias" in gql(client, aliases)["errors"][0]["message"].lower()
    tokens = "{ games { " + " ".join(["id"] * settings.graphql_max_tokens) + " } }"
    assert "token" in gql(client, tokens)["errors"][0]["message"].lower()


def test_query_depth_is_limited():
    from schema import build_schema
    from tests.support.high_card import GAME
    schema = build_schema({GAME.id: GAME}, max_depth=1)
    assert schema.execute_sync("{ games { id } }").errors is None
    result = schema.execute_sync("{ games { variants { id } } }")
    assert result.errors and "depth" in result.errors[0].message.lower()


def test_graphiql_is_served_to_browsers(client):
    page = client.get("/graphql", headers={"Accept": "text/html"})
    assert page.status_code == 200 and "graphiql" in page.text.lower()


def test_a_match_event_is_the_history_entry_it_tells_of(client):
    """Each field of a `matchEvents` MatchEvent, as the seat that acted follows from the start, is the entry
    REST's GET /v1/matches/{id}/history gives it, with the match's status and seats to act after it."""
    match_id, (t0, _) = started(client)
    play_first_legal_action(client, match_id, t0)
    [entry] = client.get(f"/v1/matches/{match_id}/history", headers=bearer(t0)).json()["entries"]
    query = """subscription($id: ID!) { matchEvents(matchId: $id, after: 0) { __typename ... on MatchEvent {
      matchId game version seat action { __typename ... on HighCardPlayAction { card } } events status toAct at
      auto { seat } } } }"""
    with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        ws.send_json({"type": "connection_init", "payload": {"token": t0}})
        assert ws.receive_json()["type"] == "connection_ack"
        ws.send_json({"id": "1", "type": "subscribe", "payload": {"query": query, "variables": {"id": match_id}}})
        message = ws.receive_json()
    assert message["type"] == "next", message
    assert message["payload"]["data"]["matchEvents"] == {
        "__typename": "MatchEvent", "matchId": match_id, "game": "high-card", "version": entry["version"],
        "seat": entry["seat"], "action": {"__typename": "HighCardPlayAction", "card": entry["action"]["card"]},
        "events": entry["events"], "status": "ACTIVE", "toAct": [1], "at": entry["at"], "auto": None}


@pytest.mark.parametrize("document,operation", [
    ('subscription { matchEvents(matchId: "%s") { __typename } }', None),
    ('query Q { games { id } } subscription S { matchEvents(matchId: "%s") { __typename } }', "S"),
])
def test_a_subscription_over_http_is_refused_with_the_websocket_named(client, caplog, document, operation):
    """Over plain HTTP strawberry would run a subscription as a query and fail inside (a logged internal
    error, which GraphiQL met when it sent one before it had parsed the editor): a 400 names the websocket."""
    match_id = client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
    response = client.post("/graphql", json={"query": document % match_id, "operationName": operation})
    assert response.status_code == 400, response.text
    [error] = response.json()["errors"]
    assert error["extensions"]["code"] == "malformed_request" and "websocket" in error["message"]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    # the document's query, named, still runs over HTTP
    ran = client.post("/graphql", json={"query": document % match_id, "operationName": "Q"}) if operation else None
    assert ran is None or ran.json()["data"]["games"]


def test_query_cost_is_limited():
    """Issue #10: GraphQL "cost" limits. Lists count at their limit (or default)."""
    from graphql import parse, validate

    from schema import build_schema
    from schema.cost import max_cost_rule
    from tests.support.high_card import GAME
    schema = build_schema({GAME.id: GAME})

    def refusal(query):
        # validated, not run: a document the limit lets through would run the lobby's resolver, which
        # execute_sync cannot await (test_a_costly_query_is_refused_through_the_app runs the wiring)
        errors = [e for e in validate(schema._schema, parse(query), [max_cost_rule(160)]) if e.extensions]
        return errors[0].extensions if errors else None

    assert refusal("{ games { id title } }") is None  # 1 + 10 x 2
    refused = refusal("{ games { id title variants { id title description } } }")  # 1 + 10 x (3 + 10 x 3)
    assert refused == {"code": "query_too_costly", "cost": 331, "max_cost": 160}
    assert refusal("query { lobby(limit: 5) { id game variant } }") is None  # 1 + 5 x 3
    assert refusal("query { lobby(limit: 200) { id } }")["cost"] == 201
    fragment = "query { ...q } fragment q on Query { lobby { id game openSeats } }"  # the default limit: 50
    assert refusal(fragment) is None
    assert refusal(fragment.replace("openSeats", "openSeats created"))["cost"] == 201


def test_a_list_limit_counts_as_the_page_its_resolver_serves():
    """A `limit` given as a variable is unknown when the document is validated: it counts as the largest page the
    resolver serves (history 1,000, lobby 200), not as the default, which let `history(limit: $n)` with n = 1,000
    ask for ten times what it was charged. A literal limit beyond the largest page counts as that page."""
    from schema import build_schema
    from tests.support.high_card import GAME
    schema = build_schema({GAME.id: GAME}, max_cost=0)

    def cost(query):
        [error] = schema.execute_sync(query, variable_values={"n": 1000}).errors
        return error.extensions["cost"]

    history = "query%s { match(id: \"m\") { ... on Match { history(limit: %s) { version } } } }"
    assert cost(history % ("($n: Int!)", "$n")) == 1 + (1 + 1000)
    assert cost(history % ("", "5000")) == 1 + (1 + 1000)
    assert cost(history % ("", "7")) == 1 + (1 + 7)
    assert cost("query($n: Int!) { lobby(limit: $n) { id } }") == 1 + 200
    assert cost("query { lobby(limit: 999) { id } }") == 1 + 200


def test_a_costly_query_is_refused_through_the_app(client, settings):
    history = "history(limit: 1000) { version seat events at }"
    query = ('query($id: ID!) { match(id: $id) { ... on Match { ' + " ".join(
        f"h{i}: {history}" for i in range(6)) + " } } }")
    body = gql(client, query, {"id": "whatever"})
    assert body["errors"][0]["extensions"]["code"] == "query_too_costly"
    assert body["errors"][0]["extensions"]["max_cost"] == settings.graphql_max_cost


def test_leave_seat_revokes_the_token(client):
    match_id, (t0, t1) = started(client)
    leave = """mutation($input: LeaveSeatInput!) { leaveSeat(input: $input) { __typename
      ... on SeatLeft { seat match { seats { seat joined } } } ... on Problem { code } } }"""
    assert data(client, leave, {"input": {"matchId": match_id}})["leaveSeat"]["code"] == "TOKEN_REQUIRED"
    assert data(client, leave, {"input": {"matchId": match_id, "seat": 0}}, t1)["leaveSeat"]["code"] == "NOT_YOUR_SEAT"
    _, (other_match_token, _) = started(client)
    assert data(client, leave, {"input": {"matchId": match_id, "seat": 0}},
                other_match_token)["leaveSeat"]["code"] == "INVALID_TOKEN"
    left = data(client, leave, {"input": {"matchId": match_id}}, t1)["leaveSeat"]
    assert left["seat"] == 1 and left["match"]["seats"][1]["joined"] is False
    assert data(client, READ, {"id": match_id}, t1)["match"]["code"] == "INVALID_TOKEN"
    assert data(client, READ, {"id": match_id}, t0)["match"]["mySeat"] == 0


def test_each_game_is_described_as_rest_lists_it(client):
    """Every field of `games`, the GraphQL spelling of REST's keys: the same values (docs/api.md: one model)."""
    fields = {"id": "id", "title": "title", "minSeats": "min_seats", "maxSeats": "max_seats", "summary": "summary",
              "optionsSchema": "options_schema", "actionSchemas": "action_schemas", "viewSchema": "view_schema",
              "rulesVersion": "rules_version", "variants { id title description }": "variants"}
    answer = gql(client, "{ games { %s } }" % " ".join(fields))["data"]["games"]
    listed = client.get("/v1/games").json()["games"]
    assert [{rest: game[graphql.split(" ")[0]] for graphql, rest in fields.items()} for game in answer] == listed
    assert all(v["id"] and v["title"] and v["description"] for game in listed for v in game["variants"])


#: a match record's scalar GraphQL fields and the keys of the document they are
RECORD_FIELDS = {"format": "format", "matchId": "match_id", "game": "game", "variant": "variant",
                 "rulesVersion": "rules_version", "seedCommitment": "seed_commitment", "revealedSeed": "revealed_seed",
                 "rngSeed": "rng_seed", "initialStateHash": "initial_state_hash", "version": "version",
                 "disclosure": "disclosure", "seat": "seat"}


def test_a_match_records_fields_are_its_documents(client):
    """Each typed field of a match's `record` is the document's own entry (REST's GET /v1/matches/{id}/record)."""
    match_id, (t0, _) = started(client)
    query = "query($id: ID!) { match(id: $id) { ... on Match { record { document seedSource status %s } } } }"
    record = data(client, query % " ".join(RECORD_FIELDS), {"id": match_id}, t0)["match"]["record"]
    document = record["document"]
    assert document == client.get(f"/v1/matches/{match_id}/record", headers={"Authorization": f"Bearer {t0}"}).json()
    assert {graphql: record[graphql] for graphql in RECORD_FIELDS} == \
        {graphql: document[key] for graphql, key in RECORD_FIELDS.items()}
    assert (record["seedSource"], record["status"]) == (document["seed_source"].upper(), document["status"].upper())
    assert document["game"] == "high-card" and document["seat"] == 0


def test_a_played_action_shows_in_a_record_to_its_seat_only_until_the_end(client):
    """A record's action is "shown to the seat that acted, and to everyone once the match is over": before
    the end, another seat and a spectator get the entry with its action null, as in the document."""
    match_id, (t0, t1) = started(client)
    card = play_first_legal_action(client, match_id, t0)["card"]
    query = """query($id: ID!) { match(id: $id) { ... on Match { record { document
      actions { version seat action { __typename ... on HighCardPlayAction { card } } } } } } }"""
    seen = {}
    for who, token in (("actor", t0), ("other seat", t1), ("spectator", None)):
        record = data(client, query, {"id": match_id}, token)["match"]["record"]
        [action] = record["document"]["actions"]
        seen[who] = (action["action"], record["actions"])
    assert seen["actor"] == ({"type": "play", "card": card},
                             [{"version": 1, "seat": 0, "action": {"__typename": "HighCardPlayAction", "card": card}}])
    for who in ("other seat", "spectator"):
        assert seen[who] == (None, [{"version": 1, "seat": 0, "action": None}]), who


def test_a_finished_match_records_fields_are_its_documents(client):
    """After the end (a committed seed, one seat's own entropy), every typed field of a match's `record`,
    its `entropies`, `actions` (each action typed as the game's) and `result` included, is the document's
    own entry, as REST's GET /v1/matches/{id}/record gives it."""
    match_id = data(client, CREATE, {"input": {"game": "high-card"}})["createMatch"]["match"]["id"]
    tokens = [client.post(f"/v1/matches/{match_id}/seats", json=body).json()["token"]
              for body in ({"name": "Ann", "entropy": "Ann's own"}, {"name": "Bob"})]
    play_out(client, match_id, tokens)
    query = """query($id: ID!) { match(id: $id) { ... on Match { record { document %s
      entropies { seat entropy generated }
      actions { version seat stateHash action { __typename ... on HighCardPlayAction { card } } }
      result { winners scores reason cause } } } } }""" % " ".join(RECORD_FIELDS)
    record = data(client, query, {"id": match_id})["match"]["record"]
    document = record["document"]
    assert document == client.get(f"/v1/matches/{match_id}/record").json()
    assert document["status"] == "finished" and document["revealed_seed"] and document["rng_seed"]
    assert {graphql: record[graphql] for graphql in RECORD_FIELDS} == \
        {graphql: document[key] for graphql, key in RECORD_FIELDS.items()}
    assert record["entropies"] == document["entropies"] and document["entropies"][0]["entropy"] == "Ann's own"
    assert len(document["actions"]) > 2 and record["actions"] == [
        {"version": a["version"], "seat": a["seat"], "stateHash": a["state_hash"],
         "action": {"__typename": "HighCardPlayAction", "card": a["action"]["card"]}}
        for a in document["actions"]]
    assert record["result"] == {"winners": document["result"]["winners"], "scores": document["result"]["scores"],
                                "reason": document["result"]["reason"], "cause": document["result"].get("cause")}
