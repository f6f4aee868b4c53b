"""Hyperparameter sweeps with Ray Tune (``boardgym tune GAME --samples N``).

Each trial is a whole ``boardgym train`` run (``train.ppo.run_command``) with the sampled
values set on its command line; after each of its evaluations it reports to Tune:

- ``step``: the learner's timesteps;
- ``win_rate``, ``loss_rate``: the means over the eval opponents, and per opponent
  ``win_rate/SPEC``;
- ``score``: the mean of (win rate - loss rate), the number ``best.zip`` is chosen by;
- with ``eval_quality`` on (the run judges its play on labelled positions): ``quality``,
  the quality score ``best.zip`` is then chosen by, and ``quality/KEY`` for each number of
  the eval record's ``quality`` (``kept_rate``, ``best_rate``, ``positions``, ``score``).

The search space is declared in the hyperparameter YAML under ``search_space:``, one entry
per config key, each a one-key mapping from a distribution to its arguments (Ray Tune's
search-space functions of the same names)::

    search_space:
      learning_rate: {loguniform: [1.0e-4, 1.0e-3]}   # low, high
      clip_range: {uniform: [0.1, 0.3]}               # low, high
      gamma: {quniform: [0.9, 0.99, 0.01]}            # low, high, step
      n_epochs: {randint: [4, 11]}                    # low, high (excluded)
      n_steps: {choice: [16, 32, 64]}                 # one value drawn per trial
      net_arch: {grid: [[64], [128, 128]]}            # every value, times --samples

Distributions: ``choice`` and ``grid`` (a list of values); ``uniform``, ``loguniform``,
``randint``, ``lograndint``, ``randn`` (two numbers: low and high, or mean and sd for
``randn``); ``quniform``, ``qloguniform``, ``qrandint``, ``qlograndint`` (three: low, high
and the step). Every other key of the YAML is the base config of every trial, as with
``boardgym train --config``; ``--set`` fixes keys for every trial.

The sweep folder ``runs/{game}__tune__{seed}__{time}/`` keeps ``base.yaml`` (the trials'
``--config``), ``search_space.yaml``, ``command.txt``, ``trials/ID/`` (each trial's run
folder), ``ray/`` (Tune's own records), and at the end ``results.csv`` and ``results.md``
(one row per trial: its values and last report) and ``best_config.yaml`` (the whole config
of the best trial) with ``best.json`` (its trial, run folder and metrics). A command that
fails before the first trial leaves no folder behind.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from boardgym.envs.games import canonical_name
from boardgym.train.common.backends import Backend, connect, require_ray
from boardgym.train.common.commands import game_parser, int_at_least, one_line
from boardgym.train.common.config import read_yaml
from boardgym.train.common.runs import (
    CONFIG_FILE,
    RUNS_DIR,
    record_command,
    run_folder_name,
    write_atomic,
)
from boardgym.train.ppo.config import TrainConfig, load_config, parse_overrides

SEARCH_KEY = "search_space"
"""The YAML key holding the search space."""
DISTRIBUTIONS = {"choice": 0, "grid": 0, "uniform": 2, "loguniform": 2, "randint": 2,
                 "lograndint": 2, "randn": 2, "quniform": 3, "qloguniform": 3, "qrandint": 3,
                 "qlograndint": 3}
"""Distribution name -> how many numbers it takes (0: one list of values)."""
TUNE_NAMES = {"grid": "grid_search"}
"""Distributions whose Ray Tune function has another name."""
METRICS = ("win_rate", "score", "quality")
QUALITY_SCORE = "score"
"""The key of an eval record's quality mapping that ``quality`` reports."""
SCHEDULERS = ("fifo", "asha")
TRIAL_CPUS = 1
ALGO_TAG = "tune"
BASE_FILE, SPACE_FILE = "base.yaml", "search_space.yaml"
TRIALS_DIR, TUNE_DIR = "trials", "ray"
RESULTS_CSV, RESULTS_MD = "results.csv", "results.md"
BEST_CONFIG, BEST_JSON = "best_config.yaml", "best.json"
METRIC_DIGITS = 4
ERROR_CHARS = 300
"""How much of a failed trial's error its row keeps (the whole error: Tune's folder)."""


# -- the search space ------------------------------------------------------------------------


def config_keys() -> list[str]:
    """The keys a search space may sample: every ``TrainConfig`` key but ``game``."""
    return [field.name for field in dataclasses.fields(TrainConfig) if field.name != "game"]


