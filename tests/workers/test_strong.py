"""The ``strong`` level (ISMCTS with determinisation) and the games' ``determinise`` hooks, apart from Redis.

Small budgets keep this file fast; ``tests/benchmarks/bench_bots.py`` measures the real strength.
"""

from __future__ import annotations

import random

import pytest

from service.engine import BOARD_SEAT, Game, Rng, clone
from service.games import all_games
from service.games.casting_stones.catalogue import STONES
from workers import bots
from workers.bots import BotInput, strong

GAMES = all_games()
#: A tiny budget, clock off: the move depends only on the seed.
SMALL = strong.Budget(iterations=24, time_ms=0, rollout_depth=12)


def _setups(game: Game):
    """One (variant, seats) per variant and seat count."""
    for variant in game.variant_ids():
        for seats in range(game.min_seats, game.max_seats + 1):
            yield variant, seats


def _random_states(game: Game, variant: str, seats: int, seed: int, every: int):
    """Every ``every``-th state of a seeded random playout, to the end."""
    state = game.setup(game.check_options(variant, {}, seats), seats, seed)
    rng = random.Random(seed)
    step = 0
    while game.result(state) is None:
        if step % every == 0:
            yield state
        seat = rng.choice(sorted(game.to_act(state)))
        state, _ = game.apply(state, seat, rng.choice(game.legal_actions(state, seat)))
        step += 1
    yield state


def _play_out(game: Game, state, seed: int) -> dict:
    rng = random.Random(seed)
    for _ in range(20000):
        if game.result(state) is not None:
            return game.result(state)
        seat = rng.choice(sorted(game.to_act(state)))
        state, _ = game.apply(state, seat, rng.choice(game.legal_actions(state, seat)))
    raise AssertionError("the determinised match did not end")


def test_determinise_is_optional_in_the_contract():
    with pytest.raises(NotImplementedError):
        Game().determinise({}, 0, Rng(1))


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_determinise_shows_the_seat_exactly_its_view_and_plays_on(game_id):
    """For random playouts: determinise(view(state, s), s) shows s exactly view(state, s), waits on the same
    seats, offers s the same actions, and the engine can play it to the end."""
    game = GAMES[game_id]
    checked = played = 0
    worlds = [(variant, seats, seed) for variant, seats in _setups(game) for seed in (7, 8)]
    for variant, seats, seed in worlds:
        for k, state in enumerate(_random_states(game, variant, seats, seed=seed, every=9)):
            for seat in range(seats):
                view = game.view(state, seat)
                sample = game.determinise(view, seat, Rng(1000 * k + seat))
                assert game.view(sample, seat) == view, (variant, seats, k, seat)
                assert game.to_act(sample) == game.to_act(state)
                assert game.result(sample) == game.result(state)
                if seat in game.to_act(state) and view.get("phase") != "bring":
                    # (Advanced Casting Stones set-up offers collections from pack seeds the view never shows.)
                    assert game.legal_actions(sample, seat) == game.legal_actions(state, seat)
                if BOARD_SEAT in game.to_act(state):  # the board's own moves are public: the same in the sample
                    assert game.legal_actions(sample, BOARD_SEAT) == game.legal_actions(state, BOARD_SEAT)
                checked += 1
            if k % 6 == 0:
                assert _play_out(game, game.determinise(game.view(state, 0), 0, Rng(k)), k) is not None
                played += 1
    assert checked > 40 and played > 3


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_determinise_samples_the_hidden_parts(game_id):
    """Two samples from one view differ somewhere (hidden cards or at least the fresh RNG state)."""
    game = GAMES[game_id]
    state = list(_random_states(game, game.variant_ids()[0], game.min_seats, seed=3, every=5))[2]
    view = game.view(state, 0)
    assert game.determinise(view, 0, Rng(1)) != game.determinise(view, 0, Rng(2))


def _seats_to_act(game: Game, state) -> list[int]:
    """The seats to act, without the board itself: the ``board`` bot plays it, never ``strong``."""
    return [seat for seat in sorted(game.to_act(state)) if seat != BOARD_SEAT]


