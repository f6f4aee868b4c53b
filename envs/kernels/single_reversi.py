"""Reversi's single-env kernel (``envs.single_step``): a step or a new game against the
``random`` opponent, in one compiled call (passes included).

The words: ``me``, ``opp``, ``to_move``, ``legal`` (``reversi.State``'s fields), the agent's
side and the generator's handles (``SingleStep.bind``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boardgym.envs.games import reversi
from boardgym.envs.games.compiled import ONE, ZERO, choose, entry, next_word, popcount
from boardgym.envs.games.reversi_bits import (
    CELLS,
    FIRST_START,
    SECOND_START,
    SIZE,
    legal_moves,
    play,
)
from boardgym.envs.single_step import ILLEGAL, SIDE_SHIFT, agent_side_of, outcome

ME, OPP, TO_MOVE, LEGAL, AGENT, FUNCTION, ADDRESS = range(7)
WORDS = 7
SIGNATURE = "i8(u8[::1], i8, u1[:, :, ::1], b1[::1])"
"""``step``: the words, the move, the observation and the mask to fill."""
START_ME, START_OPP = np.uint64(FIRST_START), np.uint64(SECOND_START)


def words(initial: reversi.State) -> np.ndarray:
    """The words of the board."""
    return np.zeros(WORDS, dtype=np.uint64)


def push(words: np.ndarray, state: reversi.State, agent_side: int) -> None:
    """Hold ``state``, the agent on ``agent_side``."""
    words[ME:AGENT + 1] = (state.me, state.opp, state.to_move, state.legal, agent_side)


def pull(words: np.ndarray, base: reversi.State) -> reversi.State:
    """The state the words hold."""
    return reversi.State(int(words[ME]), int(words[OPP]), int(words[TO_MOVE]),
                         int(words[LEGAL]))


@njit(cache=True, inline="always")
def _respond(words: np.ndarray, me: np.uint64, opp: np.uint64, to_move: int | np.int64,
             legal: np.uint64, agent: int | np.int64, function: int | np.int64,
             address: int | np.int64, obs: np.ndarray, mask: np.ndarray) -> int:
    """The opponent's replies while it is to move (each a uniform pick among its legal
    moves with one word of the generator; the agent passing, it moves again), then the
    position kept in ``words`` and published: the agent's discs and the opponent's in
    ``obs``, the agent's legal moves in ``mask``; returns the step's ``outcome``."""
    last = -1
    while legal != ZERO and to_move != agent:
        last = choose(legal, next_word(function, address))
        me, opp, to_move, legal = play(me, opp, to_move, last)
    words[ME], words[OPP], words[TO_MOVE], words[LEGAL] = me, opp, np.uint64(to_move), legal
    mine, theirs = (me, opp) if to_move == agent else (opp, me)
    for cell in range(CELLS):
        at = np.uint64(cell)
        obs[0, cell // SIZE, cell % SIZE] = (mine >> at) & ONE
        obs[1, cell // SIZE, cell % SIZE] = (theirs >> at) & ONE
        mask[cell] = (legal >> at) & ONE
    discs, other = popcount(mine), popcount(theirs)
    winner = (discs > other) - (discs < other)
    return outcome(last, legal == ZERO, winner, discs, other)


@entry(SIGNATURE)
def step(words: np.ndarray, move: int, obs: np.ndarray, mask: np.ndarray) -> int:
    """The agent's ``move`` (a square), or a new game from the start position for
    ``move < 0`` (the agent's side from the first-player code ``-1 - move``:
    ``agent_side_of``), then the opponent's replies; the code carries the agent's side.
    ``ILLEGAL`` (nothing changed) when the move is not legal."""
    function, address = np.int64(words[FUNCTION]), np.int64(words[ADDRESS])
    if move < 0:
        agent = agent_side_of(-1 - move, function, address)
        words[AGENT] = np.uint64(agent)
        me, opp, to_move, legal = START_ME, START_OPP, 0, legal_moves(START_ME, START_OPP)
    else:
        agent = np.int64(words[AGENT])
        if not (words[LEGAL] >> np.uint64(move)) & ONE:
            return ILLEGAL
        me, opp, to_move, legal = play(words[ME], words[OPP], np.int64(words[TO_MOVE]), move)
    return _respond(words, me, opp, to_move, legal, agent, function, address, obs,
                    mask) | (agent << SIDE_SHIFT)
