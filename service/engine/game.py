"""The contract every game implements.

A game is pure data in, pure data out. It never touches Redis, HTTP or the
clock; all randomness comes from :class:`service.engine.rng.Rng`, whose state
lives inside the game's State. The service drives a game through five calls:

``setup(options, seats, seed) -> State``
    A new match. ``options`` has been validated against ``options_schema``
    and its defaults filled in; it always holds ``"variant"``.
``legal_actions(state, seat) -> list[Action]``
    Every concrete action ``seat`` may take now, empty when it is not theirs
    to act. Clients and bots pick one and send it back verbatim.
``apply(state, seat, action) -> (State, list[Event])``
    Provided here: checks the action, then calls the game's :meth:`Game.play`
    on a private copy. Raises a :class:`~service.engine.errors.RuleError` and
    changes nothing when the action is refused.
``view(state, seat | None) -> dict``
    What ``seat`` (or a spectator, ``None``) may see. The only door out of a
    state: every API response, event, log entry and bot input goes through it.
``to_act(state) -> set[int]`` and ``result(state) -> dict | None``
    Who the game waits on (several seats may act at once) and, once the match
    is over, ``{"winners": [seat, ...], "scores": [...] | None, "reason": str, "cause": str}``:
    ``reason`` is a sentence for people, ``cause`` a snake_case code for programs.
``determinise(view, seat, rng) -> State`` (optional)
    A full state consistent with ``seat``'s view, hidden parts sampled; only
    the ``strong`` bot level calls it, on its own samples.

The board as an actor
---------------------
A game may wait on the board itself rather than on a seat (McGonagall's
chess: the colour no player holds). It names it with :data:`BOARD_SEAT`
(``-1``): ``to_act(state)`` then contains ``BOARD_SEAT``,
``legal_actions(state, BOARD_SEAT)`` lists the board's actions and
``apply(state, BOARD_SEAT, action)`` plays one. Generic drivers (random
playouts, replays, searches) need nothing special: they play whoever is in
``to_act``. Only trusted server-side callers act as the board -- the bot
worker job, with ``acting_seat=BOARD_SEAT`` -- and no token ever maps to it.
Never index a list of seats with it: ``seats[-1]`` is silently the last seat.

Data shapes
-----------
State
    A JSON-serialisable dict. It holds the RNG state under any key the game
    likes. Never shown to anyone directly.
Action
    A dict with a ``"type"`` naming one of ``action_schemas``. Lists inside an
    action are in the canonical order that :meth:`Game.legal_actions` uses.
Event
    A dict with a ``"type"``. An event carrying hidden information names the
    seats allowed to see it in ``"audience"`` (a list of seats); an event
    without ``"audience"`` is public. :func:`events_for` filters a list of
    events for one seat. A game that reveals a private fact to one seat emits
    a public event without the secret and a private one with it.

Schemas
-------
Each game ships ``schema.json`` beside its rules with four JSON Schemas:
``options`` (an object; every property has a ``default``), ``actions`` (action
type -> object schema, ``type`` given as a ``const``), ``view`` (the object
:meth:`Game.view` returns) and ``events`` (event type -> object schema, without
``audience``, which the APIs strip; tests/games/test_events.py checks random play
against them). The APIs build typed GraphQL types and the OpenAPI components
from them, so they keep to a subset that both can express:

* objects: ``properties``, ``required``, ``"additionalProperties": false`` and,
  for every object below the root, a PascalCase ``title`` unique in the game;
* arrays with ``items``; ``string``, ``integer``, ``number``, ``boolean``;
  nullable as ``"type": ["integer", "null"]``;
* string ``enum`` with a ``title`` (becomes a GraphQL enum) or without one
  (a plain string);
* no maps (``additionalProperties`` schemas), no ``oneOf``/``anyOf``;
* a field whose JSON key means another type in another game carries
  ``"x-graphql-name"``: its GraphQL name (the JSON key is unchanged; docs/api.md,
  "GraphQL names").
"""

