"""GraphQL types for one game, generated from the game's JSON Schemas.

Each game ships ``schema.json`` (see :mod:`service.engine.game`); from it we
build, with the game's PascalCase name as prefix (``casting-stones`` ->
``CastingStones``):

* ``<Game>View``: the object :meth:`Game.view` returns, nested objects named
  ``<Game><title>``;
* ``<Game><Type>Action``: one object type per action type; together they are
  the members of the schema-wide ``GameAction`` union;
* ``<Game>ActionInput``: one input with ``type`` and every other action field
  optional, so an action read from ``legalActions`` goes back verbatim.

Field names are the JSON keys, unchanged, so what REST and GraphQL carry is
the same data. Values are converted from plain JSON into instances of the
generated classes by :meth:`GameTypes.to_view` and :meth:`GameTypes.to_action`.
"""

import enum
import re
from dataclasses import dataclass
from typing import Any, Optional

import strawberry
from strawberry.types.unset import UNSET

from service.engine import Game

_GRAPHQL_NAME = re.compile(r"^[_A-Za-z][_0-9A-Za-z]*$")
_SCALARS = {"string": str, "integer": int, "number": float, "boolean": bool}


def pascal(game_id: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[-_ ]+", game_id))


class SchemaNotSupported(ValueError):
    """A game's JSON Schema uses something outside the documented subset."""


@dataclass
class _Converter:
    """Turns plain JSON into instances of generated types (and inputs back)."""

    kind: str  # "scalar", "enum", "list", "object"
    python_type: Any = None
    item: Optional["_Converter"] = None
    fields: Optional[dict[str, tuple[str, "_Converter"]]] = None  # json key -> (python attribute, converter)

    def out(self, value: Any) -> Any:
        if value is None:
            return None
        if self.kind == "scalar":
            return value
        if self.kind == "enum":
            return self.python_type(value)
        if self.kind == "list":
            return [self.item.out(v) for v in value]
        return self.python_type(**{attr: conv.out(value.get(key)) for key, (attr, conv) in self.fields.items()})

    def back(self, value: Any) -> Any:
        """An input value (enum members, lists) back to plain JSON."""
        if value is None:
            return None
        if self.kind == "enum":
            return value.value if isinstance(value, enum.Enum) else value
        if self.kind == "list":
            return [self.item.back(v) for v in value]
        return value


def _attr(key: str) -> str:
    """A Python attribute name for a JSON key (``type`` and other keywords get a ``_``)."""
    attr = re.sub(r"\W", "_", key)
    return attr + "_" if attr in {"type", "from", "for", "in", "is", "not", "and", "or", "class", "def"} else attr


class GameTypes:
    """The GraphQL types of one game."""

    def __init__(self, game: Game):
        self.game = game
        self.prefix = pascal(game.id)
        self._named: dict[str, Any] = {}
        self.view_type, self._view_converter = self._object(game.view_schema, f"{self.prefix}View", "view")
        self.action_types: dict[str, Any] = {}
        self._action_converters: dict[str, _Converter] = {}
        input_fields: dict[str, tuple[Any, _Converter, str]] = {}
        # GraphQL refuses one selection asking for a field that is `String!` in one member of
        # a union and `String` in another, so a field optional in any action is optional in all.
        sometimes_absent = {key for schema in game.action_schemas.values() for key, prop in
                            schema.get("properties", {}).items()
                            if key not in schema.get("required", ()) or _is_nullable(prop)}
        for action_type, schema in sorted(game.action_schemas.items()):
            name = f"{self.prefix}{pascal(action_type)}Action"
            cls, conv = self._object(schema, name, f"action {action_type}", optional=sometimes_absent)
            self.action_types[action_type] = cls
            self._action_converters[action_type] = conv
            for key, prop in schema.get("properties", {}).items():
                if key == "type":
                    continue
                python_type, conv_field = self._field_type(prop, f"{name}.{key}", input=True)
                known = input_fields.get(key)
                if known is not None and known[2] != _signature(prop):
                    raise SchemaNotSupported(
                        f"{game.id}: action field {key!r} has different types in different actions")
                input_fields[key] = (python_type, conv_field, _signature(prop))
        self.action_input, self._input_fields = self._action_input(input_fields)

    def catalogue_type(self, catalogue) -> tuple[Any, "_Converter"]:
        """The type of one item of a game's catalogue, and its converter."""
        return self._object(catalogue.item_schema, f"{self.prefix}{catalogue.item_schema['title']}",
                            f"catalogue {catalogue.name}")

    # -- conversion ---------------------------------------------------------------

    def to_view(self, view: dict) -> Any:
        return self._view_converter.out(view)

    def to_action(self, action: dict) -> Any:
        return self._action_converters[action["type"]].out(action)

    def from_input(self, value: Any) -> dict:
        """A ``<Game>ActionInput`` as the plain JSON action the engine takes."""
        kind = value.type_
        action = {"type": kind.value if isinstance(kind, enum.Enum) else kind}
        for key, (attr, conv) in self._input_fields.items():
            field_value = getattr(value, attr)
            if field_value is not UNSET and field_value is not None:
                action[key] = conv.back(field_value)
        return action

    # -- generation ---------------------------------------------------------------

    def _object(self, schema: dict, name: str, where: str, *, optional: set[str] = frozenset()) -> tuple[Any, _Converter]:
        if _base_type(schema, where) != "object" or "properties" not in schema:
            raise SchemaNotSupported(f"{self.game.id}: {where} must be an object schema with properties")
        if name in self._named:
            return self._named[name]
        required = set(schema.get("required", ()))
        annotations, namespace, fields = {}, {}, {}
        for key, prop in schema["properties"].items():
            if not _GRAPHQL_NAME.match(key):
                raise SchemaNotSupported(f"{self.game.id}: {where} key {key!r} is not a valid GraphQL name")
            python_type, conv = self._field_type(prop, f"{name}.{key}")
            if key == "type" and "const" in prop:
                python_type, conv = str, _Converter("scalar")
            nullable = key not in required or _is_nullable(prop) or key in optional
            attr = _attr(key)
            annotations[attr] = Optional[python_type] if nullable else python_type
            namespace[attr] = strawberry.field(name=key, description=prop.get("description"), default=None)
            fields[key] = (attr, conv)
        namespace["__annotations__"] = annotations
        cls = strawberry.type(type(name, (), namespace), name=name, description=schema.get("description"))
        result = (cls, _Converter("object", cls, fields=fields))
        self._named[name] = result
        return result

    def _field_type(self, prop: dict, where: str, *, input: bool = False) -> tuple[Any, _Converter]:
        if "enum" in prop:
            values = [v for v in prop["enum"] if v is not None]  # null is the field's nullability
            title = prop.get("title")
            if title and all(isinstance(v, str) and _GRAPHQL_NAME.match(v) for v in values):
                name = f"{self.prefix}{title}"
                if name not in self._named:
                    py_enum = enum.Enum(name, {v: v for v in values})
                    self._named[name] = (strawberry.enum(py_enum, name=name, description=prop.get("description")),
                                         None)
                gql_enum = self._named[name][0]
                if {m.value for m in gql_enum} != set(values):
                    raise SchemaNotSupported(f"{self.game.id}: {where}: enum {title!r} has other values elsewhere")
                return gql_enum, _Converter("enum", gql_enum)
            return _SCALARS[_base_type(prop, where) if "type" in prop else "string"], _Converter("scalar")
        if "const" in prop:
            return str, _Converter("scalar")
        base = _base_type(prop, where)
        if base in _SCALARS:
            return _SCALARS[base], _Converter("scalar")
        if base == "array":
            items = prop.get("items", {})
            item_type, item_conv = self._field_type(items, f"{where}[]", input=input)
            if _is_nullable(items):
                item_type = Optional[item_type]
            return list[item_type], _Converter("list", item=item_conv)
        if base == "object":
            if input:
                raise SchemaNotSupported(f"{self.game.id}: {where}: objects inside actions are not supported")
            title = prop.get("title")
            if not title:
                raise SchemaNotSupported(f"{self.game.id}: {where}: nested objects need a title")
            return self._object(prop, f"{self.prefix}{title}", where)
        raise SchemaNotSupported(f"{self.game.id}: {where}: unsupported schema {prop!r}")

    def _action_input(self, input_fields: dict) -> tuple[Any, dict]:
        name = f"{self.prefix}ActionInput"
        type_names = sorted(self.game.action_schemas)
        type_enum_name = f"{self.prefix}ActionType"
        if all(_GRAPHQL_NAME.match(t) for t in type_names):
            type_enum = strawberry.enum(enum.Enum(type_enum_name, {t: t for t in type_names}), name=type_enum_name)
        else:
            type_enum = str
        annotations = {"type_": type_enum}
        namespace = {"type_": strawberry.field(name="type", description="The action type.")}
        converters = {}
        for key, (python_type, conv, _) in sorted(input_fields.items()):
            attr = _attr(key)
            annotations[attr] = Optional[python_type]
            namespace[attr] = strawberry.field(name=key, default=UNSET)
            converters[key] = (attr, conv)
        namespace["__annotations__"] = annotations
        cls = strawberry.input(type(name, (), namespace), name=name,
                               description=f"An action of {self.game.title}: `type` and that action's fields.")
        return cls, converters


def _signature(prop: dict) -> str:
    return repr(sorted((k, v) for k, v in prop.items() if k not in {"description", "title", "minimum", "maximum",
                                                                   "minItems", "maxItems", "enum", "uniqueItems"}))


def _base_type(prop: dict, where: str) -> str:
    kind = prop.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) != 1:
            raise SchemaNotSupported(f"{where}: union types are not supported")
        return kinds[0]
    if kind is None:
        raise SchemaNotSupported(f"{where}: a type is required")
    return kind


def _is_nullable(prop: dict) -> bool:
    kind = prop.get("type")
    return isinstance(kind, list) and "null" in kind