def parse_space(spec: Any) -> dict[str, Any]:
    """The Ray Tune ``param_space`` of a YAML ``search_space`` (grammar: module docstring).

    Raises:
        ValueError: not a mapping, an unknown key or distribution, or the wrong arguments
            (the message names the entry and the fix).
    """
    from ray import tune

    if not isinstance(spec, dict) or not spec:
        raise ValueError(f"{SEARCH_KEY} must map config keys to distributions, e.g. "
                         "learning_rate: {loguniform: [1.0e-4, 1.0e-3]}")
    space = {}
    for key, entry in spec.items():
        if key not in config_keys():
            raise ValueError(f"{SEARCH_KEY}: unknown config key {key!r}; valid keys: "
                             f"{', '.join(config_keys())}")
        if not isinstance(entry, dict) or len(entry) != 1 or \
                next(iter(entry)) not in DISTRIBUTIONS:
            raise ValueError(f"{SEARCH_KEY}.{key} must be one distribution "
                             f"({', '.join(DISTRIBUTIONS)}) with its arguments, e.g. "
                             f"{{choice: [a, b]}}; got {entry!r}")
        name, arguments = next(iter(entry.items()))
        name = str(name)
        space[key] = getattr(tune, TUNE_NAMES.get(name, name))(
            *_arguments(f"{SEARCH_KEY}.{key}.{name}", arguments, DISTRIBUTIONS[name]))
    return space


def _arguments(where: str, arguments: Any, count: int) -> list[Any]:
    """The positional arguments of a distribution: ``[values]`` or ``count`` numbers.

    Raises:
        ValueError: not a non-empty list, or not ``count`` numbers.
    """
    if not isinstance(arguments, list) or not arguments:
        raise ValueError(f"{where} takes a list, got {arguments!r}")
    if count == 0:
        return [arguments]
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in arguments)
    if len(arguments) != count or not numbers:
        raise ValueError(f"{where} takes {count} numbers, got {arguments!r}")
    return list(arguments)


def candidates(space: dict[str, Any]) -> list[dict[str, Any]]:
    """Values to check a space with before sweeping: every value of a ``choice`` or
    ``grid`` entry, one draw of every other."""
    checks = []
    for key, domain in space.items():
        if isinstance(domain, dict):  # grid_search
            checks += [{key: value} for value in domain["grid_search"]]
        elif hasattr(domain, "categories"):
            checks += [{key: value} for value in domain.categories]
        else:
            checks.append({key: _plain(domain.sample())})
    return checks


def _plain(value: Any) -> Any:
    """A sampled value as a plain Python value (numpy scalars become ints and floats)."""
    return value.item() if isinstance(value, np.generic) else value


# -- trials ----------------------------------------------------------------------------------


def set_items(params: dict[str, Any]) -> list[str]:
    """``--set`` items of sampled values (JSON, which the config reads as YAML)."""
    return [f"{key}={json.dumps(_plain(value))}" for key, value in params.items()]


def metrics_of(record: dict[str, Any]) -> dict[str, Any]:
    """What one evaluation of a run (an ``eval.json`` record) reports to Tune (see the
    module docstring)."""
    wins, losses = record["win_rates"], record["loss_rates"]
    metrics: dict[str, Any] = {"step": record["step"],
                               "win_rate": float(np.mean(list(wins.values()))),
                               "loss_rate": float(np.mean(list(losses.values()))),
                               "score": float(np.mean([wins[s] - losses[s] for s in wins]))}
    metrics.update({f"win_rate/{spec}": rate for spec, rate in wins.items()})
    quality = record.get("quality")
    if isinstance(quality, dict):
        metrics.update({f"quality/{key}": float(value) for key, value in quality.items()
                        if isinstance(value, (int, float))})
        if isinstance(quality.get(QUALITY_SCORE), (int, float)):
            metrics["quality"] = float(quality[QUALITY_SCORE])
    return metrics


@dataclass(frozen=True)
class Sweep:
    """What every trial shares (sent to Ray's workers).

    Attributes:
        game: canonical game name.
        folder: the sweep folder (absolute).
        fixed: ``--set`` items given for every trial.
    """

    game: str
    folder: Path
    fixed: tuple[str, ...] = ()

    def argv(self, params: dict[str, Any], runs_dir: Path) -> list[str]:
        """The ``boardgym train`` arguments of a trial with the sampled ``params``."""
        sets = [*self.fixed, *set_items(params)]
        return [self.game, "--config", str(self.folder / BASE_FILE),
                *(item for value in sets for item in ("--set", value)),
                "--runs-dir", str(runs_dir), "--no-progress"]

    def run(self, params: dict[str, Any]) -> None:
        """Run one trial (in a Tune worker): train, reporting every new evaluation."""
        from ray import tune

        from boardgym.train.ppo import trainer as ppo

        runs_dir = self.folder / TRIALS_DIR / tune.get_context().get_trial_id()
        reported: list[dict[str, Any]] = []

        def report(history: list[dict[str, Any]], directory: Path) -> None:
            for record in history[len(reported):]:
                reported.append(record)
                tune.report({**metrics_of(record), "run": str(directory)})

        run = ppo.run_command(self.argv(params, runs_dir), ppo.build_parser(), ppo.ALGO,
                              ppo.default_pool,
                              hooks=[lambda hook: report(hook.run.history,
                                                         hook.run.directory)])
        report(run.history, run.directory)


