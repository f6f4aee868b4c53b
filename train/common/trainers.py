"""The command line every self-play trainer shares (``boardgym az``, ``boardgym td``).

A trainer command takes a ``GAME`` (or ``--resume RUN_DIR``), ``--config FILE``, ``--set
KEY=VALUE`` overrides, ``--seed``, its length (``--iterations`` or ``--games``),
``--minutes``, ``--runs-dir`` and ``--no-progress``; it prints the run folder, trains, and
ends with the line naming the file to play. A bad option is one line (exit code 2), and a
failed start leaves no run folder.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boardgym.train.common.backends import BACKENDS, Backend, add_address_option, connect
from boardgym.train.common.commands import (
    MAX_WORKERS,
    CommandParser,
    game_names,
    int_at_least,
)
from boardgym.train.common.config import SEED_LIMIT, RunConfig, load_config, parse_sets
from boardgym.train.common.devices import add_device_option
from boardgym.train.common.runs import RUNS_DIR, record_command, removed_on_error


@dataclass(frozen=True)
class Trainer:
    """What a trainer command is made of.

    Attributes:
        name: the subcommand (``"az"``), as ``command.txt`` records it.
        doc: the command's ``--help`` text.
        length: the option and config key of the run's length (``"iterations"``).
        length_help: its help.
        unit: what the loop checks the clock after (``"iteration"``).
        kind: the trainer's config class.
        new_run: a fresh run of a config in a runs folder.
        open_run: the run of a folder resumed (``overrides``, the game named, if any).
        train: trains a run (``progress``: whether to show a progress bar).
        done: the last line, naming the file to play.
        check: checks a new run's config before its folder is made (None: nothing more).
        workers: the command takes ``--workers K --backend local|ray --address ADDR``
            (the config key ``workers``; ``train`` gets the ``backend``).
        device: the command takes ``--device`` (the config key ``device``).
    """

    name: str
    doc: str
    length: str
    length_help: str
    unit: str
    kind: type[RunConfig]
    new_run: Callable[[Any, Path], Any]
    open_run: Callable[[Path, dict[str, Any], str | None], Any]
    train: Callable[..., Any]
    done: Callable[[Any], str]
    check: Callable[[Any], object] | None = None
    workers: bool = False
    device: bool = False

    def parser(self) -> argparse.ArgumentParser:
        """The command's argument parser."""
        parser = CommandParser(prog=f"boardgym {self.name}", description=self.doc,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("game", nargs="?",
                            help=f"the game: {game_names()} (not needed with --resume)")
        parser.add_argument("--config", type=Path, help="YAML hyperparameter file (default: "
                            f"train/hyperparams/{self.kind.HYPERPARAMS.format(game='GAME')})")
        parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                            help="override one config key, e.g. --set seed=1")
        parser.add_argument("--seed", type=int, help=f"seed of everything, below {SEED_LIMIT}")
        parser.add_argument(f"--{self.length}", type=int, help=self.length_help)
        parser.add_argument("--minutes", type=float,
                            help=f"wall-clock budget: stop after the {self.unit} that "
                                 "passes it")
        parser.add_argument("--runs-dir", type=Path, default=RUNS_DIR,
                            help="where run folders go")
        parser.add_argument("--resume", type=Path, metavar="RUN_DIR",
                            help="continue the run in RUN_DIR from its last checkpoint")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        if self.workers:
            add_worker_options(parser)
        if self.device:
            add_device_option(parser)
        return parser

    def prepare(self, args: argparse.Namespace) -> tuple[Any, bool]:
        """The run the command line asks for and whether it is new.

        Raises:
            ValueError, OSError: bad options, config or run folder (the message names the
                fix).
        """
        overrides = parse_sets(args.set, self.kind.keys())
        overrides.update({key: value for key, value in (
            ("seed", args.seed), (self.length, getattr(args, self.length)),
            ("minutes", args.minutes), ("workers", getattr(args, "workers", None)),
            ("device", getattr(args, "device", None))) if value is not None})
        if self.workers:  # --workers checked for the backend before any folder is touched
            Backend(args.backend, args.workers, args.address)
        if args.resume is not None:
            if args.config is not None:
                raise ValueError("--config cannot change a resumed run; drop it")
            return self.open_run(args.resume, overrides, args.game), False
        if args.game is None:
            raise ValueError("give a GAME (reversi, four_in_a_row, tictactoe) or --resume "
                             "RUN_DIR")
        config = load_config(self.kind, args.game, args.config, overrides)
        if self.workers:
            Backend(args.backend, config.workers, args.address)
        if self.check is not None:
            self.check(config)
        return self.new_run(config, args.runs_dir), True

    def main(self, argv: Sequence[str] | None = None) -> int:
        """Run the command; returns the exit code."""
        parser = self.parser()
        arguments = list(sys.argv[1:] if argv is None else argv)
        args = parser.parse_args(arguments)
        options: dict[str, Any] = {}
        try:
            if self.workers:
                options["backend"] = Backend(args.backend, None, args.address)
                connect(options["backend"])
            run, fresh = self.prepare(args)
        except (ValueError, OSError) as error:
            parser.error(str(error))
        with removed_on_error(run, fresh):
            record_command(run.directory, arguments, self.name)
            print(f"run folder: {run.directory}", flush=True)
            self.train(run, progress=not args.no_progress, **options)
        print(self.done(run))
        return 0


def add_worker_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--workers K``, ``--backend local|ray`` and ``--address ADDR``: where self-play
    runs."""
    parser.add_argument("--workers", type=int_at_least(1, MAX_WORKERS, "MAX_WORKERS"),
                        help="self-play workers (the config key workers, default 1): local "
                             "processes (at most this machine's CPU count) or Ray actors; "
                             "the games depend on the seed and this count, not on the "
                             "backend")
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help='where self-play runs: "local" processes (default) or "ray" '
                             "actors (a local Ray, or the cluster of --address / "
                             'RAY_ADDRESS; pip install -e ".[ray]")')
    add_address_option(parser)
