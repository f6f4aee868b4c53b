"""What a training run does between rollouts: evaluate the learner, checkpoint, run hooks.

The learner is evaluated against each eval opponent: on the batched vector env when the
opponent has a batched twin (all games side by side, one forward pass a turn), else game by
game through ``train.evaluate.play_match``. Eval agents are built once per run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback

from boardgym import agents
from boardgym.agents.policy import (
    PolicyAgent,
    architecture_of,
    board_kwargs,
    checkpoint_metadata,
    masked_logits,
)
from boardgym.envs.games import game as game_record
from boardgym.envs.games import players
from boardgym.train.config import TrainConfig
from boardgym.train.evaluate import A_WON, B_WON, TIE, MatchResult, play_match
from boardgym.train.plot import EVAL_FILE
from boardgym.train.runs import CHECKPOINTS, Run, save_checkpoint, write_json

Hook = Callable[["RunCallback"], None]
"""Called with the callback after each rollout's update (self-play's league)."""
LEARNER = "learner"


def learner_agent(model: BaseAlgorithm, config: TrainConfig) -> PolicyAgent:
    """The model being trained as an ``Agent`` (masked argmax)."""
    metadata = checkpoint_metadata(config.game, config.env_kwargs, model.num_timesteps,
                                   architecture_of(model.policy))
    return PolicyAgent(model.policy, metadata, name=LEARNER)


def match(model: BaseAlgorithm, config: TrainConfig, opponent: str | agents.Agent,
          games: int, seed: int) -> MatchResult:
    """The learner against ``opponent`` over ``games`` games (first player random per game)."""
    return play_match(config.game, learner_agent(model, config), opponent, games, seed=seed,
                      config=board_kwargs(config.env_kwargs))


def win_rate(model: BaseAlgorithm, config: TrainConfig, opponent: str | agents.Agent,
             games: int, seed: int) -> float:
    """The learner's win rate against ``opponent`` (first player random per game)."""
    return match(model, config, opponent, games, seed).a_win_rate


def vector_match(policy: Any, config: TrainConfig, opponent: str, games: int,
                 seed: int) -> MatchResult:
    """The learner ``policy`` (a model's ``policy``, or ``agents.policy.load_network``'s)
    against the batched player ``opponent`` over ``games`` games played side
    by side on the vector env, one forward pass a turn for all of them.

    Sub-env ``i`` is seeded ``seed + i`` and plays one game (its first player drawn at random);
    the learner plays the masked argmax, as its ``PolicyAgent`` does.
    """
    start = time.perf_counter()
    record = game_record(config.game)
    venv = gym.make_vec(record.env_id, num_envs=games, vectorization_mode="vector_entry_point",
                        autoreset_mode=AutoresetMode.SAME_STEP, opponent=opponent,
                        **config.env_kwargs)
    obs, info = venv.reset(seed=seed)
    winners = np.zeros(games, dtype=np.int64)
    done = np.zeros(games, dtype=bool)
    while not done.all():
        actions = masked_logits(policy, obs, info["action_mask"]).argmax(axis=1)
        obs, _, terminated, truncated, info = venv.step(actions)
        ended = (terminated | truncated) & ~done
        winners[ended] = info["winner"][ended]
        done |= ended
    venv.close()
    outcomes = tuple(int(winner) for winner in winners)  # the env's winner: +1 the learner
    return MatchResult(record.name, LEARNER, opponent, games, outcomes.count(A_WON),
                       outcomes.count(B_WON), outcomes.count(TIE),
                       time.perf_counter() - start, outcomes)


