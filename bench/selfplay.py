"""az self-play over workers, and the learner's pace.

``python -m boardgym.bench.selfplay [--games GAME...] [--workers K...] [--backends B...]
[--repeats R]`` plays, for each game, backend and worker count, ``R`` self-play iterations
of the game's default ``boardgym az`` config (``train/hyperparams/az_GAME.yaml``; its
network untrained: the search's cost does not depend on the weights) on the workers
``train.az.workers`` starts, after one iteration to warm them up (process start, Ray actors,
compilation), and prints the median positions a second over the repeats. Then the
learner's gradient steps a second on the default batch (``train_steps`` of one iteration,
median of ``R``), in this process with ``torch_threads`` threads.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from boardgym.envs.games import GAMES
from boardgym.train.common.backends import BACKENDS, Backend
from boardgym.train.common.commands import CommandParser, int_at_least
from boardgym.train.common.config import load_config

BENCH_GAMES = ("four_in_a_row", "reversi")
MAX_REPEATS = 100


def selfplay_pace(game: str, backend: str, workers: int, repeats: int) -> float:
    """Median positions a second of ``repeats`` default self-play iterations on ``workers``
    workers of ``backend``."""
    from boardgym.train.az.config import AzConfig
    from boardgym.train.az.learn import new_learner
    from boardgym.train.az.workers import play_iteration, start_workers

    config = load_config(AzConfig, game, None, {"workers": workers})
    net, _ = new_learner(config)
    pool = start_workers(config, Backend(backend))
    rng = np.random.default_rng(0)
    try:
        play_iteration(pool, config, net, 0, rng)  # warm up: processes, actors, compiling
        rates = []
        for iteration in range(1, repeats + 1):
            _, stats, rng = play_iteration(pool, config, net, iteration, rng)
            rates.append(stats.positions / stats.seconds)
    finally:
        pool.close()
    return statistics.median(rates)


def learner_pace(game: str, repeats: int) -> float:
    """Median gradient steps a second of the default learner on a full replay buffer's
    worth of self-play samples."""
    import torch

    from boardgym.agents.az.network import Symmetries
    from boardgym.envs.games import game as game_record
    from boardgym.train.az.config import AzConfig
    from boardgym.train.az.learn import new_learner, train_steps
    from boardgym.train.az.replay import ReplayBuffer
    from boardgym.train.az.selfplay import self_play

    config = load_config(AzConfig, game)
    torch.set_num_threads(config.torch_threads)
    net, optimizer = new_learner(config)
    rng = np.random.default_rng(0)
    buffer = ReplayBuffer(net.arch, config.buffer_size)
    buffer.add(self_play(game_record(game), config, net, rng)[0])
    arch = net.arch
    symmetries = Symmetries(arch.rows, arch.cols, arch.n_actions)
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        train_steps(config, net, optimizer, buffer, symmetries, rng)
        rates.append(config.train_steps / (time.perf_counter() - start))
    return statistics.median(rates)


def main(argv: list[str] | None = None) -> int:
    """Print the self-play and learner tables."""
    parser = CommandParser(prog="python -m boardgym.bench.selfplay",
                           description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", nargs="+", choices=list(GAMES), default=list(BENCH_GAMES))
    parser.add_argument("--workers", nargs="+", type=int_at_least(1, 1024), default=[1, 2])
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("--repeats", type=int_at_least(1, MAX_REPEATS), default=3,
                        help="measured iterations (default 3)")
    args = parser.parse_args(argv)
    print("| game | backend | workers | self-play positions/s |")
    print("|---|---|---:|---:|")
    for game in args.games:
        for backend in args.backends:
            for workers in args.workers:
                pace = selfplay_pace(game, backend, workers, args.repeats)
                print(f"| {game} | {backend} | {workers} | {pace:,.0f} |", flush=True)
    print("\n| game | learner steps/s |")
    print("|---|---:|")
    for game in args.games:
        print(f"| {game} | {learner_pace(game, args.repeats):,.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
