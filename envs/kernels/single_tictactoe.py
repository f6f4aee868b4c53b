"""Tic-tac-toe's single-env kernel (``envs.single_step``): a step or a new game against
the ``random`` opponent, in one compiled call.

The words: ``me``, ``opp``, ``to_move`` (``tictactoe.State``'s fields), the agent's side and
the generator's handles (``SingleStep.bind``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boardgym.envs.games import tictactoe
from boardgym.envs.games.compiled import ONE, ZERO, choose, entry, next_word, popcount
from boardgym.envs.games.tictactoe_bits import CELLS, SIZE, legal, play, result
from boardgym.envs.single_step import ILLEGAL, SIDE_SHIFT, agent_side_of, outcome

ME, OPP, TO_MOVE, AGENT, FUNCTION, ADDRESS = range(6)
WORDS = 6
SIGNATURE = "i8(u8[::1], i8, u1[:, :, ::1], b1[::1])"
"""``step``: the words, the move, the observation and the mask to fill."""


def words(initial: tictactoe.State) -> np.ndarray:
    """The words of a board (every board is 3x3)."""
    return np.zeros(WORDS, dtype=np.uint64)


def push(words: np.ndarray, state: tictactoe.State, agent_side: int) -> None:
    """Hold ``state``, the agent on ``agent_side``."""
    words[ME:AGENT + 1] = (state.me, state.opp, state.to_move, agent_side)


def pull(words: np.ndarray, base: tictactoe.State) -> tictactoe.State:
    """The state the words hold."""
    return tictactoe.State(int(words[ME]), int(words[OPP]), int(words[TO_MOVE]))


@njit(cache=True, inline="always")
def _respond(words: np.ndarray, me: np.uint64, opp: np.uint64, to_move: int | np.int64,
             moves: np.uint64, agent: int | np.int64, function: int | np.int64,
             address: int | np.int64, obs: np.ndarray, mask: np.ndarray) -> int:
    """The opponent's replies while it is to move (each a uniform pick among ``moves``, its
    legal cells, with one word of the generator), then the position kept in ``words`` and
    published: the agent's marks and the opponent's in ``obs``, the agent's legal cells in
    ``mask``; returns the step's ``outcome``."""
    last = -1
    while moves != ZERO and to_move != agent:
        last = choose(moves, next_word(function, address))
        me, opp, to_move, moves = play(me, opp, to_move, last)
    words[ME], words[OPP], words[TO_MOVE] = me, opp, np.uint64(to_move)
    mine, theirs = (me, opp) if to_move == agent else (opp, me)
    for cell in range(CELLS):
        at = np.uint64(cell)
        obs[0, cell // SIZE, cell % SIZE] = (mine >> at) & ONE
        obs[1, cell // SIZE, cell % SIZE] = (theirs >> at) & ONE
        mask[cell] = (moves >> at) & ONE
    done = moves == ZERO
    winner = result(opp, to_move, agent) if done else 0
    return outcome(last, done, winner, popcount(mine), popcount(theirs))


@entry(SIGNATURE)
def step(words: np.ndarray, move: int, obs: np.ndarray, mask: np.ndarray) -> int:
    """The agent's ``move`` (a cell), or a new game on the empty board for ``move < 0``
    (the agent's side from the first-player code ``-1 - move``: ``agent_side_of``), then the
    opponent's replies; the code carries the agent's side. ``ILLEGAL`` (nothing changed)
    when the cell is not legal."""
    function, address = np.int64(words[FUNCTION]), np.int64(words[ADDRESS])
    if move < 0:
        agent = agent_side_of(-1 - move, function, address)
        words[AGENT] = np.uint64(agent)
        me, opp, to_move, moves = ZERO, ZERO, 0, legal(ZERO, ZERO)
    else:
        me, opp, agent = words[ME], words[OPP], np.int64(words[AGENT])
        if not (legal(me, opp) >> np.uint64(move)) & ONE:
            return ILLEGAL
        me, opp, to_move, moves = play(me, opp, np.int64(words[TO_MOVE]), move)
    return _respond(words, me, opp, to_move, moves, agent, function, address, obs,
                    mask) | (agent << SIDE_SHIFT)
