"""Validation results cached per parsed document, by identity.

strawberry's ``ValidationCache`` keys an LRU cache on the parsed document itself, and graphql-core hashes a
document by its content: every node, token and location, about 250 node hashes for a document selecting a
game's whole view, paid on every request, cache hit or not. strawberry's ``ParserCache`` hands out one
document object per query text, so the object's identity is as good a key and costs nothing. The cache holds
each document it keys on, so an id is never reused while its entry lives.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterator

from strawberry.extensions import SchemaExtension
from strawberry.schema.schema import validate_document


class DocumentValidationCache(SchemaExtension):
    """``on_validate`` answered from the last ``maxsize`` (document, rules) pairs validated."""

    def __init__(self, results: "OrderedDict[tuple, tuple]", maxsize: int):
        self.results, self.maxsize = results, maxsize

    @classmethod
    def factory(cls, maxsize: int = 256):
        """The extension factory for a schema's ``extensions``: one cache, shared by every request."""
        results: OrderedDict[tuple, tuple] = OrderedDict()
        return lambda: cls(results, maxsize)

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        document, rules = context.graphql_document, tuple(context.validation_rules)
        key = (id(context.schema._schema), id(document), rules)
        cached = self.results.get(key)
        if cached is not None and cached[0] is document:
            self.results.move_to_end(key)
            errors = cached[1]
        else:
            errors = validate_document(context.schema._schema, document, rules)
            self.results[key] = (document, errors)
            if len(self.results) > self.maxsize:
                self.results.popitem(last=False)
        context.pre_execution_errors = errors
        yield
