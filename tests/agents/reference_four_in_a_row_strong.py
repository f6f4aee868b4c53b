"""The four-in-a-row alpha-beta heuristics as they were in Python, kept as the test reference
of the compiled ones (``agents.four_in_a_row_search``): the threats, the evaluation, the move
order, the value of a finished game and the exact-phase plies, and ``REFERENCE_HEURISTICS``,
the generic ``agents.search.search`` over them.

``search(state, REFERENCE_HEURISTICS, depth, rng)`` is what ``alphabeta:D`` played before its
search was compiled; the differential tests compare the compiled search against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from boardgym.agents.search import Heuristics, decisive
from boardgym.envs.games import four_in_a_row as rules
from boardgym.envs.games.four_in_a_row import Geometry, State

EXACT_EMPTIES = 20
EXACT_BUDGET = 40_000
W_THREAT = 40.0
W_LINE = 1.0
WIN_NOW = 100_000.0
"""The constants as they were (kept here, so that a change of the compiled ones shows)."""


@dataclass(frozen=True)
class Tables:
    """Bit tables of one board size for the search.

    Attributes:
        centre_order: columns from the centre outwards.
        top_cells: bit of the top cell of each column.
        column_cells: the cells of each column.
        line_groups: ``(lines through a cell, cells with that many)`` pairs.
    """

    centre_order: tuple[int, ...]
    top_cells: tuple[int, ...]
    column_cells: tuple[int, ...]
    line_groups: tuple[tuple[int, int], ...]


def _lines(geom: Geometry) -> list[int]:
    """Every set of ``connect`` cells in a row on the board, as bitboards."""
    lines = []
    for step in geom.line_shifts:
        for start in range(geom.height * geom.columns):
            line = sum(1 << (start + i * step) for i in range(geom.connect))
            if line & geom.board == line:
                lines.append(line)
    return lines


@cache
def tables(geom: Geometry) -> Tables:
    """The ``Tables`` of a board size (computed once per size)."""
    centre = (geom.columns - 1) / 2
    counts: dict[int, int] = {}
    for line in _lines(geom):
        for cell in range(geom.height * geom.columns):
            if (line >> cell) & 1:
                counts[cell] = counts.get(cell, 0) + 1
    groups: dict[int, int] = {}
    for cell, count in counts.items():
        groups[count] = groups.get(count, 0) | (1 << cell)
    return Tables(
        centre_order=tuple(sorted(range(geom.columns), key=lambda c: abs(c - centre))),
        top_cells=tuple(int(cell) for cell in geom.top_cells),
        column_cells=tuple(int(cells) for cells in geom.column_bits),
        line_groups=tuple(sorted(groups.items())),
    )


def threats(bits: int, empty: int, geom: Geometry) -> int:
    """The cells of ``empty`` that would complete ``connect`` in a row with ``bits``."""
    found = 0
    for step in geom.line_shifts:
        for gap in range(geom.connect):
            cells = empty
            for i in range(geom.connect):
                offset = (i - gap) * step
                if offset > 0:
                    cells &= bits >> offset
                elif offset < 0:
                    cells &= bits << -offset
            found |= cells
    return found


def _line_score(bits: int, groups: tuple[tuple[int, int], ...]) -> int:
    return sum(count * (bits & cells).bit_count() for count, cells in groups)


def evaluate(state: State) -> float:
    """Heuristic value of a non-final position for the side to move (positive is good)."""
    geom, me, opp = state.geom, int(state.me), int(state.opp)
    filled = me | opp
    empty = geom.board ^ filled
    playable = rules.landing_cells(filled, geom)
    mine, theirs = threats(me, empty, geom), threats(opp, empty, geom)
    if mine & playable:
        return WIN_NOW
    if (theirs & playable).bit_count() > 1:
        return -WIN_NOW
    groups = tables(geom).line_groups
    return (W_THREAT * (mine.bit_count() - theirs.bit_count())
            + W_LINE * (_line_score(me, groups) - _line_score(opp, groups)))


def ordered_moves(state: State) -> list[int]:
    """Playable columns: winning ones first, then blocking ones, then centre-first."""
    geom, me, opp = state.geom, int(state.me), int(state.opp)
    filled = me | opp
    empty = geom.board ^ filled
    playable = rules.landing_cells(filled, geom)
    wins = threats(me, empty, geom) & playable
    blocks = threats(opp, empty, geom) & playable
    board = tables(geom)

    def rank(column: int) -> int:
        cells = board.column_cells[column]
        return 0 if wins & cells else 1 if blocks & cells else 2

    return sorted((c for c in board.centre_order if not (filled >> board.top_cells[c]) & 1),
                  key=rank)


def empties(state: State) -> int:
    """Number of empty cells."""
    return state.geom.rows * state.geom.columns - int(state.me | state.opp).bit_count()


def final_value(state: State) -> float:
    """The finished game's value for the side to move: lost (the opponent made a line, the
    more empty cells left the faster) or drawn."""
    if state.won:
        return decisive(-1, empties(state))
    return 0.0


def exact_plies(state: State) -> int | None:
    """The empty cells when at most ``EXACT_EMPTIES``, else None."""
    left = empties(state)
    return left if left <= EXACT_EMPTIES else None


REFERENCE_HEURISTICS = Heuristics(rules=rules, evaluate=evaluate, order=ordered_moves,
                                  final_value=final_value, exact_plies=exact_plies,
                                  key=lambda state: (state.me, state.opp),
                                  exact_budget=EXACT_BUDGET)
