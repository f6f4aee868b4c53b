"""Batched opponents: one decision for N games at once, each mirroring a single agent.

A batched agent does not pick a move itself: ``candidates(state)`` returns, for each game of
a batched rules state, the *set* of moves its single-env twin (``agents.make(game, name)``)
may play there, as a ``uint64`` bitmask over action indices (bit ``a`` set = action ``a``).
Every classic AI picks uniformly among such a set (it shuffles, then takes the first best
move), so ``choose(candidates, draws)`` with one uniform ``uint64`` draw per game plays like
the single agent, in distribution. The vector env owns the random numbers.

``make(game, spec)`` returns the batched twin of a built-in name, or ``None`` when there is
none; ``LoopedAgent`` then runs the single agent game by game.

Four-in-a-row ``lookahead:N`` (any N >= 1; ``lookahead`` is N = 2) searches the classic
fitness ``potential`` over arrays of bitboards, level by level, positions in chunks. Its
values are the single agent's floats bit for bit: the same cases, the same sums added in the
same order (``python_sum`` follows CPython's ``sum``), so float ties tie alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, NamedTuple

import numpy as np
from boardgym.agents.four_in_a_row import DEFAULT_DEPTH as DEFAULT_LOOKAHEAD_DEPTH
from boardgym.agents.tictactoe import (
    CELL_GROUPS,
    CENTRE_FIRST,
    CORNER_FIRST,
    move_values,
    winning_cell,
)
from boardgym.envs.games import canonical_name, four_in_a_row, reversi, tictactoe
from boardgym.envs.games.bitboard import FULL64, bit_of, nth_set_bit, popcount, unpack

Candidates = Callable[[Any], np.ndarray]
"""Batched state -> ``uint64`` bitmask per game of the moves the agent may choose."""

GATHER_LOW_BITS = np.uint64(0x0102_0408_1020_4080)
"""Multiplier moving bit 0 of byte ``k`` of a word to bit ``56 + k`` (no carries collide)."""
TOP_BYTE = np.uint64(56)
HALF_WORD = np.uint64(32)
WORD_BITS = 64
EXACT_FLOAT_BITS = 52
FLOAT_WEIGHTS = 2.0 ** np.arange(EXACT_FLOAT_BITS)
"""``2 ** a`` as float64: a bool mask times these sums to its bits exactly."""


def take(state: Any, index: np.ndarray) -> Any:
    """The sub-batch ``index`` (integer or bool array) of a batched rules state."""
    return type(state)(*(f[index] if isinstance(f, np.ndarray) else f for f in state))


def unbatch(state: Any, i: int) -> Any:
    """Game ``i`` of a batched rules state as a single state (Python ints)."""
    return type(state)(*(int(f[i]) if isinstance(f, np.ndarray) else f for f in state))


def bits_from_mask(mask: np.ndarray) -> np.ndarray:
    """``(N, A)`` bool mask (A <= 64) -> ``(N,)`` uint64 with bit ``a`` set where ``mask[:, a]``."""
    n, width = mask.shape
    if width <= EXACT_FLOAT_BITS:  # a sum of distinct powers of two below 2**53 is exact
        return (mask @ FLOAT_WEIGHTS[:width]).astype(np.uint64)
    octets = np.zeros((n, WORD_BITS), dtype=np.uint8)
    octets[:, :width] = mask
    # each uint64 holds 8 mask bytes of 0/1; one multiply packs them into its top byte
    packed = (octets.view(np.uint64) * GATHER_LOW_BITS) >> TOP_BYTE
    return packed.astype(np.uint8).view(np.uint64).reshape(n)


def random_draws(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` uniform ``uint64`` words from ``rng``: draws for ``choose``."""
    return rng.integers(0, 2 ** WORD_BITS, size=n, dtype=np.uint64)


