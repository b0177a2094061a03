"""Completing plain data fast: the games' views and actions, executed without graphql-core's per-field machinery.

A client that plays over GraphQL selects a game's whole typed view and its legal actions: a few hundred
fields per action, each of which graphql-core completes with a resolver call, a resolve-info object, a path
and several layers of ``complete_*`` (about 15 microseconds a field, most of a GraphQL action's cost).
The types generated from the games' JSON Schemas (:mod:`schema.game_types`) need none of it: every field is
an attribute of an object already in memory, with no arguments and no resolver of its own.

:class:`PlainDataExecutor` completes such a value in one tight recursion: it collects each object's fields
with graphql-core's own ``collect_subfields`` (so ``@skip``/``@include``, fragments and field merging
behave exactly as before), reads attributes and coerces leaves with the types' own ``coerce_output_value``.
Anything it does not handle plainly, such as a null in a non-null position, a leaf that does not coerce,
``@defer``, or a value of an unexpected class, makes it give the whole value back to graphql-core, which
completes it as it always did, errors included. Reading attributes has no side effects, so reading twice
changes nothing. The answer is the same either way; only the cost differs.

One exception, out of reach today: ``@stream`` on a list inside a plain object. The schema does not enable
incremental delivery, so no document can carry ``@stream``; a schema that enables it must make the
recursion give up on it as it does on ``@defer``, or a streamed list comes back whole.
"""

from __future__ import annotations

import functools
from typing import Any

from graphql import (
    BREAK, FieldNode, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLUnionType,
    OperationDefinitionNode, OperationType, Visitor, is_leaf_type, visit,
)
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter

from .identity_cache import MISSING, IdentityCache


class _NotPlain(Exception):
    """Raised inside the fast path: this value takes graphql-core's own path."""


class _PlainTypes:
    """Which object types and unions of one schema are plain, with each plain object's attribute names."""

    def __init__(self, schema: GraphQLSchema):
        # type -> field name -> (its type, the Python attribute, the leaf type when the field is one, non-null)
        self.attributes: dict[GraphQLObjectType, dict[str, tuple]] = {}
        self.of_class: dict[type, GraphQLObjectType] = {}  # the Python class of a value -> its object type
        candidates = {t: attributes for t in schema.type_map.values()
                      if isinstance(t, GraphQLObjectType) and (attributes := _basic_fields(t)) is not None}
        # a candidate is plain when every field it selects leads to leaves or other plain types: drop the
        # others until nothing changes
        plain = set(candidates)
        changed = True
        while changed:
            changed = False
            for object_type in list(plain):
                if not all(_is_plain_type(field.type, plain) for field in object_type.fields.values()):
                    plain.discard(object_type)
                    changed = True
        for object_type in plain:
            self.attributes[object_type] = {name: (field.type, candidates[object_type][name], *_leaf(field.type))
                                            for name, field in object_type.fields.items()}
            definition = object_type.extensions.get(GraphQLCoreConverter.DEFINITION_BACKREF)
            self.of_class[definition.origin] = object_type
        self.unions = {t for t in schema.type_map.values()
                       if isinstance(t, GraphQLUnionType) and all(m in plain for m in t.types)}

    def covers(self, graphql_type: Any) -> bool:
        named = _named(graphql_type)
        return named in self.attributes or named in self.unions


def _basic_fields(object_type: GraphQLObjectType) -> dict[str, str] | None:
    """Field name -> Python attribute, when every field of ``object_type`` is a plain strawberry attribute
    (no resolver, no arguments); else None."""
    attributes = {}
    for name, field in object_type.fields.items():
        definition = field.extensions.get(GraphQLCoreConverter.DEFINITION_BACKREF)
        if definition is None or field.args or not getattr(field.resolve, "_is_default", False) \
                or not definition.is_basic_field:
            return None
        attributes[name] = definition.python_name
    return attributes or None


def _leaf(graphql_type: Any) -> tuple[Any, bool]:
    """(the leaf type, whether it is non-null) for a leaf field, maybe non-null; (None, False) otherwise."""
    non_null = isinstance(graphql_type, GraphQLNonNull)
    inner = graphql_type.of_type if non_null else graphql_type
    return (inner, non_null) if is_leaf_type(inner) else (None, False)


def _named(graphql_type: Any) -> Any:
    """The named type inside any non-null and list wrappers."""
    while isinstance(graphql_type, (GraphQLNonNull, GraphQLList)):
        graphql_type = graphql_type.of_type
    return graphql_type


