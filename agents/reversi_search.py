"""The strong Reversi player's search, compiled (numba): its evaluation, its move order and
a negamax with iterative deepening and a transposition table.

This is the search ``agents.search.search`` runs over ``reversi_strong.HEURISTICS``, move
for move and node for node, in compiled code (``agents.reversi_strong.search`` calls it):

- ``evaluate`` (side to move minus opponent, in rough "disc" units) weighs mobility,
  corners, stable discs, frontier discs, and the edge squares next to empty corners (X- and
  C-squares), which hand the corner to the opponent. Its float is the same, operation for
  operation (no fastmath).
- ``order_moves``: corners, then safe edge squares, inner squares, C- and X-squares; from
  ``ENDGAME_EMPTIES`` down to ``FASTEST_FIRST_MIN_EMPTIES`` empty squares the moves that
  leave the opponent the fewest replies first (a stable sort: the square order among equals).
- ``deepen``: iterative deepening over the root moves in the order given (the caller draws
  it), the best of each iteration tried first in the next, the first best winning ties; it
  stops early at a proven win or loss. Below the root: negamax with alpha-beta, a pass keeps
  the side to move (its value is not negated), finished games worth ``final_value``, the
  leaves ``leaf_value``: ``evaluate``, or minus an n-tuple network's value (``ntuple:D``).
- The transposition table (``Table``) is the dict of the Python search: keyed on the whole
  position (the mover's discs and the other's), fresh for every search (a generation stamp
  per slot), every result stored over the last one, nothing evicted: open addressing with
  linear probing, doubled whenever it is half full. An entry's bound answers when it was
  searched at least as deep and its kind allows; else its best move is tried first.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from boardgym.agents.ntuple.network import NET_TYPE
from boardgym.agents.ntuple.network import value as net_value
from boardgym.agents.search import (
    NET_HANDLE,
    NO_NET,
    WEIGHTS,
    WIN,
    SearchResult,
    decisive,
    handle_net,
    net_handle,
)
from boardgym.agents.solvers import reversi as solver
from boardgym.envs.games.bitboard import FULL64
from boardgym.envs.games.compiled import ONE, ZERO, entry, lowest_bit, popcount, to_front
from boardgym.envs.games.reversi import State
from boardgym.envs.games.reversi_bits import (
    CELLS,
    FULL,
    LEFT_SHIFTS,
    RIGHT_SHIFTS,
    disc_difference,
    legal_moves,
    play,
)

ENDGAME_EMPTIES = 12
"""From this many empty squares or fewer, the player solves the game exactly (the solver)."""
FASTEST_FIRST_MIN_EMPTIES = 5
"""Below this many empty squares, ordering by the opponent's replies costs more than it saves."""

W_MOBILITY = 4.0
W_CORNER = 30.0
W_STABLE = 6.0
W_FRONTIER = -1.5
W_X_SQUARE = -15.0
W_C_SQUARE = -5.0
W_DISC = 0.0

CORNERS = 0x8100_0000_0000_0081
EDGES = 0xFF81_8181_8181_81FF
CORNER_CELLS = np.array([0, 7, 56, 63], dtype=np.uint64)
X_SQUARES = np.array([1 << 9, 1 << 14, 1 << 49, 1 << 54], dtype=np.uint64)
"""The diagonal neighbour of each corner of ``CORNER_CELLS``."""
C_SQUARES = np.array([(1 << 1) | (1 << 8), (1 << 6) | (1 << 15), (1 << 48) | (1 << 57),
                      (1 << 62) | (1 << 55)], dtype=np.uint64)
"""The edge neighbours of each corner of ``CORNER_CELLS``."""
ORDER_GROUPS = np.array([CORNERS, EDGES ^ CORNERS ^ int(C_SQUARES.sum()),
                         FULL64 ^ EDGES ^ int(X_SQUARES.sum()), int(C_SQUARES.sum()),
                         int(X_SQUARES.sum())], dtype=np.uint64)
"""Square groups in the order moves are tried: corners, safe edges, inner squares, C, X."""

