"""Validation results cached per parsed document, by identity.

strawberry's ``ValidationCache`` keys an LRU cache on the parsed document itself, and graphql-core hashes a
document by its content: every node, token and location, about 250 node hashes for a document selecting a
game's whole view, paid on every request, cache hit or not. strawberry's ``ParserCache`` hands out one
document object per query text, so the object's identity is as good a key and costs nothing. The cache holds
each document it keys on (:mod:`.identity_cache`).
"""

from __future__ import annotations

from typing import Iterator

from strawberry.extensions import SchemaExtension
from strawberry.schema.schema import validate_document

from .identity_cache import MISSING, IdentityCache


class DocumentValidationCache(SchemaExtension):
    """``on_validate`` answered from the last ``maxsize`` (document, rules) pairs validated."""

    def __init__(self, results: IdentityCache):
        self.results = results

    @classmethod
    def factory(cls, maxsize: int = 256):
        """The extension factory for a schema's ``extensions``: one cache, shared by every request."""
        results = IdentityCache(maxsize)
        return lambda: cls(results)

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        document, rules = context.graphql_document, tuple(context.validation_rules)
        errors = self.results.get((document,), (rules,))
        if errors is MISSING:
            errors = self.results.put((document,), validate_document(context.schema._schema, document, rules),
                                      (rules,))
        context.pre_execution_errors = errors
        yield
