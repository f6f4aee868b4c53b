"""The vector env's observations, kept from step to step: each shows the position that the
reported moves reach."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from boardgym.envs import games
from tests.envs.vectors import STEPS, agent_view, make, random_actions


@pytest.mark.parametrize(("env_id", "game"), [("FourInARow-v0", "four_in_a_row"),
                                              ("TicTacToe-v0", "tictactoe")])
def test_observations_replay_the_moves_of_each_game(env_id: str, game: str) -> None:
    """Each observation shows the position reached by the moves the sub-env reports, even
    when the caller writes into the arrays it was given, and through illegal actions."""
    rules = games.rules(game)
    n = 24
    env = make(env_id, num_envs=n, opponent="random")
    rng = np.random.default_rng(4)
    obs, info = env.reset(seed=4)
    states: list[Any] = [None] * n
    sides = [0] * n

    def start(i: int) -> None:  # a new game: the opponent's first move, if it had one
        states[i], sides[i] = rules.initial_state(), int(info["_opponent_action"][i])
        if sides[i]:
            states[i] = rules.apply(states[i], int(info["opponent_action"][i]))

    for i in range(n):
        start(i)
    terminated = np.zeros(n, dtype=bool)
    illegal_seen = ended_seen = 0
    for _ in range(STEPS):
        for i in range(n):
            np.testing.assert_array_equal(obs[i], agent_view(rules, states[i], sides[i]))
        obs[:] = 1  # the caller's array: the env must not read it back
        actions = random_actions(info["action_mask"], rng)
        taken = np.flatnonzero(~info["action_mask"][0])
        actions[0] = taken[0] if taken.size else 0  # sub-env 0 fills column/cell 0, then errs
        starting = terminated
        obs, _, terminated, _, info = env.step(actions)
        illegal_seen += info["illegal_action"].sum()
        ended_seen += terminated.sum()
        for i in range(n):
            if starting[i]:
                start(i)
            elif not info["illegal_action"][i]:
                states[i] = rules.apply(states[i], int(actions[i]))
                if info["_opponent_action"][i]:
                    states[i] = rules.apply(states[i], int(info["opponent_action"][i]))
    assert illegal_seen > 0 and ended_seen > 4 * n