AXIS_STEPS = np.array([step for step, _ in LEFT_SHIFTS], dtype=np.uint64)
"""The four line directions' bit distances (a row, a column, the two diagonals)."""
UP_MASKS = np.array([mask for _, mask in LEFT_SHIFTS], dtype=np.uint64)
"""Per line direction, where a bit shifted up (``<<``) may land."""
DOWN_MASKS = np.array([mask for _, mask in RIGHT_SHIFTS], dtype=np.uint64)
"""Per line direction, where a bit shifted down (``>>``) may land."""
BORDERS = np.array([FULL64 ^ (((FULL64 << step) & up) & ((FULL64 >> step) & down))
                    for (step, up), (_, down) in zip(LEFT_SHIFTS, RIGHT_SHIFTS, strict=True)],
                   dtype=np.uint64)
"""Per line direction: the squares with no neighbour on one side of it (the board's rim)."""
NEIGHBOUR_STEPS = np.array([step for step, _ in LEFT_SHIFTS + RIGHT_SHIFTS], dtype=np.uint64)
NEIGHBOUR_MASKS = np.array([mask for _, mask in LEFT_SHIFTS + RIGHT_SHIFTS], dtype=np.uint64)
"""The eight directions (four up, then four down) and their edge masks."""
AXES = len(AXIS_STEPS)
LINE = np.uint64(8 - 1)
"""Fill steps that cover a whole line."""


@njit(cache=True)
def _anchor(filled: np.uint64, axis: int) -> np.uint64:
    """The squares safe along ``axis`` whatever their neighbours hold: the board's rim
    across it, or a line along it that is full."""
    step, up_mask, down_mask = AXIS_STEPS[axis], UP_MASKS[axis], DOWN_MASKS[axis]
    up = down = FULL ^ filled
    for _ in range(LINE):
        up |= (up << step) & up_mask
        down |= (down >> step) & down_mask
    return BORDERS[axis] | (FULL ^ (up | down))


@njit(cache=True)
def _grow_stable(discs: np.uint64, a0: np.uint64, a1: np.uint64, a2: np.uint64,
                 a3: np.uint64) -> np.uint64:
    """The stable discs among ``discs``, given the ``_anchor`` of each axis: those that,
    along every axis, sit on an anchor or next to a stable disc, grown to a fixed point."""
    stable = ZERO
    while True:
        grown = discs & (a0 | ((stable << AXIS_STEPS[0]) & UP_MASKS[0])
                         | ((stable >> AXIS_STEPS[0]) & DOWN_MASKS[0]))
        grown &= a1 | ((stable << AXIS_STEPS[1]) & UP_MASKS[1]) | ((stable >> AXIS_STEPS[1])
                                                                  & DOWN_MASKS[1])
        grown &= a2 | ((stable << AXIS_STEPS[2]) & UP_MASKS[2]) | ((stable >> AXIS_STEPS[2])
                                                                  & DOWN_MASKS[2])
        grown &= a3 | ((stable << AXIS_STEPS[3]) & UP_MASKS[3]) | ((stable >> AXIS_STEPS[3])
                                                                  & DOWN_MASKS[3])
        if grown == stable:
            return stable
        stable = grown


@entry("u8(u8, u8)")
def stable_discs(me: np.uint64, opp: np.uint64) -> np.uint64:
    """Discs of ``me`` that can never be flipped (a safe under-estimate): along each of the
    four line directions the line is full, or a neighbour on it is the board's rim or a
    stable disc of the same colour."""
    filled = me | opp
    return _grow_stable(me, _anchor(filled, 0), _anchor(filled, 1), _anchor(filled, 2),
                        _anchor(filled, 3))


@njit(cache=True)
def _stable_difference(me: np.uint64, opp: np.uint64) -> int:
    """Stable discs of ``me`` minus those of ``opp``, taken as 0 while every corner is empty
    (a disc can then only be stable on lines full end to end, which is rare)."""
    filled = me | opp
    if not filled & np.uint64(CORNERS):
        return 0
    a0, a1, a2, a3 = (_anchor(filled, 0), _anchor(filled, 1), _anchor(filled, 2),
                      _anchor(filled, 3))
    return (popcount(_grow_stable(me, a0, a1, a2, a3))
            - popcount(_grow_stable(opp, a0, a1, a2, a3)))


