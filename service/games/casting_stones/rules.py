"""Casting Stones: the Basic, Intermediate and Advanced Games (manual sections A to E).

Read this beside ``/work/shared/seeds/000_a80342418ab30e6c.txt`` (the manual
and the stone chart) and ``003_82b6d6042101b6cb.txt`` (a second scan in raw
reading order). Section letters and headings below are the manual's; every
decision the manual leaves open is listed, with its source, in
``docs/rules/casting-stones.md``. Helpers: :mod:`.casts` (reading a cast),
:mod:`.victory` (place, swap, knock out), :mod:`.cards` (Casting Cards),
:mod:`.library` and :mod:`.collecting` (setting up the cards and collections).

The shape of a match
--------------------
1. Set-up.
   * Basic and Intermediate, GETTING STARTED, "Divide the Casting Stones": the
     starter set lies in the centre; seat 0 (the youngest) and seat 1 pick one
     stone at a time until each Casting Hand has 1 character, 2 artifacts and
     2 elements; the two stones left over go to the shared Vault.
   * Intermediate, THE LIBRARY: the Double Potion and Charms cards lie
     face-down; seat 0 takes one, seat 1 the other; both go face-up.
   * Advanced, CASTING HANDS (ADVANCED): both seats at once bring 10 stones and
     their cards, 5 stones cast and 5 kept in a private Vault.
2. Each turn (B, SEQUENCE OF PLAY): the turn's first caster casts and settles
   the cast (tips Leaners, declares symbol-up Chasers in the Advanced Game),
   then the other casts and settles; "Seconds": first caster then the other may
   re-cast any of their stones; the casts are compared, and Casting Cards checked; the winner
   takes one victory action (place, swap or knock-out); card bonuses follow;
   the winner casts first next turn.
3. ENDGAME: four adjacent turrets held win. A match option caps the number of
   turns (a match that reaches it ends with no winner).

Seats, phases and the state
---------------------------
Two seats; one acts at a time (``state["act"]``), except while both bring
their collections in the Advanced Game. ``state["ph"]`` is the phase:

``pick``      set-up draft, action ``pick``
``library``   Intermediate set-up: seat 0 takes a face-down card, ``take_card``
``bring``     Advanced set-up, both seats: ``bring``
``cast``      first cast of the turn, action ``cast`` (the RNG decides faces)
``tip``       tip a standing Leaner, action ``tip``
``declare``   Advanced: declare a symbol-up Chaser's type, action ``declare``
``seconds``   keep the cast or re-cast some stones, ``keep`` / ``recast``
``victory``   the turn's winner acts: ``place``, ``swap_gems``, ``swap_stone``,
              ``swap_card``, ``knock_gem``, ``knock_stone`` or ``knock_card``
``replace``   the knocked-out player takes a Vault stone, action ``replace``
``bonus``     a Casting Card's bonus step with a choice in it: the same actions
``over``      the match has ended

State keys (compact; everything is plain JSON)::

    v       variant id                 opt    the match options
    rng     Rng state                  ph     phase            act   seat to act or None
    turn    turn number (0 in set-up)  first  this turn's first caster
    pool    stones still in the centre during set-up
    hands   [[stone ids], [stone ids]] the two Casting Hands
    vault   [[stone ids]]              the Vaults: one shared list in the Basic and
                                       Intermediate games, one per seat in the Advanced
    faces   ["ssnnl", "-----"]         faces showing, one char per hand stone
                                       (casts.py: s symbol, n number, l Leaner, - uncast)
    done    [0|1|2, 0|1|2]             Seconds: 0 undecided, 1 kept, 2 re-cast
    gems    [seat|None] * 8            who holds each turret
    line    [int, int]                 Turret Gems still in each player's line
    vic     {"seat", "kind"} | None    the victory being taken now
    bq      [{"seat", "card", "step", "left"}]  card bonus steps still to take, first is current
    knocked stone id | None            the stone just knocked into the Vault
    last    the last compared turn: {"turn", "winner", "kinds", "powers", "counter",
            "cards", "void", "action", "replacement", "bonus"} | None
    winner  seat | None                end    None | "four_turrets" | "turn_limit"

Only in the variants that use them (so the Basic state stays small)::

    lib     [[card ids], [card ids]]   Intermediate, Advanced: face-up cards in each Library (in play)
    down    [[card ids], [card ids]]   Intermediate, Advanced: face-down cards, used, out of play
    hist    [[kind], [kind]]           Intermediate, Advanced: each seat's last cast kinds (streak cards)
    deck    [card ids]                 Intermediate set-up: the face-down cards, in secret order
    decl    [{stone: type}, {...}]     Advanced: what each symbol-up Chaser was declared as
    vc      [[card ids], [card ids]]   Advanced: cards in each private Vault
    br      [collection|None] * 2      Advanced set-up: what each seat brought, until both have
    pk      [int, int] | None          Advanced set-up: each seat's pack-generator seed

Hidden information: the RNG state; in the Intermediate set-up, which face-down
card is which; in the Advanced Game, what each seat brought until both have,
and each private Vault's contents (its owner sees it, the opponent its size).
Hands, casts, gems and Libraries are on the table for all to see.
"""

from __future__ import annotations

from functools import lru_cache
from operator import itemgetter
from typing import Any

from service.engine import Action, Catalogue, Event, Game, Rng, State, Variant, clone, load_data

from . import catalogue, collecting, collectors, library, victory, views
from .collectibles import StoneCollectibles
from .determinise import determinise as _determinise
from .cards import (
    CARDS, LONGEST_STREAK, OF_CARDS, OF_GEMS, OF_STONES, card_entries, conditions_hold, shows_stones, works,
)
from .casts import (
    BUNGLE, EFFECT, FACE_NAMES, KNOCK, LEANER, NUMBER, PENDING, PLACE, SPELL, SWAP, SYMBOL, UNCAST, read_cast,
    winner_of,
)
from .catalogue import (
    ARTIFACT, CHARACTER, CHASER, ELEMENT, GEMS_PER_PLAYER, RUN_TO_WIN, STONES, TURRET_NAMES, TURRETS, VARIANTS,
    VariantRules, set_stones,
)

