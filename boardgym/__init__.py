"""boardgym: Reversi, Four-in-a-row and Tic-tac-toe as Gymnasium environments.

``import boardgym`` registers the games' players and env ids (``Reversi-v0``,
``FourInARow-v0`` with its alias ``ConnectFour-v0``, ``TicTacToe-v0``);
``gym.make("boardgym:Reversi-v0")`` does it for you.
``register_game(record)`` adds a game of one's own (a rules module and its ``Game`` record):
its envs, vector env and env ids. The subpackages: ``boardgym.envs`` (the games' rules and
their Gymnasium faces), ``boardgym.agents`` (players over the rules state) and
``boardgym.train`` (the commands).
"""

from __future__ import annotations

import boardgym.agents  # noqa: F401  (registers the players)
from boardgym.envs import ENV_IDS, register_game

__version__ = "0.1.0"
__all__ = ["ENV_IDS", "__version__", "register_game"]
