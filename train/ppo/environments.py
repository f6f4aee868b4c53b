"""The envs a training run learns on: its opponent pool and the vector env built from it.

The learner plays opponents drawn from an ``OpponentPool``, one per game, by weight (the pool
may grow during the run, as in self-play), and with ``opening_plies`` starts each game from a
random opening (``openings.unfinished_opening``). The run trains on one batched vector env
(``envs.vector``): its opponents with a batched twin (the built-in AIs that have one, policy
checkpoints) move in all their games at once, the others game by game. With
``vectorization: dummy`` each env of an SB3 ``DummyVecEnv`` is a single env wrapped in
``OpponentMix``, which draws its opponent from a generator seeded from the env's seed; the
env itself draws its openings (its ``opening=``, the rule the vector env follows too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecMonitor

from boardgym import agents
from boardgym.agents.checkpoint import board_kwargs
from boardgym.envs.games import game as game_record
from boardgym.envs.sb3 import SB3VecEnv
from boardgym.train.match.openings import unfinished_opening
from boardgym.train.ppo.config import TrainConfig

MIX_STREAM = 1
"""Sub-stream of an env seed that draws its per-episode opponent."""


class OpponentPool:
    """Agent specs with draw weights. Each agent is built once, when it joins the pool.

    Args:
        game: the game the agents play.
        specs: built-in agent names or checkpoint paths.
        weights: relative draw weights (``None``: uniform).

    Raises:
        ValueError, FileNotFoundError: a spec that names no agent.
    """

    def __init__(self, game: str, specs: Sequence[str],
                 weights: Sequence[float] | None = None) -> None:
        self.game = game_record(game).name
        self.specs: list[str] = []
        self.weights: list[float] = []
        self._agents: dict[str, agents.Agent] = {}
        for i, spec in enumerate(specs):
            self.add(spec, 1.0 if weights is None else float(weights[i]))

    def add(self, spec: str, weight: float = 1.0) -> None:
        """Add ``spec`` (built now, so a bad spec fails at once) with draw ``weight``.

        Loading a checkpoint sets torch's thread count for inference; the training's is
        restored afterwards.
        """
        threads = torch.get_num_threads()
        try:
            self._agents[spec] = agents.make(self.game, spec)
        finally:
            torch.set_num_threads(threads)
        self.specs.append(spec)
        self.weights.append(weight)

    def reweight(self, specs: Sequence[str], total: float) -> None:
        """Share the draw weight ``total`` equally among the members ``specs``."""
        for spec in specs:
            self.weights[self.specs.index(spec)] = total / len(specs)

    def shares(self) -> dict[str, float]:
        """Each member's probability of being drawn."""
        total = sum(self.weights)
        return {spec: weight / total for spec, weight in zip(self.specs, self.weights,
                                                             strict=True)}

    def remove(self, spec: str) -> None:
        """Drop ``spec`` from the pool."""
        index = self.specs.index(spec)
        del self.specs[index], self.weights[index]
        self._agents.pop(spec, None)

    def agent(self, spec: str) -> agents.Agent:
        """The agent of pool member ``spec``."""
        return self._agents[spec]

    def sample(self, rng: np.random.Generator) -> agents.Agent:
        """An agent drawn by weight with ``rng``."""
        return self._agents[self.sample_spec(rng)]

    def sample_spec(self, rng: np.random.Generator) -> str:
        """A member's spec drawn by weight with ``rng``."""
        p = np.asarray(self.weights) / sum(self.weights)
        return self.specs[int(rng.choice(len(self.specs), p=p))]

    def to_dict(self) -> dict[str, Any]:
        """The pool as plain data (saved with each checkpoint)."""
        return {"specs": list(self.specs), "weights": list(self.weights)}

    @classmethod
    def from_dict(cls, game: str, data: dict[str, Any]) -> OpponentPool:
        """The pool saved by ``to_dict``."""
        return cls(game, data["specs"], data["weights"])


class PoolSampler:
    """The vector env's ``sampler(rng) -> spec``: a member of the pool as it is now."""

    def __init__(self, pool: OpponentPool) -> None:
        self.pool = pool

    def __call__(self, rng: np.random.Generator) -> str:
        return self.pool.sample_spec(rng)


