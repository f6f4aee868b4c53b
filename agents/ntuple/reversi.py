"""Reversi's n-tuple networks: the board, its layouts, and the afterstate kernels.

The bitboard's bit of a cell is the cell itself (``a1`` = 0, ``h8`` = 63), the symmetries
the 8 of the square. Layouts: ``edax`` (the default), the 12 pattern shapes of the Edax
program at each of their symmetric places: the 3x3 corner, the 2x5 corner, the edge with
its two X-squares, the edge block, rows and columns 2 to 4, the diagonals of 8 to 4 cells;
or ``snakes:N:L:SEED``. Cells have 3 codes (empty, own, other).

An afterstate is valued by the network unless the game is over after it: then by its result
(+1, 0, -1 for the mover), so the exact end beats any learned value.
"""

from __future__ import annotations

from math import ceil
from typing import Any

import numpy as np
from numba import njit, types

from boardgym.agents.ntuple.layouts import Board, squares
from boardgym.agents.ntuple.network import NET_TYPE, best_mask, new_afterstates, raw_value
from boardgym.envs.games.compiled import ONE, ZERO, entry, lowest_bit, popcount
from boardgym.envs.games.reversi_bits import CELLS, SIZE, flips, legal_moves

VALUES = (3,)
START_DISCS = 4
EDAX = (
    "a1 b1 a2 b2 c1 a3 c2 b3 c3", "a5 a4 a3 a2 a1 b2 b1 c1 d1 e1",
    "b2 a1 b1 c1 d1 e1 f1 g1 h1 g2", "a1 c1 d1 c2 d2 e2 f2 e1 f1 h1",
    "a2 b2 c2 d2 e2 f2 g2 h2", "a3 b3 c3 d3 e3 f3 g3 h3", "a4 b4 c4 d4 e4 f4 g4 h4",
    "a1 b2 c3 d4 e5 f6 g7 h8", "b1 c2 d3 e4 f5 g6 h7", "c1 d2 e3 f4 g5 h6", "d1 e2 f3 g4 h5",
    "d1 c2 b3 a4")
"""Edax's pattern shapes (``src/eval.c``), one placement each."""
LAYOUTS = {"edax": lambda board: [squares(shape) for shape in EDAX]}
DEFAULT_LAYOUT = "edax"
WIN_SCORE = np.inf


def board(env_kwargs: dict[str, Any]) -> Board:
    """The 8x8 board (Reversi has no board options)."""
    return Board(SIZE, SIZE, tuple(range(CELLS)), "d4")


def stage_bands(env_kwargs: dict[str, Any], stages: int) -> tuple[int, int]:
    """``(first, span)`` of ``stages`` equal bands of the 60 moves (an afterstate has 5 to
    64 discs)."""
    moves = CELLS - START_DISCS
    return START_DISCS + 1, ceil(moves / stages)


@njit(cache=True, inline="always")
def afterstate(me: np.uint64, opp: np.uint64,
               move: int) -> tuple[np.uint64, np.uint64, bool]:
    """``(mover's discs, other's discs, over)`` after the side owning ``me`` plays ``move``
    (``over``: neither side can move)."""
    bit = ONE << np.uint64(move)
    flipped = flips(me, opp, bit)
    own, other = me | bit | flipped, opp ^ flipped
    over = legal_moves(other, own) == ZERO and legal_moves(own, other) == ZERO
    return own, other, over


@njit(cache=True, inline="always")
def final_result(own: np.uint64, other: np.uint64) -> float:
    """+1, 0 or -1: the finished game's result for the owner of ``own``."""
    difference = popcount(own) - popcount(other)
    return 1.0 if difference > 0 else (-1.0 if difference < 0 else 0.0)


@njit(cache=True, inline="always")
def score(own: np.uint64, other: np.uint64, over: bool, net: tuple) -> float:  # type: ignore[type-arg]
    """An afterstate's score for its owner, ordered as its value: the network's sum before
    ``tanh``, or for a finished game +inf, 0 or -inf."""
    if over:
        result = final_result(own, other)
        return result * WIN_SCORE if result != 0.0 else 0.0
    return raw_value(own, other, ZERO, net)


@njit(cache=True, inline="always")
def afterstates(me: np.uint64, opp: np.uint64, legal: np.uint64, net: tuple,  # type: ignore[type-arg]
                found: tuple) -> int:  # type: ignore[type-arg]
    """Fill ``found`` (``network.new_afterstates``) with the afterstate and ``score`` of
    each legal move, in increasing order; returns their number."""
    count = 0
    bits = legal
    while bits:
        move = lowest_bit(bits)
        bits &= bits - ONE
        own, other, over = afterstate(me, opp, move)
        found[0][count], found[1][count], found[2][count] = move, own, other
        found[3][count], found[4][count] = over, score(own, other, over, net)
        count += 1
    return count


@entry(types.uint64[::1](types.uint64[::1], types.uint64[::1], types.uint64[::1], NET_TYPE))
def best_moves_batch(me: np.ndarray, opp: np.ndarray, legal: np.ndarray,
                     net: tuple) -> np.ndarray:  # type: ignore[type-arg]
    """The moves of the best afterstates (``afterstates``, ``network.best_mask``) of each
    game of a batch, as bits; 0 for a finished game."""
    out = np.zeros(me.shape[0], dtype=np.uint64)
    found = new_afterstates()
    for i in range(me.shape[0]):
        if legal[i] != ZERO:
            out[i] = best_mask(found, afterstates(me[i], opp[i], legal[i], net, found))
    return out


def candidates(net_arrays: tuple[Any, ...], state: Any) -> np.ndarray:
    """The ``ntuple:0`` candidates of a batched Reversi state."""
    return best_moves_batch(np.ascontiguousarray(state.me, dtype=np.uint64),
                            np.ascontiguousarray(state.opp, dtype=np.uint64),
                            np.ascontiguousarray(state.legal, dtype=np.uint64), net_arrays)



def search(state: Any, depth: int, rng: np.random.Generator, net: Any) -> Any:
    """The ``ntuple:D`` search (``D >= 1``) of the unfinished single ``state`` with the
    ``NTupleNet`` ``net``: ``agents.reversi_search.search`` (the ``alphabeta:D`` search: its
    move order, root draw, passes and exact endgame from ``ENDGAME_EMPTIES`` empty squares)
    with ``-value(opp, me, 0, net)`` at the leaves; its ``SearchResult``.

    Raises:
        ValueError: ``depth`` out of range, or a finished game.
    """
    from boardgym.agents import reversi_search

    return reversi_search.search(state, depth, rng, net.arrays)


def search_many(state: Any, depth: int, rngs: Any, net: Any) -> np.ndarray:
    """``search(unbatch(state, k), depth, rngs[k], net).move`` for each game ``k`` of the
    batched ``state``, in compiled loops (``agents.reversi_strong.search_many``): the same
    moves, and each generator left as that game-by-game loop leaves it.

    Raises:
        ValueError: ``depth`` out of range, a finished game, not one numpy Generator per
            game.
    """
    from boardgym.agents import reversi_strong

    return reversi_strong.search_many(state, depth, rngs, net.arrays)
