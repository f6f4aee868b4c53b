"""Exact solvers, compiled with numba: ``four_in_a_row`` (every column's exact score, Pascal
Pons' convention) and ``reversi`` (endgames: the final disc difference).

Importing this package registers the four-in-a-row player ``solver`` (perfect play); numba
and the solvers load when a solver player is first made, not on ``import boardgym``.

Each solver module is named after its game and also answers the az search near the end of
the game (``leaf_values``): a module-level ``leaf_values(states)`` gives the exact outcome of
the positions within its ``LEAF_EMPTIES``, through ``exact_outcomes``.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np

from boardgym.agents.base import positive_int
from boardgym.envs.games import players
from boardgym.envs.games.core import Game, unbatch
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

LeafValues = Callable[[Any], np.ndarray]
"""An exact solver as the az search asks it (``agents.az.search``): ``(batched state of
unfinished positions) -> (N,)`` the outcome for the side to move (+1 won, 0 drawn, -1 lost
under perfect play) of the positions it reaches, NaN for the others."""


def exact_outcomes(states: Any, reached: np.ndarray, solve: Callable[[Any], int]
                   ) -> np.ndarray:
    """The sign of ``solve``'s exact score of each position of ``states`` where
    ``reached`` is True (NaN elsewhere): a solver module's ``leaf_values``."""
    outcomes = np.full(len(reached), np.nan)
    for i in np.flatnonzero(reached):
        outcomes[i] = np.sign(solve(unbatch(states, int(i))))
    return outcomes


def leaf_values(game: str) -> LeafValues | None:
    """The exact outcomes of positions near the end of the games of ``game`` (a canonical
    name), from its solver module's ``leaf_values``; None for a game without one here."""
    if importlib.util.find_spec(f"{__name__}.{game}") is None:
        return None
    return getattr(importlib.import_module(f"{__name__}.{game}"), "leaf_values", None)


__all__ = ["DEFAULT_MILLIONS", "LeafValues", "exact_outcomes", "leaf_values"]
