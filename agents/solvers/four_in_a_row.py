"""An exact four-in-a-row solver, after Pascal Pons' Connect Four solver, compiled with numba.

Scores follow Pons' convention, always for the side to move: 0 for a draw; a win in which the
winner's line-making token is the ``k``-th token played on the board scores
``(cells + 1 - (k - 1)) // 2`` (the fewer tokens used, the higher), a loss the negative. On
the empty 7x6 board the first player wins with its 41st token: ``(42 + 1 - 40) // 2 = 1``.

The search works on the rules' bitboard layout (``boardgym.envs.games.four_in_a_row``: column
``c`` owns bits ``c * (rows + 1)`` up, a sentinel bit above each column), for any board size and
line length the rules allow: a position is ``(current, mask, moves)``, the side to move's
tokens, every token, and how many were played; ``current + mask`` is a unique key.

The search: negamax with alpha-beta on null windows, the score found by a binary search over
the possible scores (Pons' ``solve``); only non-losing moves are tried (a move under the
opponent's winning cell, or a reply that leaves an opponent win unblocked, is never searched);
moves sorted by the number of winning cells they leave their player, ties from the centre
out; a transposition table (numpy arrays kept per board size) of lower and upper bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np
from numba import njit

from boardgym.agents.base import check_rng
from boardgym.agents.solvers import exact_outcomes
from boardgym.envs.games import four_in_a_row as rules
from boardgym.envs.games import players
from boardgym.envs.games.core import Game
from boardgym.envs.games.players import Agent

WORD_BITS = 64
HASH_MULTIPLIER = np.uint64(0x9E37_79B9_7F4A_7C15)
"""Fibonacci hashing: the high bits of ``key * HASH_MULTIPLIER`` index the table."""
MAX_TABLE_BITS = 23
"""At most ``2 ** 23`` table entries (72 MB) per board size; small boards get fewer."""
UPPER, LOWER = 1, 2
"""Kinds of a table entry: an upper bound or a lower bound of the score."""
ZERO, ONE = np.uint64(0), np.uint64(1)


@dataclass(frozen=True)
class Board:
    """The solver's view of one board size: the rules' ``Geometry`` as numba arguments.

    Attributes:
        geom: the rules' bit tables.
        columns: ``uint64`` mask of each column's playable cells.
        order: the columns from the centre out (the order ties are tried in).
        directions: the bit distances between neighbours along the four line directions.
        scratch: room for the runs ``winning_cells`` builds, ``connect`` words.
        table_keys, table_bounds, table_kinds: the transposition table (key 0: empty slot).
    """

    geom: rules.Geometry
    columns: np.ndarray = field(init=False, repr=False)
    order: np.ndarray = field(init=False, repr=False)
    directions: np.ndarray = field(init=False, repr=False)
    scratch: np.ndarray = field(init=False, repr=False)
    table_keys: np.ndarray = field(init=False, repr=False)
    table_bounds: np.ndarray = field(init=False, repr=False)
    table_kinds: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        geom = self.geom
        centre = (geom.columns - 1) / 2
        size = 1 << min(MAX_TABLE_BITS, geom.rows * geom.columns)
        values = {
            "columns": geom.column_bits.copy(),
            "order": np.array(sorted(range(geom.columns), key=lambda c: abs(c - centre)),
                              dtype=np.int64),
            "directions": np.array(geom.line_shifts, dtype=np.int64),
            "scratch": np.zeros(geom.connect, dtype=np.uint64),
            "table_keys": np.zeros(size, dtype=np.uint64),
            "table_bounds": np.zeros(size, dtype=np.int8),
            "table_kinds": np.zeros(size, dtype=np.int8),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def reset(self) -> None:
        """Empty the transposition table."""
        self.table_keys[:] = 0
        self.table_kinds[:] = 0


@cache
def board(geom: rules.Geometry) -> Board:
    """The ``Board`` of a board size, with its transposition table (one per size, kept: every
    entry is a true bound of a position's score, valid for every later search)."""
    return Board(geom)


# ---------------------------------------------------------------------------------------------
# Compiled core. ``b`` below is the tuple of Board arrays and sizes (see ``_args``).


@njit(cache=True, inline="always")
def _shift(bits: np.uint64, amount: int) -> np.uint64:
    """``bits`` moved ``amount`` places up (down if negative); 0 past the word's size."""
    if amount >= WORD_BITS or amount <= -WORD_BITS:
        return ZERO
    if amount >= 0:
        return bits << np.uint64(amount)
    return bits >> np.uint64(-amount)


@njit(cache=True)
def winning_cells(position: np.uint64, mask: np.uint64, playable: np.uint64,
                  directions: np.ndarray, connect: int, scratch: np.ndarray) -> np.uint64:
    """The empty cells that would complete ``connect`` in a row with ``position``'s tokens
    (``playable``: every cell of the board; ``mask``: the filled ones).

    A cell qualifies along a direction when the ``a`` cells before it and the
    ``connect - 1 - a`` cells after it hold ``position``, for some ``a``; ``scratch[b]`` holds
    the cells with ``b`` own tokens right after them.
    """
    found = ZERO
    need = connect - 1
    for step in directions:
        scratch[0] = ~ZERO
        for b in range(1, connect):
            scratch[b] = scratch[b - 1] & _shift(position, -b * step)
        before = ~ZERO
        for a in range(connect):
            if a > 0:
                before &= _shift(position, a * step)
            found |= before & scratch[need - a]
    return found & (playable ^ mask)


@njit(cache=True, inline="always")
def _possible(mask: np.uint64, bottom: np.uint64, playable: np.uint64) -> np.uint64:
    """The landing cell of every column that is not full (the drop rule)."""
    return (mask + bottom) & playable


@njit(cache=True)
def _non_losing_moves(current: np.uint64, mask: np.uint64, bottom: np.uint64,
                      playable: np.uint64, directions: np.ndarray, connect: int,
                      scratch: np.ndarray) -> np.uint64:
    """The landing cells after which the opponent cannot win at once: the one forced block
    if the opponent threatens a playable cell (none if two), never under an opponent's
    winning cell. Assumes the side to move cannot win at once."""
    possible = _possible(mask, bottom, playable)
    threats = winning_cells(current ^ mask, mask, playable, directions, connect, scratch)
    forced = possible & threats
    if forced:
        if forced & (forced - ONE):
            return ZERO
        possible = forced
    return possible & ~(threats >> ONE)


@njit(cache=True, inline="always")
def _table_slot(key: np.uint64, table_shift: np.uint64) -> int:
    """The table slot of ``key``: the top bits of its Fibonacci hash."""
    return int((key * HASH_MULTIPLIER) >> table_shift)


@njit(cache=True)
def _store(slot: int, key: np.uint64, bound: int, kind: int, table_keys: np.ndarray,
           table_bounds: np.ndarray, table_kinds: np.ndarray) -> None:
    table_keys[slot] = key
    table_bounds[slot] = bound
    table_kinds[slot] = kind


@njit(cache=True)
def _negamax(current: np.uint64, mask: np.uint64, moves: int, alpha: int, beta: int,
             b: tuple, counter: np.ndarray) -> int:  # type: ignore[type-arg]
    """The score of the position if it lies in ``(alpha, beta)``; otherwise a bound on the
    same side of the window (fail-soft negamax). Assumes the side to move cannot win at once.
    ``counter[0]`` counts the positions visited; past ``counter[1]`` of them the search
    gives up (returns 0 and stores nothing: the caller must discard the result)."""
    (bottom, playable, cells, columns, order, directions, connect, scratch,
     table_keys, table_bounds, table_kinds, table_shift) = b
    counter[0] += 1
    possible = _non_losing_moves(current, mask, bottom, playable, directions, connect, scratch)
    if possible == 0:
        return -((cells - moves) // 2)
    if moves >= cells - 2:
        return 0
    low = -((cells - 2 - moves) // 2)
    if alpha < low:
        alpha = low
        if alpha >= beta:
            return alpha
    high = (cells - 1 - moves) // 2
    key = current + mask
    slot = _table_slot(key, table_shift)
    if table_keys[slot] == key:
        bound = int(table_bounds[slot])
        if table_kinds[slot] == LOWER:
            if alpha < bound:
                alpha = bound
                if alpha >= beta:
                    return alpha
        elif bound < high:
            high = bound
    if beta > high:
        beta = high
        if alpha >= beta:
            return beta
    n_columns = order.shape[0]
    sorted_moves = np.empty(n_columns, dtype=np.uint64)
    sorted_scores = np.empty(n_columns, dtype=np.int64)
    count = 0
    for i in range(n_columns):
        move = possible & columns[order[i]]
        if move:
            threat_count = 0
            threats = winning_cells(current | move, mask, playable, directions, connect,
                                    scratch)
            while threats:
                threats &= threats - ONE
                threat_count += 1
            j = count
            while j > 0 and sorted_scores[j - 1] < threat_count:
                sorted_moves[j] = sorted_moves[j - 1]
                sorted_scores[j] = sorted_scores[j - 1]
                j -= 1
            sorted_moves[j] = move
            sorted_scores[j] = threat_count
            count += 1
    for i in range(count):
        move = sorted_moves[i]
        score = -_negamax(current ^ mask, mask | move, moves + 1, -beta, -alpha, b, counter)
        if counter[0] > counter[1]:
            return 0
        if score >= beta:
            _store(slot, key, score, LOWER, table_keys, table_bounds, table_kinds)
            return score
        if score > alpha:
            alpha = score
    _store(slot, key, alpha, UPPER, table_keys, table_bounds, table_kinds)
    return alpha


@njit(cache=True, inline="always")
def _half_toward_zero(value: int) -> int:
    return -((-value) // 2) if value < 0 else value // 2


@njit(cache=True)
def _solve(current: np.uint64, mask: np.uint64, moves: int, b: tuple,
           counter: np.ndarray) -> int:  # type: ignore[type-arg]
    """The exact score of a position that is not over: Pons' binary search on the score with
    null windows, each probe first tried nearer to 0 (where most scores lie)."""
    bottom, playable, cells, _, _, directions, connect, scratch, _, _, _, _ = b
    if winning_cells(current, mask, playable, directions, connect, scratch) \
            & _possible(mask, bottom, playable):
        return (cells + 1 - moves) // 2
    low = -((cells - moves) // 2)
    high = (cells + 1 - moves) // 2
    while low < high:
        middle = low + (high - low) // 2
        if middle <= 0 and _half_toward_zero(low) < middle:
            middle = _half_toward_zero(low)
        elif middle >= 0 and _half_toward_zero(high) > middle:
            middle = _half_toward_zero(high)
        score = _negamax(current, mask, moves, middle, middle + 1, b, counter)
        if counter[0] > counter[1]:
            return 0
        if score <= middle:
            high = score
        else:
            low = score
    return low


# ---------------------------------------------------------------------------------------------
# Public API over the rules' states.


class BudgetExceededError(RuntimeError):
    """The search visited more positions than it was allowed."""


def _counter(max_nodes: int | None) -> np.ndarray:
    """``[positions visited, most allowed]`` for the compiled search."""
    limit = np.iinfo(np.int64).max if max_nodes is None else max_nodes
    return np.array([0, limit], dtype=np.int64)


def _args(solver_board: Board) -> tuple:  # type: ignore[type-arg]
    geom = solver_board.geom
    return (np.uint64(geom.bottom), np.uint64(geom.board), geom.rows * geom.columns,
            solver_board.columns, solver_board.order, solver_board.directions, geom.connect,
            solver_board.scratch, solver_board.table_keys, solver_board.table_bounds,
            solver_board.table_kinds,
            np.uint64(WORD_BITS - solver_board.table_keys.shape[0].bit_length() + 1))


def _words(state: rules.State) -> tuple[np.uint64, np.uint64, int]:
    """``(current, mask, moves)`` of a single rules state that is not over.

    Raises:
        ValueError: a batched state or a finished game.
    """
    if isinstance(state.me, np.ndarray):
        raise ValueError("the solver takes one position, not a batch: pass "
                         "boardgym.envs.games.core.unbatch(state, i)")
    if rules.is_terminal(state):
        raise ValueError("the game is over: the solver scores positions with a move to play")
    me, opp = int(state.me), int(state.opp)
    return np.uint64(me), np.uint64(me | opp), (me | opp).bit_count()


def _checked(score: int, counter: np.ndarray) -> int:
    if counter[0] > counter[1]:
        raise BudgetExceededError(f"no exact score within {counter[1]} positions")
    return int(score)


def solve(state: rules.State, max_nodes: int | None = None) -> int:
    """The exact score of ``state`` for its side to move (see the module docstring): positive
    when it wins, ``(cells + 1 - tokens played) // 2`` if it wins at once; 0 a draw.

    Args:
        state: a single position with a move to play.
        max_nodes: give up after visiting this many positions (None: never).

    Raises:
        ValueError: a batched state or a finished game.
        BudgetExceededError: ``max_nodes`` was not enough.
    """
    current, mask, moves = _words(state)
    counter = _counter(max_nodes)
    return _checked(_solve(current, mask, moves, _args(board(state.geom)), counter), counter)


def column_scores(state: rules.State, max_nodes: int | None = None) -> list[int | None]:
    """The exact score, for the side to move, of dropping in each column (None: full).

    Args:
        state: a single position with a move to play.
        max_nodes: give up after visiting this many positions in all (None: never).

    Raises:
        ValueError: a batched state or a finished game.
        BudgetExceededError: ``max_nodes`` was not enough.
    """
    current, mask, moves = _words(state)
    geom = state.geom
    args = _args(board(geom))
    counter = _counter(max_nodes)
    cells = geom.rows * geom.columns
    wins = winning_cells(current, mask, np.uint64(geom.board), board(geom).directions,
                         geom.connect, board(geom).scratch)
    drops = _possible(mask, np.uint64(geom.bottom), np.uint64(geom.board))
    scores: list[int | None] = []
    for column_mask in board(geom).columns:
        move = drops & column_mask
        if not move:
            scores.append(None)
        elif move & wins:
            scores.append((cells + 1 - moves) // 2)
        elif moves + 1 == cells:
            scores.append(0)
        else:
            score = _solve(current ^ mask, mask | move, moves + 1, args, counter)
            scores.append(-_checked(score, counter))
    return scores


def best_columns(state: rules.State, max_nodes: int | None = None) -> list[int]:
    """The columns of highest score for the side to move (perfect play), left to right.

    Raises:
        ValueError: a batched state or a finished game.
        BudgetExceededError: ``max_nodes`` (see ``column_scores``) was not enough.
    """
    scores = column_scores(state, max_nodes)
    best = max(score for score in scores if score is not None)
    return [column for column, score in enumerate(scores) if score == best]




# ---------------------------------------------------------------------------------------------
# The player.

LEAF_EMPTIES = 16
"""``leaf_values`` solves positions with at most this many empty cells: on 6x7 a few thousand
positions each, under 2 ms (measured on 100 positions of the labelled set played on at
random: median 0.04 ms); at 20-24 empty cells single positions took up to a second."""


def leaf_values(states: rules.State) -> np.ndarray:
    """The exact outcome for the side to move (+1, 0, -1) of each unfinished position of
    the batched ``states`` with at most ``LEAF_EMPTIES`` empty cells, NaN for the others
    (``agents.solvers.LeafValues``, what the az search asks near the end of the game)."""
    geom = states.geom
    empty = geom.rows * geom.columns - np.bitwise_count(states.me | states.opp)
    return exact_outcomes(states, empty <= LEAF_EMPTIES, solve)


FALLBACK = "alphabeta:6"
"""The player consulted when the budget runs out (early in the game)."""


class SolverPlayer:
    """Perfect play: a uniformly random column among those of best exact score.

    When the exact scores need more than ``max_nodes`` positions (early in a 7x6 game),
    the move is ``FALLBACK``'s. The work done stays in the table and speeds up the later
    moves of the same game; a position that does not follow the last one asked about (its
    stones do not include that one's: another game) starts from an empty table, so whether
    a move fits the budget depends on its game alone, not on the games played before in the
    process (``--workers`` and ``--backend ray`` give the same games).

    Args:
        record: the game record (four-in-a-row).
        max_nodes: the search budget per move.
    """

    def __init__(self, record: Game, max_nodes: int) -> None:
        self.record = record
        self.max_nodes = max_nodes
        self.fallback: Agent | None = None
        self.last: tuple[rules.Geometry, int] | None = None
        """The board size and stones of the last position asked about."""

    def _start_game_if_new(self, state: rules.State) -> None:
        """Empty the table when ``state`` does not follow the last position asked about."""
        stones = state.me | state.opp
        if self.last is None or self.last[0] != state.geom or self.last[1] & stones != self.last[1]:
            board(state.geom).reset()
        self.last = (state.geom, stones)

    def act(self, state: rules.State, rng: np.random.Generator) -> int:
        """A best column of ``state``, or ``FALLBACK``'s move past the budget.

        Raises:
            ValueError: the game is over, or ``rng`` is not a numpy Generator.
        """
        check_rng(rng)
        self._start_game_if_new(state)
        try:
            columns = best_columns(state, self.max_nodes)
        except BudgetExceededError:
            if self.fallback is None:
                self.fallback = players.make(self.record, FALLBACK)
            return self.fallback.act(state, rng)
        return int(columns[rng.integers(len(columns))])

    def __repr__(self) -> str:
        return f"SolverPlayer(max_nodes={self.max_nodes})"


__all__ = ["FALLBACK", "LEAF_EMPTIES", "Board", "BudgetExceededError", "SolverPlayer",
           "best_columns", "board", "column_scores", "leaf_values", "solve", "winning_cells"]
