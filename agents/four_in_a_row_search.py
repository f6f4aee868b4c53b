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
- ``leaf_value``: ``evaluate``, or with an n-tuple network (``NetArrays`` of
  ``agents.ntuple.network``; ``agents.search.NO_NET``, the empty one, means none) minus the
  network's value of the position for the side that just moved, ``-value(opp, me, marks,
  net)`` (the ``ntuple:D`` players; ``marks`` as ``agents.ntuple.four_in_a_row.marks``).

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

from dataclasses import dataclass, field
from functools import cache

import numpy as np
from numba import njit, types

from boardgym.agents.ntuple.four_in_a_row import marks
from boardgym.agents.ntuple.network import NET_TYPE
from boardgym.agents.ntuple.network import value as net_value
from boardgym.agents.search import (
    NET_HANDLE,
    NO_NET,
    WEIGHTS,
    WIN,
    SearchResult,
    handle_net,
    net_handle,
)
from boardgym.envs.games import four_in_a_row as rules
from boardgym.envs.games.compiled import ZERO, entry, mix, popcount, to_front
from boardgym.envs.games.four_in_a_row import Geometry, State
from boardgym.envs.games.four_in_a_row_bits import (
    BOARD,
    COLUMN_MASKS,
    COLUMNS,
    HEIGHT,
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
WORDS, INTS, FLOATS = types.uint64[::1], types.int64[::1], types.float64[::1]
ROWS = types.int64[:, ::1]
"""The array types of the search kernels' signatures."""


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
def _toward(bits: np.uint64, offset: np.int64) -> np.uint64:
    """``bits >> offset`` (``bits << -offset`` when negative); 0 past the word's size."""
    if offset >= WORD_BITS or offset <= -WORD_BITS:
        return ZERO
    if offset >= 0:
        return bits >> np.uint64(offset)
    return bits << np.uint64(-offset)


@entry("u8(u8, u8, u8[::1], u8[::1])")
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
def _line_score(bits: np.uint64, heuristic: np.ndarray, groups_at: np.int64) -> np.int64:
    """Per own token, the possible lines through its cell."""
    score = np.int64(0)
    for g in range(np.int64(heuristic[GROUPS])):
        score += np.int64(heuristic[groups_at + 2 * g]) * popcount(
            bits & heuristic[groups_at + 2 * g + 1])
    return score


@entry("f8(u8, u8, u8[::1], u8[::1])")
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
    threat_margin = popcount(mine) - popcount(theirs)
    return W_THREAT * float(threat_margin) + W_LINE * float(lines)


@njit(cache=True, inline="always")
def leaf_value(me: np.uint64, opp: np.uint64, words: np.ndarray, heuristic: np.ndarray,
               net: tuple) -> float:  # type: ignore[type-arg]
    """The value at the search's horizon of a non-final position for the side to move:
    ``evaluate``, or with a network (``net``, its ``agents.search.net_handle``, not empty)
    ``-value(opp, me, marks, net)``."""
    if net[WEIGHTS] == 0:
        return evaluate(me, opp, words, heuristic)
    arrays = handle_net(net)
    return -net_value(opp, me, marks(opp, me, words, arrays), arrays)


@entry("i8(u8, u8, u8[::1], u8[::1], i8[::1])")
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


@entry("i8(u8, u8, u8[::1])")
def empty_cells(me: np.uint64, opp: np.uint64, words: np.ndarray) -> np.int64:
    """The number of empty cells."""
    return popcount(words[BOARD] ^ (me | opp))


@entry("f8(u8, u8, b1, u8[::1])")
def final_value(me: np.uint64, opp: np.uint64, won: bool, words: np.ndarray) -> float:
    """The finished game's value for the side to move: lost by ``WIN`` plus the empty cells
    left when the opponent made a line (``won``), else drawn (0)."""
    if won:
        return -1 * (WIN + empty_cells(me, opp, words))
    return 0.0


@entry("i8(u8, u8, u8[::1])")
def exact_plies(me: np.uint64, opp: np.uint64, words: np.ndarray) -> np.int64:
    """The plies left to the end (the empty cells) when at most ``EXACT_EMPTIES``, else -1."""
    left = empty_cells(me, opp, words)
    return left if left <= EXACT_EMPTIES else np.int64(-1)


@njit(cache=True, inline="always")
def _slot(me: np.uint64, opp: np.uint64, keys: np.ndarray, meta: np.ndarray,
          generation: int) -> np.int64:
    """The table slot of ``(me, opp)``: its entry of this generation, else the empty slot
    where it goes (open addressing, linear probing; the table is never more than half full)."""
    mask = meta.shape[0] - 1
    slot = np.int64(mix(mix(me) ^ opp) & np.uint64(mask))
    while (meta[slot] >> STAMP) == generation:
        if keys[2 * slot] == me and keys[2 * slot + 1] == opp:
            return slot
        slot = (slot + 1) & mask
    return slot


@njit(cache=True, inline="always")
def _store(me: np.uint64, opp: np.uint64, depth: int, value: float, kind: int, best: int,
           keys: np.ndarray, meta: np.ndarray, values: np.ndarray, stats: np.ndarray) -> None:
    """Record ``(depth, value, kind, best)`` for ``(me, opp)``, replacing its entry; when the
    table gets more than half full the search stops with ``TABLE_FULL``."""
    generation = stats[GENERATION]
    slot = _slot(me, opp, keys, meta, generation)
    if (meta[slot] >> STAMP) != generation:
        stats[COUNT] += 1
        if 2 * stats[COUNT] > meta.shape[0]:
            stats[STATUS] = TABLE_FULL
        keys[2 * slot], keys[2 * slot + 1] = me, opp
    meta[slot] = depth | (kind << 8) | (best << 16) | (generation << STAMP)
    values[slot] = value


@entry(types.float64(types.uint64, types.uint64, types.boolean, types.int64, types.float64,
                     types.float64, types.int64, WORDS, WORDS, ROWS, WORDS, INTS, FLOATS, INTS,
                     NET_HANDLE))
def _negamax(me: np.uint64, opp: np.uint64, won: bool, depth: int, alpha: float,
             beta: float, ply: int, words: np.ndarray, heuristic: np.ndarray,
             moves: np.ndarray, keys: np.ndarray, meta: np.ndarray, values: np.ndarray,
             stats: np.ndarray, net: tuple) -> float:  # type: ignore[type-arg]
    """The value of ``(me, opp)`` (``won``: the last move made a line) searched ``depth``
    plies deep within ``(alpha, beta)``, its leaves ``leaf_value`` over ``net`` (a
    ``net_handle``):
    ``agents.search._Search.negamax``. ``moves[ply]`` holds this position's moves. A stop
    (``stats[STATUS]``) returns at once, the value meaningless. (Typed explicitly: numba
    caches a recursive function only so.)"""
    stats[NODES] += 1
    if stats[NODES] > stats[LIMIT]:
        stats[STATUS] = OVER_BUDGET
        return 0.0
    if won or (me | opp) == words[BOARD]:
        return final_value(me, opp, won, words)
    if depth == 0:
        return leaf_value(me, opp, words, heuristic, net)
    generation = stats[GENERATION]
    slot = _slot(me, opp, keys, meta, generation)
    row = moves[ply]
    count = ordered_columns(me, opp, words, heuristic, row)
    if (meta[slot] >> STAMP) == generation:
        info, value = meta[slot], values[slot]
        kind = (info >> 8) & 0xFF
        if (info & 0xFF) >= depth and (kind == EXACT or (kind == LOWER and value >= beta)
                                       or (kind == UPPER and value <= alpha)):
            return value
        to_front(row, count, (info >> 16) & 0xFF)
    original_alpha, best_value, best_move = alpha, -np.inf, row[0]
    for i in range(count):
        move = row[i]
        child_me, child_opp, child_won = play(me, opp, move, words)
        value = -_negamax(child_me, child_opp, child_won, depth - 1, -beta, -alpha, ply + 1,
                          words, heuristic, moves, keys, meta, values, stats, net)
        if stats[STATUS] != RUNNING:
            return 0.0
        if value > best_value:
            best_value, best_move = value, move
            if value > alpha:
                alpha = value
            if alpha >= beta:
                break
    kind = UPPER if best_value <= original_alpha else LOWER if best_value >= beta else EXACT
    _store(me, opp, depth, best_value, kind, best_move, keys, meta, values, stats)
    return best_value


@njit(cache=True)
def _root(me: np.uint64, opp: np.uint64, root: np.ndarray, depth: int, words: np.ndarray,
          heuristic: np.ndarray, moves: np.ndarray, keys: np.ndarray, meta: np.ndarray,
          values: np.ndarray, stats: np.ndarray,
          net: tuple) -> tuple[int, float]:  # type: ignore[type-arg]
    """The best of the ``root`` moves searched ``depth`` plies over ``net`` (a ``net_handle``;
    tried in order, the first wins ties) and its value: ``agents.search._Search.root``."""
    best, alpha = root[0], -np.inf
    for move in root:
        child_me, child_opp, child_won = play(me, opp, move, words)
        value = -_negamax(child_me, child_opp, child_won, depth - 1, -np.inf, -alpha, 1,
                          words, heuristic, moves, keys, meta, values, stats, net)
        if stats[STATUS] != RUNNING:
            break
        if value > alpha:
            best, alpha = move, value
    return best, alpha


@entry(types.Tuple((types.int64, types.float64, types.int64, types.boolean))(
    types.uint64, types.uint64, INTS, types.int64, types.int64, types.int64, WORDS, WORDS,
    WORDS, INTS, FLOATS, INTS, NET_TYPE))
def search_kernel(me: np.uint64, opp: np.uint64, root: np.ndarray, depth: int, remaining: int,
                  budget: int, words: np.ndarray, heuristic: np.ndarray, keys: np.ndarray,
                  meta: np.ndarray, values: np.ndarray, stats: np.ndarray,
                  net: tuple) -> tuple[int, float, int, bool]:  # type: ignore[type-arg]
    """``(move, value, depth, exact)`` of ``agents.search.search`` from ``(me, opp)``, the
    ``root`` moves in their order (reordered in place), ``remaining`` its ``exact_plies``
    (-1: none) and ``budget`` the exact phase's (-1: no limit), the leaves ``leaf_value``
    over ``net`` (``NO_NET``: ``evaluate``); ``stats[NODES]`` ends as the positions
    visited. The table (``keys``, ``meta``, ``values``) holds entries of
    ``stats[GENERATION]`` only. A search that fills half the table stops with
    ``stats[STATUS] == TABLE_FULL`` (its result meaningless): grow the table and run again.
    """
    stats[NODES], stats[LIMIT], stats[STATUS], stats[COUNT] = 0, NO_LIMIT, RUNNING, 0
    moves = np.empty((empty_cells(me, opp, words) + 2, np.int64(words[COLUMNS])), np.int64)
    handle = net_handle(net)
    best, value, completed = root[0], 0.0, 0
    for iteration in range(1, depth + 1):
        best, value = _root(me, opp, root, iteration, words, heuristic, moves, keys, meta,
                            values, stats, handle)
        if stats[STATUS] != RUNNING:
            return best, value, completed, False
        completed = iteration
        to_front(root, root.shape[0], best)
        if abs(value) >= WIN and (remaining < 0 or remaining <= iteration):
            return best, value, completed, True
    if remaining < 0 or remaining <= depth:
        return best, value, completed, remaining >= 0
    if budget >= 0:
        stats[LIMIT] = stats[NODES] + budget
    exact_best, exact_value = _root(me, opp, root, remaining, words, heuristic, moves, keys,
                                    meta, values, stats, handle)
    if stats[STATUS] != RUNNING:
        return best, value, completed, abs(value) >= WIN
    return exact_best, exact_value, remaining, True


@dataclass
class Table:
    """A transposition table: ``2 ** bits`` slots of a key ``(me, opp)`` (two ``keys``
    words), a ``meta`` word and a value. Each search takes a new generation (older entries
    are empty slots), so nothing is cleared between moves; a search that would fill it
    more than half stops, the table grows fourfold and the search runs again."""

    bits: int = FIRST_TABLE_BITS
    keys: np.ndarray = field(init=False, repr=False)
    meta: np.ndarray = field(init=False, repr=False)
    values: np.ndarray = field(init=False, repr=False)
    stats: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.stats = np.zeros(GENERATION + 1, dtype=np.int64)
        self.grow(0)

    def grow(self, factor_bits: int = 2) -> None:
        """Replace the slots with ``2 ** factor_bits`` times as many empty ones."""
        self.bits += factor_bits
        size = 1 << self.bits
        self.keys = np.zeros(2 * size, dtype=np.uint64)
        self.meta = np.zeros(size, dtype=np.int64)
        self.values = np.zeros(size, dtype=np.float64)

    def next_generation(self) -> None:
        """Make every entry an empty slot, for a new search."""
        self.stats[GENERATION] += 1


TABLE = Table()
"""The table of this process's searches (it only grows)."""


def search(state: State, depth: int, rng: np.random.Generator, budget: int = EXACT_BUDGET,
           table: Table = TABLE, net: tuple = NO_NET) -> SearchResult:  # type: ignore[type-arg]
    """``agents.search.search(state, heuristics, depth, rng)`` over this module's heuristics
    (``exact_budget=budget``), compiled, with the same result: one ``rng.permutation`` of
    the ordered moves is drawn. ``table`` is grown as the search needs (it never fills).
    With an n-tuple network ``net`` (``NetArrays``, of this board) the heuristics'
    ``evaluate`` is ``leaf_value``'s network value; each search takes a new generation of
    the table, so no value of one evaluation answers in a search over the other.

    Raises:
        ValueError: ``depth`` < 1, or ``state`` is a finished game.
    """
    if depth < 1:
        raise ValueError(f"search depth must be at least 1 ply, got {depth}")
    if rules.is_terminal(state):
        raise ValueError("cannot search a finished game: there is no move to choose")
    geom = state.geom
    words, heuristic = board_words(geom), heuristic_words(geom)
    me, opp = np.uint64(int(state.me)), np.uint64(int(state.opp))
    remaining = int(exact_plies(me, opp, words))
    ordered = np.empty(geom.columns, dtype=np.int64)
    count = ordered_columns(me, opp, words, heuristic, ordered)
    root = np.array([int(m) for m in rng.permutation(ordered[:count].tolist())],
                    dtype=np.int64)
    while True:
        table.next_generation()
        move, value, completed, exact = search_kernel(
            me, opp, root.copy(), depth, remaining, budget, words, heuristic, table.keys,
            table.meta, table.values, table.stats, net)
        if table.stats[STATUS] != TABLE_FULL:
            return SearchResult(int(move), float(value), int(completed), bool(exact),
                                int(table.stats[NODES]))
        table.grow()
