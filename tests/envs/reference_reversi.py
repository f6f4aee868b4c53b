"""The numpy/Python Reversi bit rules that ``envs.games.reversi_bits`` replaced: the
reference the compiled rules are tested against. Each function serves Python ints (one game)
and ``uint64`` arrays (a batch) alike: a Kogge-Stone fill per direction, the directions
grouped by edge mask."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from boardgym.envs.games.bitboard import FULL64, Bits, bit_of, select, state_from_fields
from boardgym.envs.games.reversi import LEFT_SHIFTS, RIGHT_SHIFTS, State

Shift = Callable[[Any, int], Any]
Direction = tuple[Shift, int, int]
"""``(shift operator, step, edge mask)``: one of the eight directions of the board."""

DIRECTIONS: tuple[Direction, ...] = (
    *((operator.lshift, step, mask) for step, mask in LEFT_SHIFTS),
    *((operator.rshift, step, mask) for step, mask in RIGHT_SHIFTS),
)
DIRECTION_GROUPS: tuple[tuple[int, tuple[tuple[Shift, int, int], ...]], ...] = tuple(
    (mask, tuple((shift, step, 2 * step) for shift, step, m in DIRECTIONS if m == mask))
    for mask in dict.fromkeys(m for _, _, m in DIRECTIONS))
"""``DIRECTIONS`` grouped by edge mask, ``(mask, ((shift, step, double step), ...))``."""


def _run(start: Bits, inner_opp: Bits, shift: Shift, step: int, double_step: int) -> Bits:
    """The discs of ``inner_opp`` (edge-masked for this direction) in the unbroken runs that
    begin next to ``start`` along ``shift`` by ``step`` bits (``start`` excluded): one step
    of 1, then two of 2 over pairs, which covers runs of up to 6."""
    run = inner_opp & shift(start, step)
    if type(run) is int and not run:
        return run
    run |= inner_opp & shift(run, step)
    pairs = inner_opp & shift(inner_opp, step)
    run |= pairs & shift(run, double_step)
    run |= pairs & shift(run, double_step)
    return run


def legal_bits(me: Bits, opp: Bits) -> Bits:
    """Cells where the side owning ``me`` may play against ``opp``."""
    empty = FULL64 ^ (me | opp)
    moves: Bits = 0
    for mask, directions in DIRECTION_GROUPS:
        inner_opp, targets = opp & mask, empty & mask
        for shift, step, double_step in directions:
            moves |= targets & shift(_run(me, inner_opp, shift, step, double_step), step)
    return moves


def flip_bits(me: Bits, opp: Bits, move: Bits) -> Bits:
    """Discs of ``opp`` flipped when the owner of ``me`` plays the single-bit ``move``."""
    flipped: Bits = 0
    for mask, directions in DIRECTION_GROUPS:
        inner_opp, closers = opp & mask, me & mask
        for shift, step, double_step in directions:
            run = _run(move, inner_opp, shift, step, double_step)
            flipped |= run * ((closers & shift(run, step)) != 0)
    return flipped


def _legal_where_stuck(other_legal: Bits, mover: Bits, other: Bits) -> Bits:
    """``legal_bits(mover, other)`` where ``other_legal`` is 0 (the only place a pass can
    happen); 0 elsewhere."""
    if not isinstance(other_legal, np.ndarray):
        return legal_bits(mover, other) if other_legal == 0 else 0
    stuck = other_legal == 0
    result = np.zeros_like(other_legal)
    if stuck.any():
        result[stuck] = legal_bits(np.broadcast_to(mover, stuck.shape)[stuck],
                                   np.broadcast_to(other, stuck.shape)[stuck])
    return result


def play_bit(state: State, move: Bits) -> State:
    """The position after the side to move plays ``move`` (assumed legal), passes included."""
    flipped = flip_bits(state.me, state.opp, move)
    mover = state.me | move | flipped
    other = state.opp ^ flipped
    other_legal = legal_bits(other, mover)
    mover_legal = _legal_where_stuck(other_legal, mover, other)
    passes = (other_legal == 0) & (mover_legal != 0)
    return state_from_fields(State, (
        select(passes, mover, other),  # me
        select(passes, other, mover),  # opp
        select(passes, state.to_move, 1 - state.to_move),  # to_move
        select(passes, mover_legal, other_legal),  # legal
    ))


def play(state: State, action: int) -> State:
    """One game's ``rules.play``."""
    return play_bit(state, 1 << action)


def apply_batch(state: State, actions: np.ndarray) -> State:
    """A batch's ``rules.apply_batch``."""
    return play_bit(state, bit_of(np.asarray(actions)))
