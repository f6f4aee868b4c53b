"""The az run: its folder, resuming, logs, the training loop and the in-run evaluations.

Each iteration plays ``games_per_iteration`` games of self-play (``train.az.selfplay``),
stores their samples in the replay buffer (``train.az.replay``) and takes ``train_steps``
gradient steps on batches drawn from it (``train.az.learn``). Every ``eval_every``
iterations (and at the end) the evaluated player (``az:eval_simulations``) is judged on a
fixed subset of the game's labelled positions (``train.quality.agreement.judge``) and plays
the fixed ladder ``eval_opponents`` (``train.match.evaluate.play_match``, both seatings).

A run folder (``train.common.runs``) ``runs/{game}__az__{seed}__{time}/`` holds
``config.yaml``, ``command.txt``, ``checkpoints/last.zip`` (written atomically every
iteration, with the optimizer, the replay buffer, the RNG streams and the counters:
everything ``--resume RUN_DIR`` needs), ``checkpoints/model.zip`` (the network alone: the
file to ship and to play with ``az:N@PATH``), ``checkpoints/iter_N.zip`` at each evaluation,
``progress.csv`` (one row per iteration), ``eval.json`` (``boardgym plot`` draws it) and
``tb/`` (TensorBoard).
"""

from __future__ import annotations

import csv
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from boardgym.agents.az.checkpoint import (
    OPTIMIZER_ENTRY,
    TRAIN_STATE_ENTRY,
    az_record,
    load_network,
    read_entry,
    read_tensors,
    write_checkpoint,
)
from boardgym.agents.az.network import AzNet, Evaluator, Symmetries
from boardgym.agents.az.player import AzAgent
from boardgym.agents.checkpoint import load_state
from boardgym.agents.devices import resolve_device
from boardgym.envs.games import game as game_record
from boardgym.envs.games.core import Game
from boardgym.train.az.config import AzConfig
from boardgym.train.az.learn import (
    learning_rate_at,
    new_learner,
    optimizer_for,
    set_learning_rate,
    train_steps,
)
from boardgym.train.az.replay import ReplayBuffer
from boardgym.train.az.workers import Shards, play_iteration, start_workers
from boardgym.train.common.backends import Backend
from boardgym.train.common.commands import progress_bar
from boardgym.train.common.runs import (
    EVAL_FILE,
    TENSORBOARD_DIR,
    check_train_state,
    checkpoint_file,
    last_checkpoint,
    new_run_folder,
    open_run_folder,
    set_torch_rng,
    torch_rng_text,
    write_json,
)
from boardgym.train.match.evaluate import play_match
from boardgym.train.quality.agreement import Position, default_positions, judge, load_positions

ALGO = "az"
"""The run folders' algorithm tag."""
MODEL = "model.zip"
PROGRESS_FILE = "progress.csv"
BUFFER_ENTRY = "az_buffer.pth"
"""The replay buffer's entry in ``last.zip``."""
SECONDS_PER_MINUTE = 60
QUALITY_SUBSET_SEED = 0
"""Seed of the fixed subset of labelled positions judged at every evaluation."""
TRAIN_STATE_KEYS = ("iteration", "positions", "games", "elapsed", "history", "numpy", "torch")
"""The keys of every ``last.zip``'s training state (``AzRun.train_state``)."""


# -- the run ---------------------------------------------------------------------------------

