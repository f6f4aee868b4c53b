"""Tic-tac-toe's TD self-play, compiled: one call plays a chunk of games and learns from
them (the rule of every game's learner: ``train.td.kernels``)."""

from __future__ import annotations

import numpy as np
from numba import types

from boardgym.agents.ntuple.network import (
    NET_TYPE,
    TRACE_TYPE,
    TRAINER_TYPE,
    draw_best,
    learn,
    new_afterstates,
    push,
)
from boardgym.agents.ntuple.tictactoe import afterstates
from boardgym.envs.games.compiled import ZERO, entry
from boardgym.envs.games.tictactoe_bits import FULL
from boardgym.train.td.kernels.reversi import COUNTS_TYPE


@entry(COUNTS_TYPE(types.int64, types.int64, types.float64, types.float64, types.float64,
                   types.int64, types.int64, types.int64, NET_TYPE, TRAINER_TYPE, TRACE_TYPE))
def self_play(games: int, seed: int, alpha: float, lam: float, epsilon: float,
              opening_lo: int, opening_hi: int, mode: int, net: tuple,  # type: ignore[type-arg]
              trainer: tuple, trace: tuple) -> tuple[int, int, float]:  # type: ignore[type-arg]
    """Play and learn from ``games`` games, numba's generator seeded with ``seed``; returns
    ``(plies, updates, sum of |error|)``."""
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
            explore = opening > 0 or np.random.random() < epsilon
            pick = np.random.randint(count) if explore else draw_best(found, count)
            own, other, over = found[1][pick], found[2][pick], found[3][pick]
            after = (1.0 if found[4][pick] > 0.0 else 0.0) if over else np.tanh(found[4][pick])
            if explore:
                length = 0
                opening -= 1
            elif length > 0:
                errors += abs(learn(trace, length, -after, alpha, lam, net, trainer, mode))
                updates += 1
            plies += 1
            if over:
                break
            length = push(trace, length, own, other, ZERO, after, side, net)
            me, opp, side = other, own, 1 - side
    return plies, updates, errors


def play(net: tuple, trainer: tuple, trace: tuple, env_kwargs: dict,  # type: ignore[type-arg]
         settings: tuple) -> tuple[int, int, float]:  # type: ignore[type-arg]
    """``self_play`` of one chunk: ``settings`` = ``(games, seed, alpha, lambda, epsilon,
    opening_lo, opening_hi, mode)``."""
    return self_play(*settings, net, trainer, trace)  # type: ignore[no-any-return]
