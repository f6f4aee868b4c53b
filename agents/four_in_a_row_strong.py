"""The strong four-in-a-row player: ``alphabeta:D`` with a threat-based evaluation and an exact
solve near the end, on any board size (``mcts:N`` is the every-game one of ``agents.search``).

A *threat* of a player is an empty cell that would complete ``connect`` in a row for them.
The evaluation (side to move minus opponent) counts threats, plus how many possible lines
pass through each token. (A bonus for threats on the rows whose parity favours their owner,
the classic zugzwang rule, made ``alphabeta:6`` lose more often to ``lookahead:2``, so there
is none.) Moves are tried winning first, then blocking, then from the centre outwards.
With at most ``EXACT_EMPTIES`` empty cells the search tries to play to the end of the game,
within a budget of ``EXACT_BUDGET`` positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from boardgym.agents.search import Heuristics, alphabeta_factory, decisive
from boardgym.envs.games import four_in_a_row as rules
from boardgym.envs.games import players
from boardgym.envs.games.four_in_a_row import Geometry, State

EXACT_EMPTIES = 20
"""From this many empty cells or fewer, try to search exactly to the end of the game..."""
EXACT_BUDGET = 40_000
"""...visiting at most this many positions (else the depth-limited result stands)."""
DEFAULT_DEPTH = 6
MAX_DEPTH = 14
"""The deepest ``alphabeta:D``: about ten seconds an early move on the default board."""

W_THREAT = 40.0
W_LINE = 1.0
"""Per possible line through each own token."""
WIN_NOW = 100_000.0
"""Value of a position whose side to move can complete a line at once (below ``WIN``)."""


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


def _exact_plies(state: State) -> int | None:
    left = empties(state)
    return left if left <= EXACT_EMPTIES else None


HEURISTICS = Heuristics(rules=rules, evaluate=evaluate, order=ordered_moves,
                        final_value=final_value, exact_plies=_exact_plies,
                        key=lambda state: (state.me, state.opp), exact_budget=EXACT_BUDGET)

players.register(rules.GAME.name, "alphabeta",
                 alphabeta_factory(lambda _: HEURISTICS, DEFAULT_DEPTH, MAX_DEPTH),
                 help=f"alpha-beta D plies deep (default {DEFAULT_DEPTH}, at most "
                      f"{MAX_DEPTH}): threats and open "
                      f"lines; exact from {EXACT_EMPTIES} empty cells")
