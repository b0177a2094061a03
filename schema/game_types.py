"""GraphQL types for one game, generated from the game's JSON Schemas.

Each game ships ``schema.json`` (see :mod:`service.engine.game`); from it we
build, with the game's PascalCase name as prefix (``casting-stones`` ->
``CastingStones``):

* ``<Game>View``: the object :meth:`Game.view` returns, nested objects named
  ``<Game><title>``;
* ``<Game><Type>Action``: one object type per action type; together they are
  the members of the union ``<Game>Action`` and of the schema-wide
  ``GameAction``;
* ``<Game>ActionInput``: one input with ``type`` and every other action field
  optional, so an action read from ``legalActions`` goes back verbatim: its
  ``type`` is the schema-wide ``ActionType`` enum on both sides (a per-game
  enum would give ``type`` a different type in each game, which a document
  covering two games may not select).

Field names are the JSON keys, unchanged, so what REST and GraphQL carry is
the same data, except where two games (or two actions of one game) use one
key with different types: GraphQL refuses a document selecting both, so the
game's schema gives one of them its own GraphQL name with
``"x-graphql-name"`` on the property (``card`` -> ``cardIndex``). The JSON key
stays as it is on the wire of REST and in the engine; the renamed field keeps
its JSON key as a deprecated GraphQL field (and input field) for one release
(docs/changelog.md).

Enum values are the GraphQL convention, SCREAMING_CASE (``replace`` ->
``REPLACE``): lowercase ones clash with method names in generated clients
(``str.replace``). The Python value of each member is the JSON string, so
REST and the JSON scalars (``events``, ``options``) keep the lowercase ones.

Values are converted from plain JSON into instances of the generated classes
by :meth:`GameTypes.to_view` and :meth:`GameTypes.to_action`, and inputs back
by :meth:`GameTypes.from_input`.
"""

import enum
import re
from dataclasses import dataclass
from typing import Annotated, Any, Iterable, Optional, Union

import strawberry
from strawberry.types.unset import UNSET

from service.engine import Game, MalformedAction

_GRAPHQL_NAME = re.compile(r"^[_A-Za-z][_0-9A-Za-z]*$")
_SCALARS = {"string": str, "integer": int, "number": float, "boolean": bool}
#: The schema.json keyword naming a property's GraphQL field where its JSON key would clash (module docstring).
RENAME = "x-graphql-name"
#: Until when a renamed field answers to its JSON key too (docs/changelog.md).
OLD_NAME_KEPT = "release 2.0"


