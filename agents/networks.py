"""A small residual CNN feature extractor for board observations from 3x3 to 8x8.

SB3's ``NatureCNN`` strides its 8x8 kernels by 4 and needs boards of 36x36 or more; board
games want the opposite: 3x3 convolutions that keep the board size (``padding=1``), a few
residual blocks, and a dense layer over every cell, so that the policy can tell a corner
from a centre cell. A constant plane of ones is added to the input so that the zero padding
(off the board) differs from an empty cell.

This module imports only torch, gymnasium, stable-baselines3 and the rules core (numpy):
checkpoints refer to ``BoardCNN`` by its import path, so loading one (``agents.policy``)
imports this module alone.
"""

from __future__ import annotations

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from envs.games import reversi
from envs.games.bitboard import pack, unpack

KERNEL = 3
PADDING = 1
ONES_PLANES = 1
MOBILITY_PLANES = 2


def reversi_moves(me: torch.Tensor, opp: torch.Tensor) -> torch.Tensor:
    """Reversi legal-move plane of the owner of ``me`` (0/1 float boards ``(batch, 8, 8)``):
    the rules core's move generator (``reversi.legal_bits``) run on the packed boards."""
    words = [pack(board.detach().cpu().numpy(), reversi.BOARD_MAP) for board in (me, opp)]
    moves = unpack(reversi.legal_bits(*words), reversi.BOARD_MAP)
    return torch.from_numpy(moves).to(dtype=me.dtype, device=me.device)


class ResidualBlock(nn.Module):
    """Two 3x3 convolutions with a skip connection: ``relu(x + conv(relu(conv(x))))``."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, KERNEL, padding=PADDING)
        self.conv2 = nn.Conv2d(channels, channels, KERNEL, padding=PADDING)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The block's output, same shape as ``x``."""
        return torch.relu(x + self.conv2(torch.relu(self.conv1(x))))


class BoardCNN(BaseFeaturesExtractor):
    """Features of a ``(planes, rows, cols)`` board: stem conv, residual blocks, dense layer.

    Args:
        observation_space: a ``Box`` of shape ``(planes, rows, cols)``, any board size.
        channels: convolution width.
        blocks: number of residual blocks after the stem convolution.
        features_dim: size of the output feature vector.
        mobility: Reversi only: add the legal-move planes of both sides as inputs (how many
            moves each side has is the heart of Reversi strategy; computed, not learned).

    Raises:
        ValueError: the observation space is not a 3-d ``Box``, or a size is not positive.
    """

    def __init__(self, observation_space: gym.spaces.Box, channels: int = 32, blocks: int = 2,
                 features_dim: int = 256, mobility: bool = False) -> None:
        shape = observation_space.shape
        if not isinstance(observation_space, gym.spaces.Box) or shape is None or len(shape) != 3:
            raise ValueError(f"BoardCNN needs a Box observation of shape (planes, rows, cols), "
                             f"got {observation_space}")
        if min(channels, features_dim) <= 0 or blocks < 0:
            raise ValueError(f"BoardCNN sizes must be positive (blocks >= 0): channels="
                             f"{channels}, blocks={blocks}, features_dim={features_dim}")
        super().__init__(observation_space, features_dim)
        planes, rows, cols = shape
        self.mobility = mobility
        extra = ONES_PLANES + (MOBILITY_PLANES if mobility else 0)
        self.stem = nn.Conv2d(planes + extra, channels, KERNEL, padding=PADDING)
        self.blocks = nn.Sequential(*(ResidualBlock(channels) for _ in range(blocks)))
        self.head = nn.Linear(channels * rows * cols, features_dim)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Feature vectors ``(batch, features_dim)`` of a batch of boards."""
        inputs = [observations, torch.ones_like(observations[:, :ONES_PLANES])]
        if self.mobility:
            me, opp = observations[:, 0], observations[:, 1]
            inputs.append(torch.stack([reversi_moves(me, opp), reversi_moves(opp, me)], dim=1))
        x = torch.relu(self.stem(torch.cat(inputs, dim=1)))
        x = self.blocks(x)
        return torch.relu(self.head(torch.flatten(x, start_dim=1)))
