"""The engine's quick action check (service/engine/game.py, ``_quick_check``) never passes what the JSON
Schema validator refuses: check_action's verdict and error are the validator's, only found faster.

Every game's legal actions from random play pass it (else it would save nothing), and thousands of
mutations of them (keys dropped or added, values swapped for other JSON types, bools for integers, bounds
crossed, duplicated list items) pass it only when the validator accepts them.
"""

from __future__ import annotations

import random

import jsonschema
import pytest

from service.engine import clone
from service.engine.game import _quick_check
from service.games import all_games

from .contract import random_playout

GAMES = all_games()
#: Values a mutation puts in place of another (JSON types, and the ones Python mixes up: bool and int).
ODD = [None, True, False, 0, 1, -1, 2 ** 40, 1.0, 0.5, "", "x", "e2e4", "e2e4\n", [], [1], [1, 1], ["a", "a"], {},
       {"type": "x"}]


def _legal_samples(game, variant: str, seed: int) -> list[dict]:
    playout = random_playout(game, variant, game.min_seats, seed, max_actions=400)
    return [step.action for step in playout.steps]


def _mutations(action: dict, rng: random.Random, count: int) -> list:
    out = []
    for _ in range(count):
        mutated = clone(action)
        for _ in range(rng.randint(1, 3)):
            target = mutated
            # Go down into a nested list or dict now and then.
            while isinstance(target, (dict, list)) and target and rng.random() < 0.4:
                key = rng.choice(list(target)) if isinstance(target, dict) else rng.randrange(len(target))
                if not isinstance(target[key], (dict, list)):
                    break
                target = target[key]
            if isinstance(target, dict):
                choice = rng.random()
                keys = list(target)
                if choice < 0.2 and keys:
                    del target[rng.choice(keys)]
                elif choice < 0.3:
                    target[rng.choice(["extra", "type", "uci"])] = rng.choice(ODD)
                elif keys:
                    key = rng.choice(keys)
                    value = target[key]
                    if type(value) is int and rng.random() < 0.5:
                        target[key] = value + rng.choice([-100, -1, 1, 100])
                    else:
                        target[key] = rng.choice(ODD)
            elif isinstance(target, list):
                if target and rng.random() < 0.5:
                    target.append(target[rng.randrange(len(target))])
                elif target:
                    target[rng.randrange(len(target))] = rng.choice(ODD)
                else:
                    target.append(rng.choice(ODD))
        out.append(mutated)
    out.append(rng.choice(ODD))
    return out


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_quick_check_agrees_with_the_validator(game_id: str) -> None:
    game = GAMES[game_id]
    rng = random.Random(7)
    validators = {name: jsonschema.Draft202012Validator(schema) for name, schema in game.action_schemas.items()}
    quick = {name: _quick_check(schema) for name, schema in game.action_schemas.items()}
    legal = [action for variant in game.variant_ids() for seed in range(3)
             for action in _legal_samples(game, variant, seed)]
    assert legal
    for action in legal:
        assert quick[action["type"]] is not None and quick[action["type"]](action), action
    checked = 0
    for action in rng.sample(legal, min(len(legal), 400)):
        for mutated in _mutations(action, rng, 25):
            for name, check in quick.items():
                if check is not None and check(mutated):
                    assert validators[name].is_valid(mutated), (name, mutated)
                    checked += 1
    assert checked
