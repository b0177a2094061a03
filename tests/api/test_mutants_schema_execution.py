"""schema/execution.py's fast path, schema/problems.py's problem types and schema/asgi.py's GraphQL app, as a
user sees them.

The fast path (:class:`schema.execution.PlainDataExecutor`) must answer every document exactly as strawberry's
own executor does: enums, custom scalars, lists (nested, with nulls), nullable fields, unions, nested objects,
aliases, ``__typename``, fragments and field merging, ``@include``/``@skip`` with variables that change between
requests, and every error of a value that is not plain. What tells it apart is the per-field work it saves:
a schema extension's ``resolve`` hook (graphql-core middleware) sees every field strawberry's executor resolves,
and none of the fields the fast path completes by reading attributes. Only objects whose every field is a plain
attribute (no resolver, no arguments, no field extension), down to the leaves, take the fast path; and only
their subscription events are executed once for every subscriber, because nothing in them reads the
subscriber.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import json
from typing import Annotated, NewType, Optional, Union

import pytest
import strawberry
import strawberry.schema.schema as strawberry_schema
from graphql import build_schema as sdl_schema
from starlette.routing import WebSocketRoute
from strawberry.extensions import FieldExtension, ParserCache, SchemaExtension
from strawberry.permission import BasePermission
from strawberry.schema.config import StrawberryConfig
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from schema import execution, problems, validation
from schema.asgi import GraphQLApp
from schema.execution import PlainDataExecutor
from service.contracts import SDL_PATH
from service.engine import RuleError
from service.engine import errors as engine_errors
from service.store import errors as store_errors
from tests.api.test_plain_execution import _graphql_schema



@pytest.fixture(autouse=True)
def cold_caches():
    """Each test finds the plain types and fills the fast path's caches with the code it checks: entries a test
    before it left (or the mutation run's mapping pass, whose process the mutants' runs fork from) would answer
    in its place. Within a test, requests still meet what the ones before them cached."""
    for cache in (execution._PLAIN_TYPES, execution._WITHOUT_DIRECTIVES, execution._COLLECTED,
                  execution._SHARED_EVENTS, execution._SHARING_OPERATIONS):
        cache.results.clear()


# -- a schema of plain data, and of data that is not ------------------------------------------------------------

#: "Parent.field" of every field resolved through graphql-core (the Resolved extension's hook), in order
RESOLVED: list[str] = []


class Resolved(SchemaExtension):
    """Records each field resolution graphql-core makes (strawberry runs ``resolve`` as its middleware)."""

    def resolve(self, _next, root, info, *args, **kwargs):
        RESOLVED.append(f"{info.parent_type.name}.{info.field_name}")
        return _next(root, info, *args, **kwargs)


class AsyncResolved(SchemaExtension):
    """The same hook, async: every execution then goes through graphql-core's awaitable path."""

    async def resolve(self, _next, root, info, *args, **kwargs):
        RESOLVED.append(f"{info.parent_type.name}.{info.field_name}")
        result = _next(root, info, *args, **kwargs)
        return await result if inspect.isawaitable(result) else result


@strawberry.enum
class Suit(enum.Enum):
    HEARTS = "hearts"
    SPADES = "spades"


def _stamp(value):
    if value == 0:
        return None  # graphql-core: a serialiser may not answer null
    return f"#{int(value)}"  # raises for what is not a number


Stamp = NewType("Stamp", int)
STAMP = strawberry.scalar(name="Stamp", serialize=_stamp, parse_value=int, description="A stamp.")


@strawberry.type
class Card:
    rank: int
    suit: Suit
    stamp: Optional[Stamp] = None
    note: Optional[str] = None
    tags: list[str] = strawberry.field(default_factory=list)
    weights: Optional[list[Optional[float]]] = None


@strawberry.type
class Token:
    label: str
    colour: Optional[Suit] = None


Thing = Annotated[Union[Card, Token], strawberry.union("Thing")]


@strawberry.type
class Pile:
    name: str
    cards: list[Card]
    top: Optional[Card] = None
    grid: list[list[int]] = strawberry.field(default_factory=list)
    things: list[Thing] = strawberry.field(default_factory=list)
    featured: Optional[Thing] = None


@strawberry.type
class Table:
    id: strawberry.ID
    open: bool
    piles: list[Pile]
    best: Optional[Pile] = None