PICK, LIBRARY, BRING, CAST, TIP, DECLARE, SECONDS, VICTORY, REPLACE, BONUS, OVER = (
    "pick", "library", "bring", "cast", "tip", "declare", "seconds", "victory", "replace", "bonus", "over")

FOUR_TURRETS, TURN_LIMIT = "four_turrets", "turn_limit"

#: Seconds progress per seat (``state["done"]``).
UNDECIDED, KEPT, RECAST = 0, 1, 2

_FACE_CODES = {"symbol": SYMBOL, "number": NUMBER}
#: "Chasers are wild – they can become Character, Artifact or Element Stones as the player wishes." (A)
WILD_TYPES = (CHARACTER, ARTIFACT, ELEMENT)
#: Options that are the service's policy, not rules of play (``open_collection``: who may bring what):
#: kept out of the state, so that a match plays and hashes the same with or without them.
SERVICE_OPTIONS = ("open_collection",)

#: Stand-ins for per-seat keys a variant's state does not have (read-only).
_NONE: tuple[tuple, tuple] = ((), ())
_NO_DECLARATIONS: tuple[dict, dict] = ({}, {})
_NONE_PAIR = (None, None)

#: The Chasers' stone ids.
_CHASERS = frozenset(stone.id for stone in STONES.values() if stone.type == CHASER)
#: Every non-empty subset of hand positions, for the ``recast`` actions.
_SUBSETS = {size: [[i for i in range(size) if mask >> i & 1] for mask in range(1, 1 << size)] for size in range(1, 11)}


