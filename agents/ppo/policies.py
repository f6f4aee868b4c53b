"""The PPO policy classes: one that plays every board in one canonical orientation, one that
averages itself over every orientation, an ensemble of those, and the az tower as a PPO
policy; and the one place that runs a policy's actor and critic (``action_logits``,
``logits_and_values``).

Board games are symmetric: a mirrored position calls for the mirrored move.
``SymmetricPolicy`` builds that in, by running the network on one canonical image of each
board (``agents.ppo.symmetries``); ``AveragedPolicy`` by averaging its heads over every image.

A checkpoint names its classes in a JSON record (``agents.ppo.architecture``), never by
import path: ``POLICIES``, ``EXTRACTORS`` and ``ACTIVATIONS`` are the only classes a
checkpoint can name, by class name.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.policies import BaseModel
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.type_aliases import PyTorchObs
from torch import nn

from boardgym.agents.az.network import Architecture, AzNet, check_precision, computing_in
from boardgym.agents.ppo.planes import BoardCNN
from boardgym.agents.ppo.symmetries import (
    key_weights,
    lexicographic_argmin,
    permute_actions,
    register_symmetries,
)


def board_batch(policy: nn.Module, obs: PyTorchObs) -> torch.Tensor:
    """``obs`` as the one tensor of boards a symmetric policy maps.

    Raises:
        TypeError: ``obs`` is not a tensor (a dict observation, say).
    """
    if not isinstance(obs, torch.Tensor):
        raise TypeError(f"{type(policy).__name__} takes a batch of boards as one tensor, got "
                        f"{type(obs).__name__}")
    return obs


def masked_distribution(policy: MaskableActorCriticPolicy, logits: torch.Tensor,
                        action_masks: Any) -> Any:
    """SB3's masked categorical distribution of ``policy`` over ``logits`` (original
    orientation); ``action_masks`` None: unmasked."""
    distribution = policy.action_dist.proba_distribution(action_logits=logits)
    if action_masks is not None:
        distribution.apply_masking(action_masks)
    return distribution


class SymmetricPolicy(MaskableActorCriticPolicy):
    """A ``MaskableActorCriticPolicy`` that sees every board in one canonical orientation.

    Each observation is replaced by the least of its symmetric images (``board_symmetries``)
    under a fixed order: first the stones' weighted sum of row-major cell indices (so the
    chosen image changes little from move to move), then the board's bits, which makes the
    choice exact. The network runs on that image; masks and actions are mapped to it and
    back. So positions that are mirror images of each other share one set of weights and
    get mirrored moves and equal values, and the 4 equivalent opening lines of Reversi are
    learnt once instead of four times. Every public method (``forward``,
    ``evaluate_actions``, ``get_distribution``, ``predict_values``, ``predict``) takes and
    returns the original orientation, so PPO, masks and agents use it unchanged.

    Raises:
        ValueError: the observation is not ``(planes, rows, cols)``, or the actions are not
            cells or columns (``board_symmetries``).
    """

    cells: torch.Tensor
    actions: torch.Tensor
    to_image: torch.Tensor
    keys: torch.Tensor

    def __init__(self, observation_space: gym.spaces.Space, action_space: gym.spaces.Space,
                 *args: Any, **kwargs: Any) -> None:
        super().__init__(observation_space, action_space, *args, **kwargs)
        planes = register_symmetries(self, observation_space, action_space)
        self.register_buffer("keys", key_weights(self.cells, planes), persistent=False)

    def canonical(self, obs: PyTorchObs) -> tuple[torch.Tensor, torch.Tensor]:
        """The canonical image of each board in ``obs`` and which symmetry made it."""
        obs = board_batch(self, obs)
        batch, planes = obs.shape[:2]
        boards = obs.reshape(batch, planes, -1)
        keys = ((boards != 0).reshape(batch, -1).double() @ self.keys).reshape(
            batch, len(self.cells), -1)
        chosen = lexicographic_argmin(keys)
        image = boards.gather(2, self.cells[chosen].unsqueeze(1).expand_as(boards))
        return image.reshape(obs.shape), chosen

    def image_masks(self, masks: Any, chosen: torch.Tensor) -> Any:
        """Action masks of the original boards, mapped onto their canonical images."""
        if masks is None:
            return None
        masks = torch.as_tensor(masks, device=chosen.device).reshape(len(chosen), -1)
        return masks.gather(1, self.actions[chosen])

    def forward(self, obs: torch.Tensor, deterministic: bool = False,
                action_masks: Any = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Actions (original orientation), values and log-probabilities, as SB3's forward."""
        image, chosen = self.canonical(obs)
        image_actions, values, log_prob = super().forward(
            image, deterministic, self.image_masks(action_masks, chosen))
        return permute_actions(image_actions, self.actions[chosen]), values, log_prob

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor,
                         action_masks: Any = None
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Values, log-likelihoods and entropies of original-orientation ``actions``."""
        image, chosen = self.canonical(obs)
        return super().evaluate_actions(image, permute_actions(actions, self.to_image[chosen]),
                                        self.image_masks(action_masks, chosen))

    def get_distribution(self, obs: PyTorchObs, action_masks: Any = None) -> Any:
        """The masked action distribution over original-orientation actions."""
        return masked_distribution(self, action_logits(self, obs), action_masks)

    def predict_values(self, obs: PyTorchObs) -> torch.Tensor:
        """Values of the boards (those of their canonical images)."""
        return super().predict_values(self.canonical(obs)[0])


class HeadsPolicy(MaskableActorCriticPolicy):
    """A ``MaskableActorCriticPolicy`` defined by one method, ``heads``: the action logits
    ``(B, A)`` (original orientation, unmasked) and values ``(B, 1)`` of a batch of boards.
    ``forward``, ``evaluate_actions``, ``get_distribution`` and ``predict_values`` (and so
    ``predict``) are SB3's, computed from ``heads``, so PPO, masks and agents use a subclass
    unchanged."""

    def heads(self, obs: PyTorchObs) -> tuple[torch.Tensor, torch.Tensor]:
        """The action logits ``(B, A)`` and values ``(B, 1)`` of a batch of boards."""
        raise NotImplementedError

    def forward(self, obs: torch.Tensor, deterministic: bool = False,
                action_masks: Any = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Actions, values and log-probabilities, as SB3's forward."""
        logits, values = self.heads(obs)
        distribution = masked_distribution(self, logits, action_masks)
        actions = distribution.get_actions(deterministic=deterministic)
        return (actions.reshape((-1, *self.action_space.shape)), values,  # type: ignore[misc]
                distribution.log_prob(actions))

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor,
                         action_masks: Any = None
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Values, log-likelihoods of ``actions`` and entropies, as SB3's."""
        logits, values = self.heads(obs)
        distribution = masked_distribution(self, logits, action_masks)
        return values, distribution.log_prob(actions), distribution.entropy()

    def get_distribution(self, obs: PyTorchObs, action_masks: Any = None) -> Any:
        """The masked action distribution of the policy's logits."""
        return masked_distribution(self, action_logits(self, obs), action_masks)

    def predict_values(self, obs: PyTorchObs) -> torch.Tensor:
        """The values ``(B, 1)``."""
        return self.heads(obs)[1]


