"""Grimoire's Python client and bot runner: ``from grimoire.client import Client, AsyncClient``.

:mod:`grimoire.client` speaks the REST API (sync and async, on httpx), :mod:`grimoire.errors` names every
refusal, :mod:`grimoire.bot` is ``grimoire bot``. Walkthrough: docs/api.md, "Write a bot".
"""
