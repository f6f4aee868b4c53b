"""Built-in tictactoe players: the classic rule AIs and a perfect player.

- ``random``: a uniformly random free cell.
- ``rules``: in order, the first cell (scanning 0..8) that wins now; else the first cell
  where the opponent would win (a block); else a random free corner; else the centre; else a
  random free side. The default opponent of ``TicTacToe-v0``.
- ``rules_center``: win; block; the centre if free; else a random free corner; else a random
  free side.
- ``perfect``: full minimax over every position (memoised): never loses; among the optimal
  moves it prefers the fastest win or the slowest loss, then picks uniformly at random.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np
from boardgym.agents.base import AgentFactory, RandomAgent, no_argument
from boardgym.envs.games import tictactoe as rules

CORNER_FIRST = ("corners", "centre", "sides")
CENTRE_FIRST = ("centre", "corners", "sides")
CELL_GROUPS: dict[str, tuple[int, ...]] = {
    "corners": rules.CORNER_CELLS,
    "centre": (rules.CENTRE,),
    "sides": rules.SIDE_CELLS,
}


def free_cells(state: rules.State, cells: Sequence[int] = range(rules.CELLS)) -> list[int]:
    """The empty ones among ``cells``, in the given order."""
    filled = int(state.me) | int(state.opp)
    return [cell for cell in cells if not (filled >> cell) & 1]


def winning_cell(marks: int, state: rules.State) -> int | None:
    """The first free cell (0..8) that would give ``marks`` a line, or None."""
    return next((cell for cell in free_cells(state) if rules.has_line(marks | (1 << cell))),
                None)


class RuleAgent:
    """Win, else block, else a random free cell of the first non-full group in ``order``.

    Args:
        order: names from ``CELL_GROUPS`` (``corners``, ``centre``, ``sides``) in the order
            they are tried after win and block.
    """

    def __init__(self, order: Sequence[str]) -> None:
        self.groups = [CELL_GROUPS[name] for name in order]

    def act(self, state: rules.State, rng: np.random.Generator) -> int:
        """The move as specified in the class docstring."""
        for marks in (int(state.me), int(state.opp)):
            cell = winning_cell(marks, state)
            if cell is not None:
                return cell
        for group in self.groups:
            cells = free_cells(state, group)
            if cells:
                return int(rng.choice(cells))
        raise ValueError("no free cell: the game is over")


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


def move_values(state: rules.State) -> dict[int, int]:
    """The minimax value of each free cell for the side to move (see ``value``)."""
    me, opp = int(state.me), int(state.opp)
    return {cell: -value(opp, me | (1 << cell)) for cell in free_cells(state)}


class PerfectAgent:
    """``perfect``: a move of the highest minimax ``value``; ties uniformly at random."""

    def act(self, state: rules.State, rng: np.random.Generator) -> int:
        """The move as specified in the class docstring."""
        values = move_values(state)
        best = max(values.values())
        return int(rng.choice([cell for cell, v in values.items() if v == best]))


AGENTS: dict[str, AgentFactory] = {
    "random": no_argument("random", lambda: RandomAgent(rules)),
    "rules": no_argument("rules", lambda: RuleAgent(CORNER_FIRST)),
    "rules_center": no_argument("rules_center", lambda: RuleAgent(CENTRE_FIRST)),
    "perfect": no_argument("perfect", PerfectAgent),
}
