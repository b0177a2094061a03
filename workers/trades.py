"""The trades' sweep: finish the trades whose carrying out stopped half-way (service/store/trades.py).

``sweep_trades()`` runs in every ``grimoire worker`` about once a second (workers/runtime.py); running
it in several workers at once is safe (every step of a trade is idempotent).
"""

from __future__ import annotations

from service.store.collections import attach

from .jobs import _retrying
from .runtime import runtime


def sweep_trades() -> int:
    return _retrying(_sweep_trades)


async def _sweep_trades() -> int:
    rt = runtime()
    async with rt.store() as store:
        attached = attach(store, rt.settings)
        if attached is None:
            return 0
        _collections, trades = attached
        return await trades.sweep()
