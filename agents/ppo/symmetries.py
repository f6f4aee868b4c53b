"""A board's symmetries as the PPO policies use them: the canonical image of each board
(``SymmetricPolicy``), the symmetry buffers of a policy and the mapping of actions.

The symmetries themselves are index permutations (``agents.layers.board_symmetries``); here
a board's images are ordered by exact integer keys, computed for a whole batch by one matmul.
"""

from __future__ import annotations

import gymnasium as gym
import torch
from torch import nn

from boardgym.agents.layers import board_symmetries

WORD_BITS = 63
"""The board's bits are compared as unsigned words of this many bits, word 0 first."""
HALF_BITS = 31
"""Each word is compared as its high then low part, so every key is exact in float64."""


def key_weights(cells: torch.Tensor, planes: int) -> torch.Tensor:
    """Weights ``(planes*C, G*K)`` giving, by one matmul with a batch of flattened 0/1
    boards, the ``K`` sort keys of each board's ``G`` images (``cells``, ``(G, C)``).

    Key 0 is the moment: the sum over stones of their cell index in the image. Then the
    image's bits, plane by plane (bit ``t`` = plane ``t // C``, cell ``t % C``), read as
    words of ``WORD_BITS`` bits (bit ``t`` has weight ``2 ** (t % WORD_BITS)`` in word
    ``t // WORD_BITS``), each split into its high and low part. All keys are integers below
    ``2 ** 53``, so float64 sums them exactly.
    """
    groups, size = cells.shape
    words = -(-planes * size // WORD_BITS)
    weights = torch.zeros(planes * size, groups, 1 + 2 * words, dtype=torch.float64)
    image_cell = cells.argsort(dim=1)  # image_cell[g, i]: where board cell i lands in image g
    for plane in range(planes):
        rows = plane * size + torch.arange(size)
        for g in range(groups):
            bit = plane * size + image_cell[g]
            word, place = bit // WORD_BITS, bit % WORD_BITS
            high = place >= HALF_BITS
            weights[rows, g, 0] = image_cell[g].double()
            weights[rows, g, 1 + 2 * word + (~high).long()] = torch.where(
                high, 2.0 ** (place - HALF_BITS), 2.0 ** place).double()
    return weights.reshape(planes * size, -1)


def lexicographic_argmin(keys: torch.Tensor) -> torch.Tensor:
    """Per row of ``keys`` ``(batch, G, K)``, the first ``g`` whose key tuple
    ``(keys[., g, 0], keys[., g, 1], ...)`` is smallest; shape ``(batch,)``."""
    candidates = torch.ones(keys.shape[:2], dtype=torch.bool, device=keys.device)
    for key in keys.unbind(dim=2):
        masked = torch.where(candidates, key, torch.inf)
        candidates = candidates & (masked == masked.min(dim=1, keepdim=True).values)
    return candidates.to(torch.uint8).argmax(dim=1)


def permute_actions(actions: torch.Tensor, permutations: torch.Tensor) -> torch.Tensor:
    """Each of ``actions`` (any shape, one per board) through its board's row of
    ``permutations`` ``(batch, n_actions)``: ``permutations[i, actions[i]]``."""
    return permutations.gather(1, actions.long().reshape(-1, 1)).reshape(actions.shape)


def register_symmetries(policy: nn.Module, observation_space: gym.spaces.Space,
                        action_space: gym.spaces.Space) -> int:
    """Give ``policy`` the (non-persistent) buffers ``cells``, ``actions`` and ``to_image``
    of its board's symmetries (``board_symmetries``; ``to_image`` maps an original action
    to the same move in each image); returns the number of observation planes.

    Raises:
        ValueError: the observation is not ``(planes, rows, cols)`` or the actions are not a
            ``Discrete`` space of cells or columns.
    """
    shape = observation_space.shape
    if shape is None or len(shape) != 3 or not isinstance(action_space, gym.spaces.Discrete):
        raise ValueError(f"{type(policy).__name__} needs (planes, rows, cols) boards and "
                         f"Discrete actions, got {observation_space} and {action_space}")
    planes, rows, cols = shape
    cells, actions = board_symmetries(rows, cols, int(action_space.n))
    policy.register_buffer("cells", cells, persistent=False)
    policy.register_buffer("actions", actions, persistent=False)
    policy.register_buffer("to_image", actions.argsort(dim=1), persistent=False)
    return int(planes)


__all__ = ["key_weights", "lexicographic_argmin", "permute_actions", "register_symmetries"]
