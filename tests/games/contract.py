"""Checks every game must pass, whatever its rules: the engine contract.

Game test modules call :func:`check_contract` for each variant and seat count
they support, and use :func:`random_playout` for their own property tests.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import jsonschema

from service.engine import Game, RuleError, clone, events_for
from service.engine.rng import Rng

#: How many seeded games a property test plays. CI keeps the default small;
#: ``GRIMOIRE_PROPERTY_GAMES=5000 pytest -m slow`` is the long local mode.
PROPERTY_GAMES = int(os.environ.get("GRIMOIRE_PROPERTY_GAMES", "200"))


@dataclass
class Step:
    state_before: dict
    seat: int
    action: dict
    state_after: dict
    events: list


@dataclass
class Playout:
    options: dict
    seats: int
    seed: int
    initial: dict
    steps: list[Step] = field(default_factory=list)

    @property
    def final(self) -> dict:
        return self.steps[-1].state_after if self.steps else self.initial


def random_playout(game: Game, variant: str | None, seats: int, seed: int, *, max_actions: int = 5000,
                   options: dict | None = None, chooser_seed: int | None = None) -> Playout:
    """Play one match choosing uniformly among the legal actions of a random seat to act.

    The game's own randomness comes from ``seed``; the choices from
    ``chooser_seed`` (default: ``seed``). Stops at the end of the match or after
    ``max_actions``.
    """
    full_options = game.check_options(variant, options or {}, seats)
    state = game.setup(full_options, seats, seed)
    playout = Playout(full_options, seats, seed, state)
    chooser = Rng(chooser_seed if chooser_seed is not None else seed ^ 0x5EED)
    for _ in range(max_actions):
        if game.result(state) is not None:
            break
        acting = sorted(game.to_act(state))
        assert acting, "a match that is not over must wait on some seat"
        seat = chooser.choice(acting)
        actions = game.legal_actions(state, seat)
        assert actions, f"seat {seat} is to act but has no legal action"
        action = chooser.choice(actions)
        new_state, events = game.apply(state, seat, action)
        playout.steps.append(Step(state, seat, action, new_state, events))
        state = new_state
    return playout


def check_contract(game: Game, variant: str | None, seats: int, seeds, *, options: dict | None = None,
                   view_every: int = 1) -> None:
    """Assert the engine contract over random playouts of ``game``.

    * states are plain JSON and ``apply`` never modifies its input;
    * every legal action matches its JSON Schema and is accepted by ``apply``;
    * views (every seat and the spectator) match the view schema;
    * seats not to act have no legal actions and get ``not_your_turn``;
    * events are JSON with a ``type``, and ``events_for`` hides private ones;
    * the same seed and actions give identical states (determinism).

    ``view_every`` checks the views of one step in that many (all by default),
    for games with long matches.
    """
    view_validator = jsonschema.Draft202012Validator(game.view_schema)
    for seed in seeds:
        playout = random_playout(game, variant, seats, seed, options=options)
        replay_state = game.setup(playout.options, seats, seed)
        assert replay_state == playout.initial
        for index, step in enumerate(playout.steps):
            before_json = json.dumps(step.state_before, sort_keys=True)
            if index % view_every == 0:
                for seat in [None, *range(seats)]:
                    view_validator.validate(game.view(step.state_before, seat))
            acting = game.to_act(step.state_before)
            for seat in range(seats):
                legal = game.legal_actions(step.state_before, seat)
                if seat not in acting:
                    assert legal == [], f"seat {seat} is not to act but has legal actions"
                for action in legal:
                    game.check_action(clone(action))
            idle = [s for s in range(seats) if s not in acting]
            if idle:
                try:
                    game.apply(step.state_before, idle[0], step.action)
                except RuleError as error:
                    assert error.code in {"not_your_turn", "illegal_action", "malformed_action"}
                else:
                    raise AssertionError("a seat not to act had its action accepted")
            assert json.dumps(step.state_before, sort_keys=True) == before_json, "apply modified its input"
            json.dumps(step.state_after)
            for event in step.events:
                assert isinstance(event.get("type"), str)
                json.dumps(event)
            assert all("audience" not in e for e in events_for(step.events, None))
            replay_state, _ = game.apply(replay_state, step.seat, step.action)
            assert replay_state == step.state_after, "same seed and actions must give the same state"
        for seat in [None, *range(seats)]:
            view_validator.validate(game.view(playout.final, seat))
