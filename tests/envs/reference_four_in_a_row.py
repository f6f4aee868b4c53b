"""The numpy/Python four-in-a-row bit rules that ``envs.games.four_in_a_row_bits`` replaced:
the reference the compiled rules are tested against. Each function serves Python ints (one
game) and ``uint64`` arrays (a batch) alike, on the rules' ``Geometry`` of any board size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boardgym.envs.games.bitboard import compress, select
from boardgym.envs.games.four_in_a_row import Geometry


def doubling_steps(connect: int) -> tuple[int, ...]:
    """The lengths added at each step when runs of 1 double up to ``connect`` (runs of 2 from
    runs of 1, then 4 from 2, ...): ``(1, 2)`` for 4, ``(1, 2, 1)`` for 5."""
    steps, length = [], 1
    while length < connect:
        steps.append(min(length, connect - length))
        length += steps[-1]
    return tuple(steps)


def run_shifts(geom: Geometry) -> tuple[tuple[int, ...], ...]:
    """Per line direction, the shifts that double runs up to ``connect`` (see ``has_line``)."""
    return tuple(tuple(step * shift for step in doubling_steps(geom.connect))
                 for shift in geom.line_shifts)


def has_line(bits: Any, geom: Geometry) -> Any:
    """True where ``bits`` hold ``connect`` cells in a row in any direction: per direction,
    the cells starting runs double in length at each step (``run_shifts``). Shifts of 64 or
    more empty a word (Python ints and numpy's ``right_shift`` alike)."""
    starts: Any = 0
    for shifts in run_shifts(geom):
        run = bits
        for shift in shifts:
            run = run & (run >> (shift if isinstance(bits, int) else np.uint64(shift)))
        starts = starts | run
    return starts != 0


def legal_bits(me: Any, opp: Any, won: Any, geom: Geometry) -> Any:
    """Playable columns as bits (bit ``c`` for column ``c``); none once the game is over."""
    open_top = geom.top ^ ((me | opp) & geom.top)
    open_columns = compress(open_top, geom.top_cells)
    return select(won, open_columns & 0, open_columns)


def landing_cells(filled: Any, geom: Geometry) -> Any:
    """The drop rule: the landing cell of every column that is not full."""
    if isinstance(filled, int):
        return (filled + geom.bottom) & geom.board
    return (filled + np.uint64(geom.bottom)) & np.uint64(geom.board)


def play(me: Any, opp: Any, columns: Any, geom: Geometry) -> tuple[Any, Any, Any]:
    """``(me, opp, won)`` after the side to move drops in ``columns`` (an int, or an array of
    one column a game): the new mover's tokens become ``opp``."""
    column_bits = geom.column_ints[columns] if isinstance(columns, int) else \
        geom.column_bits[np.asarray(columns)]
    mover = me | landing_cells(me | opp, geom) & column_bits
    return opp, mover, has_line(mover, geom)
