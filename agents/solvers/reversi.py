"""An exact Reversi endgame solver, compiled with numba: the final disc difference under
perfect play.

Scores are for the side to move: its discs minus the opponent's at the end of the game, the
empty squares going to the winner (the usual convention of endgame solvers; 0 for a draw).

The search works on the rules' bitboards (``boardgym.envs.games.reversi``: bit ``row * 8 +
col``, the same direction shifts and edge masks): negamax with alpha-beta on null windows,
the score found by a binary search over the scores. With at least ``SORT_EMPTIES`` empty
squares, moves are tried fastest-first (fewest replies for the opponent, corners first among
equals, the transposition table's best move before all) and the position's bounds go to a
transposition table (numpy arrays, kept between calls: every entry is a true bound); with
fewer, moves are tried by parity (squares in quadrants with an odd number of empties first),
without sorting.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boardgym.agents.solvers import exact_outcomes
from boardgym.envs.games import reversi as rules
from boardgym.envs.games.compiled import ONE, ZERO, popcount
from boardgym.envs.games.reversi_bits import flips, legal_moves

WORD_BITS = 64
QUADRANTS = np.array([sum(1 << (row * rules.SIZE + col) for row in rows for col in cols)
                      for rows in (range(4), range(4, 8)) for cols in (range(4), range(4, 8))],
                     dtype=np.uint64)
"""The four 4x4 quadrants of the board: the regions of the parity ordering."""
CORNERS = np.uint64(rules.CORNERS)
SORT_EMPTIES = 7
"""Positions with at least this many empty squares sort their moves and use the table."""
CORNER_BONUS = 1
"""Sort key bonus of a corner move (in opponent replies)."""
TABLE_BITS = 21
"""``2 ** 21`` transposition table entries (36 MB)."""
HASH_ME = np.uint64(0x9E37_79B9_7F4A_7C15)
HASH_OPP = np.uint64(0xC2B2_AE3D_27D4_EB4F)
MAX_SCORE = rules.CELLS
NO_MOVE = -1


@njit(cache=True)
def final_score(me: np.uint64, opp: np.uint64) -> int:
    """The disc difference of a finished game for the owner of ``me``, the empty squares
    going to the winner."""
    mine, theirs = popcount(me), popcount(opp)
    empties = WORD_BITS - mine - theirs
    if mine > theirs:
        return mine - theirs + empties
    if mine < theirs:
        return mine - theirs - empties
    return 0


@njit(cache=True)
def _odd_regions(empty: np.uint64) -> np.uint64:
    """The quadrants holding an odd number of empty squares."""
    odd = ZERO
    for quadrant in QUADRANTS:
        if popcount(empty & quadrant) & 1:
            odd |= quadrant
    return odd


@njit(cache=True)
def _shallow(me: np.uint64, opp: np.uint64, alpha: int, beta: int, counter: np.ndarray) -> int:
    """Fail-soft negamax without sorting or table, moves in odd quadrants first."""
    counter[0] += 1
    moves = legal_moves(me, opp)
    if moves == 0:
        if legal_moves(opp, me) == 0:
            return final_score(me, opp)
        return -_shallow(opp, me, -beta, -alpha, counter)
    empty = ~(me | opp)
    odd = _odd_regions(empty)
    best = -MAX_SCORE - 1
    for group in (moves & odd, moves & ~odd):
        while group:
            move = group & (ZERO - group)
            group ^= move
            flipped = flips(me, opp, move)
            score = -_shallow(opp ^ flipped, me | move | flipped, -beta, -alpha, counter)
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        return best
    return best


@njit(cache=True)
def _deep(me: np.uint64, opp: np.uint64, alpha: int, beta: int, table: tuple,
          counter: np.ndarray) -> int:  # type: ignore[type-arg]
    """Fail-soft negamax with fastest-first ordering and the transposition table."""
    empties = popcount(~(me | opp))
    if empties < SORT_EMPTIES:
        return _shallow(me, opp, alpha, beta, counter)
    counter[0] += 1
    moves = legal_moves(me, opp)
    if moves == 0:
        if legal_moves(opp, me) == 0:
            return final_score(me, opp)
        return -_deep(opp, me, -beta, -alpha, table, counter)
    keys_me, keys_opp, lows, highs, best_moves, shift = table
    slot = int(((me * HASH_ME) ^ (opp * HASH_OPP)) >> shift)
    hint = NO_MOVE
    if keys_me[slot] == me and keys_opp[slot] == opp:
        low, high = int(lows[slot]), int(highs[slot])
        if low >= beta:
            return low
        if high <= alpha:
            return high
        alpha, beta = max(alpha, low), min(beta, high)
        hint = int(best_moves[slot])
    else:
        low, high = -MAX_SCORE, MAX_SCORE
    count = popcount(moves)
    order_moves = np.empty(count, dtype=np.uint64)
    order_keys = np.empty(count, dtype=np.int64)
    n = 0
    while moves:
        move = moves & (ZERO - moves)
        moves ^= move
        flipped = flips(me, opp, move)
        key = popcount(legal_moves(opp ^ flipped, me | move | flipped)) * 2
        if move & CORNERS:
            key -= CORNER_BONUS
        if hint >= 0 and move == ONE << np.uint64(hint):
            key = -MAX_SCORE
        j = n
        while j > 0 and order_keys[j - 1] > key:
            order_moves[j] = order_moves[j - 1]
            order_keys[j] = order_keys[j - 1]
            j -= 1
        order_moves[j] = move
        order_keys[j] = key
        n += 1
    start_alpha = alpha
    best = -MAX_SCORE - 1
    best_move = ZERO
    for i in range(count):
        move = order_moves[i]
        flipped = flips(me, opp, move)
        score = -_deep(opp ^ flipped, me | move | flipped, -beta, -alpha, table, counter)
        if score > best:
            best, best_move = score, move
            if score > alpha:
                alpha = score
                if alpha >= beta:
                    break
    if best >= beta:
        low = max(low, best)
    elif best <= start_alpha:
        high = min(high, best)
    else:
        low = high = best
    keys_me[slot], keys_opp[slot] = me, opp
    lows[slot], highs[slot] = low, high
    best_moves[slot] = popcount(best_move - ONE)
    return best


@njit(cache=True)
def _solve(me: np.uint64, opp: np.uint64, table: tuple,
           counter: np.ndarray) -> int:  # type: ignore[type-arg]
    """The exact score: a binary search over the scores with null windows, from 0."""
    low, high = -MAX_SCORE, MAX_SCORE
    guess = 0
    while low < high:
        score = _deep(me, opp, guess, guess + 1, table, counter)
        if score <= guess:
            high = score
        else:
            low = score
        guess = low + (high - low) // 2
        guess = min(max(guess, low), high - 1)
    return low


class Table:
    """The transposition table: per slot the two players' discs, the score's lower and upper
    bounds, and the best move found (``2 ** bits`` slots)."""

    def __init__(self, bits: int = TABLE_BITS) -> None:
        size = 1 << bits
        self.arrays = (np.zeros(size, dtype=np.uint64), np.zeros(size, dtype=np.uint64),
                       np.zeros(size, dtype=np.int8), np.zeros(size, dtype=np.int8),
                       np.zeros(size, dtype=np.int8), np.uint64(WORD_BITS - bits))

    def reset(self) -> None:
        """Forget every entry."""
        for array in self.arrays[:2]:
            array[:] = 0


TABLE = Table()
"""The table every call shares."""


def _words(state: rules.State) -> tuple[np.uint64, np.uint64]:
    if isinstance(state.me, np.ndarray):
        raise ValueError("the solver takes one position, not a batch: pass "
                         "boardgym.envs.games.core.unbatch(state, i)")
    return np.uint64(int(state.me)), np.uint64(int(state.opp))


def solve(state: rules.State) -> int:
    """The final disc difference for the side to move of ``state`` under perfect play (the
    winner gets the empty squares); a finished game's own score.

    Raises:
        ValueError: a batched state.
    """
    me, opp = _words(state)
    return int(_solve(me, opp, TABLE.arrays, np.zeros(1, dtype=np.int64)))


def move_scores(state: rules.State) -> dict[int, int]:
    """The exact final disc difference, for the side to move, after each legal action
    (an empty dict for a finished game).

    Raises:
        ValueError: a batched state.
    """
    return counted_move_scores(state)[0]


def counted_move_scores(state: rules.State) -> tuple[dict[int, int], int]:
    """``move_scores`` and the number of positions the search visited to find them.

    Raises:
        ValueError: a batched state.
    """
    me, opp = _words(state)
    counter = np.zeros(1, dtype=np.int64)
    scores = {}
    for action in np.flatnonzero(rules.legal_mask(state)).tolist():
        move = np.uint64(1 << action)
        flipped = flips(me, opp, move)
        scores[action] = -int(_solve(opp ^ flipped, me | move | flipped, TABLE.arrays, counter))
    return scores, int(counter[0])


LEAF_EMPTIES = 10
"""``leaf_values`` solves endgames with at most this many empty squares: median 0.5 ms,
at most 1.5 ms on 60 positions of the labelled set played on at random (12 empties: median
2 ms, up to 50 ms)."""


def leaf_values(states: rules.State) -> np.ndarray:
    """The exact outcome for the side to move (+1, 0, -1) of each unfinished position of
    the batched ``states`` with at most ``LEAF_EMPTIES`` empty squares, NaN for the others
    (``agents.solvers.LeafValues``, what the az search asks near the end of the game)."""
    empty = rules.CELLS - np.bitwise_count(states.me | states.opp)
    return exact_outcomes(states, empty <= LEAF_EMPTIES, solve)


__all__ = ["LEAF_EMPTIES", "TABLE", "Table", "counted_move_scores", "final_score", "flips",
           "leaf_values", "legal_moves", "move_scores", "solve"]
