"""The GraphQL API: types generated per game, queries, mutations; ``schema.graphql`` is its SDL."""

from .api import build_schema
from .asgi import GraphQLApp

__all__ = ["GraphQLApp", "build_schema"]
