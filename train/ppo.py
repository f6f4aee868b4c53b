"""Train a MaskablePPO agent against classic AIs (``boardgym train GAME``).

Every run gets a folder ``runs/{game}__{algo}__{seed}__{time}/`` holding ``config.yaml``
(the resolved hyperparameters), ``command.txt`` (the exact commands, resumes included),
``checkpoints/last.zip`` (every ``checkpoint_every`` steps), ``checkpoints/step_N.zip`` (the
weights at each evaluation) and ``checkpoints/best.zip`` (all written atomically: temp file,
then rename), ``eval.json`` (win rates against the eval opponents over training steps) and ``tb/``
(TensorBoard). ``--resume RUN_DIR`` continues from ``checkpoints/last.zip``: weights,
optimizer, step count, RNG streams, opponent pool and eval history.

Examples::

    boardgym train reversi
    boardgym train four_in_a_row --timesteps 500000 --set n_envs=8
    boardgym train tictactoe --opponent perfect --opponent random --seed 3
    boardgym train reversi --resume runs/reversi__maskableppo__0__20250101-120000
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from boardgym.agents import batched
from boardgym.agents.networks import BoardCNN, SymmetricPolicy
from boardgym.agents.policy import (
    TRAIN_STATE_ENTRY,
    PolicyAgent,
    board_kwargs,
    check_game,
    checkpoint_metadata,
    masked_logits,
    read_entry,
    read_metadata,
    write_entries,
)
from boardgym.envs.games import canonical_name
from boardgym.envs.sb3 import SB3VecEnv
from boardgym.train.config import TrainConfig, load_config, parse_overrides, read_yaml, save_config
from boardgym.train.evaluate import A_WON, B_WON, TIE, MatchResult, play_match
from gymnasium.vector import AutoresetMode
from sb3_contrib import MaskablePPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecMonitor

import boardgym  # noqa: F401  (registers the env ids)
from boardgym import agents

ALGO = "maskableppo"
RUNS_DIR = Path("runs")
CHECKPOINTS = "checkpoints"
LAST, BEST = "last.zip", "best.zip"
CONFIG_FILE, COMMAND_FILE, EVAL_FILE = "config.yaml", "command.txt", "eval.json"
TENSORBOARD_DIR = "tb"
ENV_IDS = {"reversi": "Reversi-v0", "four_in_a_row": "FourInARow-v0",
           "tictactoe": "TicTacToe-v0"}
MIX_STREAM = 1
"""Sub-stream of an env seed that draws its per-episode opponent."""
Hook = Callable[["RunCallback"], None]


# -- opponents -------------------------------------------------------------------------------

class OpponentPool:
    """Agent specs with draw weights; one is drawn per episode. Shared by all envs of a run.

    Args:
        game: the game the agents play.
        specs: built-in agent names or checkpoint paths.
        weights: relative draw weights (``None``: uniform).
    """

    def __init__(self, game: str, specs: Sequence[str],
                 weights: Sequence[float] | None = None) -> None:
        self.game = canonical_name(game)
        self.specs: list[str] = []
        self.weights: list[float] = []
        self._agents: dict[str, agents.Agent] = {}
        for i, spec in enumerate(specs):
            self.add(spec, 1.0 if weights is None else float(weights[i]))

    def add(self, spec: str, weight: float = 1.0) -> None:
        """Add ``spec`` (built now, so a bad spec fails at once) with draw ``weight``."""
        self._agents[spec] = agents.make(self.game, spec)
        self.specs.append(spec)
        self.weights.append(weight)

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
    """Draws the env's opponent from a pool at every reset, with its own seeded generator."""

    def __init__(self, env: gym.Env, pool: OpponentPool) -> None:
        super().__init__(env)
        self.pool = pool
        self.rng = np.random.default_rng()

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Draw an opponent, then reset the env (the opponent may move first)."""
        if seed is not None:
            self.rng = np.random.default_rng([seed, MIX_STREAM])
        self.env.unwrapped.opponent = self.pool.sample(self.rng)  # type: ignore[attr-defined]
        return self.env.reset(seed=seed, options=options)

    def action_masks(self) -> np.ndarray:
        """The wrapped env's action mask (what MaskablePPO asks for)."""
        return self.env.unwrapped.action_masks()  # type: ignore[attr-defined, no-any-return]

    def get_rng_state(self) -> dict[str, Any]:
        """The states of this env's generators (opponent draw and env)."""
        return {"mix": self.rng.bit_generator.state,
                "env": self.env.unwrapped.np_random.bit_generator.state}

    def set_rng_state(self, state: dict[str, Any]) -> None:
        """Restore the generators saved by ``get_rng_state``."""
        self.rng.bit_generator.state = state["mix"]
        env_rng = np.random.default_rng()
        env_rng.bit_generator.state = state["env"]
        self.env.unwrapped.np_random = env_rng


