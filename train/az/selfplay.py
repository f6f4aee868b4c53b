"""Self-play: an iteration's games, every move chosen by a search with the current network,
and the training samples they leave.

All ``games_per_iteration`` games are played at once by the batched search
(``agents.az.search``: one network call per simulation step for all the games). Every
position becomes a ``Samples`` row: the mover's-view planes, the legal moves, the search's
improved policy, and the value target for the side to move (the game's result, mixed with
the search's value of the move played by ``AzConfig.value_mix``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from boardgym.agents import solvers
from boardgym.agents.az.network import AzNet, Evaluator
from boardgym.agents.az.search import draw_noise, search
from boardgym.envs.games.core import Game, batch_of, put, take
from boardgym.train.az.config import AzConfig
from boardgym.train.match.openings import unfinished_opening

SAMPLE_FIELDS = ("observations", "masks", "policies", "values")
"""The arrays of a ``Samples``, in order."""


@dataclass
class Samples:
    """Training positions: mover's-view planes, legal masks, policy targets, and value
    targets for the side to move (the game's result, mixed by ``AzConfig.value_mix``)."""

    observations: np.ndarray
    masks: np.ndarray
    policies: np.ndarray
    values: np.ndarray

    @classmethod
    def concat(cls, parts: Sequence[Samples]) -> Samples:
        """The samples of ``parts`` one after the other."""
        return cls(*(np.concatenate([getattr(part, name) for part in parts])
                     for name in SAMPLE_FIELDS))

    def __len__(self) -> int:
        return len(self.values)


@dataclass
class SelfPlayStats:
    """What one round of self-play did.

    Attributes:
        games, positions, simulations: games played, positions kept, simulations run.
        seconds: the round's wall time.
        network_seconds: the part of it spent in the network.
    """

    games: int
    positions: int
    simulations: int
    seconds: float
    network_seconds: float


class TimedEvaluator:
    """An ``Evaluator`` that adds up the time spent in the network (``seconds``)."""

    def __init__(self, evaluate: Evaluator) -> None:
        self.evaluate = evaluate
        self.seconds = 0.0

    def __call__(self, observations: np.ndarray, masks: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        start = time.perf_counter()
        try:
            return self.evaluate(observations, masks)
        finally:
            self.seconds += time.perf_counter() - start


def choose_moves(config: AzConfig, policies: np.ndarray, searched: np.ndarray, ply: int,
                 rng: np.random.Generator) -> np.ndarray:
    """The moves played: the search's, or with PUCT in the first ``temperature_moves`` plies
    a sample of its visit distribution."""
    if config.method != "puct" or ply >= config.temperature_moves:
        return searched
    cumulative = policies.cumsum(axis=1)
    draws = rng.random(len(policies))[:, None] * cumulative[:, -1:]
    return (cumulative <= draws).sum(axis=1).clip(max=policies.shape[1] - 1)


def starting_positions(record: Game, config: AzConfig, rng: np.random.Generator) -> Any:
    """The batched start of an iteration's games: the start position, or with
    ``config.opening_plies`` one random unfinished opening per game."""
    state = record.rules.initial_batch(config.games_per_iteration, **config.env_kwargs)
    if config.opening_plies is not None:
        low, high = config.opening_plies
        for game in range(config.games_per_iteration):
            _, opening = unfinished_opening(record, low, high, rng, config.env_kwargs)
            put(state, np.array([game]), batch_of(opening))
    return state


def self_play(record: Game, config: AzConfig, net: AzNet, rng: np.random.Generator
              ) -> tuple[Samples, SelfPlayStats]:
    """Play ``config.games_per_iteration`` games at once, every move by a search with the
    current network; every position becomes a sample, its value target the game's outcome
    mixed with the search's value of the move played by ``config.value_mix``."""
    rules, search_config = record.rules, config.search_config()
    evaluate = TimedEvaluator(Evaluator(net, config.precision))
    leaf_values = solvers.leaf_values(record.name) if config.leaf_solver else None
    state = starting_positions(record, config, rng)
    games = np.arange(config.games_per_iteration)
    results = np.zeros(config.games_per_iteration)
    plies: list[tuple[np.ndarray, Samples, np.ndarray]] = []
    start, simulations, ply = time.perf_counter(), 0, 0
    while games.size:
        masks = rules.legal_mask(state)
        found = search(rules, state, evaluate, search_config,
                       draw_noise(search_config, rng, masks), leaf_values)
        plies.append((games, Samples(rules.observation(state), masks, found.policy,
                                     np.asarray(found.action_value, np.float32)),
                      np.asarray(state.to_move)))
        state = rules.apply_batch(state, choose_moves(config, found.policy, found.action,
                                                      ply, rng))
        simulations += games.size * search_config.simulations
        over = np.asarray(rules.is_terminal(state), dtype=bool)
        results[games[over]] = rules.result(take(state, over), 0)
        state, games, ply = take(state, ~over), games[~over], ply + 1
    samples = value_targets(config, plies, results)
    return samples, SelfPlayStats(config.games_per_iteration, len(samples), simulations,
                                  time.perf_counter() - start, evaluate.seconds)


def value_targets(config: AzConfig, plies: Sequence[tuple[np.ndarray, Samples, np.ndarray]],
                  results: np.ndarray) -> Samples:
    """The samples of every ply, their values (the search's, as played) mixed with the
    outcome for the side to move by ``config.value_mix``.

    Args:
        config: the run's config.
        plies: per ply, the games still playing, their samples, and the side to move.
        results: each game's result for the first player.
    """
    for played, samples, movers in plies:
        outcomes = np.where(movers == 0, results[played], -results[played])
        samples.values[:] = (1 - config.value_mix) * outcomes + config.value_mix * samples.values
    return Samples.concat([part for _, part, _ in plies])
