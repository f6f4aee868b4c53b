"""Training hyperparameters as data: one YAML file per game, typed by ``TrainConfig``.

``train/hyperparams/{game}.yaml`` holds the defaults of each game; ``--config FILE`` replaces
them and ``--set key=value`` overrides single keys (the value is parsed as YAML, so
``--set net_arch=[64,64]`` and ``--set opponents=[random]`` work). A run folder keeps the
resolved config as ``config.yaml``, which ``load_config`` reads back on ``--resume``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import types
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from boardgym.agents.az.network import check_precision
from boardgym.agents.networks import FEATURE_ACTIVATIONS, MAX_MEMBERS
from boardgym.envs.games import canonical_name
from boardgym.envs.games import game as game_record
from boardgym.train.match.results import PAIR

HYPERPARAMS_DIR = Path(__file__).resolve().parents[1] / "hyperparams"
LR_SCHEDULES = ("constant", "linear")
VECTORIZATIONS = ("auto", "vector", "dummy")
OPENING_BOUNDS = 2
"""``opening_plies`` is ``[low, high]``."""
SEED_LIMIT = 2 ** 32
"""Seeds are below this (numpy's global generator takes 32-bit seeds)."""
PRETRAINED = "pretrained"
"""``teacher: pretrained``: the learner's own start, frozen (``train.teacher.FrozenPolicy``)."""
MAX_TORCH_THREADS = os.cpu_count() or 1
"""More torch threads than CPUs never helps (and very many crash the process)."""
TYPE_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string",
              list: "a list", dict: "a mapping"}
"""How a config key's type is named in error messages."""
POSITIVE_KEYS = ("total_timesteps", "n_envs", "n_steps", "batch_size", "n_epochs",
                 "eval_every", "eval_games", "checkpoint_every", "torch_threads",
                 "snapshot_every", "league_games", "max_snapshots", "channels",
                 "features_dim", "teacher_steps", "teacher_epochs", "teacher_positions",
                 "pretrain_epochs", "pretrain_batch_size", "tower_hidden")
NON_NEGATIVE_KEYS = ("blocks", "eval_quality", "patience", "eval_openings", "head_planes",
                     "teacher_simulations", "threats", "pretrain_rehearsal", "bar_games")
"""Integer keys where 0 means none (no residual block) or off."""


