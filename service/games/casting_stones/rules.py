"""Casting Stones, the Basic Game (manual sections A, B and E).

Read this beside ``/work/shared/seeds/000_a80342418ab30e6c.txt`` (the manual
and the stone chart) and ``003_82b6d6042101b6cb.txt`` (a second scan in raw
reading order). Section letters and headings below are the manual's; every
decision the manual leaves open is listed, with its source, in
``docs/rules/casting-stones.md``.

The shape of a match
--------------------
1. GETTING STARTED, "Divide the Casting Stones": the starter set lies in the
   centre; seat 0 (the youngest) and seat 1 pick one stone at a time until
   each Casting Hand has 1 character, 2 artifacts and 2 elements; the two
   stones left over go to the shared Vault.
2. Each turn (B, SEQUENCE OF PLAY): both players cast, the turn's first caster
   first; Leaners are tipped, first caster first; "Seconds": first caster
   then the other may re-cast any of their stones; the casts are compared;
   the winner takes one victory action (place, swap or knock-out); the
   winner casts first next turn.
3. ENDGAME: four adjacent turrets held win. A match option caps the number of
   turns (a match that reaches it ends with no winner).

Seats, phases and the state
---------------------------
Two seats; exactly one acts at a time (``state["act"]``). ``state["ph"]`` is
the phase:

``pick``      set-up draft, action ``pick``
``cast``      first cast of the turn, action ``cast`` (the RNG decides faces)
``tip``       tip a standing Leaner, action ``tip``
``seconds``   keep the cast or re-cast some stones, ``keep`` / ``recast``
``victory``   the turn's winner acts: ``place``, ``swap_gems``, ``swap_stone``,
              ``knock_gem`` or ``knock_stone``
``replace``   the knocked-out player takes a Vault stone, action ``replace``
``over``      the match has ended

State keys (compact; everything is plain JSON)::

    v       variant id                 opt    the match options
    rng     Rng state                  ph     phase            act   seat to act or None
    turn    turn number (0 in set-up)  first  this turn's first caster
    pool    stones still in the centre during set-up
    hands   [[stone ids], [stone ids]] the two Casting Hands
    vault   [[stone ids]]              the Vaults: one shared list in the Basic
                                       game, one per seat in the Advanced game
    faces   ["ssnnl", "-----"]         faces showing, one char per hand stone
                                       (casts.py: s symbol, n number, l Leaner, - uncast)
    done    [0|1|2, 0|1|2]             Seconds: 0 undecided, 1 kept, 2 re-cast
    gems    [seat|None] * 8            who holds each turret
    line    [int, int]                 Turret Gems still in each player's line
    vic     {"seat", "kind"} | None    the victory being taken now
    knocked stone id | None            the stone just knocked into the Vault
    last    the last compared turn: {"turn", "winner", "kinds", "powers",
            "void", "action", "replacement"} | None
    winner  seat | None                end    None | "four_turrets" | "turn_limit"

Everything on the table is public in this game: hands, casts and the Vault are
open ("You must show your opponent..." and stones are cast in the open), so
every seat and spectators get the same view. Only the RNG state is secret, and
it never leaves the state.
"""

from __future__ import annotations

from typing import Any

from service.engine import Action, Event, Game, Rng, State, Variant, load_data

from .casts import BUNGLE, EFFECT, KNOCK, LEANER, NUMBER, PENDING, PLACE, SWAP, SYMBOL, UNCAST, read_cast, winner_of
from .catalogue import (
    GEMS_PER_PLAYER, RUN_TO_WIN, STONES, TURRET_NAMES, TURRETS, VARIANTS, VariantRules, set_stones,
)

PICK, CAST, TIP, SECONDS, VICTORY, REPLACE, OVER = "pick", "cast", "tip", "seconds", "victory", "replace", "over"

FOUR_TURRETS, TURN_LIMIT = "four_turrets", "turn_limit"

#: Seconds progress per seat (``state["done"]``).
UNDECIDED, KEPT, RECAST = 0, 1, 2

_FACE_NAMES = {SYMBOL: "symbol", NUMBER: "number", LEANER: "leaner", UNCAST: "uncast"}
_FACE_CODES = {"symbol": SYMBOL, "number": NUMBER}

