"""The ``greedy`` level: a one-ply heuristic per game.

Every legal action gets a score computed from the seat's view and the action
itself -- never by applying it to the real state -- and the best one is played
(ties broken at random). The helpers imported from the games are pure functions
over public data (card ranks, how a trick or a cast is read); none of them sees
a state. A game without a heuristic here is played uniformly at random.

* Spells and Potions: win the trick as cheaply as possible, else throw the
  cheapest card; name the trump the bot's hands are strongest in.
* Quidditch: lay the card that fits the ball (Chaser or Keeper on a Quaffle,
  Beater on a Bludger, Seeker on the Snitch), the higher the better, never a
  special card face down; on a Quaffle, where the higher card wins whatever
  its kind, a Beater only when no Chaser or Keeper is left, and a Seeker last
  of all (it is kept for the Snitch); play a special card only against an
  occupied ball.
* The Sorcerer's Stone, per board: move as far as the card goes (Hagrid);
  close rings round other players' areas, not one's own (Sprout); stop on
  face-down keys (Flitwick); leave by the far edge, else take the most
  valuable piece, else bring one's Harry forward (McGonagall); keep low
  potions and claim when no lower one can still be hiding (Snape).
* Casting Stones: tip Leaners and choose what to re-cast by the probability of
  a winning cast against the opponent's showing cast (enumerating the faces);
  place, swap and knock gems to lengthen its own run of turrets and break the
  opponent's; draft and swap for higher-numbered stones.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable

from service.games.casting_stones.casts import BUNGLE, GOOD_CASTS, PENDING, read_cast, winner_of
from service.games.spells_and_potions.deck import element_of, is_spell, rank_of, spell_of
from service.games.spells_and_potions.table import POST_INDEX, team_of
from service.games.spells_and_potions.tricks import resolve, rule_options

Action = dict[str, Any]
View = dict[str, Any]


def choose(bot_input, rng) -> Action:
    scorer = SCORERS.get(bot_input.game)
    if scorer is None:
        return rng.choice(bot_input.legal_actions)
    scored = [(scorer(bot_input.view, bot_input.seat, action), i) for i, action in enumerate(bot_input.legal_actions)]
    best = max(score for score, _ in scored)
    return bot_input.legal_actions[rng.choice([i for score, i in scored if score >= best - 1e-9])]


# -- Spells and Potions --------------------------------------------------------


def _card_cost(card: str, trump: str | None) -> float:
    """What laying a card gives up: its rank, more for a trump; a spell is worth keeping."""
    if is_spell(card):
        return 6.0 - spell_of(card).potion_points / 5
    return rank_of(card) + (10 if trump is not None and element_of(card) == trump else 0)


def _my_hands(view: View, seat: int) -> list[str]:
    return [card for place in view["table"] if place["controller"] == seat for card in place["hand"]]


def spells_and_potions(view: View, seat: int, action: Action) -> float:
    kind = action["type"]
    if kind == "play":
        post = POST_INDEX[action["for"]]
        trick = [[POST_INDEX[laid["post"]], laid["card"]] for laid in view["trick"]] + [[post, action["card"]]]
        outcome = resolve(trick, view["trump"], **rule_options(view.get("options") or {}))
        cost = _card_cost(action["card"], view["trump"])
        if team_of(outcome.winner) == team_of(post):
            return 100 + outcome.points * (2 if len(trick) == 4 else 1) - cost
        return -cost
    if kind == "choose_trump":
        mine = _my_hands(view, seat)
        return sum(rank_of(c) for c in mine if element_of(c) == action["element"])
    if kind == "name_leader":
        place = next(p for p in view["table"] if p["post"] == action["post"])
        strength = sum(rank_of(c) for c in place["hand"] if not is_spell(c))
        return (100 if place["controller"] == seat else 0) + strength
    if kind == "choose_leader":
        return 1.0 if action["seat"] == seat else 0.0
    return 0.0


# -- Quidditch -----------------------------------------------------------------

#: How well each player card plays for each ball (docs/rules/quidditch.md, "Resolving a ball"). On a Quaffle
#: the higher card wins whatever its kind: Chasers are the cards for it, a Keeper mostly blocks, a Beater
#: (1 to 3) out-values little. A Seeker would win most Quaffles but has no fit there: it is one of the two
#: cards a deck has that can catch the Snitch (150 points and the match), so it is laid there last.
_FIT = {"quaffle": {"chaser": 1.0, "keeper": 0.8, "beater": 0.3}, "bludger": {"beater": 1.0},
        "snitch": {"seeker": 1.0}}
_BALL_WORTH = {"quaffle": 10, "bludger": 5, "snitch": 150}


def quidditch(view: View, seat: int, action: Action) -> float:
    kind = action["type"]
    hand = {card["id"]: card for card in view["hand"] or []}
    balls = {ball["id"]: ball for ball in view["balls"]}
    if kind == "play_card":
        card, ball = hand.get(action["card"]), balls.get(action["ball"])
        if card is None or ball is None:
            return 0.0
        if card["family"] != "player":
            return -5.0  # a special card laid face down is a sacrifice
        fit = _FIT.get(ball["kind"], {}).get(card["kind"], 0.0)
        value = card["value"] or 0
        if fit == 0:
            return -0.1 * value  # a forced play: give up the weakest card
        return _BALL_WORTH.get(ball["kind"], 0) * fit + value * 0.5
    if kind == "play_special":
        ball = balls.get(action.get("ball"))
        if ball is None:
            return -1.0
        opponent_there = any(side["occupied"] for side in ball["sides"] if side["seat"] != seat)
        return 0.2 * _BALL_WORTH.get(ball["kind"], 0) if opponent_there else -1.0
    if kind == "pitch":
        return 1.0
    return 0.0  # pass, done, reveal


# -- Casting Stones ------------------------------------------------------------

_FACE = {"symbol": "s", "number": "n", "leaner": "l", "uncast": "-"}


def _player(view: View, seat: int) -> dict:
    return next(p for p in view["players"] if p["seat"] == seat)


def _cast(player: dict) -> tuple[list[str], str]:
    return [stone["id"] for stone in player["hand"]], "".join(_FACE.get(s["face"], "-") for s in player["hand"])


def _cast_value(hand: list[str], faces: str, opponent: tuple[str, int | None]) -> float:
    """How good a fully read cast is: 1 for a win, 0.4 for a tie, else 0 (a good cast 0.6 if
    the opponent's cast is not readable yet)."""
    kind, power = read_cast(hand, faces)
    if kind == PENDING:
        return 0.0
    if opponent[0] in (PENDING,):
        return (0.6 + (power or 0) / 200) if kind in GOOD_CASTS else 0.0
    win = winner_of([kind, opponent[0]], [power, opponent[1]])
    return 1.0 if win == 0 else 0.0 if win == 1 else (0.4 if kind != BUNGLE else 0.0)


def _expected(hand: list[str], faces: str, unknown: list[int], opponent) -> float:
    """The mean cast value over every way the ``unknown`` positions may land (symbol or number)."""
    if not unknown:
        return _cast_value(hand, faces, opponent)
    total = 0.0
    for landing in itertools.product("sn", repeat=len(unknown)):
        chars = list(faces)
        for position, face in zip(unknown, landing):
            chars[position] = face
        total += _cast_value(hand, "".join(chars), opponent)
    return total / 2 ** len(unknown)


def _run(owners: list[int | None], seat: int) -> int:
    """The longest run of adjacent turrets ``seat`` holds round the ring."""
    if all(o == seat for o in owners):
        return len(owners)
    best = run = 0
    for owner in owners + owners:
        run = run + 1 if owner == seat else 0
        best = max(best, run)
    return min(best, len(owners))


def _turret_score(owners: list[int | None], seat: int) -> float:
    opponent = 1 - seat
    mine, theirs = _run(owners, seat), _run(owners, opponent)
    return 100.0 if mine >= 4 else 10 * mine - 8 * theirs + sum(o == seat for o in owners)


def stone(view: View, stone_id: str) -> dict | None:
    """A stone in sight (in a hand, the pool, the Vault or, in the Advanced Game, a player's own Vault), by id."""
    in_players = [s for p in view["players"] for s in p["hand"] + (p.get("vault") or [])]
    for candidate in view.get("vault", []) + view.get("pool", []) + in_players:
        if candidate["id"] == stone_id:
            return candidate
    return None


def _stone_number(view: View, stone_id: str) -> int:
    found = stone(view, stone_id)
    return (found["number"] or 0) if found is not None else 0


def casting_stones(view: View, seat: int, action: Action) -> float:
    kind = action["type"]
    me, other = _player(view, seat), _player(view, 1 - seat)
    hand, faces = _cast(me)
    opponent = read_cast(*_cast(other)) if all(s["face"] != "uncast" for s in other["hand"]) else (PENDING, None)
    if kind in ("tip", "keep", "recast"):
        chars = list(faces)
        if kind == "tip":
            chars[hand.index(action["stone"])] = _FACE[action["face"]]
        recast = set(action.get("stones", []))
        unknown = [i for i, (stone, face) in enumerate(zip(hand, chars)) if face == "l" or stone in recast]
        return _expected(hand, "".join(chars), unknown, opponent)
    owners = [t["seat"] for t in sorted(view["turrets"], key=lambda t: t["index"])]
    before = _turret_score(owners, seat)
    if kind == "place":
        owners[action["turret"]] = seat
    elif kind == "knock_gem":
        owners[action["turret"]] = None
    elif kind == "swap_gems":
        a, b = action["turret"], action["target"]
        owners[a], owners[b] = owners[b], owners[a]
    if kind in ("place", "knock_gem", "swap_gems"):
        return 50 + _turret_score(owners, seat) - before
    if kind == "swap_stone":
        return 40 + _stone_number(view, action["take"]) - _stone_number(view, action["stone"])
    if kind == "knock_stone":
        return 40 + _stone_number(view, action["stone"]) / 2
    if kind in ("pick", "replace"):
        return _stone_number(view, action["stone"])
    if kind in ("swap_card", "knock_card"):
        return 39.0
    return 0.0  # cast, pass, take_card, bring, declare: no preference


#: Chess piece values for the Sorcerer's Stone's McGonagall board (a Harry is a player's way through).
_PIECE_VALUES = {"pawn": 1, "knight": 3, "bishop": 3, "rook": 5, "queen": 9, "king": 20}
_HARRY_VALUE = 12


def _potion(card: str | None) -> tuple[int, str] | None:
    """``("5S") -> (5, "S")``; None for an Incantation or an unknown card."""
    if card and card[-1] in "SR" and card[:-1].isdigit():
        return int(card[:-1]), card[-1]
    return None


def sorcerers_stone(view: View, seat: int, action: Action) -> float:
    """One heuristic per board, by the action's board prefix."""
    kind = action["type"]
    boards = view["boards"]
    if kind == "hagrid_move":  # as far as the card goes; through the trapdoor best of all
        board = boards["hagrid"]
        position = _player(board, seat)["position"]
        return 100.0 if position + action["card"] >= board["trapdoor"] else float(action["card"])
    if kind.startswith("sprout_"):
        return _sprout(boards["sprout"], seat, action)
    if kind == "flitwick_move":  # stop where a key still lies face down: the silver one may be there
        squares = {s["square"]: s for s in boards["flitwick"]["squares"]}
        return 1.0 if squares[action["to"]]["key"] == "face_down" else 0.0
    if kind.startswith("mcgonagall_"):
        return _mcgonagall(boards["mcgonagall"], seat, action)
    if kind.startswith("snape_"):
        return _snape(boards["snape"], seat, action)
    return 0.0  # hagrid_end, quirrell_spin, mirror_flip, flitwick reveals and placements: no preference


def _sprout(board: View, seat: int, action: Action) -> float:
    """Close rings round other players' areas, never round one's own; enter the emptiest area; rob the
    richest player."""
    kind = action["type"]
    areas = {a["area"]: a for a in board["areas"]}
    if kind == "sprout_place":
        area = areas[action["area"]]
        filled = sum(area["filled"])
        if area["player"] == seat:
            return -float(filled)
        return float(filled) if area["player"] is not None else 0.5
    if kind == "sprout_enter":
        return -float(sum(areas[action["area"]]["filled"]))
    if kind == "sprout_steal":
        return float(_player(board, action["victim"])["hand_size"])
    return -1.0  # pass


def _mcgonagall(board: View, seat: int, action: Action) -> float:
    """Leave by the far edge when possible; else take the most valuable piece, else bring one's Harry on."""
    kind = action["type"]
    if kind == "mcgonagall_exit":
        return 1000.0
    if kind != "mcgonagall_move":
        return 0.0
    uci = action["uci"]
    pieces = {p["square"]: p for p in board["pieces"]}
    taken = pieces.get(uci[2:4])
    score = 0.0
    if taken is not None:
        score += _HARRY_VALUE if taken["seat"] is not None else _PIECE_VALUES.get(taken["kind"], 1)
    mover = pieces.get(uci[:2])
    if mover is not None and mover["seat"] == seat:  # my Harry: towards its far rank
        forward = int(uci[3]) - int(uci[1])
        score += 0.5 * (forward if mover["colour"] == "white" else -forward)
    return score


def _snape(board: View, seat: int, action: Action) -> float:
    """Claim when no lower potion can still be hiding; otherwise keep the lowest potions, discard the rest."""
    kind = action["type"]
    me = _player(board, seat)
    if kind == "snape_claim":
        seen = {c for c in me["cards"] if c} | set(board["discard"]) | set(board["out_of_play"])
        seen |= {s["card"] for s in board["spaces"] if s["card"]}
        unseen_lower = 0
        for card in me["cards"]:
            potion = _potion(card)
            if potion is not None:
                number, suit = potion
                unseen_lower += sum(1 for n in range(1, number) if f"{n}{suit}" not in seen)
        # every unseen lower potion might lie face down on the board (where it does not count)
        face_down = sum(1 for s in board["spaces"] if not s["face_up"])
        return 10.0 if unseen_lower == 0 else (2.0 if unseen_lower <= face_down // 3 else -5.0)
    if kind == "snape_discard":
        potion = _potion(action["name"])
        return float(potion[0]) if potion is not None else 6.0
    if kind == "snape_flip":
        return 1.5  # a card turned face up tells which potions do not count
    if kind == "snape_drop_out":
        return -10.0
    return 1.0


SCORERS: dict[str, Callable[[View, int, Action], float]] = {
    "spells-and-potions": spells_and_potions,
    "quidditch": quidditch,
    "casting-stones": casting_stones,
    "sorcerers-stone": sorcerers_stone,
}
