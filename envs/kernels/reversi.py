"""Reversi's env kernels: the vector env's compiled step before and after the opponent's
replies (``envs.kernels`` runs them; the replies come from the opponent's compiled twin).

``begin_step`` starts new games where a sub-env needs one and plays the agent's legal moves;
``publish`` writes what the step returns. Each does in one compiled loop what the vector env's
Python path does for a next-step autoreset step against a batched opponent, with the same
values and the same stream draws (``envs.vector``'s module docstring).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from boardgym.envs.games import reversi
from boardgym.envs.games.compiled import ZERO, entry, popcount
from boardgym.envs.games.reversi_bits import FIRST_START, SECOND_START, legal_moves, play
from boardgym.envs.kernels.cells import new_agent_side, writable
from boardgym.envs.settings import OPPONENT_WON

START_ME, START_OPP = np.uint64(FIRST_START), np.uint64(SECOND_START)
BYTE, BYTE_BITS = np.uint64(0xFF), 8
WORDS = reversi.CELLS // BYTE_BITS
"""64-bit words of one plane of bytes (one byte a cell)."""
SPREAD = np.array([sum(((value >> k) & 1) << (BYTE_BITS * k) for k in range(BYTE_BITS))
                   for value in range(256)], dtype=np.uint64)
"""By byte value ``v``: the little-endian word whose byte ``k`` is bit ``k`` of ``v`` (0 or
1): eight cells of a plane at once."""
FIELDS = (("me", np.uint64), ("opp", np.uint64), ("to_move", np.int64), ("legal", np.uint64))
"""The state's fields the kernels take, and their types."""


def arrays(state: reversi.State) -> tuple[reversi.State, tuple[np.ndarray, ...]]:
    """``state`` with fields the kernels can change in place (the same state when its
    fields already are contiguous, writable and of ``FIELDS``' types), and those fields."""
    return writable(state, FIELDS)


@entry("void(u8[:], u8[:], i8[:], u8[:], i8[:], i8[:], b1[:], u8[:], u8[:], b1[:, :], i8[:], "
      "b1[:])")
def begin_step(me: np.ndarray, opp: np.ndarray, to_move: np.ndarray, legal: np.ndarray,
               agent_side: np.ndarray, first_codes: np.ndarray, needs_reset: np.ndarray,
               keys: np.ndarray, counters: np.ndarray, masks: np.ndarray, actions: np.ndarray,
               illegal: np.ndarray) -> None:
    """The step's start in each sub-env ``i``, in place: where ``needs_reset[i]``, the start
    position and the agent's side from ``first_codes[i]`` (``RANDOM_FIRST``: the top bit of
    the sub-env's next stream word, 1 = the opponent first), the flag cleared; else the
    agent's ``actions[i]`` played where ``masks[i, actions[i]]`` (the masks last handed out),
    ``illegal[i]`` set where not."""
    start_legal = legal_moves(START_ME, START_OPP)
    for i in range(me.shape[0]):
        illegal[i] = False
        if needs_reset[i]:
            me[i], opp[i], to_move[i], legal[i] = START_ME, START_OPP, 0, start_legal
            agent_side[i] = new_agent_side(first_codes[i], keys, counters, i)
            needs_reset[i] = False
        elif masks[i, actions[i]]:
            me[i], opp[i], to_move[i], legal[i] = play(me[i], opp[i], to_move[i], actions[i])
        else:
            illegal[i] = True


@njit(cache=True, inline="always")
def _spread(bits: np.uint64, words: np.ndarray, row: int, first: int) -> None:
    """Write ``bits`` as ``WORDS`` words of one byte a cell into ``words[row, first:]``."""
    for k in range(WORDS):
        words[row, first + k] = SPREAD[(bits >> np.uint64(BYTE_BITS * k)) & BYTE]


@entry("void(u8[:], u8[:], i8[:], u8[:], i8[:], b1[:], b1, u8[:, ::1], u8[:, ::1], u8[:, ::1], "
      "i8[:], f8[:], b1[:], i8[:, :], b1[:])")
def publish_words(me: np.ndarray, opp: np.ndarray, to_move: np.ndarray, legal: np.ndarray,
                  agent_side: np.ndarray, illegal: np.ndarray, score_reward: bool,
                  obs_words: np.ndarray, mask_words: np.ndarray, kept_words: np.ndarray,
                  winner: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
                  score: np.ndarray, needs_reset: np.ndarray) -> None:
    """What the step returns for each sub-env ``i``: ``terminated[i]`` (the game over, or
    ``illegal[i]``), ``winner[i]`` (+1 / -1 / 0 for a finished game: the disc counts, or
    ``OPPONENT_WON`` after an illegal action; else 0), ``rewards[i]`` (the winner, or with
    ``score_reward`` the disc difference over the cells where the game ended legally),
    ``score[i]`` (the agent's and the opponent's discs), the observation (the agent's plane,
    then the opponent's) and the legal-move mask (none after an illegal action) as words of
    bytes into ``obs_words`` and into both ``mask_words`` and ``kept_words``, and
    ``needs_reset[i] = terminated[i]``."""
    for i in range(me.shape[0]):
        bad = illegal[i]
        if to_move[i] == agent_side[i]:
            mine, theirs = me[i], opp[i]
        else:
            mine, theirs = opp[i], me[i]
        discs, other = np.int64(popcount(mine)), np.int64(popcount(theirs))
        score[i, 0], score[i, 1] = discs, other
        done = bad or legal[i] == ZERO
        result = 0
        if bad:
            result = OPPONENT_WON
        elif done:
            result = int(discs > other) - int(discs < other)
        winner[i] = result
        rewards[i] = result
        if done and score_reward and not bad:
            rewards[i] = (discs - other) / reversi.CELLS
        terminated[i] = needs_reset[i] = done
        _spread(mine, obs_words, i, 0)
        _spread(theirs, obs_words, i, WORDS)
        _spread(ZERO if bad else legal[i], mask_words, i, 0)
        for k in range(WORDS):
            kept_words[i, k] = mask_words[i, k]


def publish(fields: tuple[np.ndarray, ...], agent_side: np.ndarray, illegal: np.ndarray,
            score_reward: bool, out: Any, kept_masks: np.ndarray,
            needs_reset: np.ndarray) -> None:
    """``publish_words`` into the fresh outputs ``out`` (``envs.kernels.Outputs``: the
    ``(N, 2, 8, 8)`` observations and ``(N, 64)`` masks seen as words) and the env's kept
    masks ``kept_masks``."""
    n = len(agent_side)
    me, opp, to_move, legal = fields
    publish_words(me, opp, to_move, legal, agent_side, illegal, score_reward,
                  out.obs.reshape(n, -1).view(np.uint64), out.masks.view(np.uint64),
                  kept_masks.view(np.uint64), out.winner, out.rewards, out.terminated,
                  out.score, needs_reset)


__all__ = ["FIELDS", "arrays", "begin_step", "publish", "publish_words"]
