"""Reversi's bit rules, compiled (numba): the one place the moves, flips and passes live.

Cell ``row * 8 + col`` is bit ``row * 8 + col`` (row 0 at the top, col 0 on the left). Each
function takes and returns ``uint64`` words and is compiled with ``cache=True``: called from
Python it serves one game (``envs.games.reversi``'s rules), and the players', solvers' and
env kernels call it inside their own compiled loops. The ``*_batch`` functions are the loops
over arrays that the batched rules use.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from boardgym.envs.games.bitboard import FULL64
from boardgym.envs.games.compiled import ONE, ZERO, entry, popcount

SIZE = 8
CELLS = SIZE * SIZE
ACTION_BITS = np.int64(CELLS - 1)
"""The bits of an action a batch reads (``action & 63``): any action names some cell."""
NOT_COL_0 = 0xFEFE_FEFE_FEFE_FEFE
"""Every cell but the left column: where a bit shifted one column right may land."""
NOT_COL_7 = 0x7F7F_7F7F_7F7F_7F7F
"""Every cell but the right column: where a bit shifted one column left may land."""
FIRST_START = (1 << 28) | (1 << 35)  # e4, d5
SECOND_START = (1 << 27) | (1 << 36)  # d4, e5
MAX_RUN = SIZE - 2
"""Longest run of opponent discs a move can flip in one direction."""

# (step, edge mask) per direction. A left shift by ``step`` moves a cell that many positions
# up the bit order; the mask clears cells that wrapped around a row edge.
LEFT_SHIFTS = ((1, NOT_COL_0), (SIZE, FULL64), (SIZE + 1, NOT_COL_0), (SIZE - 1, NOT_COL_7))
RIGHT_SHIFTS = ((1, NOT_COL_7), (SIZE, FULL64), (SIZE + 1, NOT_COL_7), (SIZE - 1, NOT_COL_0))
STEPS = np.array([step for step, _ in LEFT_SHIFTS + RIGHT_SHIFTS], dtype=np.uint64)
"""Bit distance of the eight directions: the first four shift up (``<<``), the rest down."""
EDGE_MASKS = np.array([mask for _, mask in LEFT_SHIFTS + RIGHT_SHIFTS], dtype=np.uint64)
"""Per direction, the cells a shifted bit may land on (no wrapping round a row's end)."""
UP_DIRECTIONS = len(LEFT_SHIFTS)
DIRECTIONS = len(STEPS)
FULL = np.uint64(FULL64)
WORDS = types.Array(types.uint64, 1, "A", readonly=True)
"""The batch loops' inputs: any 1-D ``uint64`` array (read-only, strided or broadcast too)."""
ACTIONS = types.Array(types.int64, 1, "A", readonly=True)
"""``play_batch``'s actions: any 1-D ``int64`` array."""


@njit(cache=True, inline="always")
def _shift(bits: np.uint64, direction: int, amount: np.uint64) -> np.uint64:
    """``bits`` moved ``amount`` bits along ``direction``'s sense (no edge mask)."""
    if direction < UP_DIRECTIONS:
        return bits << amount
    return bits >> amount


@njit(cache=True, inline="always")
def _run(start: np.uint64, inner_opp: np.uint64, direction: int) -> np.uint64:
    """The discs of ``inner_opp`` (the opponent's, edge-masked for ``direction``) in the
    unbroken run that begins next to ``start``'s discs along ``direction`` (``start``
    excluded): a Kogge-Stone fill, one step of 1 then two of 2 over pairs, which covers runs
    of up to ``MAX_RUN``."""
    step = STEPS[direction]
    double = step + step
    run = inner_opp & _shift(start, direction, step)
    run |= inner_opp & _shift(run, direction, step)
    pairs = inner_opp & _shift(inner_opp, direction, step)
    run |= pairs & _shift(run, direction, double)
    run |= pairs & _shift(run, direction, double)
    return run


@entry("u8(u8, u8)")
def legal_moves(me: np.uint64, opp: np.uint64) -> np.uint64:
    """The cells where the owner of ``me`` may play against ``opp``: the empty cell just past
    a run of ``opp`` discs that starts next to a disc of ``me``."""
    empty = FULL ^ (me | opp)
    moves = ZERO
    for direction in range(DIRECTIONS):
        mask = EDGE_MASKS[direction]
        run = _run(me, opp & mask, direction)
        moves |= empty & mask & _shift(run, direction, STEPS[direction])
    return moves


@entry("u8(u8, u8, u8)")
def flips(me: np.uint64, opp: np.uint64, move: np.uint64) -> np.uint64:
    """The discs of ``opp`` flipped when the owner of ``me`` plays the single bit ``move``:
    each run of ``opp`` discs next to ``move`` that a disc of ``me`` closes."""
    flipped = ZERO
    for direction in range(DIRECTIONS):
        mask = EDGE_MASKS[direction]
        run = _run(move, opp & mask, direction)
        if me & mask & _shift(run, direction, STEPS[direction]):
            flipped |= run
    return flipped


@entry("Tuple((u8, u8, i8, u8))(u8, u8, i8, i8)")
def play(me: np.uint64, opp: np.uint64, to_move: int,
         action: int) -> tuple[np.uint64, np.uint64, int, np.uint64]:
    """``(me, opp, to_move, legal)`` after the side to move (owning ``me``) plays the legal
    ``action``, passes included: the other side moves next if it can, else the mover again
    if it can, else the game is over (``legal`` 0, the other side "to move")."""
    move = ONE << np.uint64(action)
    flipped = flips(me, opp, move)
    mover = me | move | flipped
    other = opp ^ flipped
    other_legal = legal_moves(other, mover)
    if other_legal:
        return other, mover, 1 - to_move, other_legal
    mover_legal = legal_moves(mover, other)
    if mover_legal:
        return mover, other, to_move, mover_legal
    return other, mover, 1 - to_move, ZERO


@entry("i8(u8, u8)")
def disc_difference(me: np.uint64, opp: np.uint64) -> int:
    """Discs of ``me`` minus discs of ``opp``."""
    return popcount(me) - popcount(opp)


@entry(types.uint64[:](WORDS, WORDS))
def legal_moves_batch(me: np.ndarray, opp: np.ndarray) -> np.ndarray:
    """``legal_moves`` of each game of a batch."""
    out = np.empty(me.shape[0], dtype=np.uint64)
    for i in range(me.shape[0]):
        out[i] = legal_moves(me[i], opp[i])
    return out


@entry(types.uint64[:](WORDS, WORDS, WORDS))
def flips_batch(me: np.ndarray, opp: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """``flips`` of each game of a batch (``moves``: one single-bit word a game)."""
    out = np.empty(me.shape[0], dtype=np.uint64)
    for i in range(me.shape[0]):
        out[i] = flips(me[i], opp[i], moves[i])
    return out


@entry(types.int64[:](WORDS, WORDS, WORDS))
def flip_counts_batch(me: np.ndarray, opp: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """The number of discs ``flips`` turns in each game of a batch."""
    out = np.empty(me.shape[0], dtype=np.int64)
    for i in range(me.shape[0]):
        out[i] = popcount(flips(me[i], opp[i], moves[i]))
    return out


@entry(types.void(types.uint64[:], types.uint64[:], types.int64[:], types.uint64[:], ACTIONS))
def play_batch(me: np.ndarray, opp: np.ndarray, to_move: np.ndarray, legal: np.ndarray,
               actions: np.ndarray) -> None:
    """``play`` of each game of a batch, in place (``legal``'s input unread). A game whose
    action is not legal there (the vector env plays the whole batch, then keeps the games
    that moved) gets some position, never an error: ``actions`` are read modulo 64."""
    for i in range(me.shape[0]):
        me[i], opp[i], to_move[i], legal[i] = play(me[i], opp[i], to_move[i],
                                                   actions[i] & ACTION_BITS)
