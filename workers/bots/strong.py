"""The ``strong`` level: information-set Monte Carlo tree search with determinisation.

Single-observer ISMCTS (Cowling, Powley and Whitehouse, 2012). The bot knows
only its :class:`~workers.bots.BotInput`: its seat's view and legal actions.
Each iteration

1. **determinises**: ``game.determinise(view, seat, rng)`` builds a full state
   that shows this seat exactly ``view``, every card the seat cannot see drawn
   at random from those it could be (and a fresh RNG state, so dice and shuffles
   are sampled too);
2. **selects** down the one tree (nodes are the bot's information sets; edges
   are ``(seat, action)``) with UCB1 over the actions available in *this*
   determinisation, counting each available edge's availability; at the root a
   progressive bias from a ranking of the legal actions (:data:`SCORERS`)
   (fading with visits, :data:`PRIOR`) steers the first visits;
3. **expands** one untried action, then
4. **rolls out** uniformly at random to the end of the match, or to a depth cap
   where a public-score heuristic (:func:`evaluate`) stands in for the result;
5. **backs up** each seat's reward (a share of the win, or the heuristic) to
   the edges that seat chose.

The move played is the root edge visited most. At the root the bot searches
only over ``bot_input.legal_actions`` (what the service offered it), less the
plays a game's :data:`CANDIDATES` rule leaves out; a
determinisation is only ever built from the view, so the real state, the
store and the other seats' cards are out of reach: given the same view, legal
actions and seed it plays the same move, whatever the hidden cards are
(``tests/workers/test_strong.py`` swaps them to check).

The game's rules object is used, but only on the states this module builds
itself (``legal_actions`` and ``play`` on a determinisation, never the real
state); that is why this is the one bot module allowed to import the game
registry (``tests/workers/test_bots.py``).

Budget (:class:`Budget`): ``iterations`` (default 100) and ``time_ms``
(default 300; 0 means no clock, and then the move depends only on the seed),
whichever ends first, and ``rollout_depth`` (default 40 plies). Defaults can
be set with the environment variables ``GRIMOIRE_STRONG_ITERATIONS``,
``GRIMOIRE_STRONG_TIME_MS`` and ``GRIMOIRE_STRONG_ROLLOUT_DEPTH``.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass
from typing import Any

from service.engine import Rng, clone

from . import greedy, seconds
from .greedy import _turret_score

Action = dict[str, Any]
View = dict[str, Any]

#: UCB1 exploration constant (rewards are in [0, 1]).
EXPLORATION = 0.7
#: Weight of the ranking of the root actions (:data:`SCORERS`; progressive bias, fading as 1 / (1 + visits)),
#: per game. In Casting Stones, a game of dice, the ranking is worth more than a hundred random rollouts
#: (engine trials against greedy, 200 paired matches: 0.56 with the ranking at weight 30, 0.50 to 0.53
#: with the search leading): there the search mostly breaks its ties; elsewhere the search leads.
PRIOR = {"casting-stones": 30.0}
DEFAULT_PRIOR = 3.0
#: Casting Stones' evaluation: what a hand that cannot make a Spell (no Character, Artifact or Element
#: left after a knock-out) costs, and what each point of stone number in a hand is worth (it breaks ties
#: between Spells and Charms), in turret-score points.
NO_SPELL_PENALTY = 30.0
NUMBER_WEIGHT = 0.05


@dataclass(frozen=True)
class Budget:
    iterations: int = 100
    time_ms: int = 300
    rollout_depth: int = 40

    @classmethod
    def from_env(cls) -> "Budget":
        env = os.environ
        return cls(iterations=int(env.get("GRIMOIRE_STRONG_ITERATIONS", cls.iterations)),
                   time_ms=int(env.get("GRIMOIRE_STRONG_TIME_MS", cls.time_ms)),
                   rollout_depth=int(env.get("GRIMOIRE_STRONG_ROLLOUT_DEPTH", cls.rollout_depth)))


def _games():
    from service.games import all_games  # the rules, used on determinisations only (see the docstring)

    return all_games()


_GAMES: dict[str, Any] = {}


def _game(game_id: str):
    if not _GAMES:
        _GAMES.update(_games())
    return _GAMES[game_id]


class _Node:
    __slots__ = ("children", "visits", "reward", "available")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.visits = 0
        self.reward = 0.0
        self.available = 0


def _key(seat: int, action: Action) -> str:
    return f"{seat}:{json.dumps(action, sort_keys=True, separators=(',', ':'))}"


def choose(bot_input, rng, budget: Budget | None = None) -> Action:
    """The most visited root action after the search; one of ``bot_input.legal_actions`` verbatim."""
    legal = bot_input.legal_actions
    candidates = CANDIDATES.get(bot_input.game)
    if candidates is not None:
        legal = candidates(bot_input.view, bot_input.seat, legal) or legal
    if len(legal) == 1:
        return legal[0]
    if bot_input.game == "casting-stones" and all(a["type"] in seconds.ACTIONS for a in legal):
        return legal[seconds.choose(bot_input.view, bot_input.seat, legal)]
    budget = budget or Budget.from_env()
    game = _game(bot_input.game)
    view, seat = bot_input.view, bot_input.seat
    root_keys = [_key(seat, a) for a in legal]
    root = _Node()
    prior = _prior(bot_input.game, view, seat, legal)
    deadline = time.perf_counter() + budget.time_ms / 1000 if budget.time_ms else None
    for _ in range(max(1, budget.iterations)):
        _iterate(game, view, seat, legal, root_keys, root, rng, budget.rollout_depth, prior)
        if deadline is not None and time.perf_counter() >= deadline:
            break
    best = max(range(len(legal)), key=lambda i: (root.children[root_keys[i]].visits
                                                 if root_keys[i] in root.children else -1,
                                                 root.children[root_keys[i]].reward
                                                 if root_keys[i] in root.children else 0.0))
    return legal[best]


def _prior(game_id: str, view: View, seat: int, legal: list[Action]) -> list[float]:
    """The root actions ranked by :data:`SCORERS`, scaled to [0, PRIOR weight] (all 0 for a game
    without a scorer, or when it cannot tell them apart)."""
    scorer = SCORERS.get(game_id)
    if scorer is None:
        return [0.0] * len(legal)
    scores = [scorer(view, seat, a) for a in legal]
    low, high = min(scores), max(scores)
    if high - low < 1e-9:
        return [0.0] * len(scores)
    weight = PRIOR.get(game_id, DEFAULT_PRIOR)
    return [weight * (x - low) / (high - low) for x in scores]


def casting_stones(view: View, seat: int, action: Action) -> float:
    """Casting Stones' ranking of a root action: the greedy level's score, overruled where a hand's
    Spells are at stake (a Spell needs a Character, an Artifact and an Element symbol): knock out the
    stone whose loss leaves the opponent without Spells ("if you Knock their Character Stone into the
    Vault, they will be unable to cast any Spells until recovering it", 000), win one's own back with a
    Potion's swap or a replacement, and never swap them away."""
    score = greedy.casting_stones(view, seat, action)
    kind = action["type"]
    if kind == "knock_stone":
        if _spells(view, 1 - seat) and not _spells(view, 1 - seat, out=action["stone"]):
            return 80 + score / 100
    elif kind == "swap_stone":
        before, after = _spells(view, seat), _spells(view, seat, out=action["stone"], into=action["take"])
        if after != before:
            return 90 + score / 100 if after else -100.0
    elif kind == "replace" and _spells(view, seat, into=action["stone"]):
        return 100 + score
    return score


def _spells(view: View, seat: int, out: str | None = None, into: str | None = None) -> bool:
    """Whether ``seat``'s hand (less the stone ``out``, plus the stone ``into``) can cast a Spell: it holds
    a Character, an Artifact and an Element (in the Advanced Game a Chaser stands for any of them)."""
    hand = greedy._player(view, seat)["hand"]
    types = [s["type"] for s in hand if s["id"] != out]
    if into is not None:
        types.append(greedy.stone(view, into)["type"])
    missing = {"character", "artifact", "element"} - set(types)
    wild = types.count("chaser") if view["variant"] == "advanced" else 0  # "Chasers are wild"
    return len(missing) <= wild


#: How the root actions are ranked, per game: the greedy level's scores, Casting Stones' revised here.
SCORERS = {**greedy.SCORERS, "casting-stones": casting_stones}


def quidditch_candidates(view: View, seat: int, legal: list[Action]) -> list[Action]:
    """Quidditch: the root actions worth searching, leaving out two plays that random rollouts cannot judge
    (they waste both seats' Seekers alike):

    * a Seeker laid on any ball but the Golden Snitch. It is "the only card that can catch it", the Snitch
      is worth 150 and ends the match, and a deck holds two Seekers. On a Bludger it wins nothing (a Beater's
      ball); on a Quaffle it now wins on value ("The higher-numbered Player Card wins the round",
      docs/rules/quidditch.md), but 10 points there are not worth a chance at 150 -- the book's own advice:
      "Beaters and Seekers may be played on Quaffles, but they are better saved for Bludgers and the Golden
      Snitch";
    * the pitcher laying anything but a Seeker on the Snitch: "Every ball the Pitcher decides to play on,
      their opponent must play on as well", so it offers the opponent's Seeker the catch, and wins nothing.

    Empty when nothing else is legal (the caller then searches everything).
    """
    hand = {card["id"]: card["kind"] for card in view["hand"]}
    balls = {ball["id"]: ball["kind"] for ball in view["balls"]}
    pitching = view["pitcher"] == seat and view["stage"] == "lead"

    def wasteful(action: Action) -> bool:
        if action["type"] != "play_card":
            return False
        seeker, snitch = hand.get(action["card"]) == "seeker", balls.get(action["ball"]) == "snitch"
        return seeker != snitch and (seeker or pitching)

    return [a for a in legal if not wasteful(a)]


#: Which root actions are searched, per game (all of them for a game not named here).
CANDIDATES = {"quidditch": quidditch_candidates}


def _iterate(game, view: View, seat: int, legal: list[Action], root_keys: list[str], root: _Node, rng,
             depth: int, prior: list[float]) -> None:
    state = game.determinise(view, seat, Rng(rng.getrandbits(64)))
    node = root
    path: list[tuple[_Node, int]] = []  # (edge node, the seat that chose it)
    first = True
    bias = None
    # Selection and expansion.
    while game.result(state) is None:
        if first:
            actor, actions, keys = seat, legal, root_keys
            first, bias = False, prior
        else:
            waiting = sorted(game.to_act(state))
            actor = waiting[0] if len(waiting) == 1 else waiting[rng.randrange(len(waiting))]
            actions = game.legal_actions(state, actor)
            keys = [_key(actor, a) for a in actions]
        untried = [i for i, k in enumerate(keys) if k not in node.children]
        for k in keys:
            child = node.children.get(k)
            if child is not None:
                child.available += 1
        if untried:
            if bias is not None:  # at the root, the greedy level's favourites first
                top = max(bias[i] for i in untried)
                untried = [i for i in untried if bias[i] >= top - 1e-9]
            i = untried[rng.randrange(len(untried))]
            child = node.children[keys[i]] = _Node()
            child.available = 1
            game.play(state, actor, clone(actions[i]))
            path.append((child, actor))
            break
        log_of = math.log
        best_i, best_u = 0, -1.0
        for i, k in enumerate(keys):
            child = node.children[k]
            u = child.reward / child.visits + EXPLORATION * math.sqrt(log_of(child.available) / child.visits)
            if bias is not None:
                u += bias[i] / (1 + child.visits)
            if u > best_u:
                best_i, best_u = i, u
        bias = None
        node = node.children[keys[best_i]]
        game.play(state, actor, clone(actions[best_i]))
        path.append((node, actor))
    # Rollout.
    for _ in range(depth):
        if game.result(state) is not None:
            break
        waiting = sorted(game.to_act(state))
        actor = waiting[0] if len(waiting) == 1 else waiting[rng.randrange(len(waiting))]
        actions = game.legal_actions(state, actor)
        game.play(state, actor, actions[rng.randrange(len(actions))])
    rewards = _rewards(game, state)
    # Backpropagation: each edge earns the reward of the seat that chose it.
    for child, actor in path:
        child.visits += 1
        child.reward += rewards[actor] if 0 <= actor < len(rewards) else 0.0  # the board (-1) has no stake


def _rewards(game, state) -> list[float]:
    """Each seat's reward in [0, 1]: its share of the win, or :func:`evaluate` when the match goes on."""
    result = game.result(state)
    view = game.view(state, None)
    if result is not None:
        winners = result["winners"]
        seats = len(result["scores"]) if result.get("scores") else max([1, *[w + 1 for w in winners]])
        seats = max(seats, 2)
        if not winners:
            return [0.5] * seats
        return [1.0 / len(winners) if s in winners else 0.0 for s in range(seats)]
    return evaluate(game.id, view)


def _squash(diff: float, scale: float) -> float:
    return 0.5 + 0.5 * math.tanh(diff / scale)


def evaluate(game_id: str, view: View) -> list[float]:
    """A heuristic reward per seat, from public facts only (a spectator's view of a determinisation)."""
    if game_id == "casting-stones":
        owners = [t["seat"] for t in view["turrets"]]
        # the greedy level's turret score (runs of adjacent turrets, mine against theirs), less a hand's
        # lost Spells, plus its numbers
        scores = [_turret_score(owners, s) + _hand_score(view, s) for s in (0, 1)]
        return [_squash(scores[s] - scores[1 - s], 20.0) for s in (0, 1)]
    if game_id == "quidditch":
        points = [p["score"] for p in view["players"]]
        return [_squash(points[s] - points[1 - s], 40.0) for s in (0, 1)]
    if game_id == "spells-and-potions":
        scores = list(view["scores"])
        team_points = view["team_points"]
        totals = []
        for s in range(len(scores)):
            team = next((p["team"] for p in view["table"] if p["wizard"] == s), None)
            totals.append(scores[s] + (team_points[team] if team is not None else 0))
        out = []
        for s in range(len(totals)):
            others = [t for o, t in enumerate(totals) if o != s and not _partners(view, s, o)]
            out.append(_squash(totals[s] - (max(others) if others else 0), 40.0))
        return out
    if game_id == "sorcerers-stone":
        progress = [_progress(view, p) for p in view["players"]]
        return [_squash(mine - max(x for o, x in enumerate(progress) if o != s), 1.0)
                for s, mine in enumerate(progress)]
    return [0.5, 0.5]


def _progress(view: View, player: dict) -> float:
    """The Sorcerer's Stone: how far a player has come, in boards: the boards behind them, plus their way
    along a race board (Hagrid's path to the trapdoor, Quirrell's path to the door), less waiting turns."""
    order = list(view["boards"])  # the chain's boards in order (one board when played individually)
    board = player["board"]
    done = order.index(board) if board in order else len(order)
    along = 0.0
    if board in ("hagrid", "quirrell"):
        race = view["boards"][board]
        position = next(p["position"] for p in race["players"] if p["seat"] == player["seat"])
        along = position / max(1, race["trapdoor"] if board == "hagrid" else race["length"])
    return done + along - 0.1 * player["waiting"]


def _hand_score(view: View, seat: int) -> float:
    """Casting Stones: once the hands are made up, a hand that cannot cast a Spell pays
    :data:`NO_SPELL_PENALTY`; every stone number counts :data:`NUMBER_WEIGHT`."""
    hand = greedy._player(view, seat)["hand"]
    numbers = NUMBER_WEIGHT * sum(stone["number"] or 0 for stone in hand)
    if view["phase"] in ("pick", "library", "bring"):
        return numbers  # hands are still being made up, to the quota of each type
    return numbers - (0.0 if _spells(view, seat) else NO_SPELL_PENALTY)


def _partners(view: View, a: int, b: int) -> bool:
    teams = {p["wizard"]: p["team"] for p in view["table"] if p["wizard"] is not None}
    return a in teams and b in teams and teams[a] == teams[b]
