"""A query cost limit: a validation rule refusing documents that would do too much work.

Depth, alias and token limits bound a document's *shape*; cost bounds the work
it asks for. An operation's cost is the number of fields it would resolve,
counting every field once and multiplying what is selected below a list by
that list's expected length: the ``limit`` (or ``first``) argument, else that
argument's default, else :data:`ASSUMED_LIST_LENGTH`. A ``limit`` declared with
:func:`limit_argument` counts as at most the largest page its resolver serves, and,
given as a variable (whose value validation does not know), as that largest page.
Fragments are
expanded where they are spread; every branch of a union or interface is
counted (an upper bound). Introspection fields (``__schema``, ``__type``) cost
nothing: the depth and token limits bound them, and GraphiQL needs them.
"""

from __future__ import annotations

import strawberry
from graphql import (
    FieldNode, FragmentSpreadNode, GraphQLError, GraphQLInterfaceType, GraphQLList, GraphQLNonNull, GraphQLObjectType,
    InlineFragmentNode, IntValueNode, OperationDefinitionNode, ValidationRule,
)

#: The length assumed for a list whose query gives no ``limit``/``first``.
ASSUMED_LIST_LENGTH = 10

#: Where :func:`limit_argument` leaves a list's largest page, in its strawberry argument's metadata
_LARGEST_PAGE = "largest_page"


def limit_argument(largest_page: int) -> strawberry.argument:
    """The annotation of a list field's ``limit`` argument whose resolver serves at most ``largest_page`` items:
    ``limit: Annotated[int, limit_argument(1000)] = 100``. The cost rule counts the list as that many items
    when the limit is a variable, and never as more."""
    return strawberry.argument(metadata={_LARGEST_PAGE: largest_page})


def max_cost_rule(max_cost: int) -> type[ValidationRule]:
    """A validation rule class refusing operations that cost more than ``max_cost``."""

    class MaxCostRule(ValidationRule):
        def enter_operation_definition(self, node: OperationDefinitionNode, *_args) -> None:
            schema = self.context.schema
            root = {"query": schema.query_type, "mutation": schema.mutation_type,
                    "subscription": schema.subscription_type}[node.operation.value]
            fragments = {f.name.value: f for f in self.context.document.definitions
                         if f.kind == "fragment_definition"}
            cost = _cost(node.selection_set, root, schema, fragments, frozenset())
            if cost > max_cost:
                name = node.name.value if node.name else "the operation"
                self.report_error(GraphQLError(
                    f"{name} costs {cost}, more than the limit of {max_cost}: select fewer fields, or pass a "
                    f"smaller limit to lists (each list is counted as {ASSUMED_LIST_LENGTH} items unless limited).",
                    node, extensions={"code": "query_too_costly", "cost": cost, "max_cost": max_cost}))

    return MaxCostRule


def _list_length(field: FieldNode, definition) -> int:
    """The ``limit``/``first`` the query gives (at most the largest page, a variable counting as that page),
    else the argument's default, else the assumption."""
    for argument in field.arguments or ():
        name = argument.name.value
        if name not in ("limit", "first"):
            continue
        largest = _largest_page(definition.args.get(name))
        if isinstance(argument.value, IntValueNode):
            given = max(int(argument.value.value), 1)
            return min(given, largest) if largest else given
        if largest:
            return largest
    for name in ("limit", "first"):
        default = definition.args[name].default_value if name in definition.args else None
        if isinstance(default, int):
            return max(default, 1)
    return ASSUMED_LIST_LENGTH


def _largest_page(argument) -> int | None:
    """The largest page :func:`limit_argument` declared for ``argument`` (a GraphQLArgument), if it did."""
    declared = argument.extensions.get("strawberry-definition") if argument is not None else None
    return getattr(declared, "metadata", {}).get(_LARGEST_PAGE)


def _cost(selection_set, parent, schema, fragments, spreading: frozenset) -> int:
    if selection_set is None:
        return 0
    total = 0
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            name = selection.name.value
            if name.startswith("__"):
                continue
            definition = parent.fields.get(name) if isinstance(parent, (GraphQLObjectType,
                                                                        GraphQLInterfaceType)) else None
            if definition is None:  # unknown fields are the other validation rules' business
                total += 1
                continue
            kind, multiplier = definition.type, 1
            while isinstance(kind, (GraphQLNonNull, GraphQLList)):
                if isinstance(kind, GraphQLList):
                    multiplier *= _list_length(selection, definition)
                kind = kind.of_type
            total += 1 + multiplier * _cost(selection.selection_set, kind, schema, fragments, spreading)
        elif isinstance(selection, InlineFragmentNode):
            condition = selection.type_condition
            kind = schema.get_type(condition.name.value) if condition else parent
            total += _cost(selection.selection_set, kind or parent, schema, fragments, spreading)
        elif isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            fragment = fragments.get(name)
            if fragment is None or name in spreading:  # cycles are refused by another rule
                continue
            kind = schema.get_type(fragment.type_condition.name.value) or parent
            total += _cost(fragment.selection_set, kind, schema, fragments, spreading | {name})
    return total
