"""Laying cards and deciding tricks: Basic Play rules #2 to #5 and every
Spells and Potions Card (rule book 004_3d98a563beabace2.txt)."""

from service.games.spells_and_potions.table import EAST, NORTH, SOUTH, WEST
from service.games.spells_and_potions.tricks import led_element, playable_cards, resolve


def trick(*cards, leader=WEST):
    """A trick laid clockwise from ``leader``."""
    return [[(leader + i) % 4, card] for i, card in enumerate(cards)]


# -- which cards may be laid ------------------------------------------------------

def test_must_follow_the_lead_element():
    """004_3d98a563beabace2.txt, Rule #2: "You must play a card from the element
    (suit) that was led for that trick (round), if you have one." """
    hand = ["fire-3", "earth-2", "earth-9", "water-1"]
    assert playable_cards(hand, ["earth-5"]) == ["earth-2", "earth-9"]


def test_a_spell_may_be_laid_even_when_able_to_follow():
    """Rule #4: "A Spell and Potions Card may be played at any time it is your
    turn, even if you have a card of the lead element." """
    hand = ["earth-2", "water-1", "reverse-1"]
    assert playable_cards(hand, ["earth-5"]) == ["earth-2", "reverse-1"]


def test_unable_to_follow_any_card_including_trump():
    """Rule #3: "If and only if you cannot follow the lead element, you may play
    a card from any other element including Trump (Fire)." """
    hand = ["fire-3", "air-2", "penalty-1"]
    assert playable_cards(hand, ["earth-5"]) == hand


def test_rising_numbers_are_advice_not_a_rule():
    """004_3d98a563beabace2.txt: "Each card should be of a higher number than the
    previously laid card"; DESIGN.md house rule: "is advice, not a constraint;
    follow-suit is the rule." A lower card of the led element may be laid."""
    assert playable_cards(["earth-1", "earth-10"], ["earth-5"]) == ["earth-1", "earth-10"]


def test_the_leader_may_lead_a_spell_and_the_first_element_sets_the_lead():
    """Rule #4: a Spells and Potions Card "may be played at any time it is your
    turn" -- leading included. House rule (docs/rules): the first Element Card
    laid sets the element to follow."""
    assert playable_cards(["reward-1", "air-4"], []) == ["reward-1", "air-4"]
    laid = ["reward-1", "water-6"]
    assert led_element(laid) == "water"
    assert playable_cards(["water-2", "air-9"], laid) == ["water-2"]
    assert playable_cards(["air-9", "fire-1"], ["reward-1"]) == ["air-9", "fire-1"]


# -- Rule #5 ------------------------------------------------------------------------

def test_highest_of_the_led_element_wins():
    """Rule #5: "The highest card of the element led wins the trick" -- an
    off-element card, however high, does not."""
    outcome = resolve(trick("air-5", "air-9", "water-10", "air-2"), "fire")
    assert outcome.winner == NORTH and outcome.points == 10


def test_a_trump_beats_the_led_element_and_the_highest_trump_wins():
    """Rule #5: "... unless a trump is laid in which case the highest trump wins
    the trick." """
    assert resolve(trick("air-10", "fire-2", "air-9", "fire-4"), "fire").winner == SOUTH
    assert resolve(trick("air-10", "fire-2", "air-9", "water-4"), "fire").winner == NORTH


def test_no_trump_in_follow_the_leader():
    """004_3d98a563beabace2.txt: "1) Follow the Leader: Play a basic round;
    following the lead element without using trumps" -- Fire is just an element."""
    assert resolve(trick("air-3", "fire-10", "air-2", "air-1"), None).winner == WEST


def test_only_element_cards_win():
    """004_3d98a563beabace2.txt: "Remember - only an Element Card can win a
    trick"; the lone Element Card wins even if it was laid last."""
    assert resolve(trick("reverse-1", "trump-shield-1", "reward-1", "earth-1"), "fire").winner == SOUTH


