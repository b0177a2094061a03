"""One trick: which cards may be laid, and who wins it for how many points.

Rule book (004_3d98a563beabace2.txt), "Basic Play":

    Rule #2: You must play a card from the element (suit) that was led for
    that trick (round), if you have one.
    Rule #3: If and only if you cannot follow the lead element, you may play a
    card from any other element including Trump (Fire).
    Rule #4: A Spell and Potions Card may be played at any time it is your
    turn, even if you have a card of the lead element.
    Rule #5: The highest card of the element led wins the trick unless a trump
    is laid in which case the highest trump wins the trick. (If all the cards
    in a trick are Spells and Potions Cards, then the leader of the trick
    wins.)

and "Partners combine the points from their tricks, which are worth 10 points
each plus or minus any Potions Points."

A trick is a list of ``[post, card]`` pairs in the order they were laid (the
state keeps only the cards and the leader; :func:`.table.play_order` gives the
posts).
"""

from __future__ import annotations

from dataclasses import dataclass

from .deck import effect_of, element_of, is_spell, rank_of, spell_of
from .table import team_of

#: "Trick Points - Points given to the winning wizard at the end of each trick";
#: "worth 10 points each".
TRICK_POINTS = 10

#: The match options that change how a trick is decided (keyword arguments of :func:`resolve`).
RULE_OPTIONS = ("reverse_keeps_trumps", "blast_helps_under_reverse")


def rule_options(opts: dict) -> dict[str, bool]:
    """The :func:`resolve` options out of a match's (or a view's) options.

    Matches stored before an option existed lack it and play by its default
    (off); the retired ``blast_stacks`` they may carry is dropped."""
    return {name: bool(opts.get(name, False)) for name in RULE_OPTIONS}


def led_element(cards: list[str]) -> str | None:
    """The element that was led: that of the first Element Card laid.

    Rule #4 lets the leader open with a Spells and Potions Card, and the rule
    book never says what is "led" then; the first Element Card laid sets the
    element to follow. House rule, docs/rules.
    """
    for card in cards:
        element = element_of(card)
        if element is not None:
            return element
    return None


def playable_cards(hand: list[str], laid: list[str]) -> list[str]:
    """The cards of ``hand`` that may be laid on ``trick`` (Rules #2 to #4).

    "Each card should be of a higher number than the previously laid card" in
    the Getting Started list is advice, not a constraint; follow-suit is the
    rule (DESIGN.md house rule).
    """
    led = led_element(laid)
    if led is None:
        return list(hand)
    following = [card for card in hand if element_of(card) == led]
    if not following:
        return list(hand)  # Rule #3: any element, trump included, or a spell
    return [card for card in hand if element_of(card) == led or is_spell(card)]


@dataclass(frozen=True)
class Outcome:
    """Who won a trick, what it was worth, and what its spells did."""

    winner: int  # the post that won
    points: int  # trick points plus potion points
    potion_points: int
    rule: str  # "highest", "lowest" (Reverse) or "shield": which ranking decided
    choose_trump: bool  # a Larfor's Trump Choice was laid
    name_leader: bool  # a Merlin's New Apprentice was laid


def ranking_spell(cards: list[str]) -> str | None:
    """The ranking spell in force: "reverse", "shield" or None.

    Pranxtor's Fiery Reverse ("The lowest ranking card of the lead suit wins")
    and Jaype's Trump Shield ("The highest ranking card of the lead suit wins")
    contradict each other; "When two spells in one trick contradict each other,
    the one played later wins." (DESIGN.md house rule). Two copies of the same
    spell agree, so the second changes nothing.
    """
    rule = None
    for card in cards:
        effect = effect_of(card)
        if effect in ("reverse", "shield"):
            rule = effect
    return rule


def blast_bonus(trick: list[list]) -> list[float]:
    """Rank bonus per team from Merlin's Power Blast: "Adds 2 1/2 points to the
    rank of your team's Element Cards" -- the team of the hand that laid it, for
    this trick only. Blasts of opposite teams do not contradict: each lifts its
    own team's cards.

    A hand lays one card a trick, so a team whose two hands both lay a Blast
    has no Element Card left in the trick: whether two Blasts of one team add up
    can never matter (the retired ``blast_stacks`` option, docs/rules)."""
    bonus = [0.0, 0.0]
    for post, card in trick:
        if effect_of(card) == "blast":
            bonus[team_of(post)] += spell_of(card).rank_bonus
    return bonus


def resolve(trick: list[list], trump: str | None, *, reverse_keeps_trumps: bool = False,
            blast_helps_under_reverse: bool = False) -> Outcome:
    """Decide a complete trick (Rule #5 as changed by the spells in it).

    * Only Element Cards win ("only an Element Card can win a trick"); a trick
      of Spells and Potions Cards alone goes to its leader (Rule #5).
    * Which cards compete: the trumps if any fell, else the led element.
      Jaype's Trump Shield makes the led element compete "regardless of whether
      a trump has been played". Pranxtor's Fiery Reverse says "The lowest
      ranking card of the lead suit wins", so by default it too looks at the
      led element only; with the ``reverse_keeps_trumps`` option a fallen trump
      still beats the led element and the lowest trump wins.
    * Ranks count Power Blast bonuses. Under a Reverse the literal reading adds
      the 2 1/2 to the rank all the same, which pushes the card away from
      winning; with ``blast_helps_under_reverse`` the Blast moves the card
      2 1/2 towards winning instead (its rank counts 2 1/2 lower).
    * No two competing cards can be equal: ranks within an element differ, and
      a Blast shifts a whole team by a half-point step. The first-laid card
      keeps the trick on a tie all the same, as in any trick-taking game.
    """
    leader = trick[0][0]
    potion_points = sum(spell_of(card).potion_points for _post, card in trick if is_spell(card))
    effects = {effect_of(card) for _post, card in trick}
    rule = ranking_spell([card for _post, card in trick])
    elements = [(post, card) for post, card in trick if element_of(card) is not None]

    if not elements:
        winner = leader
    else:
        led = element_of(elements[0][1])
        trumps = [(post, card) for post, card in elements if trump is not None and element_of(card) == trump]
        if rule == "shield" or (rule == "reverse" and not reverse_keeps_trumps) or not trumps:
            competing = [(post, card) for post, card in elements if element_of(card) == led]
        else:
            competing = trumps
        bonus = blast_bonus(trick)
        sign = -1 if rule == "reverse" else 1
        # The Blast's own direction: with the sign of the ranking (literal) or always towards winning.
        blast_sign = 1 if blast_helps_under_reverse else sign
        winner, best = None, None
        for post, card in competing:  # in the order laid, so ties stay with the first
            strength = sign * rank_of(card) + blast_sign * bonus[team_of(post)]
            if best is None or strength > best:
                winner, best = post, strength

    return Outcome(
        winner=winner,
        points=TRICK_POINTS + potion_points,
        potion_points=potion_points,
        rule={"reverse": "lowest", "shield": "shield"}.get(rule, "highest"),
        choose_trump="choose_trump" in effects,
        name_leader="name_leader" in effects,
    )
