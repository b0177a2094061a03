"""JSON as it comes off the wire: UTF-8 only, nesting bounded before anything walks it.

Every request body (REST, GraphQL over HTTP, GraphQL websocket messages) is
decoded here. A body nested deeper than :data:`MAX_DEPTH` would make the
recursive code behind it (the JSON parser, JSON Schema validation, marshmallow,
graphql-core's variable coercion) raise ``RecursionError``, a 500; it is
refused as malformed instead, and so is anything that is not UTF-8 JSON.

JSON is parsed and written with orjson when it is installed (a dependency; it may
not build everywhere), else with the standard library. The two answer the same:
whatever orjson refuses is handed to the standard library, which gives the verdict
it always gave (orjson is stricter: NaN, integers past 64 bits, lone surrogates).
:class:`JSONResponse` is Starlette's with the faster encoder.
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.responses import JSONResponse as _StarletteJSONResponse

try:
    import orjson
except ImportError:  # no wheel for this platform: the standard library does it all
    orjson = None

#: The deepest nesting of arrays and objects a request may carry. Every action,
#: option set and GraphQL variable the service knows fits in well under 16.
MAX_DEPTH = 64


class MalformedJson(ValueError):
    """The bytes are not UTF-8 JSON, or nest deeper than :data:`MAX_DEPTH`; ``message`` says which."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


#: A run of 19 digits or more may be an integer past 64 bits, which orjson reads as a float where the standard
#: library keeps it exact. orjson reads every integer from -2**63 to 2**64 - 1 exactly (a game's random
#: generator state is any 64-bit unsigned number: a match record holds one); a body with a run outside that
#: range takes the standard library's path.
_LONG_NUMBER = re.compile(r"-?\d{19,}")
_LONG_NUMBER_BYTES = re.compile(rb"-?\d{19,}")
_SMALLEST, _LARGEST = -(1 << 63), (1 << 64) - 1


def _orjson_reads(raw: bytes | str) -> bool:
    """Whether orjson is here and reads ``raw``'s numbers as the standard library does."""
    if orjson is None:
        return False
    runs = (_LONG_NUMBER if isinstance(raw, str) else _LONG_NUMBER_BYTES).findall(raw)
    # A run that is part of a fraction or an exponent is a float to both parsers; read as an integer here it
    # may only send a body the standard library's way for nothing.
    return all(len(run) <= 21 and _SMALLEST <= int(run) <= _LARGEST for run in runs)  # 21: "-" and 20 digits


def loads(raw: bytes | str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse ``raw`` (UTF-8 bytes or text) as JSON whose nesting is at most ``max_depth``.

    Raises :class:`MalformedJson`, never ``RecursionError``.
    """
    if _orjson_reads(raw):
        try:
            data = orjson.loads(raw)
        except (orjson.JSONDecodeError, TypeError):
            pass  # the standard library below says why (or accepts what orjson is too strict for)
        else:
            # orjson reads bytes as UTF-8 itself, refusing what the codec below refuses; only the
            # depth rule is left, checked exactly as below
            opening = raw.count(b"[") + raw.count(b"{") if isinstance(raw, (bytes, bytearray)) \
                else raw.count("[") + raw.count("{")
            if opening > max_depth and depth_exceeds(data, max_depth):
                raise MalformedJson(f"The JSON nests deeper than {max_depth} levels.")
            return data
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


def loads_stored(raw: bytes | str) -> Any:
    """Parse JSON the service wrote itself (a match record's fields, ``json.dumps`` with sorted keys and no
    spaces) as the standard library reads it: no depth rule (it was checked on the way in).

    orjson reads it when orjson writes back exactly what was stored: then every number was read as written
    (an integer past 64 bits would come back as a float, written otherwise). This costs less than looking
    for long numbers first: a pattern search of a match's state took twice as long as orjson's parse. A
    field that reads back otherwise (text escaped as ``\\uXXXX``, a float written the other library's way,
    NaN) is parsed by the standard library."""
    if orjson is not None:
        try:
            data = orjson.loads(raw)
            if orjson.dumps(data) == (raw.encode() if isinstance(raw, str) else raw):
                return data
        except (orjson.JSONDecodeError, orjson.JSONEncodeError):
            pass  # NaN, say, which orjson refuses to read; nesting deeper than it writes (255 levels)
    return json.loads(raw)


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


def dumps(data: Any) -> bytes:
    """Compact UTF-8 JSON: orjson when installed, else the standard library as Starlette writes it."""
    if orjson is not None:
        try:
            return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:
            pass  # an integer past 64 bits, say: the standard library writes it
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


class JSONResponse(_StarletteJSONResponse):
    """Starlette's JSONResponse, rendered by :func:`dumps`."""

    def render(self, content: Any) -> bytes:
        return dumps(content)
