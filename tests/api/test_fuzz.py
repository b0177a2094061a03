"""Schemathesis against a real HTTP server: both APIs, positive and negative
cases, and stateful REST sequences (create, join, act) along the OpenAPI links.

No response may be a 5xx or break the documented schema. The example budget
is fixed for CI; raise it with GRIMOIRE_FUZZ_EXAMPLES for a longer local run.
"""

import os

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis.errors import Flaky
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import missing_required_header, positive_data_acceptance

from schema import build_schema
from service.rest.openapi import build_openapi
from tests.support import app_games_for_tests

EXAMPLES = int(os.environ.get("GRIMOIRE_FUZZ_EXAMPLES", "40"))


def _configure(schema):
    schema.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
                                    max_examples=EXAMPLES, deterministic=True)
    return schema


# The documents the test app serves (its games include the tiny test game). The live
# streams are left out: they stay open until their match ends (tests/live covers them).
rest = _configure(schemathesis.openapi.from_dict(build_openapi(app_games_for_tests()))).exclude(
    path_regex=r"/events$|^/v1/turns$")
graphql = _configure(schemathesis.graphql.from_file(build_schema(app_games_for_tests()).as_str()))


@pytest.fixture(scope="module", autouse=True)
def requests_fuzzed():
    """Prints how many requests the fuzzing sent and how they were answered (docs/security.md quotes it)."""
    from collections import Counter

    from service.metrics import HTTP_REQUESTS

    def count() -> Counter:
        totals: Counter = Counter()
        for metric in HTTP_REQUESTS.collect():
            for sample in metric.samples:
                if sample.name.endswith("_total"):
                    totals[sample.labels.get("status", "?")] += sample.value
        return totals

    before = count()
    yield
    by_status = count() - before
    print(f"\nfuzzed {int(sum(by_status.values()))} requests; by status: "
          + ", ".join(f"{s}: {int(n)}" for s, n in sorted(by_status.items())))


def documented_refusals(case, response) -> list:
    """The checks that do not apply to this answer: each is a refusal the API documents, not a fault.

    - A schema-valid action at a stale version is refused with 412 as HTTP requires, one the rules
      forbid now with 409, and a missing If-Match gets 428 Precondition Required (RFC 6585);
      schemathesis expects other codes for these. Bringing a saved hand is a submit too (an Advanced
      bring action), with the same answers.
    - A page's ``cursor`` is opaque: any string fits its schema, but only one this service gave
      points into the list; another is refused with 400 ``malformed_request``.
    - A saved hand and a trade's lines are checked against what no schema states (the catalogue's
      items, a hand's rules, a name of Unicode letters and digits): what they refuse is 422
      ``invalid_hand`` or ``invalid_trade``.
    """
    if case.operation.label in ("POST /v1/matches/{match_id}/actions", "POST /v1/matches/{match_id}/saved-hand"):
        return [positive_data_acceptance, missing_required_header]
    problem = _problem(response)
    if "cursor" in (case.query or {}) and response.status_code == 400 \
            and problem.get("detail") == "cursor is not one this service gave.":
        return [positive_data_acceptance]
    if response.status_code == 422 and (case.operation.label, problem.get("code")) in (
            ("POST /v1/players/me/hands", "invalid_hand"), ("POST /v1/trades", "invalid_trade")):
        return [positive_data_acceptance]
    return []


def _problem(response) -> dict:
    """The problem document a refusal carries ({} if it is not one: then every check applies)."""
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


@rest.parametrize()
@settings(suppress_health_check=list(HealthCheck), deadline=None)
def test_rest_operations(case, live_server):
    response = case.call(base_url=live_server)
    case.validate_response(response, excluded_checks=documented_refusals(case, response))


@graphql.parametrize()
@settings(suppress_health_check=list(HealthCheck), deadline=None)
def test_graphql_operations(case, live_server):
    response = case.call(base_url=f"{live_server}/graphql")
    assert response.status_code < 500, response.text
    body = response.json()
    if response.status_code == 200 and body.get("errors"):
        # a document that validated must never fail in a resolver: expected failures are union data
        messages = [e.get("message", "") for e in body["errors"]]
        assert all(not m.startswith("Internal") for m in messages), messages


# The operations a seat's token answers for; every other one is asked as the signed-in player.
SEAT_OPERATIONS = ("POST /v1/matches/{match_id}/actions", "DELETE /v1/matches/{match_id}/seats/{seat}",
                   "POST /v1/matches/{match_id}/saved-hand")


def test_rest_stateful_sequences(live_server):
    """Sequences along the OpenAPI links (create, join, act), signed in as a player, against one
    server whose state carries over.

    Because the state carries over, replaying a sequence can take another path (a match created,
    then refused by the rate limit), which Hypothesis reports as Flaky. Schemathesis's own runner
    ignores that and runs again (engine/run/stateful/_executor.py); so does this test, and it keeps
    every check that failed on the way, so that no failure is lost to a flaky replay.
    """
    rest.config.update(base_url=live_server)
    player_token = httpx.post(f"{live_server}/v1/players", json={"name": "Fuzzer"}).json()["token"]
    failed: list[str] = []

    class Sequences(rest.as_state_machine()):
        def setup(self):
            self.seat_tokens: dict[str, str] = {}

        def get_call_kwargs(self, case):
            """A positive case acts with a real token (schemathesis makes up a bearer token)."""
            if case.meta is not None and case.meta.generation.mode.is_negative:
                return {}  # a negative case keeps the credential it brings (none, or a wrong one)
            token = player_token
            if case.operation.label in SEAT_OPERATIONS:
                token = self.seat_tokens.get((case.path_parameters or {}).get("match_id"), player_token)
            return {"headers": {"Authorization": f"Bearer {token}"}}

        def after_call(self, response, case):
            if case.operation.label == "POST /v1/matches/{match_id}/seats" and response.status_code == 201:
                self.seat_tokens[case.path_parameters["match_id"]] = response.json()["token"]

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            try:
                case.validate_response(response, additional_checks=additional_checks,
                                       excluded_checks=documented_refusals(case, response),
                                       transport_kwargs=kwargs or None, recorder=self.recorder)
            except Exception as failure:
                failed.append(f"{case.operation.label}: {failure}")
                raise

    for _attempt in range(3):  # a Flaky replay runs the sequences again
        try:
            Sequences.run(settings=settings(max_examples=max(EXAMPLES // 2, 10), stateful_step_count=6,
                                            deadline=None, suppress_health_check=list(HealthCheck)))
            break
        except Flaky:
            assert not failed, failed
    assert not failed, failed
