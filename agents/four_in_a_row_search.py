"""The four-in-a-row ``alphabeta:D`` search, compiled (numba): its heuristics and its negamax.

The heuristics (for the side to move, on any board size of the rules):

- ``threats``: the empty cells that would complete ``connect`` in a row for a player.
- ``evaluate``: ``WIN_NOW`` if the side to move can complete a line at once, ``-WIN_NOW`` if
  the opponent threatens two playable cells, else ``W_THREAT`` per threat and ``W_LINE`` per
  possible line through each token, own minus the opponent's.
- ``ordered_columns``: the playable columns, winning ones first, then blocking ones, then
  from the centre outwards (left of centre first among equals).
- ``final_value``: a finished game is lost (``decisive(-1, empty cells)``) or drawn (0).
- ``exact_plies``: the empty cells when at most ``EXACT_EMPTIES``, else -1 (none).

``search`` is ``agents.search.search`` over these heuristics, compiled, and gives the same
``SearchResult``: iterative deepening from 1 ply, the previous iteration's best move first at
the root, the root order ``rng.permutation`` of ``ordered_columns`` (the one draw from
``rng``; ties go to the first in it), a transposition table fresh for every move (full keys,
nothing evicted within a move), its best move tried first, and with ``EXACT_EMPTIES`` empty
cells or fewer a last search to the end of the game within ``EXACT_BUDGET`` positions (the
position over the budget ends it; the depth-limited result stands). Nodes are counted as
there: every position entered, the budget's one included.

The drop and line rules are ``envs.games.four_in_a_row_bits``'s; ``words`` below is its
board-size table and ``heuristic`` this module's (``heuristic_words``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache

import numpy as np
from numba import njit

from boardgym.agents.search import WIN, SearchResult
from boardgym.envs.games import four_in_a_row as rules
from boardgym.envs.games.compiled import ZERO, mix, popcount
from boardgym.envs.games.four_in_a_row import Geometry, State
from boardgym.envs.games.four_in_a_row_bits import (
    BOARD,
    COLUMN_MASKS,
    COLUMNS,
    HEIGHT,
    TOP,
    board_words,
    landing,
    legal_columns,
    play,
)

EXACT_EMPTIES = 20
"""From this many empty cells or fewer, try to search exactly to the end of the game..."""
EXACT_BUDGET = 40_000
"""...visiting at most this many positions (else the depth-limited result stands)."""
W_THREAT = 40.0
W_LINE = 1.0
"""Per possible line through each own token."""
WIN_NOW = 100_000.0
"""Value of a position whose side to move can complete a line at once (below ``WIN``)."""

CONNECT, GROUPS, CENTRE = range(3)
"""``heuristic`` table: ``connect``, the number of line groups, then the columns from the
centre out (``COLUMNS`` of them), then per group ``(lines through a cell, those cells)``."""
WORD_BITS = 64
EXACT, LOWER, UPPER = 0, 1, 2
"""Transposition-table bound kinds (``agents.search``'s)."""
NODES, LIMIT, STATUS, COUNT, GENERATION = range(5)
"""``stats`` of a search: positions visited, the most allowed, why it stopped, live table
entries, and the table's generation (the entries of older searches are empty slots)."""
RUNNING, OVER_BUDGET, TABLE_FULL = 0, 1, 2
NO_LIMIT = 1 << 62
STAMP = 24
"""A table entry's ``meta``: ``depth | kind << 8 | best << 16 | generation << STAMP``."""
FIRST_TABLE_BITS = 16


@cache
def heuristic_words(geom: Geometry) -> np.ndarray:
    """The ``heuristic`` table of a board size (see ``CONNECT``), built once per size; shared:
    read it, never write it."""
    centre = (geom.columns - 1) / 2
    counts: dict[int, int] = {}
    for step in geom.line_shifts:
        for start in range(geom.height * geom.columns):
            line = sum(1 << (start + i * step) for i in range(geom.connect))
            if line & geom.board == line:
                for i in range(geom.connect):
                    counts[start + i * step] = counts.get(start + i * step, 0) + 1
    groups: dict[int, int] = {}
    for cell, count in counts.items():
        groups[count] = groups.get(count, 0) | (1 << cell)
    order = sorted(range(geom.columns), key=lambda c: abs(c - centre))
    pairs = [word for item in sorted(groups.items()) for word in item]
    return np.array([geom.connect, len(groups), *order, *pairs], dtype=np.uint64)


@njit(cache=True, inline="always")
def _toward(bits: np.uint64, offset: int) -> np.uint64:
    """``bits >> offset`` (``bits << -offset`` when negative); 0 past the word's size."""
    if offset >= WORD_BITS or offset <= -WORD_BITS:
        return ZERO
    if offset >= 0:
        return bits >> np.uint64(offset)
    return bits << np.uint64(-offset)


@njit("u8(u8, u8, u8[::1], u8[::1])", cache=True)
def threats(bits: np.uint64, empty: np.uint64, words: np.ndarray,
            heuristic: np.ndarray) -> np.uint64:
    """The cells of ``empty`` that would complete ``connect`` in a row with ``bits``: for
    each direction and each place ``gap`` of the cell in the line, the cells whose
    ``connect - 1`` neighbours at ``(i - gap) * step`` all hold ``bits``."""
    connect, height = np.int64(heuristic[CONNECT]), np.int64(words[HEIGHT])
    found = ZERO
    for step in (np.int64(1), height, height - 1, height + 1):
        for gap in range(connect):
            cells = empty
            for i in range(connect):
                if i != gap:
                    cells &= _toward(bits, (i - gap) * step)
            found |= cells
    return found


@njit(cache=True, inline="always")
def _line_score(bits: np.uint64, heuristic: np.ndarray, groups_at: int) -> int:
    """Per own token, the possible lines through its cell."""
    score = np.int64(0)
    for g in range(np.int64(heuristic[GROUPS])):
        score += np.int64(heuristic[groups_at + 2 * g]) * np.int64(popcount(
            bits & heuristic[groups_at + 2 * g + 1]))
    return score


@njit("f8(u8, u8, u8[::1], u8[::1])", cache=True)
def evaluate(me: np.uint64, opp: np.uint64, words: np.ndarray, heuristic: np.ndarray) -> float:
    """The heuristic value of the non-final position ``(me, opp)`` for the side to move."""
    filled = me | opp
    empty = words[BOARD] ^ filled
    playable = landing(filled, words)
    mine, theirs = threats(me, empty, words, heuristic), threats(opp, empty, words, heuristic)
    if mine & playable:
        return WIN_NOW
    if popcount(theirs & playable) > 1:
        return -WIN_NOW
    groups_at = CENTRE + np.int64(words[COLUMNS])
    lines = _line_score(me, heuristic, groups_at) - _line_score(opp, heuristic, groups_at)
    threat_margin = np.int64(popcount(mine)) - np.int64(popcount(theirs))
    return W_THREAT * float(threat_margin) + W_LINE * float(lines)


@njit("i8(u8, u8, u8[::1], u8[::1], i8[::1])", cache=True)
def ordered_columns(me: np.uint64, opp: np.uint64, words: np.ndarray, heuristic: np.ndarray,
                    out: np.ndarray) -> int:
    """Write the playable columns of ``(me, opp)`` into ``out`` (winning first, then blocking,
    then from the centre out) and return how many there are."""
    filled = me | opp
    empty = words[BOARD] ^ filled
    playable = landing(filled, words)
    wins = threats(me, empty, words, heuristic) & playable
    blocks = threats(opp, empty, words, heuristic) & playable
    open_columns = legal_columns(me, opp, False, words)
    columns, count = np.int64(words[COLUMNS]), 0
    for rank in range(3):
        for k in range(columns):
            column = np.int64(heuristic[CENTRE + k])
            if not (open_columns >> np.uint64(column)) & np.uint64(1):
                continue
            cells = words[COLUMN_MASKS + column]
            kind = 0 if wins & cells else 1 if blocks & cells else 2
            if kind == rank:
                out[count] = column
                count += 1
    return count


@njit("i8(u8, u8, u8[::1])", cache=True)
def empty_cells(me: np.uint64, opp: np.uint64, words: np.ndarray) -> int:
    """The number of empty cells."""
    return np.int64(popcount(words[BOARD] ^ (me | opp)))


@njit("f8(u8, u8, b1, u8[::1])", cache=True)
def final_value(me: np.uint64, opp: np.uint64, won: bool, words: np.ndarray) -> float:
    """The finished game's value for the side to move: lost by ``WIN`` plus the empty cells
    left when the opponent made a line (``won``), else drawn (0)."""
    if won:
        return -1 * (WIN + empty_cells(me, opp, words))
    return 0.0


@njit("i8(u8, u8, u8[::1])", cache=True)
def exact_plies(me: np.uint64, opp: np.uint64, words: np.ndarray) -> int:
    """The plies left to the end (the empty cells) when at most ``EXACT_EMPTIES``, else -1."""
    left = empty_cells(me, opp, words)
    return left if left <= EXACT_EMPTIES else -1
