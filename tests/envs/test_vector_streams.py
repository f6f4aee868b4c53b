"""The vector env's seeds and random streams: one seed per sub-env, checked, and games that
depend on a sub-env's seed alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from boardgym.envs.vector_streams import SubEnvStreams
from tests.envs.vectors import STEPS, make, random_actions


def test_sub_env_games_do_not_depend_on_num_envs() -> None:
    small, large = make("Reversi-v0", num_envs=2), make("Reversi-v0", num_envs=5)
    obs_s, info_s = small.reset(seed=[11, 12])
    obs_l, info_l = large.reset(seed=[11, 40, 41, 42, 43])
    rng = np.random.default_rng(0)
    for _ in range(STEPS):
        np.testing.assert_array_equal(obs_s[0], obs_l[0])
        action = random_actions(info_s["action_mask"][:1], rng)[0]
        rest = random_actions(info_l["action_mask"][1:], rng)
        other = random_actions(info_s["action_mask"][1:], rng)[0]
        obs_s, reward_s, _, _, info_s = small.step(np.array([action, other]))
        obs_l, reward_l, _, _, info_l = large.step(np.concatenate(([action], rest)))
        assert reward_s[0] == reward_l[0]


@pytest.mark.parametrize("seed", [1.5, 2 ** 64, "3", -1, [1, 2.0], [1, 2], True])
def test_bad_seeds_are_refused(seed: Any) -> None:
    env = make("TicTacToe-v0", num_envs=3)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=seed)


def test_the_largest_seeds_are_taken() -> None:
    env = make("TicTacToe-v0", num_envs=3)
    env.reset(seed=2 ** 64 - 3)
    env.reset(seed=[2 ** 64 - 1, 0, np.uint64(7)])


WORD = 2 ** 64
GOLDEN_GAMMA = 0x9E37_79B9_7F4A_7C15


def splitmix64(z: int) -> int:
    """The splitmix64 finaliser on Python ints (the reference the streams must follow)."""
    z = (z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9 % WORD
    z = (z ^ (z >> 27)) * 0x94D0_49BB_1331_11EB % WORD
    return z ^ (z >> 31)


def test_stream_draws_follow_the_documented_formula() -> None:
    """Draw ``k`` of sub-env ``i`` is ``splitmix64(splitmix64(seed_i) + (k + 1) * gamma)``,
    whichever sub-envs draw alongside it, and the agent's side is its top bit."""
    seeds = [0, 1, 12_345, WORD - 1]
    streams = SubEnvStreams(seeds)

    def expected(seed: int, k: int) -> int:
        return splitmix64((splitmix64(seed) + (k + 1) * GOLDEN_GAMMA) % WORD)

    assert streams.draws(np.arange(4)).tolist() == [expected(s, 0) for s in seeds]
    assert streams.draws(np.array([2])).tolist() == [expected(seeds[2], 1)]
    moving = np.array([True, False, True, False])
    drawn = streams.draws_where(moving)
    assert drawn[moving].tolist() == [expected(seeds[0], 1), expected(seeds[2], 2)]
    assert streams.sides(np.array([1, 3])).tolist() == [expected(seeds[1], 1) >> 63,
                                                        expected(seeds[3], 1) >> 63]
    assert streams.rng(2).random() == np.random.default_rng(seeds[2]).random()