class ConcatVecEnv(VecEnv):
    """Several VecEnvs side by side as one: sub-env indices run through the parts in order.

    Used to give each opponent of a mix its own batched env (a batched env has one opponent).
    """

    def __init__(self, parts: Sequence[VecEnv]) -> None:
        self.parts = list(parts)
        self.offsets = np.cumsum([0, *(part.num_envs for part in self.parts)])
        first = self.parts[0]
        super().__init__(int(self.offsets[-1]), first.observation_space, first.action_space)
        self._actions: np.ndarray | None = None

    def _split(self, indices: Any) -> list[tuple[VecEnv, list[int]]]:
        """``(part, local indices)`` for the global sub-env ``indices`` (None: all)."""
        wanted = range(self.num_envs) if indices is None else (
            [indices] if isinstance(indices, int) else list(indices))
        groups: list[tuple[VecEnv, list[int]]] = []
        for k, part in enumerate(self.parts):
            local = [int(i) - int(self.offsets[k]) for i in wanted
                     if self.offsets[k] <= i < self.offsets[k + 1]]
            if local:
                groups.append((part, local))
        return groups

    def reset(self) -> np.ndarray:
        """Reset every part; observations concatenated."""
        return np.concatenate([part.reset() for part in self.parts])

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> Any:
        """Step each part with its slice of the actions; results concatenated."""
        assert self._actions is not None, "step_async first"
        results = [part.step(self._actions[self.offsets[k]:self.offsets[k + 1]])
                   for k, part in enumerate(self.parts)]
        obs, rewards, dones, infos = zip(*results, strict=True)
        return (np.concatenate(obs), np.concatenate(rewards), np.concatenate(dones),
                [info for part_infos in infos for info in part_infos])

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Sub-env ``i`` of the whole gets ``seed + i``."""
        return [s for k, part in enumerate(self.parts)
                for s in part.seed(None if seed is None else seed + int(self.offsets[k]))]

    def close(self) -> None:
        for part in self.parts:
            part.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [image for part in self.parts for image in part.get_images()]

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [value for part, local in self._split(indices)
                for value in part.get_attr(attr_name, local)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        for part, local in self._split(indices):
            part.set_attr(attr_name, value, local)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None,
                   **method_kwargs: Any) -> list[Any]:
        return [result for part, local in self._split(indices)
                for result in part.env_method(method_name, *method_args, indices=local,
                                              **method_kwargs)]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper],
                       indices: Any = None) -> list[bool]:
        return [flag for part, local in self._split(indices)
                for flag in part.env_is_wrapped(wrapper_class, local)]


def uses_batched_env(config: TrainConfig, pool: OpponentPool) -> bool:
    """Whether the run trains on the batched vector env (see ``config.vectorization``).

    Raises:
        ValueError: ``vectorization="vector"`` with an opponent that has no batched twin.
    """
    missing = [spec for spec in pool.specs if batched.make(config.game, spec) is None]
    if config.vectorization == "vector" and missing:
        raise ValueError(f"opponents {missing} have no batched version; use --set "
                         f"vectorization=dummy or opponents among {batched.names(config.game)}")
    return config.vectorization != "dummy" and not missing


def env_counts(weights: Sequence[float], n_envs: int) -> list[int]:
    """``n_envs`` split across opponents in proportion to ``weights`` (largest remainders)."""
    shares = np.asarray(weights, dtype=float) / sum(weights) * n_envs
    counts = np.floor(shares).astype(int)
    for i in np.argsort(counts - shares, kind="stable")[: n_envs - counts.sum()]:
        counts[i] += 1
    return [int(c) for c in counts]


def make_vec_env(config: TrainConfig, pool: OpponentPool) -> VecEnv:
    """``config.n_envs`` envs of the game, playing the opponents of ``pool``.

    With the batched env (``uses_batched_env``) the envs are split across the opponents in
    proportion to their weights; otherwise each env of an SB3 ``DummyVecEnv`` draws its
    opponent per episode (the pool may then change during training, as in self-play).
    """
    env_id = ENV_IDS[config.game]
    if uses_batched_env(config, pool):
        counts = env_counts(pool.weights, config.n_envs)
        parts = [SB3VecEnv.make(env_id, count, opponent=spec, **config.env_kwargs)
                 for spec, count in zip(pool.specs, counts, strict=True) if count]
        return VecMonitor(ConcatVecEnv(parts))

    def factory() -> gym.Env:
        env = gym.make(env_id, disable_env_checker=True, **config.env_kwargs)
        return Monitor(OpponentMix(env, pool))

    return DummyVecEnv([factory] * config.n_envs)


# -- RNG streams -----------------------------------------------------------------------------

def seed_everything(seed: int) -> None:
    """Seed python's ``random``, numpy's global generator and torch."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def rng_state(vec_env: VecEnv) -> dict[str, Any]:
    """Every RNG stream of a training process, as JSON-able data.

    The envs' own generators are saved for SB3's ``DummyVecEnv``; the batched env's
    counter-based streams are not reachable, so ``set_rng_state`` re-derives them.
    """
    version, internal, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state()  # type: ignore[misc]
    envs_state = vec_env.env_method("get_rng_state") if isinstance(vec_env, DummyVecEnv) \
        else None
    return {
        "python": [version, list(internal), gauss],
        "numpy": [name, np.asarray(keys).tolist(), pos, has_gauss, cached],
        "torch": base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode(),
        "envs": envs_state,
    }


