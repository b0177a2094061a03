"""Spells and Potions: the trick-taking game for 2, 3 and 4 wizards.

Read beside the rule book, /work/shared/seeds/004_3d98a563beabace2.txt, and
docs/rules/spells-and-potions.md (every house rule, with its source).

Shape of a match
----------------
* Practice variants (``practice-1``, ``practice-2``, ``practice-3``): one duel.
  The cards are dealt at set-up and a wizard drawn by lot leads ("One wizard
  leads with the Element Card of his/her choice.").
* ``practice-rounds``: the practice game three times, partners rotating as in
  the Ritual, for the three-wizard advice "It might be good to play three
  rounds, with each player partnering Companion once". No Arrangement; the lot
  picks each duel's leader; individual totals decide.
* ``ritual``: the Ritual tournament of three duels. Set-up runs the
  Arrangement draw ("Each wizard picks an Element Card. The wizard with the
  highest ranking card is the Arranger."); the Arranger then assigns posts
  (3-4 wizards, action ``arrange``) or decides who leads (2 wizards, action
  ``choose_leader``).
* A duel: deal 10 Element and 3 Spells and Potions Cards to each hand, play
  every card out in tricks of four (13 tricks; 10 in practice rounds 1 and 2),
  score each partnership.

Seats and hands
---------------
Engine seats are the wizards. The four hands sit at the posts North, East,
South and West (see :mod:`.table`); a Companion's hand is played by its
controller, who is the seat in ``to_act`` when that hand must play, and whose
``play`` actions name the hand in ``"for"``.

State (compact, JSON)
---------------------
``variant``, ``seats``, ``opts`` (the rule options, :data:`.tricks.RULE_OPTIONS`), ``rng`` (the RNG
state), ``phase`` (arrange | choose_leader | play | choose_trump | name_leader
| over), ``duel`` (0-based), ``posts`` (seat per post, None = Companion),
``arranger``, ``draws`` (Arrangement rounds of ``[seat, card]``), ``chooser``
(the seat owing a choice), ``last_chooser``, ``hands`` (four sorted lists),
``trump``, ``lead`` (post leading the current trick), ``trick`` (cards laid
so far, in order; :func:`.table.play_order` says from which posts), ``tricks``
(this duel's finished tricks: lead, cards, winner, points), ``last`` (the
last finished trick of the match, kept across a new deal: duel, lead, cards,
winner, points, potion points, ranking; None before the first), ``pending``
(choices still owed after the last trick), ``points`` and ``won`` (per team,
this duel), ``scores`` (per seat, finished duels) and ``history`` (one summary
per finished duel).
"""

from __future__ import annotations

from typing import Any

from service.engine import Action, Catalogue, Event, Game, Rng, State, Variant, load_data

from . import deck
from .determinise import determinise as _determinise
from .table import _play_order  # noqa: F401 (the remembered play order)
from .table import (
    POST_INDEX, POSTS, WEST, arrangement_choices, controller, is_companion, play_order, practice_seating, rotate,
    seating_from_arrangement, team_of, two_wizard_seating,
)
from .tricks import blast_bonus, led_element, playable_cards, ranking_spell, resolve, rule_options

_VARIANTS = load_data(__package__, "variants.json")
_RULES = {v["id"]: v for v in _VARIANTS}
_SCHEMA = load_data(__package__, "schema.json")


