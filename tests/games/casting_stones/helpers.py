"""Shared set-ups for the Casting Stones tests: drafted hands and hand-made casts."""

from service.engine import clone
from service.games.casting_stones import GAME
from service.games.casting_stones.rules import KEPT, TIP, UNDECIDED, holds_run

#: A fixed draft of the starter set: seat 0 Gryffindor, seat 1 Slytherin.
HAND_0 = ["harry-potter", "shield-gryffindor", "quills", "holly", "bat-spleen"]
HAND_1 = ["draco-malfoy", "shield-slytherin", "parchment", "mistletoe", "spine-of-lionfish"]
#: The two stones neither seat picks: they go to the Vault.
LEFT_OVER = ["dittany", "beetles-eyes"]

# Faces for HAND_0 / HAND_1 (character, artifact, artifact, element, element):
SPELL = "ssnsn"        # character + artifact + element symbols, two numbers
POTION = "sssss"
CHARM = "nnnnn"
BUNGLE = "ssnnn"       # two symbols only


def new_match(**options):
    full = GAME.check_options("basic", options, 2)
    return GAME.setup(full, 2, 1234)


def drafted(**options):
    """A match just after the set-up draft of HAND_0 and HAND_1, seat 0 to cast."""
    state = new_match(**options)
    for a, b in zip(HAND_0, HAND_1):
        state, _ = GAME.apply(state, 0, {"type": "pick", "stone": a})
        state, _ = GAME.apply(state, 1, {"type": "pick", "stone": b})
    return state


def settle(state, faces0, faces1, *, done=(KEPT, KEPT), first=None):
    """Lay both casts on the table as given and let the game move on.

    The casts are set by hand (the RNG is not asked); to enter the rules
    through the public door, the last stone of the second caster is laid as a
    Leaner and then tipped to the face wanted. ``done`` says whether each seat
    has already taken its Seconds decision. Returns (state, events).
    """
    state = clone(state)
    if first is not None:
        state["first"] = first
    second = 1 - state["first"]
    faces = [faces0, faces1]
    wanted = faces[second][-1]
    faces[second] = faces[second][:-1] + "l"
    state["faces"] = faces
    state["done"] = list(done)
    state["ph"], state["act"] = TIP, second
    stone = state["hands"][second][-1]
    return GAME.apply(state, second, {"type": "tip", "stone": stone, "face": "symbol" if wanted == "s" else "number"})


def first_casts(state, faces0, faces1, *, first=None):
    """Both first casts made (as given), Seconds not yet decided."""
    return settle(state, faces0, faces1, done=(UNDECIDED, UNDECIDED), first=first)


def with_gems(state, gems, line=None):
    """The same state with the turrets set to ``gems`` (and lines to match)."""
    state = clone(state)
    state["gems"] = list(gems)
    state["line"] = line or [6 - sum(1 for g in gems if g == s) for s in (0, 1)]
    return state


def event_types(events):
    return [e["type"] for e in events]


# -- Intermediate and Advanced set-ups ------------------------------------------------------------

def intermediate(cards=("double-potion", "charms"), **options):
    """An Intermediate match after the draft of HAND_0 / HAND_1 and the Library deal: seat 0 holds
    ``cards[0]`` and seat 1 ``cards[1]``, seat 0 to cast."""
    full = GAME.check_options("intermediate", options, 2)
    state = GAME.setup(full, 2, 1234)
    for a, b in zip(HAND_0, HAND_1):
        state, _ = GAME.apply(state, 0, {"type": "pick", "stone": a})
        state, _ = GAME.apply(state, 1, {"type": "pick", "stone": b})
    slot = state["deck"].index(cards[0])
    state, _ = GAME.apply(state, 0, {"type": "take_card", "slot": slot})
    assert state["lib"] == [[cards[0]], [cards[1]]]
    return state


#: Advanced collections used by the tests (stones sorted by id, as actions list them).
DRACO_STONES = ["bezoar", "cauldron", "crabbe", "draco-malfoy", "eagle-owl", "goyle", "horned-slugs",
                "potion-bottles", "professor-snape", "shield-slytherin"]
DRACO_HAND = ["crabbe", "draco-malfoy", "eagle-owl", "goyle", "shield-slytherin"]
HARRY_STONES = ["cloak-of-invisibility", "flute", "harry-potter", "harrys-wand", "hedwig", "love", "phoenix-feather",
                "shield-gryffindor", "snitch", "wingardium-leviosa"]
HARRY_HAND = ["cloak-of-invisibility", "harry-potter", "harrys-wand", "love", "phoenix-feather"]
CARDS_3 = ["charms", "double-potion", "draco-malfoy"]


def bring(stones, hand, cards=CARDS_3):
    return {"type": "bring", "stones": sorted(stones), "cards": sorted(cards), "hand": sorted(hand)}


def advanced(first=None, second=None, **options):
    """An Advanced match where seat 0 brought ``first`` and seat 1 ``second`` (bring actions; default: the
    Draco Malfoy collection for seat 0 and the Harry Potter one for seat 1), seat 0 to cast."""
    full = GAME.check_options("advanced", options, 2)
    state = GAME.setup(full, 2, 1234)
    state, _ = GAME.apply(state, 0, first or bring(DRACO_STONES, DRACO_HAND))
    state, _ = GAME.apply(state, 1, second or bring(HARRY_STONES, HARRY_HAND))
    return state


def assert_winner_casts_first(before, after):
    """Manual B, step 5: "Whoever won the turn casts first on the following turn" (a tie keeps the order)."""
    if after["turn"] == before["turn"] + 1 and before["turn"] >= 1:
        won = after["last"]["winner"]
        assert after["first"] == (before["first"] if won is None else won)


def assert_match_ended(result, final, max_turns, seed):
    """A played-out match ends by four adjacent turrets (manual "Endgame") or at the documented turn cap."""
    assert result is not None, f"seed {seed}: the match did not end"
    if result["winners"]:
        assert result["cause"] == "four_turrets" and holds_run(final["gems"], result["winners"][0])
    else:
        assert result["cause"] == "turn_limit" and final["turn"] == max_turns
