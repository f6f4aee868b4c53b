"""The PPO networks' input planes and their feature extractor, ``BoardCNN``, for board
observations from 3x3 to 8x8.

SB3's ``NatureCNN`` strides its 8x8 kernels by 4 and needs boards of 36x36 or more; board
games want the opposite: 3x3 convolutions that keep the board size (``padding=1``), a few
residual blocks, and a dense layer over every cell, so that the policy can tell a corner
from a centre cell. A constant plane of ones is added to the input so that the zero padding
(off the board) differs from an empty cell.

Besides the stones, ``BoardCNN`` may read planes computed from the board, not learned: what
each game's strategy turns on (Reversi's legal moves, four-in-a-row's threats, open lines,
row parity and landing cells). Those functions are game knowledge over 0/1 stone planes;
this module imports only torch, gymnasium, stable-baselines3 and the rules core (numpy).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from boardgym.agents.layers import KERNEL, ONES_PLANES, PADDING, ResidualBlock
from boardgym.envs.games import reversi
from boardgym.envs.games.bitboard import pack, unpack

MOBILITY_PLANES = 2
THREAT_PLANES = 2
WINDOW_PLANES = 4
"""``BoardCNN(windows=True)``: two counts (``WINDOW_STONES`` and ``threats - 1`` stones) a side."""
WINDOW_STONES = 2
PARITY_PLANES = 1
LINE_DIRECTIONS = 4
"""Row, column and both diagonals (``line_kernels``)."""


def reversi_moves(me: torch.Tensor, opp: torch.Tensor) -> torch.Tensor:
    """Reversi legal-move plane of the owner of ``me`` (0/1 float boards ``(batch, 8, 8)``):
    the rules core's move generator (``reversi.legal_bits``) run on the packed boards."""
    words = [pack(board.detach().cpu().numpy(), reversi.BOARD_MAP) for board in (me, opp)]
    moves = unpack(reversi.legal_bits(*words), reversi.BOARD_MAP)
    return torch.from_numpy(moves).to(dtype=me.dtype, device=me.device)


@functools.cache
def line_kernels(length: int) -> torch.Tensor:
    """The four line directions (row, column, both diagonals) as convolution kernels
    ``(4, 1, length, length)``: each a line of ``length`` ones from the top-left corner (the
    anti-diagonal from the top-right)."""
    diagonal = torch.eye(length)
    row, column = torch.zeros(length, length), torch.zeros(length, length)
    row[0], column[:, 0] = 1, 1
    return torch.stack([row, column, diagonal, diagonal.flip(1)])[:, None]


def window_counts(observations: torch.Tensor, length: int, filled: int) -> torch.Tensor:
    """How many lines of ``length`` cells through each empty cell hold ``filled`` stones of
    one side and no stone of the other, per side: ``(batch, 2, rows, cols)`` counts for the
    0/1 stone planes leading ``observations`` ``(batch, 2+, rows, cols)``.

    A window is ``length`` cells along a row, column or diagonal, all on the board. The
    boards are padded below and to the right with cells that are neither stone nor empty, so
    a window is open for a side exactly when its stones and empty cells add up to ``length``.
    """
    stones = observations[:, :2]
    batch, sides, rows, cols = stones.shape
    empty = 1 - stones.sum(dim=1, keepdim=True)
    kernels = line_kernels(length).to(stones)
    pad = (0, length - 1, 0, length - 1)
    counts = nn.functional.conv2d(nn.functional.pad(stones.reshape(-1, 1, rows, cols), pad),
                                  kernels)
    holes = nn.functional.conv2d(nn.functional.pad(empty, pad), kernels)
    windows = ((counts == filled)
               & (holes == length - filled).repeat_interleave(sides, dim=0))
    marked = nn.functional.conv_transpose2d(windows.to(stones.dtype), kernels)
    return marked[..., :rows, :cols].sum(dim=1).reshape(batch, sides, rows, cols) * empty


def threat_planes(observations: torch.Tensor, length: int) -> torch.Tensor:
    """The threats of both sides of ``observations`` ``(batch, 2+, rows, cols)`` (0/1 stone
    planes first): plane ``s`` of the result marks the empty cells where one more stone of
    plane ``s``'s side completes a line of ``length`` in a row, column or diagonal (a window
    of ``window_counts`` with ``length - 1`` of the side's stones; lines longer than the
    board give no threat).
    """
    return line_planes(observations, length, windows=False)[0]


