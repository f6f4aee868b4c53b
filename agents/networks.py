"""Networks for board observations from 3x3 to 8x8: a small residual CNN feature extractor,
a policy that plays every board in one canonical orientation, and one that averages itself
over every orientation.

SB3's ``NatureCNN`` strides its 8x8 kernels by 4 and needs boards of 36x36 or more; board
games want the opposite: 3x3 convolutions that keep the board size (``padding=1``), a few
residual blocks, and a dense layer over every cell, so that the policy can tell a corner
from a centre cell. A constant plane of ones is added to the input so that the zero padding
(off the board) differs from an empty cell.

Board games are symmetric: a mirrored position calls for the mirrored move.
``SymmetricPolicy`` builds that in, by running the network on one canonical image of each
board (``board_symmetries``); ``AveragedPolicy`` by averaging its heads over every image.

This module imports only torch, gymnasium, stable-baselines3, sb3-contrib and the rules
core (numpy). A checkpoint names its classes in a JSON record (``agents.policy``), never by
import path: ``POLICIES``, ``EXTRACTORS`` and ``ACTIVATIONS`` are the only classes a
checkpoint can name.
"""

from __future__ import annotations

import functools
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
from boardgym.agents.layers import KERNEL, ONES_PLANES, PADDING, ResidualBlock, board_symmetries
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


# -- board symmetries ------------------------------------------------------------------------

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
        with computing_in(self.precision):
            logits, values = self.tower(typing.cast(torch.Tensor, obs).float())
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