@njit(cache=True)
def _near(empty: np.uint64) -> np.uint64:
    """The squares next to at least one of ``empty``."""
    near = ZERO
    for direction in range(AXES):
        near |= (empty << NEIGHBOUR_STEPS[direction]) & NEIGHBOUR_MASKS[direction]
    for direction in range(AXES, 2 * AXES):
        near |= (empty >> NEIGHBOUR_STEPS[direction]) & NEIGHBOUR_MASKS[direction]
    return near


@entry("f8(u8, u8, u8)")
def evaluate(me: np.uint64, opp: np.uint64, legal: np.uint64) -> float:
    """Heuristic value of a non-final position for the side to move (positive is good), its
    legal moves ``legal``: mobility, corners, stable discs, frontier discs, X- and C-squares
    next to empty corners."""
    filled = me | opp
    near_empty = _near(FULL ^ filled)
    my_x = my_c = their_x = their_c = 0
    for corner in range(4):
        if not (filled >> CORNER_CELLS[corner]) & ONE:
            my_x += popcount(me & X_SQUARES[corner])
            my_c += popcount(me & C_SQUARES[corner])
            their_x += popcount(opp & X_SQUARES[corner])
            their_c += popcount(opp & C_SQUARES[corner])
    corners = np.uint64(CORNERS)
    return (W_MOBILITY * (popcount(legal) - popcount(legal_moves(opp, me)))
            + W_CORNER * (popcount(me & corners) - popcount(opp & corners))
            + W_STABLE * _stable_difference(me, opp)
            + W_FRONTIER * (popcount(me & near_empty) - popcount(opp & near_empty))
            + W_X_SQUARE * (my_x - their_x) + W_C_SQUARE * (my_c - their_c)
            + W_DISC * disc_difference(me, opp))


@njit(cache=True, inline="always")
def leaf_value(me: np.uint64, opp: np.uint64, legal: np.uint64,
               net: tuple) -> float:  # type: ignore[type-arg]
    """The horizon's value of a non-final position for the side to move: ``evaluate``, or
    with a network (``net``: an ``agents.search.net_handle``) ``-value(opp, me, 0, net)``."""
    if net[WEIGHTS] == 0:
        return evaluate(me, opp, legal)
    return -net_value(opp, me, ZERO, handle_net(net))


@entry("f8(u8, u8)")
def final_value(me: np.uint64, opp: np.uint64) -> float:
    """A finished game's value for the owner of ``me``: ``agents.search.decisive`` of the
    disc difference (won or lost by it, 0 for a draw)."""
    difference = disc_difference(me, opp)
    if difference == 0:
        return 0.0
    sign = 1 if difference > 0 else -1
    return sign * (WIN + abs(difference))


@entry("i8(u8, u8, u8, i8[:], i8[:])")
def order_moves(me: np.uint64, opp: np.uint64, legal: np.uint64, out: np.ndarray,
                keys: np.ndarray) -> int:
    """Write the legal moves ``legal`` of the owner of ``me``, most promising first, into
    ``out`` and return their number (``keys``: scratch of the same length, 64 or more).

    By square group (``ORDER_GROUPS``), increasing squares within one; from
    ``ENDGAME_EMPTIES`` down to ``FASTEST_FIRST_MIN_EMPTIES`` empty squares, stably sorted
    by the opponent's replies (0 when the opponent must pass or the game ends).
    """
    count = 0
    for group in ORDER_GROUPS:
        bits = legal & group
        while bits:
            out[count] = lowest_bit(bits)
            bits &= bits - ONE
            count += 1
    empties = CELLS - popcount(me | opp)
    if not FASTEST_FIRST_MIN_EMPTIES <= empties <= ENDGAME_EMPTIES:
        return count
    for i in range(count):
        move = out[i]
        _, _, to_move, replies = play(me, opp, 0, move)
        key = 0 if to_move == 0 else popcount(replies)
        j = i
        while j > 0 and keys[j - 1] > key:
            out[j], keys[j] = out[j - 1], keys[j - 1]
            j -= 1
        out[j], keys[j] = move, key
    return count