def line_planes(observations: torch.Tensor, length: int, windows: bool) -> list[torch.Tensor]:
    """``BoardCNN``'s line inputs for ``threats=length``: the threat planes and, with
    ``windows``, the window planes (``window_counts`` of 2 and of ``length - 1`` stones, each
    over the most lines a cell can lie on), in the stem's input order. The lines one stone
    short are counted once and serve both."""
    near = window_counts(observations, length, length - 1)
    threats = (near > 0).to(observations.dtype)
    if not windows:
        return [threats]
    scale = 1 / (LINE_DIRECTIONS * length)
    return [threats, window_counts(observations, length, WINDOW_STONES) * scale, near * scale]


def parity_plane(observations: torch.Tensor) -> torch.Tensor:
    """The rows whose parity favours the side to move, on boards where stones stack up from
    the bottom row and the sides alternate with no pass (four-in-a-row): ``(batch, 1, rows,
    cols)``, 1 on the odd rows counted from the bottom (the 1st, 3rd, ...) when the side to
    move moved first (the two stone planes leading ``observations`` hold as many stones),
    on the even rows when it moved second, 0 elsewhere.

    Allis's rule of Connect Four: the first player's threats on odd rows and the second's on
    even rows are the ones the end of the game lets stand, since the columns fill up in turn.
    """
    stones = observations[:, :2]
    rows, cols = stones.shape[-2:]
    moved_second = stones.sum(dim=(1, 2, 3)).remainder(2)
    even_rows = torch.arange(rows - 1, -1, -1, device=stones.device).remainder(2)
    plane = (even_rows[None, :] == moved_second[:, None]).to(stones.dtype)
    return plane[:, None, :, None].expand(-1, PARITY_PLANES, rows, cols)


def landing_features(planes: torch.Tensor, observations: torch.Tensor) -> torch.Tensor:
    """``planes`` ``(batch, channels, rows, cols)`` read at each column's landing cell, on
    boards where stones stack up from the bottom row (four-in-a-row; row 0 at the top): the
    lowest empty cell of each column of ``observations`` (the two stone planes first), where
    a stone dropped in that column comes to rest. ``(batch, channels, cols)``; a full
    column's entries are 0.
    """
    stones = observations[:, :2].sum(dim=1)
    rows = stones.shape[-2]
    heights = stones.sum(dim=1).round().long()
    open_columns = (heights < rows).to(planes.dtype)
    landing = (rows - 1 - heights).clamp(min=0)
    index = landing[:, None, None, :].expand(-1, planes.shape[1], 1, -1)
    return planes.gather(2, index).squeeze(2) * open_columns[:, None, :]


FEATURE_ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": torch.relu, "tanh": torch.tanh}
"""``BoardCNN``'s feature-layer activations. ``relu`` (the checkpoints made before the choice
existed) loses most of its units for good in PPO's first updates (a unit whose input goes
negative on every board gets no gradient again); ``tanh`` cannot die."""


