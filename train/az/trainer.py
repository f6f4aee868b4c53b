"""AlphaZero-style training by search-guided self-play (``boardgym az GAME``).

Each iteration plays ``games_per_iteration`` games of self-play at once, every move chosen by
a batched Gumbel AlphaZero search (``agents.az.search``; one network call per simulation step
for all the games), stores each position with the search's improved policy and the game's
final result for the side to move in a replay buffer, then takes ``train_steps`` gradient
steps on batches drawn from the buffer, each sample under a random board symmetry (8 for
Reversi and tic-tac-toe, the mirror for four-in-a-row). Loss: cross-entropy to the search
policy over the legal moves + mean squared error to the result.

Every ``eval_every`` iterations (and at the end) the raw policy (``az:0``) is judged on a
fixed subset of the game's labelled positions (``train.quality.judge``) and plays the fixed
ladder ``eval_opponents`` (``train.evaluate.play_match``, both seatings).

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
import base64
import csv
import dataclasses
import sys
import time
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from boardgym.agents import solvers
from boardgym.agents.az.checkpoint import (
    OPTIMIZER_ENTRY,
    TRAIN_STATE_ENTRY,
    CheckpointError,
    az_record,
    load_network,
    read_entry,
    read_tensors,
    write_checkpoint,
)
from boardgym.agents.az.network import (
    Architecture,
    AzNet,
    Evaluator,
    Symmetries,
    check_precision,
    computing_in,
    grow,
    unfit_fields,
)
from boardgym.agents.az.player import AzAgent
from boardgym.agents.az.search import METHODS, SearchConfig, draw_noise, search
from boardgym.agents.policy import load_state
from boardgym.envs.games import canonical_name
from boardgym.envs.games import game as game_record
from boardgym.envs.games.core import Game, batch_of, put, take
from boardgym.train.common.commands import CommandParser, game_names, one_line, progress_bar
from boardgym.train.match.evaluate import play_match
from boardgym.train.match.openings import unfinished_opening
from boardgym.train.ppo.config import (
    SEED_LIMIT,
    check_known_keys,
    check_run_keys,
    checked_type,
    parse_sets,
    read_yaml,
)
from boardgym.train.ppo.runs import (
    CHECKPOINTS,
    CONFIG_FILE,
    LAST,
    RUNS_DIR,
    TENSORBOARD_DIR,
    make_run_folder,
    record_command,
    removed_on_error,
    write_atomic,
    write_json,
)
from boardgym.train.quality.agreement import Position, default_positions, judge, load_positions

ALGO = "az"
HYPERPARAMS_DIR = Path(__file__).resolve().parents[1] / "hyperparams"
MODEL = "model.zip"
EVAL_FILE = "eval.json"
PROGRESS_FILE = "progress.csv"
BUFFER_ENTRY = "az_buffer.pth"
SECONDS_PER_MINUTE = 60
QUALITY_SUBSET_SEED = 0
"""Seed of the fixed subset of labelled positions judged at every evaluation."""
POSITIVE_KEYS = ("iterations", "games_per_iteration", "simulations", "considered",
                 "buffer_size", "batch_size", "train_steps", "eval_every", "eval_positions",
                 "eval_games", "torch_threads")
RESUMABLE_KEYS = frozenset({"iterations", "minutes", "eval_every", "eval_positions",
                            "eval_games", "eval_opponents", "eval_simulations", "eval_openings",
                            "torch_threads", "precision"})
"""Config keys that ``--resume`` may change."""
TRAIN_STATE_KEYS = ("iteration", "positions", "games", "elapsed", "history", "numpy", "torch")


# -- the config ------------------------------------------------------------------------------

@dataclass
class AzConfig:
    """Everything an az training run depends on (besides the code).

    Attributes:
        game: canonical game name.
        seed: seeds the self-play noise, the buffer sampling and torch.
        env_kwargs: the board options (four-in-a-row ``rows``, ``columns``, ``connect``).
        channels, blocks, hidden: the network's size; None: the game's ``Game.network``.
        iterations: iterations to train for (each: self-play, then training steps).
        minutes: wall-clock budget in minutes (None: none); the run stops after the
            iteration that passes it.
        games_per_iteration: self-play games per iteration, all played at once (the search
            batch).
        simulations: search simulations per self-play move.
        method: ``"gumbel"`` or ``"puct"`` (``agents.az.search``).
        considered: Gumbel: root actions sequential halving starts with.
        gumbel_scale: Gumbel: the root noise's scale (exploration in self-play).
        c_puct, dirichlet_alpha, dirichlet_fraction: PUCT's constants.
        temperature_moves: PUCT: the first moves of each game are sampled from the visit
            distribution (later ones are the most visited).
        leaf_solver: self-play's search asks the game's exact solver for positions near the
            end (``agents.solvers.leaf_values``): their values are exact, not the network's.
        opening_plies: ``[low, high]``: each self-play game starts from a random opening of
            that many plies (``openings.unfinished_opening``), so the network also meets the
            positions its own play avoids; None: every game from the start position.
        buffer_size: positions kept in the replay buffer (the newest).
        batch_size: positions per gradient step.
        train_steps: gradient steps per iteration.
        learning_rate, weight_decay: AdamW's.
        lr_schedule: ``"constant"``, or ``"linear"``: iteration ``i`` (counted from 0)
            trains at ``learning_rate * (1 - i / iterations)``, falling toward 0 at
            ``iterations`` (``learning_rate_at``). A run bound by ``minutes`` still falls
            over ``iterations``: set it to the iterations the minutes hold (``--resume``
            with other ``iterations`` rescales the rates still to come).
        value_weight: the value loss's weight against the policy loss.
        value_mix: the search's share of each value target, in ``[0, 1]``: a position's
            target is ``(1 - value_mix) * outcome + value_mix * searched`` (the game's
            result, and the self-play search's value of the move it played there: its Q
            at the root; both for the side to move); 0: the outcome alone.
        augment: draw a random board symmetry per training sample.
        eval_every: iterations between evaluations.
        eval_positions: labelled positions judged per evaluation (a fixed subset).
        eval_games: games per ladder opponent per evaluation (even: both seatings).
        eval_opponents: the fixed ladder.
        eval_simulations: simulations of the evaluated player (0: the raw policy).
        eval_openings: random plies before each ladder game (fair openings; 0: none).
        torch_threads: CPU threads torch may use.
        precision: the number format the network computes in, in self-play, training and
            the evaluations (``agents.az.network.PRECISIONS``): ``float32``, or ``bfloat16``
            autocast (weights, optimizer and saved files stay float32).
        init_from: an az checkpoint of the same game and board whose weights start the
            run (a fresh optimizer and an empty replay buffer: a new run that goes on from a
            shipped network); a smaller network than the config's grows to its sizes
            (``agents.az.network.grow``: it plays as the file does at the start); None:
            random weights.
    """

    game: str
    seed: int = 0
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    channels: int | None = None
    blocks: int | None = None
    hidden: int | None = None
    iterations: int = 100
    minutes: float | None = None
    games_per_iteration: int = 64
    simulations: int = 32
    method: str = "gumbel"
    considered: int = 16
    gumbel_scale: float = 1.0
    c_puct: float = 1.25
    dirichlet_alpha: float = 0.3
    dirichlet_fraction: float = 0.25
    temperature_moves: int = 8
    leaf_solver: bool = False
    opening_plies: list[int] | None = None
    buffer_size: int = 50_000
    batch_size: int = 256
    train_steps: int = 50
    learning_rate: float = 1e-3
    lr_schedule: str = "constant"
    weight_decay: float = 1e-4
    value_weight: float = 1.0
    value_mix: float = 0.0
    augment: bool = True
    eval_every: int = 5
    eval_positions: int = 500
    eval_games: int = 40
    eval_opponents: list[str] = field(default_factory=lambda: ["random"])
    eval_simulations: int = 0
    eval_openings: int = 0
    torch_threads: int = 1
    precision: str = "float32"
    init_from: str | None = None

    def __post_init__(self) -> None:
        self.game = canonical_name(self.game)
        for name, hint in typing.get_type_hints(AzConfig).items():
            setattr(self, name, checked_type(name, getattr(self, name), hint))
        for name in (*POSITIVE_KEYS, "channels", "blocks", "hidden"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}; fix it "
                                 f"with --set {name}=...")
        self._check_ranges()

    def _check_ranges(self) -> None:
        """The keys with a range or a set of choices."""
        check_run_keys(self.seed, self.torch_threads, self.lr_schedule)
        check_precision(self.precision)
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.minutes is not None and self.minutes <= 0:
            raise ValueError(f"minutes must be positive, got {self.minutes}")
        if not 0 <= self.value_mix <= 1:
            raise ValueError(f"value_mix must be in [0, 1], got {self.value_mix}; fix it with "
                             "--set value_mix=0.5 (0: the outcome alone)")
        if self.eval_games % 2 or min(self.eval_simulations, self.eval_openings,
                                      self.temperature_moves) < 0:
            raise ValueError("eval_games must be even (both seatings) and eval_simulations, "
                             "eval_openings, temperature_moves >= 0")
        plies = self.opening_plies
        if plies is not None and not (len(plies) == 2 and 0 <= plies[0] <= plies[1]):
            raise ValueError(f"opening_plies must be [low, high] with 0 <= low <= high, got "
                             f"{self.opening_plies}; fix it with --set opening_plies=[0,4]")
        if not self.eval_opponents:
            raise ValueError("eval_opponents needs at least one spec, e.g. --set "
                             "eval_opponents=[random]")
        if self.leaf_solver and solvers.leaf_values(self.game) is None:
            raise ValueError(f"leaf_solver: {self.game} has no exact solver here (or numba is "
                             "missing: pip install -e \".[solvers]\"); set leaf_solver=false")
        self.search_config()  # checks the search keys

    def search_config(self) -> SearchConfig:
        """The self-play search's settings."""
        return SearchConfig(simulations=self.simulations, method=self.method,
                            considered=self.considered, gumbel_scale=self.gumbel_scale,
                            c_puct=self.c_puct, dirichlet_alpha=self.dirichlet_alpha,
                            dirichlet_fraction=self.dirichlet_fraction)

    def architecture(self) -> Architecture:
        """The network of this config on its board."""
        record = game_record(self.game)
        size = record.network
        size = dataclasses.replace(size, **{name: getattr(self, name) for name in
                                            ("channels", "blocks", "hidden")
                                            if getattr(self, name) is not None})
        start = record.rules.initial_state(**self.env_kwargs)
        return Architecture.of(record.rules, start, size)

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data (``config.yaml``)."""
        return dataclasses.asdict(self)


def config_keys() -> list[str]:
    """Every key of ``AzConfig``."""
    return [item.name for item in dataclasses.fields(AzConfig)]


def check_keys(data: dict[str, Any], source: str) -> None:
    """Raise a ValueError naming unknown config keys in ``data`` (from ``source``)."""
    check_known_keys(data, config_keys(), source)


def load_config(game: str, path: Path | None = None,
                overrides: dict[str, Any] | None = None) -> AzConfig:
    """The config of a run: a YAML file (default ``hyperparams/az_GAME.yaml``), then
    ``overrides``.

    Raises:
        ValueError: unknown game or key, or a bad value (the message names the fix).
    """
    game = canonical_name(game)
    source = path or HYPERPARAMS_DIR / f"az_{game}.yaml"
    data = {**read_yaml(source), **(overrides or {})}
    check_keys(data, str(source))
    data["game"] = game
    config = AzConfig(**data)
    config.architecture()  # validates the board options
    return config


# -- self-play ------------------------------------------------------------------------------

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
                     for name in ("observations", "masks", "policies", "values")))

    def __len__(self) -> int:
        return len(self.values)


@dataclass
class SelfPlayStats:
    """What one round of self-play did."""

    games: int
    positions: int
    simulations: int
    seconds: float
    network_seconds: float


class TimedEvaluator:
    """An ``Evaluator`` that adds up the time spent in the network."""

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
    for played, samples, movers in plies:
        outcomes = np.where(movers == 0, results[played], -results[played])
        samples.values[:] = (1 - config.value_mix) * outcomes + config.value_mix * samples.values
    samples = Samples.concat([part for _, part, _ in plies])
    return samples, SelfPlayStats(config.games_per_iteration, len(samples), simulations,
                                  time.perf_counter() - start, evaluate.seconds)


# -- replay buffer and training ---------------------------------------------------------------

class ReplayBuffer:
    """The newest ``capacity`` samples, in preallocated arrays (a ring).

    Args:
        arch: the board (observation shape and actions).
        capacity: samples kept.
    """

    def __init__(self, arch: Architecture, capacity: int) -> None:
        self.capacity = capacity
        self.observations = np.zeros((capacity, arch.planes, arch.rows, arch.cols), np.uint8)
        self.masks = np.zeros((capacity, arch.n_actions), bool)
        self.policies = np.zeros((capacity, arch.n_actions), np.float32)
        self.values = np.zeros(capacity, np.float32)
        self.size = 0
        self.next = 0

    def add(self, samples: Samples) -> None:
        """Store ``samples``, overwriting the oldest once full."""
        kept = min(len(samples), self.capacity)
        index = (self.next + np.arange(kept)) % self.capacity
        for name in ("observations", "masks", "policies", "values"):
            getattr(self, name)[index] = getattr(samples, name)[len(samples) - kept:]
        self.next = int((self.next + kept) % self.capacity)
        self.size = min(self.capacity, self.size + kept)

    def sample(self, rng: np.random.Generator, batch: int) -> Samples:
        """``batch`` samples drawn uniformly (with replacement)."""
        index = rng.integers(self.size, size=batch)
        return Samples(self.observations[index], self.masks[index], self.policies[index],
                       self.values[index])

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The stored samples as plain tensors (``torch.load(weights_only=True)`` reads them)."""
        kept = slice(0, self.size)
        return {"observations": torch.from_numpy(self.observations[kept]),
                "masks": torch.from_numpy(self.masks[kept]),
                "policies": torch.from_numpy(self.policies[kept]),
                "values": torch.from_numpy(self.values[kept]),
                "next": torch.tensor(self.next)}

    def load_state_dict(self, state: dict[str, torch.Tensor], path: Path) -> None:
        """Restore what ``state_dict`` saved.

        Raises:
            CheckpointError: tensors that do not fit this buffer.
        """
        try:
            size = len(state["values"])
            for name in ("observations", "masks", "policies", "values"):
                getattr(self, name)[:size] = state[name].numpy()
            self.size, self.next = size, int(state["next"])
        except (KeyError, ValueError, TypeError, IndexError) as error:
            raise CheckpointError(f"{path}: its replay buffer does not fit the run's config "
                                  f"({error}); start a new run") from error