def test_a_trick_of_spells_only_goes_to_its_leader():
    """Rule #5: "(If all the cards in a trick are Spells and Potions Cards, then
    the leader of the trick wins.)" -- with its Potion Points."""
    outcome = resolve(trick("new-apprentice-1", "reward-1", "power-blast-1", "reverse-2", leader=EAST), "fire")
    assert outcome.winner == EAST
    assert outcome.points == 20
    assert outcome.name_leader


# -- the Spells and Potions Cards ---------------------------------------------------

def test_gladders_reward_adds_ten():
    """"Gladder's Reward (1) Adds 10 points to a trick" -- whoever wins it."""
    outcome = resolve(trick("earth-3", "reward-1", "earth-8", "earth-1"), "fire")
    assert outcome.winner == EAST and outcome.points == 20 and outcome.potion_points == 10


def test_harpiers_penalty_subtracts_ten():
    """"Harpier's Penalty (1) Subtracts 10 points from the value of the trick"."""
    outcome = resolve(trick("earth-3", "penalty-1", "earth-8", "earth-1"), "fire")
    assert outcome.winner == EAST and outcome.points == 0


def test_reward_and_penalty_in_one_trick_add_up():
    """"Partners combine the points from their tricks, which are worth 10 points
    each plus or minus any Potions Points": both potions count (house rule,
    docs/rules: they are potions, not contradicting spells)."""
    assert resolve(trick("earth-3", "penalty-1", "reward-1", "earth-1"), "fire").points == 10


def test_fiery_reverse_lowest_of_the_lead_element_wins():
    """"Pranxtor's Fiery Reverse (2) The lowest ranking card of the lead suit
    wins"; "if your partner plays a low card, they may want you to play
    'Pranxtor's Fiery Reverse' so the low card becomes the winning card."
    Off-element low cards still do not win."""
    outcome = resolve(trick("air-5", "air-9", "reverse-1", "water-1"), "fire")
    assert outcome.winner == WEST and outcome.rule == "lowest"


def test_fiery_reverse_ignores_trumps_by_default():
    """"The lowest ranking card of the lead suit wins" -- of the lead suit, so a
    fallen trump does not take it (default of option reverse_keeps_trumps)."""
    laid = trick("air-5", "fire-1", "reverse-1", "air-7")
    assert resolve(laid, "fire").winner == WEST


def test_fiery_reverse_with_trumps_kept_the_lowest_trump_wins():
    """Option reverse_keeps_trumps (docs/rules): Rule #5's "unless a trump is
    laid" still holds under the Reverse, and the lowest trump wins."""
    laid = trick("air-5", "fire-6", "reverse-1", "fire-2")
    assert resolve(laid, "fire", reverse_keeps_trumps=True).winner == SOUTH
    assert resolve(laid, "fire", reverse_keeps_trumps=False).winner == WEST


def test_trump_shield_highest_of_lead_wins_whatever_trumps_fell():
    """"Jaype's Trump Shield (2) The highest ranking card of the lead suit wins,
    regardless of whether a trump has been played"."""
    outcome = resolve(trick("water-4", "fire-10", "trump-shield-1", "water-6"), "fire")
    assert outcome.winner == SOUTH and outcome.rule == "shield"


def test_trump_shield_when_trump_was_led():
    """Trump Shield names "the lead suit": when Fire is led, Fire still wins."""
    assert resolve(trick("fire-4", "fire-9", "trump-shield-1", "water-10"), "fire").winner == NORTH


def test_reverse_and_shield_the_later_one_wins():
    """DESIGN.md: "When two spells in one trick contradict each other, the one
    played later wins." Reverse (lowest of the lead suit) then Shield (highest)
    -> highest; Shield then Reverse -> lowest."""
    cards = ["earth-2", "earth-9"]
    assert resolve(trick(cards[0], "reverse-1", cards[1], "trump-shield-1"), "fire").winner == EAST
    assert resolve(trick(cards[0], "trump-shield-1", cards[1], "reverse-1"), "fire").winner == WEST


