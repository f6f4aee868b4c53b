"""Pretraining: supervised passes on labelled positions before PPO (config key
``pretrain_positions``).

With ``pretrain_positions: PATH`` (a set as ``boardgym positions`` writes it), a new run first
trains its policy (the ``init_from`` weights, if any) for ``pretrain_epochs`` passes of
``pretrain_batch_size`` minibatches (default ``batch_size``) on

    KL(target || learner policy) + vf_coef * (V_learner - outcome)^2

the distillation loss of ``train.teacher`` with the labels as the teacher. In an exactly
labelled set (one JSON line per position with the exact value of every legal move) the
target spreads the probability evenly over the moves of the highest value and ``outcome`` is
the position's game-theoretic result for the side to move (+1, 0, -1). In a move set
(``--player SPEC``, ``train.moves``: where no exact solver reaches) the target is the
player's move and ``outcome`` the result of the game the position came from. A separate Adam
at ``pretrain_lr``, falling linearly to 0 over the passes, with ``max_grad_norm`` clipping;
PPO's optimizer, step count and schedules are untouched. A resumed run does not pretrain.
With ``pretrain_rehearsal: N`` every rollout of the run then starts with N more minibatch
steps of the same loss on the labels, with PPO's optimizer (``Rehearsal``), so PPO does not
wash out what the labels taught.
With ``pretrain_symmetries: true`` each position also counts as each of its symmetric images
(``symmetric_images``): the games are symmetric, so the images' labels are exact too.
With ``pretrain_children: true`` the value head also learns every non-terminal position one
move after an exact label (``with_children``): the label's value of the move is that
position's exact outcome; such rows carry no policy target, and the KL averages over the rows
that do.
An ensemble (``members: N``, ``agents.ppo.policies.EnsemblePolicy``) pretrains each member in
turn on the same loss with its own optimizer and minibatch order: separately trained
networks err apart, which their mean then averages out.

Positions of the game's shipped labelled set (``shipped:GAME``: what ``boardgym
quality`` and ``eval_quality`` judge) and of ``eval_quality_positions`` are dropped, so a run
never trains on the positions it is judged on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback

from boardgym.agents import shipped
from boardgym.agents.az.network import Symmetries
from boardgym.agents.checkpoint import board_kwargs
from boardgym.agents.ppo.policies import members_of
from boardgym.envs.games import game as game_record
from boardgym.envs.games.core import Rules
from boardgym.train.common.commands import progress_bar
from boardgym.train.ppo.config import TrainConfig
from boardgym.train.ppo.teacher import Targets, as_targets, distil
from boardgym.train.quality.agreement import (
    POSITION_SETS,
    Position,
    check_board,
    default_positions,
    labelled_file,
    load_positions,
)
from boardgym.train.quality.moves import MoveLabel, is_move_set, load_moves

Log = Callable[[str], object]
T = TypeVar("T")


Label: TypeAlias = Position | MoveLabel
"""One labelled position: exact move values (``train.quality``) or a player's move
(``train.moves``)."""


def training_positions(config: TrainConfig) -> list[Label]:
    """The labels of ``config.pretrain_positions`` (either kind, as its first line says)
    without the positions that judge play quality (the shipped labelled set's and
    ``eval_quality_positions``'), checked to be on the run's board.

    Raises:
        ValueError: a missing or malformed file, positions on another board, or none left
            (the message names the fix).
    """
    record = game_record(config.game)
    path = config.pretrain_positions
    assert path is not None
    source = labelled_file(path, "pretrain_positions", record)
    try:
        labels: list[Label] = [*load_moves(source, record)] if is_move_set(source) \
            else [*load_positions(source, record)]
    except ValueError as error:
        raise ValueError(f"pretrain_positions: {error}; write the file with boardgym "
                         "positions") from None
    check_board(record, labels[0].text, board_kwargs(config.env_kwargs),
                f"pretrain_positions: {path} holds positions of the default {record.title} "
                "board; this run's board differs: --set pretrain_positions=null")
    judges = [default_positions(record)]
    if config.eval_quality_positions is not None:
        judges.append(shipped.resolve(config.eval_quality_positions, POSITION_SETS))
    judged = {position.text for source in judges if source.is_file()
              for position in load_positions(source, record)}
    kept = [label for label in labels if label.text not in judged]
    if not kept:
        raise ValueError(f"pretrain_positions: every position of {path} is in "
                         f"{' or '.join(map(str, judges))}, which judges play quality; label "
                         f"others with boardgym positions {record.name} --seed N --out FILE")
    return kept


def counted(items: Iterable[T], total: int, unit: str, progress: bool) -> Iterator[T]:
    """``items``, each counted on a progress bar of ``total`` (``commands.progress_bar``:
    none unless ``progress`` and stderr is a terminal) as the next one is asked for."""
    bar = progress_bar(total, unit=unit, enabled=progress)
    try:
        for item in items:
            yield item
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()


def targets_of(config: TrainConfig, labels: list[Label], progress: bool = False) -> Targets:
    """The targets of ``labels``: the mover's-view observation and legal moves; an exact
    label's best moves evenly and its outcome for the side to move, a move label's move and
    its game's result (images under the board's symmetries too with
    ``pretrain_symmetries``). With ``progress``, progress bars count the positions."""
    rules = game_record(config.game).rules
    states = [rules.parse(label.text)
              for label in counted(labels, len(labels), "position", progress)]
    policy = np.zeros((len(states), len(rules.legal_mask(states[0]))), dtype=np.float32)
    outcomes = np.zeros(len(states), dtype=np.float32)
    for row, label in enumerate(labels):
        if isinstance(label, MoveLabel):
            policy[row, label.move] = 1.0
            outcomes[row] = label.result
            continue
        best = [action for action in label.values if label.is_best(action)]
        policy[row, best] = 1.0 / len(best)
        outcomes[row] = np.sign(label.best)
    if config.pretrain_children:
        states, policy, outcomes = with_children(rules, labels, states, policy, outcomes,
                                                 progress)
    targets = as_targets(np.array([rules.observation(state) for state in
                                   counted(states, len(states), "position", progress)]),
                         np.array([rules.legal_mask(state) for state in states]), policy,
                         outcomes)
    return symmetric_images(targets) if config.pretrain_symmetries else targets


def with_children(rules: Rules, labels: list[Label], states: list[Any], policy: np.ndarray,
                  outcomes: np.ndarray, progress: bool = False
                  ) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """``states``, ``policy`` and ``outcomes`` followed by the children of the exact labels
    (``pretrain_children``): every non-terminal position one legal move after one, its
    outcome for its side to move (the sign of the label's value of the move, negated when
    the turn passed to the other side) and a policy row of zeros (no policy target). With
    ``progress``, a progress bar counts the labels."""
    children, values = [], []
    for label, state in counted(zip(labels, states, strict=True), len(labels), "position",
                                progress):
        if isinstance(label, MoveLabel):
            continue
        for action, value in label.values.items():
            child = rules.apply(state, action)
            if not rules.is_terminal(child):
                children.append(child)
                values.append(np.sign(value) * (1 if child.to_move == state.to_move else -1))
    empty = np.zeros((len(children), policy.shape[1]), dtype=policy.dtype)
    return ([*states, *children], np.concatenate([policy, empty]),
            np.concatenate([outcomes, np.array(values, dtype=outcomes.dtype)]))


def symmetric_images(targets: Targets) -> Targets:
    """``targets`` followed by each of their images under the board's other symmetries
    (``agents.az.network.Symmetries``, identity first): observation cells and moves mapped
    alike, the values unchanged. ``len(result) == G * len(targets)`` for ``G`` symmetries."""
    batch, _, rows, cols = targets.obs.shape
    symmetries = Symmetries(rows, cols, targets.masks.shape[1])
    which = np.repeat(np.arange(len(symmetries)), batch)
    copies = (np.tile(field.numpy(), (len(symmetries),) + (1,) * (field.dim() - 1))
              for field in (targets.obs, targets.masks, targets.policy))
    obs, masks, policy = symmetries.apply(which, *copies)
    return as_targets(obs, masks, policy, np.tile(targets.values.numpy(), len(symmetries)))


@dataclass(frozen=True)
class Labelled:
    """The labels of ``pretrain_positions`` ready to train on.

    Attributes:
        count: the labels kept (``training_positions``).
        targets: their targets (``targets_of``; with ``pretrain_symmetries``, more rows).
    """

    count: int
    targets: Targets


def labelled(config: TrainConfig, log: Log = print, progress: bool = False) -> Labelled:
    """The ``Labelled`` of ``config.pretrain_positions`` (raises as ``training_positions``);
    a line to ``log`` as it starts reading them and one as it starts making their targets
    (progress bars with ``progress``)."""
    log(f"reading the pretraining positions {config.pretrain_positions} ...")
    labels = training_positions(config)
    more = [text for text, on in (("their children", config.pretrain_children),
                                  ("their symmetric images", config.pretrain_symmetries)) if on]
    log(f"making the targets of {len(labels):,} positions"
        + "".join(f" and {text}" for text in more) + " ...")
    return Labelled(len(labels), targets_of(config, labels, progress))


def pretrain(policy: MaskableActorCriticPolicy, config: TrainConfig, labels: Labelled,
             log: Log = print, progress: bool = False) -> None:
    """Train ``policy`` on ``labels`` (see the module docstring): a line to ``log`` that
    says what it does as it starts, then one per pass (and with ``progress``, a progress bar
    of each pass's minibatches). Each member of an ensemble
    (``agents.ppo.policies.members_of``) trains on its own, with its own optimizer, in turn.
    Minibatches are drawn from ``config.seed``, the number of labels and the member's index
    (none for the first, as for a single network)."""
    members = members_of(policy)
    rows = len(labels.targets.values)
    log(f"pretraining on {labels.count:,} labelled positions of {config.pretrain_positions}"
        + (f" ({rows:,} rows)" if rows != labels.count else "")
        + f": {config.pretrain_epochs} passes of {max(1, rows // config.pretrain_minibatch):,}"
        + f" minibatches of {config.pretrain_minibatch}"
        + (f", for each of {len(members)} networks" if len(members) > 1 else "") + " ...")
    for index, member in enumerate(members):
        seed = [config.seed, labels.count] + ([index] if index else [])
        prefix = f"member {index + 1}/{len(members)}: " if len(members) > 1 else ""
        pretrain_network(member, config, labels, seed, log, prefix, progress)


def pretrain_network(policy: MaskableActorCriticPolicy, config: TrainConfig,
                     labels: Labelled, seed: list[int], log: Log, prefix: str = "",
                     progress: bool = False) -> None:
    """Train one network ``policy`` on ``labels`` (see the module docstring), minibatches
    drawn from ``seed``; a line per pass to ``log``, after ``prefix`` (and with
    ``progress``, a progress bar of each pass's minibatches)."""
    targets = labels.targets
    count = len(targets.values)
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.pretrain_lr)
    rng = np.random.default_rng(seed)
    pieces = max(1, count // config.pretrain_minibatch)
    total = config.pretrain_epochs * pieces

    def rate(step: int) -> float:
        return config.pretrain_lr * (1 - step / total)

    for epoch in range(1, config.pretrain_epochs + 1):
        batches = counted(np.array_split(rng.permutation(count), pieces), pieces, "batch",
                          progress)
        kl, error = distil(policy, optimizer, targets, batches, config, rate=rate,
                           first_step=(epoch - 1) * pieces)
        log(f"{prefix}pretrain pass {epoch}/{config.pretrain_epochs} on {count} positions: "
            f"KL to the labels {kl:.3f}, value error {error:.3f}")


class Rehearsal(BaseCallback):
    """``pretrain_rehearsal`` minibatch steps of the pretraining loss on ``labels`` at the
    start of each rollout, with PPO's own optimizer (at its learning rate) and
    ``max_grad_norm``: the labels stay in view while PPO learns from games. The rollout is
    then played by the rehearsed policy, so PPO's update starts from the policy that
    collected it. Minibatches of ``pretrain_batch_size`` are drawn from the seed and the step
    count, so a resumed run draws what an unbroken one would. Logs ``pretrain/rehearsal_kl``."""

    def __init__(self, config: TrainConfig, labels: Labelled) -> None:
        super().__init__()
        self.config = config
        self.targets = labels.targets

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        count = len(self.targets.values)
        rng = np.random.default_rng([self.config.seed, self.model.num_timesteps])
        batches = (rng.choice(count, size=min(self.config.pretrain_minibatch, count), replace=False)
                   for _ in range(self.config.pretrain_rehearsal))
        policy = self.model.policy
        kl, _ = distil(policy, policy.optimizer, self.targets, batches, self.config)
        self.logger.record("pretrain/rehearsal_kl", kl)
