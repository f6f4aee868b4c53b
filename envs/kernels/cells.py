"""What the games' env kernels share: the state's fields as arrays they can change in place
(``writable``), the agent's side in a new game (``new_agent_side``), and the small boards'
byte writer: the bits of a word, one byte a cell, into a fresh output
array.

A step's observations and masks are ``uint8`` / ``bool`` arrays of one byte a cell (0 or 1),
sub-env after sub-env. A kernel writes each plane (or mask) as the bits of one word, bit
``k`` the ``k``-th cell (``put``), into the output seen as one flat byte array (``flat``,
``flat_bool``). The loop has no loads: LLVM turns it into vector shifts, a few bytes a cycle,
faster than spreading whole bytes through a table when rows do not start on a word.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from boardgym.envs.games.compiled import stream_draw
from boardgym.envs.settings import AGENT_SIDE
from boardgym.envs.vector_arguments import OPPONENT_FIRST, RANDOM_FIRST

ONE = np.uint64(1)
TOP_BIT = np.uint64(63)


def writable(state: Any, fields: Sequence[tuple[str, Any]]) -> tuple[Any, tuple[np.ndarray, ...]]:
    """``state`` (a named tuple) with its ``fields`` (``(name, dtype)`` pairs) as arrays
    the kernels can change in place: contiguous, writable and of those types (the same
    state when they already are), and those arrays in ``fields``' order."""
    arrays = tuple(np.require(getattr(state, name), dtype, ["C", "W"]) for name, dtype in fields)
    if any(new is not getattr(state, name) for new, (name, _) in zip(arrays, fields,
                                                                     strict=True)):
        state = state._replace(**{name: new for new, (name, _) in zip(arrays, fields,
                                                                      strict=True)})
    return state, arrays


@njit(cache=True, inline="always")
def new_agent_side(code: int, keys: np.ndarray, counters: np.ndarray, i: int) -> int:
    """The agent's side in sub-env ``i``'s new game from its first-player ``code``: for
    ``RANDOM_FIRST`` the top bit of the sub-env's next stream word (``counters[i]``
    advanced; 1 = the opponent first), else fixed by the code."""
    if code == RANDOM_FIRST:
        counters[i] += ONE
        return np.int64(stream_draw(keys[i], counters[i]) >> TOP_BIT)  # type: ignore[return-value]
    return 1 - AGENT_SIDE if code == OPPONENT_FIRST else AGENT_SIDE


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
