"""A small seeded PRNG whose whole state is one integer.

Games keep ``Rng.state`` inside their State, so re-applying a match's action
log to its seed reproduces every state bit for bit. The generator is
SplitMix64 (Steele, Lea and Flood, 2014): 64 bits of state, passes BigCrush,
and trivially portable, which matters more here than speed. Python's own
``random.Random`` is not used because its state is 625 words and its
algorithms for ``randrange``/``shuffle`` are not promised stable across
Python versions.
"""

_MASK = (1 << 64) - 1


class Rng:
    """Deterministic random numbers. Load from a state, draw, store ``.state``."""

    __slots__ = ("state",)

    def __init__(self, state: int):
        self.state = state & _MASK

    @classmethod
    def from_seed(cls, seed: int | str) -> "Rng":
        if isinstance(seed, str):
            seed = int.from_bytes(seed.encode()[:16].ljust(8, b"\0"), "big")
        return cls(seed)

    def next64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform integer in ``range(n)`` (rejection sampling, no modulo bias)."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = _MASK - (_MASK + 1) % n
        while True:
            x = self.next64()
            if x <= limit:
                return x % n

    def chance(self, numerator: int, denominator: int) -> bool:
        """True with probability numerator/denominator."""
        return self.below(denominator) < numerator

    def choice(self, items):
        return items[self.below(len(items))]

    def shuffle(self, items: list) -> None:
        """Fisher-Yates, in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
