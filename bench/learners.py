"""The self-play learners' pace: TD n-tuple games a second beside AlphaZero positions a second.

``python -m boardgym.bench.learners [--games GAME...] [--seconds S]`` plays, for each game,
``S`` seconds of ``boardgym td``'s self-play with the game's default config
(``train/hyperparams/td_GAME.yaml``, its length lifted; compilation left out) and reports
the median over its chunks of self-play games and TD updates a second, then one iteration
of ``boardgym az``'s self-play with its default config (its network untrained: the search's
cost does not depend on the weights) and reports its positions a second, on one core each
(torch 1 thread).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

from boardgym.bench.throughput import seconds as seconds_value
from boardgym.envs.games import GAMES
from boardgym.envs.games import game as game_record
from boardgym.train.common.commands import CommandParser
from boardgym.train.common.config import load_config

WARM_UP_GAMES = 10


def td_pace(game: str, seconds: float) -> tuple[float, float]:
    """Median games and updates a second of the default td self-play over ``seconds``."""
    from boardgym.agents.ntuple.network import horizon, new_trace
    from boardgym.train.td.config import MAX_SELF_PLAY_GAMES, TdConfig
    from boardgym.train.td.run import MODES, TdRun, kernels, new_trainer, play_chunk

    config = load_config(TdConfig, game, None, {"games": MAX_SELF_PLAY_GAMES})
    net = config.network()
    run = TdRun(config, Path(), net, new_trainer(config, net))  # nothing is written
    module = kernels(config.game)
    trace = new_trace(horizon(config.trace_decay, config.trace_cut), net.images)
    low, high = config.opening_plies or (0, 0)
    module.play(net.arrays, run.trainer, trace, config.env_kwargs,
                (WARM_UP_GAMES, 0, config.alpha, config.trace_decay, config.epsilon, low,
                 high, MODES[config.tcl]))
    games, updates = [], []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        row = play_chunk(run, module, trace, 0.0)
        games.append(row["games_per_s"])
        updates.append(row["updates_per_s"])
    return statistics.median(games), statistics.median(updates)


def az_pace(game: str) -> float:
    """Positions a second of one default az self-play iteration (torch 1 thread)."""
    import torch

    from boardgym.train.az.config import AzConfig
    from boardgym.train.az.learn import new_learner
    from boardgym.train.az.selfplay import self_play

    torch.set_num_threads(1)
    config = load_config(AzConfig, game)
    net, _ = new_learner(config)
    _, stats = self_play(game_record(game), config, net, np.random.default_rng(0))
    return stats.positions / stats.seconds


def main(argv: list[str] | None = None) -> int:
    """Print the learners' table."""
    parser = CommandParser(prog="python -m boardgym.bench.learners",
                           description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", choices=list(GAMES), default=list(GAMES))
    parser.add_argument("--seconds", type=seconds_value, default=20.0,
                        help="seconds of td self-play per game (default 20)")
    args = parser.parse_args(argv)
    print("| game | td self-play games/s | td updates/s | az self-play positions/s |")
    print("|---|---:|---:|---:|")
    for game in args.games:
        td_games, td_updates = td_pace(game, args.seconds)
        print(f"| {game} | {td_games:,.0f} | {td_updates:,.0f} | {az_pace(game):,.0f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
