"""The TD n-tuple run: its folder, resuming, the self-play loop, evaluations and checkpoints.

The loop plays chunks of ``chunk_games`` games, each one compiled call of the game's
self-play (``train.td.kernels``) with the step size and exploration of the schedule at that
point: ``alpha`` falls exponentially to ``alpha_final`` and ``epsilon`` linearly to
``epsilon_final`` over the run (over ``games``, or the ``minutes`` when they end it
first). Chunk ``k`` seeds its generator from ``(seed, k)``, so a run is a function of its
config, and ``--resume`` continues it exactly. Every ``eval_every`` games (and at the end)
an evaluation (``train.td.evaluation``) is logged and ranked; ``best.zip`` keeps the best.

A run folder (``train.common.runs``) ``runs/{game}__td__{seed}__{time}/`` holds
``config.yaml``, ``command.txt``, ``checkpoints/last.zip`` (every ``checkpoint_every`` games,
at each evaluation and at the end, atomically: the network, the TCL accumulators and the
counters, all ``--resume`` needs), ``checkpoints/model.zip`` (the network alone: play it as
``ntuple:0@PATH``), ``checkpoints/best.zip`` with ``best.json``, ``progress.csv`` (one row a
chunk: games, plies, updates, games/s, updates/s, alpha, epsilon, mean |error|) and
``eval.json`` (``boardgym plot`` draws it).
"""

from __future__ import annotations

import csv
import importlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from boardgym.agents.checkpoint import CheckpointError
from boardgym.agents.ntuple import checkpoint as files
from boardgym.agents.ntuple.model import NTupleNet
from boardgym.agents.ntuple.network import NO_TCL, TCL, TCL_EXP, horizon, new_trace
from boardgym.train.common.commands import progress_bar
from boardgym.train.common.runs import (
    EVAL_FILE,
    check_train_state,
    checkpoint_file,
    last_checkpoint,
    new_run_folder,
    open_run_folder,
    write_json,
)
from boardgym.train.common.selection import Selection
from boardgym.train.quality.agreement import Position
from boardgym.train.td.config import TdConfig
from boardgym.train.td.evaluation import (
    evaluate,
    evaluation_positions,
    new_selection,
    selection_key,
    summary,
)
from boardgym.train.tools.plot import BEST_FILE

ALGO = "td"
"""The run folders' algorithm tag."""
MODEL, BEST = "model.zip", "best.zip"
PROGRESS_FILE = "progress.csv"
SECONDS_PER_MINUTE = 60
MODES = {"none": NO_TCL, "tcl": TCL, "tcl_exp": TCL_EXP}
TRAIN_STATE_KEYS = ("games", "plies", "updates", "chunk", "elapsed", "history", "selection",
                    "last_eval", "last_save")
"""The keys of every ``last.zip``'s training state (``TdRun.train_state``)."""


@dataclass
class TdRun:
    """A training run: its folder, config, network, TCL accumulators and counters.

    Attributes:
        config: the resolved hyperparameters.
        directory: the run folder.
        net: the network being trained (its ``games`` kept in step).
        trainer: the TCL accumulators ``(N, A)`` (empty arrays without TCL).
        games, plies, updates, chunk: done so far.
        elapsed: training wall time so far (seconds, resumes included).
        history: the evaluation records.
        selection: which evaluation ``best.zip`` holds.
        last_eval, last_save: the games at the last evaluation and the last ``last.zip``.
    """

    config: TdConfig
    directory: Path
    net: NTupleNet
    trainer: tuple[np.ndarray, np.ndarray]
    games: int = 0
    plies: int = 0
    updates: int = 0
    chunk: int = 0
    elapsed: float = 0.0
    history: list[dict[str, Any]] = field(default_factory=list)
    selection: Selection = field(default_factory=Selection)
    last_eval: int = 0
    last_save: int = 0

    @property
    def last(self) -> Path:
        """The latest checkpoint, with everything ``--resume`` needs."""
        return checkpoint_file(self.directory)

    @property
    def model(self) -> Path:
        """The latest network alone: the file to ship and play."""
        return checkpoint_file(self.directory, MODEL)

    def train_state(self) -> dict[str, Any]:
        """What ``--resume`` restores besides the weights and accumulators: JSON data."""
        return {"games": self.games, "plies": self.plies, "updates": self.updates,
                "chunk": self.chunk, "elapsed": self.elapsed, "history": self.history,
                "selection": self.selection.to_dict(), "last_eval": self.last_eval,
                "last_save": self.last_save}

    def save(self) -> None:
        """Write ``last.zip`` (everything) and ``model.zip`` (the network) atomically."""
        self.net.games = self.games
        extra: dict[str, str | bytes] = {
            name: files.array_bytes(array)
            for name, array in zip(files.TRAINER_ENTRIES, self.trainer, strict=True)}
        extra[files.TRAIN_STATE_ENTRY] = json.dumps(self.train_state())
        files.save(self.last, self.net, extra)
        files.save(self.model, self.net)
        self.last_save = self.games