def _is_plain_type(graphql_type: Any, plain: set) -> bool:
    graphql_type = _named(graphql_type)
    if is_leaf_type(graphql_type):
        return True
    if isinstance(graphql_type, GraphQLUnionType):
        return all(member in plain for member in graphql_type.types)
    return graphql_type in plain


_PLAIN_TYPES = IdentityCache(64)  # per schema


def _plain_types(schema: GraphQLSchema) -> _PlainTypes:
    found = _PLAIN_TYPES.get((schema,))
    return _PLAIN_TYPES.put((schema,), _PlainTypes(schema)) if found is MISSING else found


def _without_directives(operation: OperationDefinitionNode, fragments: dict) -> bool:
    """Whether an operation and its fragments carry no directive (so no variable can change which fields
    are collected)."""
    found = []

    class Finder(Visitor):
        def enter_directive(self, *_):
            found.append(True)
            return BREAK

    for node in (operation, *(details.definition for details in fragments.values())):
        visit(node, Finder())
        if found:
            return False
    return True


#: Per operation: whether it has no directive. Without directives, what graphql-core collects for an object
#: type and field nodes depends on nothing else, so :data:`_COLLECTED` keeps it across requests.
_WITHOUT_DIRECTIVES = IdentityCache(4096)
#: Fields collected per (operation, field nodes, object type).
_COLLECTED = IdentityCache(4096)


def _cacheable(operation: OperationDefinitionNode, fragments: dict) -> bool:
    known = _WITHOUT_DIRECTIVES.get((operation,))
    if known is MISSING:
        known = _WITHOUT_DIRECTIVES.put((operation,), _without_directives(operation, fragments))
    return known


#: Subscription events executed once for every subscriber that shares them, per (event, operation).
#:
#: A match's followers get one event object per update and seat (``Update.shared`` in
#: service/store/live.py), and graphql-core would execute each follower's selection of it anew: a
#: thousand spectators, a thousand identical executions per update. When the subscription field's type is
#: plain (it hands the event on as it is, and nothing below it reads the connection or the request), the
#: result depends only on the event and the operation: it is computed once and shared. A result with
#: errors is never shared.
_SHARED_EVENTS = IdentityCache(4096)
#: Whether a subscription operation's events are shared (:meth:`PlainDataExecutor._shares_events`), per
#: (operation, schema).
_SHARING_OPERATIONS = IdentityCache(4096)


class _Executed:
    """A subscription event's executor whose result is known (:meth:`PlainDataExecutor.build_per_event_executor`)."""

    __slots__ = ("result",)

    def __init__(self, result: Any):
        self.result = result

    def execute_operation(self, serially=None) -> Any:
        return self.result


