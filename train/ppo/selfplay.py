"""Self-play league training (``boardgym selfplay GAME``).

The learner (MaskablePPO, as in ``boardgym train``) plays a league drawn per episode: the
config's ``opponents`` (any agent spec: classic AIs, ``alphabeta:D``, ``mcts:N``, checkpoints
and other registered players) with their ``opponent_weights``, plus frozen snapshots of its
own past weights, which share the draw weight ``snapshot_weight`` equally. Every
``snapshot_every`` steps the learner plays ``league_games`` games against each pool member;
when its mean win rate reaches ``snapshot_margin`` its current weights join the pool as a new
snapshot (``snapshots/step_N.zip`` in the run folder; the oldest snapshot leaves beyond
``max_snapshots``). The pool is saved with every checkpoint (``--resume`` restores it) and
as ``pool.json``. With ``opening_plies`` the games start from random openings; the learner
plays either seat (``first_player`` random per game).

Examples::

    boardgym selfplay tictactoe --timesteps 200000
    boardgym selfplay reversi --set snapshot_margin=0.7 --set max_snapshots=4
    boardgym selfplay four_in_a_row --eval-quality 180 --set patience=6
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from boardgym.agents import Agent
from boardgym.train.common.runs import write_json
from boardgym.train.ppo.callbacks import RunCallback, next_multiple, win_rate
from boardgym.train.ppo.environments import OpponentPool
from boardgym.train.ppo.runs import Run, save_checkpoint
from boardgym.train.ppo.trainer import build_parser, default_pool, run_command

ALGO = "selfplay"
SNAPSHOTS = "snapshots"
POOL_FILE = "pool.json"


def snapshot_specs(pool: OpponentPool, directory: Path) -> list[str]:
    """The pool members that are snapshots of this run, oldest first."""
    folder = directory / SNAPSHOTS
    return [spec for spec in pool.specs if Path(spec).parent == folder]


class League:
    """The hook that grows the pool: a league check every ``snapshot_every`` steps."""

    def __init__(self) -> None:
        self.next_check: int | None = None

    def __call__(self, callback: RunCallback) -> None:
        """Check the league when its step has come (called between rollouts)."""
        run, model = callback.run, callback.model
        config, step = run.config, model.num_timesteps
        if self.next_check is None:
            share_snapshot_weight(run)
            save_pool(run)
            self.next_check = next_multiple(step, config.snapshot_every)
        if step < self.next_check:
            return
        self.next_check = next_multiple(step, config.snapshot_every)
        rates = {spec: win_rate(model, config, pool_agent, config.league_games, config.seed)
                 for spec, pool_agent in zip(run.pool.specs, self.agents(run.pool),
                                             strict=True)}
        mean = float(np.mean(list(rates.values())))
        callback.logger.record("league/mean_win_rate", mean)
        added = mean >= config.snapshot_margin
        if added:
            self.add_snapshot(callback)
        callback.logger.record("league/snapshots", len(snapshot_specs(run.pool, run.directory)))
        print(f"[{step:>9} steps] league: mean win rate {mean:.1%} over {len(rates)} "
              f"opponents{'; snapshot added' if added else ''}", flush=True)

    @staticmethod
    def agents(pool: OpponentPool) -> list[Agent]:
        """The pool's agents in spec order."""
        return [pool.agent(spec) for spec in pool.specs]

    @staticmethod
    def add_snapshot(callback: RunCallback) -> None:
        """Freeze the learner's weights into the pool (dropping the oldest beyond the cap)."""
        run, model = callback.run, callback.model
        path = run.directory / SNAPSHOTS / f"step_{model.num_timesteps}.zip"
        path.parent.mkdir(exist_ok=True)
        save_checkpoint(model, path, run.config.game, run.config.env_kwargs)
        run.pool.add(str(path))
        snapshots = snapshot_specs(run.pool, run.directory)
        for old in snapshots[: max(0, len(snapshots) - run.config.max_snapshots)]:
            run.pool.remove(old)
        share_snapshot_weight(run)
        save_pool(run)


def share_snapshot_weight(run: Run) -> None:
    """Give the run's snapshots equal shares of ``config.snapshot_weight`` (the other pool
    members keep their weights)."""
    snapshots = snapshot_specs(run.pool, run.directory)
    if snapshots:
        run.pool.reweight(snapshots, run.config.snapshot_weight)


def save_pool(run: Run) -> None:
    """Write the run's pool to ``pool.json``."""
    write_json(run.directory / POOL_FILE, run.pool.to_dict())


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym selfplay``: returns the exit code."""
    run = run_command(argv, build_parser("boardgym selfplay", __doc__), ALGO, default_pool,
                      hooks=[League()])
    print(f"done: {run.last} (best: {run.best}); pool: {run.directory / POOL_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