class Shout(FieldExtension):
    """A field extension on a plain attribute: its field is no longer plain."""

    def resolve(self, next_, source, info, **kwargs):
        return next_(source, info, **kwargs).upper()


class Nobody(BasePermission):
    message = "Nobody reads this."

    def has_permission(self, source, info, **kwargs) -> bool:
        return False


@strawberry.type
class Label:
    text: str = strawberry.field(extensions=[Shout()])
    plain: str = "as it is"


@strawberry.type
class Vault:
    name: str
    secret: Optional[str] = strawberry.field(default=None, permission_classes=[Nobody])


@strawberry.type
class Seat:
    number: int

    @strawberry.field
    def call(self) -> str:
        return f"seat {self.number}"


def _card(rank, suit=Suit.HEARTS, **more):
    return Card(rank=rank, suit=suit, **more)


def _table(kind: str = "fine") -> Table:
    cards = [_card(1, stamp=7, note="first", tags=["a", "b"], weights=[0.5, None, 2.0]),
             _card(12, Suit.SPADES), _card(3, tags=[])]
    piles = [Pile(name="left", cards=cards, top=cards[0], grid=[[1, 2], [], [3]],
                  things=[cards[1], Token(label="t1", colour=Suit.SPADES), Token(label="t2")],
                  featured=Token(label="f")),
             Pile(name="right", cards=[], featured=cards[2])]
    table = Table(id=strawberry.ID("t-1"), open=True, piles=piles, best=None)
    if kind == "null-rank":  # a null where the schema promises an Int, deep in a list
        cards[1].rank = None
    elif kind == "bad-suit":  # not a Suit
        cards[2].suit = "clubs"
    elif kind == "bad-stamp":  # the scalar's serialiser raises
        cards[1].stamp = "seven"
    elif kind == "null-stamp":  # the scalar's serialiser answers null
        cards[1].stamp = 0
    elif kind == "bad-int":  # an Int that does not coerce
        cards[0].rank = "ace"
    elif kind == "tuple-list":  # an iterable that is not a list: graphql-core completes it
        piles[0].cards = tuple(cards)
    elif kind == "null-item":  # a null item of a list of non-null cards
        piles[0].cards = [cards[0], None]
    elif kind == "wrong-class":  # not a Pile at all
        table.piles = [Token(label="x")]
    elif kind == "foreign-member":  # a union member that is not one of the union's
        piles[0].featured = Pile(name="inner", cards=[])
    elif kind == "nullable-null":  # a null where the schema allows one
        piles[0].top = None
        cards[0].weights = None
    return table


@strawberry.type
class Query:
    @strawberry.field
    def table(self, kind: str = "fine") -> Table:
        return _table(kind)

    @strawberry.field
    def tables(self) -> list[Optional[Table]]:
        return [_table(), None, _table("nullable-null")]

    @strawberry.field
    def thing(self, token: bool = False) -> Thing:
        return Token(label="solo", colour=Suit.HEARTS) if token else _card(5, stamp=3)

    @strawberry.field
    def seat(self) -> Seat:
        return Seat(number=2)

    @strawberry.field
    def label(self) -> Label:
        return Label(text="quiet")

    @strawberry.field
    def vault(self) -> Vault:
        return Vault(name="v", secret="hidden")

    @strawberry.field
    def plain(self) -> Optional[Table]:  # named like a subscription field; read from the root value
        return getattr(self, "table", None)


class Root:
    def __init__(self, table: Table):
        self.table = table


# subscriptions: the events every subscriber gets, one object each (set by each test)
EVENTS: dict[str, object] = {}


@strawberry.type
class Viewer:
    """Not plain: its answer depends on who subscribes."""

    @strawberry.field
    def name(self, info: strawberry.Info) -> str:
        return info.context["who"]


@strawberry.type
class Guest:
    @strawberry.field
    def name(self, info: strawberry.Info) -> str:
        return f"guest {info.context['who']}"


Person = Annotated[Union[Viewer, Guest], strawberry.union("Person")]


@strawberry.type
class Seen:
    """Every field a plain attribute, but one leads to a type that is not plain."""
    version: int
    viewer: Viewer


# a chain of types whose fields are all attributes, the last one leading to Viewer: none of them is plain
@strawberry.type
class Link6:
    depth: int
    viewer: Viewer


@strawberry.type
class Link5:
    depth: int
    next: Link6


@strawberry.type
class Link4:
    depth: int
    next: Link5


@strawberry.type
class Link3:
    depth: int
    next: Link4


