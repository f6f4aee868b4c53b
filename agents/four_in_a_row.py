"""The classic console program's four-in-a-row AI, ``lookahead:N``, as one candidate-move set
(``agents.base``) over a batched search of its fitness ``potential``.

``lookahead:N`` (``lookahead`` alone: N = 2) rates each column with ``potential`` looking N
moves of each side ahead and plays a playable column of highest value, ties uniformly at
random. The default opponent of ``FourInARow-v0``.

``potential(position, depth)`` is the classic program's ``getPotentialMoves``: if ``depth`` is 0
or the board is full, every value is 0. Otherwise, for each column ``c`` from left to right:
a full column keeps 0; the side to move drops in ``c``; if that makes a line, ``c`` gets 1 and
the scan **stops** (the columns to the right keep 0, the classic quirk); else if the board is
now full, ``c`` keeps 0; else for each open column ``k`` the opponent drops in ``k``: if that
makes a line, ``c`` gets -1 and the loop over ``k`` stops; otherwise
``sum(potential(after k, depth - 1)) / columns / columns`` is added to ``c``.

The search here works over arrays of bitboards, level by level, positions in chunks, and
gives the classic program's floats bit for bit: the same cases, the same sums added in the
same order (``python_sum`` follows CPython's ``sum``), so float ties tie alike.
``alphabeta:D`` is in ``agents.four_in_a_row_strong``; ``random`` and ``mcts:N`` are every
game's.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np

from boardgym.agents import four_in_a_row_strong  # noqa: F401  (registers alphabeta)
from boardgym.agents.base import Candidates, register_candidates
from boardgym.agents.compiled import FOUR_IN_A_ROW_PLAYERS, register_twins
from boardgym.agents.search import sized
from boardgym.envs.games import four_in_a_row as rules
from boardgym.envs.games.bitboard import FLOAT_WEIGHTS, FULL64, WORD_BITS
from boardgym.envs.games.core import Game

DEFAULT_DEPTH = 2
MAX_LOOKAHEAD = 6
"""The deepest ``lookahead:N``: up to ten seconds a move on the default board (every
column is tried at every ply: each ply more is seven times slower)."""


VERTICAL = 1
"""The bit distance between a cell and the one above it (``Geometry.line_shifts[0]``)."""
UP = np.uint64(VERTICAL)


@cache
def _run_plans(geom: rules.Geometry) -> tuple[tuple[bool, tuple[np.uint64, ...]], ...]:
    """Per line direction: whether it is vertical, and the bit distances ``j * shift`` for
    j = 1 .. connect - 1 below the word size (no two cells of a word lie 64 bits apart)."""
    return tuple((shift == VERTICAL, tuple(np.uint64(j * shift) for j in range(1, geom.connect)
                                           if j * shift < WORD_BITS))
                 for shift in geom.line_shifts)


def _winning_cells(bits: np.ndarray, geom: rules.Geometry) -> np.ndarray:
    """Cells with nothing above them that complete ``connect`` in a row with ``bits``.

    A cell qualifies in a direction when the ``a`` cells after it and the ``connect - 1 - a``
    cells before it all hold ``bits``, for some ``a``; vertically only ``a = 0`` counts, as
    the cells above a landing cell are empty. So for a landing cell ``x``, ``has_line(bits |
    x)`` is ``has_line(bits) or x in cells``, and ``has_line(bits)`` is ``bits & cells != 0``
    (the top or an end cell of a line). As in ``has_line``, a run wrapping round a column end
    would need the always-empty sentinel bit.
    """
    need = geom.connect - 1
    cells = np.zeros_like(bits)
    for vertical, distances in _run_plans(geom):
        after, before = [bits], [bits]  # index j >= 1: the j cells after (before) are in bits
        for distance in distances:
            before.append(bits << distance if len(before) == 1 else
                          before[-1] & (bits << distance))
            if not vertical:
                after.append(bits >> distance if len(after) == 1 else
                             after[-1] & (bits >> distance))
        for a in range(max(0, need - len(distances)), min(need, len(after) - 1) + 1):
            b = need - a
            cells |= before[b] if a == 0 else after[a] if b == 0 else after[a] & before[b]
    return cells


SUM_COMPENSATES_FLOATS = sum([1e100, 1.0, -1e100]) != 0.0
"""Whether this interpreter's ``sum`` compensates float items (Neumaier, CPython >= 3.12)."""
SUM_COMPENSATES_INTS = sum([1e100, 1, -1e100]) != 0.0
"""Whether it compensates int items met after a float too (CPython >= 3.14)."""


