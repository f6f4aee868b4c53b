"""The torch building blocks that both network families share (``agents.ppo``'s SB3
policies and ``agents.az.network``'s AlphaZero tower): the board convolution's size, the
constant plane of ones, the residual block and the board's symmetries as index permutations.
"""

from __future__ import annotations

import torch
from torch import nn

KERNEL = 3
PADDING = 1
ONES_PLANES = 1
"""A constant plane of ones joins the input, so that the zero padding (off the board)
differs from an empty cell."""


class ResidualBlock(nn.Module):
    """Two 3x3 convolutions with a skip connection: ``relu(x + conv(relu(conv(x))))``.

    With ``gated``, the branch is scaled by a learned scalar that starts at 0 (SkipInit, De
    and Smith 2020): ``relu(x + gate * conv(relu(conv(x))))``. A new tower of such blocks
    then computes what the stem alone does and grows its depth as the gates open, so a deep
    tower trains at the rates a shallow one does. The gate is a parameter, not a layer, so
    SB3's orthogonal initialisation of every convolution leaves it at 0.
    """

    def __init__(self, channels: int, gated: bool = False) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, KERNEL, padding=PADDING)
        self.conv2 = nn.Conv2d(channels, channels, KERNEL, padding=PADDING)
        self.gate = nn.Parameter(torch.zeros(())) if gated else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The block's output, same shape as ``x``."""
        branch = self.conv2(torch.relu(self.conv1(x)))
        return torch.relu(x + (branch if self.gate is None else self.gate * branch))


def board_symmetries(rows: int, cols: int, n_actions: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The symmetries of a ``rows x cols`` board as index permutations.

    Returns ``(cells, actions)``: row ``g`` of ``cells`` (``(G, rows*cols)``) maps board
    ``b`` (cells row-major) to its image ``b[cells[g]]``; row ``g`` of ``actions`` maps an
    action in the image to the same move on ``b``. Boards whose actions are cells
    (``n_actions == rows*cols``) have the symmetries of the rectangle (8 when square, else
    4); boards whose actions are columns (``n_actions == cols``, four-in-a-row) have the
    left-right mirror only. The identity is row 0.

    Raises:
        ValueError: ``n_actions`` is neither the number of cells nor of columns.
    """
    grid = torch.arange(rows * cols).reshape(rows, cols)
    if n_actions == rows * cols:
        images = [grid, grid.flip(0), grid.flip(1), grid.flip(0, 1)]
        if rows == cols:
            images += [image.T for image in images]
        cells = torch.stack([image.reshape(-1) for image in images])
        return cells, cells
    if n_actions == cols:
        columns = torch.arange(cols)
        return (torch.stack([grid.reshape(-1), grid.flip(1).reshape(-1)]),
                torch.stack([columns, columns.flip(0)]))
    raise ValueError(f"no board symmetries for {n_actions} actions on a {rows}x{cols} board "
                     "(actions must be cells or columns); use --set symmetric=false "
                     "average_symmetries=false")


__all__ = ["KERNEL", "ONES_PLANES", "PADDING", "ResidualBlock", "board_symmetries"]
