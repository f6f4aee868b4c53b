"""The strong Reversi player's heuristics as they were in Python, kept as the test reference
of the compiled ones (``agents.reversi_search``): the evaluation (stable discs, frontier,
X- and C-squares), the move order, the value of a finished game, and
``REFERENCE_HEURISTICS``, the generic ``agents.search.search`` over them with the endgame
through the compiled solver (``reversi_strong.compiled_endgame``), as before.

``search(state, REFERENCE_HEURISTICS, depth, rng)`` is what ``alphabeta:D`` played before its
search was compiled; the differential tests compare the compiled search against it.
"""

from __future__ import annotations

from boardgym.agents.reversi_search import (
    CORNERS,
    EDGES,
    ENDGAME_EMPTIES,
    FASTEST_FIRST_MIN_EMPTIES,
    W_C_SQUARE,
    W_CORNER,
    W_DISC,
    W_FRONTIER,
    W_MOBILITY,
    W_STABLE,
    W_X_SQUARE,
)
from boardgym.agents.reversi_strong import compiled_endgame
from boardgym.agents.search import Heuristics, decisive
from boardgym.envs.games import reversi as rules
from boardgym.envs.games.bitboard import FULL64
from boardgym.envs.games.reversi import State
from boardgym.envs.games.reversi_bits import CELLS, LEFT_SHIFTS, RIGHT_SHIFTS, SIZE
from boardgym.envs.games.reversi_bits import legal_moves as compiled_legal_moves

AXES = tuple(zip(LEFT_SHIFTS, RIGHT_SHIFTS, strict=True))
"""Per line direction: (shift, mask) towards higher bits and towards lower bits."""
BORDERS = tuple(FULL64 ^ (((FULL64 << step) & low) & ((FULL64 >> step) & high))
                for (step, low), (_, high) in AXES)
"""Per direction: the squares with no neighbour on one side of that line (the board's rim)."""

CORNER_CELLS = (0, SIZE - 1, CELLS - SIZE, CELLS - 1)
X_SQUARES = {0: 1 << 9, 7: 1 << 14, 56: 1 << 49, 63: 1 << 54}
"""The diagonal neighbour of each corner."""
C_SQUARES = {0: (1 << 1) | (1 << 8), 7: (1 << 6) | (1 << 15),
             56: (1 << 48) | (1 << 57), 63: (1 << 62) | (1 << 55)}
"""The edge neighbours of each corner."""
ORDER_PRIORITY = (CORNERS, EDGES ^ CORNERS ^ sum(C_SQUARES.values()),
                  FULL64 ^ EDGES ^ sum(X_SQUARES.values()), sum(C_SQUARES.values()),
                  sum(X_SQUARES.values()))
"""Square groups in the order moves are tried: corners, safe edges, inner squares, C, X."""


def legal_bits(me: int, opp: int) -> int:
    """The legal moves of the owner of ``me`` (the rules', as a Python int)."""
    return int(compiled_legal_moves(me, opp))


def _shift_up(bits: int, step: int, mask: int) -> int:
    """Squares whose neighbour ``step`` bits lower (in a direction with wrap mask ``mask``) is in
    ``bits``."""
    return (bits << step) & mask


def _full_lines(filled: int, step: int, up_mask: int, down_mask: int) -> int:
    """Squares whose whole line in direction ``step`` is filled."""
    up = down = FULL64 ^ filled
    for _ in range(SIZE - 1):
        up |= _shift_up(up, step, up_mask)
        down |= (down >> step) & down_mask
    return FULL64 ^ (up | down)


def _anchors(filled: int) -> list[int]:
    """Per line direction: the squares that are safe along it whatever their neighbours hold,
    because the line is full or they sit on the board's rim across it."""
    return [border | _full_lines(filled, step, up, down)
            for border, ((step, up), (_, down)) in zip(BORDERS, AXES, strict=True)]


def _grow_stable(discs: int, anchors: list[int]) -> int:
    """The stable discs among ``discs``, given the ``_anchors`` of the position."""
    stable = 0
    while True:
        grown = discs
        for base, ((step, up), (_, down)) in zip(anchors, AXES, strict=True):
            grown &= base | _shift_up(stable, step, up) | ((stable >> step) & down)
        if grown == stable:
            return stable
        stable = grown