from __future__ import annotations

import functools
import json
import marshal
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any, Callable

import jsonschema

from .rng import Rng
from .errors import IllegalAction, InvalidOptions, MalformedAction, MatchFinished, NotYourTurn

if TYPE_CHECKING:
    from .collectibles import Collectibles

State = dict[str, Any]
Action = dict[str, Any]
Event = dict[str, Any]

#: The board itself as an actor of the match (see "The board as an actor" above): not a seat.
BOARD_SEAT = -1
#: How both APIs document a result's ``cause``.
RESULT_CAUSE = ("Why the match ended, for programs: a snake_case code per game (snitch, round_limit, tower...); "
                "each game's list is in docs/rules/<game>.md. Null for matches finished before causes existed.")
#: How both APIs document ``BOARD_SEAT`` wherever ``to_act`` or an acting seat may hold it.
BOARD_SEAT_NOTE = ("-1: the board itself, played by the bot workers (McGonagall's chess: the colour no player "
                   "holds).")


@dataclass(frozen=True)
class Variant:
    id: str
    title: str
    description: str


@dataclass(frozen=True)
class Catalogue:
    """Static reference data a game publishes, such as Casting Stones' stones.

    The APIs serve it as ``GET /v1/games/<game>/<name>`` and as a typed GraphQL
    query, filterable by exact match on each field named in ``filters``.
    ``item_schema`` is a titled object schema in the same subset as views.
    ``params`` names integer parameters (name -> JSON Schema with a default)
    passed to ``items``, for generated data such as seeded booster packs.
    """

    name: str
    item_schema: dict[str, Any]
    filters: tuple[str, ...]
    items: Callable[..., list[dict[str, Any]]]
    params: dict[str, dict[str, Any]] = field(default_factory=dict)


def load_data(package: str, name: str) -> Any:
    """Load a JSON data file shipped inside a game's package."""
    return json.loads(resources.files(package).joinpath(name).read_text(encoding="utf-8"))


