"""TD learning of an n-tuple network by self-play (``boardgym td GAME``).

An n-tuple network values an afterstate (the position after a move, for the side that
made it) as ``tanh`` of a sum of lookup tables, each indexed by the contents of a small
group of cells and shared over the board's symmetries (``agents.ntuple``). Both sides play
the network's best afterstate (or, with chance ``epsilon``, a random move), and after each
move the previous afterstate's value moves toward the new one's, the last toward the
game's result: TD(lambda) with the traces of the last few afterstates, optionally with a
step size per weight (TCL). A lookup costs nanoseconds, so one CPU core plays thousands of
games a second.

Every ``eval_every`` games (and at the end) the network's player (``ntuple:0``) is judged on
the selection part of the game's labelled positions and plays the ladder
``eval_opponents`` and the noisy ladder (``eval_noisy_opponents`` with
``eval_random_moves``); ``best.zip`` keeps the best evaluation (``selection``).

A run folder ``runs/{game}__td__{seed}__{time}/`` holds ``config.yaml``, ``command.txt``,
``checkpoints/last.zip`` (what ``--resume RUN_DIR`` needs), ``checkpoints/model.zip`` (the
network: play it as ``ntuple:0@PATH`` or search it as ``ntuple:4@PATH``),
``checkpoints/best.zip`` with ``best.json``, ``progress.csv`` and ``eval.json`` (``boardgym
plot``). ``--minutes M`` stops after the chunk that passes M minutes of training.

Examples::

    boardgym td tictactoe --games 100000
    boardgym td reversi --minutes 60 --seed 0
    boardgym td four_in_a_row --set trace_decay=0.5 --set tcl=tcl_exp
    boardgym td --resume runs/reversi__td__0__20250101-120000 --minutes 90
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from boardgym.train.common.commands import CommandParser, game_names
from boardgym.train.common.config import SEED_LIMIT, load_config, parse_sets
from boardgym.train.common.runs import RUNS_DIR, record_command, removed_on_error
from boardgym.train.td.config import TdConfig
from boardgym.train.td.evaluation import evaluation_positions
from boardgym.train.td.run import ALGO, TdRun, new_run, open_run, train


def build_parser() -> argparse.ArgumentParser:
    """The ``boardgym td`` argument parser."""
    parser = CommandParser(prog="boardgym td", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game", nargs="?",
                        help=f"the game: {game_names()} (not needed with --resume)")
    parser.add_argument("--config", type=Path,
                        help="YAML hyperparameter file (default: train/hyperparams/td_GAME.yaml)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key, e.g. --set trace_decay=0.5")
    parser.add_argument("--seed", type=int, help=f"seed of everything, below {SEED_LIMIT}")
    parser.add_argument("--games", type=int, help="self-play games to train for")
    parser.add_argument("--minutes", type=float,
                        help="wall-clock budget: stop after the chunk of games that passes it")
    parser.add_argument("--runs-dir", type=Path, default=RUNS_DIR, help="where run folders go")
    parser.add_argument("--resume", type=Path, metavar="RUN_DIR",
                        help="continue the run in RUN_DIR from its last checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def prepare(args: argparse.Namespace) -> tuple[TdRun, bool]:
    """The run the command line asks for and whether it is new.

    Raises:
        ValueError, OSError: bad options, config or run folder (the message names the fix).
    """
    overrides = parse_sets(args.set, TdConfig.keys())
    overrides.update({key: value for key, value in (("seed", args.seed), ("games", args.games),
                                                    ("minutes", args.minutes))
                      if value is not None})
    if args.resume is not None:
        if args.config is not None:
            raise ValueError("--config cannot change a resumed run; drop it")
        return open_run(args.resume, overrides, args.game), False
    if args.game is None:
        raise ValueError("give a GAME (reversi, four_in_a_row, tictactoe) or --resume RUN_DIR")
    config = load_config(TdConfig, args.game, args.config, overrides)
    evaluation_positions(config)  # a set that cannot be judged fails before any folder
    return new_run(config, args.runs_dir), True


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym td``: returns the exit code."""
    parser = build_parser()
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(arguments)
    try:
        run, fresh = prepare(args)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    with removed_on_error(run, fresh):
        record_command(run.directory, arguments, ALGO)
        print(f"run folder: {run.directory}", flush=True)
        train(run, progress=not args.no_progress)
    print(f"done: {run.model} (play it as ntuple:0@{run.model}; resume from {run.last})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