def python_sum(items: np.ndarray, is_float: np.ndarray,
               compensate_floats: bool = SUM_COMPENSATES_FLOATS,
               compensate_ints: bool = SUM_COMPENSATES_INTS) -> np.ndarray:
    """Builtin ``sum`` down each column of ``items`` (``(terms, N)``, one sum per column),
    bit for bit (``np.sum`` adds pairwise), where ``is_float`` tells which items are Python
    floats; the others are small ints.

    CPython adds the leading ints exactly and the first float plainly; then, from 3.12, each
    later float with Neumaier's compensation, and from 3.14 each later int too, the total
    compensation being added at the end. Before 3.12 ``sum`` is a plain left fold.
    """
    total = np.zeros(items.shape[1:])
    if not compensate_floats:
        for item in items:
            total = total + item  # partial sums of small ints are exact in a float
        return total
    floating = np.zeros(items.shape[1:], dtype=np.bool_)
    compensation = np.zeros(items.shape[1:])
    for item, item_is_float in zip(items, is_float, strict=True):
        added = total + item
        lost = np.where(np.abs(total) >= np.abs(item), (total - added) + item,
                        (item - added) + total)
        compensation = np.where(floating & (item_is_float | compensate_ints),
                                compensation + lost, compensation)
        floating |= item_is_float
        total = added
    return np.where((compensation != 0) & np.isfinite(compensation), total + compensation,
                    total)


POTENTIAL_CHUNK = 1 << 14
"""Positions whose ``potential`` is worked out at once; their children go in chunks too."""
ZERO, ONE, FULL = np.uint64(0), np.uint64(1), np.uint64(FULL64)
Lines = tuple[np.ndarray, np.ndarray]
"""Whether the side to move, and the other side, hold a line (bool per position)."""


class _Scan(NamedTuple):
    """The columns of positions sorted into ``potential``'s cases, as landing cells."""

    drops: np.ndarray
    """The landing cell of every playable column."""
    first_win: np.ndarray
    """The first (leftmost) winning column's: valued 1; the columns right of it keep 0."""
    losses: np.ndarray
    """Those of the columns left of it after which some reply of the opponent wins: -1."""
    searched: np.ndarray
    """The other columns left of it, bar one filling the board: the float sum of replies."""


def _scan(me: np.ndarray, opp: np.ndarray, geom: rules.Geometry,
          wins_of: tuple[np.ndarray, np.ndarray], lines: Lines | None) -> _Scan:
    """``potential``'s case analysis, with whole-board bit operations.

    ``wins_of`` is ``_winning_cells`` of ``me`` and of ``opp``. ``lines=None`` means that
    neither side holds a line (so below the root: the search stops at a line).
    """
    board = np.uint64(geom.board)
    filled = me | opp
    drops = rules.landing_cells(filled, geom)
    me_wins, opp_wins = wins_of
    wins = drops & me_wins if lines is None else np.where(lines[0], drops, drops & me_wins)
    first_win = wins & (ZERO - wins)  # the lowest bit: columns count up from bit 0
    left = np.where(first_win != 0, first_win - ONE, FULL)
    empty = board ^ filled
    last_cell = (empty & (empty - ONE)) == 0  # the one playable drop fills the board
    candidates = np.where(last_cell, ZERO, drops & left)
    threats = drops & opp_wins  # replies winning now: each beats every other column
    # the drop cells of the columns whose next cell (the one above) wins for the opponent
    above = (rules.landing_cells(filled | drops, geom) & opp_wins) >> UP
    several = (threats & (threats - ONE)) != 0
    beaten = np.where(threats != 0, above | np.where(several, drops, drops ^ threats), above)
    if lines is not None:
        beaten = np.where(lines[1], drops, beaten)
    losses = candidates & beaten
    return _Scan(drops, first_win, losses, candidates ^ losses)


def _per_column(cells: np.ndarray, geom: rules.Geometry) -> np.ndarray:
    """``(..., columns, N)`` bool for ``(..., N)`` cells: whether they hold a cell of each
    column. Arrays over columns are ``(columns, N)``: numpy reduces a short last axis slowly."""
    return (cells[..., None, :] & geom.column_bits[:, None]) != 0