def new_trainer(config: TdConfig, net: NTupleNet) -> tuple[np.ndarray, np.ndarray]:
    """Zero TCL accumulators for ``net`` (empty arrays when ``tcl: none``)."""
    size = net.weights.shape[0] if config.tcl != "none" else 0
    return np.zeros(size, dtype=np.float32), np.zeros(size, dtype=np.float32)


def new_run(config: TdConfig, runs_dir: Path) -> TdRun:
    """A fresh run and its folder (with ``config.yaml``).

    Raises:
        ValueError: the folder cannot be made (the message names the path).
    """
    net = config.network()
    directory = new_run_folder(config, runs_dir, ALGO)
    return TdRun(config, directory, net, new_trainer(config, net),
                 selection=new_selection(config))


def open_run(directory: Path, overrides: dict[str, Any], game: str | None) -> TdRun:
    """The run in ``directory`` as its last checkpoint left it; ``overrides`` may change
    only ``TdConfig.RESUMABLE_KEYS``.

    Raises:
        ValueError: not a td run folder, no checkpoint, another game, a fixed key changed.
        CheckpointError: a checkpoint that cannot be resumed.
    """
    return open_run_folder(TdConfig, directory, overrides, game, ("td", ALGO), resumed)


def resumed(config: TdConfig, directory: Path) -> TdRun:
    """The run of ``directory``'s ``last.zip``: weights, accumulators and counters.

    Raises:
        ValueError: no checkpoint yet.
        CheckpointError: a checkpoint without what ``--resume`` needs.
    """
    evaluation_positions(config)  # fails before config.yaml is rewritten
    last = last_checkpoint(directory)
    net = files.load(last, config.game)
    state = check_train_state(files.read_train_state(last), TRAIN_STATE_KEYS, last)
    trainer = new_trainer(config, net)
    if trainer[0].size:
        trainer = _read_trainer(last, trainer[0].size)
    return TdRun(config, directory, net, trainer, state["games"], state["plies"],
                 state["updates"], state["chunk"], state["elapsed"], state["history"],
                 Selection.from_dict(state["selection"]), state["last_eval"],
                 state["last_save"])


