"""Exact solvers, compiled with numba: ``four_in_a_row`` (every column's exact score, Pascal
Pons' convention) and ``reversi`` (endgames: the final disc difference).

Importing this package registers the four-in-a-row player ``solver`` (perfect play); numba
and the solvers load when a solver player is first made, not on ``import boardgym``.
"""

from __future__ import annotations

from boardgym.agents.base import positive_int
from boardgym.envs.games import players
from boardgym.envs.games.core import Game
from boardgym.envs.games.four_in_a_row import GAME
from boardgym.envs.games.players import Agent

DEFAULT_MILLIONS = 4
"""``solver``'s default budget per move, in millions of positions (about 2 s)."""
NODES_PER_MILLION = 1_000_000


def _solver_player(record: Game, arg: str | None) -> Agent:
    """``solver`` / ``solver:N``: perfect four-in-a-row play within N million positions a
    move."""
    millions = positive_int(arg, "solver", DEFAULT_MILLIONS)
    from boardgym.agents.solvers.four_in_a_row import SolverPlayer  # numba: loaded on use

    return SolverPlayer(record, millions * NODES_PER_MILLION)


players.register(GAME.name, "solver", _solver_player,
                 help="perfect play by the exact solver; solver:N searches at most N million "
                      f"positions a move (default {DEFAULT_MILLIONS}), past which (early in "
                      "the game) it plays alphabeta:6's move")

__all__ = ["DEFAULT_MILLIONS"]