@strawberry.type
class Link2:
    depth: int
    next: Link3


@strawberry.type
class Link1:
    depth: int
    next: Link2


@strawberry.type
class Chain:
    version: int
    next: Link1


@strawberry.type
class Subscription:
    @strawberry.subscription
    async def plain(self) -> Table:
        yield EVENTS["plain"]

    @strawberry.subscription
    async def seen(self) -> Seen:
        yield EVENTS["seen"]

    @strawberry.subscription
    async def chain(self) -> Chain:
        yield EVENTS["chain"]

    @strawberry.subscription
    async def person(self) -> Person:
        yield EVENTS["person"]


def _schema(executor, hook=Resolved) -> strawberry.Schema:
    return strawberry.Schema(query=Query, subscription=Subscription, execution_context_class=executor,
                             extensions=[lambda: ParserCache(maxsize=97), hook],
                             config=StrawberryConfig(scalar_map={Stamp: STAMP}))


FAST, SLOW = _schema(PlainDataExecutor), _schema(StrawberryGraphQLCoreExecutionContext)
FAST_ASYNC = _schema(PlainDataExecutor, AsyncResolved)


def _deferring(executor) -> strawberry.Schema:
    """As the service does not (yet): @defer and @stream served (graphql-core's incremental delivery)."""
    return strawberry.Schema(query=Query, execution_context_class=executor, extensions=[Resolved],
                             config=StrawberryConfig(scalar_map={Stamp: STAMP},
                                                     enable_experimental_incremental_execution=True))


FAST_DEFER, SLOW_DEFER = _deferring(PlainDataExecutor), _deferring(StrawberryGraphQLCoreExecutionContext)


def _run(schema, document: str, variables: dict | None = None) -> tuple[str, list, list[str]]:
    """(the data as JSON, key order included; the errors; the fields graphql-core resolved)."""
    RESOLVED.clear()
    result = asyncio.run(schema.execute(document, variable_values=variables))
    errors = [(e.message, e.path, [(loc.line, loc.column) for loc in e.locations or ()]) for e in result.errors or ()]
    return json.dumps(result.data), errors, list(RESOLVED)


def _both(document: str, variables: dict | None = None):
    fast, slow = _run(FAST, document, variables), _run(SLOW, document, variables)
    assert fast[:2] == slow[:2], (fast, slow)
    return fast, slow


CARD = "rank suit stamp note tags weights"
EVERYTHING = f"""query Everything {{ table {{ __typename id open best {{ name }}
  piles {{ __typename name grid top {{ {CARD} }} cards {{ __typename {CARD} }}
    things {{ __typename ... on Card {{ rank suit }} ... on Token {{ label colour }} }}
    featured {{ kind: __typename ...Featured }} }} }} }}
  fragment Featured on Thing {{ ... on Token {{ label }} ... on Card {{ stamp again: rank }} }}"""


def test_plain_data_is_answered_as_strawberry_answers_it_without_resolving_each_field():
    fast, slow = _both(EVERYTHING)
    data = json.loads(fast[0])["table"]
    assert (data["__typename"], data["id"], data["open"], data["best"]) == ("Table", "t-1", True, None)
    left, right = data["piles"]
    assert left["cards"][0] == {"__typename": "Card", "rank": 1, "suit": "HEARTS", "stamp": "#7", "note": "first",
                                "tags": ["a", "b"], "weights": [0.5, None, 2.0]}
    assert left["cards"][1] == {"__typename": "Card", "rank": 12, "suit": "SPADES", "stamp": None, "note": None,
                                "tags": [], "weights": None}
    assert left["grid"] == [[1, 2], [], [3]] and left["top"]["rank"] == 1
    assert left["things"] == [{"__typename": "Card", "rank": 12, "suit": "SPADES"},
                              {"__typename": "Token", "label": "t1", "colour": "SPADES"},
                              {"__typename": "Token", "label": "t2", "colour": None}]
    assert left["featured"] == {"kind": "Token", "label": "f"}
    assert right == {"__typename": "Pile", "name": "right", "grid": [], "top": None, "cards": [], "things": [],
                     "featured": {"kind": "Card", "stamp": None, "again": 3}}
    assert fast[2] == ["Query.table"]  # the whole table read from its attributes
    assert "Card.rank" in slow[2] and "Pile.featured" in slow[2] and "Token.label" in slow[2]


