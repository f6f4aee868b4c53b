"""RLlib adapters for boardgym's envs: action masks in the observation, for RLlib's masking
PPO module (``ray.rllib.examples.rl_modules.classes.action_masking_rlm``).

RLlib's masking module reads observations ``{"observations": x, "action_mask": m}`` and
sets the logits of the moves with ``m == 0`` to the lowest float before sampling, in
training and in play. boardgym hands its masks out differently (``obs["action_mask"]`` in
the PettingZoo env, ``info["action_mask"]`` in the Gymnasium envs), so two small adapters
put them where the module looks: ``MaskedTurns`` (the PettingZoo env as an RLlib
``MultiAgentEnv``, both seats as agents) and ``MaskedVector`` (the batched vector env). Both
flatten the board planes to float32 vectors for RLlib's default fully connected encoder.

Used by ``rllib_multiagent.py`` and ``rllib_vector.py`` beside this file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorWrapper
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
    ActionMaskingTorchRLModule,
)
from ray.rllib.utils.typing import AgentID, MultiAgentDict

from boardgym.envs.pettingzoo import env as pettingzoo_env

OBSERVATIONS, ACTION_MASK = "observations", "action_mask"
ALL = "__all__"
HIDDEN = [64, 64]
"""The fully connected layers of the policy and value networks."""


def masked_space(planes: gym.Space, actions: int) -> gym.spaces.Dict:
    """The observation space RLlib's masking module reads: flat planes and the mask."""
    size = int(np.prod(planes.shape or ()))
    return gym.spaces.Dict({OBSERVATIONS: gym.spaces.Box(0.0, 1.0, (size,), np.float32),
                            ACTION_MASK: gym.spaces.Box(0.0, 1.0, (actions,), np.float32)})


def masked(planes: np.ndarray, mask: np.ndarray, batched: bool = False) -> dict[str, Any]:
    """One observation (or a batch) in the masking module's form."""
    flat = planes.reshape(len(planes), -1) if batched else planes.reshape(-1)
    return {OBSERVATIONS: flat.astype(np.float32), ACTION_MASK: mask.astype(np.float32)}


def module_spec() -> RLModuleSpec:
    """RLlib's PPO module with action masking."""
    return RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                        model_config={"fcnet_hiddens": HIDDEN, "head_fcnet_hiddens": HIDDEN})


class MaskedTurns(MultiAgentEnv):
    """A boardgym game's PettingZoo env as an RLlib multi-agent env: the seats take turns.

    Each step returns the observation of the agent to move only (the same agent again after
    an automatic pass); when the game ends, both agents get their last observation and their
    reward (+1 / -1 / 0) and the episode is over for all.

    Args:
        config: ``{"game": NAME, **board options}`` (default tic-tac-toe).
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        options = dict(config or {})
        self.aec = pettingzoo_env(options.pop("game", "tictactoe"), **options)
        self.agents = self.possible_agents = list(self.aec.possible_agents)
        first = self.agents[0]
        space = masked_space(self.aec.observation_space(first)["observation"],
                             int(self.aec.action_space(first).n))
        self.observation_spaces = dict.fromkeys(self.agents, space)
        self.action_spaces = {agent: self.aec.action_space(agent) for agent in self.agents}

    def _observe(self, agents: list[AgentID]) -> MultiAgentDict:
        observed = {agent: self.aec.observe(agent) for agent in agents}
        return {agent: masked(o["observation"], o["action_mask"]) for agent, o in observed.items()}

    def reset(self, *, seed: int | None = None,  # type: ignore[override]  # RLlib's types
              options: dict[str, Any] | None = None) -> tuple[MultiAgentDict, MultiAgentDict]:
        """A new game; the observation of the first agent to move."""
        self.aec.reset(seed=seed)
        return self._observe([self.aec.agent_selection]), {}

    def step(self, action_dict: MultiAgentDict  # type: ignore[override]  # RLlib's types
             ) -> tuple[MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict,
                        MultiAgentDict]:
        """The agent to move plays its action."""
        mover = self.aec.agent_selection
        self.aec.step(int(action_dict[mover]))
        if all(self.aec.terminations.values()):
            rewards = {agent: float(self.aec.rewards[agent]) for agent in self.agents}
            return self._observe(self.agents), rewards, {ALL: True}, {ALL: False}, {}
        return (self._observe([self.aec.agent_selection]), {}, {ALL: False}, {ALL: False}, {})


class MaskedVector(VectorWrapper):
    """boardgym's batched vector env with the masks in the observations (the learner plays
    one seat against the env's opponent).

    Args:
        env: a vector env from ``gym.make_vec(..., vectorization_mode="vector_entry_point")``.
    """

    def __init__(self, env: gym.vector.VectorEnv) -> None:
        super().__init__(env)
        actions = env.single_action_space
        assert isinstance(actions, gym.spaces.Discrete), "boardgym actions are Discrete"
        self.single_observation_space = masked_space(env.single_observation_space,
                                                     int(actions.n))
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space,
                                                              env.num_envs)

    def reset(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return masked(obs, info[ACTION_MASK], batched=True), info

    def step(self, actions: Any) -> tuple[Any, ...]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        return (masked(obs, info[ACTION_MASK], batched=True), rewards, terminated, truncated,
                info)


def train(algo_config: Any, iterations: int, describe: Callable[[dict[str, Any]], str]
          ) -> list[dict[str, Any]]:
    """Build the algorithm of ``algo_config`` (joining ``RAY_ADDRESS`` when set, else a local
    Ray), train it ``iterations`` times, print each iteration's games and ``describe(result)``,
    and return the results."""
    import ray

    if not ray.is_initialized():
        ray.init()
    algo = algo_config.build_algo()
    results = []
    for iteration in range(1, iterations + 1):
        result = algo.train()
        results.append(result)
        games = result["env_runners"].get("num_episodes", 0)
        print(f"iteration {iteration}: {games} games, {describe(result)}", flush=True)
    algo.stop()
    return results