#: Every non-empty subset of hand positions, for the ``recast`` actions.
_SUBSETS = {size: [[i for i in range(size) if mask >> i & 1] for mask in range(1, 1 << size)] for size in range(1, 11)}


def throw(rng: Rng, count: int, leaner_one_in: int) -> str:
    """Cast ``count`` stones: their faces, one character each.

    DESIGN.md: "A cast stone shows its symbol or its number with even odds;
    with a small chance (option, default 1 in 20) it is a Leaner". The Leaner
    draw comes first, so turning Leaners off (0) leaves the even odds exact.
    """
    faces = []
    for _ in range(count):
        if leaner_one_in and rng.below(leaner_one_in) == 0:
            faces.append(LEANER)
        else:
            faces.append(SYMBOL if rng.below(2) == 0 else NUMBER)
    return "".join(faces)


def holds_run(gems: list[int | None], seat: int) -> bool:
    """Whether ``seat`` holds RUN_TO_WIN adjacent turrets round the ring."""
    return any(all(gems[(start + k) % TURRETS] == seat for k in range(RUN_TO_WIN)) for start in range(TURRETS))


class CastingStones(Game):
    id = "casting-stones"
    title = "Casting Stones"
    min_seats = 2
    max_seats = 2
    variants = tuple(Variant(v.id, v.title, v.description) for v in VARIANTS.values())
    summary = ("Two wizards cast rune stones to conjure Spells, Potions and Charms (Spell beats Potion beats "
               "Charm beats Spell); winning casts place, swap and knock Turret Gems until one holds four "
               "adjacent turrets of the Tower Mat.")
    schema = load_data(__package__, "schema.json")

    # -- set-up -----------------------------------------------------------------------------

    def setup(self, options: dict[str, Any], seats: int, seed: int) -> State:
        rules = VARIANTS[options.get("variant") or self.variants[0].id]
        opt = {name: options.get(name, prop["default"]) for name, prop in self.options_schema["properties"].items()}
        return {
            "v": rules.id,
            "opt": opt,
            "rng": Rng.from_seed(seed).state,
            # "Beginning with the youngest player, both players take turns selecting one Stone
            # at a time" (GETTING STARTED): seat 0 stands for the youngest.
            "ph": PICK,
            "act": 0,
            "turn": 0,
            "first": 0,
            "pool": set_stones(rules.stone_set),
            "hands": [[], []],
            "vault": [[]] if rules.shared_vault else [[], []],
            "faces": ["", ""],
            "done": [UNDECIDED, UNDECIDED],
            "gems": [None] * TURRETS,
            "line": [GEMS_PER_PLAYER, GEMS_PER_PLAYER],
            "vic": None,
            "knocked": None,
            "last": None,
            "winner": None,
            "end": None,
        }

    # -- who acts, and what they may do ------------------------------------------------------

    def to_act(self, state: State) -> set[int]:
        return set() if state["act"] is None else {state["act"]}

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        if state["act"] != seat:
            return []
        phase = state["ph"]
        if phase == CAST:
            return [{"type": "cast"}]
        if phase == PICK:
            return [{"type": "pick", "stone": s} for s in self._pickable(state, seat)]
        if phase == TIP:
            hand, faces = state["hands"][seat], state["faces"][seat]
            return [{"type": "tip", "stone": hand[i], "face": face}
                    for i, f in enumerate(faces) if f == LEANER for face in ("symbol", "number")]
        if phase == SECONDS:
            # Subsets of the sorted hand, taken in index order, are already in canonical order.
            hand = sorted(state["hands"][seat])
            return [{"type": "keep"}] + [{"type": "recast", "stones": [hand[i] for i in subset]}
                                         for subset in _SUBSETS[len(hand)]]
        if phase == VICTORY:
            return self._victory_actions(state, seat)
        if phase == REPLACE:
            return [{"type": "replace", "stone": s} for s in self._vault(state, seat) if s != state["knocked"]]
        return []

    def is_legal(self, state: State, seat: int, action: Action) -> bool:
        """Membership in :meth:`legal_actions`, checked without building the list where cheap."""
        if state["act"] != seat:
            return False
        phase, kind = state["ph"], action.get("type")
        if kind == "cast":
            return phase == CAST
        if kind == "keep":
            return phase == SECONDS
        if kind == "recast":
            stones = action.get("stones")
            hand = state["hands"][seat]
            return (phase == SECONDS and isinstance(stones, list) and len(stones) > 0
                    and stones == sorted(set(stones)) and all(s in hand for s in stones))
        if kind == "tip":
            if phase != TIP or action.get("face") not in _FACE_CODES:
                return False
            hand = state["hands"][seat]
            stone_id = action.get("stone")
            return stone_id in hand and state["faces"][seat][hand.index(stone_id)] == LEANER
        if kind == "pick":
            return phase == PICK and action.get("stone") in self._pickable(state, seat)
        if kind == "replace":
            return (phase == REPLACE and action.get("stone") != state["knocked"]
                    and action.get("stone") in self._vault(state, seat))
        return phase == VICTORY and action in self._victory_actions(state, seat)

    def explain_illegal(self, state: State, seat: int, action: Action) -> str:
        phase, kind = state["ph"], action.get("type")
        expected = {
            PICK: "the set-up draft is on: pick a stone from the centre",
            CAST: "it is time to cast your stones",
            TIP: "you must tip your Leaners (symbol or number) before the second cast begins",
            SECONDS: "decide your second cast: keep your stones or re-cast some of them",
            VICTORY: "you won the turn: take your victory action",
            REPLACE: "choose a replacement stone from the Vault",
        }.get(phase, "the match is over")
        if kind == "pick" and phase == PICK:
            stone_id = action.get("stone")
            if stone_id not in state["pool"]:
                return "That stone is not in the centre of the table."
            stone_type = STONES[stone_id].type
            quota = self._rules(state).hand_quota.get(stone_type, 0)
            return (f"Your Casting Hand already has its {quota} {stone_type} stone(s); it must end with "
                    + self._quota_text(state) + ".")
        if kind == "recast" and phase == SECONDS:
            return ("Re-cast one or more stones of your own Casting Hand, each named once, "
                    "listed in alphabetical order of their ids.")
        if kind == "tip" and phase == TIP:
            return "Only a Leaner in your own cast can be tipped, to 'symbol' or 'number'."
        if kind == "replace" and phase == REPLACE:
            return "Take a stone that is in the Vault, other than the stone just knocked into it."
        if phase == VICTORY and kind in {"place", "swap_gems", "swap_stone", "knock_gem", "knock_stone"}:
            return self._victory_rule(state)
        return f"Not now: {expected}."

    # -- playing an action ---------------------------------------------------------------

    def play(self, state: State, seat: int, action: Action) -> list[Event]:
        events: list[Event] = []
        kind = action["type"]
        if kind == "pick":
            self._pick(state, seat, action["stone"], events)
        elif kind == "cast":
            self._cast(state, seat, list(range(len(state["hands"][seat]))), events)
        elif kind == "tip":
            self._tip(state, seat, action["stone"], action["face"], events)
        elif kind == "keep":
            state["done"][seat] = KEPT
            events.append({"type": "kept", "seat": seat})
            self._progress(state, events)
        elif kind == "recast":
            hand = state["hands"][seat]
            state["done"][seat] = RECAST
            self._cast(state, seat, sorted(hand.index(s) for s in action["stones"]), events)
        elif kind == "replace":
            self._replace(state, seat, action["stone"], events)
        else:
            self._victory(state, seat, action, events)
        return events

    # Set-up: "Beginning with the youngest player, both players take turns selecting one Stone at a
    # time until they each have five Stones in their Casting Hands. Both players must choose one
    # Character (Silver) Stone, 2 Artifact (White) Stones, and 2 Element (Brown) Stones" (scan 003).

    def _pickable(self, state: State, seat: int) -> list[str]:
        """Stones in the centre whose type ``seat``'s hand still lacks.

        A stone set holds at least twice each quota (checked by the tests), so
        this greedy rule can never leave the other player without a stone they need.
        """
        quota = self._rules(state).hand_quota
        have: dict[str, int] = {}
        for s in state["hands"][seat]:
            t = STONES[s].type
            have[t] = have.get(t, 0) + 1
        return [s for s in state["pool"] if have.get(STONES[s].type, 0) < quota.get(STONES[s].type, 0)]

    def _pick(self, state: State, seat: int, stone_id: str, events: list[Event]) -> None:
        state["pool"].remove(stone_id)
        state["hands"][seat].append(stone_id)
        events.append({"type": "picked", "seat": seat, "stone": stone_id})
        size = self._rules(state).hand_size
        other = 1 - seat
        if len(state["hands"][other]) < size:
            state["act"] = other
        elif len(state["hands"][seat]) < size:
            state["act"] = seat
        else:
            # "Take the two Casting Stones that neither player selected and place them in the Vault."
            leftovers, state["pool"] = state["pool"], []
            self._vault(state, 0).extend(leftovers)
            events.append({"type": "vaulted", "stones": leftovers})
            # "During the first turn of a new game, the youngest player casts first" (THE CAST).
            self._start_turn(state, 0, events)

    # Step 1 and 2: casting, Leaners and Seconds.

    def _start_turn(self, state: State, first: int, events: list[Event]) -> None:
        state["turn"] += 1
        state["first"] = first
        state["faces"] = [UNCAST * len(hand) for hand in state["hands"]]
        state["done"] = [UNDECIDED, UNDECIDED]
        state["vic"] = None
        state["knocked"] = None
        state["ph"], state["act"] = CAST, first
        events.append({"type": "turn_started", "turn": state["turn"], "first_caster": first})

    def _cast(self, state: State, seat: int, positions: list[int], events: list[Event]) -> None:
        """Cast the stones at ``positions`` of ``seat``'s hand; the others stay as they lie.

        "choose the Casting Stones from your first cast that you want to keep and place them in the
        small Casting Circles ... Then take your remaining Casting Stones and cast them" (SECONDS).
        """
        rng = Rng(state["rng"])
        thrown = throw(rng, len(positions), state["opt"]["leaner_one_in"])
        state["rng"] = rng.state
        faces = list(state["faces"][seat])
        for position, face in zip(positions, thrown):
            faces[position] = face
        state["faces"][seat] = "".join(faces)
        hand = state["hands"][seat]
        events.append({"type": "cast", "seat": seat, "second": state["done"][seat] == RECAST,
                       "stones": [hand[p] for p in positions], "faces": [_FACE_NAMES[f] for f in thrown]})
        self._progress(state, events)

    def _tip(self, state: State, seat: int, stone_id: str, face: str, events: list[Event]) -> None:
        """"With a Leaner, you can tip the Stone whichever way you desire ... once you tip it, you're
        stuck with your choice." (THE CAST)"""
        position = state["hands"][seat].index(stone_id)
        faces = state["faces"][seat]
        state["faces"][seat] = faces[:position] + _FACE_CODES[face] + faces[position + 1:]
        events.append({"type": "tipped", "seat": seat, "stone": stone_id, "face": face})
        self._progress(state, events)

    def _may_recast(self, state: State, seat: int) -> bool:
        """"Either player may choose to keep the combination ... after their first cast. However, if
        they failed to throw a Spell, Potion or Charm they may choose to cast any or all of their
        Casting Stones a second time" (SECONDS): only a failed first cast may be re-cast, unless
        the ``open_seconds`` option lets every player re-cast."""
        if state["opt"]["open_seconds"]:
            return True
        return read_cast(state["hands"][seat], state["faces"][seat], self._rules(state).wild_chasers)[0] == BUNGLE

    def _progress(self, state: State, events: list[Event]) -> None:
        """Move the turn on to the next decision someone must take, or compare the casts.

        Order within a turn (docs/rules/casting-stones.md, "Order of a turn"):
        1. first casts, the turn's first caster then the other ("you and your opponent take turns");
        2. Leaners tipped, first caster first ("You must tip all Leaners before the second cast
           begins"); a Leaner from a second cast is tipped by its caster before the opponent's second;
        3. Seconds, first caster first ("Whoever cast first in Step 1 goes first again and decides
           whether or not they want to make a second cast ... their opponent waits until they finish");
        4. compare.
        """
        first = state["first"]
        order = (first, 1 - first)
        faces = state["faces"]
        for seat in order:
            if UNCAST in faces[seat]:
                state["ph"], state["act"] = CAST, seat
                return
        for seat in order:
            if LEANER in faces[seat]:
                state["ph"], state["act"] = TIP, seat
                return
        for seat in order:
            if state["done"][seat] == UNDECIDED:
                if self._may_recast(state, seat):
                    state["ph"], state["act"] = SECONDS, seat
                    return
                state["done"][seat] = KEPT
        self._compare(state, events)

    # Step 3: "Compare the casts and determine who won the turn."

    def _compare(self, state: State, events: list[Event]) -> None:
        wild = self._rules(state).wild_chasers
        readings = [read_cast(state["hands"][s], state["faces"][s], wild) for s in (0, 1)]
        kinds = [r[0] for r in readings]
        powers = [r[1] for r in readings]
        winner = winner_of(kinds, powers)
        state["last"] = {"turn": state["turn"], "winner": winner, "kinds": kinds, "powers": powers,
                         "void": False, "action": None, "replacement": None}
        events.append({"type": "turn_result", "turn": state["turn"], "winner": winner,
                       "casts": [{"kind": k, "power": p} for k, p in readings]})
        if winner is None:
            # "no one wins that turn and the players must cast a new Hand": the same player casts
            # first again, since nobody won the right to (docs: "Ties").
            self._end_turn(state, state["first"], events)
            return
        state["vic"] = {"seat": winner, "kind": kinds[winner]}
        if not self._victory_actions(state, winner):
            # A victory with nothing it could do (e.g. a Spell with no empty turret): recorded, and
            # the winner still casts first next turn.
            state["last"]["void"] = True
            events.append({"type": "victory_void", "seat": winner, "effect": EFFECT[kinds[winner]]})
            self._end_turn(state, winner, events)
            return
        state["ph"], state["act"] = VICTORY, winner

    def _end_turn(self, state: State, next_first: int, events: list[Event]) -> None:
        """Step 5: "Whoever won the turn casts first on the following turn." -- or the match ends."""
        state["vic"] = None
        state["knocked"] = None
        cap = state["opt"]["max_turns"]
        if cap and state["turn"] >= cap:
            self._finish(state, None, TURN_LIMIT, events)
            return
        self._start_turn(state, next_first, events)

    # Step 4: "The winner executes his victory action." (REWARDS and the QUICK-REFERENCE CHART)

    def _victory_actions(self, state: State, seat: int) -> list[Action]:
        """Every victory action open to ``seat`` for the cast it won with ("YOU MAY ONLY CHOOSE ONE")."""
        if state["vic"] is None or state["vic"]["seat"] != seat:
            return []
        effect = EFFECT[state["vic"]["kind"]]
        gems = state["gems"]
        other = 1 - seat
        actions: list[Action] = []
        if effect == PLACE:
            # "Place a Turret Gem on the empty Turret of your choice."
            if state["line"][seat] > 0:
                actions = [{"type": "place", "turret": t} for t in range(TURRETS) if gems[t] is None]
        elif effect == SWAP:
            # "Swap one of your in-play Turret Gems with an adjacent in-play Turret Gem belonging to
            # your opponent" or "Swap one of the Casting Stones in your Casting Hand for any Casting
            # Stone in the Vault."
            for t in range(TURRETS):
                if gems[t] == seat:
                    for target in sorted({(t - 1) % TURRETS, (t + 1) % TURRETS}):
                        if gems[target] == other:
                            actions.append({"type": "swap_gems", "turret": t, "target": target})
            vault = self._vault(state, seat)
            actions += [{"type": "swap_stone", "stone": s, "take": v} for s in state["hands"][seat] for v in vault]
        else:
            # "Knock your opponent's Turret Gem off its Turret and back into its owner's line" or
            # "Knock one of your opponent's Casting Stones into the Vault." The knocked player must
            # take another stone from the Vault, so a stone can be knocked only if there is one.
            actions = [{"type": "knock_gem", "turret": t} for t in range(TURRETS) if gems[t] == other]
            if self._vault(state, other):
                actions += [{"type": "knock_stone", "stone": s} for s in state["hands"][other]]
        return actions

    def _victory_rule(self, state: State) -> str:
        effect = EFFECT[state["vic"]["kind"]]
        return {
            PLACE: "Your Spell lets you place one of your Turret Gems on an empty turret.",
            SWAP: ("Your Potion lets you swap one of your gems with an adjacent gem of your opponent's, "
                   "or a stone of your hand with a stone in the Vault."),
            KNOCK: ("Your Charm lets you knock one of your opponent's gems back to their line, "
                    "or one of their hand's stones into the Vault."),
        }[effect]

    def _victory(self, state: State, seat: int, action: Action, events: list[Event]) -> None:
        kind = action["type"]
        other = 1 - seat
        gems = state["gems"]
        state["last"]["action"] = dict(action)
        if kind == "place":
            gems[action["turret"]] = seat
            state["line"][seat] -= 1
            events.append({"type": "gem_placed", "seat": seat, "turret": action["turret"]})
        elif kind == "swap_gems":
            gems[action["turret"]], gems[action["target"]] = other, seat
            events.append({"type": "gems_swapped", "seat": seat, "turret": action["turret"],
                           "target": action["target"]})
        elif kind == "swap_stone":
            hand, vault = state["hands"][seat], self._vault(state, seat)
            hand[hand.index(action["stone"])] = action["take"]
            vault[vault.index(action["take"])] = action["stone"]
            events.append({"type": "stone_swapped", "seat": seat, "stone": action["stone"], "take": action["take"]})
        elif kind == "knock_gem":
            gems[action["turret"]] = None
            state["line"][other] += 1
            events.append({"type": "gem_knocked", "seat": seat, "turret": action["turret"], "owner": other})
        else:
            # knock_stone: the stone goes to the Vault now; its owner picks a replacement next
            # ("players may not choose the Casting Stone that was just knocked into the Vault").
            hand = state["hands"][other]
            position = hand.index(action["stone"])
            del hand[position]
            faces = state["faces"][other]
            state["faces"][other] = faces[:position] + faces[position + 1:]
            self._vault(state, other).append(action["stone"])
            state["knocked"] = action["stone"]
            events.append({"type": "stone_knocked", "seat": seat, "stone": action["stone"], "owner": other})
            state["ph"], state["act"] = REPLACE, other
            return
        # ENDGAME: "Once a player has taken over four adjoining Turrets ... the game is at an end." A gem
        # swap can complete a run for either player; the mover's run counts first (docs: "Swaps").
        for candidate in (seat, other):
            if holds_run(gems, candidate):
                self._finish(state, candidate, FOUR_TURRETS, events)
                return
        self._end_turn(state, seat, events)

    def _replace(self, state: State, seat: int, stone_id: str, events: list[Event]) -> None:
        """"Your opponent must choose a new Casting Stone from the Vault" -- of any type (docs:
        "Knock-outs"): the manual's own note says a player who loses their Character Stone "will be
        unable to cast any Spells until recovering it"."""
        vault = self._vault(state, seat)
        vault.remove(stone_id)
        state["hands"][seat].append(stone_id)
        state["faces"][seat] += UNCAST
        state["last"]["replacement"] = stone_id
        events.append({"type": "stone_replaced", "seat": seat, "stone": stone_id})
        self._end_turn(state, state["vic"]["seat"], events)

    def _finish(self, state: State, winner: int | None, reason: str, events: list[Event]) -> None:
        state["winner"], state["end"] = winner, reason
        state["ph"], state["act"] = OVER, None
        state["vic"] = None
        events.append({"type": "match_over", "winners": [] if winner is None else [winner], "reason": reason})

    # -- the end ------------------------------------------------------------------------

    def result(self, state: State) -> dict[str, Any] | None:
        if state["ph"] != OVER:
            return None
        return {"winners": [] if state["winner"] is None else [state["winner"]],
                "scores": [sum(1 for g in state["gems"] if g == s) for s in (0, 1)],
                "reason": state["end"]}

    # -- the view --------------------------------------------------------------------------

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        """The table as anyone sitting at it sees it: everything but the RNG state."""
        phase = state["ph"]
        last = state["last"]
        compared = phase in (VICTORY, REPLACE, OVER) and last is not None and last["turn"] == state["turn"]
        rules = self._rules(state)
        players = []
        for s in (0, 1):
            hand, faces = state["hands"][s], state["faces"][s]
            if phase == PICK:
                cast = {"kind": PENDING, "power": None}
            elif compared:
                cast = {"kind": last["kinds"][s], "power": last["powers"][s]}
            else:
                kind, power = read_cast(hand, faces, rules.wild_chasers)
                cast = {"kind": kind, "power": power}
            have = [STONES[x].type for x in hand]
            players.append({
                "seat": s,
                "hand": [dict(STONES[x].public(), face=_FACE_NAMES[faces[i]] if i < len(faces) else "uncast")
                         for i, x in enumerate(hand)],
                "cast": cast,
                "recast": state["done"][s] == RECAST,
                "gems_in_line": state["line"][s],
                "turrets_held": sum(1 for g in state["gems"] if g == s),
                "to_pick": {t: max(0, rules.hand_quota.get(t, 0) - have.count(t)) if phase == PICK else 0
                            for t in ("character", "artifact", "element")},
            })
        victory = None
        if state["vic"] is not None:
            victory = {"seat": state["vic"]["seat"], "kind": state["vic"]["kind"], "effect": EFFECT[state["vic"]["kind"]]}
        return {
            "variant": state["v"],
            "seat": seat,
            "phase": phase,
            "turn": state["turn"],
            "first_caster": state["first"],
            "to_act": sorted(self.to_act(state)),
            "players": players,
            "pool": [STONES[x].public() for x in state["pool"]],
            "vault": [STONES[x].public() for x in self._vault(state, 0)] if rules.shared_vault else [],
            "turrets": [{"index": t, "name": TURRET_NAMES[t], "seat": state["gems"][t]} for t in range(TURRETS)],
            "victory": victory,
            "knocked": state["knocked"],
            "last_turn": self._last_turn_view(state),
            "winner": state["winner"],
            "end": state["end"] or "none",
            "options": dict(state["opt"]),
        }

    def _last_turn_view(self, state: State) -> dict[str, Any] | None:
        last = state["last"]
        if last is None:
            return None
        action = last["action"]
        winner = last["winner"]
        if winner is None:
            effect = "none"
        else:
            effect = EFFECT[last["kinds"][winner]]
        return {
            "turn": last["turn"],
            "winner": winner,
            "casts": [{"kind": k, "power": p} for k, p in zip(last["kinds"], last["powers"])],
            "effect": effect,
            "void": last["void"],
            "action": None if action is None else {
                "type": action["type"], "turret": action.get("turret"), "target": action.get("target"),
                "stone": action.get("stone"), "take": action.get("take"),
            },
            "replacement": last["replacement"],
            "summary": _summary(last),
        }

    # -- helpers ----------------------------------------------------------------------------

    def _rules(self, state: State) -> VariantRules:
        return VARIANTS[state["v"]]

    @staticmethod
    def _vault(state: State, seat: int) -> list[str]:
        """The Vault ``seat`` uses: the shared one, or their own when each player has one."""
        vaults = state["vault"]
        return vaults[0] if len(vaults) == 1 else vaults[seat]

    def _quota_text(self, state: State) -> str:
        quota = self._rules(state).hand_quota
        return ", ".join(f"{n} {t}" for t, n in quota.items())