def trial(params: dict[str, Any], sweep: Sweep) -> None:
    """Tune's trainable: one trial of ``sweep`` with the sampled ``params``."""
    sweep.run(params)


# -- the command -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """A checked sweep, before its folder exists.

    Attributes:
        game: canonical game name.
        base: the trials' base config (the YAML without its search space).
        spec: the search space as written in the YAML.
        space: the Ray Tune ``param_space``.
        fixed: ``--set`` items for every trial.
        config: the base config with ``fixed`` applied.
    """

    game: str
    base: dict[str, Any]
    spec: dict[str, Any]
    space: dict[str, Any]
    fixed: tuple[str, ...]
    config: TrainConfig


def check_config(game: str, base: dict[str, Any], overrides: dict[str, Any]) -> TrainConfig:
    """The config ``boardgym train --config BASE --set ...`` would run with.

    Raises:
        ValueError: an unknown key or a bad value (the message names the fix).
    """
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / BASE_FILE
        path.write_text(yaml.safe_dump(base, sort_keys=False))
        return load_config(game, path, overrides)


def plan(game: str, path: Path | None, sets: Sequence[str]) -> Plan:
    """Read and check a sweep: its YAML, search space and fixed keys, and the config of
    every value a ``choice`` or ``grid`` may take (and one draw of the others).

    Raises:
        ValueError: unknown game, no or a bad search space, or a bad config (the message
            names the fix).
    """
    game = canonical_name(game)
    source = path or TrainConfig.default_file(game)
    base = read_yaml(source)
    spec = base.pop(SEARCH_KEY, None)
    if spec is None:
        raise ValueError(f"{source} has no {SEARCH_KEY}: add one to a copy and pass it with "
                         "--config, e.g. examples/tune_tictactoe.yaml")
    space = parse_space(spec)
    fixed = parse_overrides(list(sets))
    config = check_config(game, base, fixed)
    for values in candidates(space):
        check_config(game, base, {**fixed, **parse_overrides(set_items(values))})
    return Plan(game, base, spec, space, tuple(sets), config)


def scheduler(name: str, config: TrainConfig) -> Any:
    """Tune's trial scheduler: ``fifo`` (every trial to the end) or ``asha`` (asynchronous
    successive halving on the timesteps: trials behind at an evaluation are stopped)."""
    from ray.tune.schedulers import ASHAScheduler, FIFOScheduler

    if name == "fifo":
        return FIFOScheduler()
    return ASHAScheduler(time_attr="step", max_t=config.total_timesteps,
                         grace_period=min(config.eval_every, config.total_timesteps))


def sweep(plan_: Plan, folder: Path, samples: int, scheduler_name: str, metric: str) -> Any:
    """Run the trials of a planned sweep in ``folder``; returns Tune's ``ResultGrid``."""
    from ray import tune

    trainable = tune.with_resources(
        tune.with_parameters(trial, sweep=Sweep(plan_.game, folder.resolve(), plan_.fixed)),
        {"cpu": TRIAL_CPUS})
    tuner = tune.Tuner(
        trainable, param_space=plan_.space,
        tune_config=tune.TuneConfig(metric=metric, mode="max", num_samples=samples,
                                    scheduler=scheduler(scheduler_name, plan_.config)),
        run_config=tune.RunConfig(name=folder.name, storage_path=str((folder / TUNE_DIR)
                                                                     .resolve()),
                                  verbose=0))
    return tuner.fit()


def result_rows(results: Any) -> list[dict[str, Any]]:
    """One row per trial: its id, sampled values, last report and error (if it failed)."""
    rows = []
    for result in results:
        metrics = result.metrics or {}
        row: dict[str, Any] = {"trial": metrics.get("trial_id", Path(result.path).name)}
        row.update({key: _plain(value) for key, value in (result.config or {}).items()})
        row.update({key: metrics.get(key) for key in ("step", "win_rate", "loss_rate",
                                                      "score", "run")})
        row.update({key: value for key, value in metrics.items()
                    if key.startswith("quality")})
        row["error"] = "" if result.error is None else one_line(str(result.error))[:ERROR_CHARS]
        rows.append(row)
    return rows