EXACT, LOWER, UPPER = 0, 1, 2
"""Transposition-table bound kinds (``agents.search``'s): exact, lower bound, upper bound."""
HASH_ME = np.uint64(0x9E37_79B9_7F4A_7C15)
HASH_OPP = np.uint64(0xC2B2_AE3D_27D4_EB4F)
STAMP_SHIFT, DEPTH_SHIFT, KIND_SHIFT = 32, 16, 8
"""An entry's ``info``: its generation stamp, depth, bound kind and best move, packed."""
FIELD = (1 << 8) - 1
DEPTH_FIELD = (1 << 16) - 1
MAX_SEARCH_DEPTH = DEPTH_FIELD
"""The deepest search the table's depth field holds."""
GENERATION, COUNT, FILLED, NODES = 0, 1, 2, 3
"""``meta``: the current search's stamp, the entries it stored, whether they fill half the
table (the search stops: grow the table and search again), the positions it visited."""
LAST_GENERATION = (1 << 31) - 1
FIRST_BITS = 14
"""A new table's slots: ``2 ** 14`` (512 kB); depth 8 has stored up to 95,000 entries."""
ROW = CELLS
"""Room for the moves of one position."""
ARRAY_U8 = types.Array(types.uint64, 1, "C")
ARRAY_I8 = types.Array(types.int64, 1, "C")
TABLE_TYPE = types.Tuple((ARRAY_U8, ARRAY_U8, types.Array(types.float64, 1, "C"), ARRAY_I8,
                          ARRAY_I8))
"""``(mover's discs, other's discs, values, info, meta)``: a table, one slot an index."""


@njit(cache=True, inline="always")
def _slot(table: tuple, me: np.uint64, opp: np.uint64) -> int:  # type: ignore[type-arg]
    """The slot of position ``(me, opp)`` in this search: its entry's, or the free slot
    where it goes (linear probing; a slot of an older search is free)."""
    keys_me, keys_opp, _, info, meta = table
    mask = keys_me.shape[0] - 1
    stamp = meta[GENERATION]
    slot = int(((me * HASH_ME) ^ (opp * HASH_OPP)) >> np.uint64(STAMP_SHIFT)) & mask
    while info[slot] >> STAMP_SHIFT == stamp:
        if keys_me[slot] == me and keys_opp[slot] == opp:
            return slot
        slot = (slot + 1) & mask
    return slot


@njit(cache=True, inline="always")
def _store(table: tuple, me: np.uint64, opp: np.uint64, depth: int, value: float,  # type: ignore[type-arg]
           kind: int, best: int) -> None:
    """Record position ``(me, opp)``'s result over any earlier one; flag ``FILLED`` once
    this search's entries fill half the table."""
    keys_me, keys_opp, values, info, meta = table
    slot = _slot(table, me, opp)
    if info[slot] >> STAMP_SHIFT != meta[GENERATION]:
        meta[COUNT] += 1
        if 2 * meta[COUNT] > keys_me.shape[0]:
            meta[FILLED] = 1
    keys_me[slot], keys_opp[slot], values[slot] = me, opp, value
    info[slot] = ((meta[GENERATION] << STAMP_SHIFT) | (depth << DEPTH_SHIFT)
                  | (kind << KIND_SHIFT) | best)


@entry(types.float64(types.uint64, types.uint64, types.uint64, types.int64, types.float64,
                    types.float64, types.int64, TABLE_TYPE, types.Array(types.int64, 2, "C"),
                    ARRAY_I8, NET_HANDLE))
