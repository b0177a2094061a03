"""Property tests: PROPERTY_GAMES seeded random duels and tournaments (a third
each for 2, 3 and 4 wizards; GRIMOIRE_PROPERTY_GAMES raises it), checked
against invariants computed independently of the engine's own bookkeeping."""

import pytest

from service.games.spells_and_potions import GAME, deck
from tests.games.contract import PROPERTY_GAMES, random_playout

POST = {"north": 0, "east": 1, "south": 2, "west": 3}
OPTIONS = [{}, {"blast_helps_under_reverse": True}, {"reverse_keeps_trumps": True}]


def variant_for(seed: int) -> str:
    # Mostly duels of the full game and tournaments; now and then the Element-only practice rounds and
    # the three practice rounds.
    return ["ritual", "practice-3", "ritual", "practice-3", "practice-1", "ritual", "practice-2", "ritual",
            "practice-rounds", "practice-3", "ritual"][seed % 11]


def rule5_winner(cards, trump):
    """Rule #5 for a trick without Spells and Potions Cards: "The highest card
    of the element led wins the trick unless a trump is laid in which case the
    highest trump wins the trick." """
    led = cards[0][1].split("-")[0]
    trumps = [(p, c) for p, c in cards if trump and c.startswith(trump + "-")]
    pool = trumps or [(p, c) for p, c in cards if c.startswith(led + "-")]
    return max(pool, key=lambda pc: int(pc[1].split("-")[1]))[0]


def check(playout):
    variant = playout.options["variant"]
    full = variant not in ("practice-1", "practice-2")
    every_card = sorted(deck.deck(full))
    tricks_per_duel = 13 if full else 10
    duels = 3 if variant in ("ritual", "practice-rounds") else 1
    posts = playout.initial["posts"]
    trump = "fire" if variant != "practice-1" else None
    trick, trick_points, duel_points, tricks_in_duel = [], [], [0, 0], 0
    duel_totals, scores = [], [0] * playout.seats
    next_leader = playout.initial["lead"]

    for step in playout.steps:
        before, after = step.state_before, step.state_after
        # 52 (or 40) cards conserved: hands + current trick + finished tricks.
        held = [c for h in after["hands"] for c in h] + after["trick"]
        held += [c for t in after["tricks"] for c in t["cards"]]
        assert sorted(held) == every_card or (held == [] and after["phase"] in ("over", "choose_leader")), \
            "cards not conserved"
        if step.action["type"] == "play":
            post = POST[step.action["for"]]
            hand = before["hands"][post]
            card = step.action["card"]
            led = next((c.split("-")[0] for _p, c in trick if deck.is_element(c)), None)
            # Rules #2-#4: follow the led element, or a spell, or void in it.
            assert (deck.is_spell(card) or led is None or card.startswith(led + "-")
                    or not any(c.startswith(led + "-") for c in hand))
            if not trick:
                # "The winning wizard leads the next trick", unless a New Apprentice named another.
                assert post == next_leader
            trick.append((post, card))
        for event in step.events:
            kind = event["type"]
            if kind == "duel_started":
                posts, trump, next_leader = event["posts"], event["trump"], POST[event["leader"]]
            elif kind == "trump_chosen":
                trump = event["element"]
            elif kind == "leader_named":
                next_leader = POST[event["post"]]
            elif kind == "trick_won":
                assert len(trick) == 4 and sorted(p for p, _c in trick) == [0, 1, 2, 3]
                winner = POST[event["post"]]
                potion = sum(10 if c.startswith("reward-") else -10 if c.startswith("penalty-") else 0
                             for _p, c in trick)
                # a trick is worth 10 plus or minus its Potion Points
                assert event["points"] == 10 + potion
                if not any(deck.is_spell(c) for _p, c in trick):
                    assert winner == rule5_winner(trick, trump)
                if all(deck.is_spell(c) for _p, c in trick):
                    assert winner == trick[0][0]
                duel_points[winner % 2] += event["points"]
                # the view keeps the trick just taken
                shown = GAME.view(after, None)["last_trick"]
                assert [(POST[c["post"]], c["card"]) for c in shown["cards"]] == trick
                assert (POST[shown["winner"]], shown["points"]) == (winner, event["points"])
                next_leader = winner
                tricks_in_duel += 1
                trick = []
            elif kind == "duel_over":
                assert tricks_in_duel == tricks_per_duel
                assert event["team_points"] == duel_points
                for post, seat in enumerate(posts):
                    if seat is not None:
                        scores[seat] += duel_points[post % 2]
                assert event["scores"] == scores
                duel_totals.append(duel_points)
                duel_points, tricks_in_duel, trump = [0, 0], 0, None
            elif kind == "arranged":
                posts = event["posts"]

    result = GAME.result(playout.final)
    assert result is not None, "every random match finishes"
    assert len(duel_totals) == duels
    assert result["scores"] == scores
    assert result["winners"] == [s for s in range(playout.seats) if scores[s] == max(scores)]
    # "Repeat until all the cards are played" / "until 3 duels have been played"
    assert result["cause"] == ("all_duels_played" if duels == 3 else "all_tricks_played")
    if not full:  # no Potion Points without Spells and Potions Cards
        assert all(sum(d) == 10 * tricks_per_duel for d in duel_totals)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_random_matches_keep_the_invariants(seats):
    """52 cards conserved (40 in practice rounds 1-2); 13 tricks per duel
    ("Duel - 13-tricks contest"); each trick worth "10 points each plus or minus
    any Potions Points"; team and individual scores are the sums of the tricks
    won; plain tricks follow Rule #5; spell-only tricks go to the leader; every
    card laid followed suit or was allowed not to; the view keeps each trick
    after it is taken ("place the cards from the trick face-down in a pile");
    the result's cause says why the match ended."""
    for seed in range(seats - 2, PROPERTY_GAMES, 3):  # PROPERTY_GAMES games in all, a third per seat count
        playout = random_playout(GAME, variant_for(seed), seats, seed, options=OPTIONS[seed % 3])
        check(playout)
