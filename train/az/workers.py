"""Self-play over workers: an iteration's games split into shards that worker processes or
Ray actors play with the current weights, while the learner stays in this process.

Which games a run plays depends on its seed and its number of workers K, never on where they
run:

- K = 1: the iteration's games are one shard drawn from the run's own generator (what a run
  with one worker has always done). In this process for the local backend; on a Ray actor,
  which is sent the generator and sends it back advanced, so ``--workers 1`` on Ray plays
  the local run's games.
- K > 1: the games are split into K shards of nearly equal size (the first
  ``games % K`` one game larger); shard k draws from
  ``numpy.random.default_rng([seed, iteration, k])``. Local worker processes and Ray actors
  play the same shards, so they give the same games; the samples are joined in shard order.

The weights go to the workers once an iteration (Ray: put in the object store once, read by
every actor). Each worker builds its network once and computes in ``torch_threads`` threads,
as the learner's process does, so a shard's games do not depend on the worker. A Ray actor
that dies (a lost node, a killed process) is restarted and its shard played again
(``RETRIES`` times): the same shard, so the same games, and the run goes on.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import multiprocessing
import signal
import time
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import torch

from boardgym.agents.az.network import AzNet
from boardgym.envs.games import game as game_record
from boardgym.train.az.config import AzConfig
from boardgym.train.az.selfplay import Samples, SelfPlayStats, self_play
from boardgym.train.common.backends import Backend, connect

RETRIES = 3
"""How many times Ray restarts a dead actor and replays its shard."""
Weights = dict[str, torch.Tensor]
Played = tuple[Samples, SelfPlayStats, np.random.Generator]
"""A shard's samples, stats, and generator as it ends."""
Shard = tuple[int, np.random.Generator]
"""A shard: how many games, and the generator they draw from."""