class OpeningSampler:
    """``opening(rng) -> position text``: ``unfinished_opening``'s position of ``low`` to
    ``high`` random plies on the board of ``board``."""

    def __init__(self, game: str, plies: Sequence[int], board: dict[str, Any]) -> None:
        self.record = game_record(game)
        self.low, self.high = plies
        self.board = dict(board)

    def __call__(self, rng: np.random.Generator) -> str:
        _, state = unfinished_opening(self.record, self.low, self.high, rng, self.board)
        return str(self.record.rules.to_text(state))


class OpponentMix(gym.Wrapper):
    """Draws the env's opponent from a pool at every reset, with a generator of its own
    seeded from the env's seed; with ``opening_plies`` the env (its ``opening=``, set to an
    ``OpeningSampler``) starts each game from an opening drawn from its ``np_random``, drawn
    again where the opponent (moving first) ends the game at once, so the learner always has
    a move after ``reset``.

    Args:
        env: a boardgym env.
        pool: the opponents.
        opening_plies: ``(low, high)``: each game starts from ``unfinished_opening``'s
            position of ``low`` to ``high`` random plies; ``None``: the env's own ``opening``
            (the start position unless it was given one).
        board: the env's board options.
    """

    def __init__(self, env: gym.Env, pool: OpponentPool,
                 opening_plies: Sequence[int] | None = None,
                 board: dict[str, Any] | None = None) -> None:
        super().__init__(env)
        self.pool = pool
        self.rng = np.random.default_rng()
        if opening_plies is not None:
            self.env.unwrapped.opening = OpeningSampler(  # type: ignore[attr-defined]
                pool.game, opening_plies, board or {})

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Draw an opponent, then reset the env (which draws the opening, if any; the
        opponent may move first)."""
        if seed is not None:
            self.rng = np.random.default_rng([seed, MIX_STREAM])
        self.env.unwrapped.opponent = self.pool.sample(self.rng)  # type: ignore[attr-defined]
        return self.env.reset(seed=seed, options=options)

    def action_masks(self) -> np.ndarray:
        """The wrapped env's action mask (what MaskablePPO asks for)."""
        return self.env.unwrapped.action_masks()  # type: ignore[attr-defined, no-any-return]

    def get_rng_state(self) -> dict[str, Any]:
        """The states of this env's generators: the opponent draw's and the env's (which
        draws the openings too)."""
        return {"mix": self.rng.bit_generator.state,
                "env": self.env.unwrapped.np_random.bit_generator.state}

    def set_rng_state(self, state: dict[str, Any]) -> None:
        """Restore the generators saved by ``get_rng_state`` (the ``"opening"`` generator that
        earlier runs saved is no longer used and is ignored)."""
        self.rng.bit_generator.state = state["mix"]
        env_rng = np.random.default_rng()
        env_rng.bit_generator.state = state["env"]
        self.env.unwrapped.np_random = env_rng


def make_vec_env(config: TrainConfig, pool: OpponentPool) -> VecEnv:
    """``config.n_envs`` envs of the game, playing the opponents of ``pool`` (drawn per game,
    so the pool may change during training) from ``config.opening_plies`` openings: one
    batched vector env, or a ``DummyVecEnv`` of ``OpponentMix`` envs with ``vectorization:
    dummy``."""
    env_id = game_record(config.game).env_id
    board = board_kwargs(config.env_kwargs)
    if config.vectorization != "dummy":
        opening = None if config.opening_plies is None else \
            OpeningSampler(config.game, config.opening_plies, board)
        return VecMonitor(SB3VecEnv.make(env_id, config.n_envs, opponent=PoolSampler(pool),
                                         opening=opening, **config.env_kwargs))

    def factory() -> gym.Env:
        env = gym.make(env_id, disable_env_checker=True, **config.env_kwargs)
        return Monitor(OpponentMix(env, pool, config.opening_plies, board))

    return DummyVecEnv([factory] * config.n_envs)
