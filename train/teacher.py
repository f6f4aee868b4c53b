"""Kickstarting: distil an az network into the PPO learner (config key ``teacher``).

With ``teacher: PATH`` (an az checkpoint of ``boardgym az``, same game and board), each
rollout ends with ``teacher_epochs`` passes of minibatch gradient steps (``batch_size``, the
policy's own optimizer and ``max_grad_norm``) on the rollout's positions, before PPO's
update, on

    w(step) * [ KL(teacher policy || learner policy) + vf_coef * (V_learner - v_teacher)^2 ]

where the KL runs over the legal moves (the rollout's masks) and ``w`` falls linearly from
``teacher_coef`` at step 0 to 0 at ``teacher_steps``; from there on the run is plain PPO.
The teacher sees the learner's observations as they are: the env's planes are the
mover's-view planes that the az network was trained on. The teacher is a network, never a
search: one forward pass per rollout. (Schmitt et al. 2018, "Kickstarting Deep
Reinforcement Learning".)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm
from torch.nn import functional

from boardgym.agents.az.checkpoint import CheckpointError, check_game, load_network
from boardgym.agents.az.network import AzNet
from boardgym.agents.networks import action_logits
from boardgym.agents.policy import board_kwargs, initial_state
from boardgym.train.config import TrainConfig

MASKED = -1e9
"""Logit of an illegal move in the distillation loss (finite, so 0 * it stays 0)."""


def load_teacher(config: TrainConfig) -> AzNet | None:
    """The az network of ``config.teacher`` (None without one), checked against the run.

    Raises:
        ValueError: no such file, not an az checkpoint, or another game or board (the
            message names the fix).
    """
    if config.teacher is None:
        return None
    try:
        net, record = load_network(config.teacher)
        check_game(record, config.game, config.teacher)
    except (FileNotFoundError, CheckpointError) as error:
        raise ValueError(f"teacher: {error}; give --set teacher=PATH of an az checkpoint "
                         f"for {config.game} (or null)") from None
    if initial_state(config.game, record["env_kwargs"]) != initial_state(config.game,
                                                                          config.env_kwargs):
        raise ValueError(f"teacher {config.teacher} was trained on the board "
                         f"{record['env_kwargs'] or 'default'}, the run plays "
                         f"{board_kwargs(config.env_kwargs) or 'the default board'}; give a "
                         "teacher of this board")
    return net


def teacher_weight(config: TrainConfig, step: int) -> float:
    """The distillation weight at ``step``: ``teacher_coef`` falling linearly to 0 at
    ``teacher_steps`` (0 from there on)."""
    return config.teacher_coef * max(0.0, 1.0 - step / config.teacher_steps)


def masked_log_softmax(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Log-probabilities over the legal moves (``masks`` True); ``MASKED``-level elsewhere."""
    return functional.log_softmax(logits.masked_fill(~masks, MASKED), dim=1)


def distillation_loss(policy: Any, teacher: AzNet, obs: torch.Tensor, masks: torch.Tensor,
                      vf_coef: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(loss, kl, value_error)`` of ``policy`` against ``teacher`` on a batch: the mean KL
    from the teacher's masked policy to the learner's, plus ``vf_coef`` times the mean
    squared gap between the learner's values and the teacher's."""
    with torch.no_grad():
        teacher_logits, teacher_values = teacher(obs)
        teacher_logp = masked_log_softmax(teacher_logits, masks)
    learner_logp = masked_log_softmax(action_logits(policy, obs), masks)
    kl = (teacher_logp.exp() * (teacher_logp - learner_logp)).where(masks, 0.0).sum(1).mean()
    value_error = functional.mse_loss(policy.predict_values(obs).flatten(), teacher_values)
    return kl + vf_coef * value_error, kl, value_error


class Kickstart(BaseCallback):
    """The distillation pass at the end of each rollout (see the module docstring).

    Args:
        config: the run's config (``teacher_coef``, ``teacher_steps``, ``batch_size``,
            ``teacher_epochs``, ``vf_coef``, ``max_grad_norm``, ``seed``).
        teacher: the teacher network (``load_teacher``).
    """

    def __init__(self, config: TrainConfig, teacher: AzNet) -> None:
        super().__init__()
        self.config = config
        self.teacher = teacher.eval()

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        """Distil the teacher into the policy on the rollout just collected."""
        weight = teacher_weight(self.config, self.model.num_timesteps)
        self.logger.record("teacher/weight", weight)
        if weight <= 0.0:
            return
        assert isinstance(self.model, OnPolicyAlgorithm)  # MaskablePPO
        buffer = self.model.rollout_buffer
        assert isinstance(buffer, MaskableRolloutBuffer)
        obs = torch.as_tensor(buffer.observations.reshape(-1, *buffer.obs_shape),
                              dtype=torch.float32)
        masks = torch.as_tensor(buffer.action_masks.reshape(len(obs), -1) > 0)
        kls, errors = [], []
        policy = self.model.policy
        policy.set_training_mode(True)
        for batch in self.minibatches(len(obs)):
            loss, kl, value_error = distillation_loss(policy, self.teacher, obs[batch],
                                                      masks[batch], self.config.vf_coef)
            policy.optimizer.zero_grad()
            (weight * loss).backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), self.config.max_grad_norm)
            policy.optimizer.step()
            kls.append(kl.item())
            errors.append(value_error.item())
        policy.set_training_mode(False)
        self.logger.record("teacher/kl", float(np.mean(kls)))
        self.logger.record("teacher/value_error", float(np.mean(errors)))

    def minibatches(self, size: int) -> list[np.ndarray]:
        """``teacher_epochs`` shuffles of ``range(size)`` cut into ``batch_size`` minibatches,
        drawn from the seed and the step (a resumed run draws the same ones)."""
        order = np.random.default_rng([self.config.seed, self.model.num_timesteps])
        pieces = max(1, size // self.config.batch_size)
        return [batch for _ in range(self.config.teacher_epochs)
                for batch in np.array_split(order.permutation(size), pieces)]
