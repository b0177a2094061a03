"""The victory primitives: place, swap and knock out (REWARDS, QUICK-REFERENCE CHART, and section D).

A turn's winner takes one victory action for the cast that won ("YOU MAY ONLY
CHOOSE ONE"), and a Casting Card's bonus is made of the same primitives
(:mod:`.cards`). This module lists the concrete actions a primitive allows and
carries one out; :mod:`.rules` decides whose it is and what comes next.

=================  =========================================================
``place``          "Place a Turret Gem on the empty Turret of your choice." A
                   card may name turrets and let a gem displace an opposing one
                   (DESIGN.md, the Draco Malfoy card).
``swap_gems``      "Swap one of your in-play Turret Gems with an adjacent in-play
                   Turret Gem belonging to your opponent."
``swap_stone``     "Swap one of the Casting Stones in your Casting Hand for any
                   Casting Stone in the Vault" -- the shared Vault, or in the
                   Advanced Game your own.
``swap_card``      Advanced: "Swap one of your in-play (face-up) Casting Cards for
                   any Card that is in your Vault."
``knock_gem``      "Knock your opponent's Turret Gem off its Turret and back into
                   its owner's line."
``knock_stone``    "Knock one of your opponent's Casting Stones into the Vault.
                   Your opponent must choose a new Casting Stone from the Vault"
                   -- their own Vault in the Advanced Game.
``knock_card``     Advanced: "Knock one of your opponent's in-play (face-up)
                   Casting Cards out of play and into their Vault."
=================  =========================================================
"""

from __future__ import annotations

from service.engine import Action, Event, State

from .cards import OF_CARDS, OF_GEMS, OF_STONES, PLACE, SWAP
from .casts import UNCAST
from .catalogue import TURRETS

#: Action types that carry out a victory or bonus primitive.
EFFECT_ACTIONS = ("place", "swap_gems", "swap_stone", "swap_card", "knock_gem", "knock_stone", "knock_card")


def vault_of(state: State, seat: int) -> list[str]:
    """The Vault ``seat`` uses: the shared one, or their own when each player has one."""
    vaults = state["vault"]
    return vaults[0] if len(vaults) == 1 else vaults[seat]


def effect_actions(state: State, seat: int, do: str, of: tuple[str, ...] = (OF_GEMS, OF_STONES),
                   turrets: tuple[int, ...] | None = None, displace: bool = False) -> list[Action]:
    """Every concrete action of primitive ``do`` (place, swap, knock) open to ``seat`` now.

    ``of`` says what a swap or knock may move (gems, stones, cards); ``turrets``
    and ``displace`` narrow or widen a place. Order: gems, then stones, then
    cards; turrets ascending; hand and Library order.
    """
    gems, other = state["gems"], 1 - seat
    actions: list[Action] = []
    if do == PLACE:
        if state["line"][seat] == 0:   # all six gems already on the mat
            return []
        allowed = range(TURRETS) if turrets is None else turrets
        return [{"type": "place", "turret": t} for t in allowed
                if gems[t] is None or (displace and gems[t] == other)]
    if do == SWAP:
        if OF_GEMS in of:
            for t in range(TURRETS):
                if gems[t] == seat:
                    for target in sorted({(t - 1) % TURRETS, (t + 1) % TURRETS}):
                        if gems[target] == other:
                            actions.append({"type": "swap_gems", "turret": t, "target": target})
        if OF_STONES in of:
            vault = vault_of(state, seat)
            actions += [{"type": "swap_stone", "stone": s, "take": v} for s in state["hands"][seat] for v in vault]
        if OF_CARDS in of:
            actions += [{"type": "swap_card", "card": c, "take": v}
                        for c in state["lib"][seat] for v in state["vc"][seat]]
        return actions
    # KNOCK
    if OF_GEMS in of:
        actions += [{"type": "knock_gem", "turret": t} for t in range(TURRETS) if gems[t] == other]
    if OF_STONES in of and vault_of(state, other):
        # The knocked player must take another stone from the Vault, so a stone can be knocked only
        # if the Vault already holds one (docs: "Victory actions").
        actions += [{"type": "knock_stone", "stone": s} for s in state["hands"][other]]
    if OF_CARDS in of:
        actions += [{"type": "knock_card", "card": c} for c in state["lib"][other]]
    return actions


def carry_out(state: State, seat: int, action: Action, events: list[Event]) -> bool:
    """Carry out a legal effect action for ``seat``. Returns True when a stone was knocked out, so its owner
    must now choose a replacement from their Vault."""
    kind = action["type"]
    other = 1 - seat
    gems = state["gems"]
    if kind == "place":
        turret = action["turret"]
        if gems[turret] == other:
            # DESIGN.md, Draco Malfoy: "if the opponent holds it, their gem goes back to their line and yours
            # takes its place."
            state["line"][other] += 1
            events.append({"type": "gem_displaced", "seat": seat, "turret": turret, "owner": other})
        gems[turret] = seat
        state["line"][seat] -= 1
        events.append({"type": "gem_placed", "seat": seat, "turret": turret})
    elif kind == "swap_gems":
        gems[action["turret"]], gems[action["target"]] = other, seat
        events.append({"type": "gems_swapped", "seat": seat, "turret": action["turret"], "target": action["target"]})
    elif kind == "swap_stone":
        # Both stones are seen on the table, one in the hand before and the other after, so the event is
        # public even with private Vaults (docs: "The private Vault").
        hand, vault = state["hands"][seat], vault_of(state, seat)
        hand[hand.index(action["stone"])] = action["take"]
        vault[vault.index(action["take"])] = action["stone"]
        if "decl" in state:
            state["decl"][seat].pop(action["stone"], None)
        events.append({"type": "stone_swapped", "seat": seat, "stone": action["stone"], "take": action["take"]})
    elif kind == "swap_card":
        library, vault = state["lib"][seat], state["vc"][seat]
        library[library.index(action["card"])] = action["take"]
        vault[vault.index(action["take"])] = action["card"]
        events.append({"type": "card_swapped", "seat": seat, "card": action["card"], "take": action["take"]})
    elif kind == "knock_gem":
        gems[action["turret"]] = None
        state["line"][other] += 1
        events.append({"type": "gem_knocked", "seat": seat, "turret": action["turret"], "owner": other})
    elif kind == "knock_card":
        state["lib"][other].remove(action["card"])
        state["vc"][other].append(action["card"])
        events.append({"type": "card_knocked", "seat": seat, "card": action["card"], "owner": other})
    else:
        # knock_stone: the stone goes to the Vault now; its owner picks a replacement next
        # ("players may not choose the Casting Stone that was just knocked into the Vault").
        hand = state["hands"][other]
        position = hand.index(action["stone"])
        del hand[position]
        faces = state["faces"][other]
        state["faces"][other] = faces[:position] + faces[position + 1:]
        if "decl" in state:
            state["decl"][other].pop(action["stone"], None)
        vault_of(state, other).append(action["stone"])
        state["knocked"] = action["stone"]
        events.append({"type": "stone_knocked", "seat": seat, "stone": action["stone"], "owner": other})
        return True
    return False


def replace(state: State, seat: int, stone_id: str, events: list[Event]) -> None:
    """"Your opponent must choose a new Casting Stone from the Vault" -- of any type (docs: "Knock-outs")."""
    vault_of(state, seat).remove(stone_id)
    state["hands"][seat].append(stone_id)
    state["faces"][seat] += UNCAST
    events.append({"type": "stone_replaced", "seat": seat, "stone": stone_id})
