"""Sets (issue 25): what a Starter or Refill Set holds follows the rarity weights documented in
docs/rules/casting-stones.md ("Sets"), an opening reproduces from its recorded seed, a starter is opened once
however many requests race, refills follow the daily allowance and an operator's grants.

The statistical tests open 20,000 sets from the seeds 0 to 19,999 and compare what came out with the exact
expectation of the documented procedure (different stones, each drawn with a chance proportional to its
rarity's weight), computed here by dynamic programming over how many stones of each rarity were drawn. The
tolerance (docs/rules/casting-stones.md, "Sets"): every rarity's count within 4.5 standard deviations of its
expectation, and within each rarity the stones equally often (a chi-square test at p = 0.0001). The seeds are
fixed, so the outcome is the same on every run; the weights expected are read from the documentation's
table, and a procedure off by the doubling of one weight fails (tested below with the Chasers').
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import subprocess
import sys
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from service.games.casting_stones.catalogue import RARITIES, STONES
from service.games.casting_stones.collecting import PACKS, REFILL, STARTER, open_set
from service.games.casting_stones.collectors import STARS
from service.store.errors import NoSetLeft, SetOpenedBefore

from .conftest import new_store_player

RULES = Path(__file__).resolve().parents[2] / "docs" / "rules" / "casting-stones.md"
OPENINGS = 20_000
#: A rarity's count may stray this many standard deviations from its expectation.
Z_TOLERANCE = 4.5
#: The chi-square test of equal frequencies within a rarity: its p-value threshold, as a standard normal quantile.
CHI_Z = 3.719  # P(Z > 3.719) = 0.0001


def documented() -> dict[str, dict]:
    """The table of docs/rules/casting-stones.md ("Sets players open"): rarity -> stars, stones, weight."""
    rows = re.findall(r"^  \| (common|uncommon|rare|rare foil|chaser) \| (★+)[^|]*\| (\d+) \| (\d+) \|", RULES.read_text(),
                      re.M)
    return {r.replace(" ", "_"): {"stars": len(stars), "stones": int(n), "weight": int(w)} for r, stars, n, w in rows}


#: The weights as documented: what the generator is held to.
WEIGHTS = {rarity: row["weight"] for rarity, row in documented().items()}


def expected_counts(pool: list[str], draws: int, weights: dict[str, int]) -> dict[str, tuple[float, float]]:
    """Per rarity, the mean and variance of how many of ``draws`` different stones of ``pool`` are of that
    rarity, each draw weighted by its rarity's weight (the documented procedure), computed exactly."""
    tiers = [r for r in RARITIES if any(STONES[s].rarity == r for s in pool)]
    sizes = [sum(1 for s in pool if STONES[s].rarity == r) for r in tiers]

    @lru_cache(maxsize=None)
    def spread(taken: tuple[int, ...]) -> dict[tuple[int, ...], float]:
        """The distribution of the final counts per rarity, given ``taken`` so far."""
        if sum(taken) == draws:
            return {taken: 1.0}
        left = [(n - t) * weights[r] for r, n, t in zip(tiers, sizes, taken)]
        total = sum(left)
        out: dict[tuple[int, ...], float] = {}
        for i, weight in enumerate(left):
            if weight:
                after = taken[:i] + (taken[i] + 1,) + taken[i + 1:]
                for final, p in spread(after).items():
                    out[final] = out.get(final, 0.0) + p * weight / total
        return out

    finals = spread(tuple(0 for _ in tiers))
    moments = {}
    for i, rarity in enumerate(tiers):
        mean = sum(p * f[i] for f, p in finals.items())
        moments[rarity] = (mean, sum(p * f[i] ** 2 for f, p in finals.items()) - mean ** 2)
    return moments


def chi_square_limit(df: int) -> float:
    """The chi-square quantile at p = 0.0001 (Wilson and Hilferty's approximation)."""
    k = 2 / (9 * df)
    return df * (1 - k + CHI_Z * math.sqrt(k)) ** 3


