"""Four-in-a-row's bit rules, compiled (numba): the one place the drop and line rules live.

The layout is ``envs.games.four_in_a_row``'s: column ``c`` owns bits ``c * (rows + 1)``
(bottom cell) to ``c * (rows + 1) + rows - 1`` (top cell), and bit ``c * (rows + 1) + rows``
is an always-empty sentinel. Every function takes ``uint64`` words and the board size's
``words`` table (``board_words(geom)``), so one compiled function serves every board size of
the rules (rows, columns >= 4, connect 2..max(rows, columns), ``(rows + 1) * columns <= 64``).
Called from Python they serve one game (the rules' functions on ints); the players', solvers'
and env kernels call them inside their own compiled loops. The ``*_batch`` functions are the
loops over arrays that the batched rules use.

The ``words`` table (``uint64``), by index:

- ``BOTTOM``: one bit at the bottom of every column; ``BOARD``: every playable cell;
  ``TOP``: the top playable cell of every column.
- ``ROWS``, ``COLUMNS``, ``HEIGHT`` (``rows + 1``, the bit distance between columns).
- ``STEPS``: how many run shifts each line direction has (``has_line``).
- ``RUN_SHIFTS + direction * MAX_STEPS + k``: the ``k``-th shift that doubles runs towards
  ``connect`` in a direction (vertical, horizontal, the two diagonals), for ``k < STEPS``;
  0 (which changes no run) for the ``k >= STEPS``. A direction in which no line fits the
  64-bit word (a shift of 64 or more) gets 63 for every ``k``: two such steps leave no run.
- ``COLUMN_MASKS + c``: the playable cells of column ``c``; ``COLUMN_TOPS + c``: its top
  cell; both 0 for ``c >= COLUMNS`` up to ``MAX_COLUMNS``.

The loops run over every ``MAX_STEPS`` and ``MAX_COLUMNS`` entry, so they unroll and the
batch loops vectorise.
"""

from __future__ import annotations

from functools import cache
from typing import Protocol

import numpy as np
from numba import njit

from boardgym.envs.games.compiled import ONE, ZERO, entry

BOTTOM, BOARD, TOP, ROWS, COLUMNS, HEIGHT, STEPS = range(7)
DIRECTIONS = 4
MAX_STEPS = 4
"""Run shifts per direction for the longest line that fits (connect 15: 1, 2, 4, 7)."""
MAX_COLUMNS = 12
"""The most columns a board of rows >= 4 has: ``5 * 12 <= 64``."""
RUN_SHIFTS = 7
COLUMN_MASKS = RUN_SHIFTS + DIRECTIONS * MAX_STEPS
COLUMN_TOPS = COLUMN_MASKS + MAX_COLUMNS
TABLE_SIZE = COLUMN_TOPS + MAX_COLUMNS
WORD_BITS = 64
NO_RUN_SHIFT = WORD_BITS - 1


class BoardSize(Protocol):
    """What ``board_words`` reads of a ``four_in_a_row.Geometry``."""

    rows: int
    columns: int
    connect: int


def doubling_steps(connect: int) -> tuple[int, ...]:
    """The lengths added at each step when runs of 1 double up to ``connect`` (runs of 2 from
    runs of 1, then 4 from 2, ...): ``(1, 2)`` for 4, ``(1, 2, 1)`` for 5, ``()`` for 1."""
    steps, length = [], 1
    while length < connect:
        steps.append(min(length, connect - length))
        length += steps[-1]
    return tuple(steps)


@cache
def board_words(geom: BoardSize) -> np.ndarray:
    """The ``words`` table of a board size (see the module docstring), built once per size.

    The array is shared: read it, never write it.
    """
    rows, columns = geom.rows, geom.columns
    height = rows + 1
    steps = doubling_steps(geom.connect)
    if len(steps) > MAX_STEPS or columns > MAX_COLUMNS or height * columns > WORD_BITS:
        raise ValueError(f"a {rows}x{columns} connect {geom.connect} board does not fit "
                         "the 64-bit board")
    column = (1 << rows) - 1
    words = np.zeros(TABLE_SIZE, dtype=np.uint64)
    words[BOTTOM] = sum(1 << (c * height) for c in range(columns))
    words[BOARD] = sum(column << (c * height) for c in range(columns))
    words[TOP] = sum(1 << (c * height + rows - 1) for c in range(columns))
    words[ROWS], words[COLUMNS], words[HEIGHT], words[STEPS] = rows, columns, height, len(steps)
    for direction, shift in enumerate((1, height, height - 1, height + 1)):
        shifts = [step * shift for step in steps]
        fits = all(amount < WORD_BITS for amount in shifts)
        for k in range(MAX_STEPS):
            words[RUN_SHIFTS + direction * MAX_STEPS + k] = \
                (shifts[k] if k < len(shifts) else 0) if fits else NO_RUN_SHIFT
    for c in range(columns):
        words[COLUMN_MASKS + c] = column << (c * height)
        words[COLUMN_TOPS + c] = 1 << (c * height + rows - 1)
    return words


