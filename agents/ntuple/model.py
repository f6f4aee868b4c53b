"""``NTupleNet``: an n-tuple network as data (its record and weights) and as kernel arrays.

The record says everything the weights mean: the game and board, the tuples (cells, see
``agents.ntuple.layouts``), the cell codes (``values``: 3, or 4 where the game marks cells),
the stages, and the layout's name. The weights are one float32 array, a table per tuple and
stage: tuple ``t`` of ``n`` cells owns ``values ** n`` entries, stage ``s`` starts at
``s * stride``. ``arrays`` builds the tuple of arrays the compiled kernels read
(``agents.ntuple.network``), with every symmetric image of each tuple.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from boardgym.agents.ntuple.layouts import Board, Tuples, check_tuples, parse_layout
from boardgym.envs.games import canonical_name

MAX_WEIGHTS = 64_000_000
"""The most entries a network may have (256 MB of float32)."""
MAX_STAGES = 64


def game_module(game: str) -> ModuleType:
    """The n-tuple module of ``game`` (``agents.ntuple.<game>``): its board, layouts and
    kernels.

    Raises:
        ValueError: a game without n-tuple networks.
    """
    name = canonical_name(game)
    try:
        return importlib.import_module(f"boardgym.agents.ntuple.{name}")
    except ModuleNotFoundError:
        raise ValueError(f"{name} has no n-tuple networks; they exist for reversi, "
                         "four_in_a_row and tictactoe") from None


@dataclass
class NTupleNet:
    """An n-tuple network of one game and board.

    Attributes:
        game: the game's name.
        env_kwargs: its board options (four-in-a-row ``rows``, ``columns``, ``connect``).
        tuples: each tuple's cells.
        values: codes per cell (3: empty, own, other; 4: a marked empty cell too).
        stages: tables per band of filled cells: ``stages`` bands of ``stage_span`` cells
            from ``stage_first`` filled cells (the first and last bands take the rest).
        stage_first: filled cells where stage 1's band would start, less one span.
        stage_span: filled cells per stage.
        layout: the name the tuples were made from (for people; the tuples are the truth).
        weights: the entries, ``stages * stride`` float32 (zeros when not given).
        games: self-play games it was trained on.
    """

    game: str
    env_kwargs: dict[str, Any]
    tuples: Tuples
    values: int = 3
    stages: int = 1
    stage_first: int = 0
    stage_span: int = 1
    layout: str = ""
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    games: int = 0
    _arrays: tuple[Any, ...] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.game = canonical_name(self.game)
        module = game_module(self.game)
        self.board: Board = module.board(self.env_kwargs)
        check_tuples(self.tuples, self.board)
        if self.values not in module.VALUES:
            raise ValueError(f"{self.game} networks have values {module.VALUES}, not "
                             f"{self.values}")
        if not 1 <= self.stages <= MAX_STAGES or self.stage_span < 1:
            raise ValueError(f"stages must be 1..{MAX_STAGES} of a span >= 1, not "
                             f"{self.stages} of {self.stage_span}")
        if self.stages * self.stride > MAX_WEIGHTS:
            raise ValueError(f"the network would have {self.stages * self.stride:,} weights, "
                             f"over the {MAX_WEIGHTS:,} allowed: use fewer or shorter tuples "
                             "or fewer stages")
        if self.weights.size == 0:
            self.weights = np.zeros(self.stages * self.stride, dtype=np.float32)
        if self.weights.shape != (self.stages * self.stride,) or self.weights.dtype != np.float32:
            raise ValueError(f"the weights must be {self.stages * self.stride} float32, not "
                             f"{self.weights.shape} {self.weights.dtype}")

    @classmethod
    def from_layout(cls, game: str, env_kwargs: dict[str, Any], layout: str, values: int = 3,
                    stages: int = 1) -> NTupleNet:
        """A zero network of the named ``layout`` with ``stages`` equal bands of the
        game's moves.

        Raises:
            ValueError: an unknown layout or values, or a network over the caps.
        """
        module = game_module(game)
        board = module.board(env_kwargs)
        first, span = module.stage_bands(env_kwargs, stages)
        return cls(game, dict(env_kwargs), parse_layout(layout, board, module.LAYOUTS), values,
                   stages, first, span, layout)

    @property
    def stride(self) -> int:
        """Entries of one stage's tables."""
        return sum(self.values ** len(cells) for cells in self.tuples)

    @property
    def arrays(self) -> tuple[Any, ...]:
        """The kernels' ``NetArrays`` (``agents.ntuple.network``), built once; they share
        ``weights``, so a kernel's update shows in the network."""
        if self._arrays is None or self._arrays[3] is not self.weights:
            images, offsets, start = [], [], 0
            for cells in self.tuples:
                for image in self.board.images(cells):
                    images.append(image)
                    offsets.append(start)
                start += self.values ** len(cells)
            longest = max(len(image) for image in images)
            table = np.zeros((len(images), longest), dtype=np.int64)
            for row, image in enumerate(images):
                table[row, :len(image)] = image
            shape = np.array([self.values, self.stride, self.stages, self.stage_first,
                              self.stage_span], dtype=np.int64)
            self._arrays = (table, np.array([len(image) for image in images], dtype=np.int64),
                            np.array(offsets, dtype=np.int64), self.weights, shape)
        return self._arrays

    @property
    def images(self) -> int:
        """Lookups per position (the tuples' symmetric images)."""
        return int(self.arrays[0].shape[0])

    def record(self) -> dict[str, Any]:
        """The JSON record of the network (``agents.ntuple.checkpoint``)."""
        return {"game": self.game, "env_kwargs": dict(self.env_kwargs), "layout": self.layout,
                "tuples": [list(cells) for cells in self.tuples], "values": self.values,
                "symmetry": self.board.symmetry, "stages": self.stages,
                "stage_first": self.stage_first, "stage_span": self.stage_span,
                "games": self.games}

    def copy(self) -> NTupleNet:
        """A network with a copy of the weights."""
        return NTupleNet(self.game, dict(self.env_kwargs), [list(t) for t in self.tuples],
                         self.values, self.stages, self.stage_first, self.stage_span,
                         self.layout, self.weights.copy(), self.games)
