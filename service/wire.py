"""JSON as it comes off the wire: UTF-8 only, nesting bounded before anything walks it.

Every request body (REST, GraphQL over HTTP, GraphQL websocket messages) is
decoded here. A body nested deeper than :data:`MAX_DEPTH` would make the
recursive code behind it (the JSON parser, JSON Schema validation, marshmallow,
graphql-core's variable coercion) raise ``RecursionError``, a 500; it is
refused as malformed instead, and so is anything that is not UTF-8 JSON.
"""

from __future__ import annotations

import json
from typing import Any

#: The deepest nesting of arrays and objects a request may carry. Every action,
#: option set and GraphQL variable the service knows fits in well under 16.
MAX_DEPTH = 64


class MalformedJson(ValueError):
    """The bytes are not UTF-8 JSON, or nest deeper than :data:`MAX_DEPTH`; ``message`` says which."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def loads(raw: bytes | str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse ``raw`` (UTF-8 bytes or text) as JSON whose nesting is at most ``max_depth``.

    Raises :class:`MalformedJson`, never ``RecursionError``.
    """
    try:
        text = raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else raw
    except UnicodeDecodeError:
        raise MalformedJson("The body is not UTF-8.") from None
    # Fewer brackets than the limit cannot nest deeper than it: skip the walk for almost every request.
    if text.count("[") + text.count("{") > max_depth:
        try:
            data = json.loads(text)
        except RecursionError:
            raise MalformedJson(f"The JSON nests deeper than {max_depth} levels.") from None
        except ValueError:
            raise MalformedJson("The body is not valid JSON.") from None
        if depth_exceeds(data, max_depth):
            raise MalformedJson(f"The JSON nests deeper than {max_depth} levels.")
        return data
    try:
        return json.loads(text)
    except ValueError:
        raise MalformedJson("The body is not valid JSON.") from None


def depth_exceeds(data: Any, max_depth: int) -> bool:
    """Whether arrays and objects in ``data`` nest deeper than ``max_depth`` (iterative: any depth is safe)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