@pytest.mark.parametrize("document, fast_resolves", [
    ("{ tables { id piles { name cards { rank } } } }", ["Query.tables"]),
    ("{ thing { __typename ... on Card { rank stamp tags } ... on Token { label } } }", ["Query.thing"]),
    ("{ thing(token: true) { __typename ... on Card { rank } ... on Token { label colour } } }", ["Query.thing"]),
    ("{ a: table { piles { n: name c: cards { r: rank } } } b: table { piles { name } } }",
     ["Query.table", "Query.table"]),
    # fields merged from fragments and repeated selections, a selection only of __typename
    ("{ table { ...P piles { cards { suit } } ...P } } fragment P on Table { piles { cards { rank } name } }",
     ["Query.table"]),
    ("{ table { __typename piles { __typename } } }", ["Query.table"]),
    # what is not plain: a resolver, a field extension, a permission
    ("{ seat { number call } }", ["Query.seat", "Seat.number", "Seat.call"]),
    ("{ label { text plain } }", ["Query.label", "Label.text", "Label.plain"]),
    ("{ vault { name secret } }", ["Query.vault", "Vault.name", "Vault.secret"]),
])
def test_each_document_has_strawberrys_answer_and_only_plain_values_skip_the_resolvers(document, fast_resolves):
    fast, slow = _both(document)
    assert fast[2] == fast_resolves
    assert len(slow[2]) > len(fast_resolves) or fast_resolves == slow[2]


def test_a_field_extension_or_a_permission_on_an_attribute_still_applies():
    fast, _ = _both("{ label { text plain } vault { name secret } }")
    assert json.loads(fast[0]) == {"label": {"text": "QUIET", "plain": "as it is"},
                                   "vault": {"name": "v", "secret": None}}
    assert [(message, path) for message, path, _ in fast[1]] == [("Nobody reads this.", ["vault", "secret"])]


@pytest.mark.parametrize("kind", ["null-rank", "bad-suit", "bad-stamp", "null-stamp", "bad-int", "tuple-list",
                                  "null-item", "wrong-class", "foreign-member", "nullable-null"])
def test_a_value_that_is_not_plain_gets_strawberrys_own_answer_and_errors(kind):
    document = EVERYTHING.replace("table {", f'table(kind: "{kind}") {{', 1)
    fast, _ = _both(document)
    assert bool(fast[1]) is (kind not in ("tuple-list", "nullable-null"))


def test_the_fields_a_directive_selects_follow_each_requests_variables():
    """One document, sent again and again: what @include/@skip select (in the operation, or only in a
    fragment) follows each request's variables, never a previous request's."""
    document = """query Pick($yes: Boolean!, $no: Boolean!) { table { id @include(if: $yes) ...Piles
                    best @skip(if: $yes) { name } } thing { ...Which } }
        fragment Piles on Table { piles { name @skip(if: $no) cards { rank suit @include(if: $no) } } }
        fragment Which on Thing { __typename ... on Card @include(if: $yes) { rank } ... on Token { label } }"""
    in_fragment_only = """query Frag($no: Boolean!) { table { ...Names } }
        fragment Names on Table { piles { name @include(if: $no) cards { rank } } }"""
    for yes, no in ((True, False), (False, True), (True, True), (False, False), (True, False)):
        fast, _ = _both(document, {"yes": yes, "no": no})
        data = json.loads(fast[0])
        assert ("id" in data["table"]) is yes and ("best" in data["table"]) is not yes
        pile = data["table"]["piles"][0]
        assert ("name" in pile) is not no and ("suit" in pile["cards"][0]) is no
        assert ("rank" in data["thing"]) is yes and data["thing"]["__typename"] == "Card"
        fast, _ = _both(in_fragment_only, {"no": no})
        assert ("name" in json.loads(fast[0])["table"]["piles"][0]) is no
        assert fast[2] == ["Query.table"]  # still read plainly