class PlainDataExecutor(StrawberryGraphQLCoreExecutionContext):
    """strawberry's executor, with the plain types completed by :meth:`_complete` (the module docstring),
    collected fields kept across requests (:data:`_COLLECTED`) and plain subscription events executed once
    for all their subscribers (:data:`_SHARED_EVENTS`)."""

    def execute_operation(self, serially=None):
        if not self._shares_its_event():
            return super().execute_operation(serially)
        held = (self.root_value, self.operation)
        shared = _SHARED_EVENTS.get(held)
        if shared is not MISSING:
            return shared
        result = super().execute_operation(serially)
        if self.is_awaitable(result):
            async def sharing():
                completed = await result
                return completed if completed.errors else _SHARED_EVENTS.put(held, completed)
            return sharing()
        return result if result.errors else _SHARED_EVENTS.put(held, result)

    def build_per_event_executor(self, payload):
        # graphql-core copies this executor for every event of every subscriber; an event another subscriber's
        # copy already executed needs no copy, only its result
        if payload is not None and self._shares_events():
            shared = _SHARED_EVENTS.get((payload, self.operation))
            if shared is not MISSING:
                return _Executed(shared)
        return super().build_per_event_executor(payload)

    def _shares_its_event(self) -> bool:
        """Whether this executes a subscription event whose result any subscriber of it may share."""
        return self.root_value is not None and self._shares_events()

    def _shares_events(self) -> bool:
        """Whether this operation is a subscription whose events' results its subscribers may share.

        No variable can change the result: without directives they reach only the subscription field's own
        arguments, which choose the events (its resolver hands each event on as it is), and plain types
        have no arguments. Subscribers resuming from different versions share the events they both get.
        Asked for every event of every subscriber: the answer, a function of the operation and the schema,
        is remembered."""
        operation = self.operation
        if operation.operation != OperationType.SUBSCRIPTION:
            return False
        known = _SHARING_OPERATIONS.get((operation, self.schema))
        if known is MISSING:
            known = _SHARING_OPERATIONS.put((operation, self.schema), self._plain_subscription())
        return known

    def _plain_subscription(self) -> bool:
        operation = self.operation
        if not self._collected_alike:
            return False
        selections = operation.selection_set.selections
        if len(selections) != 1 or not isinstance(selections[0], FieldNode):
            return False
        field = self.schema.subscription_type.fields.get(selections[0].name.value)
        definition = field.extensions.get(GraphQLCoreConverter.DEFINITION_BACKREF) if field else None
        return definition is not None and definition.is_subscription and self._plain.covers(field.type)

    # Per operation, not per field: complete_value and collect_subfields run for every field of a response,
    # and each look-up in the caches by identity (IdentityCache) costs about a microsecond.

    @functools.cached_property
    def _plain(self) -> _PlainTypes:
        return _plain_types(self.schema)

    @functools.cached_property
    def _collected_alike(self) -> bool:
        """Whether this operation's collected fields may be kept across requests (:data:`_COLLECTED`)."""
        return _cacheable(self.operation, self.fragments)

    def collect_subfields(self, return_type, field_details_list):
        # graphql-core's own memo of this execution first: each item of a list asks again
        key = (return_type, id(field_details_list))
        here = self._relevant_sub_fields.get(key)
        if here is not None:
            return here[1]
        if not self._collected_alike:
            return super().collect_subfields(return_type, field_details_list)
        held = (self.operation, *[details.node for details in field_details_list])
        collected = _COLLECTED.get(held, (return_type,))
        if collected is MISSING:
            return _COLLECTED.put(held, super().collect_subfields(return_type, field_details_list), (return_type,))
        self._relevant_sub_fields[key] = (field_details_list, collected)  # held with it: its id is not reused
        return collected

    def complete_value(self, return_type, field_details_list, info, path, result, position_context):
        plain = self._plain
        if plain.covers(return_type):
            try:
                return self._complete(plain, return_type, field_details_list, result)
            except _NotPlain:
                pass
        return super().complete_value(return_type, field_details_list, info, path, result, position_context)

    def _complete(self, plain: _PlainTypes, return_type: Any, field_details_list, value: Any) -> Any:
        if isinstance(return_type, GraphQLNonNull):
            completed = self._complete(plain, return_type.of_type, field_details_list, value)
            if completed is None:
                raise _NotPlain  # graphql-core names the field in its error
            return completed
        if value is None:
            return None
        if isinstance(return_type, GraphQLList):
            if not isinstance(value, list):
                raise _NotPlain
            item_type = return_type.of_type
            return [self._complete(plain, item_type, field_details_list, item) for item in value]
        if is_leaf_type(return_type):
            return _coerced(return_type, value)
        object_type = plain.of_class.get(type(value))
        if object_type is None or (object_type is not return_type and
                                   (not isinstance(return_type, GraphQLUnionType) or
                                    object_type not in return_type.types)):
            raise _NotPlain
        grouped_field_set, new_defer_usages, forbidden = self.collect_subfields(object_type, field_details_list)
        if new_defer_usages or forbidden:
            raise _NotPlain
        fields = plain.attributes[object_type]
        completed = {}
        for response_key, sub_fields in grouped_field_set.items():
            name = sub_fields[0].node.name.value
            if name == "__typename":
                completed[response_key] = object_type.name
                continue
            field_type, attribute, leaf, non_null = fields[name]
            field_value = getattr(value, attribute)
            if leaf is None:
                completed[response_key] = self._complete(plain, field_type, sub_fields, field_value)
            elif field_value is None:  # a leaf, inline: most fields are
                if non_null:
                    raise _NotPlain
                completed[response_key] = None
            else:
                completed[response_key] = _coerced(leaf, field_value)
        return completed


def _coerced(leaf_type: Any, value: Any) -> Any:
    """A leaf's value as its type serialises it; _NotPlain where graphql-core would report an error."""
    try:
        coerced = leaf_type.coerce_output_value(value)
    except Exception:
        raise _NotPlain from None
    if coerced is None:
        raise _NotPlain
    return coerced
