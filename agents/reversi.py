"""Built-in reversi players: the classic console program's AIs.

Each classic AI first *shuffles* the legal moves (a uniformly random permutation drawn from
the ``rng`` given to ``act``) and then scans them in that order, so ties go to whichever
tied move comes first in the shuffled order.

- ``random``: a uniformly random legal move.
- ``corner_best``: the first corner if any; otherwise the first move that leaves the mover
  with the most discs. The default opponent of ``Reversi-v0``.
- ``worst``: the first move that leaves the mover with the fewest discs.
- ``corner_side_best``: the first corner if any; else the first move on the board's edge
  (row or column 0 or 7); else what ``corner_best`` plays.
- ``alphabeta:D`` (default 4) and ``mcts:N`` (default 800): the strong reference players of
  ``agents.reversi_strong`` (search, not shuffled scans).

After a move the mover owns its discs, the new disc and the flipped ones, so "most discs"
is "most flips" and "fewest discs" is "fewest flips".
"""

from __future__ import annotations

import numpy as np
from boardgym.agents.base import AgentFactory, RandomAgent, no_argument
from boardgym.agents.reversi_strong import AGENTS as STRONG_AGENTS
from boardgym.envs.games import reversi as rules
from boardgym.envs.games.bitboard import popcount


def shuffled_moves(state: rules.State, rng: np.random.Generator) -> list[int]:
    """The legal moves of ``state`` in a uniformly random order drawn from ``rng``.

    The moves are listed in ascending cell order before ``rng.permutation`` shuffles them.
    """
    legal = int(state.legal)
    cells = [cell for cell in range(rules.CELLS) if (legal >> cell) & 1]
    return [int(cell) for cell in rng.permutation(cells)]


def flip_count(state: rules.State, move: int) -> int:
    """How many discs ``move`` flips for the side to move."""
    return int(popcount(rules.flips(state, move)))


def first_in(moves: list[int], region: int) -> int | None:
    """The first of ``moves`` whose cell is in the bitboard ``region``, or None."""
    return next((move for move in moves if (region >> move) & 1), None)


def most_discs(state: rules.State, moves: list[int]) -> int:
    """The first of ``moves`` flipping strictly more discs than every earlier one."""
    best_move, best_flips = moves[0], -1
    for move in moves:
        count = flip_count(state, move)
        if count > best_flips:
            best_move, best_flips = move, count
    return best_move


def fewest_discs(state: rules.State, moves: list[int]) -> int:
    """The first of ``moves`` flipping strictly fewer discs than every earlier one."""
    worst_move, worst_flips = moves[0], rules.CELLS
    for move in moves:
        count = flip_count(state, move)
        if count < worst_flips:
            worst_move, worst_flips = move, count
    return worst_move


class CornerBestAgent:
    """``corner_best``: shuffle; the first corner, else the first move with the most discs."""

    def act(self, state: rules.State, rng: np.random.Generator) -> int:
        """The move as specified in the class docstring."""
        moves = shuffled_moves(state, rng)
        corner = first_in(moves, rules.CORNERS)
        return most_discs(state, moves) if corner is None else corner


class WorstAgent:
    """``worst``: shuffle; the first move leaving the mover the fewest discs."""

    def act(self, state: rules.State, rng: np.random.Generator) -> int:
        """The move as specified in the class docstring."""
        return fewest_discs(state, shuffled_moves(state, rng))


class CornerSideBestAgent:
    """``corner_side_best``: shuffle; the first corner, else the first edge move, else
    ``corner_best`` (which shuffles again, as the classic program does)."""

    def __init__(self) -> None:
        self.fallback = CornerBestAgent()

    def act(self, state: rules.State, rng: np.random.Generator) -> int:
        """The move as specified in the class docstring."""
        moves = shuffled_moves(state, rng)
        for region in (rules.CORNERS, rules.EDGES):
            move = first_in(moves, region)
            if move is not None:
                return move
        return self.fallback.act(state, rng)


AGENTS: dict[str, AgentFactory] = {
    "random": no_argument("random", lambda: RandomAgent(rules)),
    "corner_best": no_argument("corner_best", CornerBestAgent),
    "worst": no_argument("worst", WorstAgent),
    "corner_side_best": no_argument("corner_side_best", CornerSideBestAgent),
    **STRONG_AGENTS,  # alphabeta:D and mcts:N
}
