"""Reversi's classic players, compiled: their candidate sets and the vector env's replies.

Each classic AI (``agents.reversi``, ``random``) picks uniformly among a candidate set of
moves; ``candidates(code, me, opp, legal)`` is that set for the player whose code is its
index in ``REVERSI_PLAYERS``, for the side to move owning ``me`` with legal moves ``legal``
(0 for a finished game). ``respond_batch`` plays the opponent's replies in N games, each move
chosen with one draw of the sub-env's splitmix stream (``compiled.choose``), exactly as the
batched players do in the vector env.

``wpc_batch`` is the candidate set of ``wpc``, the weighted-piece-counter player
(``agents.reversi``), over arrays: both its single-game and its batched player run it, and
its code in ``REVERSI_PLAYERS`` gives the vector env its compiled twin.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from boardgym.agents.compiled import REVERSI_PLAYERS
from boardgym.envs.games.compiled import (
    ONE,
    ZERO,
    choose,
    entry,
    lowest_bit,
    popcount,
    stream_draw,
)
from boardgym.envs.games.reversi_bits import WORDS, flips, play

RANDOM, CORNER_BEST, CORNER_SIDE_BEST, WORST, WPC = (
    REVERSI_PLAYERS.index(name) for name in ("random", "corner_best", "corner_side_best",
                                             "worst", "wpc"))
CORNERS = np.uint64(0x8100_0000_0000_0081)
EDGES = np.uint64(0xFF81_8181_8181_81FF)
"""Row or column 0 or 7."""
NO_ACTION = -1
"""``last`` of a game where the opponent did not move."""
MOST_FLIPS, FEWEST_FLIPS, WPC_GAIN = range(3)
"""What ``best_moves`` maximises: the discs a move flips, their negative, or its WPC gain."""
WPC_QUARTER = ((100, -25, 10, 5), (-25, -25, 1, 1), (10, 1, 5, 2), (5, 1, 2, 1))
"""The weighted piece counter of Yoshioka, Ishii and Ito (1999), the "standard heuristic
player" of Szubert and Jaskowski's Othello League, in hundredths (so that sums and ties are
exact): the top-left quarter of the board, the rest its mirror images."""
_HALF = np.array([[*row, *row[::-1]] for row in WPC_QUARTER], dtype=np.int64)
WPC_WEIGHTS = np.concatenate([_HALF, _HALF[::-1]]).ravel()
"""The WPC weight of each cell (row-major, cell ``row * 8 + col``), in hundredths."""


@njit(cache=True, inline="always")
def weight_sum(bits: np.uint64) -> np.int64:
    """The sum of ``WPC_WEIGHTS`` over the cells of ``bits``, an ``int64``."""
    total = np.int64(0)
    rest = np.uint64(bits)
    while rest:
        total += WPC_WEIGHTS[lowest_bit(rest)]
        rest &= rest - ONE
    return total


@njit(cache=True, inline="always")
def move_key(me: np.uint64, opp: np.uint64, move: np.uint64, kind: int) -> np.int64:
    """The value that ``best_moves`` of ``kind`` maximises over the single bit ``move``.

    ``WPC_GAIN``: the WPC of the position after the move (the mover's weights minus the
    opponent's) less the WPC before it: the new disc's weight plus twice the flipped discs'.
    """
    flipped = flips(me, opp, move)
    if kind == WPC_GAIN:
        return weight_sum(move) + 2 * weight_sum(flipped)
    count = np.int64(popcount(flipped))
    return count if kind == MOST_FLIPS else -count


@njit(cache=True, inline="always")
def best_moves(me: np.uint64, opp: np.uint64, legal: np.uint64, kind: int) -> np.uint64:
    """The moves of ``legal`` with the largest ``move_key`` of ``kind`` for the owner of
    ``me`` against ``opp``, as a bitmask (every tied one; 0 when ``legal`` is 0)."""
    chosen = ZERO
    best = np.int64(0)
    rest = np.uint64(legal)
    while rest:
        move = rest & (~rest + ONE)
        rest ^= move
        key = move_key(me, opp, move, kind)
        if chosen == ZERO or key > best:
            chosen, best = move, key
        elif key == best:
            chosen |= move
    return chosen


@njit(cache=True, inline="always")
def _candidates(code: int, me: np.uint64, opp: np.uint64, legal: np.uint64) -> np.uint64:
    """``candidates``, inlined into the kernels."""
    if code == RANDOM:
        return np.uint64(legal)
    if code == WORST:
        return best_moves(me, opp, legal, FEWEST_FLIPS)
    if code == WPC:
        return best_moves(me, opp, legal, WPC_GAIN)
    corners = legal & CORNERS
    if corners:
        return corners
    if code == CORNER_SIDE_BEST:
        edges = legal & EDGES
        if edges:
            return edges
    return best_moves(me, opp, legal, MOST_FLIPS)


@entry("u8(i8, u8, u8, u8)")
def candidates(code: int, me: np.uint64, opp: np.uint64, legal: np.uint64) -> np.uint64:
    """The candidate moves of player ``code`` (an index of ``REVERSI_PLAYERS``) for the side
    to move owning ``me`` against ``opp`` with legal moves ``legal``:

    - ``random``: ``legal``;
    - ``corner_best``: the legal corners, else the moves flipping the most discs;
    - ``corner_side_best``: the legal corners, else the legal edge moves, else the moves
      flipping the most discs;
    - ``worst``: the moves flipping the fewest discs;
    - ``wpc``: the moves leaving the highest weighted piece count (``WPC_WEIGHTS``).
    """
    return _candidates(code, me, opp, legal)


@entry(types.uint64[:](WORDS, WORDS, WORDS))
def wpc_batch(me: np.ndarray, opp: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """``wpc``'s candidates in each game of a batch: the moves of ``legal`` after which the
    WPC of the position (``WPC_WEIGHTS`` over the mover's discs minus over the opponent's,
    flips included) is largest, every tied one (0 for a finished game)."""
    out = np.empty(me.shape[0], dtype=np.uint64)
    for i in range(me.shape[0]):
        out[i] = best_moves(me[i], opp[i], legal[i], WPC_GAIN)
    return out


@entry("void(u8[:], u8[:], i8[:], u8[:], i8[:], u8[:], u8[:], b1[:], i8[:], i8)")
def respond_batch(me: np.ndarray, opp: np.ndarray, to_move: np.ndarray, legal: np.ndarray,
                  agent_side: np.ndarray, keys: np.ndarray, counters: np.ndarray,
                  skip: np.ndarray, last: np.ndarray, code: int) -> None:
    """Player ``code``'s replies in each game ``i`` of a batch (``me``, ``opp``,
    ``to_move``, ``legal``: the batched state's fields, changed in place) not ``skip[i]``:
    while the game is not over and ``to_move[i] != agent_side[i]``, it advances
    ``counters[i]`` by one and plays the candidate that ``choose`` picks with the stream word
    ``stream_draw(keys[i], counters[i])``, passes included (``reversi_bits.play``).
    ``last[i]`` becomes the last move played there, or ``NO_ACTION``."""
    for i in range(me.shape[0]):
        last[i] = NO_ACTION
        side = agent_side[i]
        if skip[i] or legal[i] == ZERO or to_move[i] == side:
            continue
        mine, theirs, mover, moves = me[i], opp[i], to_move[i], legal[i]
        key, counter = keys[i], counters[i]
        action = NO_ACTION
        while moves != ZERO and mover != side:
            counter += ONE
            action = choose(_candidates(code, mine, theirs, moves), stream_draw(key, counter))
            mine, theirs, mover, moves = play(mine, theirs, mover, action)
        me[i], opp[i], to_move[i], legal[i] = mine, theirs, mover, moves
        counters[i], last[i] = counter, action


__all__ = ["CORNER_BEST", "CORNER_SIDE_BEST", "RANDOM", "WORST", "WPC", "WPC_WEIGHTS",
           "best_moves", "candidates", "respond_batch", "wpc_batch"]
