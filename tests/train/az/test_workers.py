"""az self-play over workers: the same games for a seed and a worker count wherever they
run, ``--workers 1`` on Ray equal to the local run, and a killed actor changing nothing."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from boardgym.agents.az.network import AzNet
from boardgym.train.az import workers as az_workers
from boardgym.train.az.config import AzConfig
from boardgym.train.az.selfplay import Samples
from boardgym.train.az.workers import (
    InProcess,
    Played,
    Processes,
    SelfPlayWorker,
    Weights,
    play_iteration,
    shard_sizes,
)
from boardgym.train.common.backends import Backend
from boardgym.train.common.config import load_config

ray = pytest.importorskip("ray")


def tiny(**changes: object) -> AzConfig:
    """A tic-tac-toe config whose self-play takes a fraction of a second."""
    settings: dict[str, object] = {"games_per_iteration": 12, "simulations": 4,
                                   "opening_plies": [0, 2], **changes}
    return load_config(AzConfig, "tictactoe", None, settings)


def network(config: AzConfig, seed: int = 0) -> AzNet:
    """A seeded random network of the config's size."""
    import torch

    torch.manual_seed(seed)
    return AzNet(config.architecture())


def same(first: Samples, second: Samples) -> bool:
    """Whether two sample sets are equal, array by array."""
    return all(np.array_equal(getattr(first, name), getattr(second, name))
               for name in ("observations", "masks", "policies", "values"))


def test_shards_are_nearly_equal_and_never_empty() -> None:
    assert shard_sizes(12, 1) == [12]
    assert shard_sizes(13, 2) == [7, 6]
    assert shard_sizes(3, 8) == [1, 1, 1]
    assert sum(shard_sizes(4096, 7)) == 4096


def test_two_workers_give_the_same_games_locally_and_on_ray(local_ray: None) -> None:
    config = tiny(workers=2)
    net = network(config)
    local = Processes(config, 2)
    try:
        here, _, _ = play_iteration(local, config, net, 3, np.random.default_rng(0))
    finally:
        local.close()
    actors = az_workers.start_workers(config, Backend("ray"))
    try:
        there, stats, _ = play_iteration(actors, config, net, 3, np.random.default_rng(0))
    finally:
        actors.close()
    assert same(here, there) and stats.games == config.games_per_iteration
    one_shard, _, _ = play_iteration(InProcess(tiny()), tiny(), net, 3,
                                     np.random.default_rng(0))
    assert not same(here, one_shard)  # the shards draw their own streams


def test_one_worker_on_ray_plays_the_local_games(local_ray: None) -> None:
    config = tiny()
    net = network(config, seed=1)
    local_rng, ray_rng = np.random.default_rng(9), np.random.default_rng(9)
    here, _, local_after = play_iteration(InProcess(config), config, net, 0, local_rng)
    actors = az_workers.start_workers(config, Backend("ray"))
    try:
        there, _, ray_after = play_iteration(actors, config, net, 0, ray_rng)
    finally:
        actors.close()
    assert same(here, there)
    assert local_after.bit_generator.state == ray_after.bit_generator.state


class CrashingWorker(SelfPlayWorker):
    """A worker whose process dies the first time any of them plays (``marker`` records
    that one did)."""

    def __init__(self, config: AzConfig, marker: Path) -> None:
        super().__init__(config)
        self.marker = marker

    def play(self, weights: Weights, games: int, rng: np.random.Generator) -> Played:
        if not self.marker.exists():
            self.marker.touch()
            os._exit(1)
        return super().play(weights, games, rng)


def test_a_killed_actor_changes_nothing(local_ray: None, tmp_path: Path) -> None:
    config = tiny(workers=2)
    net = network(config, seed=2)
    marker = tmp_path / "crashed"
    actors = az_workers.RayActors(config, 2, CrashingWorker, (marker,))
    try:
        crashed, _, _ = play_iteration(actors, config, net, 1, np.random.default_rng(0))
    finally:
        actors.close()
    assert marker.exists()
    healthy = az_workers.start_workers(config, Backend("ray"))
    try:
        expected, _, _ = play_iteration(healthy, config, net, 1, np.random.default_rng(0))
    finally:
        healthy.close()
    assert same(crashed, expected)


TINY_RUN = ["--set", "games_per_iteration=8", "--set", "simulations=4", "--set",
            "train_steps=2", "--set", "batch_size=16", "--set", "eval_positions=20", "--set",
            "eval_games=2", "--set", "eval_opponents=[random]", "--iterations", "2",
            "--no-progress"]


def tiny_run(tmp_path: Path, name: str, *options: str) -> dict[str, np.ndarray]:
    """A two-iteration tic-tac-toe run with ``options``: its network's weights."""
    from boardgym.agents.az.checkpoint import load_network
    from boardgym.train.az import command

    runs = tmp_path / name
    assert command.main(["tictactoe", *TINY_RUN, "--runs-dir", str(runs), *options]) == 0
    (folder,) = runs.iterdir()
    net, _ = load_network(folder / "checkpoints" / "model.zip", "tictactoe")
    return {key: value.numpy() for key, value in net.state_dict().items()}


def same_weights(first: dict[str, np.ndarray], second: dict[str, np.ndarray]) -> bool:
    return first.keys() == second.keys() and all(np.array_equal(first[k], second[k])
                                                 for k in first)


def test_runs_depend_on_the_worker_count_not_the_backend(
        local_ray: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    local_two = tiny_run(tmp_path, "local2", "--workers", "2")
    ray_two = tiny_run(tmp_path, "ray2", "--workers", "2", "--backend", "ray")
    local_one = tiny_run(tmp_path, "local1")
    ray_one = tiny_run(tmp_path, "ray1", "--workers", "1", "--backend", "ray")
    capsys.readouterr()
    assert same_weights(local_two, ray_two) and same_weights(local_one, ray_one)
    assert not same_weights(local_one, local_two)
    (folder,) = (tmp_path / "local2").iterdir()
    assert "workers: 2" in (folder / "config.yaml").read_text()
