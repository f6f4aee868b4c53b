"""The tic-tac-toe AIs, each one candidate-move set (``agents.base``) read from a table.

- ``rules``: the first cell (scanning 0..8) that wins now; else the first cell where the
  opponent would win (a block); else a random free corner; else the centre; else a random
  free side. The default opponent of ``TicTacToe-v0``.
- ``rules_center``: win; block; the centre if free; else a random free corner; else a random
  free side.
- ``perfect``: full minimax (``value``): never loses; among the optimal moves it prefers the
  fastest win or the slowest loss, then picks uniformly at random.

Each rule is written once, on one position (``rule_moves``, ``perfect_moves``), over the
game's rules (``envs.games.tictactoe``), and worked out at import for every reachable position
into a module-level ``uint64`` table of candidate moves (``RULES_TABLE``, ``RULES_CENTER_TABLE``,
``PERFECT_TABLE``; 0 for finished and unreachable positions), indexed by the rules' position
index ``me << CELLS | opp`` (``POSITION_BITS`` bits; ``tictactoe_bits``). The players, single
and batched, read the tables; a compiled kernel reads them as globals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

import numpy as np

from boardgym.agents.base import Candidates, no_argument, register_candidates
from boardgym.agents.compiled import TICTACTOE_PLAYERS, register_twins
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
        free = free_cells(me, opp)
        return next(bits for bits in (free & cells_bits(CELL_GROUPS[name]) for name in order)
                    if bits)

    return moves


def free_cells(me: int, opp: int) -> int:
    """The rules' legal cells of the position (0 once it is over)."""
    return int(rules.legal_bits(rules.State(me, opp, 0)))


@cache
def value(me: int, opp: int) -> int:
    """The minimax value of a position for the side to move (``me``), preferring speed.

    A win is worth ``1 + empty cells`` when it happens (sooner is bigger), a loss the negative
    of that (later is better), a draw 0.

    Args:
        me: marks of the side to move.
        opp: marks of the side that just moved.
    """
    if not free_cells(me, opp):
        return -(1 + rules.CELLS - (me | opp).bit_count()) if rules.has_line(opp) else 0
    return max(move_values(me, opp).values())


def move_values(me: int, opp: int) -> dict[int, int]:
    """The minimax ``value`` of each legal cell for the side to move (``me``)."""
    state, free = rules.State(me, opp, 0), free_cells(me, opp)
    return {cell: -value(*rules.play(state, cell)[:2]) for cell in range(rules.CELLS)
            if free >> cell & 1}


def perfect_moves(me: int, opp: int) -> int:
    """The moves of highest minimax ``value``."""
    values = move_values(me, opp)
    best = max(values.values())
    return cells_bits([cell for cell, v in values.items() if v == best])


def live_positions() -> list[tuple[int, int]]:
    """``(me, opp)`` of every unfinished position reachable from the empty board."""
    reachable = rules.reachable_positions()
    live = ~np.asarray(rules.is_terminal(reachable))
    return sorted(zip(reachable.me[live].tolist(), reachable.opp[live].tolist(), strict=True))


POSITION_BITS = rules.POSITION_BITS
"""A position's table index is ``me << CELLS | opp``: this many bits."""


def table(rule: MoveRule) -> np.ndarray:
    """``rule`` worked out for every live position, indexed by ``me << CELLS | opp``
    (``uint64`` move bits; 0 for finished and unreachable positions)."""
    moves = np.zeros(1 << POSITION_BITS, dtype=np.uint64)
    for me, opp in live_positions():
        moves[(me << rules.CELLS) | opp] = rule(me, opp)
    return moves


def tabulated(moves: np.ndarray) -> Candidates:
    """The candidates read from the table ``moves``."""

    def candidates(state: rules.State) -> np.ndarray:
        index = (state.me << np.uint64(rules.CELLS)) | state.opp
        return moves[index.astype(np.intp)]

    return candidates


RULES_TABLE = table(rule_moves(CORNER_FIRST))
"""``rules``' candidates per position index."""
RULES_CENTER_TABLE = table(rule_moves(CENTRE_FIRST))
"""``rules_center``'s candidates per position index."""
PERFECT_TABLE = table(perfect_moves)
"""``perfect``'s candidates per position index."""
CLASSIC: dict[str, tuple[Candidates, str]] = {
    "rules": (tabulated(RULES_TABLE), "win, block, a corner, the centre, a side"),
    "rules_center": (tabulated(RULES_CENTER_TABLE), "win, block, the centre, a corner, a side"),
    "perfect": (tabulated(PERFECT_TABLE), "minimax: never loses, wins fastest"),
}
"""The AIs: name -> (candidates, one-line help)."""

for _name, (_candidates, _help) in CLASSIC.items():
    register_candidates(rules.GAME.name, _name, no_argument(_name, _candidates), _help)
register_twins(rules.GAME.name, "tictactoe", TICTACTOE_PLAYERS)  # random's too