def stable_discs(me: int, opp: int) -> int:
    """Discs of ``me`` that can never be flipped (a safe under-estimate)."""
    return _grow_stable(me, _anchors(me | opp))


def _stable_difference(me: int, opp: int) -> int:
    """Stable discs of ``me`` minus those of ``opp``, 0 while every corner is empty."""
    filled = me | opp
    if not filled & CORNERS:
        return 0
    anchors = _anchors(filled)
    return _grow_stable(me, anchors).bit_count() - _grow_stable(opp, anchors).bit_count()


def _frontier(discs: int, empty: int) -> int:
    """Discs next to at least one empty square."""
    near_empty = 0
    for step, mask in LEFT_SHIFTS:
        near_empty |= _shift_up(empty, step, mask)
    for step, mask in RIGHT_SHIFTS:
        near_empty |= (empty >> step) & mask
    return discs & near_empty


def _corner_danger(discs: int, filled: int) -> tuple[int, int]:
    """Numbers of ``discs`` on X-squares and on C-squares next to an empty corner."""
    x = c = 0
    for corner in CORNER_CELLS:
        if not (filled >> corner) & 1:
            x += (discs & X_SQUARES[corner]).bit_count()
            c += (discs & C_SQUARES[corner]).bit_count()
    return x, c


def evaluate(state: State) -> float:
    """Heuristic value of a non-final position for the side to move (positive is good)."""
    me, opp = int(state.me), int(state.opp)
    filled = me | opp
    empty = FULL64 ^ filled
    my_x, my_c = _corner_danger(me, filled)
    their_x, their_c = _corner_danger(opp, filled)
    return (W_MOBILITY * (int(state.legal).bit_count() - legal_bits(opp, me).bit_count())
            + W_CORNER * ((me & CORNERS).bit_count() - (opp & CORNERS).bit_count())
            + W_STABLE * _stable_difference(me, opp)
            + W_FRONTIER * (_frontier(me, empty).bit_count() - _frontier(opp, empty).bit_count())
            + W_X_SQUARE * (my_x - their_x) + W_C_SQUARE * (my_c - their_c)
            + W_DISC * (me.bit_count() - opp.bit_count()))


def ordered_moves(state: State) -> list[int]:
    """Legal moves, most promising first: by square group; from ``ENDGAME_EMPTIES`` down to
    ``FASTEST_FIRST_MIN_EMPTIES`` empty squares, fewest opponent replies first."""
    moves = _by_square(state)
    if FASTEST_FIRST_MIN_EMPTIES <= empties(state) <= ENDGAME_EMPTIES:
        moves.sort(key=lambda move: _replies(state, move))
    return moves


def _replies(state: State, move: int) -> int:
    """How many moves the opponent has after ``move`` (0 when the opponent must pass)."""
    child = rules.apply(state, move)
    return 0 if child.to_move == state.to_move else int(child.legal).bit_count()


def _by_square(state: State) -> list[int]:
    """Legal moves: corners, then safe edge squares, inner squares, C- and X-squares."""
    moves: list[int] = []
    for group in ORDER_PRIORITY:
        bits = int(state.legal) & group
        while bits:
            low = bits & -bits
            moves.append(low.bit_length() - 1)
            bits ^= low
    return moves


def empties(state: State) -> int:
    """Number of empty squares."""
    return CELLS - int(state.me | state.opp).bit_count()


def final_value(state: State) -> float:
    """The finished game's value for the side to move: won/lost by the disc difference."""
    diff = int(state.me).bit_count() - int(state.opp).bit_count()
    return decisive((diff > 0) - (diff < 0), abs(diff))


def _endgame_plies(state: State) -> int | None:
    left = empties(state)
    return left if left <= ENDGAME_EMPTIES else None


REFERENCE_HEURISTICS = Heuristics(rules=rules, evaluate=evaluate, order=ordered_moves,
                                  final_value=final_value, exact_plies=_endgame_plies,
                                  key=lambda state: (state.me, state.opp),
                                  solve_moves=compiled_endgame)
"""``alphabeta``'s heuristics before they were compiled."""
