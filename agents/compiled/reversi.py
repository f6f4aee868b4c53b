"""Reversi's classic players, compiled: their candidate sets and the vector env's replies.

Each classic AI (``agents.reversi``, ``random``) picks uniformly among a candidate set of
moves; ``candidates(code, me, opp, legal)`` is that set for the player whose code is its
index in ``REVERSI_PLAYERS``, for the side to move owning ``me`` with legal moves ``legal``
(0 for a finished game). ``respond_batch`` plays the opponent's replies in N games, each move
chosen with one draw of the sub-env's splitmix stream (``compiled.choose``), exactly as the
batched players do in the vector env.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boardgym.agents.compiled import REVERSI_PLAYERS
from boardgym.envs.games.compiled import ONE, ZERO, choose, entry, popcount, stream_draw
from boardgym.envs.games.reversi_bits import flips, play

RANDOM, CORNER_BEST, CORNER_SIDE_BEST, WORST = (
    REVERSI_PLAYERS.index(name) for name in ("random", "corner_best", "corner_side_best",
                                             "worst"))
CORNERS = np.uint64(0x8100_0000_0000_0081)
EDGES = np.uint64(0xFF81_8181_8181_81FF)
"""Row or column 0 or 7."""
NO_ACTION = -1
"""``last`` of a game where the opponent did not move."""


@njit(cache=True, inline="always")
def extreme_flips(me: np.uint64, opp: np.uint64, legal: np.uint64, most: bool) -> np.uint64:
    """The moves of ``legal`` flipping the most (``most``) or the fewest discs of ``opp``
    for the owner of ``me``, as a bitmask (0 when ``legal`` is 0)."""
    chosen = ZERO
    best = np.int64(0)
    rest = np.uint64(legal)
    while rest:
        move = rest & (~rest + ONE)
        rest ^= move
        count = np.int64(popcount(flips(me, opp, move)))
        key = count if most else -count
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
        return extreme_flips(me, opp, legal, False)
    corners = legal & CORNERS
    if corners:
        return corners
    if code == CORNER_SIDE_BEST:
        edges = legal & EDGES
        if edges:
            return edges
    return extreme_flips(me, opp, legal, True)


@entry("u8(i8, u8, u8, u8)")
def candidates(code: int, me: np.uint64, opp: np.uint64, legal: np.uint64) -> np.uint64:
    """The candidate moves of player ``code`` (an index of ``REVERSI_PLAYERS``) for the side
    to move owning ``me`` against ``opp`` with legal moves ``legal``:

    - ``random``: ``legal``;
    - ``corner_best``: the legal corners, else the moves flipping the most discs;
    - ``corner_side_best``: the legal corners, else the legal edge moves, else the moves
      flipping the most discs;
    - ``worst``: the moves flipping the fewest discs.
    """
    return _candidates(code, me, opp, legal)


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


__all__ = ["CORNER_BEST", "CORNER_SIDE_BEST", "RANDOM", "WORST", "candidates",
           "extreme_flips", "respond_batch"]