def _bot_positions(game: Game, seed: int, count: int):
    """Up to ``count`` (state, seat) pairs where a seat has a real choice, from a random playout."""
    found = []
    for state in _random_states(game, game.variant_ids()[0], game.min_seats, seed, every=3):
        for seat in _seats_to_act(game, state):
            if len(game.legal_actions(state, seat)) > 1:
                found.append((state, seat))
                break
        if len(found) == count:
            break
    return found


def _input(game: Game, state, seat: int) -> BotInput:
    return BotInput(game.id, seat, game.view(state, seat), game.legal_actions(state, seat))


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_strong_returns_a_legal_action_and_is_seeded(game_id):
    game = GAMES[game_id]
    for state, seat in _bot_positions(game, seed=5, count=4):
        bot_input = _input(game, state, seat)
        first = strong.choose(bot_input, random.Random(11), SMALL)
        assert first in bot_input.legal_actions
        assert strong.choose(bot_input, random.Random(11), SMALL) == first


def test_strong_is_registered_for_the_workers():
    game = GAMES["casting-stones"]
    state, seat = _bot_positions(game, seed=1, count=1)[0]
    bot_input = _input(game, state, seat)
    assert "strong" in bots.LEVELS
    assert bots.choose("strong", bot_input, random.Random(0)) in bot_input.legal_actions


# -- the key property: hidden cards cannot change the decision ------------------------------------------


