"""Shared set-ups for the Casting Stones tests: drafted hands and hand-made casts."""

from service.engine import clone
from service.games.casting_stones import GAME
from service.games.casting_stones.rules import KEPT, TIP, UNDECIDED

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