class SpellsAndPotions(Game):
    id = "spells-and-potions"
    title = "Spells and Potions"
    rules_version = load_data(__package__, "rules_version.json")["version"]
    min_seats = 2
    max_seats = 4
    variants = tuple(Variant(v["id"], v["title"], v["description"]) for v in _VARIANTS)
    summary = (
        "A trick-taking game for 2 to 4 wizards in partnerships: follow the lead element, Fire is trump, and "
        "twelve Spells and Potions Cards bend the rules of a trick. Three wizards play with a face-up Wizard's "
        "Companion, two with one Companion each. Practice rounds, or the three-duel Ritual tournament."
    )
    schema = _SCHEMA
    catalogues = (Catalogue("cards", _SCHEMA["card"], ("id", "kind"), deck.catalogue),)

    # -- set-up ----------------------------------------------------------------

    def setup(self, options: dict[str, Any], seats: int, seed: int) -> State:
        rules = _RULES[options["variant"]]
        rng = Rng.from_seed(seed)
        state: State = {
            "variant": rules["id"],
            "seats": seats,
            # blast_stacks is accepted and ignored (it could never change a trick): not kept.
            "opts": rule_options(options),
            "rng": rng.state,
            "phase": "play",
            "duel": 0,
            "posts": [None, None, None, None],
            "arranger": None,
            "draws": [],
            "chooser": None,
            "last_chooser": None,
            "hands": [[], [], [], []],
            "trump": None,
            "lead": None,
            "trick": [],
            "tricks": [],
            "last": None,
            "pending": [],
            "points": [0, 0],
            "won": [0, 0],
            "scores": [0] * seats,
            "history": [],
        }
        if rules["ritual"]:
            self._arrangement(state, rng)
            state["chooser"] = state["arranger"]
            if seats == 2:
                # "The Arranger decides which wizard will lead the first trick of the first duel."
                state["posts"] = two_wizard_seating()
                state["phase"] = "choose_leader"
            else:
                state["phase"] = "arrange"
            state["rng"] = rng.state
        else:
            state["posts"] = practice_seating(seats)
            self._start_duel(state, rng, self._lot_leader(state, rng), events=None)
        return state

    @staticmethod
    def _lot_leader(state: State, rng: Rng) -> int:
        """"One wizard leads": the rule book does not say which; the lot decides,
        among the wizards (never a Companion)."""
        return rng.choice([p for p in range(4) if not is_companion(state["posts"], p)])

    def _arrangement(self, state: State, rng: Rng) -> None:
        """Ritual Phase 1: "Each wizard picks an Element Card. The wizard with the
        highest ranking card is the Arranger. If there is a tie for the highest
        ranking card, the wizards who tied repeat this step until an Arranger is
        selected." Ranks alone count (elements do not break ties); each round is
        drawn from the full, freshly shuffled Element deck."""
        drawing = list(range(state["seats"]))
        while True:
            cards = list(deck.ELEMENT_CARDS)
            rng.shuffle(cards)
            draw = [[seat, cards[i]] for i, seat in enumerate(drawing)]
            state["draws"].append(draw)
            best = max(deck.rank_of(card) for _seat, card in draw)
            drawing = [seat for seat, card in draw if deck.rank_of(card) == best]
            if len(drawing) == 1:
                state["arranger"] = drawing[0]
                return

    def _start_duel(self, state: State, rng: Rng, leader: int, events: list[Event] | None) -> None:
        """Ritual Phase 3: "The Wizard of the North shuffles the 12 Spells and
        Potions Cards and deals 3 to each wizard. The Wizard of the South
        shuffles the Element Cards and deals 10 face-down to each wizard." The
        two packs are shuffled separately; who shuffles makes no difference here.
        The trump is Fire again at the start of every duel (Larfor's Trump Choice
        lasts "for the remainder of the game", the duel it was won in)."""
        rules = _RULES[state["variant"]]
        elements = list(deck.ELEMENT_CARDS)
        rng.shuffle(elements)
        spells = list(deck.SPELL_CARDS) if rules["spells"] else []
        rng.shuffle(spells)
        n_el, n_sp = deck.HAND_ELEMENTS, (deck.HAND_SPELLS if rules["spells"] else 0)
        state["hands"] = [
            deck.sort_cards(elements[p * n_el:(p + 1) * n_el] + spells[p * n_sp:(p + 1) * n_sp]) for p in range(4)
        ]
        state["rng"] = rng.state
        state["trump"] = deck.DEFAULT_TRUMP if rules["trumps"] else None
        state.update(phase="play", chooser=None, lead=leader, trick=[], tricks=[], pending=[],
                     points=[0, 0], won=[0, 0])
        if events is not None:
            events.append({"type": "duel_started", "duel": state["duel"] + 1, "posts": list(state["posts"]),
                           "leader": POSTS[leader], "trump": state["trump"]})
            events.extend(self._deal_events(state))

    def _deal_events(self, state: State) -> list[Event]:
        """A wizard's hand goes to that wizard alone; a Companion's hand is face up
        for everyone ("Companion's hands must be placed face-up so that all
        wizards can see it"); everyone learns how many cards each hand holds."""
        events: list[Event] = [{"type": "dealt", "duel": state["duel"] + 1,
                                "hand_sizes": [len(h) for h in state["hands"]]}]
        for post, hand in enumerate(state["hands"]):
            event = {"type": "hand", "post": POSTS[post], "cards": list(hand)}
            if not is_companion(state["posts"], post):
                event["audience"] = [state["posts"][post]]
            events.append(event)
        return events

    # -- whose turn ------------------------------------------------------------

    def _to_play(self, state: State) -> int:
        """The post that lays the next card of the current trick."""
        return _play_order(tuple(state["posts"]), state["lead"])[len(state["trick"])]

    @staticmethod
    def _laid(posts: list[int | None], lead: int, cards: list[str]) -> list[list]:
        """A trick's cards as ``[post, card]`` pairs, in the order laid."""
        return [[post, card] for post, card in zip(_play_order(tuple(posts), lead), cards)]

    def to_act(self, state: State) -> set[int]:
        phase = state["phase"]
        if phase == "over":
            return set()
        if phase == "play":
            return {controller(state["posts"], self._to_play(state))}
        return {state["chooser"]}

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        if seat not in self.to_act(state):
            return []
        phase = state["phase"]
        if phase == "play":
            post = self._to_play(state)
            cards = playable_cards(state["hands"][post], state["trick"])
            return [{"type": "play", "card": card, "for": POSTS[post]} for card in cards]
        if phase == "arrange":
            return [{"type": "arrange", "posts": list(choice)} for choice in arrangement_choices(state["seats"])]
        if phase == "choose_leader":
            return [{"type": "choose_leader", "seat": s} for s in range(state["seats"])]
        if phase == "choose_trump":
            return [{"type": "choose_trump", "element": e} for e in deck.ELEMENTS]
        if phase == "name_leader":
            return [{"type": "name_leader", "post": p} for p in POSTS]
        return []

    def explain_illegal(self, state: State, seat: int, action: Action) -> str:
        """Why an action is refused, naming only what ``seat`` may know."""
        phase = state["phase"]
        wanted = {
            "play": "a card to be played", "arrange": "the Arranger to assign posts",
            "choose_leader": "a choice of who leads the next duel", "choose_trump": "the trick winner to pick trump",
            "name_leader": "the trick winner to name who leads next",
        }[phase]
        if action["type"] != phase:
            return f"The game is waiting for {wanted}, not a {action['type']!r} action."
        if phase == "play":
            post = self._to_play(state)
            if action["for"] != POSTS[post]:
                return f"It is the {POSTS[post]} hand's turn to play, not {action['for']}."
            hand = state["hands"][post]
            if action["card"] not in hand:
                return f"That card is not in the {POSTS[post]} hand."
            led = led_element(state["trick"])
            return (f"You must follow the lead element, {led}, while that hand holds it; "
                    "a Spells and Potions Card may be played instead.")
        if phase == "choose_leader":
            return f"Choose seat 0 to {state['seats'] - 1}."
        if phase == "arrange":
            return "Give each wizard a different post, in seat order." + (
                "" if state["seats"] == 4 else " North is the Wizard's Companion's.")
        return "That choice is not allowed now; ask for the legal actions to see what is."

    # -- playing -----------------------------------------------------------------

    #: The state's lists that :meth:`play` only appends to, never changing an entry once there.
    _LOGS = ("draws", "tricks", "history")
    #: Its lists (and, for ``hands``, lists of lists) that :meth:`play` changes in place.
    _LISTS = ("posts", "trick", "pending", "points", "won", "scores")

    def copy_for_play(self, state: State, seat: int, action: Action) -> State:
        """Copy-on-write (see :meth:`Game.copy_for_play`): the lists :meth:`play` changes are copied, the
        logs it only appends to are copied shallowly (their entries, never changed, are shared with
        ``state``), the rest (numbers, strings, the options and the last trick, which it replaces whole)
        is shared."""
        new = dict(state)
        new["hands"] = [list(hand) for hand in state["hands"]]
        for key in self._LISTS + self._LOGS:
            value = state.get(key)
            if value is not None:
                new[key] = list(value)
        return new

    def play(self, state: State, seat: int, action: Action) -> list[Event]:
        events: list[Event] = []
        kind = action["type"]
        if kind == "arrange":
            # "The Arranger assigns each wizard a post"; "The Wizard of the West leads."
            state["posts"] = seating_from_arrangement(action["posts"])
            events.append({"type": "arranged", "by": seat, "posts": list(state["posts"])})
            self._start_duel(state, Rng(state["rng"]), WEST, events)
        elif kind == "choose_leader":
            state["last_chooser"] = seat
            leader = state["posts"].index(action["seat"])
            events.append({"type": "leader_chosen", "by": seat, "seat": action["seat"]})
            self._start_duel(state, Rng(state["rng"]), leader, events)
        elif kind == "play":
            self._lay(state, seat, action, events)
        elif kind == "choose_trump":
            # Larfor's Trump Choice: "The winner of the trick chooses the trump
            # element for the remainder of the game."
            state["trump"] = action["element"]
            events.append({"type": "trump_chosen", "by": seat, "element": action["element"]})
            self._next_choice_or_trick(state)
        elif kind == "name_leader":
            # Merlin's New Apprentice: "The winner of the trick chooses who
            # should lead the next trick." Any hand, Companions included.
            state["lead"] = POST_INDEX[action["post"]]
            events.append({"type": "leader_named", "by": seat, "post": action["post"]})
            self._next_choice_or_trick(state)
        return events

    def _lay(self, state: State, seat: int, action: Action, events: list[Event]) -> None:
        post = POST_INDEX[action["for"]]
        state["hands"][post].remove(action["card"])
        state["trick"].append(action["card"])
        events.append({"type": "played", "by": seat, "post": action["for"], "card": action["card"]})
        if len(state["trick"]) == 4:
            self._finish_trick(state, events)

    def _finish_trick(self, state: State, events: list[Event]) -> None:
        """Rule #5 and the spells decide the trick; "After each trick, place the
        cards from the trick face-down in a pile in front of the winning wizard.
        The winning wizard leads the next trick." """
        outcome = resolve(self._laid(state["posts"], state["lead"], state["trick"]), state["trump"],
                          **rule_options(state["opts"]))
        team = team_of(outcome.winner)
        state["points"][team] += outcome.points
        state["won"][team] += 1
        state["tricks"].append({"lead": state["lead"], "cards": state["trick"], "winner": outcome.winner,
                                "points": outcome.points})
        # Kept past the pile and past a new deal, so a view can still show how the last trick went.
        state["last"] = {"duel": state["duel"], "number": len(state["tricks"]), "lead": state["lead"],
                         "posts": list(state["posts"]), "cards": list(state["trick"]), "winner": outcome.winner,
                         "points": outcome.points, "potion_points": outcome.potion_points, "rule": outcome.rule}
        events.append({"type": "trick_won", "number": len(state["tricks"]), "post": POSTS[outcome.winner],
                       "points": outcome.points, "potion_points": outcome.potion_points, "rule": outcome.rule})
        state["trick"] = []
        state["lead"] = outcome.winner
        if not any(state["hands"]):
            # "Repeat until all the cards are played." After the last trick there
            # is no next leader to name and no remainder to pick a trump for.
            self._finish_duel(state, events)
            return
        state["pending"] = [phase for phase, owed in (("choose_trump", outcome.choose_trump),
                                                      ("name_leader", outcome.name_leader)) if owed]
        state["chooser"] = controller(state["posts"], outcome.winner)
        self._next_choice_or_trick(state)

    def _next_choice_or_trick(self, state: State) -> None:
        if state["pending"]:
            state["phase"] = state["pending"].pop(0)
        else:
            state["phase"], state["chooser"] = "play", None

    def _finish_duel(self, state: State, events: list[Event]) -> None:
        """"Tally each partnership's score plus or minus any Potion Points. Each
        wizard in the partnership receives the same score for that duel."
        Companions score nothing ("Scores are not kept for the Companion")."""
        posts = state["posts"]
        for post, seat in enumerate(posts):
            if seat is not None:
                state["scores"][seat] += state["points"][team_of(post)]
        state["history"].append({"posts": list(posts), "points": list(state["points"]), "won": list(state["won"])})
        events.append({"type": "duel_over", "duel": state["duel"] + 1, "team_points": list(state["points"]),
                       "scores": list(state["scores"])})
        state["tricks"], state["pending"], state["lead"] = [], [], None
        if state["duel"] + 1 >= _RULES[state["variant"]]["duels"]:
            state["phase"], state["chooser"] = "over", None
            outcome = self.result(state)
            events.append({"type": "match_over", "winners": outcome["winners"], "scores": outcome["scores"]})
            return
        state["duel"] += 1
        ritual = _RULES[state["variant"]]["ritual"]
        if ritual and state["seats"] == 2:
            # "The wizard who loses a duel chooses which wizard leads the next."
            state["phase"], state["chooser"] = "choose_leader", self._duel_loser(state)
            return
        if state["seats"] > 2:
            # "Switch partners: Wizards of the West, East, and South rotate seats
            # clockwise." Practice rounds rotate the same way, so with three
            # wizards "each player partner[s] Companion once". Two wizards never
            # move: each partners their own Companion.
            state["posts"] = rotate(posts)
        rng = Rng(state["rng"])
        # The Ritual: "The Wizard of the West leads the first trick"; practice: "One wizard leads".
        self._start_duel(state, rng, WEST if ritual else self._lot_leader(state, rng), events)

    def _duel_loser(self, state: State) -> int:
        """The two-wizard duel's loser; after a tied duel the choice passes to the
        wizard who did not make the previous one (house rule, docs/rules)."""
        ns, ew = state["history"][-1]["points"]
        posts = state["posts"]
        if ns == ew:
            return 1 - state["last_chooser"]
        losing_team = 0 if ns < ew else 1
        return next(seat for post, seat in enumerate(posts) if seat is not None and team_of(post) == losing_team)

    # -- the end -------------------------------------------------------------

    def result(self, state: State) -> dict[str, Any] | None:
        """"The wizard with the highest individual score wins the tournament ...
        In the case of a tie, the winners share in the glory." A practice duel is
        won by "The team with the most points"; a tied one is shared too. Three
        practice rounds are decided like the tournament, by individual totals.

        ``cause``: ``all_tricks_played`` ends a one-duel match ("Repeat until all
        the cards are played"), ``all_duels_played`` a three-duel one ("Repeat
        these steps until 3 duels have been played")."""
        if state["phase"] != "over":
            return None
        rules = _RULES[state["variant"]]
        scores = list(state["scores"])
        best = max(scores)
        winners = [seat for seat, score in enumerate(scores) if score == best]
        match = "Ritual tournament" if rules["ritual"] else "practice rounds"
        if rules["duels"] == 1:
            ns, ew = state["history"][-1]["points"]
            if ns == ew:
                reason = f"The duel is tied, {ns} points each."
            else:
                reason = f"{'North/South' if ns > ew else 'East/West'} win the duel, {max(ns, ew)} to {min(ns, ew)}."
        elif len(winners) == 1:
            reason = f"Seat {winners[0]} wins the {match} with {best} points."
        else:
            reason = f"Seats {', '.join(map(str, winners))} share the {match} with {best} points."
        cause = "all_tricks_played" if rules["duels"] == 1 else "all_duels_played"
        return {"winners": winners, "scores": scores, "reason": reason, "cause": cause}

    # -- what a seat sees ----------------------------------------------------------

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        """Everything public, plus ``seat``'s own hand. Companion hands are face
        up for all; another wizard's hand shows only its size. The RNG state and
        the Arrangement deck never leave the state."""
        posts = state["posts"]
        playing = state["phase"] == "play"
        # Before the Arranger assigns posts (3-4 wizard Ritual) no post is held yet.
        arranged = any(p is not None for p in posts)
        table = []
        won = [0, 0, 0, 0]
        for t in state["tricks"]:
            won[t["winner"]] += 1
        for post in range(4):
            hand = state["hands"][post]
            companion = arranged and is_companion(posts, post)
            visible = companion or (seat is not None and posts[post] == seat)
            table.append({
                "post": POSTS[post],
                "wizard": posts[post],
                "companion": companion,
                "controller": controller(posts, post) if arranged else None,
                "team": team_of(post),
                "hand": list(hand) if visible else [],
                "hand_visible": visible,
                "hand_size": len(hand),
                "tricks_won": won[post],
            })
        trick = self._laid(posts, state["lead"], state["trick"]) if playing else []
        result = self.result(state)
        order, posts_key = _play_order, tuple(posts)
        return {
            "variant": state["variant"],
            "seat": seat,
            "phase": state["phase"],
            "duel": state["duel"] + 1,
            "duels": _RULES[state["variant"]]["duels"],
            "to_act": sorted(self.to_act(state)),
            "arrangement": {
                "arranger": state["arranger"],
                "draws": [{"round": r + 1, "seat": s, "element": deck.element_of(c), "rank": deck.rank_of(c)}
                          for r, draw in enumerate(state["draws"]) for s, c in draw],
            },
            "table": table,
            "trump": state["trump"],
            "leader": POSTS[state["lead"]] if state["lead"] is not None else None,
            "to_play": POSTS[self._to_play(state)] if playing else None,
            "led_element": led_element(state["trick"]),
            "trick": [{"post": POSTS[p], "card": c} for p, c in trick],
            "in_force": {
                "ranking": {"reverse": "lowest", "shield": "shield"}.get(ranking_spell(state["trick"]), "highest"),
                "blast": blast_bonus(trick),
                "potion_points": sum(deck.spell_of(c).potion_points for c in state["trick"] if deck.is_spell(c)),
            },
            "tricks": [{"number": i + 1, "leader": POSTS[t["lead"]], "winner": POSTS[t["winner"]],
                        "points": t["points"],
                        "cards": [{"post": POSTS[p], "card": c} for p, c in zip(order(posts_key, t["lead"]), t["cards"])]}
                       for i, t in enumerate(state["tricks"])],
            "team_points": list(state["points"]),
            "team_tricks": list(state["won"]),
            "scores": list(state["scores"]),
            "duel_results": [{"duel": i + 1, "posts": list(h["posts"]), "team_points": list(h["points"]),
                              "team_tricks": list(h["won"])} for i, h in enumerate(state["history"])],
            "last_trick": self._last_trick_view(state.get("last")),
            "choices_owed": self._choices_owed(state),
            "winners": result["winners"] if result else [],
            "options": rule_options(state["opts"]),
        }

    def _last_trick_view(self, last: dict | None) -> dict[str, Any] | None:
        """The last finished trick as laid face up on the table, with the seating
        of its own duel: the wizards may have moved since."""
        if last is None:
            return None
        laid = self._laid(last["posts"], last["lead"], last["cards"])
        return {"duel": last["duel"] + 1, "number": last["number"], "posts": list(last["posts"]),
                "leader": POSTS[last["lead"]], "winner": POSTS[last["winner"]], "points": last["points"],
                "potion_points": last["potion_points"], "ranking": last["rule"],
                "cards": [{"post": POSTS[p], "card": c} for p, c in laid]}

    @staticmethod
    def _choices_owed(state: State) -> list[dict[str, Any]]:
        """The choices the trick's winner still owes, in the order they will be
        asked: Larfor's Trump Choice, then Merlin's New Apprentice."""
        if state["phase"] not in ("choose_trump", "name_leader"):
            return []
        winner = POSTS[state["tricks"][-1]["winner"]]
        return [{"choice": choice, "seat": state["chooser"], "post": winner}
                for choice in [state["phase"], *state["pending"]]]

    def determinise(self, view: dict[str, Any], seat: int, rng: Rng) -> State:
        """A state consistent with ``seat``'s view, hidden hands sampled (see :mod:`.determinise`)."""
        return _determinise(self, view, seat, rng)


GAME = SpellsAndPotions()