def _same_view_other_hidden(game: Game, state, seat: int):
    """A second state with the same view for ``seat`` but other hidden cards, swapped by hand."""
    other = clone(state)
    if game.id == "spells-and-potions":
        # swap one card between two hands ``seat`` cannot see
        posts = state["posts"]
        hidden = [p for p in range(4) if posts[p] is not None and posts[p] != seat and state["hands"][p]]
        a, b = hidden[0], hidden[1]
        hand_a, hand_b = other["hands"][a], other["hands"][b]
        card_a, card_b = hand_a[0], hand_b[-1]
        hand_a[0], hand_b[-1] = card_b, card_a
        other["hands"][a], other["hands"][b] = sorted(hand_a), sorted(hand_b)
    elif game.id == "quidditch":
        # swap a card of the opponent's hand with one of the opponent's deck
        opp = 1 - seat
        hand, deck = other["hands"][opp], other["decks"][opp]
        i = next(i for i, c in enumerate(deck) if c not in hand)
        hand[0], deck[i] = deck[i], hand[0]
    elif game.id == "sorcerers-stone":
        # Snape's Challenge: a card of another player's face-down pair for one of the draw pile, and the dice
        board = other["boards"]["snape"]
        opp = next(s for s in range(len(board["hands"])) if s != seat and board["hands"][s])
        hand, deck = board["hands"][opp], board["deck"]
        i = next(i for i, c in enumerate(deck) if c != hand[0])
        hand[0], deck[i] = deck[i], hand[0]
        other["rng"] = (state["rng"] * 6364136223846793005 + 1442695040888963407) % (1 << 64)
    else:
        # Casting Stones hides the dice (the RNG), and in the Advanced Game the other player's private Vault
        other["rng"] = (state["rng"] * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        if state["v"] == "advanced":
            opp = 1 - seat
            vault = other["vault"][opp]
            spare = next(s for s in sorted(STONES) if s not in vault and s not in other["hands"][opp])
            vault[0] = spare
    return other


def _swap_positions(game: Game):
    if game.id == "spells-and-potions":
        setups = [("practice-3", 4), ("ritual", 3)]
    elif game.id == "casting-stones":
        setups = [("basic", 2), ("advanced", 2)]
    elif game.id == "sorcerers-stone":
        setups = [("snape", 3)]
    else:
        setups = [("standard", 2)]
    for variant, seats in setups:
        n = 0
        for state in _random_states(game, variant, seats, seed=2, every=7):
            if game.result(state) is not None or (game.id == "casting-stones" and state["ph"] == "bring"):
                continue
            for seat in _seats_to_act(game, state):
                hidden_hands = 2
                if game.id == "spells-and-potions":
                    posts, hands = state["posts"], state["hands"]
                    hidden_hands = sum(1 for p, w in enumerate(posts) if w not in (None, seat) and hands[p])
                if hidden_hands < 2:
                    continue  # nothing hidden to swap between two hands
                if len(game.legal_actions(state, seat)) > 1:
                    yield state, seat
                    n += 1
                    break
            if n == 3:
                break


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_strong_decision_ignores_the_hidden_cards(game_id):
    """Two states that show the bot's seat the same view but hold different hidden cards get the same move
    (same seed). True by construction -- the bot only reads the view -- and this proves it: the swapped
    states really differ, other seats see the difference, and the bot does not."""
    game = GAMES[game_id]
    tried = 0
    for state, seat in _swap_positions(game):
        swapped = _same_view_other_hidden(game, state, seat)
        assert swapped != state
        assert game.view(swapped, seat) == game.view(state, seat)
        assert game.legal_actions(swapped, seat) == game.legal_actions(state, seat)
        # a second, sampled world: the bot's own determinisation of its view
        sampled = game.determinise(game.view(state, seat), seat, Rng(tried + 99))
        assert game.view(sampled, seat) == game.view(state, seat)
        choices = [strong.choose(_input(game, world, seat), random.Random(tried), SMALL)
                   for world in (state, swapped, sampled)]
        assert choices[0] == choices[1] == choices[2], choices
        tried += 1
    assert tried >= 3
    if game_id != "casting-stones":
        # someone else sees the hidden cards that were swapped
        state, seat = next(iter(_swap_positions(game)))
        swapped = _same_view_other_hidden(game, state, seat)
        assert any(game.view(swapped, s) != game.view(state, s) for s in range(state.get("seats", 2)) if s != seat)


def test_strong_beats_random_at_casting_stones():
    """Ten seeded matches, seats alternated, engine only: robust claim only (it wins at least as many)."""
    game = GAMES["casting-stones"]
    budget = strong.Budget(iterations=25, time_ms=0, rollout_depth=20)
    wins = losses = 0
    for seed in range(10):
        levels = ["strong", "random"] if seed % 2 == 0 else ["random", "strong"]
        state = game.setup(game.check_options(None, {}, 2), 2, seed)
        rng = random.Random(seed)
        while game.result(state) is None:
            seat = rng.choice(sorted(game.to_act(state)))
            bot_input = _input(game, state, seat)
            if levels[seat] == "strong":
                action = strong.choose(bot_input, rng, budget)
            else:
                action = bots.choose("random", bot_input, rng)
            state, _ = game.apply(state, seat, action)
        winners = game.result(state)["winners"]
        if len(winners) == 1:
            wins += levels[winners[0]] == "strong"
            losses += levels[winners[0]] == "random"
    assert wins >= losses and wins >= 5, (wins, losses)


def _casting_stones_decisions(kinds: set[str], seeds: range):
    """(view, seat, legal) of every decision offering an action of ``kinds``, in seeded random playouts."""
    game = GAMES["casting-stones"]
    for seed in seeds:
        for state in _random_states(game, "basic", 2, seed, every=1):
            for seat in sorted(game.to_act(state)):
                legal = game.legal_actions(state, seat)
                if any(a["type"] in kinds for a in legal):
                    yield game.view(state, seat), seat, legal


def _top_ranked(view: dict, seat: int, legal: list[dict]) -> dict:
    scores = [strong.casting_stones(view, seat, a) for a in legal]
    return legal[scores.index(max(scores))]


def test_casting_stones_ranking_knocks_out_the_stone_the_opponents_spells_need():
    """Manual 000: "if you Knock their Character Stone into the Vault, they will be unable to cast any Spells
    until recovering it" -- the strong level's ranking puts that knock-out above every other Charm
    victory, where the greedy level prefers knocking a Turret Gem."""
    seen = 0
    for view, seat, legal in _casting_stones_decisions({"knock_stone"}, range(40)):
        crippling = [a for a in legal if a["type"] == "knock_stone"
                     and strong._spells(view, 1 - seat) and not strong._spells(view, 1 - seat, out=a["stone"])]
        if not crippling:
            continue
        assert _top_ranked(view, seat, legal) in crippling
        seen += 1
    assert seen >= 3


def test_casting_stones_ranking_wins_spells_back():
    """A knocked-out player "must choose a new Casting Stone from the Vault": the ranking takes one that
    gives the hand its Spells back whenever the Vault has one."""
    seen = 0
    for view, seat, legal in _casting_stones_decisions({"replace"}, range(60)):
        restoring = [a for a in legal if strong._spells(view, seat, into=a["stone"])]
        if not restoring or len(restoring) == len(legal):
            continue
        assert _top_ranked(view, seat, legal) in restoring
        seen += 1
    assert seen >= 1


def test_sorcerers_stone_evaluation_rewards_progress_through_the_chain():
    """The heuristic at the rollout cap: a player boards ahead of the others is rewarded above a half."""
    game = GAMES["sorcerers-stone"]
    rng = random.Random(4)
    state = game.setup(game.check_options(None, {}, 2), 2, 4)
    while game.result(state) is None:
        view = game.view(state, None)
        boards = [p["board"] for p in view["players"]]
        order = list(view["boards"])
        if order.index(boards[0]) != order.index(boards[1]):
            ahead = 0 if order.index(boards[0]) > order.index(boards[1]) else 1
            rewards = strong.evaluate(game.id, view)
            assert rewards[ahead] > 0.5 > rewards[1 - ahead]
            return
        seat = rng.choice(sorted(game.to_act(state)))
        bot_input = BotInput(game.id, seat, game.view(state, bots.viewer(seat)), game.legal_actions(state, seat))
        state, _ = game.apply(state, seat, bots.choose("greedy" if seat >= 0 else bots.BOARD_LEVEL, bot_input, rng))
    raise AssertionError("the players never stood on different boards")


def _quidditch_decisions(seeds: range):
    """(state, seat, legal) of every decision that offers a face-down play, in seeded random playouts."""
    game = GAMES["quidditch"]
    for seed in seeds:
        for state in _random_states(game, "standard", 2, seed, every=1):
            for seat in sorted(game.to_act(state)):
                legal = game.legal_actions(state, seat)
                if any(a["type"] == "play_card" for a in legal):
                    yield state, seat, legal


def _wasteful(view: dict, seat: int, action: dict) -> bool:
    """A Seeker laid on a ball that is not the Golden Snitch, or the pitcher laying anything else on it."""
    if action["type"] != "play_card":
        return False
    kind = next(card["kind"] for card in view["hand"] if card["id"] == action["card"])
    snitch = action["ball"] == "p-snitch"
    return (kind == "seeker" and not snitch) or (snitch and kind != "seeker" and view["pitcher"] == seat
                                                 and view["stage"] == "lead")


def test_quidditch_search_keeps_seekers_for_the_snitch():
    """Kinds: a Seeker "Plays for the Golden Snitch: the only card that can catch it", and "Every ball the
    Pitcher decides to play on, their opponent must play on as well": the strong level never lays a Seeker
    elsewhere, nor, pitching, anything but a Seeker on the Snitch, while it has anything else to play."""
    game = GAMES["quidditch"]
    seen = 0
    for state, seat, legal in _quidditch_decisions(range(30)):
        view = game.view(state, seat)
        if not any(_wasteful(view, seat, a) for a in legal) or all(_wasteful(view, seat, a) for a in legal):
            continue
        candidates = strong.quidditch_candidates(view, seat, legal)
        assert candidates == [a for a in legal if not _wasteful(view, seat, a)]
        if seen % 5 == 0:  # the search itself, on a sample (it is the slow part)
            assert not _wasteful(view, seat, strong.choose(_input(game, state, seat), random.Random(seen), SMALL))
        seen += 1
    assert seen >= 50, seen


@pytest.mark.parametrize("variant", ["basic", "intermediate", "advanced"])
def test_casting_stones_ranking_reads_every_stone_an_action_names(variant):
    """The ranking looks up the stones an action names wherever they lie: in the Advanced Game a swap
    takes from the player's own Vault, which the ranking missed (a TypeError: the job fell back to random
    moves for the rest of the match). Every legal action of random playouts of each variant is ranked."""
    game = all_games()["casting-stones"]
    ranked = 0
    for seed in range(12):
        state = game.setup(game.check_options(variant, {}, 2), 2, seed)
        rng = random.Random(seed)
        while game.result(state) is None:
            seat = min(game.to_act(state))
            legal, view = game.legal_actions(state, seat), game.view(state, seat)
            ranked += len([strong.casting_stones(view, seat, action) for action in legal])
            state, _ = game.apply(state, seat, rng.choice(legal))
    assert ranked > 100
