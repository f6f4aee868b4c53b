"""The vector env's observations of its N games, kept from step to step where that is cheaper.

A game's observation is a function of its two stone planes alone; where each move adds one
stone (four-in-a-row), the observations are mended cell by cell instead of observed in full.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boardgym.envs.games.bitboard import single_bit_slot
from boardgym.envs.games.core import Game, take


class Observations:
    """The agent's observations of N games: observed in full, or kept from step to step and
    mended where a plane changed by one stone.

    Every game's observation is a function of its two planes alone (``rules.observation``
    reads ``side_view``'s planes), and each set bit shows as one cell. Where each move adds
    one stone (four-in-a-row), after a step each plane differs from the last observed one in
    at most one bit: that cell is written, the rest is kept. New games start from the empty
    board (``restart``). The first step that changes a plane by more than one stone (a flip in
    Reversi) observes in full and turns mending off for good.

    Args:
        record: the game.
        fresh: a one-game batched state.
        mend: try keeping and mending (else every call observes in full).
    """

    def __init__(self, record: Game, fresh: Any, mend: bool) -> None:
        self.record = record
        self.obs: np.ndarray | None = None
        self.pairs: np.ndarray | None = None
        """``(N, 2)`` planes of ``obs``."""
        self.starts = np.zeros(0, dtype=np.intp)
        """``(N, 2)``: where each plane of ``obs`` starts in its flat view."""
        self.cell_of: np.ndarray | None = None
        """By ``single_bit_slot`` of bit ``b``: the flat cell showing bit ``b`` of plane 0
        (None: not mending)."""
        self.mask_of = np.zeros(0, dtype=np.uint64)
        """By ``single_bit_slot`` of bit ``b``: ``1 << b``."""
        if mend:
            self._map_cells(fresh)

    def _map_cells(self, fresh: Any) -> None:
        """Fill ``cell_of`` and ``mask_of``, unless a bit shows in more than one cell."""
        bits = np.uint64(1) << np.arange(64, dtype=np.uint64)
        boards = take(fresh, np.zeros(bits.shape, dtype=np.intp))
        shown = self._observe(boards, bits, bits).reshape(64, 2, -1)
        if (shown.sum(axis=2) > 1).any() or not np.array_equal(shown[:, 0], shown[:, 1]):
            return
        cells = shown[:, 0].argmax(axis=1)
        on_board = shown[:, 0].sum(axis=1) > 0
        index = single_bit_slot(bits)
        self.mask_of = np.empty(64, dtype=np.uint64)
        self.mask_of[index] = bits
        self.cell_of = np.empty(64, dtype=np.intp)
        self.cell_of[index] = cells
        if not on_board[0]:  # slot 0 also stands for "no change": point it at a real cell
            self.mask_of[0], self.cell_of[0] = bits[on_board][0], cells[on_board][0]

    def _observe(self, state: Any, mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
        """The observation of the planes ``mine``/``theirs`` of the batched ``state``."""
        return np.asarray(self.record.rules.observation(state._replace(me=mine, opp=theirs)))

    def __call__(self, state: Any, mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
        """A fresh ``(N, 2, rows, cols)`` observation of the planes ``mine``/``theirs`` of the
        batched ``state``."""
        if self.cell_of is None:
            return self._observe(state, mine, theirs)
        pairs = np.stack((mine, theirs), axis=1)
        if self.obs is None or self.pairs is None:  # the first call
            self.obs = self._observe(state, mine, theirs)
        else:
            self._mend(state, pairs)
        self.pairs = pairs
        return self.obs.copy()

    def restart(self, index: np.ndarray, state: Any = None, mine: Any = None,
                theirs: Any = None) -> None:
        """Games ``index`` start again: their kept observation becomes the empty board's, or
        with ``state`` (their batched positions) and its planes ``mine``/``theirs``, theirs."""
        if self.obs is None or self.pairs is None:
            return
        if state is None:
            self.obs[index] = 0
            self.pairs[index] = 0
            return
        self.obs[index] = self._observe(state, mine, theirs)
        self.pairs[index] = np.stack((mine, theirs), axis=1)

    def _mend(self, state: Any, pairs: np.ndarray) -> None:
        """Bring ``obs`` from ``self.pairs`` to ``pairs``: cell by cell if every plane
        changed by at most one stone, else observed in full (and mending stops)."""
        assert self.obs is not None and self.pairs is not None and self.cell_of is not None
        changed = pairs ^ self.pairs
        if np.bitwise_count(changed).max() > 1:
            self.obs = self._observe(state, pairs[:, 0], pairs[:, 1])
            self.cell_of = None
            return
        index = single_bit_slot(changed)
        shown = (pairs & self.mask_of.take(index)) != 0
        if self.starts.size == 0:
            self.starts = np.arange(pairs.size).reshape(pairs.shape) * self.obs[0, 0].size
        self.obs.reshape(-1)[self.starts + self.cell_of.take(index)] = shown.view(np.uint8)


__all__ = ["Observations"]
