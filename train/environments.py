"""The envs a training run learns on: its opponent pool and the vector env built from it.

The learner plays opponents drawn from an ``OpponentPool``. When every opponent has a batched
twin, the run trains on one batched vector env (``envs.vector``) whose ``n_envs`` sub-envs
are shared out among the opponents in proportion to their weights, one opponent per sub-env.
Otherwise (or with ``vectorization: dummy``, as self-play's growing pool needs, or with
``opening_plies``, as the batched env starts every game at the start position) each env of
an SB3 ``DummyVecEnv`` draws its opponent from the pool at every episode, and its opening
(``openings.unfinished_opening``) from its own generator, seeded from the env's seed.
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
from boardgym.agents.policy import board_kwargs
from boardgym.envs.games import game as game_record
from boardgym.envs.games import players
from boardgym.envs.sb3 import SB3VecEnv
from boardgym.envs.turn_based import POSITION_OPTION
from boardgym.train.config import TrainConfig
from boardgym.train.openings import unfinished_opening

MIX_STREAM = 1
"""Sub-stream of an env seed that draws its per-episode opponent."""
OPENING_STREAM = 2
"""Sub-stream of an env seed that draws its per-episode opening."""
MAX_OPENING_DRAWS = 100
"""Openings drawn for one game before starting it from the start position instead (an
opening is redrawn when the opponent's first reply there ends the game)."""


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
        p = np.asarray(self.weights) / sum(self.weights)
        return self._agents[self.specs[int(rng.choice(len(self.specs), p=p))]]

    def to_dict(self) -> dict[str, Any]:
        """The pool as plain data (saved with each checkpoint)."""
        return {"specs": list(self.specs), "weights": list(self.weights)}

    @classmethod
    def from_dict(cls, game: str, data: dict[str, Any]) -> OpponentPool:
        """The pool saved by ``to_dict``."""
        return cls(game, data["specs"], data["weights"])


class OpponentMix(gym.Wrapper):
    """Draws the env's opponent from a pool at every reset, and its opening when
    ``opening_plies`` is given, each with its own generator seeded from the env's seed.
    An opening where the opponent (moving first) ends the game at once is drawn again, so
    the learner always has a move after ``reset``.

    Args:
        env: a boardgym env.
        pool: the opponents.
        opening_plies: ``(low, high)``: each game starts from ``unfinished_opening``'s
            position of ``low`` to ``high`` random plies; ``None``: from the start.
        board: the env's board options.
    """

    def __init__(self, env: gym.Env, pool: OpponentPool,
                 opening_plies: Sequence[int] | None = None,
                 board: dict[str, Any] | None = None) -> None:
        super().__init__(env)
        self.pool = pool
        self.rng = np.random.default_rng()
        self.opening_rng = np.random.default_rng()
        self.opening_plies = None if opening_plies is None else tuple(opening_plies)
        self.board = dict(board or {})

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Draw an opponent (and an opening), then reset the env (the opponent may move
        first)."""
        if seed is not None:
            self.rng = np.random.default_rng([seed, MIX_STREAM])
            self.opening_rng = np.random.default_rng([seed, OPENING_STREAM])
        self.env.unwrapped.opponent = self.pool.sample(self.rng)  # type: ignore[attr-defined]
        if self.opening_plies is None or options:
            return self.env.reset(seed=seed, options=options)
        for _ in range(MAX_OPENING_DRAWS):
            obs, info = self.env.reset(seed=seed, options={POSITION_OPTION: self.opening_text()})
            if info["action_mask"].any():
                return obs, info
            seed = None  # the opponent's first reply ended the game: draw another opening
        return self.env.reset(seed=seed)

    def opening_text(self) -> str:
        """The position text of the next random opening."""
        assert self.opening_plies is not None
        record = game_record(self.pool.game)
        low, high = self.opening_plies
        _, state = unfinished_opening(record, low, high, self.opening_rng, self.board)
        return str(record.rules.to_text(state))

    def action_masks(self) -> np.ndarray:
        """The wrapped env's action mask (what MaskablePPO asks for)."""
        return self.env.unwrapped.action_masks()  # type: ignore[attr-defined, no-any-return]

    def get_rng_state(self) -> dict[str, Any]:
        """The states of this env's generators (opponent draw and env)."""
        return {"mix": self.rng.bit_generator.state,
                "opening": self.opening_rng.bit_generator.state,
                "env": self.env.unwrapped.np_random.bit_generator.state}

    def set_rng_state(self, state: dict[str, Any]) -> None:
        """Restore the generators saved by ``get_rng_state``."""
        self.rng.bit_generator.state = state["mix"]
        if "opening" in state:  # saved by runs before openings
            self.opening_rng.bit_generator.state = state["opening"]
        env_rng = np.random.default_rng()
        env_rng.bit_generator.state = state["env"]
        self.env.unwrapped.np_random = env_rng


def uses_batched_env(config: TrainConfig, pool: OpponentPool) -> bool:
    """Whether the run trains on the batched vector env (see ``config.vectorization``).

    Raises:
        ValueError: ``vectorization="vector"`` with an opponent that has no batched twin, or
            with ``opening_plies`` (the batched env starts every game at the start).
    """
    record = game_record(config.game)
    missing = [spec for spec in pool.specs if players.make_batched(record, spec) is None]
    if config.vectorization == "vector" and missing:
        raise ValueError(f"opponents {missing} have no batched version; use --set "
                         "vectorization=dummy or opponents among "
                         f"{players.batched_names(record)}")
    if config.vectorization == "vector" and config.opening_plies is not None:
        raise ValueError("opening_plies needs the per-game env (the batched env starts every "
                         "game at the start position); use --set vectorization=auto")
    return config.vectorization != "dummy" and not missing and config.opening_plies is None


def env_counts(weights: Sequence[float], n_envs: int) -> list[int]:
    """``n_envs`` split across opponents in proportion to ``weights`` (largest remainders)."""
    shares = np.asarray(weights, dtype=float) / sum(weights) * n_envs
    counts = np.floor(shares).astype(int)
    for i in np.argsort(counts - shares, kind="stable")[: n_envs - counts.sum()]:
        counts[i] += 1
    return [int(c) for c in counts]


def sub_env_opponents(pool: OpponentPool, n_envs: int) -> list[str]:
    """The opponent spec of each of ``n_envs`` sub-envs: the pool's specs, each repeated
    ``env_counts`` times, in pool order."""
    counts = env_counts(pool.weights, n_envs)
    return [spec for spec, count in zip(pool.specs, counts, strict=True) for _ in range(count)]


def make_vec_env(config: TrainConfig, pool: OpponentPool) -> VecEnv:
    """``config.n_envs`` envs of the game, playing the opponents of ``pool``.

    With the batched env (``uses_batched_env``) one vector env holds every sub-env, each
    with its opponent (``sub_env_opponents``); otherwise each env of an SB3 ``DummyVecEnv``
    draws its opponent per episode (the pool may then change during training, as in
    self-play).
    """
    env_id = game_record(config.game).env_id
    if uses_batched_env(config, pool):
        opponents = sub_env_opponents(pool, config.n_envs)
        return VecMonitor(SB3VecEnv.make(env_id, config.n_envs, opponent=opponents,
                                         **config.env_kwargs))

    def factory() -> gym.Env:
        env = gym.make(env_id, disable_env_checker=True, **config.env_kwargs)
        return Monitor(OpponentMix(env, pool, config.opening_plies,
                                   board_kwargs(config.env_kwargs)))

    return DummyVecEnv([factory] * config.n_envs)
