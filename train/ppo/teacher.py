"""Kickstarting: distil an az network or a searching player into the PPO learner (config
key ``teacher``).

With ``teacher: PATH`` (an az checkpoint of ``boardgym az``, same game and board), each
rollout ends with ``teacher_epochs`` passes of minibatch gradient steps (``batch_size``, the
policy's own optimizer and ``max_grad_norm``) on positions of the rollout, before PPO's
update, on

    w(step) * [ KL(teacher policy || learner policy) + vf_coef * (V_learner - v_teacher)^2 ]

where the KL runs over the legal moves (the rollout's masks) and ``w`` falls linearly from
``teacher_coef`` at step 0 to 0 at ``teacher_steps``; from there on the run is plain PPO.
The targets (``Targets``) come from the ``az:N`` player of the checkpoint, N =
``teacher_simulations``:

- N = 0: the network's raw policy and value on every position of the rollout (one forward
  pass on the learner's own observations: the env's planes are the mover's-view planes the
  az network was trained on).
- N > 0: the same, except on ``teacher_positions`` positions of the rollout (drawn evenly
  over its steps), where the targets are the improved policy and root value of its Gumbel
  search (with the game's exact solver near the end). The search reads the batched env's
  rules states, recorded as the rollout runs; the network alone covers the rest, so every
  position still gets its gradient steps.

With ``teacher: SPEC``, a named player (``alphabeta:4``, ``solver``: any spec of
``agents.make`` that is not a path), the targets are the moves it plays on
``teacher_positions`` positions of each rollout (drawn as above): all the probability on its
move, and no value (the value term is left out; ``Targets.values`` is NaN there). Only those
positions are distilled; the learner's own positions make the imitation on-policy (DAgger:
Ross et al. 2011). Its cost is the player's time a move, one game after another.

With ``teacher: pretrained``, the teacher is the learner itself as PPO starts (the
``init_from`` weights after the pretraining), frozen: its policy on every position of the
rollout and no value (PPO's critic learns the league's returns). This is a KL penalty toward
the starting policy, weighted as above: PPO learns to beat the league without forgetting
what the labels taught (``FrozenPolicy``). The run keeps the frozen weights in
``checkpoints/start.zip``, from which a resumed run reads them.

With ``teacher_skip``, the positions of games against those league opponents get no
distillation (and no search): PPO alone shapes the moves there.

(Schmitt et al. 2018, "Kickstarting Deep Reinforcement Learning"; the search targets are
AlphaZero's.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, TypeAlias

import numpy as np
import torch
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm
from torch.nn import functional

from boardgym import agents
from boardgym.agents import shipped
from boardgym.agents.az import player
from boardgym.agents.az.checkpoint import CheckpointError, is_az_checkpoint
from boardgym.agents.az.search import softmax
from boardgym.agents.checkpoint import board_kwargs, initial_state
from boardgym.agents.ppo.policies import TowerPolicy, logits_and_values
from boardgym.agents.ppo.policy import PolicyEvaluator
from boardgym.envs.games import game as game_record
from boardgym.envs.games import players
from boardgym.envs.games.core import join, take
from boardgym.envs.sb3 import SB3VecEnv
from boardgym.train.ppo.config import PRETRAINED, TrainConfig

MASKED = -1e9
"""Logit of an illegal move in the distillation loss (finite, so 0 * it stays 0)."""


class Moves(NamedTuple):
    """A teacher's targets on N positions (a player's or a frozen policy's)."""

    policy: np.ndarray
    """``(N, A)`` move probabilities (a player: all of it on its move)."""
    value: np.ndarray
    """``(N,)`` NaN: these teachers give no value."""


class PlayerTeacher:
    """A named player as the teacher: its move on each searched position, no value.

    Args:
        agent: the player (``agents.make``).
        game: its game's name.
        seed: seeds the draws the player breaks ties with.
    """

    def __init__(self, agent: players.Agent, game: str, seed: int) -> None:
        self.agent = agent
        self.rules = game_record(game).rules
        self.rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return f"PlayerTeacher({self.agent!r})"

    def reseed(self, *key: int) -> None:
        """Draw the next tie-breaks from ``key`` (``Kickstart``: the run's seed and step, so
        that a resumed run draws the same)."""
        self.rng = np.random.default_rng(key)

    def search_batch(self, state: Any) -> Moves:
        """The player's move in each game of the batched, unfinished ``state``, one-hot."""
        masks = self.rules.legal_mask(state)
        moves = players.act_each(self.agent, state, [self.rng] * len(masks))
        policy = np.zeros(masks.shape, dtype=np.float32)
        policy[np.arange(len(masks)), moves] = 1.0
        return Moves(policy, np.full(len(masks), np.nan, dtype=np.float32))


