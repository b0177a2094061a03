"""The fast JSON path (orjson, issue 18) answers exactly as the standard library did, and the
service still works where orjson cannot install (the import guarded, the fallback forced here)."""

import builtins
import functools
import importlib.util
import json

import pytest

from service import wire
from schema.asgi import GraphQLApp

# Edge cases where orjson and the standard library differ, or where the rules (UTF-8, depth) bite.
BODIES = [
    b'{"type":"play","card":3}', b' [1, 2.5, "x", null, true] ', '{"é":"\u00e9"}'.encode(), '{"a":1}',
    b"NaN", b'{"n": Infinity}', b"123456789012345678901234567890", b'"\\ud800"', b"\xef\xbb\xbf{}",
    b"\xed\xa0\x80", b"\xc0\xaf", b"[-9223372036854775809, 18446744073709551616]", b"0.12345678901234567890123", b"\xff", b'{"a":1,"a":2}', b"[1,]", b"", b"1e400", b'"\x01"',
    b"[" * 65 + b"]" * 65, b"[" * 64 + b"]" * 64, b"[" * 2000 + b"]" * 2000, b'{"a":' * 70 + b"1" + b"}" * 70,
    b"[" * 70 + b"1", "{\"a\": \"\ud800\"}",
    # the edges of what orjson reads as integers (-2**63 to 2**64 - 1), a run too long for int(), a long exponent
    b"[18446744073709551615, -9223372036854775808, 1234567890123456789]", b"[18446744073709551616]",
    b"[-9223372036854775809]", b"9" * 5000, b"1e-1234567890123456789", b"1.0000000000000000000001",
]


def _outcome(raw):
    try:
        return "ok", wire.loads(raw)
    except wire.MalformedJson as error:
        return "refused", error.message


@pytest.mark.skipif(wire.orjson is None, reason="orjson is not installed here")
@pytest.mark.parametrize("raw", BODIES, ids=range(len(BODIES)))
def test_orjson_decodes_exactly_as_the_standard_library(raw, monkeypatch):
    fast = _outcome(raw)
    monkeypatch.setattr(wire, "orjson", None)
    slow = _outcome(raw)
    if fast[0] == "ok" and isinstance(fast[1], float) and fast[1] != fast[1]:
        assert slow[0] == "ok" and slow[1] != slow[1]  # NaN is not equal to itself
    else:
        assert fast == slow


# What the store writes (json.dumps, sort_keys): a match record's fields read back as the standard library reads
# them, the values orjson reads differently included (a long integer stays exact, NaN stays a float).
STORED = [{"a": [1, 2.5, None, True, "é"]}, {"seed": 2 ** 70, "n": -(2 ** 63) - 1}, [float("nan")],
          {"rng": 2 ** 64 - 1, "n": -(2 ** 63)}, {"rng": 2 ** 64}, {"rng": 10 ** 19},
          {"deep": functools.reduce(lambda inner, _: [inner], range(70), 1)},
          # deeper than orjson writes back (255 levels): read by the standard library
          {"deep": functools.reduce(lambda inner, _: [inner], range(300), 1)},
          {"deep": functools.reduce(lambda inner, _: [inner], range(900), 1)}]


@pytest.mark.parametrize("data", STORED, ids=range(len(STORED)))
def test_stored_json_reads_back_as_the_standard_library_reads_it(data):
    stored = json.dumps(data, separators=(",", ":"), sort_keys=True)
    fast, slow = wire.loads_stored(stored), json.loads(stored)
    assert repr(fast) == repr(slow)  # repr: NaN compares unequal to itself
    assert type(fast) is type(slow)


def test_a_body_with_a_64_bit_number_is_read_by_orjson():
    assert wire._orjson_reads(b'{"rng":18446744073709551615,"v":1}')
    assert wire._orjson_reads('{"rng":10000000000000000000}')
    assert not wire._orjson_reads(b'{"rng":18446744073709551616}')


@pytest.mark.parametrize("data, fast", [
    ({"rng": 2 ** 64 - 1, "hand": [3, 1], "name": "Ann", "f": 0.5}, True),  # a match state as the store writes it
    ({"rng": 2 ** 64}, False), ({"name": "é"}, False), ({"f": 1e-7}, False), ([float("nan")], False)])
def test_a_stored_field_is_read_by_orjson_when_it_reads_back_as_written(data, fast, monkeypatch):
    """A match record's state (its 64-bit generator state in it) is read on every request: orjson reads it
    when it writes back exactly what is stored; anything else is the standard library's to read."""
    stored = json.dumps(data, separators=(",", ":"), sort_keys=True)
    expected = repr(json.loads(stored))
    used = []
    decoder = json.JSONDecoder()
    monkeypatch.setattr(wire.json, "loads", lambda raw: used.append(raw) or decoder.decode(
        raw.decode() if isinstance(raw, bytes) else raw))
    for raw in (stored, stored.encode()):
        assert repr(wire.loads_stored(raw)) == expected
    assert (not used) == fast


@pytest.mark.parametrize("data", [{"a": [1, 2.5, None, True, "é"]}, {1: "x"}, [2 ** 70], {"s": "\u2028"}])
def test_dumps_writes_what_the_standard_library_reads_back(data):
    expected = json.loads(json.dumps(data))
    assert json.loads(wire.dumps(data)) == expected


def test_the_module_works_without_orjson(monkeypatch):
    real_import = builtins.__import__

    def no_orjson(name, *args, **kwargs):
        if name == "orjson":
            raise ImportError("no orjson on this platform")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_orjson)
    spec = importlib.util.spec_from_file_location("wire_without_orjson", wire.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # a fresh copy: the service's own module stays as it is
    assert module.orjson is None
    assert module.loads(b'{"type":"play","card":3}') == {"type": "play", "card": 3}
    with pytest.raises(module.MalformedJson, match="deeper than 64"):
        module.loads(b"[" * 65 + b"]" * 65)
    assert module.dumps({"é": [1]}) == '{"é":[1]}'.encode()
    assert module.JSONResponse({"a": 1}).body == b'{"a":1}'


def test_the_service_answers_without_orjson(client, monkeypatch):
    """REST and GraphQL end to end with the fallback encoder and decoder."""
    monkeypatch.setattr(wire, "orjson", None)
    created = client.post("/v1/matches", json={"game": "casting-stones"})
    assert created.status_code == 201, created.text
    assert created.json()["game"] == "casting-stones"
    answer = client.post("/graphql", content=b'{"query": "{ games { id } }"}',
                         headers={"Content-Type": "application/json"})
    assert answer.status_code == 200 and "casting-stones" in [g["id"] for g in answer.json()["data"]["games"]]
    refused = client.post("/graphql", content=b'{"query": ' + b"[" * 65 + b"]" * 65 + b"}",
                          headers={"Content-Type": "application/json"})
    assert refused.status_code == 400


def test_graphql_encodes_text_for_websocket_frames():
    # strawberry sends bytes as binary websocket frames, which graphql-transport-ws clients refuse
    encoded = GraphQLApp.encode_json(None, {"type": "next", "payload": {"data": {"x": "é"}}})
    assert isinstance(encoded, str) and json.loads(encoded)["payload"]["data"]["x"] == "é"
