"""Helpers of the vector env tests: the envs they make and the actions they take."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

import boardgym  # noqa: F401  (registers the ids)
from boardgym.envs.games.bitboard import bits_from_mask, choose, random_draws

FAST_OPPONENTS = {"Reversi-v0": "corner_best", "FourInARow-v0": "lookahead:1",
                  "TicTacToe-v0": "rules"}
IDS = list(FAST_OPPONENTS)
STEPS = 120


def make(env_id: str, num_envs: int = 8, **kwargs: Any) -> Any:
    kwargs.setdefault("opponent", FAST_OPPONENTS[env_id])
    return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                        **kwargs)


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per sub-env (0 where there is none)."""
    return choose(bits_from_mask(masks), random_draws(rng, len(masks)))


def rollout(env: Any, seed: int, steps: int = STEPS) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace: list[tuple[np.ndarray, ...]] = [(obs, info["action_mask"])]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(random_actions(
            info["action_mask"], rng))
        trace.append((obs, reward, terminated, truncated, info["action_mask"]))
    return trace


def agent_view(rules: Any, state: Any, agent_side: int) -> np.ndarray:
    """The rules' observation of ``state`` with the agent's stones in plane 0."""
    planes = rules.observation(state)
    return planes if state.to_move == agent_side else planes[::-1]