def _clone(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _clone(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_clone(v) for v in data]
    return data


def clone(data: Any) -> Any:
    """A deep copy of plain JSON data (dicts, lists, scalars).

    Done in C by a ``marshal`` round trip at format version 2, which writes no
    back-references: an object reached twice is copied twice, as the plain
    recursive copy does (a state never shares a list between two places after
    it). Data ``marshal`` refuses (a subclass of dict, list or int) is copied
    by the plain recursion."""
    try:
        return marshal.loads(marshal.dumps(data, 2))
    except ValueError:
        return _clone(data)


def _frozen(data: Any) -> Any:
    """A hashable image of plain JSON data that tells its types apart (``True`` from ``1``, ``1.0`` from
    ``1``, a list from a dict), for caches keyed on actions. Raises TypeError for anything else."""
    kind = type(data)
    if kind is dict:
        return (dict, tuple([(k, _frozen(v)) for k, v in data.items()]))
    if kind is list:
        return (list, tuple([_frozen(v) for v in data]))
    if kind is str or kind is int or kind is bool or kind is float or data is None:
        return (kind, data)
    raise TypeError(f"not plain JSON data: {kind.__name__}")


#: Keywords no validation reads (annotations for people and the API builders): :func:`_quick_check` skips them.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "x-graphql-name"})
#: The exact Python type of each JSON Schema type :func:`_quick_check` handles.
_EXACT_TYPES = {"object": dict, "array": list, "string": str, "integer": int, "boolean": bool}


def _quick_check(schema: Any) -> Callable[[Any], bool] | None:
    """A fast test for data ``schema`` accepts: True only if JSON Schema validation finds no error in it.

    False means "maybe not": the caller then runs the full validator, which also words the error. Only
    the keywords the games' action schemas use are understood (``type``, string ``const`` and ``enum``,
    ``pattern``, ``properties``, ``required``, ``additionalProperties: false``, integer ``minimum`` and
    ``maximum``, ``items``, ``minItems``, ``maxItems``, ``uniqueItems``), each tested at least as strictly
    as jsonschema (exact types: a subclass or a bool where an integer is due goes to the validator);
    a schema with any other keyword gets None: always validate it fully."""
    if not isinstance(schema, dict):
        return None
    tests: list[Callable[[Any], bool]] = []
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key == "type":
            kind = _EXACT_TYPES.get(value) if isinstance(value, str) else None
            if kind is None:
                return None
            tests.append(lambda x, kind=kind: type(x) is kind)
        elif key in ("const", "enum"):
            values = [value] if key == "const" else value
            if not isinstance(values, list) or not all(type(v) is str for v in values):
                return None
            allowed = frozenset(values)
            tests.append(lambda x, allowed=allowed: type(x) is str and x in allowed)
        elif key == "pattern" and isinstance(value, str):
            # jsonschema's own test: re.search with the pattern as written.
            tests.append(lambda x, pattern=value: type(x) is str and re.search(pattern, x) is not None)
        elif key in ("minimum", "maximum") and type(value) is int:
            if key == "minimum":
                tests.append(lambda x, bound=value: type(x) is int and x >= bound)
            else:
                tests.append(lambda x, bound=value: type(x) is int and x <= bound)
        elif key in ("minItems", "maxItems") and type(value) is int:
            if key == "minItems":
                tests.append(lambda x, bound=value: type(x) is list and len(x) >= bound)
            else:
                tests.append(lambda x, bound=value: type(x) is list and len(x) <= bound)
        elif key == "uniqueItems" and type(value) is bool:
            if value:
                # Strings and integers (not bools) are unique for jsonschema exactly when they are for a set.
                tests.append(lambda x: type(x) is list and all(type(e) is str or type(e) is int for e in x)
                             and len(set(x)) == len(x))
        elif key == "items":
            item = _quick_check(value)
            if item is None:
                return None
            tests.append(lambda x, item=item: type(x) is list and all(item(e) for e in x))
        elif key == "required" and isinstance(value, list):
            names = tuple(value)
            tests.append(lambda x, names=names: type(x) is dict and all(name in x for name in names))
        elif key == "properties" and isinstance(value, dict):
            subs = {name: _quick_check(sub) for name, sub in value.items()}
            if any(sub is None for sub in subs.values()):
                return None
            pairs = tuple(subs.items())
            tests.append(lambda x, pairs=pairs: type(x) is dict
                         and all(sub(x[name]) for name, sub in pairs if name in x))
        elif key == "additionalProperties" and type(value) is bool and "patternProperties" not in schema:
            if not value:
                known = frozenset(schema.get("properties", {}))
                tests.append(lambda x, known=known: type(x) is dict and known.issuperset(x))
        else:
            return None
    checks = tuple(tests)
    return lambda x: all(test(x) for test in checks)


def events_for(events: list[Event], seat: int | None) -> list[Event]:
    """The events ``seat`` may see (``None``: a spectator), without ``audience``."""
    visible = []
    for event in events:
        audience = event.get("audience")
        if audience is None:
            visible.append(event)
        elif seat is not None and seat in audience:
            visible.append({k: v for k, v in event.items() if k != "audience"})
    return visible


class Game:
    """Base class of every game. Subclasses fill in the class attributes and
    implement :meth:`setup`, :meth:`legal_actions`, :meth:`play`, :meth:`view`,
    :meth:`to_act` and :meth:`result`."""

    id: str = ""
    title: str = ""
    min_seats: int = 2
    max_seats: int = 2
    variants: tuple[Variant, ...] = ()
    summary: str = ""
    #: ``{"options": ..., "actions": {...}, "view": ...}``, see the module docstring.
    schema: dict[str, Any] = {}
    #: Reference data the game publishes (stone charts, card lists).
    catalogues: tuple[Catalogue, ...] = ()
    #: What a game with collectibles tells the service (service/engine/collectibles.py): sets players open,
    #: what an action needs them to own, collectors' views. None: the game has none.
    collectibles: "Collectibles | None" = None
    #: The version of the game's rules (each game reads it from its package's ``rules_version.json``), a
    #: string that changes whenever the game's behaviour does. Every match records it at creation and is
    #: then played only by a process that has that version (docs/operations.md, "Rolling out a rules change").
    rules_version: str = "1"

    # -- to implement -------------------------------------------------------

    def setup(self, options: dict[str, Any], seats: int, seed: int) -> State:
        raise NotImplementedError

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        raise NotImplementedError

    def play(self, state: State, seat: int, action: Action) -> list[Event]:
        """Carry out a legal ``action`` on ``state`` in place; return its events.

        Called by :meth:`apply` on a private copy, only with an action that
        :meth:`is_legal` accepted, so it need not re-check legality.
        """
        raise NotImplementedError

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        raise NotImplementedError

    def to_act(self, state: State) -> set[int]:
        raise NotImplementedError

    def result(self, state: State) -> dict[str, Any] | None:
        raise NotImplementedError

    # -- may override -------------------------------------------------------

    def determinise(self, view: dict[str, Any], seat: int, rng: "Rng") -> State:
        """A full state consistent with what ``seat`` sees in ``view``.

        ``view`` is ``self.view(state, seat)`` for some real state; the result
        is a state ``s`` with ``self.view(s, seat) == view`` in which every part
        hidden from ``seat`` (other hands, deck orders, face-down cards) is
        sampled with ``rng`` from the cards ``seat`` cannot see, keeping the
        public counts, and whose own RNG state is a fresh random value. Bots
        search on such states (the ``strong`` level); the service never calls it.
        """
        raise NotImplementedError(f"{self.title} has no determinise()")


    def is_legal(self, state: State, seat: int, action: Action) -> bool:
        """Whether ``action`` is legal; by default, membership in the legal list."""
        return action in self.legal_actions(state, seat)

    def explain_illegal(self, state: State, seat: int, action: Action) -> str:
        """A sentence telling the player why ``action`` is refused.

        Override for friendlier reasons; it must not reveal hidden information.
        """
        return "That action is not allowed now; ask for the legal actions to see what is."

    # -- provided -----------------------------------------------------------

    @property
    def action_schemas(self) -> dict[str, dict[str, Any]]:
        return self.schema["actions"]

    @property
    def options_schema(self) -> dict[str, Any]:
        return self.schema["options"]

    @property
    def view_schema(self) -> dict[str, Any]:
        return self.schema["view"]

    @property
    def event_schemas(self) -> dict[str, dict[str, Any]]:
        """Event type -> JSON Schema of the events the game emits (its schema's ``events``; none: empty)."""
        return self.schema.get("events", {})

    @functools.cached_property
    def _action_validators(self) -> dict[str, jsonschema.Draft202012Validator]:
        return {name: jsonschema.Draft202012Validator(schema) for name, schema in self.action_schemas.items()}

    @functools.cached_property
    def _quick_checks(self) -> dict[str, Callable[[Any], bool] | None]:
        """Action type -> :func:`_quick_check` of its schema: a well-formed action is told apart without
        the validator (which takes ten times longer), a doubtful one still gets the validator's verdict."""
        return {name: _quick_check(schema) for name, schema in self.action_schemas.items()}

    @functools.cached_property
    def _options_validator(self) -> jsonschema.Draft202012Validator:
        return jsonschema.Draft202012Validator(self.options_schema)

    def variant_ids(self) -> list[str]:
        return [v.id for v in self.variants]

    def check_options(self, variant: str | None, options: dict[str, Any] | None, seats: int) -> dict[str, Any]:
        """Validate a match's variant, options and seat count; return the full options.

        Raises :class:`InvalidOptions` naming the first problem found.
        """
        if variant is None:
            variant = self.variants[0].id
        if variant not in self.variant_ids():
            raise InvalidOptions(f"Unknown variant {variant!r}; {self.id} offers {', '.join(self.variant_ids())}.")
        if not self.min_seats <= seats <= self.max_seats:
            raise InvalidOptions(f"{self.title} is played by {self.min_seats} to {self.max_seats} players, not {seats}.")
        options = dict(options or {})
        error = jsonschema.exceptions.best_match(self._options_validator.iter_errors(options))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "options"
            raise InvalidOptions(f"Invalid option at {where}: {error.message}")
        for name, prop in self.options_schema.get("properties", {}).items():
            if name not in options and "default" in prop:
                options[name] = clone(prop["default"])
        options["variant"] = variant
        return options

    #: How many well-formed actions :meth:`check_action` remembers per game before it starts afresh.
    CHECKED_ACTIONS = 1 << 16

    def check_action(self, action: Any) -> Action:
        """Check an action's shape against its JSON Schema; return it.

        Actions found well formed are remembered (keyed on their exact JSON
        content and types, :func:`_frozen`): a game's actions come from a small
        set, and the schema check is the slowest part of :meth:`apply`."""
        try:
            key = _frozen(action)
        except TypeError:
            key = None
        checked = self.__dict__.get("_checked_actions")
        if checked is None:
            checked = self.__dict__["_checked_actions"] = set()
        if key is not None and key in checked:
            return action
        self._check_action(action)
        if key is not None:
            if len(checked) >= self.CHECKED_ACTIONS:
                checked.clear()
            checked.add(key)
        return action

    def _check_action(self, action: Any) -> Action:
        if not isinstance(action, dict) or not isinstance(action.get("type"), str):
            raise MalformedAction('An action is a JSON object with a "type" field.')
        validator = self._action_validators.get(action["type"])
        if validator is None:
            raise MalformedAction(
                f"Unknown action type {action['type']!r}; {self.title} has {', '.join(sorted(self.action_schemas))}."
            )
        quick = self._quick_checks.get(action["type"])
        if quick is not None and quick(action):
            return action
        error = jsonschema.exceptions.best_match(validator.iter_errors(action))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "action"
            raise MalformedAction(f"Invalid {action['type']!r} action at {where}: {error.message}")
        return action

    def apply(self, state: State, seat: int, action: Any) -> tuple[State, list[Event]]:
        """Apply ``seat``'s ``action``; return the new state and its events.

        ``state`` is never modified. Raises :class:`MatchFinished`,
        :class:`MalformedAction`, :class:`NotYourTurn` or :class:`IllegalAction`
        (checked in that order) when the action is refused.
        """
        if self.result(state) is not None:
            raise MatchFinished("The match is over.")
        action = self.check_action(action)
        waiting = self.to_act(state)
        if seat not in waiting:
            if BOARD_SEAT in waiting:
                raise NotYourTurn("It is the board's move: the bot workers play it, nobody else can.")
            raise NotYourTurn("It is not your turn to act.")
        if not self.is_legal(state, seat, action):
            raise IllegalAction(self.explain_illegal(state, seat, action))
        new_state = self.copy_for_play(state, seat, action)
        events = self.play(new_state, seat, clone(action))
        return new_state, events

    def copy_for_play(self, state: State, seat: int, action: Action) -> State:
        """The private copy of ``state`` that :meth:`apply` lets :meth:`play` change.

        By default a deep copy. A game may override it to copy only what
        ``play(state, seat, action)`` can change and share the rest with
        ``state`` (copy-on-write): every part of the new state that ``play`` may
        modify must then be a fresh copy, since ``state`` must stay untouched
        (``tests/games/test_golden_playouts.py`` checks it on every step)."""
        return clone(state)
