"""MaskablePPO's hyperparameters as data: ``TrainConfig``, one YAML file per game.

``train/hyperparams/{game}.yaml`` holds the defaults of each game; the loading, the
``--set`` overrides and the key and type checks are ``train.common.config``'s. Each key is
documented under its field below.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from boardgym.agents.az.network import check_precision
from boardgym.agents.devices import DEFAULT_DEVICE, check_device
from boardgym.agents.ppo.planes import FEATURE_ACTIVATIONS
from boardgym.agents.ppo.policies import MAX_MEMBERS
from boardgym.envs.games import game as game_record
from boardgym.train.common import config as common
from boardgym.train.common.config import (
    MAX_BLOCKS,
    MAX_CHANNELS,
    MAX_GAMES,
    MAX_PASSES,
    MAX_PLIES,
    MAX_RATE,
    MAX_SEARCH_NODES,
    MAX_SIMULATIONS,
    MAX_STEPS,
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
    ranged_list,
)
from boardgym.train.match.results import PAIR

VECTORIZATIONS = ("auto", "vector", "dummy")
PRETRAINED = "pretrained"
"""``teacher: pretrained``: the learner's own start, frozen (``train.teacher.FrozenPolicy``)."""
MAX_ENVS = 4_096
"""The most parallel envs (``n_envs``)."""
MAX_ROLLOUT = 2 ** 20
"""The most positions of one rollout (``n_steps * n_envs``): about 1.5 GB of rollout buffer
on Reversi. Caps minibatch sizes and the teacher's positions too."""
MAX_SNAPSHOTS = 256
"""The most snapshots in self-play's pool (each a network in memory)."""
MAX_LINE = 16
"""The longest line ``threats`` counts."""
MAX_POSITIONS = 1_000_000
"""The most labelled positions an evaluation judges (``eval_quality``)."""
MAX_PATIENCE = 1_000
"""The most evaluations without a new best ``patience`` waits for."""
MAX_REHEARSAL = 10_000
"""The most rehearsal minibatch steps before each rollout."""


