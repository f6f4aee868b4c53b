"""The vector env's random numbers: one seed, one counter-based stream and one generator per
sub-env (the rule is in ``envs.vector``'s module docstring, "Random streams").

Draw ``k`` of sub-env ``i``'s stream is the 64-bit word ``splitmix64(splitmix64(seed_i) + (k +
1) * golden_gamma)``: it depends on that sub-env's seed and draw count alone, so a sub-env's
games do not depend on how many sub-envs there are. The generator
``np.random.default_rng(seed_i)`` serves players without a batched twin and samplers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boardgym.envs.settings import is_int

GOLDEN_GAMMA = np.uint64(0x9E37_79B9_7F4A_7C15)
MIX_1 = np.uint64(0xBF58_476D_1CE4_E5B9)
MIX_2 = np.uint64(0x94D0_49BB_1331_11EB)
TOP_BIT = np.uint64(63)
SEED_LIMIT = 2 ** 64
"""Seeds are ints in ``[0, SEED_LIMIT)``: the stream keys are 64-bit words."""
ENTROPY_BOUND = 2 ** 63


def mix(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser (a bijection on uint64 with good avalanche)."""
    z = (z ^ (z >> np.uint64(30))) * MIX_1
    z = (z ^ (z >> np.uint64(27))) * MIX_2
    return z ^ (z >> np.uint64(31))


def stream_draw(keys: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """Draw number ``counters`` of the streams keyed ``keys`` (see the module docstring)."""
    return mix(keys + counters * GOLDEN_GAMMA)


def sub_env_seeds(seed: Any, n: int) -> list[int]:
    """One seed per sub-env: ``seed + i``, the n seeds of a list, or fresh entropy (None).

    Raises:
        ValueError: a seed that is not an int in ``[0, 2**64)`` (``1.5``, ``2**64``, ``"3"``),
            or a list of the wrong length.
    """
    if seed is None:
        return [int(s) for s in np.random.default_rng().integers(ENTROPY_BOUND, size=n)]
    many = isinstance(seed, (list, tuple, np.ndarray))
    values = list(seed) if many else [int(seed) + i if is_int(seed) else seed for i in range(n)]
    if len(values) != n or not all(is_int(v) and 0 <= v < SEED_LIMIT for v in values):
        raise ValueError(f"seed must be None, an int in [0, 2**64 - {n}], or a list of {n} "
                         f"ints in [0, 2**64) (one per sub-env); got {seed!r}")
    return [int(v) for v in values]


class SubEnvStreams:
    """The random numbers of N sub-envs seeded ``seeds`` (one each).

    Args:
        seeds: one int in ``[0, 2**64)`` per sub-env (``sub_env_seeds`` checks them).
    """

    def __init__(self, seeds: list[int]) -> None:
        self.seeds = seeds
        self._keys = mix(np.array(seeds, dtype=np.uint64))
        self._counters = np.zeros(len(seeds), dtype=np.uint64)
        """How many draws each sub-env's stream has given."""
        self._rngs: dict[int, np.random.Generator] = {}

    def draws(self, index: np.ndarray) -> np.ndarray:
        """The next uniform ``uint64`` draw of each sub-env in ``index`` (its stream advances)."""
        counters = self._counters[index] + np.uint64(1)
        self._counters[index] = counters
        return stream_draw(self._keys[index], counters)

    def draws_where(self, moving: np.ndarray) -> np.ndarray:
        """``draws`` of the sub-envs where ``moving``, in a whole-batch array: only their
        streams advance, and the other entries are no draws (not to be used)."""
        self._counters += moving
        return stream_draw(self._keys, self._counters)

    def sides(self, index: np.ndarray) -> np.ndarray:
        """The agent's side (0 or 1) in new games ``index``: each one's next draw's top bit
        (1: the opponent moves first)."""
        return (self.draws(index) >> TOP_BIT).astype(np.int64)

    def rng(self, i: int) -> np.random.Generator:
        """Sub-env ``i``'s generator, ``np.random.default_rng(seed_i)`` (made on first use)."""
        rng = self._rngs.get(i)
        if rng is None:
            rng = self._rngs[i] = np.random.default_rng(self.seeds[i])
        return rng


__all__ = ["SEED_LIMIT", "SubEnvStreams", "mix", "stream_draw", "sub_env_seeds"]
