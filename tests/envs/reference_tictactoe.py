"""The numpy/Python tic-tac-toe bit rules that ``envs.games.tictactoe_bits`` replaced: the
reference the compiled rules are tested against. Each function serves Python ints (one game)
and ``uint64`` arrays (a batch) alike."""

from __future__ import annotations

from typing import Any

import numpy as np

from boardgym.envs.games.bitboard import bit_of, select
from boardgym.envs.games.core import for_side

CELLS = 9
FULL = (1 << CELLS) - 1
LINES = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),
    (0, 3, 6), (1, 4, 7), (2, 5, 8),
    (0, 4, 8), (2, 4, 6),
)
LINE_BITS = tuple(sum(1 << cell for cell in line) for line in LINES)


def has_line(bits: Any) -> Any:
    """True where ``bits`` hold one of the eight lines (checked line by line)."""
    found: Any = False
    for line in LINE_BITS:
        found = found | ((bits & line) == line)
    return found


LINE_TABLE = np.asarray(has_line(np.arange(1 << CELLS, dtype=np.uint64)))
OPEN_TABLE = np.where(LINE_TABLE, 0, FULL).astype(np.uint64)
"""Per 9-bit board of the last mover: every cell (``FULL``), or none if it holds a line."""
OPEN_TUPLE = tuple(int(cells) for cells in OPEN_TABLE)


def legal(me: Any, opp: Any) -> Any:
    """Empty cells, or none once the last mover holds a line."""
    empty = FULL ^ (me | opp)
    if isinstance(opp, np.ndarray):
        return empty & OPEN_TABLE[(opp & FULL).astype(np.intp)]
    return empty & OPEN_TUPLE[opp & FULL]


def play(me: Any, opp: Any, to_move: Any, action: Any) -> tuple[Any, Any, Any]:
    """``(me, opp, to_move)`` after the side to move marks cell ``action``."""
    return opp, me | bit_of(action), 1 - to_move


def result(opp: Any, to_move: Any, side: Any) -> Any:
    """+1 if ``side`` made a line, -1 if the other side did, 0 otherwise."""
    return select(has_line(opp), for_side(select(to_move == 1, 1, -1), side), 0)


def reachable_positions() -> list[tuple[int, int, int]]:
    """``(me, opp, to_move)`` of every position reachable from the empty board, finished
    ones included, in increasing order."""
    seen: set[tuple[int, int, int]] = set()
    frontier = [(0, 0, 0)]
    while frontier:
        position = frontier.pop()
        if position in seen:
            continue
        seen.add(position)
        cells = legal(position[0], position[1])
        frontier += [play(*position, cell) for cell in range(CELLS) if cells >> cell & 1]
    return sorted(seen)


def as_words(values: list[int]) -> np.ndarray:
    """``values`` as a ``uint64`` array."""
    return np.array(values, dtype=np.uint64)