def _cell(value: Any) -> str:
    return f"{value:.{METRIC_DIGITS}g}" if isinstance(value, float) else str(value)


def write_results(folder: Path, rows: list[dict[str, Any]], metric: str) -> dict[str, Any]:
    """Write ``results.csv``, ``results.md`` and, when a trial finished, the best trial's
    ``best_config.yaml`` and ``best.json``, each atomically (``results.csv`` marks a sweep
    folder that keeps its results: an interrupted write leaves none); returns the best row
    (empty if none)."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    table = io.StringIO(newline="")
    writer = csv.DictWriter(table, columns)
    writer.writeheader()
    writer.writerows(rows)
    ranked = sorted((row for row in rows if row.get(metric) is not None),
                    key=lambda row: -row[metric])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(key, "")) for key in columns) + " |"
              for row in ranked + [row for row in rows if row not in ranked]]
    write_atomic(folder / RESULTS_MD, f"Trials, best {metric} first:\n\n" + "\n".join(lines)
                 + "\n")
    if ranked:
        write_atomic(folder / BEST_CONFIG, (Path(ranked[0]["run"]) / CONFIG_FILE).read_text())
        write_atomic(folder / BEST_JSON, json.dumps(ranked[0], indent=1) + "\n")
    write_atomic(folder / RESULTS_CSV, table.getvalue())
    return ranked[0] if ranked else {}


def build_parser() -> argparse.ArgumentParser:
    """The ``boardgym tune`` argument parser."""
    parser = game_parser(prog="boardgym tune", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int_at_least(1), required=True,
                        help="trials drawn from the search space (times each grid value)")
    parser.add_argument("--scheduler", choices=SCHEDULERS, default="fifo",
                        help="fifo: every trial to the end (default); asha: stop trials "
                             "that fall behind at an evaluation")
    parser.add_argument("--config", type=Path,
                        help=f"hyperparameter YAML with a {SEARCH_KEY} (default: "
                             "train/hyperparams/GAME.yaml)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="fix one config key for every trial, e.g. --set "
                             "total_timesteps=50000")
    parser.add_argument("--metric", choices=METRICS, default=METRICS[0],
                        help="what the best trial maximises at its last evaluation: "
                             "win_rate (default), score (win rate - loss rate) or quality "
                             "(needs eval_quality in the config)")
    parser.add_argument("--runs-dir", type=Path, default=RUNS_DIR,
                        help="where the sweep folder goes (shared storage on a cluster)")
    parser.add_argument("--address", metavar="ADDR",
                        help="the Ray cluster to join (default: RAY_ADDRESS, else a local Ray)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym tune GAME --samples N [--scheduler fifo|asha] [--config YAML]
    [--set KEY=VALUE]... [--metric win_rate|score] [--runs-dir DIR] [--address ADDR]``.

    Returns:
        0 when the sweep ran (a usage error exits with 2 and one line on stderr).
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(args_list)
    try:
        require_ray()
        checked = plan(args.game, args.config, args.set)
        if args.metric == "quality" and not checked.config.eval_quality:
            raise ValueError("--metric quality needs the runs to judge their play: set "
                             "eval_quality (e.g. --set eval_quality=200)")
        connect(Backend("ray", address=args.address))
        folder = args.runs_dir / run_folder_name(checked.game, ALGO_TAG, checked.config.seed)
        folder.mkdir(parents=True)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    try:
        (folder / BASE_FILE).write_text(yaml.safe_dump(checked.base, sort_keys=False))
        (folder / SPACE_FILE).write_text(yaml.safe_dump({SEARCH_KEY: checked.spec},
                                                        sort_keys=False))
        record_command(folder, args_list, "tune")
        print(f"sweep folder: {folder}", flush=True)
        rows = result_rows(sweep(checked, folder, args.samples, args.scheduler, args.metric))
        best = write_results(folder, rows, args.metric)
    except BaseException:
        if not (folder / RESULTS_CSV).is_file():
            shutil.rmtree(folder, ignore_errors=True)
        raise
    print((folder / RESULTS_MD).read_text())
    if best:
        print(f"best trial {best['trial']}: {args.metric} {best[args.metric]:.3f}; its config: "
              f"{folder / BEST_CONFIG}, its run: {best['run']}")
    else:
        print(f"no trial reported an evaluation; see {folder / RESULTS_MD}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