class FrozenPolicy:
    """A policy network that nobody trains as the teacher: its softmax over the legal moves
    on every position, no value (``teacher: pretrained``).

    Args:
        policy: the network in eval mode (``load_network`` of the run's ``start.zip``).
        precision: the number format a tower policy computes in (the run's ``precision``,
            as the learner); other policies compute in float32 and ignore it.

    Raises:
        ValueError: a tower policy and an unknown precision.
    """

    def __init__(self, policy: Any, precision: str = "float32") -> None:
        if isinstance(policy, TowerPolicy):
            policy.compute_in(precision)
        self.evaluate = PolicyEvaluator(policy)

    def __repr__(self) -> str:
        return f"FrozenPolicy({PRETRAINED})"

    def network_result(self, observations: np.ndarray, masks: np.ndarray) -> Moves:
        """The frozen policy's move probabilities on a batch of observations and legal
        ``masks``; NaN values."""
        logits, _ = self.evaluate(observations, masks)
        return Moves(softmax(logits).astype(np.float32),
                     np.full(len(masks), np.nan, dtype=np.float32))


Teacher: TypeAlias = player.AzAgent | PlayerTeacher | FrozenPolicy
"""A teacher: an az player, a named player (both from ``load_teacher``) or the learner's
frozen start (``FrozenPolicy``)."""


def load_teacher(config: TrainConfig) -> player.AzAgent | PlayerTeacher | None:
    """The teacher ``config.teacher`` names (None without one, or with ``pretrained``, which
    the run builds from its own policy), checked against the run: the
    ``az:teacher_simulations`` player of an az checkpoint (a path), or a ``PlayerTeacher``
    of a player spec.

    Raises:
        ValueError: no such file, not an az checkpoint, another game or board, an unknown
            player, an ``az:N@PATH`` spec (the path and ``teacher_simulations`` go apart), or
            a player teacher without the batched env (the message names the fix).
    """
    if config.teacher is None or config.teacher == PRETRAINED:
        return None
    name, _, arg = config.teacher.partition(":")
    if name == player.NAME:
        raise ValueError(f"teacher: {split_az_spec(arg)}")
    if not agents.is_checkpoint_spec(config.teacher):
        return player_teacher(config, config.teacher)
    try:
        if shipped.resolve(config.teacher).is_file() and not is_az_checkpoint(config.teacher):
            raise CheckpointError(f"{config.teacher} is not an az checkpoint (a policy "
                                  "checkpoint can start the run instead: init_from)")
        agent = player.load(config.teacher, config.game, config.teacher_simulations)
        agent.check_board(initial_state(config.game, config.env_kwargs))
    except (FileNotFoundError, CheckpointError) as error:
        raise ValueError(f"teacher: {error}; give --set teacher=PATH of an az checkpoint "
                         f"for {config.game} on "
                         f"{board_kwargs(config.env_kwargs) or 'the default board'}, a player "
                         "such as alphabeta:4, or null") from None
    return agent


def split_az_spec(arg: str) -> str:
    """How to give the teacher ``az:ARG`` (a player spec that names a checkpoint): the path
    and the simulations as two keys."""
    try:
        simulations, path = player.parse_spec(arg)
    except ValueError as error:
        return str(error)
    return (f"name the az checkpoint and its search apart: --set teacher={path} --set "
            f"teacher_simulations={simulations}")


def player_teacher(config: TrainConfig, spec: str) -> PlayerTeacher:
    """The ``PlayerTeacher`` of ``spec`` for the run (see ``load_teacher``)."""
    if config.vectorization == "dummy":
        raise ValueError(f"teacher: {spec} plays the batched env's positions; drop --set "
                         "vectorization=dummy or give an az checkpoint")
    try:
        agent = agents.make(config.game, spec, options=board_kwargs(config.env_kwargs))
    except (ValueError, FileNotFoundError, CheckpointError) as error:
        raise ValueError(f"teacher: {error}; give --set teacher=alphabeta:4 (a player), "
                         "PATH of an az checkpoint, or null") from None
    return PlayerTeacher(agent, config.game, config.seed)


def teacher_weight(config: TrainConfig, step: int) -> float:
    """The distillation weight at ``step``: ``teacher_coef`` falling linearly to 0 at
    ``teacher_steps`` (0 from there on)."""
    return config.teacher_coef * max(0.0, 1.0 - step / config.teacher_steps)