def _read_trainer(last: Path, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The TCL accumulators of ``last``, checked to fit a network of ``size`` weights.

    Raises:
        CheckpointError: missing, damaged or of another size.
    """
    numerator, absolute = (files.read_array(last, name) for name in files.TRAINER_ENTRIES)
    if numerator.shape != (size,) or absolute.shape != (size,):
        raise CheckpointError(f"{last}: its TCL accumulators do not fit the network; it "
                              "cannot be resumed (start a new run)")
    return numerator, absolute


# -- the loop --------------------------------------------------------------------------------

def kernels(game: str) -> ModuleType:
    """The game's compiled self-play (``train.td.kernels.<game>``)."""
    return importlib.import_module(f"boardgym.train.td.kernels.{game}")


def done_fraction(run: TdRun, spent: float) -> float:
    """How much of the run is done: the larger of its games' and its minutes' shares."""
    share = run.games / run.config.games
    if run.config.minutes is not None:
        share = max(share, spent / (run.config.minutes * SECONDS_PER_MINUTE))
    return min(share, 1.0)


def schedule(config: TdConfig, fraction: float) -> tuple[float, float]:
    """``(alpha, epsilon)`` when ``fraction`` of the run is done."""
    alpha = config.alpha * (config.alpha_final / config.alpha) ** fraction
    return alpha, config.epsilon + (config.epsilon_final - config.epsilon) * fraction


def chunk_seed(seed: int, chunk: int) -> int:
    """The seed of chunk ``chunk``'s generator (numba's 32-bit seed)."""
    return int(np.random.SeedSequence([seed, chunk]).generate_state(1)[0])


def play_chunk(run: TdRun, module: ModuleType, trace: tuple[np.ndarray, ...],
               spent: float) -> dict[str, Any]:
    """One chunk of self-play; returns its ``progress.csv`` row."""
    config = run.config
    games = min(config.chunk_games, config.games - run.games)
    alpha, epsilon = schedule(config, done_fraction(run, spent))
    low, high = config.opening_plies or (0, 0)
    settings = (games, chunk_seed(config.seed, run.chunk), alpha, config.trace_decay,
                epsilon, low, high, MODES[config.tcl])
    start = time.perf_counter()
    plies, updates, errors = module.play(run.net.arrays, run.trainer, trace,
                                         config.env_kwargs, settings)
    seconds = max(time.perf_counter() - start, 1e-9)
    run.games, run.plies, run.updates = run.games + games, run.plies + plies, \
        run.updates + updates
    run.chunk += 1
    return {"games": run.games, "plies": run.plies, "updates": run.updates,
            "games_per_s": round(games / seconds, 1),
            "updates_per_s": round(updates / seconds, 1), "alpha": round(alpha, 6),
            "epsilon": round(epsilon, 6),
            "mean_abs_error": round(errors / updates, 6) if updates else None}


def out_of_time(run: TdRun, spent: float) -> bool:
    """True once the run's wall-clock budget (``minutes``) is spent."""
    return run.config.minutes is not None and spent >= run.config.minutes * SECONDS_PER_MINUTE


def stalled(run: TdRun, spent: float) -> bool:
    """True once ``patience`` evaluations passed without a new best, counted after
    ``min_fraction`` of the run."""
    config = run.config
    return bool(config.patience) and run.selection.stalled >= config.patience \
        and done_fraction(run, spent) >= config.min_fraction


def phase(run: TdRun) -> str:
    """The line that says what the run does next."""
    config = run.config
    budget = f" (or {config.minutes:g} minutes)" if config.minutes is not None else ""
    ladder = ", ".join(config.eval_opponents) or "no ladder"
    return (f"self-play games {run.games + 1} to {config.games}{budget}: layout "
            f"{config.layout}, {run.net.images} lookups a position, {run.net.weights.size:,} "
            f"weights; an evaluation every {config.eval_every} games ({config.eval_positions} "
            f"selection positions, {config.eval_games} games against each of {ladder})")


def train(run: TdRun, progress: bool = True) -> TdRun:
    """Train ``run`` up to ``config.games`` (or its ``minutes``, or until ``patience``),
    writing ``last.zip`` every ``checkpoint_every`` games and evaluating every
    ``eval_every`` and at the end."""
    config = run.config
    if run.games < config.games:
        print(phase(run), flush=True)
    module = kernels(config.game)
    trace = new_trace(horizon(config.trace_decay, config.trace_cut), run.net.images)
    positions = evaluation_positions(config)
    started, before = time.perf_counter(), run.elapsed
    bar = progress_bar(config.games, unit="game", enabled=progress)
    if bar is not None:
        bar.update(run.games)
    try:
        while run.games < config.games and not out_of_time(run, run.elapsed) \
                and not stalled(run, run.elapsed):
            row = play_chunk(run, module, trace, run.elapsed)
            run.elapsed = before + time.perf_counter() - started
            _log(run.directory, row)
            if run.games - run.last_eval >= config.eval_every:
                evaluation(run, positions)
            if run.games - run.last_save >= config.checkpoint_every or \
                    run.last_eval == run.games:
                run.save()
            if bar is not None:
                bar.update(row["games"] - bar.n)
                bar.set_postfix(games_s=f"{row['games_per_s']:.0f}")
        if not run.history or run.history[-1]["step"] != run.games:
            evaluation(run, positions)
        run.save()
    finally:
        if bar is not None:
            bar.close()
    return run


def _log(directory: Path, row: dict[str, Any]) -> None:
    path = directory / PROGRESS_FILE
    new = not path.is_file()
    with path.open("a", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)


def evaluation(run: TdRun, positions: list[Position]) -> None:
    """Evaluate the network, keep the record (``eval.json``) and, for a new best,
    ``best.zip`` and ``best.json``."""
    record = evaluate(run.config, run.net, positions, run.games, run.elapsed)
    run.history.append(record)
    run.last_eval = run.games
    write_json(run.directory / EVAL_FILE, run.history)
    best = run.selection.offer(selection_key(run.config, record), run.games)
    if best:
        run.net.games = run.games
        files.save(checkpoint_file(run.directory, BEST), run.net)
        write_json(run.directory / BEST_FILE, run.selection.to_dict())
    print(f"[{run.games:>10} games, {run.elapsed:6.0f} s] {summary(record)}"
          f"{' (best)' if best else ''}", flush=True)
