"""schema/runner.py: the service's extensions runner finds each hook's extensions once per operation, and
every extension still sees what strawberry's own runner shows it.

A subscription streams three events through extensions of every kind strawberry knows for a streamed
result: a generator hook, an async generator hook, a plain method, an async method, none at all, and
results reported (sync and async). The same operation on strawberry's runner and on ours must call the
same hooks with the same results, in the same order, and report the same extensions.
"""

from __future__ import annotations

import asyncio

import pytest
import strawberry
from strawberry.extensions import SchemaExtension

from schema.api import Schema as ServiceSchema
from schema.runner import ExtensionsRunner

CALLS: list[tuple[str, object]] = []


class GeneratorHook(SchemaExtension):
    def on_stream_result(self, result):
        CALLS.append(("generator, before", result.data))
        yield
        CALLS.append(("generator, after", result.data))


class AsyncGeneratorHook(SchemaExtension):
    async def on_stream_result(self, result):
        CALLS.append(("async generator", result.data))
        yield


class MethodHook(SchemaExtension):
    def on_stream_result(self, result):  # noqa: a plain method, not a generator: strawberry wraps it
        CALLS.append(("method", result.data))


class AsyncMethodHook(SchemaExtension):
    async def on_stream_result(self, result):
        CALLS.append(("async method", result.data))


class NoHook(SchemaExtension):
    def on_operation(self):
        CALLS.append(("operation", None))
        yield


class Reports(SchemaExtension):
    def get_results(self):
        return {"reports": len(CALLS)}


class ReportsLater(SchemaExtension):
    async def get_results(self):
        return {"later": True}


@strawberry.type
class Query:
    ping: int = 1


@strawberry.type
class Subscription:
    @strawberry.subscription
    async def count(self) -> int:
        for n in range(3):
            yield n


EXTENSIONS = [GeneratorHook, NoHook, AsyncGeneratorHook, MethodHook, Reports, AsyncMethodHook, ReportsLater]


class StrawberrysRunner(ServiceSchema):
    def create_extensions_runner(self, execution_context, extensions):
        return strawberry.Schema.create_extensions_runner(self, execution_context, extensions)


async def _stream(schema) -> list:
    stream = await schema.subscribe("subscription { count }")
    return [(result.data, result.errors, result.extensions) async for result in stream]


@pytest.mark.parametrize("kind", ["subscription", "query"])
def test_every_hook_sees_what_strawberrys_runner_shows_it(kind):
    seen = []
    for schema_class in (StrawberrysRunner, ServiceSchema):
        schema = schema_class(query=Query, subscription=Subscription, extensions=EXTENSIONS)
        CALLS.clear()
        if kind == "subscription":
            answers = asyncio.run(_stream(schema))
        else:
            result = asyncio.run(schema.execute("{ ping }"))
            answers = [(result.data, result.errors, result.extensions)]
        seen.append((answers, list(CALLS)))
    assert seen[0] == seen[1]
    answers, calls = seen[1]
    if kind == "subscription":
        assert [data for data, _, _ in answers] == [{"count": n} for n in range(3)]
        assert [name for name, data in calls if data == {"count": 1}] == [
            "generator, before", "async generator", "method", "async method", "generator, after"]
        reports = [extensions["reports"] for _, _, extensions in answers]
        assert reports == sorted(set(reports)) and all(e["later"] for _, _, e in answers)  # each made for its result
    else:
        assert answers[0][2]["later"] is True and ("operation", None) in calls


def test_the_service_schema_runs_its_extensions_on_the_runner():
    schema = ServiceSchema(query=Query, extensions=[NoHook])
    assert isinstance(schema.create_extensions_runner(None, []), ExtensionsRunner)
