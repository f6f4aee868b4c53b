"""The classic players' compiled twins (numba kernels), one module per game, and how they
are registered.

A game's module here (``agents.compiled.reversi``) holds each classic AI's candidate set as
one compiled function picked by an integer code, and ``respond_batch``: the opponent's replies
in N games of the vector env, drawn from each sub-env's splitmix stream (see
``players.CompiledTwin`` for its arguments). This package itself imports no numba: the
registration below names the module, which is imported when an env first asks for a twin.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

from boardgym.envs.games import players
from boardgym.envs.games.core import Game

REVERSI_PLAYERS = ("random", "corner_best", "corner_side_best", "worst", "wpc")
"""Reversi's players with a compiled twin; each one's code is its index here."""
TICTACTOE_PLAYERS = ("random", "rules", "rules_center", "perfect")
"""Tic-tac-toe's players with a compiled twin; each one's code is its index here."""
FOUR_IN_A_ROW_PLAYERS = ("random",)
"""Four-in-a-row's players with a compiled twin; each one's code is its index here."""


class TwinFactory:
    """``players.CompiledFactory`` of the player with integer ``code`` in the kernel module
    ``boardgym.agents.compiled.<module>`` (imported on first use); the players here take no
    ``:argument``, so a spec with one has no twin."""

    def __init__(self, module: str, code: int) -> None:
        self.module, self.code = module, code

    def __call__(self, record: Game, arg: str | None,
                 options: Mapping[str, Any]) -> players.CompiledTwin | None:
        if arg is not None:
            return None
        kernels = importlib.import_module(f"{__name__}.{self.module}")
        return players.CompiledTwin(kernels.respond_batch, self.code)


def register_twins(game: str, module: str, names: Sequence[str]) -> None:
    """Register the compiled twin of each player ``names[code]`` of ``game``: the kernels of
    ``boardgym.agents.compiled.<module>``, picked by ``code``."""
    for code, name in enumerate(names):
        players.register_compiled(game, name, TwinFactory(module, code))


__all__ = ["FOUR_IN_A_ROW_PLAYERS", "REVERSI_PLAYERS", "TICTACTOE_PLAYERS", "TwinFactory",
           "register_twins"]
