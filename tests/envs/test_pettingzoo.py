"""The PettingZoo AEC face passes PettingZoo's own API and seed tests for every game."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
from pettingzoo.test import api_test, seed_test

from boardgym.envs.pettingzoo import env

GAMES = [("reversi", {}), ("four_in_a_row", {}), ("four_in_a_row", dict(rows=5, columns=6)),
         ("tictactoe", {})]


@pytest.mark.parametrize(("game", "config"), GAMES)
def test_api(game: str, config: dict[str, int]) -> None:
    api_test(env(game, **config), num_cycles=200)


@pytest.mark.parametrize(("game", "config"), GAMES)
def test_seeded(game: str, config: dict[str, int]) -> None:
    seed_test(lambda: env(game, **config), num_cycles=50)


def play_out(aec, rng: np.random.Generator) -> dict[str, float]:
    aec.reset(seed=0)
    totals = dict.fromkeys(aec.possible_agents, 0.0)
    for agent in aec.agent_iter():
        obs, reward, termination, truncation, _ = aec.last()
        totals[agent] += reward
        action = None
        if not (termination or truncation):
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        aec.step(action)
    return totals


@pytest.mark.parametrize("game", ["reversi", "four_in_a_row", "tictactoe"])
def test_zero_sum_rewards_at_the_end(game: str) -> None:
    totals = play_out(env(game), np.random.default_rng(1))
    assert sorted(totals.values()) in ([-1.0, 1.0], [0.0, 0.0])


def test_illegal_move_loses_for_the_mover() -> None:
    aec = env("tictactoe")
    aec.reset(seed=0)
    aec.step(4)  # player_0 takes the centre
    aec.step(4)  # player_1 plays the taken centre: PettingZoo logs it and ends the game
    final = {}
    for agent in aec.agent_iter():
        _, reward, termination, _, _ = aec.last()
        assert termination
        final[agent] = reward
        aec.step(None)
    assert final == {"player_0": 0, "player_1": -1}


def test_render_ansi() -> None:
    aec = env("tictactoe", render_mode="ansi")
    aec.reset(seed=0)
    aec.step(0)
    assert aec.render().splitlines()[0].startswith(" X")


def test_each_agent_sees_its_own_stones_first() -> None:
    aec = env("tictactoe")
    aec.reset(seed=0)
    aec.step(4)  # player_0 takes the centre
    mine = aec.observe("player_0")["observation"]
    theirs = aec.observe("player_1")["observation"]
    assert mine[0, 1, 1] == 1 and mine[1].sum() == 0
    np.testing.assert_array_equal(theirs, mine[::-1])
    assert aec.observe("player_0")["action_mask"].sum() == 0  # not its turn
    assert aec.observe("player_1")["action_mask"].sum() == 8
