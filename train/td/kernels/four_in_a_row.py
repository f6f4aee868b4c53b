"""Four-in-a-row's TD self-play, compiled: one call plays a chunk of games and learns from
them (the rule of every game's learner: ``train.td.kernels``), on any board size."""

from __future__ import annotations

import numpy as np
from numba import types

from boardgym.agents.ntuple import four_in_a_row as ntuple_board
from boardgym.agents.ntuple.four_in_a_row import afterstates, marks
from boardgym.agents.ntuple.network import (
    NET_TYPE,
    TRACE_TYPE,
    TRAINER_TYPE,
    draw_best,
    learn,
    new_afterstates,
    push,
)
from boardgym.envs.games.compiled import ZERO, entry
from boardgym.envs.games.four_in_a_row_bits import legal_columns
from boardgym.train.td.kernels.reversi import COUNTS_TYPE


@entry(COUNTS_TYPE(types.int64, types.int64, types.float64, types.float64, types.float64,
                   types.int64, types.int64, types.int64, NET_TYPE, TRAINER_TYPE, TRACE_TYPE,
                   types.uint64[::1]))
def self_play(games: int, seed: int, alpha: float, lam: float, epsilon: float,
              opening_lo: int, opening_hi: int, mode: int, net: tuple,  # type: ignore[type-arg]
              trainer: tuple, trace: tuple,  # type: ignore[type-arg]
              words: np.ndarray) -> tuple[int, int, float]:
    """Play and learn from ``games`` games on the board of ``words``, numba's generator
    seeded with ``seed``; returns ``(plies, updates, sum of |error|)``."""
    np.random.seed(seed)
    plies = updates = 0
    errors = 0.0
    found = new_afterstates()
    for _ in range(games):
        me, opp = ZERO, ZERO
        side, length = 0, 0
        opening = np.random.randint(opening_lo, opening_hi + 1)
        while True:
            count = afterstates(me, opp, legal_columns(me, opp, False, words), words, net,
                                found)
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
            length = push(trace, length, own, other, marks(own, other, words, net), after,
                          side, net)
            me, opp, side = other, own, 1 - side
    return plies, updates, errors


def play(net: tuple, trainer: tuple, trace: tuple, env_kwargs: dict,  # type: ignore[type-arg]
         settings: tuple) -> tuple[int, int, float]:  # type: ignore[type-arg]
    """``self_play`` of one chunk on the board of ``env_kwargs``: ``settings`` = ``(games,
    seed, alpha, lambda, epsilon, opening_lo, opening_hi, mode)``."""
    return self_play(*settings, net, trainer, trace,  # type: ignore[no-any-return]
                     ntuple_board.words(env_kwargs))
