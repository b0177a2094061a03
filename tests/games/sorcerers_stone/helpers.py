"""Checks shared by the board tests of the Sorcerer's Stone."""

from __future__ import annotations

import jsonschema

from service.engine import Game


def board_types(board):
    """The GraphQL and OpenAPI types of one board's actions and view alone (``schema.game_types``):
    building them proves the board's schema is in the subset the APIs can express."""
    from schema.game_types import GameTypes

    class OneBoard(Game):
        id = f"{board.NAME}-only"
        title = f"{board.NAME} only"
        schema = {"options": {"type": "object", "properties": {}, "additionalProperties": False},
                  "actions": board.SCHEMA["actions"],
                  "view": {"type": "object", "properties": {"board": board.SCHEMA["view"]},
                           "required": ["board"], "additionalProperties": False}}

    return GameTypes(OneBoard())


def check_board_schema(board, *, undescribed: tuple[str, ...] = ("type",)) -> None:
    """The house style of a board's ``<name>.schema.json``: every object (nullable ones too) has a title
    starting with the board's name in PascalCase and ``additionalProperties: false``; every field but
    ``undescribed`` has a description; every titled enum is named like the objects; every action schema
    is a valid JSON Schema."""
    prefix = board.NAME.capitalize()

    def walk(node) -> None:
        if isinstance(node, dict):
            if node.get("type") in ("object", ["object", "null"]):
                assert node.get("title", "").startswith(prefix), node
                assert node["additionalProperties"] is False, node["title"]
                for name, prop in node["properties"].items():
                    assert name in undescribed or prop.get("description"), (node["title"], name)
            if "enum" in node and node.get("title"):
                assert node["title"].startswith(prefix), node["title"]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    # events are published to REST only and GraphQL carries them as JSON: tests/games/test_events.py holds them
    walk({part: schema for part, schema in board.SCHEMA.items() if part != "events"})
    for action in board.SCHEMA["actions"].values():
        jsonschema.Draft202012Validator.check_schema(action)
