"""Schemathesis against a real HTTP server: both APIs, positive and negative
cases, and stateful REST sequences (create, join, act) along the OpenAPI links.

No response may be a 5xx or break the documented schema. The example budget
is fixed for CI; raise it with GRIMOIRE_FUZZ_EXAMPLES for a longer local run.
"""

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
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


@rest.parametrize()
@settings(suppress_health_check=list(HealthCheck), deadline=None)
def test_rest_operations(case, live_server):
    excluded = []
    if case.operation.label in ("POST /v1/matches/{match_id}/actions", "POST /v1/matches/{match_id}/saved-hand"):
        # A schema-valid action at a stale version is refused with 412 as HTTP requires,
        # one the rules forbid now with 409, and a missing If-Match gets 428 Precondition
        # Required (RFC 6585); schemathesis expects other codes for these, none is a fault.
        # Bringing a saved hand is a submit too (an Advanced bring action), with the same answers.
        excluded = [positive_data_acceptance, missing_required_header]
    case.call_and_validate(base_url=live_server, excluded_checks=excluded)


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


def test_rest_stateful_sequences(live_server):
    rest.config.update(base_url=live_server)
    machine = rest.as_state_machine()
    machine.run(settings=settings(max_examples=max(EXAMPLES // 2, 10), stateful_step_count=6, deadline=None,
                                  suppress_health_check=list(HealthCheck)))