def test_shield_overruled_by_a_later_reverse_brings_trumps_back_when_kept():
    """DESIGN.md "the one played later wins": a later Reverse cancels an earlier
    Shield altogether, so with reverse_keeps_trumps a trump wins again."""
    laid = trick("earth-2", "trump-shield-1", "fire-8", "reverse-1")
    assert resolve(laid, "fire", reverse_keeps_trumps=True).winner == EAST
    assert resolve(laid, "fire").winner == WEST


def test_two_reverses_agree():
    """Two copies of Pranxtor's Fiery Reverse do not contradict each other: the
    lowest still wins (no double reversal)."""
    assert resolve(trick("earth-2", "reverse-1", "earth-9", "reverse-2"), "fire").winner == WEST


def test_power_blast_lifts_your_teams_element_cards():
    """"Merlin's Power Blast (2) Adds 2 1/2 points to the rank of your team's
    Element Cards": West's 6 + 2.5 = 8.5 beats North's 8, but 5 + 2.5 = 7.5
    does not. East (West's partner) lays the Blast."""
    assert resolve(trick("earth-6", "earth-8", "power-blast-1", "earth-1"), "fire").winner == WEST
    assert resolve(trick("earth-5", "earth-8", "power-blast-1", "earth-1"), "fire").winner == NORTH


def test_power_blast_lifts_trumps_too():
    """"your team's Element Cards" -- trumps are Element Cards: West's Fire 7 +
    2.5 beats North's Fire 8 when East Blasts."""
    assert resolve(trick("earth-6", "fire-7", "fire-8", "power-blast-1", leader=SOUTH), "fire").winner == WEST


def test_opposing_power_blasts_cancel_out():
    """Each Blast lifts its own team; one each leaves the ranks as they were
    (they do not contradict, so both apply)."""
    assert resolve(trick("earth-6", "power-blast-1", "power-blast-2", "earth-7"), "fire").winner == SOUTH


def test_power_blast_under_a_reverse_hurts_by_default():
    """"Merlin's Power Blast (2) Adds 2 1/2 points to the rank of your team's
    Element Cards" and "Pranxtor's Fiery Reverse (2) The lowest ranking card of
    the lead suit wins", composed literally (the default): the Blast still adds
    to the rank, so Blasting your own low card can lose the trick (West's 2 +
    2.5 = 4.5 against North's 3; East, West's partner, Blasts)."""
    assert resolve(trick("earth-2", "earth-3", "power-blast-1", "reverse-1"), "fire").winner == NORTH
    assert resolve(trick("earth-2", "earth-3", "reward-1", "reverse-1"), "fire").winner == WEST


def test_power_blast_under_a_reverse_helps_with_the_option():
    """Option blast_helps_under_reverse (docs/rules): "Adds 2 1/2 points to the
    rank" is read as 2 1/2 towards winning, and under "The lowest ranking card
    of the lead suit wins" that is 2 1/2 lower. West's 4 counts 1.5 and beats
    North's 3; read literally it counts 6.5 and North's 3 wins. Without the
    Reverse the option changes nothing."""
    laid = trick("earth-4", "earth-3", "power-blast-1", "reverse-1")
    assert resolve(laid, "fire", blast_helps_under_reverse=True).winner == WEST
    assert resolve(laid, "fire").winner == NORTH
    plain = trick("earth-6", "earth-8", "power-blast-1", "earth-1")
    assert resolve(plain, "fire", blast_helps_under_reverse=True).winner == WEST


def test_trump_choice_and_new_apprentice_are_reported():
    """"Merlin's New Apprentice (2) The winner of the trick chooses who should
    lead the next trick"; "Larfor's Trump Choice (2) The winner of the trick
    chooses the trump element": the trick says it owes both choices."""
    outcome = resolve(trick("earth-2", "trump-choice-1", "new-apprentice-2", "earth-3"), "fire")
    assert outcome.choose_trump and outcome.name_leader and outcome.winner == SOUTH
    plain = resolve(trick("earth-2", "earth-4", "earth-5", "earth-3"), "fire")
    assert not plain.choose_trump and not plain.name_leader

