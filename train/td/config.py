"""The TD n-tuple trainer's hyperparameters as data: ``TdConfig``, one YAML file per game.

``train/hyperparams/td_{game}.yaml`` holds the defaults of each game; loading, ``--set``
overrides and the key, type and range checks are ``train.common.config``'s. Each key is
documented under its field below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from boardgym.agents.ntuple.layouts import parse_layout
from boardgym.agents.ntuple.model import MAX_STAGES, NTupleNet, game_module
from boardgym.train.common.config import (
    MAX_GAMES,
    MAX_PLIES,
    RunConfig,
    above,
    between,
    check_opening_plies,
    check_specs,
    ranged,
)

TCL_MODES = ("none", "tcl", "tcl_exp")
"""The step-size modes (``agents.ntuple.network``: ``NO_TCL``, ``TCL``, ``TCL_EXP``)."""
SELECTIONS = ("quality", "win_rate")
"""What ``best.zip`` may be chosen by (``train.td.evaluation.selection_key``)."""
MAX_SELF_PLAY_GAMES = 10 ** 10
"""The most self-play games of a run."""
MAX_CHUNK = 1_000_000
"""The most games of one compiled call."""
MAX_MINUTES = 10 ** 6
"""The longest wall-clock budget, in minutes (about two years)."""
MAX_ALPHA = 100.0
"""The largest step size (``alpha``: 1 moves a value onto its target)."""
MAX_EVAL_POSITIONS = 1_000_000


@dataclass
class TdConfig(RunConfig):
    """Everything a TD n-tuple run depends on (besides the code): the keys of ``RunConfig``
    (``game``, ``seed``: every random stream; ``env_kwargs``: the board options) and those
    below. Each numeric key's range is declared on its field (``common.ranged``)."""

    HYPERPARAMS: ClassVar[str] = "td_{game}.yaml"
    RESUMABLE_KEYS: ClassVar[frozenset[str]] = frozenset({
        "games", "minutes", "eval_every", "eval_positions", "eval_positions_file", "eval_games",
        "eval_opponents", "eval_openings", "eval_random_moves", "eval_noisy_opponents",
        "checkpoint_every", "patience"})

    # -- the network -----------------------------------------------------------------------
    layout: str = ""
    """The tuples: a layout of the game's (Reversi ``edax``, four-in-a-row ``thill70``,
    tic-tac-toe ``board``, ``lines``) or ``snakes:N:L:SEED`` (``agents.ntuple.layouts``);
    empty: the game's default."""
    values: int = ranged(3, between(3, 4))
    """Codes per cell: 3 (empty, own, other) or 4 (four-in-a-row: the empty cells where a
    token lands marked apart)."""
    stages: int = ranged(1, between(1, MAX_STAGES))
    """Sets of tables, one per equal band of the game's moves (1: one set for the game)."""

    # -- the length ------------------------------------------------------------------------
    games: int = ranged(1_000_000, between(1, MAX_SELF_PLAY_GAMES))
    """Self-play games to train for."""
    minutes: float | None = ranged(None, above(0.0, MAX_MINUTES))
    """Wall-clock budget in minutes (None: none); the run stops after the chunk that passes
    it. The schedules of ``alpha`` and ``epsilon`` run over ``games``, or over the minutes
    when they end the run first (the fraction done is the larger of the two)."""
    chunk_games: int = ranged(2_000, between(1, MAX_CHUNK))
    """Games of one compiled call (the schedules step once a chunk)."""

    # -- learning --------------------------------------------------------------------------
    alpha: float = ranged(1.0, above(0.0, MAX_ALPHA))
    """Step size at the start: an update moves the value by ``alpha`` times the error
    (the network's step per entry is ``alpha / images``)."""
    alpha_final: float = ranged(0.1, above(0.0, MAX_ALPHA))
    """Step size at the end; in between it falls exponentially."""
    trace_decay: float = ranged(0.0, between(0.0, 0.99))
    """TD(lambda)'s lambda: each update also moves the earlier afterstates by ``lambda ** k``
    (0: TD(0))."""
    trace_cut: float = ranged(0.1, above(0.0, 0.99))
    """The horizon of the traces: afterstates with ``lambda ** k`` under this are left out."""
    tcl: str = "none"
    """``none``; ``tcl``: temporal coherence, a rate per weight ``|N| / A`` of its past
    changes; ``tcl_exp``: the rate ``exp(2.7 (|N| / A - 1))``."""
    epsilon: float = ranged(0.1, between(0.0, 1.0))
    """Share of uniformly random moves at the start (nothing learns toward them)."""
    epsilon_final: float = ranged(0.1, between(0.0, 1.0))
    """Share of random moves at the end; in between it falls linearly."""
    opening_plies: list[int] | None = ranged(None, between(0, MAX_PLIES))  # noqa: RUF009
    """``[low, high]``: each game starts with a uniformly drawn number of random plies in
    that range (nothing learned from them); None: from the start position."""

    # -- evaluations and checkpoints -------------------------------------------------------
    eval_every: int = ranged(200_000, between(1, MAX_SELF_PLAY_GAMES))
    """Self-play games between evaluations (the first after the first chunk past it)."""
    checkpoint_every: int = ranged(100_000, between(1, MAX_SELF_PLAY_GAMES))
    """Self-play games between writes of ``last.zip`` (also at every evaluation and at the
    end): what Ctrl-C keeps."""
    eval_positions: int = ranged(1000, between(0, MAX_EVAL_POSITIONS))
    """Positions of the selection part of the game's labelled set judged per evaluation
    (0: none)."""
    eval_positions_file: str | None = None
    """A labelled set to judge instead (``shipped:NAME`` or a path, every position of it a
    selection position); None: the selection part of the game's shipped set."""
    eval_games: int = ranged(40, between(2, MAX_GAMES))
    """Games per ladder opponent per evaluation (even: both seats)."""
    eval_opponents: list[str] = field(default_factory=lambda: ["random"])
    """The ladder of agent specs."""
    eval_openings: int = ranged(0, between(0, MAX_PLIES))
    """Random plies before each ladder game (fair pairs, seats swapped, from the selection
    stream); 0: from the start, seats alternating."""
    eval_random_moves: float = ranged(0.0, between(0.0, 0.5))
    """The chance of a random move before each move of either side in the noisy ladder."""
    eval_noisy_opponents: list[str] = field(default_factory=list)
    """The noisy ladder: agent specs played with ``eval_random_moves`` (empty: none)."""
    selection: str = "quality"
    """What ``best.zip`` is chosen by: ``quality`` (the kept share, then the ladder's score,
    then the noisy ladder's) or ``win_rate`` (the ladder's score first)."""
    patience: int = ranged(0, between(0, MAX_SELF_PLAY_GAMES))
    """Stop after this many evaluations without a new best (0: never)."""
    min_fraction: float = ranged(0.5, between(0.0, 1.0))
    """``patience`` counts only once this share of the run is done."""

    def validate(self) -> None:
        """The keys with a set of choices, the keys that go together, the network.

        Raises:
            ValueError: naming the key to fix.
        """
        check_opening_plies(self.opening_plies)
        module = game_module(self.game)
        self.layout = self.layout or module.DEFAULT_LAYOUT
        if self.tcl not in TCL_MODES:
            raise ValueError(f"tcl must be one of {TCL_MODES}, got {self.tcl!r}; fix it with "
                             "--set tcl=none")
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {self.selection!r}; "
                             "fix it with --set selection=quality")
        if self.values not in module.VALUES:
            raise ValueError(f"values must be one of {module.VALUES} for {self.game}, got "
                             f"{self.values}; fix it with --set values={module.VALUES[0]}")
        if self.eval_games % 2:
            raise ValueError(f"eval_games must be even (both seats), got {self.eval_games}; "
                             "fix it with --set eval_games=...")
        for key in ("eval_opponents", "eval_noisy_opponents"):
            check_specs(self.game, key, getattr(self, key))
        if self.eval_noisy_opponents and not self.eval_random_moves:
            raise ValueError("eval_noisy_opponents need eval_random_moves > 0; fix it with "
                             "--set eval_random_moves=0.1")
        parse_layout(self.layout, module.board(self.env_kwargs), module.LAYOUTS)
        self.network()

    def network(self) -> NTupleNet:
        """A zero network of this config (checks its size)."""
        return NTupleNet.from_layout(self.game, self.env_kwargs, self.layout, self.values,
                                     self.stages)


__all__ = ["TCL_MODES", "TdConfig"]
