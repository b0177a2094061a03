"""Issue #23, "Done when": hostile and careless bodies on every REST route and GraphQL operation.

Hypothesis throws nested, huge, wrongly typed and wrongly encoded bodies (and wrong or missing
media types) at every route that takes a body, and the same payloads as GraphQL variables of
every mutation. Every answer is a 4xx problem (REST) or coded GraphQL errors, never a 5xx; no
match changes; nothing is logged at ERROR. The example budget is fixed for CI; raise it with
GRIMOIRE_FUZZ_EXAMPLES for a longer local run. (Schemathesis keeps fuzzing both contracts with
well-typed data in tests/api/test_fuzz.py.)
"""

import json
import logging
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

EXAMPLES = int(os.environ.get("GRIMOIRE_FUZZ_EXAMPLES", "40"))

BODY_ROUTES = ["/v1/matches", "/v1/matches/{id}/seats", "/v1/matches/{id}/actions", "/v1/matches/{id}/bots",
               "/v1/matches/{id}/replays"]
MUTATIONS = ["createMatch(input: $input) { __typename }", "joinMatch(input: $input) { __typename }",
             "submitAction(input: $input) { __typename }", "addBot(input: $input) { __typename }",
             "leaveSeat(input: $input) { __typename }", "startReplay(input: $input) { __typename }"]
INPUT_TYPES = ["CreateMatchInput", "JoinMatchInput", "SubmitActionInput", "AddBotInput", "LeaveSeatInput",
               "StartReplayInput"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                    st.floats(allow_nan=False), st.text(max_size=40))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)), max_leaves=20)


@st.composite
def nested(draw):
    """JSON nested past the 64-level bound, in arrays or objects, possibly inside a plausible body."""
    depth = draw(st.integers(min_value=65, max_value=3000))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    deep = opener * depth + "1" + closer * depth
    return draw(st.sampled_from([deep, '{"game": "high-card", "options": %s}' % deep,
                                 '{"action": {"type": "play", "card": %s}}' % deep, '{"name": %s}' % deep]))


def encoded(text: str):
    return st.sampled_from([text.encode("utf-16"), text.encode("utf-32"), text.encode("latin-1", "replace"),
                            b"\xff\xfe\x00" + text.encode(), text.encode()])


bodies = st.one_of(
    nested().flatmap(encoded),
    json_values.map(json.dumps).flatmap(encoded),  # wrongly typed: any JSON where an object with fields is due
    st.binary(max_size=300),
    st.integers(min_value=60_000, max_value=80_000).map(lambda n: b'{"name": "' + b"x" * n + b'"}'),  # huge
)
media_types = st.sampled_from([None, "application/json", "application/json; charset=utf-16", "text/plain",
                               "application/x-www-form-urlencoded", "application/merge-patch+json"])


@pytest.fixture(scope="module")
def table(client):
    """One started High Card match and its tokens, and its state to compare against afterwards."""
    match_id = client.post("/v1/matches", json={"game": "high-card"}).json()["id"]
    tokens = [client.post(f"/v1/matches/{match_id}/seats", json={"name": n}).json()["token"] for n in "AB"]
    return match_id, tokens


def snapshot(client, match_id, token):
    return client.get(f"/v1/matches/{match_id}", headers={"Authorization": f"Bearer {token}"}).json()


@pytest.fixture
def no_errors_logged(caplog):
    caplog.set_level(logging.WARNING)
    yield
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(route=st.sampled_from(BODY_ROUTES), body=bodies, media_type=media_types)
def test_rest_refuses_hostile_bodies_with_a_4xx_problem(client, table, route, body, media_type, caplog):
    match_id, tokens = table
    before = snapshot(client, match_id, tokens[0])
    headers = {"Authorization": f"Bearer {tokens[0]}", "If-Match": f'"{before["version"]}"'}
    if media_type:
        headers["Content-Type"] = media_type
    caplog.clear()
    response = client.post(route.format(id=match_id), content=body, headers=headers)
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/problem+json")
    assert isinstance(response.json()["code"], str)
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    after = snapshot(client, match_id, tokens[0])
    assert after["version"] == before["version"] and after["view"] == before["view"]


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(operation=st.integers(min_value=0, max_value=len(MUTATIONS) - 1), variables=st.one_of(
    nested(), json_values.map(lambda value: json.dumps({"input": value}))), raw=st.booleans())
def test_graphql_refuses_hostile_variables_with_coded_errors(client, table, operation, variables, raw, caplog):
    match_id, tokens = table
    before = snapshot(client, match_id, tokens[0])
    document = f"mutation($input: {INPUT_TYPES[operation]}!) {{ {MUTATIONS[operation]} }}"
    body = ('{"query": %s, "variables": %s}' % (json.dumps(document), variables)).encode()
    if raw:
        body = body.decode().encode("utf-16")
    caplog.clear()
    response = client.post("/graphql", content=body, headers={"Authorization": f"Bearer {tokens[0]}",
                                                              "Content-Type": "application/json"})
    assert response.status_code < 500, response.text[:300]
    answer = response.json()
    if response.status_code >= 400 or answer.get("data") is None:
        assert answer["errors"]  # refused as a whole: GraphQL errors, never a bare 4xx page
    assert all(isinstance(error["extensions"]["code"], str) for error in answer.get("errors") or ())
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    after = snapshot(client, match_id, tokens[0])
    assert after["version"] == before["version"] and after["view"] == before["view"]
