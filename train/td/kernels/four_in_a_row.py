"""Four-in-a-row's TD self-play, compiled: one call plays a chunk of games and learns from
them (the rule of every game's learner: ``train.td.kernels``), on any board size."""

from __future__ import annotations

import numpy as np
from numba import types

from boardgym.agents.ntuple import four_in_a_row as ntuple_board
from boardgym.agents.ntuple.four_in_a_row import afterstates
from boardgym.agents.ntuple.network import new_afterstates, self_play_move
from boardgym.envs.games.compiled import ZERO, entry
from boardgym.envs.games.four_in_a_row_bits import legal_columns
from boardgym.train.td.kernels.reversi import COUNTS_TYPE, SETTINGS


@entry(COUNTS_TYPE(*SETTINGS, types.uint64[::1]))
def self_play(games: int, seed: int, alpha: float, lam: float, epsilon: float,
              opening_lo: int, opening_hi: int, mode: int, net: tuple,  # type: ignore[type-arg]
              trainer: tuple, trace: tuple,  # type: ignore[type-arg]
              words: np.ndarray) -> tuple[int, int, float]:
    """Play and learn from ``games`` games on the board of ``words``, numba's generator seeded with
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
            count = afterstates(me, opp, legal_columns(me, opp, False, words), words,
                                net, found)
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
    """``self_play`` of one chunk on the board of ``env_kwargs``: ``settings`` = ``(games,
    seed, alpha, lambda, epsilon, opening_lo, opening_hi, mode)``."""
    return self_play(*settings, net, trainer, trace,  # type: ignore[no-any-return]
                     ntuple_board.words(env_kwargs))
