"""A small residual CNN feature extractor for board observations from 3x3 to 8x8.

SB3's ``NatureCNN`` strides its 8x8 kernels by 4 and needs boards of 36x36 or more; board
games want the opposite: 3x3 convolutions that keep the board size (``padding=1``), a few
residual blocks, and a dense layer over every cell, so that the policy can tell a corner
from a centre cell. A constant plane of ones is added to the input so that the zero padding
(off the board) differs from an empty cell.

This module imports only torch, gymnasium and stable-baselines3: checkpoints refer to
``BoardCNN`` by its import path, so loading one (``agents.policy``) imports this module alone.
"""

from __future__ import annotations

import gymnasium as gym
import torch
import torch.nn.functional as F
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

KERNEL = 3
PADDING = 1
ONES_PLANES = 1
MOBILITY_PLANES = 2
DIRECTIONS = tuple((dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0))
"""The 8 neighbour directions of a board cell as (row step, column step)."""


def shift(planes: torch.Tensor, dr: int, dc: int) -> torch.Tensor:
    """``planes`` moved by one cell along ``(dr, dc)`` (zeros enter at the edge):
    ``out[..., r, c] = planes[..., r - dr, c - dc]``."""
    rows, cols = planes.shape[-2:]
    padded = F.pad(planes, (PADDING, PADDING, PADDING, PADDING))
    return padded[..., PADDING - dr:PADDING - dr + rows, PADDING - dc:PADDING - dc + cols]


def reversi_moves(me: torch.Tensor, opp: torch.Tensor) -> torch.Tensor:
    """Reversi legal-move plane of the owner of ``me`` (0/1 float boards ``(batch, rows,
    cols)``): empty cells that end a run of ``opp`` discs starting next to one of ``me``."""
    empty = 1 - torch.maximum(me, opp)
    longest_run = max(me.shape[-2:]) - 2
    moves = torch.zeros_like(me)
    for dr, dc in DIRECTIONS:
        run = shift(me, dr, dc) * opp
        for _ in range(longest_run - 1):
            run = torch.maximum(run, shift(run, dr, dc) * opp)
        moves = torch.maximum(moves, shift(run, dr, dc) * empty)
    return moves


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
