"""Tic-tac-toe's n-tuple networks: the board, its layouts, and the afterstate kernels.

A cell's bit is the cell (0..8, row-major from the top left), the symmetries the 8 of the
square, 3 codes a cell. Layouts: ``board`` (the default), one tuple of all 9 cells, an exact
table of every position; ``lines``, a row, the middle row and a diagonal (the 8 lines under
the symmetries); or ``snakes:N:L:SEED``. An afterstate that ends the game is valued by its
result (+1 a line for the mover, 0 a full board).
"""

from __future__ import annotations

from math import ceil
from typing import Any

import numpy as np
from numba import njit, types

from boardgym.agents.ntuple.layouts import Board
from boardgym.agents.ntuple.network import NET_TYPE, best_mask, new_afterstates, raw_value
from boardgym.envs.games import tictactoe as rules
from boardgym.envs.games.compiled import ONE, ZERO, entry, lowest_bit
from boardgym.envs.games.tictactoe_bits import CELLS, FULL, SIZE, has_line

VALUES = (3,)
LAYOUTS = {"board": lambda board: [list(range(CELLS))],
           "lines": lambda board: [[0, 1, 2], [3, 4, 5], [0, 4, 8]]}
DEFAULT_LAYOUT = "board"


def board(env_kwargs: dict[str, Any]) -> Board:
    """The 3x3 board (tic-tac-toe has no board options)."""
    return Board(SIZE, SIZE, tuple(range(CELLS)), "d4")


def stage_bands(env_kwargs: dict[str, Any], stages: int) -> tuple[int, int]:
    """``(first, span)`` of ``stages`` equal bands of the 9 moves."""
    return 1, ceil(CELLS / stages)


@njit(cache=True, inline="always")
def afterstates(me: np.uint64, opp: np.uint64, legal: np.uint64, net: tuple,  # type: ignore[type-arg]
                found: tuple) -> int:  # type: ignore[type-arg]
    """Fill ``found`` (``network.new_afterstates``) with the afterstate of each empty cell
    of ``legal``, in increasing order, and its score: +inf for a line, 0 for a full board,
    else the network's sum before ``tanh``; returns their number."""
    count = 0
    bits = legal
    while bits:
        cell = lowest_bit(bits)
        bits &= bits - ONE
        own = me | (ONE << np.uint64(cell))
        won = has_line(own)
        over = won or (own | opp) == FULL
        found[0][count], found[1][count], found[2][count], found[3][count] = \
            cell, own, opp, over
        found[4][count] = np.inf if won else (0.0 if over else raw_value(own, opp, ZERO, net))
        count += 1
    return count


@entry(types.uint64[::1](types.uint64[::1], types.uint64[::1], types.uint64[::1], NET_TYPE))
def best_moves_batch(me: np.ndarray, opp: np.ndarray, legal: np.ndarray,
                     net: tuple) -> np.ndarray:  # type: ignore[type-arg]
    """The cells of the best afterstates of each game of a batch, as bits (0 for a
    finished game)."""
    out = np.zeros(me.shape[0], dtype=np.uint64)
    found = new_afterstates()
    for i in range(me.shape[0]):
        if legal[i] != ZERO:
            out[i] = best_mask(found, afterstates(me[i], opp[i], legal[i], net, found))
    return out


def candidates(net_arrays: tuple[Any, ...], state: Any) -> np.ndarray:
    """The ``ntuple:0`` candidates of a batched tic-tac-toe state."""
    return best_moves_batch(np.ascontiguousarray(state.me, dtype=np.uint64),
                            np.ascontiguousarray(state.opp, dtype=np.uint64),
                            np.ascontiguousarray(rules.action_bits(state), dtype=np.uint64),
                            net_arrays)


def search(state: Any, depth: int, rng: np.random.Generator, net: Any) -> Any:
    """The ``ntuple:D`` search (``D >= 1``) of the unfinished ``state`` with the
    ``NTupleNet`` ``net``: ``agents.search.search`` over the rules alone (the generic
    ``alphabeta:D``: legal order, the result of finished games) with ``-value(opp, me, 0,
    net)`` at the leaves; its ``SearchResult``.

    Raises:
        ValueError: ``depth`` < 1, or a finished game.
    """
    from boardgym.agents.ntuple.network import values_batch
    from boardgym.agents.search import Heuristics
    from boardgym.agents.search import search as generic_search

    arrays, no_marks = net.arrays, np.zeros(1, dtype=np.uint64)

    def leaf_value(position: Any) -> float:
        """Minus the network's value of ``position`` for the side that just moved."""
        own = np.array([position.opp], dtype=np.uint64)
        other = np.array([position.me], dtype=np.uint64)
        return -float(values_batch(own, other, no_marks, arrays)[0])

    return generic_search(state, Heuristics(rules=rules, evaluate=leaf_value), depth, rng)
