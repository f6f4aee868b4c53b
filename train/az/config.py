"""The AlphaZero trainer's hyperparameters as data: ``AzConfig``, one YAML file per game.

``train/hyperparams/az_{game}.yaml`` holds the defaults of each game; the loading
(``train.common.config.load_config(AzConfig, game, ...)``), the ``--set`` overrides and the
key and type checks are ``train.common.config``'s. Each key is documented under its field
below.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

from boardgym.agents import solvers
from boardgym.agents.az.network import Architecture, check_precision
from boardgym.agents.az.search import METHODS, SearchConfig
from boardgym.agents.devices import DEFAULT_DEVICE, check_device
from boardgym.envs.games import game as game_record
from boardgym.train.common.commands import MAX_WORKERS
from boardgym.train.common.config import (
    MAX_BLOCKS,
    MAX_CHANNELS,
    MAX_GAMES,
    MAX_PLIES,
    MAX_RATE,
    MAX_SEARCH_NODES,
    MAX_SIMULATIONS,
    MAX_TORCH_THREADS,
    MAX_WEIGHT,
    MAX_WIDTH,
    RunConfig,
    above,
    between,
    check_lr_schedule,
    check_opening_plies,
    check_specs,
    ranged,
)

NETWORK_KEYS = ("channels", "blocks", "hidden")
"""The keys that size the network (None: the game's ``Game.network``)."""
SEARCH = SearchConfig()
"""The search's own defaults, the defaults of the self-play search keys."""
MAX_ITERATIONS = 10 ** 7
"""The most iterations of a run (and between evaluations)."""
MAX_MINUTES = 10 ** 6
"""The longest wall-clock budget, in minutes (about two years)."""
MAX_GAMES_AT_ONCE = 4_096
"""The most self-play games of one iteration (played at once: the search batch)."""
MAX_CONSIDERED = 1_024
"""The most root actions Gumbel's sequential halving starts with."""
MAX_BUFFER = 4_000_000
"""The most positions in the replay buffer: about 2 GB on Reversi, saved in every
``last.zip``."""
MAX_BATCH = 65_536
"""The most positions per gradient step."""
MAX_TRAIN_STEPS = 100_000
"""The most gradient steps per iteration."""
MAX_EVAL_POSITIONS = 1_000_000
"""The most labelled positions judged per evaluation."""


@dataclass
class AzConfig(RunConfig):
    """Everything an az training run depends on (besides the code): the keys of
    ``RunConfig`` (``game``, ``seed``: the self-play noise, the buffer sampling and torch;
    ``env_kwargs``: the board options) and those below. Each numeric key's range (its
    lowest and highest value) is declared on its field (``common.ranged``)."""

    HYPERPARAMS: ClassVar[str] = "az_{game}.yaml"
    RESUMABLE_KEYS: ClassVar[frozenset[str]] = frozenset({
        "iterations", "minutes", "eval_every", "eval_positions", "eval_games",
        "eval_opponents", "eval_simulations", "eval_openings", "torch_threads", "precision",
        "workers", "device"})

    # -- the network and the length ------------------------------------------------------
    channels: int | None = ranged(None, between(1, MAX_CHANNELS))
    """The network's convolution channels; None: the game's ``Game.network``."""
    blocks: int | None = ranged(None, between(1, MAX_BLOCKS))
    """The network's residual blocks; None: the game's ``Game.network``."""
    hidden: int | None = ranged(None, between(1, MAX_WIDTH))
    """The value head's hidden units; None: the game's ``Game.network``."""
    iterations: int = ranged(100, between(1, MAX_ITERATIONS))
    """Iterations to train for (each: self-play, then training steps)."""
    minutes: float | None = ranged(None, above(0.0, MAX_MINUTES))
    """Wall-clock budget in minutes (None: none); the run stops after the iteration that
    passes it."""

    # -- self-play -------------------------------------------------------------------------
    games_per_iteration: int = ranged(64, between(1, MAX_GAMES_AT_ONCE))
    """Self-play games per iteration, all played at once (the search batch)."""
    simulations: int = ranged(SEARCH.simulations, between(1, MAX_SIMULATIONS))
    """Search simulations per self-play move."""
    method: str = SEARCH.method
    """``"gumbel"`` or ``"puct"`` (``agents.az.search``)."""
    considered: int = ranged(SEARCH.considered, between(1, MAX_CONSIDERED))
    """Gumbel: root actions sequential halving starts with."""
    gumbel_scale: float = ranged(SEARCH.gumbel_scale, between(0.0, MAX_WEIGHT))
    """Gumbel: the root noise's scale (exploration in self-play)."""
    c_puct: float = ranged(SEARCH.c_puct, above(0.0, MAX_WEIGHT))
    """PUCT's exploration constant."""
    dirichlet_alpha: float = ranged(SEARCH.dirichlet_alpha, above(0.0, MAX_WEIGHT))
    """PUCT's root Dirichlet noise concentration."""
    dirichlet_fraction: float = ranged(SEARCH.dirichlet_fraction, between(0.0, 1.0))
    """PUCT's share of the root noise in the root priors."""
    temperature_moves: int = ranged(8, between(0, MAX_PLIES))
    """PUCT: the first moves of each game are sampled from the visit distribution (later
    ones are the most visited)."""
    leaf_solver: bool = False
    """Self-play's search asks the game's exact solver for positions near the end
    (``agents.solvers.leaf_values``): their values are exact, not the network's."""
    opening_plies: list[int] | None = ranged(None, between(0, MAX_PLIES))  # noqa: RUF009
    """``[low, high]``: each self-play game starts from a random opening of that many plies
    (``train.match.openings.unfinished_opening``), so the network also meets the positions
    its own play avoids; None: every game from the start position."""

    # -- learning --------------------------------------------------------------------------
    buffer_size: int = ranged(50_000, between(1, MAX_BUFFER))
    """Positions kept in the replay buffer (the newest)."""
    batch_size: int = ranged(256, between(1, MAX_BATCH))
    """Positions per gradient step."""
    train_steps: int = ranged(50, between(1, MAX_TRAIN_STEPS))
    """Gradient steps per iteration."""
    learning_rate: float = ranged(1e-3, above(0.0, MAX_RATE))
    """AdamW's learning rate (at the start, with ``lr_schedule: linear``)."""
    lr_schedule: str = "constant"
    """``"constant"``, or ``"linear"``: iteration ``i`` (counted from 0) trains at
    ``learning_rate * (1 - i / iterations)``, falling toward 0 at ``iterations``
    (``train.az.learn.learning_rate_at``). A run bound by ``minutes`` still falls over
    ``iterations``: set it to the iterations the minutes hold (``--resume`` with other
    ``iterations`` rescales the rates still to come)."""
    weight_decay: float = ranged(1e-4, between(0.0, 1.0))
    """AdamW's weight decay."""
    value_weight: float = ranged(1.0, between(0.0, MAX_WEIGHT))
    """The value loss's weight against the policy loss."""
    value_mix: float = ranged(0.0, between(0.0, 1.0))
    """The search's share of each value target, in ``[0, 1]``: a position's target is
    ``(1 - value_mix) * outcome + value_mix * searched`` (the game's result, and the
    self-play search's value of the move it played there: its Q at the root; both for the
    side to move); 0: the outcome alone."""
    augment: bool = True
    """Draw a random board symmetry per training sample."""

    # -- evaluations -----------------------------------------------------------------------
    eval_every: int = ranged(5, between(1, MAX_ITERATIONS))
    """Iterations between evaluations."""
    eval_positions: int = ranged(500, between(1, MAX_EVAL_POSITIONS))
    """Labelled positions judged per evaluation (a fixed subset)."""
    eval_games: int = ranged(40, between(1, MAX_GAMES))
    """Games per ladder opponent per evaluation (even: both seatings)."""
    eval_opponents: list[str] = field(default_factory=lambda: ["random"])
    """The fixed ladder of agent specs."""
    eval_simulations: int = ranged(0, between(0, MAX_SIMULATIONS))
    """Simulations of the evaluated player (0: the raw policy)."""
    eval_openings: int = ranged(0, between(0, MAX_PLIES))
    """Random plies before each ladder game (fair openings; 0: none)."""

    # -- the machine and the start ---------------------------------------------------------
    torch_threads: int = ranged(1, between(1, MAX_TORCH_THREADS, "this machine's CPUs"))
    """CPU threads torch may use (in the learner and in each self-play worker)."""
    workers: int = ranged(1, between(1, MAX_WORKERS, "MAX_WORKERS"))
    """Self-play workers: an iteration's games are split into this many shards played at
    once, by local processes or Ray actors (``--workers K [--backend ray]``); the games
    depend on the seed and this count, not on where they run (``train.az.workers``)."""
    device: str = DEFAULT_DEVICE
    """Where the learner's network trains and computes for the evaluations and, with one
    worker, for self-play (worker processes and Ray actors compute on their CPUs)
    (``agents.devices``): ``auto`` (a CUDA GPU when torch sees one, else the CPU),
    ``cpu``, ``cuda`` or ``cuda:N``; the run records the device it resolved to, and
    ``--resume`` may change it."""
    precision: str = "float32"
    """The number format the network computes in, in self-play, training and the
    evaluations (``agents.az.network.PRECISIONS``): ``float32``, or ``bfloat16`` autocast
    (weights, optimizer and saved files stay float32)."""
    init_from: str | None = None
    """An az checkpoint of the same game and board whose weights start the run (a fresh
    optimizer and an empty replay buffer: a new run that goes on from a shipped network);
    a smaller network than the config's grows to its sizes (``agents.az.network.grow``: it
    plays as the file does at the start); None: random weights."""

    def validate(self) -> None:
        """The keys with a set of choices, the keys that go together, and the board
        options (each key's range is checked before: ``common.ranged``).

        Raises:
            ValueError: naming the key to fix.
        """
        check_lr_schedule(self.lr_schedule)
        check_opening_plies(self.opening_plies)
        check_precision(self.precision)
        check_device(self.device)
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}; fix it "
                             "with --set method=gumbel")
        if self.eval_games % 2:
            raise ValueError(f"eval_games must be even (both seatings), got {self.eval_games}; "
                             "fix it with --set eval_games=...")
        if not self.eval_opponents:
            raise ValueError("eval_opponents needs at least one spec; fix it with --set "
                             "eval_opponents=[random]")
        check_specs(self.game, "eval_opponents", self.eval_opponents)
        nodes = self.games_per_iteration * self.simulations
        if nodes > MAX_SEARCH_NODES:
            raise ValueError(f"games_per_iteration * simulations = {nodes} search nodes at "
                             f"once, more than {MAX_SEARCH_NODES} (memory); fix it with --set "
                             "games_per_iteration=... or --set simulations=...")
        if self.leaf_solver and solvers.leaf_values(self.game) is None:
            raise ValueError(f"leaf_solver: {self.game} has no exact solver; --set "
                             "leaf_solver=false")
        self.search_config()  # checks the search keys
        self.architecture()  # checks the board options

    def search_config(self) -> SearchConfig:
        """The self-play search's settings."""
        return SearchConfig(simulations=self.simulations, method=self.method,
                            considered=self.considered, gumbel_scale=self.gumbel_scale,
                            c_puct=self.c_puct, dirichlet_alpha=self.dirichlet_alpha,
                            dirichlet_fraction=self.dirichlet_fraction)

    def architecture(self) -> Architecture:
        """The network of this config on its board."""
        record = game_record(self.game)
        size = dataclasses.replace(record.network, **{
            name: getattr(self, name) for name in NETWORK_KEYS if getattr(self, name) is not None})
        start = record.rules.initial_state(**self.env_kwargs)
        return Architecture.of(record.rules, start, size)