@dataclass
class AzRun:
    """A training run: its folder, config, learner, and counters.

    Attributes:
        config: the resolved hyperparameters.
        directory: the run folder.
        net, optimizer, buffer: the learner and its replay buffer.
        rng: the run's numpy stream (self-play noise, sampling).
        iteration, positions, games: done so far.
        elapsed: training wall time so far (seconds, resumes included).
        history: the evaluation records.
    """

    config: AzConfig
    directory: Path
    net: AzNet
    optimizer: torch.optim.Optimizer
    buffer: ReplayBuffer
    rng: np.random.Generator
    iteration: int = 0
    positions: int = 0
    games: int = 0
    elapsed: float = 0.0
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last(self) -> Path:
        """The latest checkpoint, with everything ``--resume`` needs."""
        return checkpoint_file(self.directory)

    @property
    def model(self) -> Path:
        """The latest network alone: the file to ship and play."""
        return checkpoint_file(self.directory, MODEL)

    def record(self) -> dict[str, Any]:
        """The ``az.json`` record of the learner now."""
        return az_record(self.config.game, self.config.env_kwargs, self.net.arch,
                         self.iteration, self.positions)

    def train_state(self) -> dict[str, Any]:
        """What ``--resume`` restores besides weights, optimizer and buffer: JSON data."""
        return {"iteration": self.iteration, "positions": self.positions, "games": self.games,
                "elapsed": self.elapsed, "history": self.history,
                "numpy": self.rng.bit_generator.state, "torch": torch_rng_text()}

    def save(self) -> None:
        """Write ``last.zip`` (everything) and ``model.zip`` (the network) atomically."""
        write_checkpoint(self.last, self.net, self.record(), self.optimizer,
                         self.train_state(), {BUFFER_ENTRY: self.buffer.state_dict()})
        write_checkpoint(self.model, self.net, self.record())


def new_run(config: AzConfig, runs_dir: Path) -> AzRun:
    """A fresh run and its folder (with ``config.yaml``, its ``device`` resolved:
    ``resolve_device``); nothing is made on disk when the device or the ``init_from``
    weights do not fit.

    Raises:
        ValueError: a GPU torch does not see, the ``init_from`` weights do not fit, or the
            folder cannot be made (the message names the fix or the path).
    """
    config.device = resolve_device(config.device)
    net, optimizer = new_learner(config)
    directory = new_run_folder(config, runs_dir, ALGO)
    buffer = ReplayBuffer(net.arch, config.buffer_size)
    return AzRun(config, directory, net, optimizer, buffer, np.random.default_rng(config.seed))


def open_run(directory: Path, overrides: dict[str, Any], game: str | None) -> AzRun:
    """The run in ``directory`` as its last checkpoint left it; ``overrides`` may change
    only ``AzConfig.RESUMABLE_KEYS``. Everything is checked before ``config.yaml`` is
    rewritten.

    Raises:
        ValueError: not an az run folder, no checkpoint, another game, a fixed key changed.
        CheckpointError: a checkpoint that cannot be resumed.
    """
    return open_run_folder(AzConfig, directory, overrides, game, ("az", ALGO), resumed)


def resumed(config: AzConfig, directory: Path) -> AzRun:
    """The run of ``directory``'s ``last.zip``: weights, optimizer, buffer, counters, RNGs,
    the learner on ``config.device`` (resolved: ``resolve_device``).

    Raises:
        ValueError: no checkpoint yet, or a GPU torch does not see.
        CheckpointError: a checkpoint without what ``--resume`` needs.
    """
    config.device = resolve_device(config.device)
    last = last_checkpoint(directory)
    net, _ = load_network(last, config.game)
    optimizer = optimizer_for(config, net)
    load_state(optimizer, read_tensors(last, OPTIMIZER_ENTRY), last, OPTIMIZER_ENTRY)
    state = check_train_state(read_entry(last, TRAIN_STATE_ENTRY), TRAIN_STATE_KEYS, last)
    buffer = ReplayBuffer(net.arch, config.buffer_size)
    buffer.load_state_dict(read_tensors(last, BUFFER_ENTRY), last)
    rng = np.random.default_rng()
    rng.bit_generator.state = state["numpy"]
    set_torch_rng(state["torch"])
    return AzRun(config, directory, net, optimizer, buffer, rng, state["iteration"],
                 state["positions"], state["games"], state["elapsed"], state["history"])