def test_the_plain_types_are_those_whose_every_field_leads_to_leaves_or_plain_types():
    """What the fast path takes (the module docstring): objects of plain attributes, down to their leaves, and
    unions of them; not an object with a resolver, a field extension or a permission, nor one whose attributes
    lead to such an object, however many steps away (Chain, Link1 to Link6, Seen: Viewer reads its subscriber)."""
    plain = execution._PlainTypes(FAST._schema)
    assert {t.name for t in plain.attributes} == {"Card", "Token", "Pile", "Table"}
    assert {u.name for u in plain.unions} == {"Thing"}
    card = FAST._schema.type_map["Card"]
    assert plain.of_class[Card] is card and plain.of_class[Table] is FAST._schema.type_map["Table"]
    # each field: its type, the attribute it is read from, and its leaf type and non-null flag when it is a leaf
    rank, suit, weights = (plain.attributes[card][name] for name in ("rank", "suit", "weights"))
    assert (rank[1], rank[2].name, rank[3]) == ("rank", "Int", True)
    assert (suit[2].name, suit[3]) == ("Suit", True)
    assert weights[2:] == (None, False)  # a list is no leaf
    pile = plain.attributes[FAST._schema.type_map["Pile"]]
    assert pile["top"][1:] == ("top", None, False) and pile["featured"][2:] == (None, False)


def test_a_document_is_validated_once_however_often_it_is_sent(client, monkeypatch):
    """docs/operations.md: validation results are kept per parsed document (schema/validation.py); strawberry
    validates again only what the cache does not answer, so every validation of either is counted."""
    validated = []

    def counted(real):
        def validate(schema, document, rules):
            validated.append(document)
            return real(schema, document, rules)
        return validate

    monkeypatch.setattr(validation, "validate_document", counted(validation.validate_document))
    monkeypatch.setattr(strawberry_schema, "validate_document", counted(strawberry_schema.validate_document))
    valid, invalid = "query ValidatedOnce { games { id } }", "query RefusedOnce { games { nope } }"
    for _ in range(3):
        assert client.post("/graphql", json={"query": valid}).json()["data"]["games"]
        [error] = client.post("/graphql", json={"query": invalid}).json()["errors"]
        assert error["message"] == "Cannot query field 'nope' on type 'Game'."
    assert len(validated) == 2 and validated[0] is not validated[1]



