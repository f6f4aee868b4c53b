"""Four-in-a-row's n-tuple networks: the board, its layouts, and the afterstate kernels.

A cell (row 0 on top) is bit ``column * (rows + 1) + rows - 1 - row`` of the bitboard
(``envs.games.four_in_a_row_bits``), the symmetry the left-right mirror. With 4 codes
(the default) an empty cell where the next token of its column lands is marked apart from
the empty cells above it. Layouts: ``thill70`` (the default on the 7x6 board), the 70
8-tuples of Thill, Bagheri, Koch and Konen's Connect Four agent (CIG 2014), or
``snakes:N:L:SEED`` (any board).

An afterstate that ends the game is valued by its result (+1 a line for the mover, 0 a full
board), the others by the network.
"""

from __future__ import annotations

from math import ceil
from typing import Any

import numpy as np
from numba import njit, types

from boardgym.agents.ntuple.layouts import Board, Tuples
from boardgym.agents.ntuple.network import NET_TYPE, best_mask, new_afterstates, raw_value
from boardgym.envs.games import four_in_a_row as rules
from boardgym.envs.games.compiled import ONE, ZERO, entry, lowest_bit
from boardgym.envs.games.four_in_a_row_bits import BOARD, COLUMN_MASKS, has_line, landing

VALUES = (3, 4)
THILL_ROWS, THILL_COLUMNS = 6, 7
THILL70 = (
    (0, 6, 7, 12, 13, 14, 19, 21), (13, 18, 19, 20, 21, 26, 27, 33), (1, 3, 4, 6, 7, 8, 9, 10),
    (7, 8, 9, 12, 15, 19, 25, 30), (4, 5, 9, 10, 11, 15, 16, 17), (1, 2, 3, 8, 9, 10, 16, 17),
    (3, 8, 9, 10, 11, 14, 15, 16), (0, 1, 2, 6, 8, 12, 13, 18), (25, 26, 27, 32, 33, 37, 38, 39),
    (3, 4, 8, 9, 11, 14, 15, 21), (2, 3, 4, 8, 9, 14, 15, 20), (18, 19, 24, 30, 31, 32, 36, 37),
    (3, 4, 8, 9, 10, 14, 15, 16), (5, 10, 11, 16, 17, 21, 22, 27), (4, 10, 15, 20, 21, 22, 27, 28),
    (18, 24, 25, 30, 31, 32, 37, 38), (11, 17, 21, 23, 27, 28, 33, 39),
    (21, 25, 26, 27, 32, 34, 35, 41), (22, 25, 26, 27, 30, 32, 33, 37),
    (4, 10, 11, 16, 20, 21, 22, 23), (0, 6, 7, 8, 12, 13, 14, 15),
    (17, 23, 28, 29, 32, 33, 34, 35), (0, 6, 7, 12, 18, 25, 32, 38), (2, 3, 4, 5, 8, 9, 10, 11),
    (27, 32, 33, 34, 37, 38, 39, 40), (4, 10, 16, 21, 26, 32, 33, 38),
    (0, 6, 7, 12, 13, 20, 27, 28), (0, 6, 12, 19, 25, 31, 32, 33), (1, 2, 6, 7, 13, 14, 15, 20),
    (1, 2, 5, 8, 11, 15, 16, 17), (13, 14, 16, 18, 21, 22, 23, 24),
    (2, 3, 9, 10, 11, 16, 17, 22), (15, 16, 17, 20, 22, 23, 25, 31),
    (15, 16, 17, 21, 22, 23, 28, 29), (24, 26, 30, 31, 32, 33, 36, 37),
    (12, 13, 18, 19, 20, 26, 27, 33), (1, 2, 3, 8, 9, 13, 14, 21),
    (13, 14, 18, 20, 24, 25, 31, 37), (14, 15, 16, 21, 26, 31, 38, 39),
    (1, 2, 6, 7, 12, 13, 14, 20), (4, 5, 10, 11, 17, 22, 23, 29), (2, 4, 5, 7, 9, 10, 14, 19),
    (5, 9, 10, 11, 15, 16, 21, 27), (1, 2, 3, 7, 8, 13, 14, 20), (1, 2, 8, 9, 14, 15, 21, 26),
    (22, 23, 29, 33, 34, 35, 38, 41), (13, 18, 19, 24, 25, 26, 31, 32),
    (27, 28, 29, 31, 32, 33, 37, 38), (10, 14, 15, 16, 17, 20, 21, 23),
    (4, 5, 9, 10, 15, 20, 21, 22), (13, 20, 25, 26, 27, 32, 34, 41),
    (30, 31, 33, 34, 36, 37, 38, 39), (11, 16, 23, 28, 34, 35, 40, 41),
    (3, 4, 10, 11, 14, 15, 16, 17), (15, 20, 21, 22, 26, 32, 33, 39),
    (18, 19, 25, 26, 31, 32, 34, 39), (4, 9, 11, 15, 16, 22, 23, 29),
    (26, 27, 31, 32, 33, 37, 38, 39), (20, 27, 28, 33, 34, 35, 40, 41),
    (1, 2, 7, 14, 20, 27, 28, 29), (8, 9, 10, 15, 16, 17, 22, 23),
    (9, 14, 15, 20, 21, 22, 27, 32), (1, 2, 3, 6, 7, 8, 9, 13), (10, 14, 15, 16, 20, 23, 25, 26),
    (0, 1, 2, 6, 7, 8, 13, 14), (1, 6, 7, 12, 13, 20, 26, 27), (8, 14, 20, 25, 26, 31, 33, 38),
    (20, 21, 26, 27, 28, 33, 35, 40), (2, 3, 4, 8, 9, 11, 16, 21), (1, 2, 3, 4, 5, 6, 11, 12))
