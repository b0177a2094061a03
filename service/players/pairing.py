"""The quick-match pairing policy: how far apart in rating two waiting players may be.

A player waiting ``t`` seconds accepts opponents whose rating (``mu``, service/players/ratings.py)
is within ``window(t) = min(BASE + PER_SECOND * t, MAX)`` of theirs, and a group forms only
when every member accepts every other's distance from the longest-waiting one: similar
strengths first, anyone after ``(MAX - BASE) / PER_SECOND`` seconds (a minute). The store
applies it atomically in service/store/pairing.lua, with these numbers as arguments.
"""

#: Rating points (openskill mu: a newcomer is 25, sigma 8.3) accepted at once, gained per second waited, at most.
BASE = 3.0
PER_SECOND = 0.5
MAX = 33.0
#: Seats a quick match may have (games have 2 to 4 seats).
MAX_SEATS = 4


def window(waited_seconds: float) -> float:
    return min(BASE + PER_SECOND * max(waited_seconds, 0.0), MAX)