def _negamax(me: np.uint64, opp: np.uint64, legal: np.uint64, depth: int, alpha: float,
             beta: float, ply: int, table: tuple, moves: np.ndarray,  # type: ignore[type-arg]
             keys: np.ndarray, net: tuple) -> float:  # type: ignore[type-arg]
    """The value of the position (the mover's discs ``me``, legal moves ``legal``) searched
    ``depth`` plies deep within ``(alpha, beta)``, leaves ``leaf_value``; ``moves[ply]`` holds
    its move order. A search that fills the table returns at once (its values meaningless)."""
    meta = table[4]
    meta[NODES] += 1
    if legal == ZERO:
        return final_value(me, opp)
    if depth == 0:
        return leaf_value(me, opp, legal, net)
    row = moves[ply]
    count = order_moves(me, opp, legal, row, keys)
    slot = _slot(table, me, opp)
    info = table[3][slot]
    if info >> STAMP_SHIFT == meta[GENERATION]:
        value, kind = table[2][slot], (info >> KIND_SHIFT) & FIELD
        if ((info >> DEPTH_SHIFT) & DEPTH_FIELD >= depth
                and (kind == EXACT or (kind == LOWER and value >= beta)
                     or (kind == UPPER and value <= alpha))):
            return value
        to_front(row, count, info & FIELD)
    original_alpha, best_value, best_move = alpha, -np.inf, row[0]
    for i in range(count):
        move = row[i]
        child_me, child_opp, to_move, child_legal = play(me, opp, 0, move)
        if to_move == 0:  # the other side passed: the same side moves again
            value = _negamax(child_me, child_opp, child_legal, depth - 1, alpha, beta,
                             ply + 1, table, moves, keys, net)
        else:
            value = -_negamax(child_me, child_opp, child_legal, depth - 1, -beta, -alpha,
                              ply + 1, table, moves, keys, net)
        if meta[FILLED]:
            return 0.0
        if value > best_value:
            best_value, best_move = value, move
            alpha = max(alpha, value)
            if alpha >= beta:
                break
    kind = UPPER if best_value <= original_alpha else LOWER if best_value >= beta else EXACT
    _store(table, me, opp, depth, best_value, kind, best_move)
    return best_value


@njit(cache=True)
def _root(me: np.uint64, opp: np.uint64, root_moves: np.ndarray, depth: int,
          table: tuple, moves: np.ndarray,  # type: ignore[type-arg]
          keys: np.ndarray, net: tuple) -> tuple[int, float]:  # type: ignore[type-arg]
    """The best of ``root_moves`` (tried in this order, the first best winning ties) searched
    ``depth`` plies deep, and its value (the root itself is not counted or stored)."""
    best_move, alpha = root_moves[0], -np.inf
    for move in root_moves:
        child_me, child_opp, to_move, child_legal = play(me, opp, 0, move)
        if to_move == 0:
            value = _negamax(child_me, child_opp, child_legal, depth - 1, alpha, np.inf, 0,
                             table, moves, keys, net)
        else:
            value = -_negamax(child_me, child_opp, child_legal, depth - 1, -np.inf, -alpha,
                              0, table, moves, keys, net)
        if table[4][FILLED]:
            break
        if value > alpha:
            best_move, alpha = move, value
    return best_move, alpha


@entry(types.Tuple((types.int64, types.float64, types.int64, types.boolean))(
    types.uint64, types.uint64, ARRAY_I8, types.int64, TABLE_TYPE, NET_TYPE))
def deepen(me: np.uint64, opp: np.uint64, root_moves: np.ndarray, depth: int,
           table: tuple, net: tuple) -> tuple[int, float, int, bool]:  # type: ignore[type-arg]
    """Iterative deepening from the unfinished position ``(me, opp)`` to ``depth`` plies
    (1 to ``MAX_SEARCH_DEPTH``) over ``root_moves`` (its legal moves, tried in this order;
    each iteration's best moves to the front), the leaves ``leaf_value`` over ``net``:
    ``(move, value, completed depth, proven)``, stopping early at a proven win or loss. It
    takes a new generation of ``table`` (``Table.arrays``: an evaluation's values never
    answer for another's) and counts the positions it visits in ``meta[NODES]``; when
    ``meta[FILLED]`` ends set, the result is meaningless: grow the table and search again.
    """
    meta = table[4]
    if meta[GENERATION] == LAST_GENERATION:
        table[3][:] = 0
        meta[GENERATION] = 0
    meta[GENERATION] += 1
    meta[COUNT] = meta[FILLED] = meta[NODES] = 0
    moves = np.empty((depth, ROW), dtype=np.int64)
    keys = np.empty(ROW, dtype=np.int64)
    handle = net_handle(net)
    best_move, value = root_moves[0], 0.0
    for iteration in range(1, depth + 1):
        best_move, value = _root(me, opp, root_moves, iteration, table, moves, keys, handle)
        if meta[FILLED]:
            break
        to_front(root_moves, root_moves.shape[0], best_move)
        if abs(value) >= WIN:
            return best_move, value, iteration, True
    return best_move, value, depth, False