@dataclass
class TrainConfig:
    """Everything a training run depends on (besides the code).

    Attributes:
        game: canonical game name.
        seed: seeds python, numpy, torch and the envs.
        env_kwargs: extra keyword arguments of the env (board size, ``reward``).
        opponents: agent specs the learner plays; one is drawn per episode.
        opponent_weights: relative draw weights of ``opponents`` (``None``: uniform).
        total_timesteps: learner steps to train for.
        n_envs: parallel envs.
        n_steps: steps per env per rollout.
        lr_schedule: ``"constant"`` or ``"linear"`` (from ``learning_rate`` down to 0 at
            ``total_timesteps``).
        batch_size, n_epochs, learning_rate, gamma, gae_lambda, clip_range, ent_coef,
            vf_coef, max_grad_norm: MaskablePPO's hyperparameters of the same names.
        channels, blocks, features_dim, mobility, features_activation: the ``BoardCNN``
            feature extractor (``mobility``: Reversi's legal-move planes as extra inputs;
            ``features_activation``: ``"relu"`` or ``"tanh"``, see
            ``agents.networks.FEATURE_ACTIVATIONS``).
        head_planes: ``BoardCNN``'s 1x1 squeeze before the feature layer (0: none).
        threats: ``BoardCNN``'s threat planes as extra inputs: the empty cells where one
            more stone completes a line of this many (four-in-a-row: 4); 0: none.
        windows: with ``threats``, ``BoardCNN``'s window planes as extra inputs: per side,
            the open lines of that length through each empty cell holding 2 and
            ``threats - 1`` of its stones (``agents.networks.window_counts``).
        parity: ``BoardCNN``'s parity plane as an extra input: the rows whose threats favour
            the side to move in four-in-a-row (``agents.networks.parity_plane``).
        landing: ``BoardCNN``'s feature layer also reads the tower at each column's landing
            cell, the cell each four-in-a-row move fills (``agents.networks.landing_features``).
        gated: each of ``BoardCNN``'s residual blocks starts with its branch switched off by
            a learned scalar gate at 0 (``agents.layers.ResidualBlock``), so that deep
            towers train.
        symmetric: the policy sees every board in one canonical orientation
            (``agents.networks.SymmetricPolicy``): mirror-image positions share weights.
        average_symmetries: the policy averages its logits and values over every symmetric
            image of the board (``agents.networks.AveragedPolicy``; one network pass per
            image); not with ``symmetric``.
        members: with ``average_symmetries``, more than 1: the policy is an ensemble of
            this many such networks, each pretrained on its own (``agents.networks
            .EnsemblePolicy``: the mean of their logits and values; a pass of each per board).
        net_arch: hidden layers of the policy and value heads after the extractor.
        tower: the policy is an az network instead (``agents.networks.TowerPolicy``: a
            residual tower of ``channels`` and ``blocks``, a policy head and a tanh value head
            with a hidden layer of ``tower_hidden``), so that ``init_from`` may be an az
            checkpoint (``boardgym az``) of those sizes or smaller (grown) and PPO goes on
            from its raw policy;
            ``BoardCNN``'s options, the symmetric policies and ``net_arch`` do not apply.
        tower_hidden: with ``tower``, the value head's hidden units.
        precision: with ``tower``, the number format its layers, and those of the frozen
            start with ``teacher: pretrained``, compute in during the run
            (``agents.az.network.PRECISIONS``: ``float32``, or ``bfloat16`` autocast; the
            weights, the optimizer and the checkpoints stay float32, and a loaded policy plays
            in float32).
        eval_every: timesteps between evaluations against ``eval_opponents``.
        eval_start: also evaluate the network a new run starts from (pretrained, or
            ``init_from``) at step 0, so that ``best.zip`` may be it.
        eval_games: games per opponent in each evaluation (first player random per game,
            or with ``eval_openings`` two games per opening, seats swapped; then even).
        eval_opponents: agent specs the learner is evaluated against.
        eval_openings: plies of the fair random openings of the evaluations and self-play's
            league checks (``train.openings``, as ``boardgym evaluate --openings N``: games
            ``2k`` and ``2k + 1`` start from opening ``k``, the learner first in the even
            game; ``eval_games`` and ``league_games`` must then be even); 0: every game
            from the start position, the first player drawn per game.
        checkpoint_every: timesteps between checkpoints (``checkpoints/last.zip``).
        torch_threads: CPU threads torch may use.
        vectorization: ``"auto"`` or ``"vector"`` (the same: the batched vector env, see
            ``environments``) or ``"dummy"`` (SB3's DummyVecEnv over the single env).
        snapshot_every: self-play only: timesteps between league checks.
        snapshot_margin: self-play only: the win rate against the league pool above which
            the learner's current weights join the pool as a frozen snapshot.
        league_games: self-play only: games per pool member in a league check.
        max_snapshots: self-play only: the most recent snapshots kept in the pool.
        snapshot_weight: self-play only: the draw weight the snapshots share (split equally
            among the snapshots in the pool), next to ``opponent_weights``.
        opening_plies: ``[low, high]``: every training game starts from a random opening of
            ``low`` to ``high`` plies (``openings.unfinished_opening``, drawn from the env's
            seed; never a finished position); ``None``: from the start position.
        eval_quality: at each evaluation, judge the learner (greedy) on this many positions of
            the selection part of the game's labelled set (``quality.selection_positions``);
            ``best.zip`` is then the snapshot with the best quality score. 0: off.
        eval_quality_positions: a labelled set (``boardgym positions``) whose first
            ``eval_quality`` positions the evaluations judge instead (a larger set, more
            decisive positions: a steadier choice of ``best.zip``); the pretraining never
            trains on them. ``None``: the shipped set's selection part. Unjudged when
            ``eval_quality`` is 0 (a YAML naming a set can still run with
            ``--eval-quality 0``); the pretraining leaves them out all the same.
        patience: stop the run after this many evaluations without a new best (0: never).
        eval_bar: ``{spec: win rate}`` of eval opponents: evaluations where the learner's win
            rate against one of them is below its bar rank below every evaluation that
            holds them all (``runs.selection_key``); ``{}``: no bar.
        bar_games: the bar is judged on games of its own, this many against each bar
            opponent from the start position, the first player random per game (what
            ``boardgym evaluate`` plays, the measure of the shipped checkpoints' bars), not
            on the eval games; 0: on the eval games.
        teacher: what the learner is distilled toward after each rollout
            (``train.teacher``): an az checkpoint (``boardgym az``) of the same game and
            board, or a player spec (``alphabeta:4``: its moves on ``teacher_positions``
            positions a rollout), or ``pretrained``: the learner's own policy as PPO starts,
            frozen (a KL penalty toward what ``init_from`` and the pretraining gave);
            ``None``: none.
        teacher_coef: the distillation weight at step 0.
        teacher_steps: the step where the distillation weight has fallen linearly to 0.
        teacher_epochs: passes over each rollout's positions in the distillation.
        teacher_simulations: with an az teacher (a player teacher ignores it), 0: the
            targets are the teacher network's raw policy and value on every position of the
            rollout; N > 0: its Gumbel search of N simulations (the ``az:N`` player) on
            ``teacher_positions`` positions drawn from each rollout.
        teacher_positions: positions searched per rollout when ``teacher_simulations > 0``
            or the teacher is a player.
        teacher_skip: league opponents whose games get no distillation (PPO alone learns to
            beat them; e.g. the bar opponent, which the teacher does not exploit).
        init_from: a policy checkpoint (``boardgym train``/``selfplay``) of the same game,
            board and network whose weights a new run starts from (fine-tuning; the
            optimizer, step count and schedules start afresh); ``None``: random weights.
        pretrain_positions: a labelled position set (``boardgym positions``) that a new run
            first learns the exact best moves and outcomes of, by supervised passes
            (``train.pretrain``); ``None``: none.
        pretrain_epochs: passes over ``pretrain_positions``.
        pretrain_lr: the pretraining learning rate at the first pass (falling linearly to 0).
        pretrain_batch_size: the minibatch size of the pretraining passes and rehearsal
            steps; ``None``: ``batch_size`` (PPO's).
        pretrain_symmetries: pretrain on every symmetric image of each labelled position
            (the board's symmetries, ``agents.az.network.Symmetries``: the mirror in
            four-in-a-row, 8 in Reversi and tic-tac-toe), each a position with the same
            value and the moves mapped; False: the positions as they are.
        pretrain_rehearsal: minibatch steps of the pretraining loss on
            ``pretrain_positions`` before each rollout, with PPO's optimizer
            (``train.pretrain.Rehearsal``); 0: none.
        pretrain_children: with an exactly labelled ``pretrain_positions``, also train the
            value head on every position one move after a label (its exact outcome, from
            the label's value of that move; no policy target): up to a move count times
            the value labels.
    """

    game: str
    seed: int = 0
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    opponents: list[str] = field(default_factory=lambda: ["random"])
    opponent_weights: list[float] | None = None
    total_timesteps: int = 100_000
    n_envs: int = 8
    n_steps: int = 128
    batch_size: int = 256
    n_epochs: int = 4
    learning_rate: float = 3e-4
    lr_schedule: str = "constant"
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    channels: int = 32
    blocks: int = 2
    features_dim: int = 256
    mobility: bool = False
    features_activation: str = "relu"
    head_planes: int = 0
    threats: int = 0
    windows: bool = False
    parity: bool = False
    landing: bool = False
    gated: bool = False
    symmetric: bool = False
    average_symmetries: bool = False
    members: int = 1
    tower: bool = False
    tower_hidden: int = 128
    precision: str = "float32"
    net_arch: list[int] = field(default_factory=lambda: [128])
    eval_every: int = 50_000
    eval_start: bool = False
    eval_games: int = 100
    eval_opponents: list[str] = field(default_factory=lambda: ["random"])
    eval_openings: int = 0
    checkpoint_every: int = 25_000
    torch_threads: int = 1
    vectorization: str = "auto"
    snapshot_every: int = 50_000
    snapshot_margin: float = 0.6
    league_games: int = 50
    max_snapshots: int = 8
    snapshot_weight: float = 1.0
    opening_plies: list[int] | None = None
    eval_quality: int = 0
    eval_quality_positions: str | None = None
    patience: int = 0
    eval_bar: dict[str, float] = field(default_factory=dict)
    bar_games: int = 0
    teacher: str | None = None
    teacher_coef: float = 1.0
    teacher_steps: int = 1_000_000
    teacher_epochs: int = 1
    teacher_simulations: int = 0
    teacher_positions: int = 2048
    teacher_skip: list[str] = field(default_factory=list)
    init_from: str | None = None
    pretrain_positions: str | None = None
    pretrain_epochs: int = 10
    pretrain_lr: float = 3e-4
    pretrain_batch_size: int | None = None
    pretrain_symmetries: bool = False
    pretrain_rehearsal: int = 0
    pretrain_children: bool = False

    def __post_init__(self) -> None:
        self.game = canonical_name(self.game)
        self.validate()

    def validate(self) -> None:
        """Raise a ValueError naming the key to fix when a value has the wrong type or is out
        of range."""
        for name, hint in typing.get_type_hints(TrainConfig).items():
            setattr(self, name, checked_type(name, getattr(self, name), hint))
        for name in POSITIVE_KEYS:  # None: the key's default (its docstring says which)
            if getattr(self, name) is not None and getattr(self, name) <= 0:
                raise ValueError(f"{name} must be a positive integer, got "
                                 f"{getattr(self, name)!r}; fix it with --set {name}=...")
        self._check_ranges()
        self._check_opponents()
        self._check_eval_openings()

    def _check_ranges(self) -> None:
        """The keys with a range or a set of choices."""
        check_run_keys(self.seed, self.torch_threads, self.lr_schedule)
        if self.features_activation not in FEATURE_ACTIVATIONS:
            raise ValueError(f"features_activation must be one of {sorted(FEATURE_ACTIVATIONS)}, "
                             f"got {self.features_activation!r}")
        if self.vectorization not in VECTORIZATIONS:
            raise ValueError(f"vectorization must be one of {VECTORIZATIONS}, got "
                             f"{self.vectorization!r}")
        if not 0.0 <= self.snapshot_margin <= 1.0:
            raise ValueError(f"snapshot_margin is a win rate in [0, 1], got "
                             f"{self.snapshot_margin}")
        if any(size <= 0 for size in self.net_arch):
            raise ValueError(f"net_arch layers must be positive, got {self.net_arch}")
        for name in NON_NEGATIVE_KEYS:
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be 0 or a positive integer, got "
                                 f"{getattr(self, name)}; fix it with --set {name}=...")
        if self.pretrain_lr <= 0:
            raise ValueError(f"pretrain_lr must be positive, got {self.pretrain_lr}; fix it "
                             "with --set pretrain_lr=...")
        if self.pretrain_rehearsal and self.pretrain_positions is None:
            raise ValueError("pretrain_rehearsal rehearses the pretraining labels: set "
                             "pretrain_positions=FILE too, or pretrain_rehearsal=0")
        if self.teacher_coef < 0:
            raise ValueError(f"teacher_coef must be 0 or positive, got {self.teacher_coef}")
        if self.teacher == PRETRAINED:
            self._check_pretrained_teacher()
        if self.teacher_simulations > 0 and self.vectorization == "dummy":
            raise ValueError("teacher_simulations searches the batched env's positions; drop "
                             "--set vectorization=dummy or set teacher_simulations=0")
        if self.teacher_skip and self.vectorization == "dummy":
            raise ValueError("teacher_skip reads the batched env's opponents; drop --set "
                             "vectorization=dummy or set teacher_skip=[]")
        if self.snapshot_weight <= 0:
            raise ValueError(f"snapshot_weight must be positive, got {self.snapshot_weight}")
        if self.symmetric and self.average_symmetries:
            raise ValueError("symmetric (one canonical image) and average_symmetries (every "
                             "image) are two policies; set one of them to false")
        if not 1 <= self.members <= MAX_MEMBERS:
            raise ValueError(f"members is the number of networks, 1 to {MAX_MEMBERS}; got "
                             f"{self.members}")
        if self.members > 1 and not self.average_symmetries:
            raise ValueError("members > 1 is an ensemble of averaged policies: set "
                             "average_symmetries=true, or members=1")
        if self.tower:
            self._check_tower()
        check_precision(self.precision)
        if self.precision != "float32" and not self.tower:
            raise ValueError("precision applies to az tower policies only: set tower=true, "
                             "or precision=float32")
        plies = self.opening_plies
        if plies is not None and (len(plies) != OPENING_BOUNDS or min(plies) < 0
                                  or plies[0] > plies[1]):
            raise ValueError(f"opening_plies must be [low, high] with 0 <= low <= high, got "
                             f"{plies}; e.g. --set opening_plies=[0,8] (or null: no openings)")

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
        """Opponents and their draw weights."""
        if not self.opponents or not self.eval_opponents:
            raise ValueError("opponents and eval_opponents need at least one spec each, e.g. "
                             "--set opponents=[random]")
        weights = self.opponent_weights
        if weights is not None and (len(weights) != len(self.opponents)
                                    or min(weights) < 0 or sum(weights) <= 0):
            raise ValueError(f"opponent_weights {weights} must be {len(self.opponents)} "
                             "non-negative numbers with a positive sum, one per opponent")
        self._check_teacher_skip()
        for spec, rate in self.eval_bar.items():
            if spec not in self.eval_opponents:
                raise ValueError(f"eval_bar names {spec!r}, not one of the eval_opponents "
                                 f"{self.eval_opponents}; add it there or drop the bar (--set "
                                 "eval_bar={} for none)")
            if isinstance(rate, bool) or not isinstance(rate, (int, float)) \
                    or not 0.0 <= rate <= 1.0:
                raise ValueError(f"eval_bar[{spec!r}] is a win rate in [0, 1], got {rate!r}")
        if self.bar_games and not self.eval_bar:
            raise ValueError(f"bar_games={self.bar_games} judges a bar, but eval_bar is empty; "
                             "set one (--set 'eval_bar={SPEC: RATE}', SPEC one of the "
                             f"eval_opponents {self.eval_opponents}) or --set bar_games=0")

    def _check_pretrained_teacher(self) -> None:
        """``teacher: pretrained`` needs a start to keep and searches nothing."""
        if self.pretrain_positions is None and self.init_from is None:
            raise ValueError("teacher: pretrained keeps the learner near its pretrained start: "
                             "set pretrain_positions=FILE or init_from=CHECKPOINT too, or "
                             "another teacher")
        if self.teacher_simulations > 0:
            raise ValueError("teacher: pretrained is a network without a search; set "
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

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data (what ``config.yaml`` holds)."""
        return dataclasses.asdict(self)


def check_run_keys(seed: int, torch_threads: int, lr_schedule: str) -> None:
    """Check the keys every training config (PPO and az) shares.

    Raises:
        ValueError: naming the fix, unless ``seed`` is in ``[0, SEED_LIMIT)``,
            ``torch_threads`` is at most ``MAX_TORCH_THREADS`` (this machine's CPUs) and
            ``lr_schedule`` is one of ``LR_SCHEDULES``.
    """
    if not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"seed must be in [0, 2**32), got {seed}")
    if torch_threads > MAX_TORCH_THREADS:
        raise ValueError(f"torch_threads must be at most {MAX_TORCH_THREADS} (this "
                         f"machine's CPUs), got {torch_threads}")
    if lr_schedule not in LR_SCHEDULES:
        raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}, got {lr_schedule!r}; "
                         "fix it with --set lr_schedule=linear (or constant)")


def checked_type(name: str, value: Any, hint: Any) -> Any:
    """``value`` of config key ``name`` if it fits the type ``hint`` (ints and number strings
    such as ``"1e-4"`` pass for floats, as floats).

    Raises:
        ValueError: the value has another type (the message names the key and the type).
    """
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        return checked_type(name, value, next(arg for arg in args if arg is not type(None)))
    if origin is list and isinstance(value, list):
        return [checked_type(name, item, args[0]) for item in value]
    if origin is dict and isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return value
    if hint is float and not isinstance(value, bool):
        try:  # YAML 1.1 reads 1e-4 as a string
            return float(value)
        except (TypeError, ValueError):
            pass
    if hint in (int, str, bool) and isinstance(value, hint) and \
            (hint is bool or not isinstance(value, bool)):
        return value
    expected = TYPE_NAMES.get(origin or hint, str(hint))
    raise ValueError(f"{name} must be {expected}, got {value!r}; fix it with --set {name}=...")


def _keys() -> set[str]:
    return {f.name for f in dataclasses.fields(TrainConfig)}


def check_known_keys(data: dict[str, Any], valid: Iterable[str], source: str) -> None:
    """Raise a ValueError naming the keys of ``data`` (read from ``source``) that are not
    in ``valid``, and listing the valid ones."""
    known = set(valid)
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"unknown config key(s) {sorted(unknown)} in {source}; valid keys: "
                         f"{', '.join(sorted(known))}")


def _check_keys(data: dict[str, Any], source: str) -> None:
    check_known_keys(data, _keys(), source)


def read_yaml(path: Path) -> dict[str, Any]:
    """The mapping stored in the YAML file ``path``.

    Raises:
        ValueError: missing file, bad YAML, or not a mapping.
    """
    if not path.is_file():
        raise ValueError(f"config file {path} not found; pass an existing YAML file")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise ValueError(f"config file {path} is not valid YAML: {error}") from error
    if not isinstance(data, dict):
        raise ValueError(f"config file {path} must hold a mapping of keys to values")
    return data


def parse_sets(items: Sequence[str], valid: Iterable[str]) -> dict[str, Any]:
    """``--set key=value`` items as a dict, each value parsed as YAML, each key one of
    ``valid``.

    Raises:
        ValueError: an item without ``=`` or an unknown key.
    """
    overrides: dict[str, Any] = {}
    for item in items:
        key, separator, value = item.partition("=")
        if not separator or not key.strip():
            raise ValueError(f"--set needs key=value, got {item!r}")
        overrides[key.strip()] = yaml.safe_load(value)
    check_known_keys(overrides, valid, "--set")
    return overrides


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["key=value", ...]`` as a dict of ``TrainConfig`` keys (``parse_sets``).

    Raises:
        ValueError: an item without ``=`` or an unknown key.
    """
    return parse_sets(items, _keys())


def load_config(game: str, path: Path | None = None, overrides: dict[str, Any] | None = None,
                **explicit: Any) -> TrainConfig:
    """The config of a run: a YAML file (default: the game's), then ``overrides``, then
    ``explicit`` keyword values that are not ``None``.

    Raises:
        ValueError: unknown game, key or out-of-range value (the message names the fix).
    """
    game = canonical_name(game)
    data = read_yaml(path or HYPERPARAMS_DIR / f"{game}.yaml")
    data = {**data, **(overrides or {})}
    data.update({key: value for key, value in explicit.items() if value is not None})
    _check_keys(data, str(path or f"{game}.yaml"))
    data["game"] = game
    return TrainConfig(**data)
