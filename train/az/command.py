"""AlphaZero-style training by search-guided self-play (``boardgym az GAME``).

Each iteration plays ``games_per_iteration`` games of self-play at once, every move chosen by
a batched Gumbel AlphaZero search (``agents.az.search``; one network call per simulation step
for all the games), stores each position with the search's improved policy and the game's
final result for the side to move in a replay buffer, then takes ``train_steps`` gradient
steps on batches drawn from the buffer, each sample under a random board symmetry (8 for
Reversi and tic-tac-toe, the mirror for four-in-a-row). Loss: cross-entropy to the search
policy over the legal moves + mean squared error to the result.

Every ``eval_every`` iterations (and at the end) the raw policy (``az:0``) is judged on a
fixed subset of the game's labelled positions (``train.quality.agreement.judge``) and plays
the fixed ladder ``eval_opponents`` (``train.match.evaluate.play_match``, both seatings).

A run folder ``runs/{game}__az__{seed}__{time}/`` holds ``config.yaml``, ``command.txt``,
``checkpoints/last.zip`` (written atomically every iteration, with the optimizer, the replay
buffer, the RNG streams and the counters: everything ``--resume RUN_DIR`` needs),
``checkpoints/model.zip`` (the network alone: the file to ship and to play with
``az:N@PATH``), ``checkpoints/iter_N.zip`` at each evaluation, ``progress.csv`` (one row per
iteration), ``eval.json`` (``boardgym plot`` draws it) and ``tb/`` (TensorBoard).
``--minutes M`` stops after the iteration that passes M minutes of training (resumes
included) and evaluates once more.

Examples::

    boardgym az tictactoe --minutes 3
    boardgym az four_in_a_row --minutes 90 --seed 0
    boardgym az reversi --set simulations=16 --set torch_threads=2
    boardgym az --resume runs/four_in_a_row__az__0__20250101-120000 --minutes 120
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from boardgym.train.az.config import AzConfig
from boardgym.train.az.run import ALGO, AzRun, new_run, open_run, train
from boardgym.train.common.commands import CommandParser, game_names
from boardgym.train.common.config import SEED_LIMIT, load_config, parse_sets
from boardgym.train.common.runs import RUNS_DIR, record_command, removed_on_error


def build_parser() -> argparse.ArgumentParser:
    """The ``boardgym az`` argument parser."""
    parser = CommandParser(prog="boardgym az", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game", nargs="?",
                        help=f"the game: {game_names()} (not needed with --resume)")
    parser.add_argument("--config", type=Path,
                        help="YAML hyperparameter file (default: train/hyperparams/az_GAME.yaml)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key, e.g. --set simulations=16")
    parser.add_argument("--seed", type=int, help=f"seed of everything, below {SEED_LIMIT}")
    parser.add_argument("--iterations", type=int, help="iterations to train for")
    parser.add_argument("--minutes", type=float,
                        help="wall-clock budget: stop after the iteration that passes it")
    parser.add_argument("--runs-dir", type=Path, default=RUNS_DIR, help="where run folders go")
    parser.add_argument("--resume", type=Path, metavar="RUN_DIR",
                        help="continue the run in RUN_DIR from its last checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def prepare(args: argparse.Namespace) -> tuple[AzRun, bool]:
    """The run the command line asks for and whether it is new.

    Raises:
        ValueError, OSError: bad options, config or run folder (the message names the fix).
    """
    overrides = parse_sets(args.set, AzConfig.keys())
    overrides.update({key: value for key, value in (("seed", args.seed),
                                                    ("iterations", args.iterations),
                                                    ("minutes", args.minutes))
                      if value is not None})
    if args.resume is not None:
        if args.config is not None:
            raise ValueError("--config cannot change a resumed run; drop it")
        return open_run(args.resume, overrides, args.game), False
    if args.game is None:
        raise ValueError("give a GAME (reversi, four_in_a_row, tictactoe) or --resume RUN_DIR")
    config = load_config(AzConfig, args.game, args.config, overrides)
    return new_run(config, args.runs_dir), True


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym az``: returns the exit code."""
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
    print(f"done: {run.model} (play it as az:0@{run.model}; resume from {run.last})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