def check_against(openings: list[list[str]], pool: list[str], draws: int, weights: dict[str, int]) -> None:
    moments = expected_counts(pool, draws, weights)
    drawn = Counter(s for stones in openings for s in stones)
    for rarity, (mean, variance) in moments.items():
        observed = sum(n for s, n in drawn.items() if STONES[s].rarity == rarity)
        z = (observed - len(openings) * mean) / math.sqrt(len(openings) * variance)
        assert abs(z) < Z_TOLERANCE, f"{rarity}: {observed} drawn, {len(openings) * mean:.0f} expected (z = {z:.1f})"
        of_rarity = [s for s in pool if STONES[s].rarity == rarity]
        if len(of_rarity) > 1:
            each = observed / len(of_rarity)
            chi = sum((drawn[s] - each) ** 2 / each for s in of_rarity)
            assert chi < chi_square_limit(len(of_rarity) - 1), f"{rarity}: stones unequally often (chi2 {chi:.0f})"


def test_the_weights_are_read_from_the_charts_rarity_column():
    """000, F: "The easiest to locate are listed as Common, followed by Uncommon, then Rare, Rare Foil, with black
    Chasers being the hardest to find of all" -- each stone's chance is its rarity's weight, the rarity read from
    the chart's stars (★ common, ★★ uncommon, ★★★★★ rare, rare foil on a 25, Chaser on a 50), and the weights
    fall in the book's order, Chasers rarest. The documented table is the data's, row for row."""
    table = documented()
    assert list(table) == list(RARITIES)
    assert WEIGHTS == PACKS["rarity_weights"]
    assert [WEIGHTS[r] for r in RARITIES] == sorted(WEIGHTS.values(), reverse=True)
    assert len(set(WEIGHTS.values())) == len(RARITIES)
    for rarity, row in table.items():
        assert row["stones"] == sum(1 for s in STONES.values() if s.rarity == rarity)
        assert row["stars"] == STARS[rarity]
    for stone in STONES.values():
        assert STARS[stone.rarity] == {"common": 1, "uncommon": 2}.get(stone.rarity, 5)
        if stone.rarity == "chaser":
            assert stone.number == 50
        if stone.rarity == "rare_foil":
            assert stone.number == 25


def test_20000_refills_follow_the_rarity_weights():
    """000: "'Refill Sets' contain 4 Casting Stones and 1 Casting Card"; drawn by rarity weight from all 125."""
    openings = [open_set(seed, REFILL) for seed in range(OPENINGS)]
    assert all(len(set(o["stones"])) == 4 and len(o["cards"]) == 1 for o in openings)
    assert all(o["cards"] == ["draco-malfoy"] for o in openings)  # the one card that is no starter card
    check_against([o["stones"] for o in openings], sorted(STONES), 4, WEIGHTS)


def test_20000_starters_follow_the_rarity_weights_within_each_colour():
    """000: "12 Casting Stones (2 Silver, 4 White, 6 Brown)", "2 Casting Cards (1 Double Potion, 1 Charms)"; no
    black Chaser. Within each colour, by rarity weight."""
    openings = [open_set(seed, STARTER) for seed in range(OPENINGS)]
    assert all(o["cards"] == ["double-potion", "charms"] and len(set(o["stones"])) == 12 for o in openings)
    for stone_type, count in PACKS["starter"]["stones"].items():
        pool = sorted(s for s in STONES if STONES[s].type == stone_type)
        check_against([[s for s in o["stones"] if STONES[s].type == stone_type] for o in openings], pool, count,
                      WEIGHTS)
    assert not any(STONES[s].type == "chaser" for o in openings for s in o["stones"])


def test_the_statistical_test_tells_a_doubled_chaser_weight():
    """The tolerance is tight enough to matter: drawn with the Chasers' weight doubled, 20,000 refills fail it."""
    openings = [open_set(seed, REFILL)["stones"] for seed in range(OPENINGS)]
    with pytest.raises(AssertionError, match="chaser"):
        check_against(openings, sorted(STONES), 4, {**WEIGHTS, "chaser": 2 * WEIGHTS["chaser"]})


def test_an_opening_reproduces_from_its_recorded_seed(client, new_player):
    """An opening's seed is explicit and recorded: the game's open_set(seed, kind) gives its contents again, and
    they are exactly what the collection gained."""
    _player, me = new_player()
    opened = []
    for kind in ("starter", "refill"):
        before = client.get("/v1/players/me/collection", headers=me).json()
        response = client.post("/v1/players/me/packs", json={"kind": kind}, headers=me)
        assert response.status_code == 201, response.text
        opening = response.json()["opening"]
        after = client.get("/v1/players/me/collection", headers=me).json()
        assert open_set(int(opening["seed"]), kind) == {"stones": opening["stones"], "cards": opening["cards"]}
        for key in ("stones", "cards"):
            gained = Counter({e["id"]: e["count"] for e in after[key]})
            gained.subtract({e["id"]: e["count"] for e in before[key]})
            assert +gained == Counter(opening[key])
        opened.append(opening)
    listed = client.get("/v1/players/me/packs", headers=me).json()
    assert [o["id"] for o in listed["openings"]] == [o["id"] for o in reversed(opened)]
    assert listed["openings"][0]["allowance"] == "daily" and listed["openings"][1]["allowance"] == "once"


