"""Tic-tac-toe's bit rules, compiled (numba): the one place lines, legal moves, moves and
results live.

Cell ``i`` (0..8 row-major from the top left) is bit ``i`` of a ``uint64`` word. A position is
two words, ``me`` (the marks of the side to move) and ``opp`` (the other side's, the last
mover's), plus ``to_move`` (0 when ``X``, the first player, moves next). Its *position index*
is ``me << CELLS | opp`` (``POSITION_BITS`` bits): the index of every per-position table (the
rules' single-game memo, the AIs' candidate tables in ``agents.tictactoe``).

Each function is compiled with ``cache=True``: called from Python it serves one game, and the
players' and env kernels call it inside their own compiled loops. The ``*_batch`` functions are
the loops over arrays that the batched rules use.
"""

from __future__ import annotations

import numpy as np

from boardgym.envs.games.compiled import ONE, ZERO, entry

SIZE = 3
CELLS = SIZE * SIZE
FULL = np.uint64((1 << CELLS) - 1)
POSITION_BITS = 2 * CELLS
"""A position index ``me << CELLS | opp`` has this many bits."""
LINES = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),  # rows
    (0, 3, 6), (1, 4, 7), (2, 5, 8),  # columns
    (0, 4, 8), (2, 4, 6),  # diagonals
)
LINE_BITS = np.array([sum(1 << cell for cell in line) for line in LINES], dtype=np.uint64)
"""The eight lines as words."""
SHIFT_MASK = np.uint64(63)
"""Keeps a shift inside a word whatever the action (an illegal one gives a meaningless but
defined word)."""


@entry("b1(u8)")
def has_line(bits: np.uint64) -> bool:
    """True when ``bits`` hold all three cells of one of the eight lines."""
    found = False
    for line in LINE_BITS:
        found |= bits & line == line
    return found


@entry("u8(u8, u8)")
def legal(me: np.uint64, opp: np.uint64) -> np.uint64:
    """The cells the side to move (owning ``me``) may mark: the empty ones, none once the
    last mover (owning ``opp``) holds a line. 0 exactly when the game is over (a full board
    has no empty cell)."""
    if has_line(opp):
        return ZERO
    return FULL ^ (me | opp)


@entry("Tuple((u8, u8, i8, u8))(u8, u8, i8, i8)")
def play(me: np.uint64, opp: np.uint64, to_move: int,
         action: int) -> tuple[np.uint64, np.uint64, int, np.uint64]:
    """``(me, opp, to_move, legal)`` after the side to move (owning ``me``) marks the cell
    ``action`` (legal there): the other side moves next, and ``legal`` is its ``legal``
    cells (0: the game is over)."""
    mover = me | (ONE << (np.uint64(action) & SHIFT_MASK))
    return opp, mover, 1 - to_move, legal(opp, mover)


@entry("i8(u8, i8, i8)")
def result(opp: np.uint64, to_move: int, side: int) -> int:
    """+1 if ``side`` (0 = ``X``) holds a line, -1 if the other side does, 0 otherwise (a
    draw, or a game not over): only the last mover (owning ``opp``; ``X`` when ``to_move`` is
    1) can hold one."""
    if not has_line(opp):
        return 0
    first_player = 1 if to_move == 1 else -1
    return first_player if side == 0 else -first_player


@entry("b1[:](u8[:])")
def has_line_batch(bits: np.ndarray) -> np.ndarray:
    """``has_line`` of each word."""
    out = np.empty(bits.shape[0], dtype=np.bool_)
    for i in range(bits.shape[0]):
        out[i] = has_line(bits[i])
    return out


@entry("u8[:](u8[:], u8[:])")
def legal_batch(me: np.ndarray, opp: np.ndarray) -> np.ndarray:
    """``legal`` of each game of a batch."""
    out = np.empty_like(me)
    for i in range(me.shape[0]):
        out[i] = legal(me[i], opp[i])
    return out


@entry("b1[:, ::1](u8[:], u8[:])")
def legal_mask_batch(me: np.ndarray, opp: np.ndarray) -> np.ndarray:
    """``(N, CELLS)`` bools: entry ``[i, a]`` is bit ``a`` of game ``i``'s ``legal``."""
    out = np.empty((me.shape[0], CELLS), dtype=np.bool_)
    for i in range(me.shape[0]):
        cells = legal(me[i], opp[i])
        for a in range(CELLS):
            out[i, a] = (cells >> np.uint64(a)) & ONE
    return out


@entry("void(u8[:], u8[:], i8[:], u8[:], i8[:])")
def play_batch(me: np.ndarray, opp: np.ndarray, to_move: np.ndarray, legal_cells: np.ndarray,
               actions: np.ndarray) -> None:
    """``play`` of each game of a batch, in place (``legal_cells`` gets each new ``legal``)."""
    for i in range(me.shape[0]):
        me[i], opp[i], to_move[i], legal_cells[i] = play(me[i], opp[i], to_move[i], actions[i])


@entry("i8[:](u8[:], i8[:], i8[:])")
def result_batch(opp: np.ndarray, to_move: np.ndarray, side: np.ndarray) -> np.ndarray:
    """``result`` of each game of a batch, for its ``side``."""
    out = np.empty(opp.shape[0], dtype=np.int64)
    for i in range(opp.shape[0]):
        out[i] = result(opp[i], to_move[i], side[i])
    return out