class BoardCNN(BaseFeaturesExtractor):
    """Features of a ``(planes, rows, cols)`` board: stem conv, residual blocks, dense layer.

    Args:
        observation_space: a ``Box`` of shape ``(planes, rows, cols)``, any board size.
        channels: convolution width.
        blocks: number of residual blocks after the stem convolution.
        features_dim: size of the output feature vector.
        mobility: Reversi only: add the legal-move planes of both sides as inputs (how many
            moves each side has is the heart of Reversi strategy; computed, not learned).
        features_activation: the feature layer's activation (``FEATURE_ACTIVATIONS``).
        head_planes: when positive, a 1x1 convolution (and relu) first squeezes the tower's
            ``channels`` planes to this many, as the az network's heads do; 0: the feature
            layer reads all ``channels`` planes (the checkpoints made before the choice). With
            all planes, the feature layer has so many non-negative inputs that Adam's first
            steps at PPO's learning rates push every unit's input far from 0 at once (a relu
            unit dies, a tanh unit saturates): the features stop depending on the board.
        threats: when positive (at least 2), add the threat planes of both sides as inputs
            (``threat_planes``: the empty cells where one more stone completes a line of
            this many; ``connect`` in four-in-a-row, where threats are the heart of strategy;
            computed, not learned). 0: none (the checkpoints made before the choice).
        windows: with ``threats``, add per side the open lines of that length through each
            empty cell (``window_counts``) holding 2 and, apart, ``threats - 1`` of the
            side's stones, each count over the most lines a cell can lie on: where each side
            can still build, the potential the book AIs evaluate (computed, not learned).
        parity: add ``parity_plane`` as an input: the rows whose threats favour the side to
            move in a game of stacking stones (computed, not learned).
        landing: in a game of stacking stones, the feature layer also reads the tower's
            ``channels`` planes at each column's landing cell (``landing_features``): the
            cell a move in that column fills, which moves with the column's height, so a
            dense layer over fixed cells cannot pick it out by itself.
        gated: each residual block's branch starts switched off (``ResidualBlock``'s gate):
            without it, 6 blocks of 32 channels (or 4 of 64) learn nothing at the four-in-a-row
            pretraining's 1e-3.

    Raises:
        ValueError: the observation space is not a 3-d ``Box``, a size is not positive,
            ``threats`` is neither 0 nor a line length from 2 to the board's longer side, or
            ``mobility`` off Reversi's 8x8 board, or ``windows`` without ``threats``.
    """

    def __init__(self, observation_space: gym.spaces.Box, channels: int = 32, blocks: int = 2,
                 features_dim: int = 256, mobility: bool = False,
                 features_activation: str = "relu", head_planes: int = 0,
                 threats: int = 0, windows: bool = False, parity: bool = False,
                 landing: bool = False, gated: bool = False) -> None:
        shape = observation_space.shape
        if features_activation not in FEATURE_ACTIVATIONS:
            raise ValueError(f"BoardCNN features_activation must be one of "
                             f"{sorted(FEATURE_ACTIVATIONS)}, got {features_activation!r}")
        if not isinstance(observation_space, gym.spaces.Box) or shape is None or len(shape) != 3:
            raise ValueError(f"BoardCNN needs a Box observation of shape (planes, rows, cols), "
                             f"got {observation_space}")
        if min(channels, features_dim) <= 0 or blocks < 0:
            raise ValueError(f"BoardCNN sizes must be positive (blocks >= 0): channels="
                             f"{channels}, blocks={blocks}, features_dim={features_dim}")
        planes, rows, cols = shape
        if threats < 0 or threats == 1 or threats > max(rows, cols):
            raise ValueError(f"BoardCNN threats is a line length from 2 to {max(rows, cols)} "
                             f"on a {rows}x{cols} board, or 0 for none; got {threats}")
        if windows and threats < WINDOW_STONES + 1:
            raise ValueError(f"BoardCNN windows count the lines of threats' length: set "
                             f"threats to at least {WINDOW_STONES + 1}, or windows=false")
        if mobility and (rows, cols) != reversi.BOARD_MAP.shape:
            raise ValueError(f"BoardCNN mobility planes are Reversi's, on its "
                             f"{reversi.SIZE}x{reversi.SIZE} board, not {rows}x{cols}: "
                             "mobility=false")
        super().__init__(observation_space, features_dim)
        self.mobility = mobility
        self.threats = threats
        self.windows = windows
        self.parity = parity
        self.landing = landing
        self.features_activation = FEATURE_ACTIVATIONS[features_activation]
        extra = (ONES_PLANES + (MOBILITY_PLANES if mobility else 0)
                 + (THREAT_PLANES if threats else 0) + (WINDOW_PLANES if windows else 0)
                 + (PARITY_PLANES if parity else 0))
        self.stem = nn.Conv2d(planes + extra, channels, KERNEL, padding=PADDING)
        self.blocks = nn.Sequential(*(ResidualBlock(channels, gated) for _ in range(blocks)))
        self.squeeze = nn.Conv2d(channels, head_planes, 1) if head_planes else nn.Identity()
        self.head = nn.Linear((head_planes or channels) * rows * cols
                              + (channels * cols if landing else 0), features_dim)

    @property
    def traceable(self) -> bool:
        """Whether every input plane is computed in torch, so that a traced graph (ONNX)
        holds the whole network: not with ``mobility``, which the rules core computes in
        numpy."""
        return not self.mobility

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Feature vectors ``(batch, features_dim)`` of a batch of boards."""
        inputs = [observations, torch.ones_like(observations[:, :ONES_PLANES])]
        if self.mobility:
            me, opp = observations[:, 0], observations[:, 1]
            inputs.append(torch.stack([reversi_moves(me, opp), reversi_moves(opp, me)], dim=1))
        if self.threats:
            inputs.extend(line_planes(observations, self.threats, self.windows))
        if self.parity:
            inputs.append(parity_plane(observations))
        x = torch.relu(self.stem(torch.cat(inputs, dim=1)))
        tower = self.blocks(x)
        x = torch.relu(self.squeeze(tower)) if isinstance(self.squeeze, nn.Conv2d) else tower
        inputs = [torch.flatten(x, start_dim=1)]
        if self.landing:
            inputs.append(torch.flatten(landing_features(tower, observations), start_dim=1))
        return self.features_activation(self.head(torch.cat(inputs, dim=1)))


__all__ = ["FEATURE_ACTIVATIONS", "BoardCNN", "landing_features", "line_planes", "parity_plane",
           "reversi_moves", "threat_planes", "window_counts"]
