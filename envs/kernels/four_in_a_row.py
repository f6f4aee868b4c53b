"""Four-in-a-row's env kernels: the vector env's compiled step before and after the opponent's
replies (``envs.kernels`` runs them; the replies come from the opponent's compiled twin).

``begin_step`` starts new games where a sub-env needs one and plays the agent's legal moves;
``publish`` writes what the step returns. Each does in one compiled loop what the vector env's
Python path does for a next-step autoreset step against a batched opponent, with the same
values and the same stream draws (``envs.vector``'s module docstring). Every board size the
rules allow runs the same kernels: the size comes in as its ``words`` table
(``four_in_a_row_bits.board_words``, the last of the kernels' ``fields``), and the
observation as the ``cell_tables`` of its rows and columns.

The observation of a plane is its tokens in row-major order, row 0 at the top (the rules'
``board_map``): ``cell_tables`` turns each column's bits into their row-major bits, and the
row-major word of each plane is written one byte a cell (``envs.kernels.cells``).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from numba import njit

from boardgym.envs.games import four_in_a_row as rules
from boardgym.envs.games.compiled import ZERO, entry
from boardgym.envs.games.four_in_a_row_bits import (
    COLUMN_MASKS,
    COLUMNS,
    HEIGHT,
    MAX_COLUMNS,
    ROWS,
    legal_columns,
    play,
)
from boardgym.envs.kernels.cells import flat, flat_bool, new_agent_side, put, writable
from boardgym.envs.settings import OPPONENT_WON

BYTE_BITS = 8
BYTE, BYTE_SHIFT = np.uint64(0xFF), np.uint64(BYTE_BITS)
COLUMN_BYTES = 2
"""Bytes of a column's bits (at most 15 rows: ``row_major`` reads both)."""
FIELDS = (("me", np.uint64), ("opp", np.uint64), ("to_move", np.int64), ("won", np.bool_))
"""The state's fields the kernels change, and their types (then the size's ``words``)."""


def arrays(state: rules.State) -> tuple[rules.State, tuple[np.ndarray, ...]]:
    """``state`` with fields the kernels can change in place (the same state when its
    fields already are contiguous, writable and of ``FIELDS``' types), and the kernels'
    fields: those, then the board size's ``words`` table (read only)."""
    state, fields = writable(state, FIELDS)
    return state, (*fields, state.geom.words)


@cache
def cell_tables(rows: int, columns: int) -> np.ndarray:
    """``(MAX_COLUMNS, COLUMN_BYTES, 256)`` ``uint64``: entry ``[c, k, v]`` has the
    row-major bit ``r * columns + c`` (row ``r`` from the top) set for each set bit ``b`` of
    ``v`` whose cell ``8 * k + b`` of column ``c`` (from the bottom) is on the board, the cell
    of row ``rows - 1 - 8 * k - b``. Shared: read it, never write it."""
    values = np.arange(256)
    tables = np.zeros((MAX_COLUMNS, COLUMN_BYTES, 256), dtype=np.uint64)
    for c in range(columns):
        for k in range(COLUMN_BYTES):
            for b in range(BYTE_BITS):
                row = rows - 1 - (BYTE_BITS * k + b)
                if row >= 0:
                    cell = np.uint64(1 << (row * columns + c))
                    tables[c, k] |= np.where((values >> b) & 1 == 1, cell, np.uint64(0))
    return tables


@entry("void(u8[:], u8[:], i8[:], b1[:], u8[::1], i8[:], i8[:], b1[:], u8[:], u8[:], b1[:, :], "
       "i8[:], b1[:])")
def begin_step(me: np.ndarray, opp: np.ndarray, to_move: np.ndarray, won: np.ndarray,
               words: np.ndarray, agent_side: np.ndarray, first_codes: np.ndarray,
               needs_reset: np.ndarray, keys: np.ndarray, counters: np.ndarray,
               masks: np.ndarray, actions: np.ndarray, illegal: np.ndarray) -> None:
    """The step's start in each sub-env ``i``, in place: where ``needs_reset[i]``, the empty
    board and the agent's side from ``first_codes[i]`` (``RANDOM_FIRST``: the top bit of the
    sub-env's next stream word, 1 = the opponent first), the flag cleared; else the agent's
    ``actions[i]`` dropped where ``masks[i, actions[i]]`` (the masks last handed out),
    ``illegal[i]`` set where not."""
    for i in range(me.shape[0]):
        illegal[i] = False
        if needs_reset[i]:
            me[i], opp[i], to_move[i], won[i] = ZERO, ZERO, 0, False
            agent_side[i] = new_agent_side(first_codes[i], keys, counters, i)
            needs_reset[i] = False
        elif masks[i, actions[i]]:
            me[i], opp[i], won[i] = play(me[i], opp[i], actions[i], words)
            to_move[i] = 1 - to_move[i]
        else:
            illegal[i] = True


