"""PPO's run folders: checkpoints, RNG streams and resuming (model selection:
``train.common.selection``).

A PPO run folder (``train.common.runs``: ``config.yaml``, ``command.txt``, ``eval.json``,
``checkpoints/last.zip`` with everything ``--resume`` needs) also holds
``checkpoints/step_N.zip``, ``checkpoints/best.zip`` (with ``best.json``: which evaluation
it is, by what measure), ``checkpoints/start.zip`` (after a pretraining, or with ``teacher:
pretrained``: the policy as PPO started) and ``tb/`` (TensorBoard). Every file is written
atomically.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv

from boardgym.agents.checkpoint import OPTIMIZER_ENTRY, TRAIN_STATE_ENTRY, read_entry, read_tensors
from boardgym.agents.ppo.policy import load_network, model_counters, write_checkpoint
from boardgym.train.common.runs import (
    TENSORBOARD_DIR,
    check_train_state,
    checkpoint_file,
    last_checkpoint,
    new_run_folder,
    open_run_folder,
    set_torch_rng,
    torch_rng_text,
)
from boardgym.train.common.selection import Selection
from boardgym.train.ppo.config import TrainConfig
from boardgym.train.ppo.environments import OpponentPool
from boardgym.train.tools.plot import BEST_FILE

ALGO = "maskableppo"
BEST, START = "best.zip", "start.zip"
TRAIN_STATE_KEYS = ("algo", "pool", "history", "elapsed", "best_score", "rng", "counters")
"""The keys every checkpoint's training state has (``Run.train_state``; ``"selection"``
too since model selection on quality)."""


# -- checkpoints and RNG streams -------------------------------------------------------------

def save_checkpoint(model: BaseAlgorithm, path: Path, game: str, env_kwargs: dict[str, Any],
                    train_state: dict[str, Any] | None = None) -> None:
    """Save ``model``'s policy and optimizer with its boardgym record (and ``train_state``)
    to ``path`` atomically, in the pickle-free format of ``agents.checkpoint``."""
    entries = None if train_state is None else {TRAIN_STATE_ENTRY: train_state}
    write_checkpoint(path, model.policy, game, env_kwargs, model.num_timesteps, entries)


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
        "torch": torch_rng_text(),
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
    set_torch_rng(state["torch"])
    if state["envs"] is None:
        vec_env.seed(int(np.random.SeedSequence([seed, step]).generate_state(1)[0]))
        return
    for i, env_state in enumerate(state["envs"]):
        vec_env.env_method("set_rng_state", env_state, indices=[i])


# -- the run ---------------------------------------------------------------------------------

@dataclass
class Run:
    """A training run: its folder, config, opponent pool and history.

    Attributes:
        config: the resolved hyperparameters.
        directory: the run folder.
        pool: the opponents the learner is drawn against.
        history: one record per evaluation: ``{"step", "seconds", "win_rates": {spec: p},
            "loss_rates": {spec: p}}``.
        elapsed: training wall time so far (seconds, resumes added up).
        selection: which evaluation ``best.zip`` holds (by the quality score with
            ``eval_quality``, else by the mean of win rate - loss rate).
        algo: the folder's algorithm tag.
    """

    config: TrainConfig
    directory: Path
    pool: OpponentPool
    history: list[dict[str, Any]] = field(default_factory=list)
    elapsed: float = 0.0
    selection: Selection = field(default_factory=Selection)
    algo: str = ALGO

    @property
    def last(self) -> Path:
        """The latest checkpoint."""
        return checkpoint_file(self.directory)

    @property
    def start(self) -> Path:
        """The policy as PPO started, kept by a run that pretrains or has ``teacher:
        pretrained`` (whose anchor a resume reads from here)."""
        return checkpoint_file(self.directory, START)

    @property
    def best(self) -> Path:
        """The checkpoint of the best evaluation: the best quality score on the selection
        positions (ties: the best win score) when the run judges quality, else the best
        mean of win rate - loss rate (see ``selection``, ``best.json``)."""
        return checkpoint_file(self.directory, BEST)

    @property
    def best_record(self) -> Path:
        """``best.json``: the metric, step and score of ``best.zip``."""
        return self.directory / BEST_FILE

    @property
    def tensorboard(self) -> Path:
        """The TensorBoard log folder."""
        return self.directory / TENSORBOARD_DIR

    def train_state(self, model: BaseAlgorithm, vec_env: VecEnv) -> dict[str, Any]:
        """What ``--resume`` restores besides the weights, optimizer and step count of
        ``model`` (saved inside each checkpoint): plain JSON data."""
        best_score = self.selection.key[-1] if self.selection.key else -1.0
        return {"algo": self.algo, "pool": self.pool.to_dict(), "history": self.history,
                "elapsed": self.elapsed, "best_score": best_score,
                "selection": self.selection.to_dict(), "rng": rng_state(vec_env),
                "counters": model_counters(model)}


def new_run(config: TrainConfig, runs_dir: Path, pool: OpponentPool, algo: str = ALGO) -> Run:
    """Create the folder of a new run and write its config (``common.runs.new_run_folder``).

    Raises:
        ValueError: ``runs_dir`` cannot hold a new folder (the message names the path).
    """
    return Run(config, new_run_folder(config, runs_dir, algo), pool, algo=algo)


def open_run(directory: Path, overrides: dict[str, Any],
             game: str | None = None) -> tuple[Run, dict[str, Any]]:
    """The run saved in ``directory`` and the train state of its last checkpoint.

    Everything is checked before anything is written: on any error ``config.yaml`` is left
    as it was. Only ``TrainConfig.RESUMABLE_KEYS`` may differ from the saved config.

    Args:
        directory: the run folder.
        overrides: config keys given on the command line.
        game: the game named on the command line, if any (it must be the run's).

    Raises:
        ValueError: not a run folder, no checkpoint yet, another game, or an override that
            cannot change on resume (the message says what to do).
    """
    return open_run_folder(TrainConfig, directory, overrides, game, ("train", ALGO),
                           resumed_run)


def resumed_run(config: TrainConfig, directory: Path) -> tuple[Run, dict[str, Any]]:
    """The run of ``directory``'s ``last.zip`` with ``config``, and its training state.

    Raises:
        ValueError: no checkpoint yet.
        FileNotFoundError, CheckpointError: a checkpoint that cannot be resumed.
    """
    state = read_resume_state(last_checkpoint(directory), config.game)
    pool = OpponentPool.from_dict(config.game, state["pool"])
    run = Run(config, directory, pool, state["history"], state["elapsed"],
              Selection.from_state(state), algo=state["algo"])
    return run, state


def read_resume_state(last: Path, game: str) -> dict[str, Any]:
    """The training state of checkpoint ``last``, after checking all of it: record, weights,
    optimizer state (nothing unpickled) and the state's keys.

    Raises:
        FileNotFoundError, CheckpointError: a checkpoint that cannot be resumed (the
            message says why).
    """
    load_network(last, game)
    read_tensors(last, OPTIMIZER_ENTRY)
    return check_train_state(read_entry(last, TRAIN_STATE_ENTRY), TRAIN_STATE_KEYS, last)
