"""The AlphaZero policy/value network, its batched evaluator and the board symmetries.

``AzNet`` is a plain-torch residual conv tower (sizes from the game's ``Game.network``
record: ``channels``, ``blocks``, ``hidden``) over the mover's-view observation planes
(``rules.observation(state)``: the side to move's stones, the other's), plus a constant plane
of ones so that the zero padding off the board differs from an empty cell. Two heads: the
policy's logits over the whole action space (the caller masks the illegal ones) and the
value of the position for the side to move, in ``[-1, 1]`` (tanh).

``Symmetries`` holds the board's symmetries as index permutations (``agents.layers.
board_symmetries``: 8 for square boards whose actions are cells, the left-right mirror for
four-in-a-row's columns) and maps batches of observations, masks and policy targets to
their images: what training uses to augment its samples.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from boardgym.agents.layers import KERNEL, ONES_PLANES, PADDING, ResidualBlock, board_symmetries
from boardgym.envs.games.core import NetworkSize

POLICY_PLANES = 2
"""Channels of the policy head's 1x1 convolution."""
VALUE_PLANES = 1
"""Channels of the value head's 1x1 convolution."""
MASKED_LOGIT = -np.inf
SIZES = ("channels", "blocks", "hidden")
"""The ``Architecture`` fields a network may grow in (``grow``); the others are the board's."""
PRECISIONS = ("float32", "bfloat16")
"""The number formats a network may compute in, by name: ``float32`` as stored, or
``bfloat16`` autocast on the network's device (weights and gradients stay float32; about
twice the speed on CPUs with AVX-512 BF16, ``bench/network.py --precision``)."""


def check_precision(precision: str) -> None:
    """Raises ``ValueError`` naming the choices unless ``precision`` is in ``PRECISIONS``."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {sorted(PRECISIONS)}, got {precision!r}; "
                         "fix it with --set precision=float32 (or bfloat16)")


def computing_in(precision: str, device: str | torch.device = "cpu") -> torch.autocast:
    """The context a network's forward pass on ``device`` (``"cpu"``, ``"cuda"``,
    ``"cuda:N"``) runs in for ``precision`` (``PRECISIONS``): bfloat16 autocast of that
    device's type, or none.

    Raises:
        ValueError: an unknown precision.
    """
    check_precision(precision)
    return torch.autocast(torch.device(device).type, dtype=torch.bfloat16,
                          enabled=precision == "bfloat16")


def device_of(net: nn.Module) -> torch.device:
    """The device ``net``'s weights live on (the CPU for a network without any)."""
    return next((weight.device for weight in net.parameters()), torch.device("cpu"))


@dataclass(frozen=True)
class Architecture:
    """Everything ``AzNet`` is built from: the board's facts and the tower's size.

    Attributes:
        planes, rows, cols: the observation shape ``(planes, rows, cols)``.
        n_actions: the size of the action space.
        channels: convolution width.
        blocks: residual blocks after the stem convolution.
        hidden: units of the value head's hidden layer.
    """

    planes: int
    rows: int
    cols: int
    n_actions: int
    channels: int
    blocks: int
    hidden: int

    @classmethod
    def of(cls, rules: Any, state: Any, size: NetworkSize) -> Architecture:
        """The architecture for the board of ``state`` (any position of it) and ``size``."""
        planes, rows, cols = rules.observation(state).shape
        return cls(int(planes), int(rows), int(cols), int(rules.legal_mask(state).size),
                   size.channels, size.blocks, size.hidden)

    def to_dict(self) -> dict[str, int]:
        """The architecture as JSON data."""
        return asdict(self)


class AzNet(nn.Module):
    """Residual conv tower with a policy head (logits) and a value head (tanh).

    Args:
        arch: the board facts and sizes (``Architecture``).
    """

    def __init__(self, arch: Architecture) -> None:
        super().__init__()
        self.arch = arch
        cells = arch.rows * arch.cols
        self.stem = nn.Conv2d(arch.planes + ONES_PLANES, arch.channels, KERNEL, padding=PADDING)
        self.tower = nn.Sequential(*(ResidualBlock(arch.channels) for _ in range(arch.blocks)))
        self.policy_conv = nn.Conv2d(arch.channels, POLICY_PLANES, 1)
        self.policy_out = nn.Linear(POLICY_PLANES * cells, arch.n_actions)
        self.value_conv = nn.Conv2d(arch.channels, VALUE_PLANES, 1)
        self.value_hidden = nn.Linear(VALUE_PLANES * cells, arch.hidden)
        self.value_out = nn.Linear(arch.hidden, 1)

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits (B, n_actions), values (B,))`` of a float batch ``(B, planes, rows, cols)``,
        both float32 whatever precision the layers computed in (``computing_in``)."""
        ones = torch.ones_like(planes[:, :ONES_PLANES])
        x = self.tower(torch.relu(self.stem(torch.cat([planes, ones], dim=1))))
        logits = self.policy_out(torch.relu(self.policy_conv(x)).flatten(1))
        hidden = torch.relu(self.value_hidden(torch.relu(self.value_conv(x)).flatten(1)))
        return logits.float(), torch.tanh(self.value_out(hidden).float()).squeeze(1)


def unfit_fields(start: Architecture, arch: Architecture) -> list[str]:
    """The fields in which ``start`` cannot grow into ``arch`` (empty: ``grow`` can): a
    board field that differs, or a size (``SIZES``) larger than ``arch``'s."""
    theirs, ours = start.to_dict(), arch.to_dict()
    return [key for key in ours
            if theirs[key] > ours[key] or (theirs[key] < ours[key] and key not in SIZES)]