class Logs:
    """The run's per-iteration CSV (``progress.csv``) and TensorBoard scalars."""

    def __init__(self, directory: Path) -> None:
        self.csv = directory / PROGRESS_FILE
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:  # tensorboard missing: the CSV still has everything
            self.writer = None
        else:
            self.writer = SummaryWriter(str(directory / TENSORBOARD_DIR))

    def write(self, step: int, values: dict[str, float], prefix: str = "train") -> None:
        """Log ``values`` at ``step`` (positions seen)."""
        if self.writer is not None:
            for name, value in values.items():
                if value is not None:
                    self.writer.add_scalar(f"{prefix}/{name}", value, step)
            self.writer.flush()

    def row(self, values: dict[str, Any]) -> None:
        """Append one iteration's row to ``progress.csv``."""
        new = not self.csv.is_file()
        with self.csv.open("a", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=list(values))
            if new:
                writer.writeheader()
            writer.writerow(values)

    def close(self) -> None:
        """Flush and close TensorBoard's writer."""
        if self.writer is not None:
            self.writer.close()


# -- the training loop -----------------------------------------------------------------------

def iterate(run: AzRun, workers: Shards, symmetries: Symmetries, logs: Logs) -> dict[str, Any]:
    """One iteration: self-play (on ``workers``), then training; returns its progress row."""
    samples, stats, run.rng = play_iteration(workers, run.config, run.net, run.iteration,
                                             run.rng)
    run.buffer.add(samples)
    start = time.perf_counter()
    rate = learning_rate_at(run.config, run.iteration)
    set_learning_rate(run.optimizer, rate)
    metrics = train_steps(run.config, run.net, run.optimizer, run.buffer, symmetries, run.rng)
    train_seconds = time.perf_counter() - start
    run.iteration += 1
    run.positions += stats.positions
    run.games += stats.games
    row = {"iteration": run.iteration, "positions": run.positions, "games": run.games,
           "selfplay_seconds": round(stats.seconds, 2), "train_seconds": round(train_seconds, 2),
           "games_per_s": stats.games / stats.seconds,
           "positions_per_s": stats.positions / stats.seconds,
           "simulations_per_s": stats.simulations / stats.seconds,
           "network_share": stats.network_seconds / stats.seconds, **metrics}
    logs.write(run.positions, {"learning_rate": rate,
                               **{key: float(value) for key, value in row.items()}})
    logs.row(row)
    return row


def out_of_time(run: AzRun, started: float, elapsed_before: float) -> bool:
    """True once the run's wall-clock budget (``minutes``) is spent."""
    minutes = run.config.minutes
    spent = elapsed_before + time.perf_counter() - started
    return minutes is not None and spent >= minutes * SECONDS_PER_MINUTE


def phase(run: AzRun) -> str:
    """The line that says what the run does next: its iterations, self-play, training steps
    and evaluations."""
    config = run.config
    budget = f" (or {config.minutes:g} minutes)" if config.minutes is not None else ""
    first, last = run.iteration + 1, config.iterations
    return (f"iteration{f's {first} to' if first < last else ''} {last}{budget}: "
            f"{config.games_per_iteration} self-play games each at {config.simulations} "
            f"simulations a move, then {config.train_steps} gradient steps of "
            f"{config.batch_size} positions; an evaluation every {config.eval_every} "
            f"iterations ({config.eval_positions} positions, {config.eval_games} games "
            f"against each of {', '.join(config.eval_opponents)})")


def train(run: AzRun, progress: bool = True, backend: Backend | None = None) -> AzRun:
    """Train ``run`` up to ``config.iterations`` (or its ``minutes``), checkpointing every
    iteration and evaluating every ``eval_every`` and at the end; a line on stdout says what
    it does as it starts (``phase``). Self-play runs on ``config.workers`` workers of
    ``backend`` (default: local processes; ``train.az.workers``)."""
    if run.iteration < run.config.iterations:
        print(phase(run), flush=True)
    config, record = run.config, game_record(run.config.game)
    torch.set_num_threads(config.torch_threads)
    arch = run.net.arch
    symmetries = Symmetries(arch.rows, arch.cols, arch.n_actions)
    positions = quality_subset(record, config.eval_positions)
    logs = Logs(run.directory)
    workers = start_workers(config, backend or Backend())
    started, elapsed_before = time.perf_counter(), run.elapsed
    bar = progress_bar(config.iterations, unit="iter", enabled=progress)
    if bar is not None:
        bar.update(run.iteration)
    try:
        while run.iteration < config.iterations and not out_of_time(run, started,
                                                                   elapsed_before):
            row = iterate(run, workers, symmetries, logs)
            run.elapsed = elapsed_before + time.perf_counter() - started
            if run.iteration % config.eval_every == 0:
                evaluation(run, record, positions, logs)
            run.save()
            if bar is not None:
                bar.update(1)
                bar.set_postfix(games_s=f"{row['games_per_s']:.1f}", loss=f"{row['loss']:.3f}")
        if not run.history or run.history[-1]["step"] != run.positions:
            evaluation(run, record, positions, logs)
            run.save()
    finally:
        workers.close()
        logs.close()
        if bar is not None:
            bar.close()
    return run