@lru_cache(maxsize=4096)
def _recast_choices(hand: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The stones of every ``recast`` action open to a sorted ``hand``: each non-empty subset, taken in
    index order, so already in canonical order. Remembered per hand (a hand seldom changes between
    Seconds), the legal actions then copy each into a fresh list."""
    return tuple(tuple(hand[i] for i in subset) for subset in _SUBSETS[len(hand)])


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


def _rules_version() -> str:
    """The package's rules version, plus a digest of an operator's extra Casting Cards (cards.py) when there
    are any: they change what a match can play, so processes with different card files never share a match."""
    import hashlib
    import json

    version = load_data(__package__, "rules_version.json")["version"]
    shipped = {raw["id"] for raw in load_data(__package__, "cards.json")["cards"]}
    extra = [dict(card.source) for card in CARDS.values() if card.id not in shipped]
    if not extra:
        return version
    digest = hashlib.sha256(json.dumps(extra, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return f"{version}+cards.{digest[:12]}"


#: The state's layout (module docstring, "State keys") as :func:`_copy_state` copies it. Keys holding lists of
#: numbers or strings; lists of such lists (one per seat, or the one shared Vault); lists of flat dicts.
_FLAT_LISTS = ("pool", "faces", "done", "gems", "line", "deck")
_LISTS_OF_LISTS = ("hands", "vault", "lib", "down", "hist", "vc")
_LISTS_OF_DICTS = ("bq", "decl")
#: Keys copied by layout (flat dicts: the options, ``vic``; ``pk``: a list or None; ``br``: collections or None;
#: ``last``: :func:`_copy_last`); any other key is deep-copied as it is.
_LAID_OUT = frozenset({"v", "rng", "ph", "act", "turn", "first", "knocked", "winner", "end", "opt", "vic", "pk",
                       "br", "last", *_FLAT_LISTS, *_LISTS_OF_LISTS, *_LISTS_OF_DICTS})
#: ``row[:]``, called from C by ``map``.
_SLICE = itemgetter(slice(None))


def _copy_state(state: State) -> State:
    """A deep copy of a state: equal to ``clone(state)`` and sharing no list or dict with it.

    ``clone``'s marshal round trip writes and reads back every string of the state (stone and card ids,
    keys); copying the containers by the state's layout, the immutable strings and numbers shared, takes
    about half the time. Keys a state may lack (a variant's own, or a state stored before they existed) are
    skipped; a key this layout does not know is deep-copied by ``clone``.
    """
    new = state.copy()
    for key in _FLAT_LISTS:
        if key in state:
            new[key] = state[key][:]
    for key in _LISTS_OF_LISTS:
        if key in state:
            new[key] = list(map(_SLICE, state[key]))
    for key in _LISTS_OF_DICTS:
        if key in state:
            new[key] = list(map(dict, state[key]))
    for key in ("opt", "vic"):
        if state.get(key) is not None:
            new[key] = dict(state[key])
    if state.get("pk") is not None:
        new["pk"] = state["pk"][:]
    brought = state.get("br")
    if brought is not None:   # a collection (nested lists) only while the Advanced Game is set up, else Nones
        new["br"] = brought[:] if brought.count(None) == len(brought) else clone(brought)
    if state.get("last") is not None:
        new["last"] = _copy_last(state["last"])
    if not _LAID_OUT.issuperset(state):
        for key in state.keys() - _LAID_OUT:
            new[key] = clone(state[key])
    return new


def _copy_last(last: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of ``state["last"]`` (:meth:`CastingStones._compare` makes it) by its layout: lists of
    kinds, powers and counter-spell cards, the ``[seat, card]`` pairs of used cards, the victory action
    and the bonus actions (flat dicts). A turn stored before Casting Cards lacks the last three lists; a
    key not laid out here is deep-copied by ``clone``."""
    new = last.copy()
    new["kinds"], new["powers"] = last["kinds"][:], last["powers"][:]
    if "counter" in last:
        new["counter"] = last["counter"][:]
    if "cards" in last:
        new["cards"] = list(map(_SLICE, last["cards"]))
    if last["action"] is not None:
        new["action"] = dict(last["action"])
    if "bonus" in last:
        new["bonus"] = list(map(dict, last["bonus"]))
    if not _LAST_LAID_OUT.issuperset(last):
        for key in last.keys() - _LAST_LAID_OUT:
            new[key] = clone(last[key])
    return new


#: The keys of ``state["last"]`` that :func:`_copy_last` knows.
_LAST_LAID_OUT = frozenset({"turn", "winner", "kinds", "powers", "counter", "cards", "void", "action", "replacement",
                            "bonus"})


class CastingStones(Game):
    id = "casting-stones"
    title = "Casting Stones"
    rules_version = _rules_version()
    min_seats = 2
    max_seats = 2
    variants = tuple(Variant(v.id, v.title, v.description) for v in VARIANTS.values())
    summary = ("Two wizards cast rune stones to conjure Spells, Potions and Charms (Spell beats Potion beats "
               "Charm beats Spell); winning casts place, swap and knock Turret Gems until one holds four "
               "adjacent turrets of the Tower Mat. Intermediate and Advanced games add Casting Cards, private "
               "Vaults and collections of stones.")
    schema = load_data(__package__, "schema.json")
    # "more by agreement", up to the different cards the service knows: shipped and an operator's (cards.py),
    # so the options schema itself documents every count a match accepts
    schema["options"]["properties"]["cards_per_player"]["maximum"] = len(CARDS)
    catalogues = (
        Catalogue("stones", schema["stone"], ("type", "rarity"), catalogue.stones),
        Catalogue("cards", schema["card"], ("id", "rarity"), card_entries),
        Catalogue("hands", schema["hand"], (), lambda: [
            {"id": h["id"], "title": h["title"], "description": h["description"], "stones": h["action"]["stones"],
             "cards": h["action"]["cards"], "hand": h["action"]["hand"]} for h in collecting.themed_hands()]),
        Catalogue("chart", schema["chart_entry"], ("rarity",), collectors.chart),
        Catalogue("packs", schema["pack"], (), collecting.open_packs, params={
            "seed": {"type": "integer", "minimum": 0, "maximum": 2**53 - 1, "default": 0},
            "starters": {"type": "integer", "minimum": 0, "maximum": 10, "default": 1},
            "refills": {"type": "integer", "minimum": 0, "maximum": 50, "default": 1},
        }),
    )

    #: Collections players own, sets they open, saved hands (service/engine/collectibles.py).
    collectibles = StoneCollectibles()

    # -- set-up -----------------------------------------------------------------------------

    def setup(self, options: dict[str, Any], seats: int, seed: int) -> State:
        rules = VARIANTS[options.get("variant") or self.variants[0].id]
        opt = {name: options.get(name, prop["default"]) for name, prop in self.options_schema["properties"].items()
               if name not in SERVICE_OPTIONS}
        rng = Rng.from_seed(seed)
        state = {
            "v": rules.id,
            "opt": opt,
            "rng": rng.state,
            # "Beginning with the youngest player, both players take turns selecting one Stone
            # at a time" (GETTING STARTED): seat 0 stands for the youngest.
            "ph": PICK,
            "act": 0,
            "turn": 0,
            "first": 0,
            "pool": set_stones(rules.stone_set) if rules.stone_set else [],
            "hands": [[], []],
            "vault": [[]] if rules.shared_vault else [[], []],
            "faces": ["", ""],
            "done": [UNDECIDED, UNDECIDED],
            "gems": [None] * TURRETS,
            "line": [GEMS_PER_PLAYER, GEMS_PER_PLAYER],
            "vic": None,
            "bq": [],
            "knocked": None,
            "last": None,
            "winner": None,
            "end": None,
        }
        # Keys only the variants with Casting Cards, Chasers or collections need (the Basic state stays small).
        if rules.library or rules.brings_collections:
            state.update(lib=[[], []], down=[[], []], hist=[[], []])
        if rules.library:
            state["deck"] = []
        if rules.wild_chasers:
            state["decl"] = [{}, {}]
        if rules.brings_collections:
            # CASTING HANDS (ADVANCED): no draft; both players bring their collections at once.
            state.update(vc=[[], []], br=[None, None], pk=library.pack_seeds(rng.state))
            state["ph"], state["act"] = BRING, None
        return state

    # -- who acts, and what they may do ------------------------------------------------------

    def to_act(self, state: State) -> set[int]:
        if state["ph"] == BRING:
            return {s for s in (0, 1) if state["br"][s] is None}
        return set() if state["act"] is None else {state["act"]}

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        if seat not in self.to_act(state):
            return []
        phase = state["ph"]
        if phase == CAST:
            return [{"type": "cast"}]
        if phase == PICK:
            return [{"type": "pick", "stone": s} for s in self._pickable(state, seat)]
        if phase == LIBRARY:
            return [{"type": "take_card", "slot": i} for i in range(len(state["deck"]))]
        if phase == BRING:
            return library.bring_offers(state, seat, self._rules(state))
        if phase == TIP:
            hand, faces = state["hands"][seat], state["faces"][seat]
            return [{"type": "tip", "stone": hand[i], "face": face}
                    for i, f in enumerate(faces) if f == LEANER for face in ("symbol", "number")]
        if phase == DECLARE:
            return [{"type": "declare", "stone": s, "stone_type": t} for s in self._undeclared(state, seat)
                    for t in WILD_TYPES]
        if phase == SECONDS:
            return [{"type": "keep"}] + [{"type": "recast", "stones": list(stones)}
                                         for stones in _recast_choices(tuple(sorted(state["hands"][seat])))]
        if phase in (VICTORY, BONUS):
            return self._effect_options(state, seat)
        if phase == REPLACE:
            return [{"type": "replace", "stone": s} for s in victory.vault_of(state, seat) if s != state["knocked"]]
        return []

    def is_legal(self, state: State, seat: int, action: Action) -> bool:
        """Membership in :meth:`legal_actions`, checked without building the list where cheap; a ``bring``
        is legal for any valid collection, offered or not."""
        if seat not in self.to_act(state):
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
        if kind == "declare":
            return (phase == DECLARE and action.get("stone") in self._undeclared(state, seat)
                    and action.get("stone_type") in WILD_TYPES)
        if kind == "pick":
            return phase == PICK and action.get("stone") in self._pickable(state, seat)
        if kind == "take_card":
            return phase == LIBRARY and action.get("slot") in range(len(state["deck"]))
        if kind == "bring":
            return phase == BRING and library.problem(state, action, self._rules(state)) is None
        if kind == "replace":
            return (phase == REPLACE and action.get("stone") != state["knocked"]
                    and action.get("stone") in victory.vault_of(state, seat))
        return phase in (VICTORY, BONUS) and action in self._effect_options(state, seat)

    def explain_illegal(self, state: State, seat: int, action: Action) -> str:
        phase, kind = state["ph"], action.get("type")
        expected = {
            PICK: "the set-up draft is on: pick a stone from the centre",
            LIBRARY: "take one of the face-down Casting Cards",
            BRING: "bring your collection: 10 stones, your Casting Cards and the 5 stones of your Casting Hand",
            CAST: "it is time to cast your stones",
            TIP: "you must tip your Leaners (symbol or number) before the second cast begins",
            DECLARE: "declare what each of your symbol-up Chasers stands for: character, artifact or element",
            SECONDS: "decide your second cast: keep your stones or re-cast some of them",
            VICTORY: "you won the turn: take your victory action",
            REPLACE: "choose a replacement stone from the Vault",
            BONUS: "take your Casting Card's bonus",
        }.get(phase, "the match is over")
        if kind == "pick" and phase == PICK:
            stone_id = action.get("stone")
            if stone_id not in state["pool"]:
                return "That stone is not in the centre of the table."
            stone_type = STONES[stone_id].type
            quota = self._rules(state).hand_quota.get(stone_type, 0)
            return (f"Your Casting Hand already has its {quota} {stone_type} stone(s); it must end with "
                    + self._quota_text(state) + ".")
        if kind == "bring" and phase == BRING:
            return library.problem(state, action, self._rules(state)) or "Your collection is already on the table."
        if kind == "take_card" and phase == LIBRARY:
            return f"Take one of the {len(state['deck'])} face-down cards: slot 0 to {len(state['deck']) - 1}."
        if kind == "recast" and phase == SECONDS:
            return ("Re-cast one or more stones of your own Casting Hand, each named once, "
                    "listed in alphabetical order of their ids.")
        if kind == "tip" and phase == TIP:
            return "Only a Leaner in your own cast can be tipped, to 'symbol' or 'number'."
        if kind == "declare" and phase == DECLARE:
            return "Declare one of your own symbol-up Chasers as a character, an artifact or an element."
        if kind == "replace" and phase == REPLACE:
            return ("Take a stone from the Vault (your own, in the Advanced Game), other than the stone just "
                    "knocked into it.")
        if phase in (VICTORY, BONUS) and kind in victory.EFFECT_ACTIONS:
            return self._effect_rule(state)
        return f"Not now: {expected}."

    # -- playing an action ---------------------------------------------------------------

    def copy_for_play(self, state: State, seat: int, action: Action) -> State:
        """A deep copy of ``state`` (see :meth:`Game.copy_for_play`) made by its known layout, :func:`_copy_state`:
        every list and dict copied, the strings and numbers in them shared (they never change)."""
        return _copy_state(state)

    def play(self, state: State, seat: int, action: Action) -> list[Event]:
        events: list[Event] = []
        kind = action["type"]
        if kind == "pick":
            self._pick(state, seat, action["stone"], events)
        elif kind == "take_card":
            library.take_card(state, seat, action["slot"], events)
            self._start_turn(state, 0, events)
        elif kind == "bring":
            if library.bring(state, seat, action, events):
                library.set_table(state, events)
                # "Set up the game the same way you would for Intermediate play": the youngest casts first.
                self._start_turn(state, 0, events)
        elif kind == "cast":
            self._cast(state, seat, list(range(len(state["hands"][seat]))), events)
        elif kind == "tip":
            self._tip(state, seat, action["stone"], action["face"], events)
        elif kind == "declare":
            state["decl"][seat][action["stone"]] = action["stone_type"]
            events.append({"type": "declared", "seat": seat, "stone": action["stone"],
                           "stone_type": action["stone_type"]})
            self._progress(state, events)
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
            self._effect(state, seat, action, events)
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
        rules = self._rules(state)
        size = rules.hand_size
        other = 1 - seat
        if len(state["hands"][other]) < size:
            state["act"] = other
        elif len(state["hands"][seat]) < size:
            state["act"] = seat
        else:
            # "Take the two Casting Stones that neither player selected and place them in the Vault."
            leftovers, state["pool"] = state["pool"], []
            victory.vault_of(state, 0).extend(leftovers)
            events.append({"type": "vaulted", "stones": leftovers})
            if rules.library:
                # THE LIBRARY: "after you and your opponent have chosen your Casting Stones, divide the
                # Casting Cards ... have the youngest player select one."
                library.offer_library(state, rules, events)
                state["ph"], state["act"] = LIBRARY, 0
            else:
                # "During the first turn of a new game, the youngest player casts first" (THE CAST).
                self._start_turn(state, 0, events)

    # Step 1 and 2: casting, Leaners, Chasers and Seconds.

    def _start_turn(self, state: State, first: int, events: list[Event]) -> None:
        state["turn"] += 1
        state["first"] = first
        state["faces"] = [UNCAST * len(hand) for hand in state["hands"]]
        if "decl" in state:
            state["decl"] = [{}, {}]
        state["done"] = [UNDECIDED, UNDECIDED]
        state["vic"] = None
        state["bq"] = []
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
        hand = state["hands"][seat]
        for position, face in zip(positions, thrown):
            faces[position] = face
            if "decl" in state:
                state["decl"][seat].pop(hand[position], None)   # a re-cast Chaser is declared afresh
        state["faces"][seat] = "".join(faces)
        events.append({"type": "cast", "seat": seat, "second": state["done"][seat] == RECAST,
                       "stones": [hand[p] for p in positions], "faces": [FACE_NAMES[f] for f in thrown]})
        self._progress(state, events)

    def _tip(self, state: State, seat: int, stone_id: str, face: str, events: list[Event]) -> None:
        """"With a Leaner, you can tip the Stone whichever way you desire ... once you tip it, you're
        stuck with your choice." (THE CAST)"""
        position = state["hands"][seat].index(stone_id)
        faces = state["faces"][seat]
        state["faces"][seat] = faces[:position] + _FACE_CODES[face] + faces[position + 1:]
        events.append({"type": "tipped", "seat": seat, "stone": stone_id, "face": face})
        self._progress(state, events)

    def _undeclared(self, state: State, seat: int) -> list[str]:
        """Advanced: ``seat``'s symbol-up Chasers whose type is not declared yet.

        "In Advanced Games, Chasers are wild – they can become Character, Artifact or Element Stones as
        the player wishes" (A). Like a Leaner, the caster decides as soon as the stone lies symbol-up, and
        the choice holds until the stone is cast again (docs: "Chasers").
        """
        hand = state["hands"][seat]
        if not self._rules(state).wild_chasers or _CHASERS.isdisjoint(hand):   # most hands hold no Chaser
            return []
        return _undeclared_chasers(hand, state["faces"][seat], state["decl"][seat])

    def _read(self, state: State, seat: int) -> tuple[str, int | None, str | None]:
        """``seat``'s cast as it reads now: ``(kind, power, counter-spell card or None)`` (:func:`_reading`).

        Asked for both seats by every view and by most plays, so the reading is remembered by the values
        it depends on; a cast still lying uncast or on a Leaner reads as pending without looking further.
        """
        faces = state["faces"][seat]
        if UNCAST in faces or LEANER in faces:
            return _PENDING_READING
        rules = self._rules(state)
        declared = tuple(state["decl"][seat].items()) if rules.wild_chasers else None
        counters = (tuple(state["lib"][seat]), tuple(state["gems"]), seat) if rules.counter_spells else None
        return _reading(tuple(state["hands"][seat]), faces, declared, counters)

    def _may_recast(self, state: State, seat: int) -> bool:
        """"Either player may choose to keep the combination ... after their first cast. However, if
        they failed to throw a Spell, Potion or Charm they may choose to cast any or all of their
        Casting Stones a second time" (SECONDS): only a failed first cast may be re-cast, unless
        the ``open_seconds`` option lets every player re-cast."""
        if state["opt"]["open_seconds"]:
            return True
        return self._read(state, seat)[0] == BUNGLE

    def _progress(self, state: State, events: list[Event]) -> None:
        """Move the turn on to the next decision someone must take, or compare the casts.

        Order within a turn (docs/rules/casting-stones.md, "Order of a turn"):
        1. the turn's first caster casts and settles the cast (tips its Leaners, declares its symbol-up
           Chasers), then the other does the same. Step 5's reason for the order, "This allows the loser
           of the previous turn a chance to see what their opponent casts before they cast their own
           Stones", needs the first cast settled before the second is thrown; "You must tip all Leaners
           before the second cast begins" then holds of both readings of "the second cast";
        2. Seconds, first caster first ("Whoever cast first in Step 1 goes first again and decides
           whether or not they want to make a second cast ... their opponent waits until they finish");
           a Leaner or Chaser from a second cast is settled by its caster before the opponent's second;
        3. compare.
        """
        first = state["first"]
        order = (first, 1 - first)
        faces = state["faces"]
        for seat in order:
            if UNCAST in faces[seat]:
                state["ph"], state["act"] = CAST, seat
                return
            if LEANER in faces[seat]:
                state["ph"], state["act"] = TIP, seat
                return
            if self._undeclared(state, seat):
                state["ph"], state["act"] = DECLARE, seat
                return
        for seat in order:
            if state["done"][seat] == UNDECIDED:
                if self._may_recast(state, seat):
                    state["ph"], state["act"] = SECONDS, seat
                    return
                state["done"][seat] = KEPT
        self._compare(state, events)

    # Step 3: "Compare the casts and determine who won the turn." -- and which Casting Cards work.

    def _compare(self, state: State, events: list[Event]) -> None:
        readings = [self._read(state, s) for s in (0, 1)]
        kinds = [r[0] for r in readings]
        powers = [r[1] for r in readings]
        counters = [r[2] for r in readings]
        winner = winner_of(kinds, powers)
        card_events: list[Event] = []
        turned = self._check_cards(state, kinds, counters, winner, card_events)
        state["last"] = {"turn": state["turn"], "winner": winner, "kinds": kinds, "powers": powers,
                         "counter": counters, "cards": turned, "void": False, "action": None,
                         "replacement": None, "bonus": []}
        result = {"type": "turn_result", "turn": state["turn"], "winner": winner,
                  "casts": [{"kind": k, "power": p} for k, p in zip(kinds, powers)]}
        if any(counters):
            result["counter_spells"] = counters
        events.append(result)
        events += card_events
        if winner is None:
            # "no one wins that turn and the players must cast a new Hand": the same player casts
            # first again, since nobody won the right to (docs: "Ties"). Cards that work without a win
            # (Double Potion, Charms) still give their bonus.
            self._next_bonus(state, events)
            return
        state["vic"] = {"seat": winner, "kind": kinds[winner]}
        if not self._effect_options(state, winner):
            # A victory with nothing it could do (e.g. a Spell with no empty turret): recorded, and
            # the winner still casts first next turn.
            state["last"]["void"] = True
            events.append({"type": "victory_void", "seat": winner, "effect": EFFECT[kinds[winner]]})
            self._next_bonus(state, events)
            return
        state["ph"], state["act"] = VICTORY, winner

    def _check_cards(self, state: State, kinds: list[str], counters: list[str | None], winner: int | None,
                     events: list[Event]) -> list[list]:
        """Turn face-down every Library card that worked this turn or was cast as a Counter Spell, queue the
        bonuses of those that worked, and remember the casts for streak cards. Returns ``[[seat, card], ...]``.

        * "As long as Cards in the Library are face-up they may be used, but they may only be used once per
          game. After you have successfully used a Card, turn it face-down" (THE LIBRARY); a card that works is
          used at once (docs: "When a card works").
        * "If you cast the Counter Spell shown on a Casting Card, score it just like a spell and then take the
          card out of play by turning it over" -- whether or not the Spell wins.
        * Bonuses come after the winner's victory action, the winner's cards first ("The bonus adds to the
          normal victory action"); with no winner, the first caster's first.
        """
        if "lib" not in state:   # the Basic Game has no cards
            return []
        first = state["first"]
        order = (winner, 1 - winner) if winner is not None else (first, 1 - first)
        rules = self._rules(state)
        turned = []
        for seat in order:
            for card_id in list(state["lib"][seat]):
                card = CARDS[card_id]
                worked = works(card, hand=state["hands"][seat], faces=state["faces"][seat], kind=kinds[seat],
                               history=state["hist"][seat], gems=state["gems"], seat=seat, won=winner == seat)
                if not worked and counters[seat] != card_id:
                    continue
                state["lib"][seat].remove(card_id)
                state["down"][seat].append(card_id)
                turned.append([seat, card_id])
                events.append({"type": "card_used", "seat": seat, "card": card_id, "bonus": worked,
                               "counter_spell": counters[seat] == card_id})
                if worked:
                    state["bq"] += [{"seat": seat, "card": card_id, "step": i, "left": step.count}
                                    for i, step in enumerate(card.effect)
                                    if rules.card_actions or set(step.of) - {OF_CARDS}]
        keep = LONGEST_STREAK - 1
        state["hist"] = [(state["hist"][s] + [kinds[s]])[-keep:] for s in (0, 1)]
        return turned

    # Step 4: "The winner executes his victory action." (REWARDS and the QUICK-REFERENCE CHART)
    # and the Casting Cards' bonuses.

    def _effect_spec(self, state: State) -> tuple[int, str, tuple[str, ...], tuple[int, ...] | None, bool]:
        """What the current victory or bonus step allows: ``(seat, do, of, turrets, displace)``."""
        rules = self._rules(state)
        allowed = (OF_GEMS, OF_STONES, OF_CARDS) if rules.card_actions else (OF_GEMS, OF_STONES)
        if state["ph"] == BONUS:
            head = state["bq"][0]
            step = CARDS[head["card"]].effect[head["step"]]
            return head["seat"], step.do, tuple(o for o in step.of if o in allowed), step.turrets, step.displace
        vic = state["vic"]
        # "Additional victory actions: Advanced Game": Potions also swap, Charms also knock, Casting Cards.
        return vic["seat"], EFFECT[vic["kind"]], allowed, None, False

    def _effect_options(self, state: State, seat: int) -> list[Action]:
        """Every action of the current victory ("YOU MAY ONLY CHOOSE ONE") or bonus step open to ``seat``."""
        if state["ph"] == BONUS:
            if not state["bq"]:
                return []
        elif state["vic"] is None:
            return []
        owner, do, of, turrets, displace = self._effect_spec(state)
        if owner != seat:
            return []
        return victory.effect_actions(state, seat, do, of, turrets, displace)

    def _effect_rule(self, state: State) -> str:
        """Why an effect action is refused: what the current victory or bonus step does allow."""
        _seat, do, of, turrets, displace = self._effect_spec(state)
        if state["ph"] == BONUS:
            intro = f"Your {CARDS[state['bq'][0]['card']].name} card lets you "
        else:
            intro = {PLACE: "Your Spell lets you ", SWAP: "Your Potion lets you ", KNOCK: "Your Charm lets you "}[do]
        if do == PLACE:
            where = ("an empty turret" if turrets is None
                     else " or ".join(f"the {TURRET_NAMES[t]} turret" for t in turrets))
            text = f"place one of your Turret Gems on {where}" + (", even one your opponent holds" if displace else "")
        elif do == SWAP:
            text = "swap " + " or ".join({
                OF_GEMS: "one of your gems with an adjacent gem of your opponent's",
                OF_STONES: "a stone of your hand with a stone in the Vault",
                OF_CARDS: "one of your face-up cards with a card in your Vault"}[o] for o in of)
        else:
            text = "knock " + " or ".join({
                OF_GEMS: "one of your opponent's gems back to their line",
                OF_STONES: "one of your opponent's stones into the Vault",
                OF_CARDS: "one of your opponent's face-up cards into their Vault"}[o] for o in of)
        return intro + text + "."

    def _effect(self, state: State, seat: int, action: Action, events: list[Event]) -> None:
        """Carry out a victory action or a bonus step, then go on to what follows."""
        in_bonus = state["ph"] == BONUS
        if in_bonus:
            state["last"]["bonus"].append(dict(action))
            head = state["bq"][0]
            head["left"] -= 1
            if head["left"] == 0:
                state["bq"].pop(0)
        else:
            state["last"]["action"] = dict(action)
        if victory.carry_out(state, seat, action, events):
            state["ph"], state["act"] = REPLACE, 1 - seat
            return
        if self._finished_by_run(state, seat, events):
            return
        self._next_bonus(state, events)

    def _finished_by_run(self, state: State, seat: int, events: list[Event]) -> bool:
        """ENDGAME: "Once a player has taken over four adjoining Turrets on the Tower Mat, the game is at an
        end." A gem swap can complete a run for either player; the mover's run counts first (docs: "Swaps")."""
        for candidate in (seat, 1 - seat):
            if holds_run(state["gems"], candidate):
                self._finish(state, candidate, FOUR_TURRETS, events)
                return True
        return False

    def _replace(self, state: State, seat: int, stone_id: str, events: list[Event]) -> None:
        """"Your opponent must choose a new Casting Stone from the Vault" -- of any type (docs:
        "Knock-outs"): the manual's own note says a player who loses their Character Stone "will be
        unable to cast any Spells until recovering it". In the Advanced Game, from their own Vault."""
        victory.replace(state, seat, stone_id, events)
        if state["vic"] is not None:
            state["last"]["replacement"] = stone_id
        else:
            state["last"]["bonus"].append({"type": "replace", "stone": stone_id})
        self._next_bonus(state, events)

    def _next_bonus(self, state: State, events: list[Event]) -> None:
        """After the victory action: the queued card bonuses, in order, then the next turn.

        "as long as you successfully cast two Potions or two Charms in a row, you will gain the benefits
        listed on those Cards" (CASTING CARDS (INTERMEDIATE)): a bonus is not declined. Its owner chooses
        only where the card leaves a choice (which gem or stone); a step with one possible action is taken
        for them, and a step with none passes by itself, like a victory with nothing to do (docs: "Bonuses").
        """
        state["vic"] = None
        while state.get("bq"):   # .get: a Basic match stored before cards existed has no queue
            head = state["bq"][0]
            state["ph"] = BONUS
            options = self._effect_options(state, head["seat"])
            if len(options) == 1:
                events.append({"type": "bonus_auto", "seat": head["seat"], "card": head["card"],
                               "action": dict(options[0])})
                self._effect(state, head["seat"], options[0], events)
                return
            if options:
                state["act"] = head["seat"]
                return
            state["bq"].pop(0)
            events.append({"type": "bonus_void", "seat": head["seat"], "card": head["card"]})
        winner = state["last"]["winner"]
        # Step 5: "Whoever won the turn casts first on the following turn."
        self._end_turn(state, state["first"] if winner is None else winner, events)

    def _end_turn(self, state: State, next_first: int, events: list[Event]) -> None:
        """Step 5, or the match ends at the turn limit."""
        state["vic"] = None
        state["knocked"] = None
        cap = state["opt"]["max_turns"]
        if cap and state["turn"] >= cap:
            self._finish(state, None, TURN_LIMIT, events)
            return
        self._start_turn(state, next_first, events)

    def _finish(self, state: State, winner: int | None, reason: str, events: list[Event]) -> None:
        state["winner"], state["end"] = winner, reason
        state["ph"], state["act"] = OVER, None
        state["vic"] = None
        state["bq"] = []
        events.append({"type": "match_over", "winners": [] if winner is None else [winner], "reason": reason})

    # -- the end ------------------------------------------------------------------------

    def result(self, state: State) -> dict[str, Any] | None:
        if state["ph"] != OVER:
            return None
        scores = [sum(1 for g in state["gems"] if g == s) for s in (0, 1)]
        if state["end"] == FOUR_TURRETS:
            reason = f"Seat {state['winner']} holds four adjoining turrets of the Tower Mat."
        else:
            cap = state["opt"]["max_turns"]
            reason = (f"The turn limit ({cap} turn{'' if cap == 1 else 's'}) was reached before anyone held four "
                      "adjoining turrets; nobody wins.")
        # ``cause`` is the same code as ``end`` in the view: docs/rules/casting-stones.md lists both values.
        return {"winners": [] if state["winner"] is None else [state["winner"]], "scores": scores,
                "reason": reason, "cause": state["end"]}

    # -- the view --------------------------------------------------------------------------

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        """The table as ``seat`` sees it: everything but the RNG state, the face-down cards' order, and the
        other player's private Vault and (until both are in) brought collection.

        Hands, cards, Vaults, turrets and the last turn are lists and dicts shared between views showing
        equal parts (:mod:`.views`): a view is read, encoded or converted, never changed in place."""
        phase = state["ph"]
        last = state["last"]
        compared = phase in (VICTORY, REPLACE, BONUS, OVER) and last is not None and last["turn"] == state["turn"]
        rules = self._rules(state)
        gems = state["gems"]
        libraries, used = state.get("lib", _NONE), state.get("down", _NONE)
        declarations = state.get("decl", _NO_DECLARATIONS)
        players = []
        for s in (0, 1):
            hand, faces, library_cards = state["hands"][s], state["faces"][s], libraries[s]
            vault, vault_cards = ([], []) if rules.shared_vault else (state["vault"][s], state["vc"][s])
            pending = library.pending_collection(state, s) if phase == BRING else None
            if pending is not None and seat == s:
                # Your own collection, while the other player has yet to bring theirs.
                hand = pending["hand"]
                vault = [x for x in pending["stones"] if x not in hand]
                library_cards = pending["cards"]
            counter = None
            if phase in (PICK, LIBRARY, BRING):
                cast = {"kind": PENDING, "power": None}
            elif compared:
                cast = {"kind": last["kinds"][s], "power": last["powers"][s]}
                counter = last.get("counter", _NONE_PAIR)[s]
            else:
                kind, power, counter = self._read(state, s)
                cast = {"kind": kind, "power": power}
            mine = seat == s
            declared = declarations[s]
            if phase == PICK:
                have = [STONES[x].type for x in hand]
                to_pick = {t: max(0, rules.hand_quota.get(t, 0) - have.count(t))
                           for t in ("character", "artifact", "element")}
            else:
                to_pick = views.NOTHING_TO_PICK
            players.append({
                "seat": s,
                "hand": views.hand(tuple(hand), faces, tuple(declared.items()) if declared else ()),
                "conjured": cast,
                "counter_spell": counter,
                "recast": state["done"][s] == RECAST,
                "gems_in_line": state["line"][s],
                "turrets_held": gems.count(s),
                "to_pick": to_pick,
                "library": views.cards(tuple(library_cards)),
                "used_cards": views.cards(tuple(used[s])),
                # THE VAULT (ADVANCED): "What is stored in your Vault is for you and you alone."
                "vault": views.stones(tuple(vault)) if mine else [],
                "vault_cards": views.cards(tuple(vault_cards)) if mine else [],
                "vault_size": len(vault),
                "vault_card_count": len(vault_cards),
                "ready": phase != BRING or state["br"][s] is not None,
            })
        victory_view = None
        if state["vic"] is not None:
            victory_view = {"seat": state["vic"]["seat"], "kind": state["vic"]["kind"],
                            "effect": EFFECT[state["vic"]["kind"]]}
        bonus = None
        if phase == BONUS and state["bq"]:
            head = state["bq"][0]
            bonus = {"seat": head["seat"], "card": head["card"], "name": CARDS[head["card"]].name,
                     "effect": CARDS[head["card"]].effect[head["step"]].do, "left": head["left"]}
        return {
            "variant": state["v"],
            "seat": seat,
            "phase": phase,
            "turn": state["turn"],
            "first_caster": state["first"],
            "to_act": sorted(self.to_act(state)),
            "players": players,
            "pool": views.stones(tuple(state["pool"])),
            "vault": views.stones(tuple(victory.vault_of(state, 0))) if rules.shared_vault else [],
            "face_down_cards": len(state.get("deck", ())),
            "turrets": views.turrets(tuple(gems)),
            "victory": victory_view,
            "bonus": bonus,
            "knocked": state["knocked"],
            "last_turn": None if last is None else views.last_turn(last, _last_turn_view),
            "winner": state["winner"],
            "end": state["end"] or "none",
            "options": dict(state["opt"]),
        }

    def determinise(self, view: dict[str, Any], seat: int, rng: Rng) -> State:
        """A state consistent with ``seat``'s view, hidden parts sampled (see :mod:`.determinise`)."""
        return _determinise(self, view, seat, rng)

    # -- helpers ----------------------------------------------------------------------------

    def _rules(self, state: State) -> VariantRules:
        return VARIANTS[state["v"]]

    @staticmethod
    def _vault(state: State, seat: int) -> list[str]:
        """The Vault ``seat`` uses: the shared one, or their own when each player has one."""
        return victory.vault_of(state, seat)

    def _quota_text(self, state: State) -> str:
        quota = self._rules(state).hand_quota
        return ", ".join(f"{n} {t}" for t, n in quota.items())


#: What a cast still lying uncast or on a standing Leaner reads as.
_PENDING_READING: tuple[str, None, None] = (PENDING, None, None)


def _undeclared_chasers(hand, faces: str, declared) -> list[str]:
    """The symbol-up Chasers of a cast whose type is not in ``declared`` (:meth:`CastingStones._undeclared`)."""
    return [s for s, f in zip(hand, faces) if f == SYMBOL and STONES[s].type == CHASER and s not in declared]


@lru_cache(maxsize=4096)
def _reading(hand: tuple[str, ...], faces: str, declared: tuple[tuple[str, str], ...] | None,
             counters: tuple[tuple[str, ...], tuple[int | None, ...], int] | None,
             ) -> tuple[str, int | None, str | None]:
    """What a cast reads as: ``(kind, power, counter-spell card or None)``. A pure function of plain values
    (hence remembered): ``declared`` is the items of the caster's Chaser declarations when Chasers are wild
    (Advanced), else None; ``counters`` the caster's face-up Library, the turret owners and the caster's
    seat when Counter Spells count (Advanced), else None.

    In the Advanced Game a symbol-up Chaser not yet declared leaves the cast pending (:meth:`_undeclared`).
    Advanced, CASTING CARDS: "COUNTER SPELLS on Casting Cards play just like SPELLS, even if the Casting
    Stones pictured are different than a normal spell." A cast that is otherwise a Bungle and shows the
    combination of a face-up Counter Spell card of its caster (conditions held) reads as a Spell; its power
    is the sum of the numbers showing, as for any Spell. "Once the Casting Card with the Counter Spell is
    out of play, the Counter Spell combination is no longer a valid spell": only Library cards count.
    """
    hand_list = list(hand)
    wild = declared is not None
    chosen = dict(declared) if wild else None
    if wild and _undeclared_chasers(hand, faces, chosen):
        return _PENDING_READING
    kind, power = read_cast(hand_list, faces, wild, chosen)
    if kind == BUNGLE and counters is not None:
        library_cards, gems, seat = counters
        for card_id in library_cards:
            card = CARDS[card_id]
            if (card.counter_spell and shows_stones(card, hand_list, faces)
                    and conditions_hold(card, gems, seat)):
                return SPELL, sum(STONES[s].number for s, f in zip(hand, faces) if f == NUMBER), card_id
    return kind, power, None


def _last_turn_view(last: dict[str, Any]) -> dict[str, Any]:
    """The view of the last compared turn (``state["last"]``); :func:`.views.last_turn` remembers it."""
    winner = last["winner"]
    return {
        "turn": last["turn"],
        "winner": winner,
        "casts": [{"kind": k, "power": p} for k, p in zip(last["kinds"], last["powers"])],
        "counter_spells": list(last.get("counter", _NONE_PAIR)),
        "effect": "none" if winner is None else EFFECT[last["kinds"][winner]],
        "void": last["void"],
        "action": _action_view(last["action"]),
        "replacement": last["replacement"],
        "cards": [{"seat": s, "card": c, "name": CARDS[c].name} for s, c in last.get("cards", ())],
        "bonus_actions": [_action_view(a) for a in last.get("bonus", ())],
        "summary": _summary(last),
    }


def _action_view(action: dict[str, Any] | None) -> dict[str, Any] | None:
    """A victory or bonus action as sent, every field present (``card`` only for card actions)."""
    if action is None:
        return None
    shown = {"type": action["type"], "turret": action.get("turret"), "target": action.get("target"),
             "stone": action.get("stone"), "take": action.get("take")}
    if "card" in action:
        shown["card"] = action["card"]
    return shown


def _cast_text(kind: str, power: int | None) -> str:
    return kind.capitalize() + (f" ({power})" if power is not None else "")


def _action_text(action: dict[str, Any]) -> str:
    kind = action["type"]
    if kind == "place":
        return f"placed a Turret Gem on the {TURRET_NAMES[action['turret']]} turret"
    if kind == "swap_gems":
        return (f"swapped gems between the {TURRET_NAMES[action['turret']]} and "
                f"{TURRET_NAMES[action['target']]} turrets")
    if kind == "swap_stone":
        return f"swapped {STONES[action['stone']].name} for {STONES[action['take']].name} from the Vault"
    if kind == "swap_card":
        return f"swapped the {CARDS[action['card']].name} card for {CARDS[action['take']].name} from the Vault"
    if kind == "knock_gem":
        return f"knocked the gem on the {TURRET_NAMES[action['turret']]} turret back to its line"
    if kind == "knock_card":
        return f"knocked the {CARDS[action['card']].name} card into the Vault"
    if kind == "replace":
        return f"{STONES[action['stone']].name} was taken from the Vault in its place"
    if kind == "pass":   # a bonus given up in a match stored while bonuses could be declined
        return "passed"
    return f"knocked {STONES[action['stone']].name} into the Vault"


def _summary(last: dict[str, Any]) -> str:
    """One sentence telling what happened in a compared turn, for logs and front ends."""
    kinds, powers, winner = last["kinds"], last["powers"], last["winner"]
    casts = f"seat 0 cast {_cast_text(kinds[0], powers[0])}, seat 1 cast {_cast_text(kinds[1], powers[1])}"
    if winner is None:
        text = f"Turn {last['turn']}: {casts}; nobody won the turn"
    else:
        text = f"Turn {last['turn']}: {casts}; seat {winner} won"
        action = last["action"]
        if last["void"]:
            text += " but had no victory action open"
        elif action is not None:
            text += " and " + _action_text(action)
            if last["replacement"] is not None:
                text += f"; seat {1 - winner} took {STONES[last['replacement']].name}"
    for seat, card in last.get("cards", ()):
        text += f"; seat {seat} used the {CARDS[card].name} card"
    if last.get("bonus"):
        text += " (bonus: " + ", ".join(_action_text(a) for a in last["bonus"]) + ")"
    return text + "."