class Table:
    """The search's transposition table, kept between searches (each takes a new
    generation: older entries are free slots) so that a move allocates nothing; a search
    that fills half of it doubles it and runs again. It never shrinks."""

    def __init__(self, bits: int = FIRST_BITS) -> None:
        self.arrays = self._allocate(1 << bits, np.zeros(NODES + 1, dtype=np.int64))

    @staticmethod
    def _allocate(slots: int, meta: np.ndarray) -> tuple:  # type: ignore[type-arg]
        return (np.zeros(slots, dtype=np.uint64), np.zeros(slots, dtype=np.uint64),
                np.zeros(slots, dtype=np.float64), np.zeros(slots, dtype=np.int64), meta)

    def grow(self) -> None:
        """Double the slots (the entries are dropped: the search runs again)."""
        self.arrays = self._allocate(2 * self.slots, self.arrays[4])

    @property
    def slots(self) -> int:
        """The table's number of slots."""
        return int(self.arrays[0].shape[0])

    @property
    def entries(self) -> int:
        """The positions the last search stored."""
        return int(self.arrays[4][COUNT])


TABLE = Table()
"""The table of this process's searches."""


def compiled_endgame(state: State) -> tuple[dict[int, float], int]:
    """Every legal move's exact value (``decisive``: won or lost by the final disc
    difference, the empty squares to the winner) from the compiled endgame solver
    (``agents.solvers.reversi``), and the positions it visited."""
    scores, nodes = solver.counted_move_scores(state)
    values = {move: decisive((score > 0) - (score < 0), abs(score))
              for move, score in scores.items()}
    return values, nodes


def root_order(state: State) -> np.ndarray:
    """``order_moves`` of an unfinished ``state``: its legal moves, most promising first."""
    out, keys = np.empty(ROW, dtype=np.int64), np.empty(ROW, dtype=np.int64)
    count = order_moves(np.uint64(int(state.me)), np.uint64(int(state.opp)),
                        np.uint64(int(state.legal)), out, keys)
    return out[:count]


def solved(state: State, moves: np.ndarray) -> SearchResult:
    """The search of an endgame (``ENDGAME_EMPTIES`` empty squares or fewer) with the root
    order ``moves``: the first best of them by ``compiled_endgame``'s values."""
    values, nodes = compiled_endgame(state)
    best = max(moves.tolist(), key=values.__getitem__)  # the first best in that order
    return SearchResult(best, values[best], CELLS - int(state.me | state.opp).bit_count(),
                        True, nodes)


def check_search(depth: int, unfinished: bool) -> None:
    """Refuse a search ``depth`` out of range, or a finished game (not ``unfinished``).

    Raises:
        ValueError: ``depth`` < 1 or above ``MAX_SEARCH_DEPTH``, or a finished game.
    """
    if depth < 1:
        raise ValueError(f"search depth must be at least 1 ply, got {depth}")
    if depth > MAX_SEARCH_DEPTH:
        raise ValueError(f"search depth must be at most {MAX_SEARCH_DEPTH} plies, got {depth}")
    if not unfinished:
        raise ValueError("cannot search a finished game: there is no move to choose")


def search(state: State, depth: int, rng: np.random.Generator,
           net: tuple = NO_NET) -> SearchResult:  # type: ignore[type-arg]
    """``agents.search.search(state, heuristics, depth, rng)`` over ``reversi_strong
    .HEURISTICS`` (an n-tuple network ``net``'s value as ``evaluate``: ``leaf_value``),
    compiled, with the same result: one ``rng.permutation`` of the ordered moves is drawn;
    with at most ``ENDGAME_EMPTIES`` empty squares the solver's values decide.

    Raises:
        ValueError: ``depth`` < 1 or above ``MAX_SEARCH_DEPTH``, or ``state`` is a finished
            game.
    """
    check_search(depth, bool(state.legal))
    moves = rng.permutation(root_order(state))
    empties = CELLS - int(state.me | state.opp).bit_count()
    if empties <= ENDGAME_EMPTIES:
        return solved(state, moves)
    while True:
        root = moves.copy()
        move, value, completed, exact = deepen(np.uint64(int(state.me)),
                                               np.uint64(int(state.opp)), root, depth,
                                               TABLE.arrays, net)
        meta = TABLE.arrays[4]
        if not meta[FILLED]:
            return SearchResult(int(move), float(value), int(completed), bool(exact),
                                int(meta[NODES]))
        TABLE.grow()