def losses(net: AzNet, batch: Samples, precision: str = "float32"
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """``(policy loss, value loss)`` of a batch: cross-entropy to the policy targets over
    the legal moves, squared error to the results; the network's layers compute in
    ``precision`` (``agents.az.network.PRECISIONS``), the losses in float32."""
    with computing_in(precision):
        logits, values = net(torch.as_tensor(batch.observations, dtype=torch.float32))
    masks = torch.as_tensor(batch.masks)
    log_probs = torch.log_softmax(logits.masked_fill(~masks, torch.finfo(logits.dtype).min),
                                  dim=1)
    targets = torch.as_tensor(batch.policies, dtype=torch.float32)
    policy_loss = -(targets * log_probs.masked_fill(~masks, 0.0)).sum(dim=1).mean()
    value_loss = torch.mean((values - torch.as_tensor(batch.values)) ** 2)
    return policy_loss, value_loss


def train_steps(config: AzConfig, net: AzNet, optimizer: torch.optim.Optimizer,
                buffer: ReplayBuffer, symmetries: Symmetries, rng: np.random.Generator
                ) -> dict[str, float]:
    """``config.train_steps`` gradient steps on random batches (each sample under a random
    symmetry with ``augment``); the mean losses."""
    net.train()
    totals = np.zeros(2)
    for _ in range(config.train_steps):
        batch = buffer.sample(rng, config.batch_size)
        if config.augment:
            which = rng.integers(len(symmetries), size=config.batch_size)
            observations, masks, policies = symmetries.apply(
                which, batch.observations, batch.masks, batch.policies)
            batch = Samples(observations, masks, policies, batch.values)
        policy_loss, value_loss = losses(net, batch, config.precision)
        optimizer.zero_grad()
        (policy_loss + config.value_weight * value_loss).backward()
        optimizer.step()
        totals += [policy_loss.item(), value_loss.item()]
    net.eval()
    policy, value = totals / config.train_steps
    return {"policy_loss": policy, "value_loss": value, "loss": policy + value}


# -- evaluation ------------------------------------------------------------------------------

def quality_subset(record: Game, count: int) -> list[Position]:
    """A fixed subset of ``count`` of the game's labelled positions (all if fewer), the same
    for every run: drawn with ``QUALITY_SUBSET_SEED``."""
    positions = load_positions(default_positions(record), record)
    if count >= len(positions):
        return positions
    chosen = np.random.default_rng(QUALITY_SUBSET_SEED).choice(len(positions), count,
                                                               replace=False)
    return [positions[i] for i in sorted(chosen)]


def evaluate(record: Game, config: AzConfig, net: AzNet, positions: list[Position],
             step: int, seconds: float) -> dict[str, Any]:
    """The evaluation record of the current network (``eval.json``): the quality of the
    evaluated player on ``positions`` and its win and loss rates against the ladder."""
    board = az_record(record.name, config.env_kwargs, config.architecture())
    player = AzAgent(Evaluator(net, config.precision), board, config.eval_simulations,
                     name=f"az:{config.eval_simulations}")
    quality = judge(record.name, player, positions, seed=config.seed, built=player)
    wins, losses_ = {}, {}
    for spec in config.eval_opponents:
        result = play_match(record.name, player, spec, config.eval_games, seed=config.seed,
                            alternate=not config.eval_openings, config=config.env_kwargs,
                            openings=str(config.eval_openings) if config.eval_openings
                            else None)
        wins[spec], losses_[spec] = result.a_win_rate, result.b_wins / result.games
    net.eval()
    return {"step": step, "seconds": round(seconds, 1), "win_rates": wins,
            "loss_rates": losses_, "quality": {
                "positions": quality.positions,
                "kept_rate": quality.kept / quality.decisive if quality.decisive else None,
                "best_rate": quality.best / quality.contested if quality.contested else None}}


def summary(record: dict[str, Any]) -> str:
    """One line of an evaluation record."""
    quality = record["quality"]
    shares = ", ".join(f"{name} {quality[key]:.1%}" for name, key in
                       (("kept", "kept_rate"), ("best", "best_rate"))
                       if quality[key] is not None)
    ladder = ", ".join(f"{spec} {record['win_rates'][spec]:.0%}/"
                       f"{record['loss_rates'][spec]:.0%}" for spec in record["win_rates"])
    return f"quality {shares}; win/loss {ladder}"


# -- the run ---------------------------------------------------------------------------------

@dataclass
class AzRun:
    """A training run: its folder, config, learner, and counters.

    Attributes:
        config: the resolved hyperparameters.
        directory: the run folder.
        net, optimizer, buffer: the learner and its replay buffer.
        rng: the run's numpy stream (self-play noise, sampling).
        iteration, positions, games: done so far.
        elapsed: training wall time so far (seconds, resumes included).
        history: the evaluation records.
    """

    config: AzConfig
    directory: Path
    net: AzNet
    optimizer: torch.optim.Optimizer
    buffer: ReplayBuffer
    rng: np.random.Generator
    iteration: int = 0
    positions: int = 0
    games: int = 0
    elapsed: float = 0.0
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last(self) -> Path:
        """The latest checkpoint, with everything ``--resume`` needs."""
        return self.directory / CHECKPOINTS / LAST

    @property
    def model(self) -> Path:
        """The latest network alone: the file to ship and play."""
        return self.directory / CHECKPOINTS / MODEL

    def record(self) -> dict[str, Any]:
        """The ``az.json`` record of the learner now."""
        return az_record(self.config.game, self.config.env_kwargs, self.net.arch,
                         self.iteration, self.positions)

    def train_state(self) -> dict[str, Any]:
        """What ``--resume`` restores besides weights, optimizer and buffer: JSON data."""
        return {"iteration": self.iteration, "positions": self.positions, "games": self.games,
                "elapsed": self.elapsed, "history": self.history,
                "numpy": self.rng.bit_generator.state,
                "torch": base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode()}

    def save(self) -> None:
        """Write ``last.zip`` (everything) and ``model.zip`` (the network) atomically."""
        write_checkpoint(self.last, self.net, self.record(), self.optimizer,
                         self.train_state(), {BUFFER_ENTRY: self.buffer.state_dict()})
        write_checkpoint(self.model, self.net, self.record())


def new_learner(config: AzConfig) -> tuple[AzNet, torch.optim.Optimizer]:
    """A fresh network (seeded by ``config.seed``; the ``init_from`` weights, if any) and its
    optimizer.

    Raises:
        ValueError: ``init_from`` is not an az checkpoint of this game, board and network.
    """
    torch.manual_seed(config.seed)
    net = AzNet(config.architecture())
    if config.init_from is not None:
        net.load_state_dict(start_weights(config.init_from, config.game, net.arch))
    return net, optimizer_for(config, net)


def start_weights(path: str, game: str, arch: Architecture, hidden_key: str = "hidden"
                  ) -> dict[str, torch.Tensor]:
    """The weights of the az checkpoint at ``path``, checked to be for ``game`` on the
    board of ``arch``; a smaller network is grown to ``arch`` (``agents.az.network.grow``:
    it plays exactly as the file does until training moves it).

    Args:
        path, game, arch: the checkpoint, and the game and network it must fit.
        hidden_key: the config key that sets ``arch.hidden`` (for the message).

    Raises:
        ValueError: no such file, not an az checkpoint, another game or board, or a network
            larger than ``arch`` in any size.
    """
    if not Path(path).is_file():
        raise ValueError(f"init_from: no file {path}; give --set init_from=PATH of an az "
                         "checkpoint of this game (e.g. checkpoints/reversi_az.zip), or "
                         "--set init_from=null")
    try:
        start, _ = load_network(path, game)
    except CheckpointError as error:
        raise ValueError(f"init_from: {one_line(str(error))}; give --set init_from=PATH of an "
                         "az checkpoint of this game, or --set init_from=null") from error
    theirs, ours = start.arch.to_dict(), arch.to_dict()
    names = {**{key: key for key in ours}, "hidden": hidden_key}
    unfit = [f"{names[key]} {theirs[key]} (config: {ours[key]})"
             for key in unfit_fields(start.arch, arch)]
    if unfit:
        raise ValueError(f"init_from: {path} has {', '.join(unfit)}; set the config's "
                         f"channels, blocks and {hidden_key} to the checkpoint's or larger "
                         "(a smaller network grows), or --set init_from=null")
    return (start if start.arch == arch else grow(start, arch)).state_dict()


def learning_rate_at(config: AzConfig, iteration: int) -> float:
    """The learning rate of iteration ``iteration``'s training steps (counted from 0), by
    ``config.lr_schedule``."""
    if config.lr_schedule == "linear":
        return config.learning_rate * max(0.0, 1.0 - iteration / config.iterations)
    return config.learning_rate


def optimizer_for(config: AzConfig, net: AzNet) -> torch.optim.Optimizer:
    """AdamW over ``net``'s weights with ``config``'s learning rate and weight decay."""
    return torch.optim.AdamW(net.parameters(), lr=config.learning_rate,
                             weight_decay=config.weight_decay)


def new_run(config: AzConfig, runs_dir: Path) -> AzRun:
    """A fresh run and its folder (with ``config.yaml``); nothing is made on disk when the
    ``init_from`` weights do not fit.

    Raises:
        ValueError: the ``init_from`` weights do not fit, or the folder cannot be made (the
            message names the path).
    """
    net, optimizer = new_learner(config)
    directory = make_run_folder(runs_dir, config.game, ALGO, config.seed)
    write_atomic(directory / CONFIG_FILE, yaml.safe_dump(config.to_dict(), sort_keys=False))
    buffer = ReplayBuffer(net.arch, config.buffer_size)
    return AzRun(config, directory, net, optimizer, buffer, np.random.default_rng(config.seed))


def open_run(directory: Path, overrides: dict[str, Any], game: str | None) -> AzRun:
    """The run in ``directory`` as its last checkpoint left it; ``overrides`` may change
    only ``RESUMABLE_KEYS``. Everything is checked before ``config.yaml`` is rewritten.

    Raises:
        ValueError: not an az run folder, no checkpoint, another game, a fixed key changed.
        CheckpointError: a checkpoint that cannot be resumed.
    """
    if not (directory / CONFIG_FILE).is_file():
        raise ValueError(f"{directory} is not a run folder (no {CONFIG_FILE}); pass a folder "
                         f"made by `boardgym az`, e.g. {RUNS_DIR}/tictactoe__az__0__...")
    saved_data = read_yaml(directory / CONFIG_FILE)
    check_keys(saved_data, str(directory / CONFIG_FILE))
    saved = AzConfig(**saved_data)
    config = AzConfig(**{**saved_data, **overrides})
    if game is not None and canonical_name(game) != saved.game:
        raise ValueError(f"the run is a {saved.game} run, not {game}; drop GAME")
    fixed = sorted(key for key, value in config.to_dict().items()
                   if key not in RESUMABLE_KEYS and value != saved.to_dict()[key])
    if fixed:
        raise ValueError(f"--resume keeps the run's {', '.join(fixed)}; only "
                         f"{', '.join(sorted(RESUMABLE_KEYS))} can change")
    run = resumed(config, directory)
    write_atomic(directory / CONFIG_FILE, yaml.safe_dump(config.to_dict(), sort_keys=False))
    return run


def resumed(config: AzConfig, directory: Path) -> AzRun:
    """The run of ``directory``'s ``last.zip``: weights, optimizer, buffer, counters, RNGs.

    Raises:
        ValueError: no checkpoint yet.
        CheckpointError: a checkpoint without what ``--resume`` needs.
    """
    last = directory / CHECKPOINTS / LAST
    if not last.is_file():
        raise ValueError(f"{directory} has no checkpoint yet ({last}); start a new run")
    net, _ = load_network(last, config.game)
    optimizer = optimizer_for(config, net)
    load_state(optimizer, read_tensors(last, OPTIMIZER_ENTRY), last, OPTIMIZER_ENTRY)
    state = read_entry(last, TRAIN_STATE_ENTRY)
    if state is None or any(key not in state for key in TRAIN_STATE_KEYS):
        raise CheckpointError(f"{last} has no complete training state; it cannot be resumed")
    buffer = ReplayBuffer(net.arch, config.buffer_size)
    buffer.load_state_dict(read_tensors(last, BUFFER_ENTRY), last)
    rng = np.random.default_rng()
    rng.bit_generator.state = state["numpy"]
    raw = np.frombuffer(base64.b64decode(state["torch"]), dtype=np.uint8).copy()
    torch.set_rng_state(torch.from_numpy(raw))
    return AzRun(config, directory, net, optimizer, buffer, rng, state["iteration"],
                 state["positions"], state["games"], state["elapsed"], state["history"])


class Logs:
    """The run's per-iteration CSV (``progress.csv``) and TensorBoard scalars."""

    def __init__(self, directory: Path) -> None:
        self.csv = directory / PROGRESS_FILE
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:  # tensorboard missing: the CSV still has everything
            self.writer = None
        else:
            self.writer = SummaryWriter(str(directory / TENSORBOARD_DIR))

    def write(self, step: int, values: dict[str, float], prefix: str = "train") -> None:
        """Log ``values`` at ``step`` (positions seen)."""
        if self.writer is not None:
            for name, value in values.items():
                if value is not None:
                    self.writer.add_scalar(f"{prefix}/{name}", value, step)
            self.writer.flush()

    def row(self, values: dict[str, Any]) -> None:
        """Append one iteration's row to ``progress.csv``."""
        new = not self.csv.is_file()
        with self.csv.open("a", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=list(values))
            if new:
                writer.writeheader()
            writer.writerow(values)

    def close(self) -> None:
        """Flush and close TensorBoard's writer."""
        if self.writer is not None:
            self.writer.close()


def iterate(run: AzRun, record: Game, symmetries: Symmetries, logs: Logs) -> dict[str, Any]:
    """One iteration: self-play, then training; returns its progress row."""
    samples, stats = self_play(record, run.config, run.net, run.rng)
    run.buffer.add(samples)
    start = time.perf_counter()
    rate = learning_rate_at(run.config, run.iteration)
    for group in run.optimizer.param_groups:
        group["lr"] = rate
    metrics = train_steps(run.config, run.net, run.optimizer, run.buffer, symmetries, run.rng)
    train_seconds = time.perf_counter() - start
    run.iteration += 1
    run.positions += stats.positions
    run.games += stats.games
    row = {"iteration": run.iteration, "positions": run.positions, "games": run.games,
           "selfplay_seconds": round(stats.seconds, 2), "train_seconds": round(train_seconds, 2),
           "games_per_s": stats.games / stats.seconds,
           "positions_per_s": stats.positions / stats.seconds,
           "simulations_per_s": stats.simulations / stats.seconds,
           "network_share": stats.network_seconds / stats.seconds, **metrics}
    logs.write(run.positions, {"learning_rate": rate,
                               **{key: float(value) for key, value in row.items()}})
    logs.row(row)
    return row


def out_of_time(run: AzRun, started: float, elapsed_before: float) -> bool:
    """True once the run's wall-clock budget (``minutes``) is spent."""
    minutes = run.config.minutes
    spent = elapsed_before + time.perf_counter() - started
    return minutes is not None and spent >= minutes * SECONDS_PER_MINUTE


def train(run: AzRun, progress: bool = True) -> AzRun:
    """Train ``run`` up to ``config.iterations`` (or its ``minutes``), checkpointing every
    iteration and evaluating every ``eval_every`` and at the end."""
    config, record = run.config, game_record(run.config.game)
    torch.set_num_threads(config.torch_threads)
    arch = run.net.arch
    symmetries = Symmetries(arch.rows, arch.cols, arch.n_actions)
    positions = quality_subset(record, config.eval_positions)
    logs = Logs(run.directory)
    started, elapsed_before = time.perf_counter(), run.elapsed
    bar = progress_bar(config.iterations, unit="iter", enabled=progress)
    if bar is not None:
        bar.update(run.iteration)
    try:
        while run.iteration < config.iterations and not out_of_time(run, started,
                                                                   elapsed_before):
            row = iterate(run, record, symmetries, logs)
            run.elapsed = elapsed_before + time.perf_counter() - started
            if run.iteration % config.eval_every == 0:
                evaluation(run, record, positions, logs)
            run.save()
            if bar is not None:
                bar.update(1)
                bar.set_postfix(games_s=f"{row['games_per_s']:.1f}", loss=f"{row['loss']:.3f}")
        if not run.history or run.history[-1]["step"] != run.positions:
            evaluation(run, record, positions, logs)
            run.save()
    finally:
        logs.close()
        if bar is not None:
            bar.close()
    return run


def evaluation(run: AzRun, record: Game, positions: list[Position], logs: Logs) -> None:
    """Evaluate the learner, log and keep the record (``eval.json``) and an
    ``iter_N.zip`` of its network."""
    result = evaluate(record, run.config, run.net, positions, run.positions, run.elapsed)
    result["iteration"] = run.iteration
    run.history.append(result)
    write_json(run.directory / EVAL_FILE, run.history)
    logs.write(run.positions, {f"{key}_vs_{spec}": rate for key in ("win_rate", "loss_rate")
                               for spec, rate in result[f"{key}s"].items()}, "eval")
    logs.write(run.positions, {key: value for key, value in result["quality"].items()
                               if key != "positions"}, "eval/quality")
    write_checkpoint(run.directory / CHECKPOINTS / f"iter_{run.iteration}.zip", run.net,
                     run.record())
    print(f"[iteration {run.iteration:>4}, {run.positions:>8} positions, "
          f"{run.elapsed:6.0f} s] {summary(result)}", flush=True)


# -- command line ----------------------------------------------------------------------------

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
    overrides = parse_sets(args.set, config_keys())
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
    return new_run(load_config(args.game, args.config, overrides), args.runs_dir), True


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


__all__ = ["AzConfig", "AzRun", "ReplayBuffer", "Samples", "evaluate", "load_config", "main",
           "self_play", "train"]


if __name__ == "__main__":
    raise SystemExit(main())
