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
from boardgym.envs.games import game as game_record
from boardgym.train.common.config import RunConfig, check_opening_plies, check_run_keys

NETWORK_KEYS = ("channels", "blocks", "hidden")
"""The keys that size the network (None: the game's ``Game.network``)."""
SEARCH = SearchConfig()
"""The search's own defaults, the defaults of the self-play search keys."""


@dataclass
class AzConfig(RunConfig):
    """Everything an az training run depends on (besides the code): the keys of
    ``RunConfig`` (``game``, ``seed``: the self-play noise, the buffer sampling and torch;
    ``env_kwargs``: the board options) and those below."""

    HYPERPARAMS: ClassVar[str] = "az_{game}.yaml"
    POSITIVE_KEYS: ClassVar[tuple[str, ...]] = (
        "iterations", "games_per_iteration", "simulations", "considered", "buffer_size",
        "batch_size", "train_steps", "eval_every", "eval_positions", "eval_games",
        "torch_threads", *NETWORK_KEYS)
    NON_NEGATIVE_KEYS: ClassVar[tuple[str, ...]] = (
        "temperature_moves", "eval_simulations", "eval_openings")
    RESUMABLE_KEYS: ClassVar[frozenset[str]] = frozenset({
        "iterations", "minutes", "eval_every", "eval_positions", "eval_games",
        "eval_opponents", "eval_simulations", "eval_openings", "torch_threads", "precision"})

    # -- the network and the length ------------------------------------------------------
    channels: int | None = None
    """The network's convolution channels; None: the game's ``Game.network``."""
    blocks: int | None = None
    """The network's residual blocks; None: the game's ``Game.network``."""
    hidden: int | None = None
    """The value head's hidden units; None: the game's ``Game.network``."""
    iterations: int = 100
    """Iterations to train for (each: self-play, then training steps)."""
    minutes: float | None = None
    """Wall-clock budget in minutes (None: none); the run stops after the iteration that
    passes it."""

    # -- self-play -------------------------------------------------------------------------
    games_per_iteration: int = 64
    """Self-play games per iteration, all played at once (the search batch)."""
    simulations: int = SEARCH.simulations
    """Search simulations per self-play move."""
    method: str = SEARCH.method
    """``"gumbel"`` or ``"puct"`` (``agents.az.search``)."""
    considered: int = SEARCH.considered
    """Gumbel: root actions sequential halving starts with."""
    gumbel_scale: float = SEARCH.gumbel_scale
    """Gumbel: the root noise's scale (exploration in self-play)."""
    c_puct: float = SEARCH.c_puct
    """PUCT's exploration constant."""
    dirichlet_alpha: float = SEARCH.dirichlet_alpha
    """PUCT's root Dirichlet noise concentration."""
    dirichlet_fraction: float = SEARCH.dirichlet_fraction
    """PUCT's share of the root noise in the root priors."""
    temperature_moves: int = 8
    """PUCT: the first moves of each game are sampled from the visit distribution (later
    ones are the most visited)."""
    leaf_solver: bool = False
    """Self-play's search asks the game's exact solver for positions near the end
    (``agents.solvers.leaf_values``): their values are exact, not the network's."""
    opening_plies: list[int] | None = None
    """``[low, high]``: each self-play game starts from a random opening of that many plies
    (``train.match.openings.unfinished_opening``), so the network also meets the positions
    its own play avoids; None: every game from the start position."""

    # -- learning --------------------------------------------------------------------------
    buffer_size: int = 50_000
    """Positions kept in the replay buffer (the newest)."""
    batch_size: int = 256
    """Positions per gradient step."""
    train_steps: int = 50
    """Gradient steps per iteration."""
    learning_rate: float = 1e-3
    """AdamW's learning rate (at the start, with ``lr_schedule: linear``)."""
    lr_schedule: str = "constant"
    """``"constant"``, or ``"linear"``: iteration ``i`` (counted from 0) trains at
    ``learning_rate * (1 - i / iterations)``, falling toward 0 at ``iterations``
    (``train.az.learn.learning_rate_at``). A run bound by ``minutes`` still falls over
    ``iterations``: set it to the iterations the minutes hold (``--resume`` with other
    ``iterations`` rescales the rates still to come)."""
    weight_decay: float = 1e-4
    """AdamW's weight decay."""
    value_weight: float = 1.0
    """The value loss's weight against the policy loss."""
    value_mix: float = 0.0
    """The search's share of each value target, in ``[0, 1]``: a position's target is
    ``(1 - value_mix) * outcome + value_mix * searched`` (the game's result, and the
    self-play search's value of the move it played there: its Q at the root; both for the
    side to move); 0: the outcome alone."""
    augment: bool = True
    """Draw a random board symmetry per training sample."""

    # -- evaluations -----------------------------------------------------------------------
    eval_every: int = 5
    """Iterations between evaluations."""
    eval_positions: int = 500
    """Labelled positions judged per evaluation (a fixed subset)."""
    eval_games: int = 40
    """Games per ladder opponent per evaluation (even: both seatings)."""
    eval_opponents: list[str] = field(default_factory=lambda: ["random"])
    """The fixed ladder of agent specs."""
    eval_simulations: int = 0
    """Simulations of the evaluated player (0: the raw policy)."""
    eval_openings: int = 0
    """Random plies before each ladder game (fair openings; 0: none)."""

    # -- the machine and the start ---------------------------------------------------------
    torch_threads: int = 1
    """CPU threads torch may use."""
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
        """The keys with a range or a set of choices, and the board options.

        Raises:
            ValueError: naming the key to fix.
        """
        check_run_keys(self.torch_threads, self.lr_schedule)
        check_opening_plies(self.opening_plies)
        check_precision(self.precision)
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.minutes is not None and self.minutes <= 0:
            raise ValueError(f"minutes must be positive, got {self.minutes}")
        if not 0 <= self.value_mix <= 1:
            raise ValueError(f"value_mix must be in [0, 1], got {self.value_mix}; fix it with "
                             "--set value_mix=0.5 (0: the outcome alone)")
        if self.eval_games % 2:
            raise ValueError(f"eval_games must be even (both seatings), got {self.eval_games}; "
                             "fix it with --set eval_games=...")
        if not self.eval_opponents:
            raise ValueError("eval_opponents needs at least one spec, e.g. --set "
                             "eval_opponents=[random]")
        if self.leaf_solver and solvers.leaf_values(self.game) is None:
            raise ValueError(f"leaf_solver: {self.game} has no exact solver here (or numba is "
                             "missing: pip install -e \".[solvers]\"); set leaf_solver=false")
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

