"""The byte writer the small boards' env kernels share: the bits of a word, one byte a cell,
into a fresh output array.

A step's observations and masks are ``uint8`` / ``bool`` arrays of one byte a cell (0 or 1),
sub-env after sub-env. A kernel writes each plane (or mask) as the bits of one word, bit
``k`` the ``k``-th cell (``put``), into the output seen as one flat byte array (``flat``,
``flat_bool``). The loop has no loads: LLVM turns it into vector shifts, a few bytes a cycle,
faster than spreading whole bytes through a table when rows do not start on a word.
"""

from __future__ import annotations

import numpy as np
from numba import njit

ONE = np.uint64(1)


@njit(cache=True, inline="always")
def flat(cells: np.ndarray) -> np.ndarray:
    """The C-contiguous ``uint8`` array ``cells`` as one flat array (a view)."""
    return cells.reshape(cells.size)


@njit(cache=True, inline="always")
def flat_bool(cells: np.ndarray) -> np.ndarray:
    """The C-contiguous ``bool`` array ``cells`` as one flat ``uint8`` array (a view)."""
    return cells.reshape(cells.size).view(np.uint8)


@njit(cache=True, inline="always")
def put(out: np.ndarray, at: int, bits: np.uint64, count: int) -> int:
    """Write the ``count`` low bits of ``bits`` (bit ``k`` into ``out[at + k]``, 0 or 1);
    the index after them."""
    for k in range(count):
        out[at + k] = (np.uint64(bits) >> np.uint64(k)) & ONE
    return at + count


__all__ = ["flat", "flat_bool", "put"]