def grow(net: AzNet, arch: Architecture) -> AzNet:
    """A network of the larger ``arch`` that computes exactly what ``net`` computes.

    ``arch`` has ``net``'s board (planes, rows, cols, actions) and at least its channels,
    blocks and hidden units. The result starts as a fresh ``AzNet(arch)`` (torch's random
    initialisation, so seed torch for a reproducible one) and takes ``net``'s weights in the
    leading slice of each tensor. Each weight from a new unit into an old one is zeroed,
    and so is the second convolution of each new block: such a block passes its input,
    already rectified, unchanged. The new units keep random weights into themselves, so
    gradients reach every weight and the larger network can learn past the smaller one.

    Raises:
        ValueError: ``unfit_fields`` names some: another board, or a smaller size.
    """
    unfit = unfit_fields(net.arch, arch)
    if unfit:
        raise ValueError(f"a network grows only on its own board, never shrinks; "
                         f"{', '.join(unfit)} do not fit")
    grown = AzNet(arch)
    weights = grown.state_dict()  # views of the parameters: writing them writes the network
    with torch.no_grad():
        for name, old in net.state_dict().items():
            new = weights[name]
            new[tuple(slice(0, size) for size in old.shape)] = old
            if new.dim() > 1:
                new[:old.shape[0], old.shape[1]:] = 0
        for block in range(net.arch.blocks, arch.blocks):
            weights[f"tower.{block}.conv2.weight"].zero_()
            weights[f"tower.{block}.conv2.bias"].zero_()
    return grown


class Evaluator:
    """The network as the search sees it: numpy observations and masks in, masked logits
    and values out, one forward pass per call, no gradients. The pass runs on the device
    the network's weights are on (``device_of``, read at every call: the learner's network
    may move): the observations go there, the results come back to the CPU as numpy.

    Args:
        net: the network (put in eval mode).
        precision: the number format its layers compute in (``PRECISIONS``).

    Raises:
        ValueError: an unknown precision.
    """

    def __init__(self, net: AzNet, precision: str = "float32") -> None:
        self.net = net.eval()
        check_precision(precision)
        self.precision = precision

    def __call__(self, observations: np.ndarray, masks: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        """``(logits, values)`` of a batch: logits ``(B, A)`` float64 with ``-inf`` where
        ``masks`` is False, values ``(B,)`` for the side to move."""
        device = device_of(self.net)
        with torch.inference_mode(), computing_in(self.precision, device):
            logits, values = self.net(torch.as_tensor(observations, dtype=torch.float32,
                                                      device=device))
        return (np.where(masks, logits.cpu().numpy().astype(np.float64), MASKED_LOGIT),
                values.cpu().numpy().astype(np.float64))


class Symmetries:
    """The symmetries of a board as index permutations, applied to training batches.

    Symmetry ``g`` maps a board to its image (``cells[g]``: image cell ``i`` is board cell
    ``cells[g, i]``) and an action in the image to the same move on the board
    (``actions[g]``). Symmetry 0 is the identity.

    Args:
        rows, cols: the board.
        n_actions: the size of the action space (cells or columns).

    Raises:
        ValueError: actions that are neither cells nor columns.
    """

    def __init__(self, rows: int, cols: int, n_actions: int) -> None:
        cells, actions = board_symmetries(rows, cols, n_actions)
        self.cells = cells.numpy()
        self.actions = actions.numpy()

    def __len__(self) -> int:
        return len(self.cells)

    def apply(self, which: np.ndarray, observations: np.ndarray, *per_action: np.ndarray
              ) -> tuple[np.ndarray, ...]:
        """Each sample ``i`` mapped by symmetry ``which[i]``.

        Args:
            which: ``(B,)`` symmetry indices.
            observations: ``(B, planes, rows, cols)``.
            per_action: arrays ``(B, n_actions)`` (masks, policy targets).

        Returns:
            The images: observations first, then each of ``per_action``.
        """
        batch, planes, rows, cols = observations.shape
        flat = observations.reshape(batch, planes, rows * cols)
        image = np.take_along_axis(flat, self.cells[which][:, None, :], axis=2)
        moved = (np.take_along_axis(array, self.actions[which], axis=1) for array in per_action)
        return (image.reshape(observations.shape), *moved)


__all__ = ["PRECISIONS", "SIZES", "Architecture", "AzNet", "Evaluator", "Symmetries",
           "check_precision", "computing_in", "device_of", "grow", "unfit_fields"]
