"""The tic-tac-toe AIs, each one candidate-move set (``agents.base``) read from a table.

- ``rules``: the first cell (scanning 0..8) that wins now; else the first cell where the
  opponent would win (a block); else a random free corner; else the centre; else a random
  free side. The default opponent of ``TicTacToe-v0``.
- ``rules_center``: win; block; the centre if free; else a random free corner; else a random
  free side.
- ``perfect``: full minimax (``value``): never loses; among the optimal moves it prefers the
  fastest win or the slowest loss, then picks uniformly at random.

Each rule is written once, on one position (``rule_moves``, ``perfect_moves``), and worked out
once for every reachable position into a table indexed by the position's bits; the players,
single and batched, read the table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

import numpy as np

from boardgym.agents.base import Candidates, no_argument, register_candidates
from boardgym.envs.games import tictactoe as rules

CORNER_FIRST = ("corners", "centre", "sides")
CENTRE_FIRST = ("centre", "corners", "sides")
CELL_GROUPS: dict[str, tuple[int, ...]] = {
    "corners": rules.CORNER_CELLS,
    "centre": (rules.CENTRE,),
    "sides": rules.SIDE_CELLS,
}
MoveRule = Callable[[int, int], int]
"""``(side to move's marks, other side's marks)`` of a live position -> its moves as bits."""


def cells_bits(cells: Sequence[int]) -> int:
    """The bitboard of ``cells``."""
    return sum(1 << cell for cell in cells)


def winning_cell(marks: int, filled: int) -> int | None:
    """The first empty cell (0..8, of the board ``filled``) that would give ``marks`` a line,
    or None."""
    return next((cell for cell in range(rules.CELLS)
                 if not (filled >> cell) & 1 and rules.has_line(marks | (1 << cell))), None)


def rule_moves(order: Sequence[str]) -> MoveRule:
    """The classic rule AI trying the cell groups in ``order`` after win and block."""

    def moves(me: int, opp: int) -> int:
        for marks in (me, opp):
            cell = winning_cell(marks, me | opp)
            if cell is not None:
                return 1 << cell
        empty = rules.FULL ^ (me | opp)
        return next(bits for bits in (empty & cells_bits(CELL_GROUPS[name]) for name in order)
                    if bits)

    return moves


@cache
def value(me: int, opp: int) -> int:
    """The minimax value of a position for the side to move (``me``), preferring speed.

    A win is worth ``1 + empty cells`` when it happens (sooner is bigger), a loss the negative
    of that (later is better), a draw 0.

    Args:
        me: marks of the side to move.
        opp: marks of the side that just moved.
    """
    empty = rules.FULL ^ (me | opp)
    if rules.has_line(opp):
        return -(1 + empty.bit_count())
    if empty == 0:
        return 0
    return max(-value(opp, me | (1 << cell)) for cell in range(rules.CELLS) if (empty >> cell) & 1)


def move_values(me: int, opp: int) -> dict[int, int]:
    """The minimax ``value`` of each empty cell for the side to move (``me``)."""
    empty = rules.FULL ^ (me | opp)
    return {cell: -value(opp, me | (1 << cell)) for cell in range(rules.CELLS)
            if (empty >> cell) & 1}


def perfect_moves(me: int, opp: int) -> int:
    """The moves of highest minimax ``value``."""
    values = move_values(me, opp)
    best = max(values.values())
    return cells_bits([cell for cell, v in values.items() if v == best])


def live_positions() -> list[tuple[int, int]]:
    """``(me, opp)`` of every unfinished position reachable from the empty board."""
    seen: set[tuple[int, int]] = set()
    frontier = [(0, 0)]
    while frontier:
        me, opp = frontier.pop()
        if (me, opp) in seen or rules.has_line(opp) or me | opp == rules.FULL:
            continue
        seen.add((me, opp))
        empty = rules.FULL ^ (me | opp)
        frontier += [(opp, me | (1 << cell)) for cell in range(rules.CELLS) if (empty >> cell) & 1]
    return sorted(seen)


POSITION_BITS = 2 * rules.CELLS
"""A position's table index is ``me << CELLS | opp``: this many bits."""


@cache
def table(rule: MoveRule) -> np.ndarray:
    """``rule`` worked out for every live position, indexed by ``me << CELLS | opp``
    (``uint64`` move bits; 0 for finished and unreachable positions)."""
    moves = np.zeros(1 << POSITION_BITS, dtype=np.uint64)
    for me, opp in live_positions():
        moves[(me << rules.CELLS) | opp] = rule(me, opp)
    return moves


def tabulated(rule: MoveRule) -> Candidates:
    """The candidates of ``rule``, read from its ``table``."""

    def candidates(state: rules.State) -> np.ndarray:
        index = (state.me << np.uint64(rules.CELLS)) | state.opp
        return table(rule)[index.astype(np.intp)]

    return candidates


CLASSIC: dict[str, tuple[MoveRule, str]] = {
    "rules": (rule_moves(CORNER_FIRST), "win, block, a corner, the centre, a side"),
    "rules_center": (rule_moves(CENTRE_FIRST), "win, block, the centre, a corner, a side"),
    "perfect": (perfect_moves, "minimax: never loses, wins fastest"),
}
"""The AIs: name -> (move rule, one-line help)."""

for _name, (_rule, _help) in CLASSIC.items():
    register_candidates(rules.GAME.name, _name, no_argument(_name, tabulated(_rule)), _help)
