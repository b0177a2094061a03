"""Property tests: PROPERTY_GAMES seeded random games played to the end (tests/games/contract.py).

Each game checks, after every action: card conservation (40 team cards per side, 28 pitch cards across
decks, hands, discards, the pitch and the scoring piles), scores equal to the scoring piles, and that no
view or visible event shows a seat a card id in the other seat's hand, face down, or in a deck.
"""

import pytest

from service.games.quidditch import GAME
from service.games.quidditch.cards import KIND, TEAM_CARDS, TEAM_INDEX
from service.games.quidditch.rules import CAUSES
from tests.games.contract import PROPERTY_GAMES, random_playout

from .invariants import check_events_hide, check_state, check_view_hides

#: Every seat's view is scanned for hidden ids after every step of this many of the games (three views a
#: step is what costs most); events are scanned in every game.
VIEW_CHECKED_GAMES = max(1, PROPERTY_GAMES // 10)


@pytest.mark.parametrize("seed", range(PROPERTY_GAMES))
def test_random_game_keeps_the_invariants(seed):
    playout = random_playout(GAME, None, 2, seed)
    result = GAME.result(playout.final)
    assert result is not None, "every game ends (the Snitch, or the round cap)"
    check_state(playout.initial)
    check_view_hides(playout.initial)
    for step in playout.steps:
        check_state(step.state_after)
        check_events_hide(step.state_after, step.events)
        if seed < VIEW_CHECKED_GAMES:
            check_view_hides(step.state_after)
    assert result["cause"] in CAUSES
    if result["cause"] == "snitch":
        catcher = next(s for s in (0, 1) if any(c == 27 for c in playout.final["scoring"][s]))
        assert playout.final["scoring"][catcher][-1] == 27
    else:
        assert playout.final["round"] == playout.options["max_rounds"]


def test_random_games_end_both_ways_and_use_every_rule():
    """Random play reaches the Snitch ending and (with a short cap) the round-cap ending, and plays every
    action type and special card, so the invariants above are exercised on all of them."""
    seen_actions, seen_specials, reasons = set(), set(), set()
    for seed in range(30):
        playout = random_playout(GAME, None, 2, seed, options={"max_rounds": 20})
        reasons.add(GAME.result(playout.final)["cause"])
        for step in playout.steps:
            seen_actions.add(step.action["type"])
            if step.action["type"] == "play_special":
                seen_specials.add(KIND[TEAM_INDEX[step.action["card"]]])
    assert reasons == set(CAUSES)  # docs/rules/quidditch.md, "Result causes": every cause is reachable
    assert seen_actions == set(GAME.action_schemas)
    assert seen_specials == {c["kind"] for c in TEAM_CARDS if c["family"] != "player"}