@pytest.mark.anyio
async def test_a_starter_set_is_opened_once_by_20_racing_requests(stores):
    """The Starter Set: "once per player", atomically -- of 20 requests at once exactly one opens it."""
    _store, collections, _ = stores
    player = await new_store_player(collections)
    outcomes = await asyncio.gather(*(collections.open_set(player, "starter") for _ in range(20)),
                                    return_exceptions=True)
    opened = [o for o in outcomes if not isinstance(o, Exception)]
    assert len(opened) == 1 and all(isinstance(o, SetOpenedBefore) for o in outcomes if isinstance(o, Exception))
    owned = await collections.items(player)
    assert sum(owned["stones"].values()) == 12 and owned["cards"] == {"double-potion": 1, "charms": 1}
    assert len(await collections.redis.zrange(collections.openings_key(player), 0, -1)) == 1


@pytest.mark.anyio
async def test_refills_follow_the_daily_allowance_then_an_operators_grants(stores, settings, redis_url, key_prefix):
    """A documented allowance per UTC day (GRIMOIRE_REFILLS_PER_DAY, here 2), then sets an operator granted with
    `grimoire grant-refill`; none left: no_set_left with when the allowance comes back."""
    _store, collections, _ = stores
    collections.sets_per_day = 2
    player = await new_store_player(collections)
    outcomes = await asyncio.gather(*(collections.open_set(player, "refill") for _ in range(6)),
                                    return_exceptions=True)
    assert sum(not isinstance(o, Exception) for o in outcomes) == 2
    refused = next(o for o in outcomes if isinstance(o, Exception))
    assert isinstance(refused, NoSetLeft) and refused.next_at % 86_400_000 == 0
    env = {**os.environ, "REDIS_URL": redis_url, "GRIMOIRE_KEY_PREFIX": key_prefix, "GRIMOIRE_LOG_LEVEL": "WARNING"}
    run = subprocess.run([sys.executable, "-m", "service.cli", "grant-refill", player, "--count", "3"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "granted 3 refill" in run.stdout, run.stderr
    unknown = subprocess.run([sys.executable, "-m", "service.cli", "grant-refill", "no-such-player"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert unknown.returncode == 2 and "no player" in unknown.stderr
    view = await collections.collection(player)
    refill = next(s for s in view["sets"] if s["kind"] == "refill")
    assert refill == {"kind": "refill", "available": 3, "per_day": 2, "opened_today": 2, "granted": 3, "next_at": None}
    granted = [await collections.open_set(player, "refill") for _ in range(3)]
    assert [o["allowance"] for o, _ in granted] == ["grant"] * 3
    with pytest.raises(NoSetLeft):
        await collections.open_set(player, "refill")
    assert sum((await collections.items(player))["stones"].values()) == 5 * 4


def test_an_idempotency_key_opens_one_set(client, new_player):
    """A retried request (same Idempotency-Key) answers the first opening again and opens nothing more."""
    _player, me = new_player()
    first = client.post("/v1/players/me/packs", json={"kind": "refill"}, headers={**me, "Idempotency-Key": "r-1"})
    again = client.post("/v1/players/me/packs", json={"kind": "refill"}, headers={**me, "Idempotency-Key": "r-1"})
    assert first.status_code == 201 and again.status_code == 200
    assert again.json() == {"opening": first.json()["opening"], "duplicate": True}
    collection = client.get("/v1/players/me/collection", headers=me).json()
    assert collection["totals"]["stones"] == 4
    other = client.post("/v1/players/me/packs", json={"kind": "refill"}, headers={**me, "Idempotency-Key": "r-2"})
    assert other.status_code == 409 and other.json()["code"] == "no_set_left" and other.json()["next_at"] > 0
    assert client.post("/v1/players/me/packs", json={"kind": "booster"}, headers=me).json()["code"] == "unknown_set"
    assert client.post("/v1/players/me/packs", json={"kind": "starter"}).json()["code"] == "player_required"