# -- in-run evaluation -----------------------------------------------------------------------

def evaluation(run: AzRun, record: Game, positions: list[Position], logs: Logs) -> None:
    """Evaluate the learner, log and keep the record (``eval.json``) and an
    ``iter_N.zip`` of its network."""
    result = evaluate(record, run.config, run.net, positions, run.positions, run.elapsed)
    result["iteration"] = run.iteration
    run.history.append(result)
    write_json(run.directory / EVAL_FILE, run.history)
    logs.write(run.positions, {f"{key}_vs_{spec}": rate for key in ("win_rate", "loss_rate")
                               for spec, rate in result[f"{key}s"].items()}, "eval")
    logs.write(run.positions, {key: value for key, value in result["quality"].items()
                               if key != "positions"}, "eval/quality")
    write_checkpoint(checkpoint_file(run.directory, f"iter_{run.iteration}.zip"), run.net,
                     run.record())
    print(f"[iteration {run.iteration:>4}, {run.positions:>8} positions, "
          f"{run.elapsed:6.0f} s] {summary(result)}", flush=True)


def quality_subset(record: Game, count: int) -> list[Position]:
    """A fixed subset of ``count`` of the game's labelled positions (all if fewer), the same
    for every run: drawn with ``QUALITY_SUBSET_SEED``."""
    positions = load_positions(default_positions(record), record)
    if count >= len(positions):
        return positions
    chosen = np.random.default_rng(QUALITY_SUBSET_SEED).choice(len(positions), count,
                                                               replace=False)
    return [positions[i] for i in sorted(chosen)]


def evaluate(record: Game, config: AzConfig, net: AzNet, positions: list[Position],
             step: int, seconds: float) -> dict[str, Any]:
    """The evaluation record of the current network (``eval.json``): the quality of the
    evaluated player on ``positions`` and its win and loss rates against the ladder."""
    board = az_record(record.name, config.env_kwargs, config.architecture())
    player = AzAgent(Evaluator(net, config.precision), board, config.eval_simulations,
                     name=f"az:{config.eval_simulations}")
    quality = judge(record.name, player, positions, seed=config.seed, built=player)
    wins, losses = {}, {}
    for spec in config.eval_opponents:
        result = play_match(record.name, player, spec, config.eval_games, seed=config.seed,
                            alternate=not config.eval_openings, config=config.env_kwargs,
                            openings=str(config.eval_openings) if config.eval_openings
                            else None)
        wins[spec], losses[spec] = result.a_win_rate, result.b_wins / result.games
    net.eval()
    return {"step": step, "seconds": round(seconds, 1), "win_rates": wins,
            "loss_rates": losses, "quality": {
                "positions": quality.positions,
                "kept_rate": quality.kept / quality.decisive if quality.decisive else None,
                "best_rate": quality.best / quality.contested if quality.contested else None}}


def summary(record: dict[str, Any]) -> str:
    """One line of an evaluation record."""
    quality = record["quality"]
    shares = ", ".join(f"{name} {quality[key]:.1%}" for name, key in
                       (("kept", "kept_rate"), ("best", "best_rate"))
                       if quality[key] is not None)
    ladder = ", ".join(f"{spec} {record['win_rates'][spec]:.0%}/"
                       f"{record['loss_rates'][spec]:.0%}" for spec in record["win_rates"])
    return f"quality {shares}; win/loss {ladder}"
