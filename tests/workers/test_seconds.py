"""The strong level's Seconds in Casting Stones (``workers/bots/seconds.py``): exact odds two casts deep.

Rule book 000, SECONDS: "if they failed to throw a Spell, Potion or Charm they may choose to cast any or
all of their Casting Stones a second time"; "Whoever cast first in Step 1 goes first again and decides
... their opponent waits until they finish". AND THE WINNER IS...?: "Spell beats Potion / Potion beats
Charm / Charm beats Spell"; two Spells or two Charms compare "the totals".
"""

from __future__ import annotations

import random

from service.games import all_games
from workers.bots import BotInput, greedy, seconds

# A standard hand: one Character, two Artifacts, two Elements (set-up, scan 003).
HAND = ["harry-potter", "mirror-of-erised", "voldemorts-wand", "dragons-blood", "lemon-drops"]
THEIRS = ["dumbledore", "dumbledores-wand", "put-outer", "unicorn-blood", "green-light"]
_NAMES = {"s": "symbol", "n": "number", "l": "leaner"}


def _view(my_faces: str, their_faces: str, first_caster: int = 0, they_recast: bool = False) -> dict:
    def player(seat, hand, faces, recast):
        return {"seat": seat, "recast": recast,
                "hand": [{"id": stone, "face": _NAMES[face]} for stone, face in zip(hand, faces)]}
    return {"seat": 0, "first_caster": first_caster,
            "players": [player(0, HAND, my_faces, False), player(1, THEIRS, their_faces, they_recast)]}


def test_a_charm_outlasts_a_potion_against_a_reply_still_to_come():
    """The opponent who still re-casts aims at what beats the bot's cast: a Potion falls to any Spell,
    the likeliest good cast, while a Charm falls only to a Potion or a higher Charm."""
    their = ("dumbledore", "dumbledores-wand", "put-outer", "unicorn-blood", "green-light")
    bungle = "sssnn"  # symbols on the Character and both Artifacts: no Spell
    potion = seconds._value(("potion", None), their, bungle, True)
    charm = seconds._value(("charm", 70), their, bungle, True)
    assert charm > potion
    # Against a cast that is final, any good cast beats a Bungle outright ("any good cast ... always beats a Bungle").
    assert seconds._value(("potion", None), their, bungle, False) == 1.0


def test_the_first_to_decide_plays_against_the_reply():
    """The bot casts first; its first cast and the opponent's both failed. With both Artifacts symbol up
    and both Elements number up, re-casting the Character and the Elements makes a Potion one time in 8
    (no Spell can come of it: two Artifact symbols), and re-casting the Character and the Artifacts a Charm
    one time in 8 (no Spell either: no Element symbol). Against the cast as it lies both are worth 1/8,
    as the greedy level scores them; against the reply to come, the Charm is worth more."""
    view = _view("sssnn", "sssnn")
    legal = [{"type": "keep"},
             {"type": "recast", "stones": sorted([HAND[0], HAND[3], HAND[4]])},  # towards a Potion
             {"type": "recast", "stones": sorted(HAND[:3])}]                      # towards a Charm
    assert [greedy.casting_stones(view | {"turrets": []}, 0, a) for a in legal[1:]] == [1 / 8, 1 / 8]
    assert legal[seconds.choose(view, 0, legal)] == legal[2]
    # Deciding second (the opponent has finished), nothing tells them apart but the order.
    assert seconds.choose(_view("sssnn", "sssnn", first_caster=1), 0, legal) == 1


def test_with_the_opponent_finished_it_agrees_with_the_exact_odds_of_the_greedy_level():
    """Deciding second, the opponent's cast is final: both levels score the same odds, so the choice
    made here is one the greedy level scores best."""
    game = all_games()["casting-stones"]
    rng = random.Random(5)
    checked = 0
    for seed in range(60):
        state = game.setup(game.check_options(None, {}, 2), 2, seed)
        while game.result(state) is None and checked < 40:
            seat = sorted(game.to_act(state))[0]
            legal = game.legal_actions(state, seat)
            view = game.view(state, seat)
            other = next(p for p in view["players"] if p["seat"] != seat)
            if (len(legal) > 1 and all(a["type"] in seconds.ACTIONS for a in legal)
                    and view["first_caster"] != seat and not any(s["face"] == "leaner" for s in other["hand"])):
                scores = [greedy.casting_stones(view, seat, a) for a in legal]
                assert scores[seconds.choose(view, seat, legal)] == max(scores)
                checked += 1
            action = greedy.choose(BotInput(game.id, seat, view, legal), rng)
            state, _ = game.apply(state, seat, action)
    assert checked >= 20