def choose(candidates: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """One action per game, uniformly among its candidate bits: with ``c`` candidates and a
    uniform ``uint64`` draw, the one of rank ``c * (draw >> 32) >> 32`` (from the lowest bit;
    each of the ``c`` ranks gets ``2**32 / c`` of the draws, rounded down or up).

    Games without candidates (finished games) get action 0; their move is never applied.
    """
    counts = np.bitwise_count(candidates)
    rank = ((draws >> HALF_WORD) * counts) >> HALF_WORD  # below counts, exact in uint64
    return nth_set_bit(candidates, rank)  # no candidates: word 0, rank 0, action 0


class BatchedAgent:
    """A batched opponent: the candidate-move sets of a single agent, for N games at once.

    Args:
        name: the single agent's spec (``"corner_best"``).
        candidates: batched state -> ``uint64`` candidate bitmask per game.
    """

    def __init__(self, name: str, candidates: Candidates) -> None:
        self.name = name
        self.candidates = candidates

    def act(self, state: Any, draws: np.ndarray) -> np.ndarray:
        """One move per game of the batched ``state``, drawn with ``draws`` (``choose``)."""
        return choose(self.candidates(state), draws)

    def __repr__(self) -> str:
        return f"BatchedAgent({self.name!r})"


class LoopedAgent:
    """A single agent run game by game over a batch (for agents without a batched twin).

    Args:
        agent: any ``Agent`` (``act(state, rng) -> action``).
    """

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def act_each(self, state: Any, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """One move per game, game ``i`` drawing from ``rngs[i]``."""
        return np.array([self.agent.act(unbatch(state, i), rng) for i, rng in enumerate(rngs)],
                        dtype=np.int64)


# -- Reversi ------------------------------------------------------------------------------

def _extreme_flip_moves(state: Any, most: bool) -> np.ndarray:
    """Legal moves flipping the most (``most``) or the fewest discs, per game."""
    rows, cells = np.nonzero(unpack(state.legal, reversi.ACTION_CELLS))
    moves = bit_of(cells)
    counts = popcount(reversi.flip_bits(state.me[rows], state.opp[rows], moves))
    key = counts if most else -counts
    result = np.zeros(len(state.legal), dtype=np.uint64)
    if rows.size == 0:
        return result
    starts = np.flatnonzero(np.diff(rows, prepend=-1))
    best = np.maximum.reduceat(key, starts)
    group = np.cumsum(np.diff(rows, prepend=rows[0]) != 0)
    chosen = np.where(key == best[group], moves, np.uint64(0))
    result[rows[starts]] = np.bitwise_or.reduceat(chosen, starts)
    return result


def _first_region(state: Any, regions: Sequence[int], most: bool) -> np.ndarray:
    """Legal moves in the first of ``regions`` holding any, else the extreme-flip moves."""
    result = np.zeros(len(state.legal), dtype=np.uint64)
    open_games: np.ndarray = np.ones(len(state.legal), dtype=np.bool_)
    for region in regions:
        inside = state.legal & np.uint64(region)
        found = open_games & (inside != 0)
        result[found] = inside[found]
        open_games &= ~found
    rest = np.flatnonzero(open_games)
    result[rest] = _extreme_flip_moves(take(state, rest), most)
    return result


def _reversi_agents() -> dict[str, Candidates]:
    return {
        "random": lambda state: state.legal,
        "corner_best": lambda state: _first_region(state, (reversi.CORNERS,), True),
        "corner_side_best": lambda state: _first_region(
            state, (reversi.CORNERS, reversi.EDGES), True),
        "worst": lambda state: _first_region(state, (), False),
    }


# -- Four-in-a-row ------------------------------------------------------------------------

VERTICAL = 1
"""The bit distance between a cell and the one above it (``Geometry.line_shifts[0]``)."""


@cache
def _run_plans(geom: four_in_a_row.Geometry) -> tuple[tuple[bool, tuple[np.uint64, ...]], ...]:
    """Per line direction: whether it is vertical, and the bit distances ``j * shift`` for
    j = 1 .. connect - 1 below the word size (no two cells of a word lie 64 bits apart)."""
    return tuple((shift == VERTICAL, tuple(np.uint64(j * shift) for j in range(1, geom.connect)
                                           if j * shift < WORD_BITS))
                 for shift in geom.line_shifts)


def _winning_cells(bits: np.ndarray, geom: four_in_a_row.Geometry) -> np.ndarray:
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


def _scan(me: np.ndarray, opp: np.ndarray, geom: four_in_a_row.Geometry,
          wins_of: tuple[np.ndarray, np.ndarray], lines: Lines | None) -> _Scan:
    """``potential``'s case analysis, with whole-board bit operations.

    ``wins_of`` is ``_winning_cells`` of ``me`` and of ``opp``. ``lines=None`` means that
    neither side holds a line (so below the root: the search stops at a line).
    """
    board = np.uint64(geom.board)
    filled = me | opp
    drops = (filled + np.uint64(geom.bottom)) & board
    me_wins, opp_wins = wins_of
    wins = drops & me_wins if lines is None else np.where(lines[0], drops, drops & me_wins)
    first_win = wins & (ZERO - wins)  # the lowest bit: columns count up from bit 0
    left = np.where(first_win != 0, first_win - ONE, FULL)
    empty = board ^ filled
    last_cell = (empty & (empty - ONE)) == 0  # the one playable drop fills the board
    candidates = np.where(last_cell, ZERO, drops & left)
    threats = drops & opp_wins  # replies winning now: each beats every other column
    above = ((drops << ONE) & board & opp_wins) >> ONE  # columns whose next cell wins
    several = (threats & (threats - ONE)) != 0
    beaten = np.where(threats != 0, above | np.where(several, drops, drops ^ threats), above)
    if lines is not None:
        beaten = np.where(lines[1], drops, beaten)
    losses = candidates & beaten
    return _Scan(drops, first_win, losses, candidates ^ losses)


def _per_column(cells: np.ndarray, geom: four_in_a_row.Geometry) -> np.ndarray:
    """``(..., columns, N)`` bool for ``(..., N)`` cells: whether they hold a cell of each
    column. Arrays over columns are ``(columns, N)``: numpy reduces a short last axis slowly."""
    return (cells[..., None, :] & geom.column_bits[:, None]) != 0


def potential(me: np.ndarray, opp: np.ndarray, depth: int,
              geom: four_in_a_row.Geometry) -> tuple[np.ndarray, np.ndarray]:
    """``agents.four_in_a_row.potential`` of N positions (``me`` to move), bit for bit.

    Returns:
        ``(columns, N)`` float64 values (position ``i``'s in column ``i``), and a bool array
        of the same shape telling which values the classic program holds as floats (the
        others are the ints 0, 1 and -1), as ``python_sum`` needs to add them in its order.
    """
    values = np.zeros((geom.columns, len(me)))
    is_float = np.zeros((geom.columns, len(me)), dtype=np.bool_)
    for start in range(0, len(me) if depth > 0 else 0, POTENTIAL_CHUNK):
        part = slice(start, start + POTENTIAL_CHUNK)
        values[:, part], is_float[:, part], _ = _root_potential(me[part], opp[part], depth, geom)
    return values, is_float


def _root_potential(me: np.ndarray, opp: np.ndarray, depth: int,
                    geom: four_in_a_row.Geometry) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``potential`` (``depth`` >= 1) of a chunk of positions, and their playable columns
    (``(columns, N)`` bool, none once the game is over)."""
    me_wins, opp_wins = _winning_cells(np.stack((me, opp)), geom)
    lines = (me & me_wins) != 0, (opp & opp_wins) != 0
    scan = _scan(me, opp, geom, (me_wins, opp_wins), lines)
    values, is_float = _values(me, opp, scan, depth, geom)
    return values, is_float, _per_column(np.where(lines[1], ZERO, scan.drops), geom)


def _values(me: np.ndarray, opp: np.ndarray, scan: _Scan, depth: int,
            geom: four_in_a_row.Geometry) -> tuple[np.ndarray, np.ndarray]:
    """``potential`` values and float flags, ``(columns, N)``, from the ``_scan``."""
    first_win, losses, searched = _per_column(
        np.stack((scan.first_win, scan.losses, scan.searched)), geom)
    values = first_win - losses.astype(np.float64)
    if depth > 1 and searched.any():
        values[searched] = _reply_sums(me, opp, scan, depth, geom)
    return values, searched


def _potential_sums(me: np.ndarray, opp: np.ndarray, depth: int, geom: four_in_a_row.Geometry,
                    me_wins: np.ndarray) -> np.ndarray:
    """``sum(potential(position, depth))`` of positions below the root (``depth`` >= 1)."""
    scan = _scan(me, opp, geom, (me_wins, _winning_cells(opp, geom)), lines=None)
    if depth == 1:  # values 1, -1 and 0: any order sums them exactly
        return (scan.first_win != 0) - np.bitwise_count(scan.losses).astype(np.float64)
    return python_sum(*_values(me, opp, scan, depth, geom))


def _reply_sums(me: np.ndarray, opp: np.ndarray, scan: _Scan, depth: int,
                geom: four_in_a_row.Geometry) -> np.ndarray:
    """For each searched (column, position), in ``(columns, N)`` order: ``+= sum(potential(
    after the reply, depth - 1)) / columns / columns`` over the opponent's replies, left to
    right, from 0."""
    columns, board = geom.columns, np.uint64(geom.board)
    cols, rows = np.nonzero(_per_column(scan.searched, geom))
    drops = scan.drops[rows]
    mine_drop = drops & geom.column_bits[cols]
    mine = me[rows] | mine_drop
    mine_wins = _winning_cells(mine, geom)
    reply_cells = (drops ^ mine_drop) | ((mine_drop << ONE) & board)
    reply, pair = np.nonzero(_per_column(reply_cells, geom))
    theirs = opp[rows][pair] | (reply_cells[pair] & geom.column_bits[reply])
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
    """``lookahead:depth`` (>= 1): the playable columns of highest ``potential``, per game."""
    def candidates(state: Any) -> np.ndarray:
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


def _four_in_a_row_agents() -> dict[str, Candidates]:
    return {
        "random": lambda state: np.asarray(four_in_a_row.legal_bits(state), dtype=np.uint64),
        "lookahead:1": _lookahead(1),
        "lookahead:2": _lookahead(2),
    }


def _lookahead_spec(arg: str | None) -> Candidates | None:
    """``lookahead`` (depth 2) or ``lookahead:N`` for any N >= 1; None for a bad N."""
    if arg is None:
        return _lookahead(DEFAULT_LOOKAHEAD_DEPTH)
    return _lookahead(int(arg)) if arg.isdecimal() and int(arg) >= 1 else None


# -- Tic-tac-toe: tables over every (me, opp) position ------------------------------------

def _reachable_positions() -> list[tictactoe.State]:
    """Every non-terminal position reachable from the empty board."""
    seen: dict[tuple[int, int], tictactoe.State] = {}
    frontier = [tictactoe.initial_state()]
    while frontier:
        state = frontier.pop()
        key = (int(state.me), int(state.opp))
        if key in seen or tictactoe.is_terminal(state):
            continue
        seen[key] = state
        frontier += [tictactoe.apply(state, int(a))
                     for a in np.flatnonzero(tictactoe.legal_mask(state))]
    return list(seen.values())


def _cells_bits(cells: Sequence[int]) -> int:
    return sum(1 << cell for cell in cells)


def _rule_moves(order: Sequence[str]) -> Callable[[tictactoe.State], int]:
    """The moves the classic rule AI with group ``order`` may play, as a bitmask."""
    def moves(state: tictactoe.State) -> int:
        me, opp = int(state.me), int(state.opp)
        for marks in (me, opp):
            cell = winning_cell(marks, state)
            if cell is not None:
                return 1 << cell
        empty = tictactoe.FULL ^ (me | opp)
        return next(bits for bits in (empty & _cells_bits(CELL_GROUPS[name]) for name in order)
                    if bits)
    return moves


def _perfect_moves(state: tictactoe.State) -> int:
    values = move_values(state)
    best = max(values.values())
    return _cells_bits([cell for cell, v in values.items() if v == best])


@cache
def _table(rule: Callable[[tictactoe.State], int]) -> np.ndarray:
    """``rule`` tabulated over every position, indexed by ``me << 9 | opp``."""
    table = np.zeros(1 << (2 * tictactoe.CELLS), dtype=np.uint64)
    for state in _reachable_positions():
        table[(int(state.me) << tictactoe.CELLS) | int(state.opp)] = rule(state)
    return table


def _tabulated(rule: Callable[[tictactoe.State], int]) -> Candidates:
    def candidates(state: Any) -> np.ndarray:
        index = (state.me << np.uint64(tictactoe.CELLS)) | state.opp
        return _table(rule)[index.astype(np.intp)]
    return candidates


_RULES = _rule_moves(CORNER_FIRST)
_RULES_CENTRE = _rule_moves(CENTRE_FIRST)


def _tictactoe_agents() -> dict[str, Candidates]:
    return {
        "random": lambda state: np.asarray(tictactoe.legal_bits(state), dtype=np.uint64),
        "rules": _tabulated(_RULES),
        "rules_center": _tabulated(_RULES_CENTRE),
        "perfect": _tabulated(_perfect_moves),
    }


BATCHED: dict[str, Callable[[], dict[str, Candidates]]] = {
    "reversi": _reversi_agents,
    "four_in_a_row": _four_in_a_row_agents,
    "tictactoe": _tictactoe_agents,
}
PARAMETRISED: dict[str, dict[str, Callable[[str | None], Candidates | None]]] = {
    "four_in_a_row": {"lookahead": _lookahead_spec},
}
"""Per game, names whose every argument has a batched twin: ``name`` or ``name:arg`` ->
candidates (None for an argument the single agent rejects too)."""


def names(game: str) -> list[str]:
    """The agent specs of ``game`` that have a batched twin, sorted. ``make`` also takes the
    other arguments of ``PARAMETRISED`` names (four-in-a-row ``lookahead``,
    ``lookahead:3``, ...)."""
    return sorted(BATCHED[canonical_name(game)]())


def make(game: str, spec: Any) -> BatchedAgent | None:
    """The batched twin of the built-in agent ``spec`` of ``game``, or None if it has none
    (an ``Agent`` object, a checkpoint, or a name without a batched version)."""
    if not isinstance(spec, str):
        return None
    game = canonical_name(game)
    found = BATCHED[game]().get(spec)
    if found is None:
        name, colon, arg = spec.partition(":")
        family = PARAMETRISED.get(game, {}).get(name)
        found = None if family is None else family(arg if colon else None)
    return None if found is None else BatchedAgent(spec, found)


__all__ = ["BatchedAgent", "LoopedAgent", "bits_from_mask", "choose", "make", "names",
           "potential", "python_sum", "take", "unbatch"]