class AveragedPolicy(HeadsPolicy):
    """A ``HeadsPolicy`` that plays the mean of its symmetric images' heads.

    The network runs on every symmetric image of each board (``board_symmetries``: the
    mirror image in four-in-a-row, 8 images of a square board); the action logits, mapped
    back to the original orientation, and the values are averaged over the images. Mean
    logits, not mean probabilities: after masking, the policy is the normalised geometric
    mean of the images' masked policies, whatever logits the illegal actions hold. So
    mirrored positions get mirrored moves and equal values, and the images' errors, which
    differ, partly cancel (a test-time average built into the policy, trained through).
    Every public method takes and returns the original orientation; it costs one network
    pass per image.

    Raises:
        ValueError: as ``register_symmetries``.
    """

    cells: torch.Tensor
    actions: torch.Tensor
    to_image: torch.Tensor

    def __init__(self, observation_space: gym.spaces.Space, action_space: gym.spaces.Space,
                 *args: Any, **kwargs: Any) -> None:
        super().__init__(observation_space, action_space, *args, **kwargs)
        register_symmetries(self, observation_space, action_space)

    def images(self, obs: PyTorchObs) -> torch.Tensor:
        """Every image of each board of ``obs`` ``(B, planes, rows, cols)``, image-major:
        ``(G * B, planes, rows, cols)``, rows ``g * B ... g * B + B - 1`` image ``g``."""
        obs = board_batch(self, obs)
        batch, planes = obs.shape[:2]
        boards = obs.reshape(batch, planes, -1)[:, :, self.cells]  # (B, planes, G, cells)
        return boards.permute(2, 0, 1, 3).reshape(-1, *obs.shape[1:])

    def averaged(self, logits: torch.Tensor) -> torch.Tensor:
        """Image-major logits ``(G * B, A)`` mapped back to the original orientation and
        averaged: ``(B, A)``."""
        groups = len(self.cells)
        logits = logits.reshape(groups, -1, logits.shape[-1])
        index = self.to_image.unsqueeze(1).expand(-1, logits.shape[1], -1)
        return logits.gather(2, index).mean(dim=0)

    def heads(self, obs: PyTorchObs) -> tuple[torch.Tensor, torch.Tensor]:
        """The averaged action logits ``(B, A)`` and values ``(B, 1)`` of a batch of boards."""
        logits, values = heads_of(self, self.images(obs))
        return (self.averaged(logits),
                values.reshape(len(self.cells), -1).mean(dim=0).unsqueeze(1))