def set_rng_state(vec_env: VecEnv, state: dict[str, Any], seed: int, step: int) -> None:
    """Restore the streams saved by ``rng_state``; batched envs get fresh streams seeded
    from ``(seed, step)``, so a resumed run is deterministic too. Takes effect at the
    next ``vec_env.reset()``."""
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))
    raw = np.frombuffer(base64.b64decode(state["torch"]), dtype=np.uint8).copy()
    torch.set_rng_state(torch.from_numpy(raw))
    if state["envs"] is None:
        vec_env.seed(int(np.random.SeedSequence([seed, step]).generate_state(1)[0]))
        return
    for i, env_state in enumerate(state["envs"]):
        vec_env.env_method("set_rng_state", env_state, indices=[i])


# -- the run folder --------------------------------------------------------------------------

@dataclass
class Run:
    """A training run: its folder, config, opponent pool and history.

    Attributes:
        config: the resolved hyperparameters.
        directory: the run folder.
        pool: the opponents the learner is drawn against.
        history: one record per evaluation: ``{"step", "seconds", "win_rates": {spec: p}}``.
        elapsed: training wall time so far (seconds, resumes added up).
        best_score: the best mean eval (win rate - loss rate) so far (``best.zip``'s).
        algo: the folder's algorithm tag.
    """

    config: TrainConfig
    directory: Path
    pool: OpponentPool
    history: list[dict[str, Any]] = field(default_factory=list)
    elapsed: float = 0.0
    best_score: float = -1.0
    algo: str = ALGO

    @property
    def last(self) -> Path:
        """The latest checkpoint."""
        return self.directory / CHECKPOINTS / LAST

    @property
    def best(self) -> Path:
        """The checkpoint with the best mean eval (win rate - loss rate)."""
        return self.directory / CHECKPOINTS / BEST

    def train_state(self, vec_env: VecEnv) -> dict[str, Any]:
        """What ``--resume`` restores besides the model (saved inside each checkpoint)."""
        return {"algo": self.algo, "pool": self.pool.to_dict(), "history": self.history,
                "elapsed": self.elapsed, "best_score": self.best_score,
                "rng": rng_state(vec_env)}