def _cast_text(kind: str, power: int | None) -> str:
    return kind.capitalize() + (f" ({power})" if power is not None else "")


def _summary(last: dict[str, Any]) -> str:
    """One sentence telling what happened in a compared turn, for logs and front ends."""
    kinds, powers, winner = last["kinds"], last["powers"], last["winner"]
    casts = f"seat 0 cast {_cast_text(kinds[0], powers[0])}, seat 1 cast {_cast_text(kinds[1], powers[1])}"
    if winner is None:
        return f"Turn {last['turn']}: {casts}; nobody won the turn."
    text = f"Turn {last['turn']}: {casts}; seat {winner} won"
    action = last["action"]
    if last["void"]:
        return text + " but had no victory action open."
    if action is None:
        return text + "."
    kind = action["type"]
    if kind == "place":
        return text + f" and placed a Turret Gem on the {TURRET_NAMES[action['turret']]} turret."
    if kind == "swap_gems":
        return text + (f" and swapped gems between the {TURRET_NAMES[action['turret']]} and "
                       f"{TURRET_NAMES[action['target']]} turrets.")
    if kind == "swap_stone":
        return text + f" and swapped {STONES[action['stone']].name} for {STONES[action['take']].name} from the Vault."
    if kind == "knock_gem":
        return text + f" and knocked the gem on the {TURRET_NAMES[action['turret']]} turret back to its line."
    text += f" and knocked {STONES[action['stone']].name} into the Vault"
    if last["replacement"] is not None:
        text += f"; seat {1 - winner} took {STONES[last['replacement']].name}"
    return text + "."
