"""The ``random`` level: uniform over the legal actions."""

from __future__ import annotations


def choose(bot_input, rng):
    return rng.choice(bot_input.legal_actions)
