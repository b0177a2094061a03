"""strawberry's extensions runner, with each hook's extensions found once per operation.

strawberry asks every extension of the schema, for every result a subscription streams to every
subscriber, whether it has an ``on_stream_result`` hook (building a context manager for each one that
does) and what ``get_results`` it reports. A match's thousand followers meant six extensions asked a
thousand times per update, about a sixth of a websocket follower's cost (issue 18). Which extensions
have which hook does not change during an operation: :class:`ExtensionsRunner` finds them once.
"""

from __future__ import annotations

from typing import Any

from strawberry.extensions import SchemaExtension
from strawberry.extensions.context import StreamResultContextManager
from strawberry.extensions.runner import SchemaExtensionsRunner
from strawberry.utils.await_maybe import await_maybe


def _overrides(extension: SchemaExtension, hook: str) -> bool:
    return getattr(type(extension), hook) is not getattr(SchemaExtension, hook)


class ExtensionsRunner(SchemaExtensionsRunner):
    """strawberry's runner; a streamed result passes only the extensions that hook it, and only those that
    report results are asked for them (the others' hooks are strawberry's no-ops, its ``get_results`` an
    empty dict)."""

    def __init__(self, execution_context, extensions: list[SchemaExtension] | None = None) -> None:
        super().__init__(execution_context, extensions)
        self._stream_hooks: list | None = None  # found at the first streamed result: a query over HTTP has none
        self._reporting = [e for e in self.extensions if _overrides(e, "get_results")]

    def on_stream_result(self, result: Any) -> StreamResultContextManager:
        if self._stream_hooks is None:
            self._stream_hooks = StreamResultContextManager(
                [e for e in self.extensions if _overrides(e, "on_stream_result")], result).hooks
        return _StreamHooks(self._stream_hooks, result)

    async def get_extensions_results(self, ctx) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for extension in self._reporting:
            data.update(await await_maybe(extension.get_results()))
        data.update(ctx.extensions_results)
        return data


class _StreamHooks(StreamResultContextManager):
    """strawberry's context manager around a streamed result, given its hooks (each a factory of a context
    manager, called with the result as strawberry calls it) instead of finding them again."""

    def __init__(self, hooks: list, result: Any) -> None:
        # not the base's __init__: finding the hooks is what this class saves
        self.result = result
        self.hooks = hooks
