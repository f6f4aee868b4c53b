"""Tic-tac-toe's env kernels: the vector env's compiled step before and after the opponent's
replies (``envs.kernels`` runs them; the replies come from the opponent's compiled twin).

``begin_step`` starts new games where a sub-env needs one and plays the agent's legal moves;
``publish`` writes what the step returns. Each does in one compiled loop what the vector env's
Python path does for a next-step autoreset step against a batched opponent, with the same
values and the same stream draws (``envs.vector``'s module docstring). Cell ``k`` of a plane
is bit ``k`` of its word (``tictactoe_bits``), so a sub-env's observation is the words of
its two planes written one byte a cell (``envs.kernels.cells``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boardgym.envs.games import tictactoe as rules
from boardgym.envs.games.compiled import ZERO, entry
from boardgym.envs.games.tictactoe_bits import CELLS, legal, play, result
from boardgym.envs.kernels.cells import flat, flat_bool, new_agent_side, put, writable
from boardgym.envs.settings import OPPONENT_WON

FIELDS = (("me", np.uint64), ("opp", np.uint64), ("to_move", np.int64))
"""The state's fields the kernels take, and their types."""


def arrays(state: rules.State) -> tuple[rules.State, tuple[np.ndarray, ...]]:
    """``state`` with fields the kernels can change in place (the same state when its
    fields already are contiguous, writable and of ``FIELDS``' types), and those fields."""
    return writable(state, FIELDS)


@entry("void(u8[:], u8[:], i8[:], i8[:], i8[:], b1[:], u8[:], u8[:], b1[:, :], i8[:], b1[:])")
def begin_step(me: np.ndarray, opp: np.ndarray, to_move: np.ndarray, agent_side: np.ndarray,
               first_codes: np.ndarray, needs_reset: np.ndarray, keys: np.ndarray,
               counters: np.ndarray, masks: np.ndarray, actions: np.ndarray,
               illegal: np.ndarray) -> None:
    """The step's start in each sub-env ``i``, in place: where ``needs_reset[i]``, the empty
    board and the agent's side from ``first_codes[i]`` (``RANDOM_FIRST``: the top bit of the
    sub-env's next stream word, 1 = the opponent first), the flag cleared; else the agent's
    ``actions[i]`` played where ``masks[i, actions[i]]`` (the masks last handed out),
    ``illegal[i]`` set where not."""
    for i in range(me.shape[0]):
        illegal[i] = False
        if needs_reset[i]:
            me[i], opp[i], to_move[i] = ZERO, ZERO, 0
            agent_side[i] = new_agent_side(first_codes[i], keys, counters, i)
            needs_reset[i] = False
        elif masks[i, actions[i]]:
            me[i], opp[i], to_move[i], _ = play(me[i], opp[i], to_move[i], actions[i])
        else:
            illegal[i] = True


@entry("void(u8[:], u8[:], i8[:], i8[:], b1[:], u1[:, :, :, ::1], b1[:, ::1], b1[:, ::1], "
       "i8[:], f8[:], b1[:], b1[:])")
def publish_cells(me: np.ndarray, opp: np.ndarray, to_move: np.ndarray,
                  agent_side: np.ndarray, illegal: np.ndarray, obs: np.ndarray,
                  masks: np.ndarray, kept_masks: np.ndarray, winner: np.ndarray,
                  rewards: np.ndarray, terminated: np.ndarray, needs_reset: np.ndarray) -> None:
    """What the step returns for each sub-env ``i``: ``terminated[i]`` (the game over, or
    ``illegal[i]``), ``winner[i]`` and ``rewards[i]`` (+1 / -1 / 0 for a finished game from
    the agent's side, ``OPPONENT_WON`` after an illegal action; else 0), the observation
    ``obs[i]`` (the agent's plane, then the opponent's) and the legal-move mask (none after
    an illegal action) into both ``masks[i]`` and ``kept_masks[i]``, and ``needs_reset[i] =
    terminated[i]``."""
    obs_cells, mask_cells, kept_cells = flat(obs), flat_bool(masks), flat_bool(kept_masks)
    for i in range(me.shape[0]):
        bad = illegal[i]
        side = agent_side[i]
        cells = legal(me[i], opp[i])
        done = bad or cells == ZERO
        outcome = 0
        if bad:
            outcome = OPPONENT_WON
        elif done:
            outcome = result(opp[i], to_move[i], side)
        winner[i] = outcome
        rewards[i] = outcome
        terminated[i] = needs_reset[i] = done
        mine, theirs = (me[i], opp[i]) if to_move[i] == side else (opp[i], me[i])
        put(obs_cells, put(obs_cells, 2 * CELLS * i, mine, CELLS), theirs, CELLS)
        shown = ZERO if bad else cells
        put(mask_cells, CELLS * i, shown, CELLS)
        put(kept_cells, CELLS * i, shown, CELLS)


def publish(fields: tuple[np.ndarray, ...], agent_side: np.ndarray, illegal: np.ndarray,
            score_reward: bool, out: Any, kept_masks: np.ndarray,
            needs_reset: np.ndarray) -> None:
    """``publish_cells`` into the fresh outputs ``out`` (``envs.kernels.Outputs``) and the
    env's kept masks ``kept_masks`` (tic-tac-toe has no score: ``score_reward`` is never
    set)."""
    me, opp, to_move = fields
    publish_cells(me, opp, to_move, agent_side, illegal, out.obs, out.masks, kept_masks,
                  out.winner, out.rewards, out.terminated, needs_reset)


__all__ = ["FIELDS", "arrays", "begin_step", "publish", "publish_cells"]