def test_the_service_executes_its_documents_on_the_fast_path(client, monkeypatch):
    """docs/operations.md: the service's schema completes plain values without graphql-core's per-field work
    (strawberry's own executor answers the same, only slower, so nothing but the executor tells them apart)."""
    executed = []
    real = PlainDataExecutor.execute_operation

    def counted(self, *args, **kwargs):
        executed.append(type(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(PlainDataExecutor, "execute_operation", counted)
    assert client.post("/graphql", json={"query": "query FastPath { games { id } }"}).json()["data"]["games"]
    assert executed == [PlainDataExecutor]


def test_distinct_documents_keep_at_most_256_parsed_and_validated(client):
    """docs/security.md (limits): a client sending ever new query texts pushes the least recently used out of
    the parse and validation caches; it cannot grow them."""
    for number in range(300):
        assert client.post("/graphql", json={"query": f"query Distinct{number} {{ games {{ id }} }}"}).status_code == 200
    extensions = [make() for make in _graphql_schema(client).extensions]
    [parsed] = [e.cached_parse_document.cache_info() for e in extensions if isinstance(e, ParserCache)]
    [validated] = [e.results for e in extensions if isinstance(e, validation.DocumentValidationCache)]
    assert parsed.maxsize == 256 and parsed.currsize == 256
    assert validated.maxsize == 256 and len(validated.results) == 256

def _delivered(schema, document: str) -> list[dict]:
    """Every payload of an incrementally delivered answer, as sent."""
    async def run():
        result = await schema.execute(document)
        payloads = [result.initial_result.formatted]
        async for later in result.subsequent_results:
            payloads.append(later.formatted)
        return payloads
    return asyncio.run(run())


def test_deferred_fragments_are_delivered_as_strawberry_delivers_them():
    """A plain value with @defer, nested in another @defer, is handed to graphql-core: the same initial payload
    and the same later ones, in the same order."""
    document = """{ table { id ... @defer(label: "outer") { open piles { name ... @defer(label: "inner") {
                     cards { rank suit } } } } } }"""
    fast, slow = _delivered(FAST_DEFER, document), _delivered(SLOW_DEFER, document)
    assert fast == slow
    assert fast[0] == {"data": {"table": {"id": "t-1"}}, "pending": [{"id": "0", "path": ["table"], "label": "outer"}],
                       "hasNext": True}
    assert len(fast) >= 2 and fast[-1]["hasNext"] is False


def test_a_union_member_is_completed_with_its_own_selection_every_time():
    """The same fragment spread on a list of mixed members: each member's selection is its own, on the first
    request and on the next ones (which reuse what was collected)."""
    document = "{ table { piles { things { ... on Card { rank } ... on Token { label } } } } }"
    for _ in range(3):
        fast, _ = _both(document)
        assert json.loads(fast[0])["table"]["piles"][0]["things"] == [{"rank": 12}, {"label": "t1"}, {"label": "t2"}]
        assert fast[2] == ["Query.table"]


# -- subscription events: shared only when nothing in them reads the subscriber ----------------------------------

async def _first(schema, document: str, who: str, variables: dict | None) -> tuple[dict, list]:
    stream = await schema.subscribe(document, variable_values=variables, context_value={"who": who})
    try:
        result = await stream.__anext__()
    finally:
        await stream.aclose()
    return result.data, [e.message for e in result.errors or ()]


def _subscribers(schema, document: str, variables: tuple = (None, None)) -> list[tuple[dict, list]]:
    """The first message of two subscribers, Ann and Bob, to the same event object."""
    async def both():
        return [await _first(schema, document, who, given) for who, given in zip(("ann", "bob"), variables)]
    return asyncio.run(both())


def _fresh_events(plain: str = "fine"):
    EVENTS.update(
        plain=_table(plain), seen=Seen(version=1, viewer=Viewer()), person=Viewer(),
        chain=Chain(version=1, next=Link1(depth=1, next=Link2(depth=2, next=Link3(depth=3, next=Link4(
            depth=4, next=Link5(depth=5, next=Link6(depth=6, viewer=Viewer()))))))))


FAST_SCHEMAS = pytest.mark.parametrize("fast", [FAST, FAST_ASYNC], ids=["sync", "async"])


@FAST_SCHEMAS
@pytest.mark.parametrize("document, names", [
    ("subscription Seen { seen { version viewer { name } } }", lambda d: d["seen"]["viewer"]["name"]),
    ("subscription Chain { chain { version " + "next { " * 6 + "depth viewer { name } " + "} " * 6 + "} }",
     lambda d: d["chain"]["next"]["next"]["next"]["next"]["next"]["next"]["viewer"]["name"]),
    ("subscription Person { person { __typename ... on Viewer { name } ... on Guest { name } } }",
     lambda d: d["person"]["name"]),
    # its one field selected through a fragment (named like another, plain, subscription field)
    ("subscription Spread { ...plain } fragment plain on Subscription { seen { version viewer { name } } }",
     lambda d: d["seen"]["viewer"]["name"]),
], ids=["object", "chain", "union", "fragment"])
def test_an_event_that_reads_its_subscriber_is_executed_for_each_subscriber(fast, document, names):
    for schema in (fast, SLOW):
        _fresh_events()
        (ann, ann_errors), (bob, bob_errors) = _subscribers(schema, document)
        assert not ann_errors and not bob_errors
        assert (names(ann), names(bob)) == ("ann", "bob")


@FAST_SCHEMAS
def test_a_plain_event_is_executed_once_for_every_subscriber(fast):
    document = "subscription Plain { plain { id piles { name cards { rank suit } } } }"
    _fresh_events()
    RESOLVED.clear()
    (first, _), (second, _) = _subscribers(fast, document)
    assert first == second and first["plain"]["piles"][0]["cards"][1] == {"rank": 12, "suit": "SPADES"}
    shared = RESOLVED.count("Subscription.plain")
    _fresh_events()
    RESOLVED.clear()
    _subscribers(SLOW, document)
    assert shared == 1 and RESOLVED.count("Subscription.plain") == 2


@FAST_SCHEMAS
@pytest.mark.parametrize("document, copies", [
    ("subscription Plain { plain { id piles { name cards { rank suit } } } }", 1),
    ("subscription Seen { seen { version viewer { name } } }", 2),
], ids=["plain", "reads its subscriber"])
def test_a_shared_event_is_handed_on_without_a_copy_of_the_executor(fast, document, copies, monkeypatch):
    """graphql-core copies the subscription's executor for every event of every subscriber: a subscriber of a
    plain event another one already got is handed the same result without one (issue 18: a thousand
    followers, a thousand copies per update)."""
    made = []
    original = StrawberryGraphQLCoreExecutionContext.build_per_event_executor

    def counted(self, payload):
        made.append(payload)
        return original(self, payload)

    monkeypatch.setattr(StrawberryGraphQLCoreExecutionContext, "build_per_event_executor", counted)
    _fresh_events()
    (first, _), (second, _) = _subscribers(fast, document)
    assert len(made) == copies
    assert (first is second) == (copies == 1)  # the one result, or each subscriber's own (names differ)


@FAST_SCHEMAS
def test_an_event_answered_with_errors_is_executed_again_for_the_next_subscriber(fast):
    document = "subscription Broken { plain { piles { cards { rank } } } }"
    _fresh_events("null-rank")
    RESOLVED.clear()
    (first, first_errors), (second, second_errors) = _subscribers(fast, document)
    assert first is None and second is None  # the null bubbles up to the non-null subscription field
    assert first_errors == second_errors and len(first_errors) == 1 and "Card.rank" in first_errors[0]
    assert RESOLVED.count("Subscription.plain") == 2


@FAST_SCHEMAS
def test_each_subscriber_gets_the_fields_its_own_variables_select(fast):
    document = "subscription Pick($with: Boolean!) { plain { id open @include(if: $with) } }"
    _fresh_events()
    (ann, _), (bob, _) = _subscribers(fast, document, ({"with": True}, {"with": False}))
    assert ann == {"plain": {"id": "t-1", "open": True}} and bob == {"plain": {"id": "t-1"}}


def test_a_query_run_again_on_the_same_root_value_is_answered_anew():
    """A query's root field named like a plain subscription field, executed twice on one root value: the
    second answer is the data as it is then, not the first answer kept."""
    root = Root(table=_table())
    document = "query Again { plain { id open } }"
    first = asyncio.run(FAST.execute(document, root_value=root))
    root.table.open = False
    second = asyncio.run(FAST.execute(document, root_value=root))
    assert (first.data, second.data) == ({"plain": {"id": "t-1", "open": True}},
                                         {"plain": {"id": "t-1", "open": False}})


# -- the problem types (schema/problems.py) ---------------------------------------------------------------------

TYPE_REF = "name kind ofType { name kind ofType { name kind ofType { name kind } } }"


def _printed(ref: dict) -> str:
    if ref["kind"] == "NON_NULL":
        return _printed(ref["ofType"]) + "!"
    if ref["kind"] == "LIST":
        return f"[{_printed(ref['ofType'])}]"
    return ref["name"]


def test_every_problem_type_is_served_as_the_committed_sdl_describes_it(client):
    """Each type implementing Problem, as introspection over /graphql shows it: its name, description,
    interfaces and fields are those of the committed schema/schema.graphql, one type per error code."""
    query = ('query Problems { __type(name: "Problem") { possibleTypes { name description interfaces { name } '
             f'fields {{ name description type {{ {TYPE_REF} }} }} }} }} }}')
    body = client.post("/graphql", json={"query": query}).json()
    assert "errors" not in body, body
    served = {t["name"]: t for t in body["data"]["__type"]["possibleTypes"]}
    committed = sdl_schema(SDL_PATH.read_text(encoding="utf-8"))
    implementing = committed.get_implementations(committed.type_map["Problem"]).objects
    assert sorted(served) == sorted(t.name for t in implementing)
    for expected in implementing:
        got = served[expected.name]
        assert got["description"] == expected.description and got["description"], expected.name
        assert [i["name"] for i in got["interfaces"]] == ["Problem"]
        assert {f["name"]: (_printed(f["type"]), f["description"]) for f in got["fields"]} == \
            {name: (str(field.type), field.description) for name, field in expected.fields.items()}, expected.name
    # one type per machine code, named after it; each a Problem with a code, a message and a ruleCode
    assert len(served) == len(problems.BY_CODE) + 1  # and VersionConflict
    for code in problems.BY_CODE:
        name = "".join(part.capitalize() for part in code.split("_"))
        assert {"code", "message", "ruleCode"} <= {f["name"] for f in served[name]["fields"]}, code
    assert served["UnknownGame"]["description"] == "No game has that id."
    assert served["NotYourTrade"]["description"] == ("Only the recipient accepts or declines a trade, only its "
                                                     "offerer cancels it.")


def _error_class(code: str) -> type:
    for module in (store_errors, engine_errors):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Exception) and getattr(value, "code", None) == code:
                return value
    raise AssertionError(f"no error class has the code {code}")


TRADE = {"id": "tr-1", "game": "casting-stones", "from": "p-1", "to": "p-2",
         "give": {"stones": [{"id": "ruby", "count": 2}]}, "get": {"cards": [{"id": "c-9", "count": 1}]},
         "status": "failed", "reason": "offerer_short", "created": 1.0, "updated": 2.0, "expires": 3.0,
         "recovered": False}
DETAILS = {  # code -> (the error's arguments beyond its message, the problem's fields they become)
    "not_in_collection": ({"missing": {"stones": [{"id": "ruby", "count": 3}], "cards": []}},
                          lambda p: (p.missing.stones[0].id, p.missing.stones[0].count, p.missing.cards)
                          == ("ruby", 3, [])),
    "no_set_left": ({"next_at": 1_700_000_000_000}, lambda p: p.next_at == 1_700_000_000_000),
    "trade_closed": ({"status": "declined"}, lambda p: p.trade_status == "declined"),
    "trade_failed": ({"trade": TRADE}, lambda p: (p.trade.id, p.trade.from_player, p.trade.give.stones[0].count,
                                                  p.trade.get.cards[0].id, p.trade.reason.name)
                     == ("tr-1", "p-1", 2, "c-9", "OFFERER_SHORT")),
}


@pytest.mark.parametrize("code", sorted(problems.BY_CODE))
def test_each_error_code_becomes_its_problem_type_with_its_fields(code):
    arguments, check = DETAILS.get(code, ({}, None))
    error = _error_class(code)(f"Refused: {code}.", **arguments)
    problem = problems.problem_for(error)
    assert type(problem) is problems.BY_CODE[code]
    assert type(problem).__strawberry_definition__.name == "".join(p.capitalize() for p in code.split("_"))
    assert (problem.code.name, problem.code.value) == (code.upper(), code)
    assert (problem.message, problem.rule_code) == (f"Refused: {code}.", None)
    assert check is None or check(problem), vars(problem)


def test_a_games_own_rule_code_is_an_illegal_action_keeping_code_and_message():
    problem = problems.problem_for(RuleError("The stone is not next to it.", code="not_adjacent"))
    assert type(problem) is problems.IllegalAction
    assert (problem.code.name, problem.message, problem.rule_code) == \
        ("ILLEGAL_ACTION", "The stone is not next to it.", "not_adjacent")
    conflict = problems.problem_for(store_errors.VersionConflict("Not at version 3.", current_version=4))
    assert type(conflict) is problems.VersionConflict
    assert (conflict.code.name, conflict.message, conflict.current_version) == \
        ("VERSION_CONFLICT", "Not at version 3.", 4)


def test_a_problem_reaches_the_client_with_its_type_code_and_message(client):
    body = client.post("/graphql", json={"query": 'query Q { match(id: "no-such-match") { __typename '
                                                  '... on Problem { code message ruleCode } } }'}).json()
    assert "errors" not in body, body
    problem = body["data"]["match"]
    assert (problem["__typename"], problem["code"], problem["ruleCode"]) == ("MatchNotFound", "MATCH_NOT_FOUND", None)
    assert problem["message"]


# -- the GraphQL app (schema/asgi.py) -----------------------------------------------------------------------------

def test_a_browser_gets_graphiql_at_graphql(client):
    page = client.get("/graphql", headers={"Accept": "text/html"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "graphiql" in page.text.lower()


def test_a_graphql_app_holds_ten_subscriptions_per_connection_unless_told_otherwise(client):
    """GraphQLApp built without ``max_subscriptions_per_connection``: ten subscriptions on one connection are
    served, the eleventh is refused (the service's own default, Settings.max_subscriptions_per_connection)."""
    route = next(r for r in client.app.routes if isinstance(r, WebSocketRoute) and r.path == "/graphql")
    served = route.app
    match_id = client.post("/v1/matches", json={"game": "casting-stones", "seed": 5}).json()["id"]
    query = "subscription Follow($id: ID!) { matchEvents(matchId: $id, after: 0) { __typename } }"
    route.app = GraphQLApp(served.schema)
    try:
        with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
            ws.send_json({"type": "connection_init", "payload": {}})
            assert ws.receive_json()["type"] == "connection_ack"
            for i in range(1, 12):
                ws.send_json({"id": str(i), "type": "subscribe",
                              "payload": {"query": query, "variables": {"id": match_id}}})
            ws.send_json({"type": "ping"})
            before_pong = []
            while (message := ws.receive_json())["type"] != "pong":
                before_pong.append(message)
    finally:
        route.app = served
    refused = [m for m in before_pong if m["type"] == "error"]
    assert [(m["id"], m["payload"][0]["message"]) for m in refused] == [("11", "Subscription limit reached")]