def run_folder_name(game: str, algo: str, seed: int) -> str:
    """``{game}__{algo}__{seed}__{time}``."""
    return f"{game}__{algo}__{seed}__{time.strftime('%Y%m%d-%H%M%S')}"


def record_command(directory: Path, argv: Sequence[str], script: str) -> None:
    """Append the exact command line to the run's ``command.txt``."""
    with (directory / COMMAND_FILE).open("a") as file:
        file.write(shlex.join(["boardgym", script, *argv]) + "\n")


def new_run(config: TrainConfig, runs_dir: Path, pool: OpponentPool, algo: str = ALGO) -> Run:
    """Create the folder of a new run and write its config."""
    directory = runs_dir / run_folder_name(config.game, algo, config.seed)
    (directory / CHECKPOINTS).mkdir(parents=True, exist_ok=False)
    save_config(config, directory / CONFIG_FILE)
    return Run(config, directory, pool, algo=algo)


def open_run(directory: Path, overrides: dict[str, Any]) -> tuple[Run, dict[str, Any]]:
    """The run saved in ``directory`` and the train state of its last checkpoint.

    Raises:
        ValueError: not a run folder, or no checkpoint yet (the message says what to do).
    """
    if not (directory / CONFIG_FILE).is_file():
        raise ValueError(f"{directory} is not a run folder (no {CONFIG_FILE}); pass a folder "
                         f"made by `boardgym train`, e.g. {RUNS_DIR}/reversi__{ALGO}__0__...")
    saved = read_yaml(directory / CONFIG_FILE)
    config = load_config(str(saved.get("game")), directory / CONFIG_FILE, overrides)
    last = directory / CHECKPOINTS / LAST
    if not last.is_file():
        raise ValueError(f"{directory} has no checkpoint yet ({last}); start a new run instead")
    check_game(read_metadata(last), config.game, last)
    state = read_entry(last, TRAIN_STATE_ENTRY)
    if state is None:
        raise ValueError(f"{last} has no training state; it cannot be resumed")
    save_config(config, directory / CONFIG_FILE)
    run = Run(config, directory, OpponentPool.from_dict(config.game, state["pool"]),
              state["history"], state["elapsed"], state["best_score"],
              algo=state["algo"])
    return run, state


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` atomically (temp file, then rename)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def save_checkpoint(model: BaseAlgorithm, path: Path, game: str, env_kwargs: dict[str, Any],
                    train_state: dict[str, Any] | None = None) -> None:
    """Save ``model`` with its boardgym record (and ``train_state``) to ``path`` atomically.

    The zip is written to a temp file in the same folder, flushed to disk and renamed over
    ``path``, so a process killed at any moment leaves the old or the new file, never half.
    """
    tmp = path.with_name(f".{path.stem}.tmp.zip")
    model.save(tmp)
    entries: dict[str, Any] = {"boardgym.json": checkpoint_metadata(game, env_kwargs,
                                                                      model.num_timesteps)}
    if train_state is not None:
        entries[TRAIN_STATE_ENTRY] = train_state
    write_entries(tmp, entries)
    with tmp.open("rb") as file:
        os.fsync(file.fileno())
    os.replace(tmp, path)


# -- model -----------------------------------------------------------------------------------

def build_model(config: TrainConfig, vec_env: VecEnv, tensorboard: Path | None) -> MaskablePPO:
    """A fresh MaskablePPO with the ``BoardCNN`` extractor, as ``config`` says (the
    ``SymmetricPolicy`` when ``config.symmetric``)."""
    policy_kwargs = {
        "features_extractor_class": BoardCNN,
        "features_extractor_kwargs": {"channels": config.channels, "blocks": config.blocks,
                                      "features_dim": config.features_dim,
                                      "mobility": config.mobility},
        "net_arch": {"pi": list(config.net_arch), "vf": list(config.net_arch)},
    }
    learning_rate: float | LinearSchedule = config.learning_rate
    if config.lr_schedule == "linear":
        learning_rate = LinearSchedule(config.learning_rate, 0.0, 1.0)
    policy = SymmetricPolicy if config.symmetric else "MlpPolicy"
    return MaskablePPO(
        policy, vec_env, learning_rate=learning_rate, n_steps=config.n_steps,
        batch_size=config.batch_size, n_epochs=config.n_epochs, gamma=config.gamma,
        gae_lambda=config.gae_lambda, clip_range=config.clip_range, ent_coef=config.ent_coef,
        vf_coef=config.vf_coef, max_grad_norm=config.max_grad_norm,
        policy_kwargs=policy_kwargs, seed=config.seed, device="cpu", verbose=0,
        tensorboard_log=None if tensorboard is None else str(tensorboard))


def learner_agent(model: BaseAlgorithm, config: TrainConfig) -> PolicyAgent:
    """The model being trained as an ``Agent`` (masked argmax)."""
    metadata = checkpoint_metadata(config.game, config.env_kwargs, model.num_timesteps)
    return PolicyAgent(model, metadata, name="learner")


def match(model: BaseAlgorithm, config: TrainConfig, opponent: str | agents.Agent,
          games: int, seed: int) -> MatchResult:
    """The learner against ``opponent`` over ``games`` games (first player random per game)."""
    return play_match(config.game, learner_agent(model, config), opponent, games, seed=seed,
                      config=board_kwargs(config.env_kwargs))


def vector_match(model: BaseAlgorithm, config: TrainConfig, opponent: str, games: int,
                 seed: int) -> MatchResult:
    """The learner against the batched AI ``opponent`` (``agents.batched.names``) over ``games``
    games played side by side on the vector env, one forward pass a turn for all of them.

    Sub-env ``i`` is seeded ``seed + i`` and plays one game (its first player drawn at random);
    the learner plays the masked argmax, as its ``PolicyAgent`` does.
    """
    start = time.perf_counter()
    venv = gym.make_vec(ENV_IDS[config.game], num_envs=games,
                        vectorization_mode="vector_entry_point",
                        autoreset_mode=AutoresetMode.SAME_STEP, opponent=opponent,
                        **config.env_kwargs)
    obs, info = venv.reset(seed=seed)
    winners = np.zeros(games, dtype=np.int64)
    done = np.zeros(games, dtype=bool)
    while not done.all():
        actions = masked_logits(model.policy, obs, info["action_mask"]).argmax(axis=1)
        obs, _, terminated, truncated, info = venv.step(actions)
        ended = (terminated | truncated) & ~done
        winners[ended] = info["winner"][ended]
        done |= ended
    venv.close()
    outcomes = tuple(int(winner) for winner in winners)  # the env's winner: +1 the learner
    return MatchResult(canonical_name(config.game), "learner", opponent, games,
                       outcomes.count(A_WON), outcomes.count(B_WON), outcomes.count(TIE),
                       time.perf_counter() - start, outcomes)


def eval_match(model: BaseAlgorithm, config: TrainConfig, opponent: str, games: int,
               seed: int) -> MatchResult:
    """``vector_match`` when ``opponent`` has a batched version, else ``match``."""
    if batched.make(config.game, opponent) is not None:
        return vector_match(model, config, opponent, games, seed)
    return match(model, config, opponent, games, seed)


def win_rate(model: BaseAlgorithm, config: TrainConfig, opponent: str | agents.Agent,
             games: int, seed: int) -> float:
    """The learner's win rate against ``opponent`` (first player random per game)."""
    return match(model, config, opponent, games, seed).a_win_rate


# -- training loop ---------------------------------------------------------------------------

class RunCallback(BaseCallback):
    """Evaluates and checkpoints a run between rollouts; runs extra ``hooks`` there too.

    Args:
        run: the run being trained.
        hooks: called with this callback after each rollout's update (self-play's league).
    """

    def __init__(self, run: Run, hooks: Sequence[Hook] = ()) -> None:
        super().__init__()
        self.run = run
        self.hooks = list(hooks)
        self.started = time.perf_counter()
        self.elapsed_at_start = run.elapsed
        self.next_eval = self.next_checkpoint = 0

    def _init_callback(self) -> None:
        config = self.run.config
        step = self.model.num_timesteps
        self.next_eval = (step // config.eval_every + 1) * config.eval_every
        self.next_checkpoint = (step // config.checkpoint_every + 1) * config.checkpoint_every

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        """After each update (and before the first rollout): evaluate, hooks, checkpoint."""
        step = self.model.num_timesteps
        if step >= self.next_eval:
            self.evaluate()
            self.next_eval += self.run.config.eval_every * max(
                1, (step - self.next_eval) // self.run.config.eval_every + 1)
        for hook in self.hooks:
            hook(self)
        if step >= self.next_checkpoint:
            self.checkpoint()
            self.next_checkpoint += self.run.config.checkpoint_every * max(
                1, (step - self.next_checkpoint) // self.run.config.checkpoint_every + 1)

    def _on_training_end(self) -> None:
        """A last evaluation and checkpoint at the final step."""
        step = self.model.num_timesteps
        if not self.run.history or self.run.history[-1]["step"] != step:
            self.evaluate()
        self.checkpoint()

    def wall_time(self) -> float:
        """Training wall time of the run so far, earlier sessions included."""
        return self.elapsed_at_start + time.perf_counter() - self.started

    def evaluate(self) -> dict[str, float]:
        """Win and loss rates against the eval opponents: logged, saved to ``eval.json``;
        ``best.zip`` keeps the weights with the best mean (win rate - loss rate)."""
        config, step = self.run.config, self.model.num_timesteps
        results = {spec: eval_match(self.model, config, spec, config.eval_games,
                                    config.seed) for spec in config.eval_opponents}
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
        directory = self.run.directory / CHECKPOINTS
        save_checkpoint(self.model, directory / f"step_{step}.zip", config.game,
                        config.env_kwargs)
        score = float(np.mean([wins[spec] - losses[spec] for spec in results]))
        if score > self.run.best_score:
            self.run.best_score = score
            save_checkpoint(self.model, self.run.best, config.game, config.env_kwargs)
        return wins

    def checkpoint(self) -> None:
        """Write ``last.zip`` atomically with everything ``--resume`` needs."""
        self.run.elapsed = self.wall_time()
        state = self.run.train_state(self.training_env)
        save_checkpoint(self.model, self.run.last, self.run.config.game,
                        self.run.config.env_kwargs, state)


def train(run: Run, resume_state: dict[str, Any] | None = None, progress: bool = True,
          hooks: Sequence[Hook] = ()) -> MaskablePPO:
    """Train ``run`` up to ``config.total_timesteps`` (continuing from ``resume_state``).

    Returns:
        The trained model; ``checkpoints/last.zip`` holds it too.
    """
    config = run.config
    torch.set_num_threads(config.torch_threads)
    seed_everything(config.seed)
    vec_env = make_vec_env(config, run.pool)
    tensorboard = run.directory / TENSORBOARD_DIR
    if resume_state is None:
        model = build_model(config, vec_env, tensorboard)
    else:
        model = MaskablePPO.load(run.last, env=vec_env, device="cpu",
                                 tensorboard_log=str(tensorboard))
        vec_env.reset()  # consumes the seeds that load() set; the restored streams go on
        set_rng_state(vec_env, resume_state["rng"], config.seed, model.num_timesteps)
        model._last_obs = vec_env.reset()  # type: ignore[assignment]  # SB3 has no setter
        model._last_episode_starts = np.ones(vec_env.num_envs, dtype=bool)
    remaining = config.total_timesteps - model.num_timesteps
    callback = RunCallback(run, hooks)
    if remaining > 0:
        model.learn(remaining, callback=callback, reset_num_timesteps=resume_state is None,
                    progress_bar=progress, tb_log_name=run.algo)
    vec_env.close()
    return model


# -- command line ----------------------------------------------------------------------------

def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``boardgym train`` and ``boardgym selfplay``."""
    parser.add_argument("game", nargs="?", help="reversi, four_in_a_row or tictactoe "
                        "(not needed with --resume)")
    parser.add_argument("--timesteps", type=int, help="total training steps")
    parser.add_argument("--seed", type=int, help="seed of everything (default 0)")
    parser.add_argument("--n-envs", type=int, help="parallel envs")
    parser.add_argument("--opponent", action="append", metavar="SPEC",
                        help="opponent spec, repeat for a mix drawn per episode (replaces the "
                             "config's opponents)")
    parser.add_argument("--config", type=Path, help="YAML hyperparameter file (default: "
                        "train/hyperparams/GAME.yaml)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key, e.g. --set learning_rate=1e-4")
    parser.add_argument("--runs-dir", type=Path, default=RUNS_DIR, help="where run folders go")
    parser.add_argument("--resume", type=Path, metavar="RUN_DIR",
                        help="continue the run in RUN_DIR from its last checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def resolve_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The config keys set on the command line (``--set`` and the named options)."""
    overrides = parse_overrides(args.set)
    if args.opponent:
        overrides.update(opponents=args.opponent, opponent_weights=None)
    explicit = {"total_timesteps": args.timesteps, "seed": args.seed, "n_envs": args.n_envs}
    overrides.update({key: value for key, value in explicit.items() if value is not None})
    return overrides


def start(args: argparse.Namespace, parser: argparse.ArgumentParser, argv: Sequence[str],
          script: str, algo: str,
          make_pool: Callable[[TrainConfig], OpponentPool]) -> tuple[Run, dict[str, Any] | None]:
    """The run the command line asks for: a new one, or ``--resume``'s.

    Raises:
        ValueError: bad options or run folder (the message names the fix).
    """
    overrides = resolve_overrides(args)
    state: dict[str, Any] | None = None
    if args.resume is not None:
        run, state = open_run(args.resume, overrides)
    elif args.game is None:
        parser.error("give a GAME (reversi, four_in_a_row, tictactoe) or --resume RUN_DIR")
    else:
        config = load_config(args.game, args.config, overrides)
        run = new_run(config, args.runs_dir, make_pool(config), algo)
    record_command(run.directory, argv, script)
    print(f"run folder: {run.directory}", flush=True)
    return run, state


def build_parser(prog: str = "boardgym train", description: str | None = __doc__
                 ) -> argparse.ArgumentParser:
    """The argument parser of a training command (``boardgym train`` unless named)."""
    parser = argparse.ArgumentParser(prog=prog, description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym train``: returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(args_list)
    try:
        run, state = start(args, parser, args_list, "train", ALGO,
                           lambda c: OpponentPool(c.game, c.opponents, c.opponent_weights))
    except (ValueError, FileNotFoundError) as error:
        parser.error(str(error))
    train(run, state, progress=not args.no_progress)
    print(f"done: {run.last} (best: {run.best})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
