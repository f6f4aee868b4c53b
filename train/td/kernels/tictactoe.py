"""Tic-tac-toe's TD self-play, compiled: one call plays a chunk of games and learns from
them (the rule of every game's learner: ``train.td.kernels``)."""

from __future__ import annotations

import numpy as np

from boardgym.agents.ntuple.network import new_afterstates, self_play_move
from boardgym.agents.ntuple.tictactoe import afterstates
from boardgym.envs.games.compiled import ZERO, entry
from boardgym.envs.games.tictactoe_bits import FULL
from boardgym.train.td.kernels.reversi import COUNTS_TYPE, SETTINGS


@entry(COUNTS_TYPE(*SETTINGS))
def self_play(games: int, seed: int, alpha: float, lam: float, epsilon: float,
              opening_lo: int, opening_hi: int, mode: int, net: tuple,  # type: ignore[type-arg]
              trainer: tuple, trace: tuple) -> tuple[int, int, float]:  # type: ignore[type-arg]
    """Play and learn from ``games`` games, numba's generator seeded with
    ``seed``; returns ``(plies, updates, sum of |error|)``."""
    np.random.seed(seed)
    plies = updates = 0
    errors = 0.0
    found = new_afterstates()
    for _ in range(games):
        me, opp = ZERO, ZERO
        side, length = 0, 0
        opening = np.random.randint(opening_lo, opening_hi + 1)
        while True:
            count = afterstates(me, opp, FULL ^ (me | opp), net, found)
            random_move = opening > 0 or np.random.random() < epsilon
            opening -= 1
            pick, length, error = self_play_move(found, count, random_move, trace, length,
                                                 side, alpha, lam, net, trainer, mode)
            plies += 1
            if error >= 0.0:
                errors += error
                updates += 1
            if found[3][pick]:
                break
            me, opp, side = found[2][pick], found[1][pick], 1 - side
    return plies, updates, errors


def play(net: tuple, trainer: tuple, trace: tuple, env_kwargs: dict,  # type: ignore[type-arg]
         settings: tuple) -> tuple[int, int, float]:  # type: ignore[type-arg]
    """``self_play`` of one chunk: ``settings`` = ``(games, seed, alpha, lambda, epsilon,
    opening_lo, opening_hi, mode)``."""
    return self_play(*settings, net, trainer, trace)  # type: ignore[no-any-return]