class ParameterFree(BaseFeaturesExtractor):
    """The flattened board: a ``NetworksPolicy``'s own extractor, which SB3's constructor
    asks for and nothing runs (the policy's own modules are the networks)."""

    def __init__(self, observation_space: gym.spaces.Space) -> None:
        super().__init__(observation_space, gym.spaces.flatdim(observation_space))

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """The boards, flattened."""
        return torch.flatten(observations, start_dim=1)


class NetworksPolicy(HeadsPolicy):
    """A ``HeadsPolicy`` whose networks are modules of its own, made by ``build_networks``
    instead of SB3's extractor and heads (its SB3 extractor is ``ParameterFree``); its
    optimizer holds every parameter of them."""

    def make_features_extractor(self) -> BaseFeaturesExtractor:
        """``ParameterFree``: the policy's own modules are the networks."""
        return ParameterFree(self.observation_space)

    def build_networks(self, lr_schedule: Callable[[float], float]) -> None:
        """Make the policy's networks as attributes (modules)."""
        raise NotImplementedError

    def _build(self, lr_schedule: Callable[[float], float]) -> None:
        """The networks, then one optimizer over all their parameters (SB3 builds the heads
        and the optimizer here)."""
        self.build_networks(lr_schedule)
        self.optimizer = self.optimizer_class(  # type: ignore[call-arg]
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)


MAX_MEMBERS = 16
"""The most networks an ``EnsemblePolicy`` has (and a checkpoint may ask for)."""