@dataclass
class TrainConfig(RunConfig):
    """Everything a MaskablePPO training run depends on (besides the code): the keys of
    ``RunConfig`` (``game``, ``seed``, ``env_kwargs``) and those below. Each numeric key's
    range (its lowest and highest value) is declared on its field (``common.ranged``)."""

    ENV_ARGUMENTS: ClassVar[tuple[str, ...]] = ("first_player", "illegal_action", "reward")
    RESUMABLE_KEYS: ClassVar[frozenset[str]] = frozenset({
        "total_timesteps", "eval_every", "eval_games", "eval_opponents", "checkpoint_every",
        "torch_threads", "snapshot_every", "snapshot_margin", "league_games",
        "max_snapshots", "snapshot_weight", "eval_quality", "patience", "eval_openings",
        "precision", "device"})

    # -- opponents and length ------------------------------------------------------------
    opponents: list[str] = field(default_factory=lambda: ["random"])
    """Agent specs the learner plays; one is drawn per episode."""
    opponent_weights: list[float] | None = ranged(None, between(0.0, MAX_WEIGHT))  # noqa: RUF009
    """Relative draw weights of ``opponents`` (None: uniform)."""
    total_timesteps: int = ranged(100_000, between(1, MAX_STEPS))
    """Learner steps to train for."""
    n_envs: int = ranged(8, between(1, MAX_ENVS))
    """Parallel envs."""
    n_steps: int = ranged(128, between(1, MAX_ROLLOUT))
    """Steps per env per rollout."""

    # -- MaskablePPO ---------------------------------------------------------------------
    batch_size: int = ranged(256, between(2, MAX_ROLLOUT))
    """MaskablePPO's minibatch size."""
    n_epochs: int = ranged(4, between(1, MAX_PASSES))
    """MaskablePPO's passes over each rollout."""
    learning_rate: float = ranged(3e-4, between(0.0, MAX_RATE))
    """MaskablePPO's learning rate (at the start, with ``lr_schedule: linear``); 0: the
    weights stay as they start (the run still plays, evaluates and checkpoints)."""
    lr_schedule: str = "constant"
    """``"constant"`` or ``"linear"`` (from ``learning_rate`` down to 0 at
    ``total_timesteps``)."""
    gamma: float = ranged(0.99, above(0.0, 1.0))
    """MaskablePPO's discount factor."""
    gae_lambda: float = ranged(0.95, between(0.0, 1.0))
    """MaskablePPO's GAE lambda."""
    clip_range: float = ranged(0.2, above(0.0, 1.0))
    """MaskablePPO's clipping of the policy ratio."""
    ent_coef: float = ranged(0.01, between(0.0, MAX_WEIGHT))
    """MaskablePPO's entropy bonus weight."""
    vf_coef: float = ranged(0.5, between(0.0, MAX_WEIGHT))
    """MaskablePPO's value loss weight."""
    max_grad_norm: float = ranged(0.5, above(0.0, MAX_WEIGHT))
    """MaskablePPO's gradient clipping norm."""

    # -- the network ---------------------------------------------------------------------
    channels: int = ranged(32, between(1, MAX_CHANNELS))
    """``BoardCNN``'s convolution channels (with ``tower``: the tower's)."""
    blocks: int = ranged(2, between(0, MAX_BLOCKS))
    """``BoardCNN``'s residual blocks (with ``tower``: the tower's, at least 1)."""
    features_dim: int = ranged(256, between(1, MAX_WIDTH))
    """``BoardCNN``'s feature layer width."""
    mobility: bool = False
    """``BoardCNN`` also reads Reversi's legal-move planes as inputs."""
    features_activation: str = "relu"
    """``BoardCNN``'s feature activation: ``"relu"`` or ``"tanh"``
    (``agents.ppo.planes.FEATURE_ACTIVATIONS``)."""
    head_planes: int = ranged(0, between(0, MAX_CHANNELS))
    """``BoardCNN``'s 1x1 squeeze before the feature layer (0: none)."""
    threats: int = ranged(0, between(0, MAX_LINE))
    """``BoardCNN``'s threat planes as extra inputs: the empty cells where one more stone
    completes a line of this many (four-in-a-row: 4); 0: none."""
    windows: bool = False
    """With ``threats``, ``BoardCNN``'s window planes as extra inputs: per side, the open
    lines of that length through each empty cell holding 2 and ``threats - 1`` of its
    stones (``agents.ppo.planes.window_counts``)."""
    parity: bool = False
    """``BoardCNN``'s parity plane as an extra input: the rows whose threats favour the side
    to move in four-in-a-row (``agents.ppo.planes.parity_plane``)."""
    landing: bool = False
    """``BoardCNN``'s feature layer also reads the tower at each column's landing cell, the
    cell each four-in-a-row move fills (``agents.ppo.planes.landing_features``)."""
    gated: bool = False
    """Each of ``BoardCNN``'s residual blocks starts with its branch switched off by a
    learned scalar gate at 0 (``agents.layers.ResidualBlock``), so that deep towers train."""
    symmetric: bool = False
    """The policy sees every board in one canonical orientation
    (``agents.ppo.policies.SymmetricPolicy``): mirror-image positions share weights."""
    average_symmetries: bool = False
    """The policy averages its logits and values over every symmetric image of the board
    (``agents.ppo.policies.AveragedPolicy``; one network pass per image); not with
    ``symmetric``."""
    members: int = ranged(1, between(1, MAX_MEMBERS))
    """With ``average_symmetries``, more than 1: the policy is an ensemble of this many such
    networks, each pretrained on its own (``agents.ppo.policies.EnsemblePolicy``: the mean of
    their logits and values; a pass of each per board)."""
    tower: bool = False
    """The policy is an az network instead (``agents.ppo.policies.TowerPolicy``: a residual
    tower of ``channels`` and ``blocks``, a policy head and a tanh value head with a hidden
    layer of ``tower_hidden``), so that ``init_from`` may be an az checkpoint (``boardgym
    az``) of those sizes or smaller (grown) and PPO goes on from its raw policy;
    ``BoardCNN``'s options, the symmetric policies and ``net_arch`` do not apply."""
    tower_hidden: int = ranged(128, between(1, MAX_WIDTH))
    """With ``tower``, the value head's hidden units."""
    precision: str = "float32"
    """With ``tower``, the number format its layers, and those of the frozen start with
    ``teacher: pretrained``, compute in during the run (``agents.az.network.PRECISIONS``:
    ``float32``, or ``bfloat16`` autocast; the weights, the optimizer and the checkpoints
    stay float32, and a loaded policy plays in float32)."""
    net_arch: list[int] = ranged_list(lambda: [128], between(1, MAX_WIDTH))  # noqa: RUF009
    """Hidden layers of the policy and value heads after the extractor."""

    # -- evaluations and checkpoints -----------------------------------------------------
    eval_every: int = ranged(50_000, between(1, MAX_STEPS))
    """Timesteps between evaluations against ``eval_opponents``."""
    eval_start: bool = False
    """Also evaluate the network a new run starts from (pretrained, or ``init_from``) at
    step 0, so that ``best.zip`` may be it."""
    eval_games: int = ranged(100, between(1, MAX_GAMES))
    """Games per opponent in each evaluation (first player random per game, or with
    ``eval_openings`` two games per opening, seats swapped; then even)."""
    eval_opponents: list[str] = field(default_factory=lambda: ["random"])
    """Agent specs the learner is evaluated against."""
    eval_openings: int = ranged(0, between(0, MAX_PLIES))
    """Plies of the fair random openings of the evaluations and self-play's league checks
    (``train.match.openings``, as ``boardgym evaluate --openings N``: games ``2k`` and
    ``2k + 1`` start from opening ``k``, the learner first in the even game;
    ``eval_games`` and ``league_games`` must then be even); 0: every game from the start
    position, the first player drawn per game."""
    checkpoint_every: int = ranged(25_000, between(1, MAX_STEPS))
    """Timesteps between checkpoints (``checkpoints/last.zip``)."""
    torch_threads: int = ranged(1, between(1, MAX_TORCH_THREADS, "this machine's CPUs"))
    """CPU threads torch may use."""
    device: str = DEFAULT_DEVICE
    """Where torch trains (``agents.devices``): ``auto`` (a CUDA GPU when torch sees
    one, else the CPU), ``cpu``, ``cuda`` or ``cuda:N``; the run records the device it
    resolved to, and ``--resume`` may change it."""
    vectorization: str = "auto"
    """``"auto"`` or ``"vector"`` (the same: the batched vector env, see
    ``train.ppo.environments``) or ``"dummy"`` (SB3's DummyVecEnv over the single env)."""

    # -- self-play's league --------------------------------------------------------------
    snapshot_every: int = ranged(50_000, between(1, MAX_STEPS))
    """Self-play only: timesteps between league checks."""
    snapshot_margin: float = ranged(0.6, between(0.0, 1.0))
    """Self-play only: the win rate against the league pool above which the learner's
    current weights join the pool as a frozen snapshot."""
    league_games: int = ranged(50, between(1, MAX_GAMES))
    """Self-play only: games per pool member in a league check."""
    max_snapshots: int = ranged(8, between(1, MAX_SNAPSHOTS))
    """Self-play only: the most recent snapshots kept in the pool."""
    snapshot_weight: float = ranged(1.0, above(0.0, MAX_WEIGHT))
    """Self-play only: the draw weight the snapshots share (split equally among the
    snapshots in the pool), next to ``opponent_weights``."""
    opening_plies: list[int] | None = ranged(None, between(0, MAX_PLIES))  # noqa: RUF009
    """``[low, high]``: every training game starts from a random opening of ``low`` to
    ``high`` plies (``train.match.openings.unfinished_opening``, drawn from the env's seed;
    never a finished position); None: from the start position."""

    # -- model selection -----------------------------------------------------------------
    eval_quality: int = ranged(0, between(0, MAX_POSITIONS))
    """At each evaluation, judge the learner (greedy) on this many positions of the
    selection part of the game's labelled set (``quality.agreement.selection_positions``);
    ``best.zip`` is then the snapshot with the best quality score. 0: off."""
    eval_quality_positions: str | None = None
    """A labelled set (``boardgym positions``) whose first ``eval_quality`` positions the
    evaluations judge instead (a larger set, more decisive positions: a steadier choice of
    ``best.zip``); the pretraining never trains on them. None: the shipped set's selection
    part. Unjudged when ``eval_quality`` is 0 (a YAML naming a set can still run with
    ``--eval-quality 0``); the pretraining leaves them out all the same."""
    patience: int = ranged(0, between(0, MAX_PATIENCE))
    """Stop the run after this many evaluations without a new best (0: never)."""
    eval_bar: dict[str, float] = field(default_factory=dict)
    """``{spec: win rate}`` of eval opponents: evaluations where the learner's win rate
    against one of them is below its bar rank below every evaluation that holds them all
    (``train.common.selection.selection_key``); ``{}``: no bar."""
    bar_games: int = ranged(0, between(0, MAX_GAMES))
    """The bar is judged on games of its own, this many against each bar opponent from the
    start position, the first player random per game (what ``boardgym evaluate`` plays, the
    measure of the shipped checkpoints' bars), not on the eval games; 0: on the eval
    games."""

    # -- kickstarting ----------------------------------------------------------------------
    teacher: str | None = None
    """What the learner is distilled toward after each rollout (``train.ppo.teacher``): an
    az checkpoint (``boardgym az``) of the same game and board, or a player spec
    (``alphabeta:4``: its moves on ``teacher_positions`` positions a rollout), or
    ``pretrained``: the learner's own policy as PPO starts, frozen (a KL penalty toward what
    ``init_from`` and the pretraining gave); None: none."""
    teacher_coef: float = ranged(1.0, between(0.0, MAX_WEIGHT))
    """The distillation weight at step 0."""
    teacher_steps: int = ranged(1_000_000, between(1, MAX_STEPS))
    """The step where the distillation weight has fallen linearly to 0."""
    teacher_epochs: int = ranged(1, between(1, MAX_PASSES))
    """Passes over each rollout's positions in the distillation."""
    teacher_simulations: int = ranged(0, between(0, MAX_SIMULATIONS))
    """With an az teacher (a player teacher ignores it), 0: the targets are the teacher
    network's raw policy and value on every position of the rollout; N > 0: its Gumbel
    search of N simulations (the ``az:N`` player) on ``teacher_positions`` positions drawn
    from each rollout."""
    teacher_positions: int = ranged(2048, between(1, MAX_ROLLOUT))
    """Positions searched per rollout when ``teacher_simulations > 0`` or the teacher is a
    player."""
    teacher_skip: list[str] = field(default_factory=list)
    """League opponents whose games get no distillation (PPO alone learns to beat them;
    e.g. the bar opponent, which the teacher does not exploit)."""

    # -- the start: fine-tuning and pretraining --------------------------------------------
    init_from: str | None = None
    """A policy checkpoint (``boardgym train``/``selfplay``) of the same game, board and
    network whose weights a new run starts from (fine-tuning; the optimizer, step count and
    schedules start afresh); None: random weights."""
    pretrain_positions: str | None = None
    """A labelled position set (``boardgym positions``) that a new run first learns the
    exact best moves and outcomes of, by supervised passes (``train.ppo.pretrain``); None:
    none."""
    pretrain_epochs: int = ranged(10, between(1, MAX_PASSES))
    """Passes over ``pretrain_positions``."""
    pretrain_lr: float = ranged(3e-4, above(0.0, MAX_RATE))
    """The pretraining learning rate at the first pass (falling linearly to 0)."""
    pretrain_batch_size: int | None = ranged(None, between(1, MAX_ROLLOUT))
    """The minibatch size of the pretraining passes and rehearsal steps; None:
    ``batch_size`` (PPO's)."""
    pretrain_symmetries: bool = False
    """Pretrain on every symmetric image of each labelled position (the board's symmetries,
    ``agents.az.network.Symmetries``: the mirror in four-in-a-row, 8 in Reversi and
    tic-tac-toe), each a position with the same value and the moves mapped; False: the
    positions as they are."""
    pretrain_rehearsal: int = ranged(0, between(0, MAX_REHEARSAL))
    """Minibatch steps of the pretraining loss on ``pretrain_positions`` before each
    rollout, with PPO's optimizer (``train.ppo.pretrain.Rehearsal``); 0: none."""
    pretrain_children: bool = False
    """With an exactly labelled ``pretrain_positions``, also train the value head on every
    position one move after a label (its exact outcome, from the label's value of that
    move; no policy target): up to a move count times the value labels."""

    def validate(self) -> None:
        """Raise a ValueError naming the key to fix when a choice is none of its choices or
        keys do not go together (each key's range is checked before: ``common.ranged``)."""
        self._check_choices()
        self._check_rollout()
        self._check_teacher()
        self._check_network()
        self._check_opponents()
        self._check_eval_openings()

    def _check_choices(self) -> None:
        """The keys with a set of choices, and the rehearsal's labels."""
        check_lr_schedule(self.lr_schedule)
        check_opening_plies(self.opening_plies)
        check_device(self.device)
        if self.vectorization not in VECTORIZATIONS:
            raise ValueError(f"vectorization must be one of {VECTORIZATIONS}, got "
                             f"{self.vectorization!r}; fix it with --set vectorization=auto")
        if self.pretrain_rehearsal and self.pretrain_positions is None:
            raise ValueError("pretrain_rehearsal rehearses the pretraining labels: --set "
                             "pretrain_positions=FILE too, or --set pretrain_rehearsal=0")

    def _check_rollout(self) -> None:
        """A rollout of ``n_steps * n_envs`` positions, 2 to ``MAX_ROLLOUT``, whose
        minibatches of ``batch_size`` leave no last one of a single position (MaskablePPO
        normalises each minibatch's advantages, and the spread of one is NaN)."""
        rollout = self.n_steps * self.n_envs
        if not 2 <= rollout <= MAX_ROLLOUT:
            raise ValueError(f"n_steps * n_envs = {rollout} positions per rollout; it must be "
                             f"2 to {MAX_ROLLOUT} (memory): fix it with --set n_steps=... or "
                             "--set n_envs=...")
        if rollout % self.batch_size == 1:
            fits = next((size for size in range(min(self.batch_size, rollout), 1, -1)
                         if rollout % size == 0), rollout)
            raise ValueError(f"batch_size={self.batch_size} leaves a last minibatch of 1 of "
                             f"the {rollout} positions of a rollout (n_steps * n_envs), whose "
                             "normalised advantage is NaN; fix it with --set batch_size=N, N "
                             f"dividing {rollout} (e.g. --set batch_size={fits})")

    def _check_teacher(self) -> None:
        """The distillation keys."""
        if self.teacher == PRETRAINED:
            self._check_pretrained_teacher()
        if self.teacher_simulations > 0 and self.vectorization == "dummy":
            raise ValueError("teacher_simulations searches the batched env's positions; drop "
                             "--set vectorization=dummy or set teacher_simulations=0")
        if self.teacher_skip and self.vectorization == "dummy":
            raise ValueError("teacher_skip reads the batched env's opponents; drop --set "
                             "vectorization=dummy or set teacher_skip=[]")
        nodes = self.teacher_positions * self.teacher_simulations
        if nodes > MAX_SEARCH_NODES:
            raise ValueError(f"teacher_positions * teacher_simulations = {nodes} search nodes "
                             f"at once, more than {MAX_SEARCH_NODES} (memory); fix it with "
                             "--set teacher_positions=... or --set teacher_simulations=...")

    def _check_network(self) -> None:
        """The policy's keys: activation, heads, symmetric variants, ensemble, tower."""
        if self.features_activation not in FEATURE_ACTIVATIONS:
            raise ValueError(f"features_activation must be one of {sorted(FEATURE_ACTIVATIONS)}, "
                             f"got {self.features_activation!r}; fix it with --set "
                             "features_activation=relu")
        if self.symmetric and self.average_symmetries:
            raise ValueError("symmetric (one canonical image) and average_symmetries (every "
                             "image) are two policies; --set one of them to false")
        if self.members > 1 and not self.average_symmetries:
            raise ValueError("members > 1 is an ensemble of averaged policies: --set "
                             "average_symmetries=true, or --set members=1")
        if self.tower:
            self._check_tower()
        check_precision(self.precision)
        if self.precision != "float32" and not self.tower:
            raise ValueError("precision applies to az tower policies only: --set tower=true, "
                             "or --set precision=float32")

    def _check_tower(self) -> None:
        """An az tower has no ``BoardCNN`` options, no symmetric variants, one network and
        at least one residual block."""
        clashes = {"symmetric": self.symmetric, "average_symmetries": self.average_symmetries,
                   "mobility": self.mobility, "threats": self.threats, "windows": self.windows,
                   "parity": self.parity, "landing": self.landing, "gated": self.gated,
                   "head_planes": self.head_planes, "members": self.members > 1,
                   "blocks": self.blocks < 1}
        named = [f"{name}={json.dumps(getattr(self, name))}" for name, clash in clashes.items()
                 if clash]
        if named:
            raise ValueError(f"tower (an az network) is sized by channels, blocks >= 1 and "
                             f"tower_hidden alone; fix {', '.join(named)} with --set, or set "
                             "tower=false")

    def _check_opponents(self) -> None:
        """Opponents (their names first) and their draw weights."""
        for name in ("opponents", "eval_opponents"):
            if not getattr(self, name):
                raise ValueError(f"{name} needs at least one spec; fix it with --set "
                                 f"{name}=[random]")
            check_specs(self.game, name, getattr(self, name))
        weights = self.opponent_weights
        if weights is not None and (len(weights) != len(self.opponents) or sum(weights) <= 0):
            raise ValueError(f"opponent_weights {weights} must be {len(self.opponents)} "
                             "non-negative numbers with a positive sum, one per opponent of "
                             f"{self.opponents}; fix it with --set opponent_weights=[...] (or "
                             "null: uniform)")
        self._check_teacher_skip()
        self._check_bar()

    def _check_bar(self) -> None:
        """Each ``eval_bar`` entry is an eval opponent with a win rate; ``bar_games`` needs
        a bar."""
        for spec, rate in self.eval_bar.items():
            if spec not in self.eval_opponents:
                raise ValueError(f"eval_bar names {spec!r}, not one of the eval_opponents "
                                 f"{self.eval_opponents}; add it there or drop the bar (--set "
                                 "eval_bar={} for none)")
            if isinstance(rate, bool) or not isinstance(rate, (int, float)) \
                    or not 0.0 <= rate <= 1.0:
                raise ValueError(f"eval_bar[{spec!r}] is a win rate in [0, 1], got {rate!r}; "
                                 f"fix it with --set 'eval_bar={{{spec}: 0.9}}'")
        if self.bar_games and not self.eval_bar:
            raise ValueError(f"bar_games={self.bar_games} judges a bar, but eval_bar is empty; "
                             "set one (--set 'eval_bar={SPEC: RATE}', SPEC one of the "
                             f"eval_opponents {self.eval_opponents}) or --set bar_games=0")

    def _check_pretrained_teacher(self) -> None:
        """``teacher: pretrained`` needs a start to keep and searches nothing."""
        if self.pretrain_positions is None and self.init_from is None:
            raise ValueError("teacher: pretrained keeps the learner near its pretrained start: "
                             "--set pretrain_positions=FILE or --set init_from=CHECKPOINT too, "
                             "or another --set teacher=...")
        if self.teacher_simulations > 0:
            raise ValueError("teacher: pretrained is a network without a search; --set "
                             "teacher_simulations=0")

    def _check_teacher_skip(self) -> None:
        """Each ``teacher_skip`` spec is a league opponent or at least a player (one that
        is not in the league, e.g. after ``--opponent``, has no games to skip)."""
        from boardgym import agents

        for spec in self.teacher_skip:
            if spec in self.opponents:
                continue
            try:
                agents.make(self.game, spec)
            except (ValueError, FileNotFoundError) as error:
                raise ValueError(f"teacher_skip: {error}; fix it with --set teacher_skip=[...] "
                                 "(league opponents; [] for none)") from None

    def _check_eval_openings(self) -> None:
        """Fair evaluation openings: an even number of games each, and a first fair opening
        of that many plies (drawn as the evaluations draw it, so too many plies fail now)."""
        if not self.eval_openings:
            return
        odd = [name for name in ("eval_games", "league_games") if getattr(self, name) % PAIR]
        if odd:
            raise ValueError(f"with eval_openings every opening is played twice (seats "
                             f"swapped): {' and '.join(odd)} must be even; fix it with --set "
                             f"{odd[0]}=...")
        from boardgym.train.match.openings import random_opening

        options = game_record(self.game).options
        board = {key: value for key, value in self.env_kwargs.items() if key in options}
        try:
            random_opening(self.game, self.eval_openings, self.seed, 0, board)
        except ValueError:
            raise ValueError(f"eval_openings={self.eval_openings}: no fair {self.game} opening "
                             "of that many plies; fix it with --set eval_openings=... (fewer "
                             "plies, or 0: none)") from None

    @property
    def pretrain_minibatch(self) -> int:
        """The minibatch size of the pretraining loss: ``pretrain_batch_size``, else
        ``batch_size``."""
        return self.pretrain_batch_size or self.batch_size


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["key=value", ...]`` as a dict of ``TrainConfig`` keys (``common.parse_sets``).

    Raises:
        ValueError: an item without ``=`` or an unknown key.
    """
    return common.parse_sets(items, TrainConfig.keys())


def load_config(game: str, path: Path | None = None, overrides: dict[str, Any] | None = None,
                **explicit: Any) -> TrainConfig:
    """The ``TrainConfig`` of a run (``common.load_config``): a YAML file (default:
    ``train/hyperparams/{game}.yaml``), then ``overrides``, then ``explicit`` keyword values
    that are not None.

    Raises:
        ValueError: unknown game, key or out-of-range value (the message names the fix).
    """
    given = {key: value for key, value in explicit.items() if value is not None}
    return common.load_config(TrainConfig, game, path, {**(overrides or {}), **given})
