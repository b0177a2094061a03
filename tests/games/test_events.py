"""Every game's events have a JSON Schema (schema.json ``events``), and random play emits nothing else.

The REST contract publishes these schemas (``<Game>Event``), so a client's
types come from them: the property test keeps them from drifting from the code.
"""

import jsonschema
import pytest

from service.engine import events_for
from service.games import all_games
from tests.games.contract import PROPERTY_GAMES, random_playout

GAMES = all_games()
#: Seeds per variant and seat count: every game, variant and table size is played (some variants are slow).
SEEDS = max(3, PROPERTY_GAMES // 40)


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_event_schemas_are_typed_objects_without_audience(game_id):
    """Each schema is an object naming its own ``type`` as a const; ``audience`` is not published, because
    the APIs strip it (service/engine/game.py, events_for) before any client sees an event."""
    schemas = GAMES[game_id].event_schemas
    assert schemas
    for kind, schema in schemas.items():
        assert schema["properties"]["type"] == {"const": kind}
        assert "type" in schema["required"] and schema["additionalProperties"] is False
        assert "audience" not in schema["properties"]


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_every_event_random_play_emits_matches_its_schema(game_id):
    game = GAMES[game_id]
    validators = {kind: jsonschema.Draft202012Validator(schema) for kind, schema in game.event_schemas.items()}
    seen = set()
    for variant in game.variant_ids():
        for seats in range(game.min_seats, game.max_seats + 1):
            for seed in range(SEEDS):
                for step in random_playout(game, variant, seats, seed, max_actions=3000).steps:
                    for seat in [None, *range(seats)]:
                        for event in events_for(step.events, seat):
                            assert event["type"] in validators, f"{game_id}: event {event['type']!r} has no schema"
                            error = jsonschema.exceptions.best_match(validators[event["type"]].iter_errors(event))
                            assert error is None, f"{game_id} {variant} seed {seed}: {event}: {error.message}"
                            seen.add(event["type"])
    assert seen, "random play emitted no event"
