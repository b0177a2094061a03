"""Casting Cards as data: the card format (card.schema.json), the shipped cards and an operator's card file."""

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from service.engine import load_data
from service.games.casting_stones.cards import (
    CARD_SCHEMA, CARDS, CARDS_SETTING, CardFileError, card_catalogue, load_cards, parse_cards,
)
from service.games.casting_stones.catalogue import TURRET_NAMES

ROOT = Path(__file__).resolve().parents[3]

GOOD = {"id": "sorting-hat-verdict", "name": "Sorting Hat's Verdict", "text": "Charm twice in a row: place two gems.",
        "requires": {"streak": {"cast": "charm", "turns": 3}}, "needs_win": False,
        "effect": [{"do": "place", "count": 2}]}


def _file(tmp_path, data, name="cards.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_the_three_cards_the_manual_describes_ship_with_the_game():
    """000: "Every Starter Set comes with the same two Casting Cards—A Double Potion and a Charms Card" and "The
    'Draco Malfoy' Card is typical of this type of Casting Card"; DESIGN.md: "Ship the three the manual describes"."""
    assert list(CARDS) == ["double-potion", "charms", "draco-malfoy"]
    assert CARDS["double-potion"].streak == ("potion", 2) and not CARDS["double-potion"].needs_win
    assert CARDS["charms"].streak == ("charm", 2) and not CARDS["charms"].needs_win
    assert [(s.do, s.count) for s in CARDS["double-potion"].effect] == [("swap", 2)]
    assert [(s.do, s.count) for s in CARDS["charms"].effect] == [("knock", 2)]
    assert CARDS["double-potion"].starter and CARDS["charms"].starter and not CARDS["draco-malfoy"].starter


def test_the_draco_malfoy_card_reads_as_the_manual_and_design_say():
    """000: "you will need to have the Draco Malfoy, Eagle Owl, Shield Slytherin, Crabbe, and Goyle Casting Stones
    ... Draco Malfoy, the Eagle Owl and Shield Slytherin need to be picture-side up while Crabbe and Goyle need to
    be number-side up"; DESIGN.md: "place a Turret Gem on the Slytherin turret; if the opponent holds it, their gem
    goes back to their line and yours takes its place"; "You must also win the turn for these Cards to work"."""
    draco = CARDS["draco-malfoy"]
    assert dict(draco.stones) == {"draco-malfoy": "s", "eagle-owl": "s", "shield-slytherin": "s", "crabbe": "n",
                                  "goyle": "n"}
    assert draco.needs_win and draco.counter_spell
    (step,) = draco.effect
    assert (step.do, step.count, step.displace) == ("place", 1, True)
    assert [TURRET_NAMES[t] for t in step.turrets] == ["Slytherin"]


def test_card_files_follow_the_published_json_schema():
    """The issue: "One documented format (with a JSON Schema) for a card". The shipped file validates against
    card.schema.json, and the catalogue query returns the cards as written."""
    jsonschema.Draft202012Validator.check_schema(CARD_SCHEMA)
    shipped = load_data("service.games.casting_stones", "cards.json")
    jsonschema.validate(shipped, CARD_SCHEMA)
    assert card_catalogue() == shipped["cards"]


def test_an_operator_file_adds_cards(tmp_path):
    """DESIGN.md: "the format must let an operator add more without code" -- a file named by GRIMOIRE_CASTING_CARDS
    is read after the shipped cards."""
    cards = load_cards(_file(tmp_path, {"cards": [GOOD]}))
    assert list(cards) == ["double-potion", "charms", "draco-malfoy", "sorting-hat-verdict"]
    assert cards["sorting-hat-verdict"].streak == ("charm", 3)


@pytest.mark.parametrize("change, problem", [
    ({"requires": {"stones": [{"stone": "no-such-stone", "face": "symbol"}]}}, "unknown stone 'no-such-stone'"),
    ({"requires": {"stones": [{"stone": "fluffy", "face": "sideways"}]}}, "'sideways' is not one of"),
    ({"requires": {}}, "requires"),
    ({"requires": {"streak": {"cast": "potion", "turns": 2}, "stones": [{"stone": "fluffy", "face": "symbol"}]}},
     "requires"),
    ({"conditions": {"turrets_held": ["Azkaban"]}}, "unknown turrets ['Azkaban']"),
    ({"effect": [{"do": "place", "turrets": ["Hogsmeade"]}]}, "unknown turrets ['Hogsmeade']"),
    ({"effect": [{"do": "transfigure"}]}, "'transfigure' is not one of"),
    ({"effect": [{"do": "place", "of": ["gems"]}]}, "effect/0: 'of' is for swap and knock"),
    ({"effect": [{"do": "knock", "displace": True}]}, "'displace' are for place"),
    ({"effect": []}, "must be a counter_spell"),
    ({"counter_spell": True}, "must require specific stones"),
    ({"id": "charms"}, "already used"),
    ({"id": "Not A Slug"}, "does not match"),
    ({"needs_win": None}, "needs_win"),
    ({"requires": {"stones": [{"stone": "fluffy", "face": "symbol"}]}}, "only a streak card"),
])
def test_a_bad_card_file_is_refused_naming_the_file_and_the_problem(tmp_path, change, problem):
    """The issue: "invalid card files are refused at start-up with a clear message (raise a clear exception naming
    the file and the problem; validate with jsonschema)". Beyond the schema: stones and turrets must exist, ids be
    unique, and 000's "Only the Charm and Double Potion Cards allow you their bonus even if you fail to win the
    turn" holds for new cards too (only streak cards may have needs_win false)."""
    path = _file(tmp_path, {"cards": [dict(GOOD, **change)]})
    with pytest.raises(CardFileError) as refused:
        load_cards(path)
    assert str(path) in str(refused.value) and problem in str(refused.value)


def test_an_unreadable_or_non_json_card_file_is_refused(tmp_path):
    """A setting pointing at a missing file, or at a file that is not JSON, stops the start-up with the file named."""
    with pytest.raises(CardFileError, match="cannot be read"):
        load_cards(tmp_path / "missing.json")
    with pytest.raises(CardFileError, match="not JSON"):
        load_cards(_file(tmp_path, "{cards: oops"))
    with pytest.raises(CardFileError, match="twice"):
        parse_cards({"cards": [dict(GOOD, requires={"stones": [{"stone": "fluffy", "face": "symbol"}] * 2})]}, "x")


def _import_with_cards(path):
    env = dict(os.environ, **{CARDS_SETTING: str(path)})
    code = ("from service.games import all_games; from service.games.casting_stones.cards import CARDS; "
            "print(list(CARDS)); "
            "print('max', all_games()['casting-stones'].options_schema['properties']['cards_per_player']['maximum'])")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_the_setting_is_read_at_start_up_and_a_bad_file_stops_it(tmp_path):
    """The issue: "An operator adds cards by pointing a setting at a data file (read the environment variable
    GRIMOIRE_CASTING_CARDS ... at import/first use); invalid card files are refused at start-up"."""
    good = _import_with_cards(_file(tmp_path, {"cards": [GOOD]}))
    assert good.returncode == 0, good.stderr
    assert "sorting-hat-verdict" in good.stdout
    assert "max 4" in good.stdout  # a match may now bring the operator's card too: four each
    bad = _import_with_cards(_file(tmp_path, {"cards": [dict(GOOD, effect=[])]}, "bad.json"))
    assert bad.returncode != 0
    assert "CardFileError" in bad.stderr and "bad.json" in bad.stderr and "counter_spell" in bad.stderr