class EnsemblePolicy(NetworksPolicy):
    """``members`` independent ``AveragedPolicy`` networks of one architecture, played as
    one policy: the mean of the members' action logits (the normalised geometric mean of
    their masked policies) and of their values.

    The members start from different random weights; ``train.pretrain`` trains each on its
    own loss, in its own minibatch order, so their errors differ and partly cancel in the
    mean (an ensemble: 2-6 separately trained four-in-a-row networks keep 0.5-2% more of
    the game-theoretic outcomes than each alone). PPO then trains them through the mean. The
    members are ``self.members`` (a ``ModuleList``); the policy has no network of its own
    (its SB3 extractor is ``ParameterFree``), and its optimizer holds every member's
    parameters. Costs one pass of each member per board.

    Args:
        members: how many networks, 2 to ``MAX_MEMBERS``.
        *args, **kwargs: every member's ``AveragedPolicy`` arguments.

    Raises:
        ValueError: another number of members, or as ``AveragedPolicy``.
    """

    def __init__(self, observation_space: gym.spaces.Space, action_space: gym.spaces.Space,
                 lr_schedule: Callable[[float], float], *args: Any, members: int = 2,
                 **kwargs: Any) -> None:
        if isinstance(members, bool) or not isinstance(members, int) \
                or not 2 <= members <= MAX_MEMBERS:
            raise ValueError(f"EnsemblePolicy has 2 to {MAX_MEMBERS} members, got {members!r}")
        self.member_count = members
        self.member_arguments = (args, kwargs)
        super().__init__(observation_space, action_space, lr_schedule, *args, **kwargs)

    def build_networks(self, lr_schedule: Callable[[float], float]) -> None:
        """The members."""
        args, kwargs = self.member_arguments
        self.members = nn.ModuleList(
            AveragedPolicy(self.observation_space, self.action_space, lr_schedule, *args,
                           **kwargs) for _ in range(self.member_count))

    def _get_constructor_parameters(self) -> dict[str, Any]:
        """SB3's record of the arguments, with ``members``."""
        return {**super()._get_constructor_parameters(), "members": self.member_count}

    def networks(self) -> list[AveragedPolicy]:
        """The members, in order."""
        return [typing.cast(AveragedPolicy, member) for member in self.members]

    def heads(self, obs: PyTorchObs) -> tuple[torch.Tensor, torch.Tensor]:
        """The members' mean action logits ``(B, A)`` and values ``(B, 1)``."""
        logits, values = zip(*(member.heads(obs) for member in self.networks()), strict=True)
        return torch.stack(logits).mean(dim=0), torch.stack(values).mean(dim=0)


class TowerPolicy(NetworksPolicy):
    """An az network (``agents.az.network.AzNet``: a residual tower of ``channels`` and
    ``blocks``, a policy head over the actions and a tanh value head with a hidden layer of
    ``hidden``) as a MaskablePPO policy: its logits are the policy's, its value the critic's.

    So PPO can go on from an az checkpoint's weights exactly (``train.config``'s ``tower``
    with ``init_from`` an az file): the policy starts as the az player's raw policy (``az:0``),
    with no student's imitation gap. The policy has no SB3 extractor or heads of its own
    (``ParameterFree``); its optimizer holds the tower's parameters. One tower pass per board.

    Args:
        channels, blocks, hidden: the tower's sizes (``agents.az.network.Architecture``).
        precision: the number format the tower's layers compute in
            (``agents.az.network.PRECISIONS``); a training setting, not part of the
            checkpoint's record, so a loaded policy plays in float32.

    Raises:
        ValueError: an unknown precision.
    """

    def __init__(self, observation_space: gym.spaces.Space, action_space: gym.spaces.Space,
                 lr_schedule: Callable[[float], float], *args: Any, channels: int = 32,
                 blocks: int = 4, hidden: int = 128, precision: str = "float32",
                 **kwargs: Any) -> None:
        planes, rows, cols = typing.cast(tuple[int, int, int], observation_space.shape)
        actions = int(typing.cast(gym.spaces.Discrete, action_space).n)
        self.architecture = Architecture(planes, rows, cols, actions, channels, blocks, hidden)
        self.compute_in(precision)
        super().__init__(observation_space, action_space, lr_schedule, *args, **kwargs)

    def compute_in(self, precision: str) -> None:
        """Run the tower's layers in ``precision`` (``agents.az.network.PRECISIONS``) from
        now on; the weights stay as they are.

        Raises:
            ValueError: an unknown precision.
        """
        check_precision(precision)
        self.precision = precision

    def build_networks(self, lr_schedule: Callable[[float], float]) -> None:
        """The tower."""
        self.tower = AzNet(self.architecture)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        """SB3's record of the arguments, with the tower's sizes."""
        return {**super()._get_constructor_parameters(), **self.sizes()}

    def sizes(self) -> dict[str, int]:
        """The tower's ``channels``, ``blocks`` and ``hidden``."""
        arch = self.architecture
        return {"channels": arch.channels, "blocks": arch.blocks, "hidden": arch.hidden}

    def heads(self, obs: PyTorchObs) -> tuple[torch.Tensor, torch.Tensor]:
        """The tower's action logits ``(B, A)`` and values ``(B, 1)``, float32."""
        planes = typing.cast(torch.Tensor, obs)
        with computing_in(self.precision, planes.device):
            logits, values = self.tower(planes.float())
        return logits, values.unsqueeze(1)


