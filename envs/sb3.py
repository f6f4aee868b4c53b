"""stable-baselines3 ``VecEnv`` face of the batched envs, with vector-level action masks.

``SB3VecEnv.make("TicTacToe-v0", num_envs=64, opponent="rules")`` gives a VecEnv that
sb3-contrib's ``MaskablePPO`` trains on directly: it reads all masks at once through
``env_method("action_masks")`` (or ``action_masks()``). SB3 resets finished games in the same
step, so the wrapped env runs in Gymnasium's same-step autoreset mode and the last
observation of a finished game is in ``infos[i]["terminal_observation"]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv

from boardgym.envs.vector import BoardVectorEnv
from boardgym.envs.vector_arguments import checked_actions
from boardgym.envs.vector_streams import sub_env_seeds

MASK_METHOD = "action_masks"


class SB3VecEnv(VecEnv):
    """A ``BoardVectorEnv`` (same-step autoreset) as a stable-baselines3 ``VecEnv``.

    Args:
        venv: the batched env, built with ``autoreset_mode=AutoresetMode.SAME_STEP``.

    Raises:
        ValueError: ``venv`` is not a same-step ``BoardVectorEnv``; use ``SB3VecEnv.make``.
    """

    def __init__(self, venv: BoardVectorEnv) -> None:
        if not isinstance(venv, BoardVectorEnv) or \
                venv.metadata["autoreset_mode"] != AutoresetMode.SAME_STEP:
            raise ValueError("SB3VecEnv needs a boardgym vector env in same-step autoreset "
                             "mode: use SB3VecEnv.make(env_id, num_envs, **kwargs)")
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space,
                         venv.single_action_space)
        self._actions: np.ndarray | None = None
        self._seed: int | None = None

    @classmethod
    def make(cls, env_id: str, num_envs: int, **kwargs: Any) -> SB3VecEnv:
        """``gym.make_vec(env_id, num_envs, vectorization_mode="vector_entry_point",
        autoreset_mode=SAME_STEP, **kwargs)`` wrapped for SB3."""
        venv = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                            autoreset_mode=AutoresetMode.SAME_STEP, **kwargs)
        return cls(venv)  # type: ignore[arg-type]

    def reset(self) -> np.ndarray:
        """New games everywhere (seeded by the last ``seed()`` call, if any)."""
        obs, _ = self.venv.reset(seed=self._seed)
        self._seed = None
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Take one integer action per sub-env for the next ``step_wait``.

        Raises:
            ValueError: not one integer action of the space per sub-env (floats and strings
                are refused, not cast).
        """
        self._actions = checked_actions(actions, self.num_envs, self.venv.n_actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """SB3's step: observations, float32 rewards, dones and one info dict per env."""
        obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i] = {"terminal_observation": info["final_obs"][i],
                        "TimeLimit.truncated": bool(truncated[i] and not terminated[i]),
                        "winner": int(info["winner"][i])}
        return obs, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """``(num_envs, n_actions)`` bool masks of the current positions."""
        return self.venv.action_masks()

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next ``reset``: sub-env ``i`` gets ``seed + i``.

        Raises:
            ValueError: ``seed`` is not None or an int in ``[0, 2**64 - num_envs]``.
        """
        if seed is None:
            self._seed = None
            return [None] * self.num_envs
        seeds = sub_env_seeds(seed, self.num_envs)
        self._seed = seeds[0]
        return list(seeds)

    def close(self) -> None:
        self.venv.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs

    def _indices_list(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return [int(i) for i in indices]

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The batched env's attribute, repeated once per requested sub-env."""
        return [getattr(self.venv, attr_name)] * len(self._indices_list(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.venv, attr_name, value)

    def has_attr(self, attr_name: str) -> bool:
        return hasattr(self.venv, attr_name)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None,
                   **method_kwargs: Any) -> list[Any]:
        """``action_masks`` gives one mask per sub-env; other methods run once on the
        batched env, their result repeated per sub-env."""
        chosen = self._indices_list(indices)
        if method_name == MASK_METHOD:
            return list(self.venv.action_masks()[chosen])
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result] * len(chosen)

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper],
                       indices: int | Iterable[int] | None = None) -> list[bool]:
        return [False] * len(self._indices_list(indices))


__all__ = ["SB3VecEnv"]