def shard_sizes(games: int, workers: int) -> list[int]:
    """The games of each of ``workers`` shards: nearly equal, the first ones larger, none
    empty (fewer shards than workers when there are fewer games)."""
    shards = min(games, workers)
    return [games // shards + (k < games % shards) for k in range(shards)]


def shard_rng(seed: int, iteration: int, shard: int) -> np.random.Generator:
    """The generator of shard ``shard`` of iteration ``iteration`` (with more than one
    worker)."""
    return np.random.default_rng([seed, iteration, shard])


def cpu_weights(net: AzNet) -> Weights:
    """The network's weights as CPU tensors (what workers are sent)."""
    return {name: value.detach().cpu() for name, value in net.state_dict().items()}


class SelfPlayWorker:
    """One worker's network and what it plays: a process's, an actor's, or this process's.

    Args:
        config: the run's config (the game, the network, the search).
    """

    def __init__(self, config: AzConfig) -> None:
        torch.set_num_threads(config.torch_threads)
        self.config, self.record = config, game_record(config.game)
        self.net = AzNet(config.architecture())

    def play(self, weights: Weights, games: int, rng: np.random.Generator) -> Played:
        """``games`` self-play games with ``weights`` drawing from ``rng``; returns their
        samples, stats, and ``rng`` as it ends (advanced)."""
        self.net.load_state_dict(weights)
        config = dataclasses.replace(self.config, games_per_iteration=games)
        samples, stats = self_play(self.record, config, self.net, rng)
        return samples, stats, rng


_process_worker: SelfPlayWorker | None = None


def _start_process(config: AzConfig) -> None:
    """A worker process's start: Ctrl-C is the command's to report; the network built."""
    global _process_worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _process_worker = SelfPlayWorker(config)


def _play_in_process(weights: Weights, games: int, rng: np.random.Generator) -> Played:
    """Play a shard in this worker process."""
    if _process_worker is None:
        raise RuntimeError("a self-play worker process without its network")
    return _process_worker.play(weights, games, rng)


class Shards(Protocol):
    """Plays shards with the current network, in shard order."""

    def play(self, net: AzNet, shards: Sequence[Shard]) -> list[Played]:
        """Each shard's samples, stats and advanced generator."""

    def close(self) -> None:
        """Stop the workers."""


class InProcess:
    """Shards played one after the other in this process, by the learner's network itself
    (on its device)."""

    def __init__(self, config: AzConfig) -> None:
        torch.set_num_threads(config.torch_threads)
        self.config, self.record = config, game_record(config.game)

    def play(self, net: AzNet, shards: Sequence[Shard]) -> list[Played]:
        played = []
        for games, rng in shards:
            config = dataclasses.replace(self.config, games_per_iteration=games)
            played.append((*self_play(self.record, config, net, rng), rng))
        return played

    def close(self) -> None:
        """Nothing to stop."""


class Processes:
    """Shards played at once by local worker processes (started fresh: ``spawn``)."""

    def __init__(self, config: AzConfig, workers: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.pool = concurrent.futures.ProcessPoolExecutor(
            workers, mp_context=context, initializer=_start_process, initargs=(config,))

    def play(self, net: AzNet, shards: Sequence[Shard]) -> list[Played]:
        weights = cpu_weights(net)
        futures = [self.pool.submit(_play_in_process, weights, games, rng)
                   for games, rng in shards]
        return [future.result() for future in futures]

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


class RayActors:
    """Shards played at once by Ray actors, one shard each; a dead actor is restarted and
    its shard replayed (``RETRIES``).

    Args:
        config: the run's config.
        workers: how many actors.
        worker: the class each actor is (``SelfPlayWorker``, or one that extends it).
        args: more arguments of ``worker``, after ``config``.
    """

    def __init__(self, config: AzConfig, workers: int,
                 worker: type[SelfPlayWorker] = SelfPlayWorker, args: tuple[Any, ...] = ()
                 ) -> None:
        import ray

        actor: Any = ray.remote(worker).options(
            num_cpus=1, max_restarts=RETRIES, max_task_retries=RETRIES)
        self.actors: list[Any] = [actor.remote(config, *args) for _ in range(workers)]

    def play(self, net: AzNet, shards: Sequence[Shard]) -> list[Played]:
        import ray

        shared = ray.put(cpu_weights(net))
        calls = [actor.play.remote(shared, games, rng)
                 for actor, (games, rng) in zip(self.actors, shards, strict=False)]
        return list(ray.get(calls))

    def close(self) -> None:
        import ray

        for actor in self.actors:
            ray.kill(actor)


def start_workers(config: AzConfig, backend: Backend) -> Shards:
    """The workers of ``config.workers`` on ``backend`` (Ray started or joined first).

    Raises:
        ValueError: Ray is not installed or cannot be reached, or more workers than the
            local machine has CPUs.
    """
    workers = config.workers
    Backend(backend.name, workers, backend.address)  # checks the count for the backend
    if backend.name == "ray":
        connect(backend)
        return RayActors(config, workers)
    return InProcess(config) if workers == 1 else Processes(config, workers)


def play_iteration(workers: Shards, config: AzConfig, net: AzNet, iteration: int,
                   rng: np.random.Generator) -> Played:
    """Iteration ``iteration``'s self-play (see the module docstring): the samples in shard
    order, the stats of the whole round (its wall time; the network's time averaged over
    the shards), and the run's generator afterwards (advanced only with one worker)."""
    start = time.perf_counter()
    sizes = shard_sizes(config.games_per_iteration, config.workers)
    if config.workers == 1:
        shards = [(sizes[0], rng)]
    else:
        shards = [(size, shard_rng(config.seed, iteration, k)) for k, size in enumerate(sizes)]
    played = workers.play(net, shards)
    samples = Samples.concat([part for part, _, _ in played])
    stats = [part for _, part, _ in played]
    total = SelfPlayStats(sum(s.games for s in stats), sum(s.positions for s in stats),
                          sum(s.simulations for s in stats), time.perf_counter() - start,
                          sum(s.network_seconds for s in stats) / len(stats))
    return samples, total, played[0][2] if config.workers == 1 else rng