def members_of(policy: MaskableActorCriticPolicy) -> list[MaskableActorCriticPolicy]:
    """The separately trained networks of ``policy``: an ``EnsemblePolicy``'s members, else
    the policy itself."""
    return list(policy.networks()) if isinstance(policy, EnsemblePolicy) else [policy]


def action_logits(policy: MaskableActorCriticPolicy, obs: PyTorchObs) -> torch.Tensor:
    """The action logits (unnormalised, unmasked) of ``policy`` for a batch of boards ``obs``.

    The one place that runs a policy's actor: extractor, actor layers, action layer; for a
    ``SymmetricPolicy`` on the canonical images, mapped back to the original orientation;
    for an ``AveragedPolicy`` on every image, mapped back and averaged; for an
    ``EnsemblePolicy``, the mean of its members'; for a ``TowerPolicy``, its tower's.
    """
    if isinstance(policy, SymmetricPolicy):
        image, chosen = policy.canonical(obs)
        return action_logits_of(policy, image).gather(1, policy.to_image[chosen])
    if isinstance(policy, AveragedPolicy):
        return policy.averaged(action_logits_of(policy, policy.images(obs)))
    if isinstance(policy, EnsemblePolicy):
        return torch.stack([action_logits(member, obs) for member in policy.networks()]).mean(0)
    if isinstance(policy, TowerPolicy):
        return policy.heads(obs)[0]
    return action_logits_of(policy, obs)


def action_logits_of(policy: MaskableActorCriticPolicy, obs: PyTorchObs) -> torch.Tensor:
    """``policy``'s actor on ``obs`` as it is (no canonical image)."""
    features = BaseModel.extract_features(policy, obs, policy.pi_features_extractor)
    return policy.action_net(policy.mlp_extractor.forward_actor(features))


def logits_and_values(policy: MaskableActorCriticPolicy, obs: PyTorchObs
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    """``action_logits`` and the value head's estimates ``(B,)`` (``predict_values``) of
    ``policy`` for a batch of boards, with one pass of a shared feature extractor: what a tree
    search asks of a position."""
    if isinstance(policy, SymmetricPolicy):
        image, chosen = policy.canonical(obs)
        logits, values = heads_of(policy, image)
        return logits.gather(1, policy.to_image[chosen]), values
    if isinstance(policy, HeadsPolicy):
        logits, values = policy.heads(obs)
        return logits, values.reshape(-1)
    return heads_of(policy, obs)


def heads_of(policy: MaskableActorCriticPolicy, obs: PyTorchObs
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """``policy``'s actor logits and critic values on ``obs`` as it is (no canonical image)."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        latent_pi = policy.mlp_extractor.forward_actor(features[0])
        latent_vf = policy.mlp_extractor.forward_critic(features[1])
    return policy.action_net(latent_pi), policy.value_net(latent_vf).reshape(-1)


POLICIES: dict[str, type[MaskableActorCriticPolicy]] = {
    "MaskableActorCriticPolicy": MaskableActorCriticPolicy,
    "SymmetricPolicy": SymmetricPolicy,
    "AveragedPolicy": AveragedPolicy,
    "EnsemblePolicy": EnsemblePolicy,
    "TowerPolicy": TowerPolicy,
}
"""The policy classes a checkpoint may name (its architecture record's ``class``)."""
EXTRACTORS: dict[str, type[BaseFeaturesExtractor]] = {"BoardCNN": BoardCNN}
"""The feature extractors a checkpoint may name."""
ACTIVATIONS: dict[str, type[nn.Module]] = {
    module.__name__: module for module in (nn.Tanh, nn.ReLU, nn.LeakyReLU, nn.ELU, nn.GELU,
                                           nn.SiLU)}
"""The activation functions a checkpoint may name (SB3's default is ``Tanh``)."""


__all__ = ["ACTIVATIONS", "EXTRACTORS", "MAX_MEMBERS", "POLICIES", "AveragedPolicy",
           "EnsemblePolicy", "HeadsPolicy", "NetworksPolicy", "ParameterFree",
           "SymmetricPolicy", "TowerPolicy", "action_logits", "action_logits_of", "board_batch",
           "heads_of", "logits_and_values", "masked_distribution", "members_of"]