def masked_log_softmax(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Log-probabilities over the legal moves (``masks`` True); ``MASKED``-level elsewhere."""
    return functional.log_softmax(logits.masked_fill(~masks, MASKED), dim=1)


class Targets(NamedTuple):
    """What the learner is pulled toward on B positions of a rollout."""

    obs: torch.Tensor
    """``(B, planes, rows, cols)`` the learner's observations."""
    masks: torch.Tensor
    """``(B, A)`` the legal moves (bool)."""
    policy: torch.Tensor
    """``(B, A)`` the teacher's move probabilities (0 on illegal moves, rows sum to 1; a row
    of zeros: no policy target, the position teaches the value only)."""
    values: torch.Tensor
    """``(B,)`` the teacher's values for the side to move (NaN: none)."""

    def pick(self, index: np.ndarray) -> Targets:
        """The targets of the positions ``index``."""
        return Targets(*(field[index] for field in self))

    def to(self, device: torch.device) -> Targets:
        """The targets on ``device`` (the learner's)."""
        return Targets(*(field.to(device) for field in self))


def distillation_loss(policy: Any, targets: Targets, vf_coef: float
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(loss, kl, value_error)`` of ``policy`` on a batch of ``targets``: the mean KL from
    the teacher's policy to the learner's over the legal moves on the positions that have a
    policy target (0 when none has), plus ``vf_coef`` times the mean squared gap between the
    learner's values and the teacher's over the positions that have one (0 when none has)."""
    logits, values = logits_and_values(policy, targets.obs)
    learner_logp = masked_log_softmax(logits, targets.masks)
    teacher = targets.policy
    taught = teacher.sum(1) > 0
    kl = (torch.xlogy(teacher, teacher) - teacher * learner_logp).sum(1)[taught].sum() \
        / taught.sum().clamp(min=1)
    known = torch.isfinite(targets.values)
    if not known.any():
        return kl, kl, torch.zeros(())
    value_error = functional.mse_loss(values[known], targets.values[known])
    return kl + vf_coef * value_error, kl, value_error


def distil(policy: Any, optimizer: torch.optim.Optimizer, targets: Targets,
           batches: Iterable[np.ndarray], config: TrainConfig, weight: float = 1.0,
           rate: Callable[[int], float] | None = None, first_step: int = 0
           ) -> tuple[float, float]:
    """One step of ``optimizer`` down ``weight`` times the ``distillation_loss`` of each
    minibatch of ``targets`` (index arrays ``batches``, moved to ``policy``'s device), in
    training mode, the gradient of ``policy``'s parameters clipped to
    ``config.max_grad_norm`` as PPO's own update clips it; with ``rate``, the learning rate
    of the step numbered ``n`` (``first_step`` for the first minibatch) is ``rate(n)``.

    Returns:
        The mean KL and the mean value error over the steps.
    """
    kls, errors = [], []
    policy.set_training_mode(True)
    for step, batch in enumerate(batches, start=first_step):
        if rate is not None:
            optimizer.param_groups[0]["lr"] = rate(step)
        loss, kl, value_error = distillation_loss(policy, targets.pick(batch).to(policy.device),
                                                  config.vf_coef)
        optimizer.zero_grad()
        (weight * loss).backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
        optimizer.step()
        kls.append(kl.item())
        errors.append(value_error.item())
    policy.set_training_mode(False)
    return float(np.mean(kls)), float(np.mean(errors))


def as_targets(obs: np.ndarray, masks: np.ndarray, policy: np.ndarray, values: np.ndarray
               ) -> Targets:
    """``Targets`` of numpy arrays (float32; ``masks`` bool)."""
    return Targets(torch.as_tensor(obs, dtype=torch.float32), torch.as_tensor(masks),
                   torch.as_tensor(policy, dtype=torch.float32),
                   torch.as_tensor(values, dtype=torch.float32))


class Kickstart(BaseCallback):
    """The distillation pass at the end of each rollout (see the module docstring).

    Args:
        config: the run's config (``teacher_coef``, ``teacher_steps``, ``batch_size``,
            ``teacher_epochs``, ``teacher_simulations``, ``teacher_positions``, ``vf_coef``,
            ``max_grad_norm``, ``seed``).
        teacher: the teacher (``load_teacher``, or the run's ``FrozenPolicy``).
    """

    def __init__(self, config: TrainConfig, teacher: Teacher) -> None:
        super().__init__()
        self.config = config
        self.teacher = teacher
        self.network = teacher if not isinstance(teacher, PlayerTeacher) else None
        """The network that covers every position (an az or a frozen teacher), else None."""
        self.search = teacher if isinstance(teacher, PlayerTeacher) or (
            isinstance(teacher, player.AzAgent) and config.teacher_simulations > 0) else None
        """The teacher whose ``search_batch`` gives the targets of some positions, else
        None."""
        self.step_in_rollout = 0
        self.picked: list[tuple[int, np.ndarray, Any]] = []
        """``(rollout step, env indices, their rules states)`` recorded for the search."""
        self.taught: list[np.ndarray] = []
        """Per rollout step, which games are distilled (their opponent is not skipped)."""

    def _on_rollout_start(self) -> None:
        self.step_in_rollout = 0
        self.picked = []
        self.taught = []
        self.record()

    def _on_step(self) -> bool:
        """Record the positions of the next step (the env has just moved on to them)."""
        self.step_in_rollout += 1
        if self.step_in_rollout < self.rollout().buffer_size:
            self.record()
        return True

    def rollout(self) -> MaskableRolloutBuffer:
        """The model's rollout buffer."""
        assert isinstance(self.model, OnPolicyAlgorithm)  # MaskablePPO
        buffer = self.model.rollout_buffer
        assert isinstance(buffer, MaskableRolloutBuffer)
        return buffer

    def record(self) -> None:
        """Note which games at this step of the rollout are distilled and, with a search
        teacher, keep the rules states of some of them: ``teacher_positions`` spread evenly
        over the rollout's steps, drawn from the seed, the step count and the rollout step."""
        taught = self.taught_games()
        self.taught.append(taught)
        if self.search is None or self.weight() <= 0.0:
            return
        env = self.training_env.unwrapped
        assert isinstance(env, SB3VecEnv)  # the config refuses dummy vectorization
        steps, candidates = self.rollout().buffer_size, np.flatnonzero(taught)
        count = min(len(candidates), -(-self.config.teacher_positions // steps))
        rng = np.random.default_rng([self.config.seed, self.model.num_timesteps,
                                     self.step_in_rollout])
        index = np.sort(rng.choice(candidates, size=count, replace=False))
        self.picked.append((self.step_in_rollout, index, take(env.venv.state, index)))

    def taught_games(self) -> np.ndarray:
        """``(n_envs,)`` bool: the games whose current opponent is not in ``teacher_skip``."""
        games = self.training_env.num_envs
        if not self.config.teacher_skip:
            return np.ones(games, dtype=bool)
        env = self.training_env.unwrapped
        assert isinstance(env, SB3VecEnv)  # the config refuses teacher_skip without it
        return np.array([spec not in self.config.teacher_skip for spec in env.venv.opponents])

    def weight(self) -> float:
        """The distillation weight now."""
        return teacher_weight(self.config, self.model.num_timesteps)

    def _on_rollout_end(self) -> None:
        """Distil the teacher into the policy on the rollout just collected."""
        weight = self.weight()
        self.logger.record("teacher/weight", weight)
        if weight <= 0.0:
            return
        targets = self.targets()
        if not len(targets.obs):
            return
        policy = self.model.policy
        kl, error = distil(policy, policy.optimizer, targets,
                           self.minibatches(len(targets.obs)), self.config, weight)
        self.logger.record("teacher/kl", kl)
        self.logger.record("teacher/value_error", error)

    def targets(self) -> Targets:
        """The teacher's targets on the rollout: with a network, on every taught position
        (the network's, replaced by the search's on the recorded positions, which are taught
        ones); else on the recorded positions only. The network sees the taught positions
        only."""
        buffer = self.rollout()
        obs = buffer.observations.reshape(-1, *buffer.obs_shape)  # step-major, as stored
        masks = buffer.action_masks.reshape(len(obs), -1) > 0
        rows, searched = self.searched(buffer.n_envs, masks.shape[1])
        if self.network is None:
            return as_targets(obs[rows], masks[rows], searched.policy, searched.value)
        taught = np.flatnonzero(np.concatenate(self.taught))
        found = self.network.network_result(obs[taught], masks[taught])
        at = np.searchsorted(taught, rows)  # the recorded rows among the taught ones
        found.policy[at], found.value[at] = searched.policy, searched.value
        return as_targets(obs[taught], masks[taught], found.policy, found.value)

    def searched(self, games: int, actions: int) -> tuple[np.ndarray, Moves]:
        """The rollout rows (step-major, ``games`` a step) of the recorded positions and the
        teacher's search targets there (none recorded: empty)."""
        if not any(len(index) for _, index, _ in self.picked):
            return (np.zeros(0, dtype=np.int64),
                    Moves(np.zeros((0, actions), dtype=np.float32), np.zeros(0, np.float32)))
        rows = np.concatenate([step * games + index for step, index, _ in self.picked])
        assert self.search is not None  # positions are picked for a search teacher only
        if isinstance(self.search, PlayerTeacher):
            self.search.reseed(self.config.seed, self.model.num_timesteps)
        found = self.search.search_batch(join([states for _, _, states in self.picked]))
        return rows, Moves(found.policy, found.value)

    def minibatches(self, size: int) -> list[np.ndarray]:
        """``teacher_epochs`` shuffles of ``range(size)`` cut into ``batch_size`` minibatches,
        drawn from the seed and the step (a resumed run draws the same ones)."""
        order = np.random.default_rng([self.config.seed, self.model.num_timesteps])
        pieces = max(1, size // self.config.batch_size)
        return [batch for _ in range(self.config.teacher_epochs)
                for batch in np.array_split(order.permutation(size), pieces)]