def potential(state: rules.State, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The classic fitness of each column (see the module docstring) for the side to move of
    each game of a batched ``state`` (``core.batch_of`` makes one of a single state), bit for
    bit the classic program's floats.

    Args:
        state: a batched position (N games).
        depth: moves of each side to look ahead, >= 0.

    Returns:
        ``(columns, N)`` float64 values (position ``i``'s in column ``i``), and a bool array
        of the same shape telling which values the classic program holds as floats (the
        others are the ints 0, 1 and -1), as ``python_sum`` needs to add them in its order.
    """
    me, opp, geom = state.me, state.opp, state.geom
    values = np.zeros((geom.columns, len(me)))
    is_float = np.zeros((geom.columns, len(me)), dtype=np.bool_)
    for start in range(0, len(me) if depth > 0 else 0, POTENTIAL_CHUNK):
        part = slice(start, start + POTENTIAL_CHUNK)
        values[:, part], is_float[:, part], _ = _root_potential(me[part], opp[part], depth, geom)
    return values, is_float


def _root_potential(me: np.ndarray, opp: np.ndarray, depth: int,
                    geom: rules.Geometry) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``potential`` (``depth`` >= 1) of a chunk of positions, and their playable columns
    (``(columns, N)`` bool, none once the game is over)."""
    me_wins, opp_wins = _winning_cells(np.stack((me, opp)), geom)
    lines = (me & me_wins) != 0, (opp & opp_wins) != 0
    scan = _scan(me, opp, geom, (me_wins, opp_wins), lines)
    values, is_float = _values(me, opp, scan, depth, geom)
    return values, is_float, _per_column(np.where(lines[1], ZERO, scan.drops), geom)


def _values(me: np.ndarray, opp: np.ndarray, scan: _Scan, depth: int,
            geom: rules.Geometry) -> tuple[np.ndarray, np.ndarray]:
    """``potential`` values and float flags, ``(columns, N)``, from the ``_scan``."""
    first_win, losses, searched = _per_column(
        np.stack((scan.first_win, scan.losses, scan.searched)), geom)
    values = first_win - losses.astype(np.float64)
    if depth > 1 and searched.any():
        values[searched] = _reply_sums(me, opp, scan, depth, geom)
    return values, searched


def _potential_sums(me: np.ndarray, opp: np.ndarray, depth: int, geom: rules.Geometry,
                    me_wins: np.ndarray) -> np.ndarray:
    """``sum(potential(position, depth))`` of positions below the root (``depth`` >= 1)."""
    scan = _scan(me, opp, geom, (me_wins, _winning_cells(opp, geom)), lines=None)
    if depth == 1:  # values 1, -1 and 0: any order sums them exactly
        return (scan.first_win != 0) - np.bitwise_count(scan.losses).astype(np.float64)
    return python_sum(*_values(me, opp, scan, depth, geom))


def _reply_sums(me: np.ndarray, opp: np.ndarray, scan: _Scan, depth: int,
                geom: rules.Geometry) -> np.ndarray:
    """For each searched (column, position), in ``(columns, N)`` order: ``+= sum(potential(
    after the reply, depth - 1)) / columns / columns`` over the opponent's replies, left to
    right, from 0."""
    columns = geom.columns
    cols, rows = np.nonzero(_per_column(scan.searched, geom))
    mine = me[rows] | (scan.drops[rows] & geom.column_bits[cols])
    theirs_before = opp[rows]
    mine_wins = _winning_cells(mine, geom)
    reply_cells = rules.landing_cells(mine | theirs_before, geom)
    reply, pair = np.nonzero(_per_column(reply_cells, geom))
    theirs = theirs_before[pair] | (reply_cells[pair] & geom.column_bits[reply])
    terms = np.zeros((columns, len(rows)))
    for start in range(0, len(pair), POTENTIAL_CHUNK):
        part = slice(start, start + POTENTIAL_CHUNK)
        at = pair[part]
        sums = _potential_sums(mine[at], theirs[part], depth - 1, geom, mine_wins[at])
        terms[reply[part], at] = sums / columns / columns
    total = np.zeros(len(rows))
    for term in terms:
        total = total + term  # adding 0.0 for a full column changes nothing
    return total


@cache
def _lookahead(depth: int) -> Candidates:
    """``lookahead:depth`` (>= 1): per game, the playable columns of highest ``potential``."""
    def candidates(state: rules.State) -> np.ndarray:
        result = np.zeros(len(state.me), dtype=np.uint64)
        weights = FLOAT_WEIGHTS[:state.geom.columns]
        for start in range(0, len(state.me), POTENTIAL_CHUNK):
            part = slice(start, start + POTENTIAL_CHUNK)
            values, _, playable = _root_potential(state.me[part], state.opp[part], depth,
                                                  state.geom)
            open_values = np.where(playable, values, -np.inf)
            chosen = playable & (open_values == open_values.max(axis=0))
            result[part] = (weights @ chosen).astype(np.uint64)  # exact: distinct powers of 2
        return result
    return candidates


def lookahead_candidates(record: Game, arg: str | None) -> Candidates:
    """The candidates of ``lookahead[:N]``: N a positive integer, 2 when omitted, at most
    ``MAX_LOOKAHEAD``.

    Raises:
        ValueError: N is not a positive integer, or above ``MAX_LOOKAHEAD``.
    """
    return _lookahead(sized(arg, "lookahead", DEFAULT_DEPTH, MAX_LOOKAHEAD,
                            "deeper, a move takes minutes"))


register_candidates(rules.GAME.name, "lookahead", lookahead_candidates,
                    help=f"the classic fitness search N moves ahead (default {DEFAULT_DEPTH}, "
                         f"at most {MAX_LOOKAHEAD})")
register_twins(rules.GAME.name, "four_in_a_row", FOUR_IN_A_ROW_PLAYERS)  # random's