"""Thill's tuples as published: cell ``column * 6 + row``, row 0 at the bottom."""


def _thill70(board: Board) -> Tuples:
    if (board.rows, board.columns) != (THILL_ROWS, THILL_COLUMNS):
        raise ValueError(f"layout 'thill70' is for the 7x6 board, not {board.columns} columns "
                         f"x {board.rows} rows; use snakes:N:L:SEED (e.g. snakes:70:8:0)")
    return [[(board.rows - 1 - cell % THILL_ROWS) * board.columns + cell // THILL_ROWS
             for cell in cells] for cells in THILL70]


LAYOUTS = {"thill70": _thill70}
DEFAULT_LAYOUT = "thill70"


def board(env_kwargs: dict[str, Any]) -> Board:
    """The board of ``env_kwargs`` (``rows``, ``columns``, ``connect``)."""
    geom = rules.initial_state(**env_kwargs).geom
    rows, columns = geom.rows, geom.columns
    bits = tuple(column * (rows + 1) + rows - 1 - row
                 for row in range(rows) for column in range(columns))
    return Board(rows, columns, bits, "mirror")


def words(env_kwargs: dict[str, Any]) -> np.ndarray:
    """The rules' table of the board (``four_in_a_row_bits.board_words``)."""
    return rules.initial_state(**env_kwargs).geom.words  # type: ignore[no-any-return]


def stage_bands(env_kwargs: dict[str, Any], stages: int) -> tuple[int, int]:
    """``(first, span)`` of ``stages`` equal bands of the board's moves."""
    cells = board(env_kwargs).cells
    return 1, ceil(cells / stages)


@njit(cache=True, inline="always")
def marks(own: np.uint64, other: np.uint64, words: np.ndarray,
          net: tuple) -> np.uint64:  # type: ignore[type-arg]
    """The marked cells of a 4-code network: where each column's next token lands."""
    return landing(own | other, words) if net[4][0] == 4 else ZERO


@njit(cache=True, inline="always")
def afterstates(me: np.uint64, opp: np.uint64, legal: np.uint64, words: np.ndarray,
                net: tuple, found: tuple) -> int:  # type: ignore[type-arg]
    """Fill ``found`` (``network.new_afterstates``) with the afterstate of each playable
    column (bits of ``legal``), in increasing order, and its score: +inf for a line, 0 for a
    full board, else the network's sum before ``tanh``; returns their number."""
    count = 0
    drops = landing(me | opp, words)
    bits = legal
    while bits:
        column = lowest_bit(bits)
        bits &= bits - ONE
        own = me | (drops & words[COLUMN_MASKS + column])
        won = has_line(own, words)
        over = won or (own | opp) == words[BOARD]
        found[0][count], found[1][count], found[2][count], found[3][count] = \
            column, own, opp, over
        found[5][count] = marks(own, opp, words, net)
        found[4][count] = np.inf if won else (
            0.0 if over else raw_value(own, opp, found[5][count], net))
        count += 1
    return count


@entry(types.uint64[::1](types.uint64[::1], types.uint64[::1], types.uint64[::1],
                         types.uint64[::1], NET_TYPE))
def best_moves_batch(me: np.ndarray, opp: np.ndarray, legal: np.ndarray, words: np.ndarray,
                     net: tuple) -> np.ndarray:  # type: ignore[type-arg]
    """The columns of the best afterstates of each game of a batch, as bits (0 for a
    finished game)."""
    out = np.zeros(me.shape[0], dtype=np.uint64)
    found = new_afterstates()
    for i in range(me.shape[0]):
        if legal[i] != ZERO:
            out[i] = best_mask(found, afterstates(me[i], opp[i], legal[i], words, net, found))
    return out


def candidates(net_arrays: tuple[Any, ...], state: Any) -> np.ndarray:
    """The ``ntuple:0`` candidates of a batched four-in-a-row state."""
    return best_moves_batch(np.ascontiguousarray(state.me, dtype=np.uint64),
                            np.ascontiguousarray(state.opp, dtype=np.uint64),
                            np.ascontiguousarray(rules.legal_bits(state), dtype=np.uint64),
                            state.geom.words, net_arrays)


def search(state: Any, depth: int, rng: np.random.Generator, net: Any) -> Any:
    """The ``ntuple:D`` search (``D >= 1``) of the unfinished single ``state`` with the
    ``NTupleNet`` ``net`` of its board: ``agents.four_in_a_row_search.search`` (the
    ``alphabeta:D`` search: its move order, root draw and exact phase from
    ``EXACT_EMPTIES`` empty cells) with ``-value(opp, me, marks, net)`` at the leaves; its
    ``SearchResult``.

    Raises:
        ValueError: ``depth`` < 1, or a finished game.
    """
    from boardgym.agents import four_in_a_row_search

    return four_in_a_row_search.search(state, depth, rng, net=net.arrays)


def search_many(state: Any, depth: int, rngs: Any, net: Any) -> np.ndarray:
    """``search(unbatch(state, k), depth, rngs[k], net).move`` for each game ``k`` of the
    batched ``state``, in compiled loops (``agents.four_in_a_row_strong.search_many``): the
    same moves, and each generator left as that game-by-game loop leaves it.

    Raises:
        ValueError: ``depth`` < 1, a finished game, not one numpy Generator per game.
    """
    from boardgym.agents import four_in_a_row_strong

    return four_in_a_row_strong.search_many(state, depth, rngs, net=net.arrays)