class RunCallback(BaseCallback):
    """Evaluates and checkpoints a run between rollouts; runs extra ``hooks`` there too.

    Args:
        run: the run being trained.
        hooks: called with this callback after each rollout's update.
    """

    def __init__(self, run: Run, hooks: Sequence[Hook] = ()) -> None:
        super().__init__()
        self.run = run
        self.hooks = list(hooks)
        self.started = time.perf_counter()
        self.elapsed_at_start = run.elapsed
        self.next_eval = self.next_checkpoint = 0
        record = game_record(run.config.game)
        self.eval_agents = {spec: agents.make(record, spec) for spec in run.config.eval_opponents
                            if players.make_batched(record, spec) is None}
        """The eval opponents without a batched twin, built once."""

    def _init_callback(self) -> None:
        config = self.run.config
        step = self.model.num_timesteps
        self.next_eval = next_multiple(step, config.eval_every)
        self.next_checkpoint = next_multiple(step, config.checkpoint_every)

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        """After each update (and before the first rollout): evaluate, hooks, checkpoint."""
        step = self.model.num_timesteps
        config = self.run.config
        if step >= self.next_eval:
            self.evaluate()
            self.next_eval = next_multiple(step, config.eval_every)
        for hook in self.hooks:
            hook(self)
        if step >= self.next_checkpoint:
            self.checkpoint()
            self.next_checkpoint = next_multiple(step, config.checkpoint_every)

    def _on_training_end(self) -> None:
        """A last evaluation and checkpoint at the final step."""
        step = self.model.num_timesteps
        if not self.run.history or self.run.history[-1]["step"] != step:
            self.evaluate()
        self.checkpoint()

    def wall_time(self) -> float:
        """Training wall time of the run so far, earlier sessions included."""
        return self.elapsed_at_start + time.perf_counter() - self.started

    def eval_match(self, spec: str) -> MatchResult:
        """The learner against eval opponent ``spec`` (``config.eval_games`` games)."""
        config = self.run.config
        if spec in self.eval_agents:
            result = match(self.model, config, self.eval_agents[spec], config.eval_games,
                           config.seed)
            return MatchResult(result.game, LEARNER, spec, result.games, result.a_wins,
                               result.b_wins, result.ties, result.seconds, result.outcomes)
        return vector_match(self.model.policy, config, spec, config.eval_games, config.seed)

    def evaluate(self) -> dict[str, float]:
        """Win and loss rates against the eval opponents: logged, saved to ``eval.json``;
        ``best.zip`` keeps the weights with the best mean (win rate - loss rate)."""
        config, step = self.run.config, self.model.num_timesteps
        results = {spec: self.eval_match(spec) for spec in config.eval_opponents}
        wins = {spec: r.a_win_rate for spec, r in results.items()}
        losses = {spec: r.b_wins / r.games for spec, r in results.items()}
        for spec in results:
            self.logger.record(f"eval/win_rate_vs_{spec}", wins[spec])
            self.logger.record(f"eval/loss_rate_vs_{spec}", losses[spec])
        self.logger.dump(step)
        self.run.history.append({"step": step, "seconds": round(self.wall_time(), 1),
                                 "win_rates": wins, "loss_rates": losses})
        write_json(self.run.directory / EVAL_FILE, self.run.history)
        print(f"[{step:>9} steps, {self.wall_time():7.0f} s] win/loss "
              + ", ".join(f"{spec} {wins[spec]:.0%}/{losses[spec]:.0%}" for spec in results),
              flush=True)
        save_checkpoint(self.model, self.run.directory / CHECKPOINTS / f"step_{step}.zip",
                        config.game, config.env_kwargs)
        score = float(np.mean([wins[spec] - losses[spec] for spec in results]))
        if score > self.run.best_score:
            self.run.best_score = score
            save_checkpoint(self.model, self.run.best, config.game, config.env_kwargs)
        return wins

    def checkpoint(self) -> None:
        """Write ``last.zip`` atomically with everything ``--resume`` needs."""
        self.run.elapsed = self.wall_time()
        state = self.run.train_state(self.model, self.training_env)
        save_checkpoint(self.model, self.run.last, self.run.config.game,
                        self.run.config.env_kwargs, state)


def next_multiple(step: int, every: int) -> int:
    """The first multiple of ``every`` after ``step``."""
    return (step // every + 1) * every
