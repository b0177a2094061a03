"""Ratings: openskill's Plackett-Luce model, per game and variant.

Why openskill (docs/api.md, "Ratings"): it rates 2 to 4 players and teams in one
model (Glicko-2 and Elo only rate pairs), handles ties and partial orders, is
maintained and has no dependencies beyond the standard library. Plackett-Luce
is its default and the one its authors recommend for free-for-all and team play.

A rating is ``(mu, sigma)``: the estimate and its uncertainty. Players are
ranked on the conservative ``ordinal = mu - 3 * sigma`` (about 99.7% of the time
the player is at least this strong), so a newcomer with one lucky win does not
top a leaderboard. A rating is *provisional* until :data:`PROVISIONAL_GAMES`
rated matches of that game and variant have been played.

How a finished match ranks its players (:func:`standings`):

* the result's ``winners`` share first place and everyone else shares second;
  a result without winners (a draw, a turn limit) is a tie for all;
* a player who abandoned the match (left its seat, or lost on time) is ranked
  below everyone who did not, whatever the board says: abandoning loses;
* bots and anonymous seats are not rated; a match with fewer than two rated
  players changes nobody's rating.
"""

from __future__ import annotations

from dataclasses import dataclass

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
DEFAULT_MU = MODEL.mu
DEFAULT_SIGMA = MODEL.sigma
PROVISIONAL_GAMES = 5


@dataclass(frozen=True)
class Rating:
    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA

    @property
    def ordinal(self) -> float:
        """The conservative rating leaderboards rank on: ``mu - 3 sigma``."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True)
class Standing:
    player: str
    rank: int  # 1 is first; equal ranks tie
    outcome: str  # "win", "loss" or "draw", for the profile's counts


def standings(result: dict | None, seated: dict[int, str], abandoned: dict[int, str]) -> list[Standing]:
    """Each rated player's place: ``seated`` maps seat -> player of the seats bound to players at the end,
    ``abandoned`` seat -> player of the seats whose player left the match or lost on time.

    The outcome counted on the profile: abandoning is a loss; else a tie for all is a draw, first place
    wins and the others lose."""
    winners = set((result or {}).get("winners") or [])
    quitters = set(abandoned.values())
    ranks: dict[str, int] = {}
    for seat, player in sorted(seated.items()):
        if player not in quitters and player not in ranks:
            ranks[player] = 1 if not winners or seat in winners else 2
    if ranks and min(ranks.values()) == 2:  # every winner abandoned: the rest share first place
        ranks = {p: 1 for p in ranks}
    for player in abandoned.values():
        ranks.setdefault(player, 3 if ranks.keys() - quitters else 1)
    tie = len(set(ranks.values())) <= 1
    return [Standing(p, r, "loss" if p in quitters else "draw" if tie else "win" if r == 1 else "loss")
            for p, r in ranks.items()]


def rate(ratings: dict[str, Rating], places: list[Standing]) -> dict[str, Rating]:
    """New ratings of the players in ``places`` (each a team of one), from their ratings before."""
    if len(places) < 2:
        return {s.player: ratings[s.player] for s in places}
    teams = [[MODEL.create_rating([ratings[s.player].mu, ratings[s.player].sigma])] for s in places]
    rated = MODEL.rate(teams, ranks=[s.rank for s in places])
    return {s.player: Rating(team[0].mu, team[0].sigma) for s, team in zip(places, rated)}
