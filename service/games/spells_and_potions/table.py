"""Who sits where: posts, partnerships, Companions and the order of play.

The table always has four posts, North, East, South and West (indices 0-3, in
clockwise order). Rule book (004_3d98a563beabace2.txt), Ritual Phase 1:
"North/South and East/West wizard sit diagonally opposite each other and form
opposing partnerships." Team 0 is North/South, team 1 East/West.

A post is held either by a wizard (an engine seat) or by a Wizard's Companion
("the empty seat where the 'fourth player' would sit"), whose hand is face up
and is played by the wizard opposite it: "The wizard sitting across from the
Companion plays Companion's hand" (three wizards); "Wizards play their
Companion's hands" (two wizards, each partnered with their own Companion).
In a state, ``posts`` lists the seat at each post, ``None`` for a Companion.
"""

from __future__ import annotations

import functools

from itertools import permutations

NORTH, EAST, SOUTH, WEST = 0, 1, 2, 3
POSTS: tuple[str, ...] = ("north", "east", "south", "west")
POST_INDEX: dict[str, int] = {name: i for i, name in enumerate(POSTS)}


def team_of(post: int) -> int:
    """0 for North/South, 1 for East/West."""
    return post % 2


def partner_of(post: int) -> int:
    """The post diagonally opposite: "You are partnered with the wizard (player)
    diagonally opposite you." (Game Overview)"""
    return (post + 2) % 4


def controller(posts: list[int | None], post: int) -> int:
    """The seat that plays the hand at ``post``: its wizard, or for a Companion
    the wizard across from it."""
    seat = posts[post]
    return seat if seat is not None else posts[partner_of(post)]


def is_companion(posts: list[int | None], post: int) -> bool:
    return posts[post] is None


def play_order(posts: list[int | None], leader: int) -> list[int]:
    """The four posts in the order they play a trick led from ``leader``.

    Normally clockwise: "In clockwise order, everyone takes turns laying a
    card." (Getting Started). With two wizards the rule book gives its own
    order: "If a wizard leads, the next player is the other wizard, then the
    Companions. If a Companion leads, the next player is the other Companion,
    then the wizards." It does not say which Companion comes first; we keep the
    partnerships alternating as at a four-wizard table (leader, an opponent,
    the leader's partner, the other opponent): House rule, docs/rules.
    """
    return list(_play_order(tuple(posts), leader))


@functools.lru_cache(maxsize=1024)
def _play_order(posts: tuple[int | None, ...], leader: int) -> tuple[int, ...]:
    """:func:`play_order` as a tuple, remembered (a pure function of its arguments)."""
    return tuple(_compute_order(posts, leader))


def _compute_order(posts, leader: int) -> list[int]:
    companions = [p for p in range(4) if posts[p] is None]
    if len(companions) == 2:
        # Wizards sit South and West, their Companions North and East; the
        # "other" hand of the same kind is the one on the other team.
        same_kind = [p for p in range(4) if (posts[p] is None) == (posts[leader] is None) and p != leader][0]
        return [leader, same_kind, partner_of(leader), partner_of(same_kind)]
    return [(leader + i) % 4 for i in range(4)]


# -- seating --------------------------------------------------------------------

def practice_seating(seats: int) -> list[int | None]:
    """Posts for a practice game, which the rule book leaves to the players.

    Seats fill the posts clockwise from North, skipping the posts of the
    Companions: the three-wizard Companion sits North ("The Wizard's Companion
    is the empty seat where the 'fourth player' would sit"; the Ritual puts it
    North), and the two-wizard Companions sit North and East, across from the
    wizards at South and West. House rule, docs/rules.
    """
    if seats == 4:
        return [0, 1, 2, 3]
    if seats == 3:
        return [None, 0, 1, 2]
    return [None, None, 0, 1]


def two_wizard_seating() -> list[int | None]:
    """Two wizards never move: "Do not switch seats in a two-player game." """
    return [None, None, 0, 1]


def arrangement_choices(seats: int) -> list[tuple[str, ...]]:
    """Every assignment of posts the Arranger may make, as a post per seat.

    Four wizards: "The Arranger assigns each wizard a post of North, South,
    East, or West." Three: "The Arranger assigns each Wizard a post of South,
    East, or West." (the Companion is North).
    """
    open_posts = POSTS if seats == 4 else ("east", "south", "west")
    return sorted(permutations(open_posts, seats))


def seating_from_arrangement(posts_by_seat: list[str]) -> list[int | None]:
    posts: list[int | None] = [None] * 4
    for seat, name in enumerate(posts_by_seat):
        posts[POST_INDEX[name]] = seat
    return posts


def rotate(posts: list[int | None]) -> list[int | None]:
    """After a duel: "Wizards of the West, East, and South rotate seats
    clockwise. The Wizard of the North remains in the same seat."

    Clockwise round the three moving posts (North skipped): East to South,
    South to West, West to East. Over three duels North partners each of the
    others once (with three wizards, each wizard sits South, across from the
    Companion, once).
    """
    moved = list(posts)
    moved[SOUTH] = posts[EAST]
    moved[WEST] = posts[SOUTH]
    moved[EAST] = posts[WEST]
    return moved
