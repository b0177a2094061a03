"""A bounded cache keyed by objects' identity.

Hashing a parsed GraphQL document walks every node of it; its identity costs nothing, and strawberry's
parser cache hands every request of one query text the same document. An ``id()`` names its object only
while the object lives, so each entry holds the objects its key names and a hit is checked against them.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

#: What :meth:`IdentityCache.get` answers for a key it does not hold (a remembered value may be None).
MISSING = object()


class IdentityCache:
    """Values remembered for the last ``maxsize`` keys: objects (by identity) and ``extra`` (by equality)."""

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self.results: OrderedDict[tuple, tuple[tuple, Any]] = OrderedDict()

    def get(self, objects: tuple, extra: tuple = ()) -> Any:
        key = (*map(id, objects), *extra)
        entry = self.results.get(key)
        if entry is None:
            return MISSING
        for held, given in zip(entry[0], objects):  # a loop: any() over a generator makes a generator per call
            if held is not given:
                return MISSING
        self.results.move_to_end(key)
        return entry[1]

    def put(self, objects: tuple, value: Any, extra: tuple = ()) -> Any:
        """Remember ``value`` and return it."""
        self.results[(*map(id, objects), *extra)] = (objects, value)
        if len(self.results) > self.maxsize:
            self.results.popitem(last=False)
        return value