@entry("b1(u8, u8[::1])", inline="always")
def has_line(bits: np.uint64, words: np.ndarray) -> bool:
    """True when ``bits`` hold ``connect`` cells in a row in any direction.

    Per direction, the cells starting runs double in length at each step (runs of 2 from runs
    of 1, then 4 from 2, ...), by the ``RUN_SHIFTS``; a line is left where a run remains.
    """
    starts = ZERO
    for direction in range(DIRECTIONS):
        run = bits
        for k in range(MAX_STEPS):
            run &= run >> words[RUN_SHIFTS + direction * MAX_STEPS + k]
        starts |= run
    return starts != ZERO


@entry("u8(u8, u8[::1])", inline="always")
def landing(filled: np.uint64, words: np.ndarray) -> np.uint64:
    """The drop rule: the cell where a token dropped in each column lands, given the
    ``filled`` cells (none for a full column). AND with a column's mask for that column."""
    return (filled + words[BOTTOM]) & words[BOARD]


@entry("u8(u8, u8, b1, u8[::1])", inline="always")
def legal_columns(me: np.uint64, opp: np.uint64, won: bool, words: np.ndarray) -> np.uint64:
    """The playable columns as bits (bit ``c`` for column ``c``): those whose top cell is
    empty; none once the game is over (``won``; a full board has none anyway)."""
    tops = (words[TOP] & ~(me | opp)) >> (words[ROWS] - ONE)  # column c's at bit c * h
    height = words[HEIGHT]
    columns = ZERO
    for c in range(MAX_COLUMNS):  # none left past the board's columns
        columns |= (tops & ONE) << np.uint64(c)
        tops >>= height
    return ZERO if won else columns


@njit(cache=True, inline="always")
def _drop(me: np.uint64, opp: np.uint64, column: int,
          words: np.ndarray) -> tuple[np.uint64, np.uint64, bool]:
    """``play`` of a column known to be one of the board's."""
    mover = me | (landing(me | opp, words) & words[COLUMN_MASKS + column])
    return opp, mover, has_line(mover, words)


@njit(cache=True, inline="always")
def _check_column(column: int, words: np.ndarray) -> None:
    if np.uint64(column) >= words[COLUMNS]:
        raise IndexError("column out of range: the columns are 0..columns - 1")


@entry("Tuple((u8, u8, b1))(u8, u8, i8, u8[::1])")
def play(me: np.uint64, opp: np.uint64, column: int,
         words: np.ndarray) -> tuple[np.uint64, np.uint64, bool]:
    """``(me, opp, won)`` after the side to move (owning ``me``) drops a token in the
    playable ``column``: the other side's tokens become ``me``, the mover's ``opp``, and
    ``won`` says whether the drop made a line.

    Raises:
        IndexError: ``column`` is not one of the board's columns.
    """
    _check_column(column, words)
    return _drop(me, opp, column, words)


@entry("b1[:](u8[:], u8[::1])")
def has_line_batch(bits: np.ndarray, words: np.ndarray) -> np.ndarray:
    """``has_line`` of each word of ``bits``."""
    out = np.empty(bits.shape[0], dtype=np.bool_)
    for i in range(bits.shape[0]):
        out[i] = has_line(bits[i], words)
    return out


@entry("u8[:](u8[:], u8[::1])")
def landing_batch(filled: np.ndarray, words: np.ndarray) -> np.ndarray:
    """``landing`` of each word of ``filled``."""
    out = np.empty_like(filled)
    for i in range(filled.shape[0]):
        out[i] = landing(filled[i], words)
    return out


@entry("u8[:](u8[:], u8[:], b1[:], u8[::1])")
def legal_columns_batch(me: np.ndarray, opp: np.ndarray, won: np.ndarray,
                        words: np.ndarray) -> np.ndarray:
    """``legal_columns`` of each game of a batch."""
    out = np.empty_like(me)
    for i in range(me.shape[0]):
        out[i] = legal_columns(me[i], opp[i], won[i], words)
    return out


@entry("Tuple((u8[:], u8[:], b1[:]))(u8[:], u8[:], i8[:], u8[::1])")
def play_batch(me: np.ndarray, opp: np.ndarray, columns: np.ndarray,
               words: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``play`` of each game of a batch (game ``i`` drops in ``columns[i]``, playable), as
    new arrays ``(me, opp, won)``.

    Raises:
        IndexError: a column is not one of the board's columns.
    """
    n = me.shape[0]
    for i in range(n):
        _check_column(columns[i], words)
    new_me, new_opp = np.empty_like(me), np.empty_like(opp)
    won = np.empty(n, dtype=np.bool_)
    for i in range(n):
        new_me[i], new_opp[i], won[i] = _drop(me[i], opp[i], columns[i], words)
    return new_me, new_opp, won