def pascal(game_id: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[-_ ]+", game_id))


def screaming(value: str) -> str:
    """A GraphQL enum value name for a JSON string: ``choose_leader`` -> ``CHOOSE_LEADER``."""
    return re.sub(r"\W", "_", value).upper()


def graphql_enum(name: str, values: Iterable[str], description: str | None = None) -> Any:
    """A strawberry enum whose GraphQL values are SCREAMING_CASE and whose Python values are the JSON strings."""
    members = {}
    for value in values:
        member = screaming(value)
        if member in members:
            raise SchemaNotSupported(f"{name}: {value!r} and {members[member]!r} are both {member} in GraphQL")
        members[member] = value
    return strawberry.enum(enum.Enum(name, members), name=name, description=description)


def action_type_enum(games: Iterable[Game]) -> Any:
    """``ActionType``: every action type of these games, one enum for all (the module docstring says why)."""
    return graphql_enum("ActionType", sorted({t for game in games for t in game.action_schemas}),
                        "An action's type: the JSON `type` of an action, in SCREAMING_CASE.")


class SchemaNotSupported(ValueError):
    """A game's JSON Schema uses something outside the documented subset."""


#: The kinds of values a converter hands out as they are: JSON scalars, and enums' JSON strings.
_AS_IS = ("scalar", "enum")


@dataclass
class _Converter:
    """Turns plain JSON into instances of generated types (and inputs back)."""

    kind: str  # "scalar", "enum", "list", "object"
    python_type: Any = None  # an object's generated class
    item: Optional["_Converter"] = None
    fields: Optional[list[tuple[str, str, "_Converter"]]] = None  # (python attribute, json key, converter)

    def out(self, value: Any) -> Any:
        if value is None:
            return None
        if self.kind in _AS_IS:
            # an enum's GraphQL type serialises its JSON string by one lookup; a member of the Python enum
            # costs it a scan of every value (strawberry's CustomGraphQLEnumType)
            return value
        if self.kind == "list":
            if self.item.kind in _AS_IS:
                return value
            return [self.item.out(v) for v in value]
        # A generated type is a plain dataclass: its attributes set directly, without the keyword-argument
        # call of its __init__, and leaves taken as they are (a view has hundreds of them).
        instance = object.__new__(self.python_type)
        instance.__dict__.update({attr: value.get(key) if conv.kind in _AS_IS else conv.out(value.get(key))
                                  for attr, key, conv in self.fields})
        return instance

    def back(self, value: Any) -> Any:
        """An input value (enum members, lists) back to plain JSON."""
        if value is None:
            return None
        if self.kind == "enum":
            return value.value if isinstance(value, enum.Enum) else value
        if self.kind == "list":
            return [self.item.back(v) for v in value]
        return value


def _attr(name: str) -> str:
    """A Python attribute name for a GraphQL field name (``type`` and other keywords get a ``_``)."""
    attr = re.sub(r"\W", "_", name)
    return attr + "_" if attr in {"type", "from", "for", "in", "is", "not", "and", "or", "class", "def"} else attr


def _renamed(key: str, new: str) -> str:
    return f"Renamed {new} (the JSON key stays `{key}`); this name is removed in {OLD_NAME_KEPT}."


def _field_names(key: str, prop: dict, where: str) -> tuple[str, Optional[str]]:
    """The GraphQL name of a JSON key, and the key itself when it is kept as the deprecated old name."""
    name = prop.get(RENAME, key)
    for each in (key, name):
        if not _GRAPHQL_NAME.match(each):
            raise SchemaNotSupported(f"{where}: {each!r} is not a valid GraphQL name")
    return name, (key if name != key else None)


class GameTypes:
    """The GraphQL types of one game."""

    def __init__(self, game: Game, action_type: Any = None):
        self.game = game
        self.prefix = pascal(game.id)
        self.action_type = action_type_enum([game]) if action_type is None else action_type
        self._named: dict[str, Any] = {}
        self.view_type, self._view_converter = self._object(game.view_schema, f"{self.prefix}View", "view")
        self.action_types: dict[str, Any] = {}
        self._action_converters: dict[str, _Converter] = {}
        # input field name -> (python type, converter, signature, json key, the new names of a kept old name)
        input_fields: dict[str, tuple[Any, _Converter, str, str, set[str]]] = {}
        for action_type, schema in sorted(game.action_schemas.items()):
            name = f"{self.prefix}{pascal(action_type)}Action"
            cls, conv = self._object(schema, name, f"action {action_type}", action=True)
            self.action_types[action_type] = cls
            self._action_converters[action_type] = conv
            for key, prop in schema.get("properties", {}).items():
                if key == "type":
                    continue
                python_type, conv_field = self._field_type(prop, f"{name}.{key}", input=True)
                new, old = _field_names(key, prop, f"{game.id}: {name}")
                for field_name in filter(None, (new, old)):
                    entry = (python_type, conv_field, _signature(prop), key, {new} if field_name == old else set())
                    known = input_fields.get(field_name)
                    if known is None:
                        input_fields[field_name] = entry
                    elif known[2:4] == entry[2:4]:  # one field: live if any action has it live
                        input_fields[field_name] = (*known[:4], known[4] | entry[4] if known[4] and entry[4] else set())
                    elif known[4] and not entry[4]:  # a kept old name gives way to a live field of another type
                        input_fields[field_name] = entry
                    elif not (entry[4] and not known[4]):
                        raise SchemaNotSupported(f"{game.id}: action field {field_name!r} has different types "
                                                 f"in different actions; give one an {RENAME!r}")
        self.action_union = Annotated[Union[tuple(self.action_types.values())],
                                      strawberry.union(f"{self.prefix}Action",
                                                       description=f"An action of {game.title}.")]
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
        for name, (attr, key, conv) in self._input_fields.items():
            field_value = getattr(value, attr)
            if field_value is UNSET or field_value is None:
                continue
            field_value = conv.back(field_value)
            if action.setdefault(key, field_value) != field_value:  # a renamed field sent under both names
                raise MalformedAction(f"{name} and another name of `{key}` disagree.")
        return action

    # -- generation ---------------------------------------------------------------

    def _object(self, schema: dict, name: str, where: str, *, action: bool = False) -> tuple[Any, _Converter]:
        if _base_type(schema, where) != "object" or "properties" not in schema:
            raise SchemaNotSupported(f"{self.game.id}: {where} must be an object schema with properties")
        if name in self._named:
            return self._named[name]
        required = set(schema.get("required", ()))
        annotations, namespace, fields = {}, {}, []
        for key, prop in schema["properties"].items():
            if action and key == "type":
                python_type, conv = self.action_type, _Converter("enum")
            elif key == "type" and "const" in prop:
                python_type, conv = str, _Converter("scalar")
            else:
                python_type, conv = self._field_type(prop, f"{name}.{key}")
            nullable = key not in required or _is_nullable(prop)
            new, old = _field_names(key, prop, f"{self.game.id}: {where}")
            for field_name, deprecation in ((new, None), (old, _renamed(key, f"`{new}`"))):
                if field_name is None:
                    continue
                attr = _attr(field_name)
                if attr in annotations:
                    raise SchemaNotSupported(f"{self.game.id}: {where}: two fields are named {field_name!r}")
                annotations[attr] = Optional[python_type] if nullable else python_type
                # no default: instances are made whole by _Converter.out, never by calling the class
                namespace[attr] = strawberry.field(name=field_name, description=prop.get("description"),
                                                   deprecation_reason=deprecation)
                fields.append((attr, key, conv))
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
                    self._named[name] = (graphql_enum(name, values, prop.get("description")), None)
                gql_enum = self._named[name][0]
                if {m.value for m in gql_enum} != set(values):
                    raise SchemaNotSupported(f"{self.game.id}: {where}: enum {title!r} has other values elsewhere")
                return gql_enum, _Converter("enum")
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
        annotations = {"type_": self.action_type}
        namespace = {"type_": strawberry.field(name="type", description="The action type.")}
        converters = {}
        for field_name, (python_type, conv, _, key, renamed_to) in sorted(input_fields.items()):
            attr = _attr(field_name)
            annotations[attr] = Optional[python_type]
            deprecation = _renamed(key, " or ".join(f"`{n}`" for n in sorted(renamed_to))) if renamed_to else None
            namespace[attr] = strawberry.field(name=field_name, default=UNSET, deprecation_reason=deprecation)
            converters[field_name] = (attr, key, conv)
        namespace["__annotations__"] = annotations
        cls = strawberry.input(type(name, (), namespace), name=name,
                               description=f"An action of {self.game.title}: `type` and that action's fields.")
        return cls, converters


def _signature(prop: dict) -> str:
    return repr(sorted((k, v) for k, v in prop.items() if k not in {"description", "title", "minimum", "maximum",
                                                                   "minItems", "maxItems", "enum", "uniqueItems",
                                                                   RENAME}))


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