@njit(cache=True, inline="always")
def row_major(plane: np.uint64, words: np.ndarray, tables: np.ndarray) -> np.uint64:
    """The cells of ``plane`` in row-major order, row 0 at the top (``cell_tables``)."""
    height = words[HEIGHT]
    cells = ZERO
    for c in range(int(words[COLUMNS])):
        column = (plane & words[COLUMN_MASKS + c]) >> (height * np.uint64(c))
        cells |= tables[c, 0, column & BYTE] | tables[c, 1, column >> BYTE_SHIFT]
    return cells


@njit(cache=True, inline="always")
def outcome(bad: bool, done: bool, won: bool, to_move: int, side: int) -> int:
    """``winner`` of a sub-env: ``OPPONENT_WON`` after an illegal action (``bad``), else for
    a finished game (``done``) +1 / -1 / 0 from ``side``'s view (only the last mover can
    have made a line: the first player when ``to_move`` is 1), else 0."""
    if bad:
        return OPPONENT_WON
    if not done or not won:
        return 0
    first_player = 1 if to_move == 1 else -1
    return first_player if side == 0 else -first_player


@entry("void(u8[:], u8[:], i8[:], b1[:], u8[::1], u8[:, :, ::1], i8[:], b1[:], "
       "u1[:, :, :, ::1], b1[:, ::1], b1[:, ::1], i8[:], f8[:], b1[:], b1[:])")
def publish_cells(me: np.ndarray, opp: np.ndarray, to_move: np.ndarray, won: np.ndarray,
                  words: np.ndarray, tables: np.ndarray, agent_side: np.ndarray,
                  illegal: np.ndarray, obs: np.ndarray, masks: np.ndarray,
                  kept_masks: np.ndarray, winner: np.ndarray, rewards: np.ndarray,
                  terminated: np.ndarray, needs_reset: np.ndarray) -> None:
    """What the step returns for each sub-env ``i``: ``terminated[i]`` (the game over, or
    ``illegal[i]``), ``winner[i]`` and ``rewards[i]`` (``outcome``), the observation
    ``obs[i]`` (the agent's plane, then the opponent's, ``tables`` the size's
    ``cell_tables``) and the playable columns (none after an illegal action) into both
    ``masks[i]`` and ``kept_masks[i]``, and ``needs_reset[i] = terminated[i]``."""
    plane_cells = int(words[ROWS] * words[COLUMNS])
    columns = int(words[COLUMNS])
    obs_cells, mask_cells, kept_cells = flat(obs), flat_bool(masks), flat_bool(kept_masks)
    for i in range(me.shape[0]):
        bad = illegal[i]
        side = agent_side[i]
        playable = legal_columns(me[i], opp[i], won[i], words)
        done = bad or playable == ZERO
        winner[i] = rewards[i] = outcome(bad, done, won[i], to_move[i], side)
        terminated[i] = needs_reset[i] = done
        mine, theirs = (me[i], opp[i]) if to_move[i] == side else (opp[i], me[i])
        at = put(obs_cells, 2 * plane_cells * i, row_major(mine, words, tables), plane_cells)
        put(obs_cells, at, row_major(theirs, words, tables), plane_cells)
        shown = ZERO if bad else playable
        put(mask_cells, columns * i, shown, columns)
        put(kept_cells, columns * i, shown, columns)


def publish(fields: tuple[np.ndarray, ...], agent_side: np.ndarray, illegal: np.ndarray,
            score_reward: bool, out: Any, kept_masks: np.ndarray,
            needs_reset: np.ndarray) -> None:
    """``publish_cells`` into the fresh outputs ``out`` (``envs.kernels.Outputs``) and the
    env's kept masks ``kept_masks`` (four-in-a-row has no score: ``score_reward`` is never
    set)."""
    me, opp, to_move, won, words = fields
    tables = cell_tables(int(words[ROWS]), int(words[COLUMNS]))
    publish_cells(me, opp, to_move, won, words, tables, agent_side, illegal, out.obs,
                  out.masks, kept_masks, out.winner, out.rewards, out.terminated, needs_reset)


__all__ = ["FIELDS", "arrays", "begin_step", "cell_tables", "outcome", "publish",
           "publish_cells", "row_major"]
