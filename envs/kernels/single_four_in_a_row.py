"""Four-in-a-row's single-env kernel (``envs.single_step``): a step or a new game against
the ``random`` opponent, in one compiled call, on any board of the rules.

The words: the board size's table (``four_in_a_row_bits.board_words``, so that the rules'
compiled functions read the words as their table), then ``me``, ``opp``, ``to_move``,
``won`` (``four_in_a_row.State``'s fields), the agent's side, and the columns played since
the state was pushed (their count, then the columns: ``pull`` adds them to its trail), and
the generator's handles (``SingleStep.bind``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boardgym.envs.games import four_in_a_row
from boardgym.envs.games.compiled import ONE, ZERO, choose, entry, next_word, popcount
from boardgym.envs.games.core import Trail
from boardgym.envs.games.four_in_a_row_bits import (
    COLUMNS,
    HEIGHT,
    ROWS,
    TABLE_SIZE,
    WORD_BITS,
    legal_columns,
    play,
)
from boardgym.envs.single_step import ILLEGAL, SIDE_SHIFT, agent_side_of, outcome

ME, OPP, TO_MOVE, WON, AGENT, PLAYED = range(TABLE_SIZE, TABLE_SIZE + 6)
TRAIL = PLAYED + 1
"""Where the columns played since the push start (``words[PLAYED]`` of them)."""
FUNCTION, ADDRESS = TRAIL + WORD_BITS, TRAIL + WORD_BITS + 1
WORDS = ADDRESS + 1
SIGNATURE = "i8(u8[::1], i8, u1[:, :, ::1], b1[::1])"
"""``step``: the words, the move, the observation and the mask to fill."""


def words(initial: four_in_a_row.State) -> np.ndarray:
    """The words of ``initial``'s board, its table filled in."""
    words = np.zeros(WORDS, dtype=np.uint64)
    words[:TABLE_SIZE] = initial.geom.words
    return words


def push(words: np.ndarray, state: four_in_a_row.State, agent_side: int) -> None:
    """Hold ``state``, the agent on ``agent_side``; no column played since."""
    words[ME:TRAIL] = (state.me, state.opp, state.to_move, state.won, agent_side, 0)


def pull(words: np.ndarray, base: four_in_a_row.State) -> four_in_a_row.State:
    """The state the words hold: ``base``'s board, its trail followed by the columns played
    since (an unknown trail stays unknown)."""
    played = words[TRAIL:TRAIL + int(words[PLAYED])].tolist()
    trail = tuple.__new__(Trail, (*base.trail, *played)) if base.trail.known else base.trail
    return four_in_a_row.State(int(words[ME]), int(words[OPP]), int(words[TO_MOVE]),
                               bool(words[WON]), base.geom, trail)


@njit(cache=True, inline="always")
def _drop(words: np.ndarray, me: np.uint64, opp: np.uint64,
          column: int) -> tuple[np.uint64, np.uint64, bool]:
    """``play`` of ``column``, noted among the columns played."""
    played = words[PLAYED]
    words[TRAIL + np.int64(played)] = np.uint64(column)
    words[PLAYED] = played + ONE
    return play(me, opp, column, words)


@njit(cache=True, inline="always")
def _respond(words: np.ndarray, me: np.uint64, opp: np.uint64, to_move: int | np.int64,
             won: bool, agent: int | np.int64, function: int | np.int64,
             address: int | np.int64, obs: np.ndarray, mask: np.ndarray) -> int:
    """The opponent's replies while it is to move (each a uniform pick among its playable
    columns with one word of the generator), then the position kept in ``words`` and
    published: the agent's tokens and the opponent's in ``obs`` (row 0 on top), the agent's
    playable columns in ``mask``; returns the step's ``outcome``."""
    last = -1
    legal = legal_columns(me, opp, won, words)
    while legal != ZERO and to_move != agent:
        last = choose(legal, next_word(function, address))
        me, opp, won = _drop(words, me, opp, last)
        to_move = 1 - to_move
        legal = legal_columns(me, opp, won, words)
    words[ME], words[OPP], words[TO_MOVE], words[WON] = me, opp, np.uint64(to_move), won
    mine, theirs = (me, opp) if to_move == agent else (opp, me)
    rows, height = np.int64(words[ROWS]), np.int64(words[HEIGHT])
    for column in range(np.int64(words[COLUMNS])):
        mask[column] = (legal >> np.uint64(column)) & ONE
        for row in range(rows):
            at = np.uint64(column * height + rows - 1 - row)
            obs[0, row, column] = (mine >> at) & ONE
            obs[1, row, column] = (theirs >> at) & ONE
    winner = (1 if 1 - to_move == agent else -1) if won else 0
    return outcome(last, legal == ZERO, winner, popcount(mine), popcount(theirs))


@entry(SIGNATURE)
def step(words: np.ndarray, move: int, obs: np.ndarray, mask: np.ndarray) -> int:
    """The agent's ``move`` (a column), or a new game on the empty board for ``move < 0``
    (the agent's side from the first-player code ``-1 - move``: ``agent_side_of``), then the
    opponent's replies; the code carries the agent's side. ``ILLEGAL`` (nothing changed)
    when the column is not playable."""
    function, address = np.int64(words[FUNCTION]), np.int64(words[ADDRESS])
    if move < 0:
        agent = agent_side_of(-1 - move, function, address)
        words[AGENT], words[PLAYED] = np.uint64(agent), ZERO
        me, opp, to_move, won = ZERO, ZERO, np.int64(0), False
    else:
        me, opp, won = words[ME], words[OPP], words[WON] != ZERO
        agent = np.int64(words[AGENT])
        if not (legal_columns(me, opp, won, words) >> np.uint64(move)) & ONE:
            return ILLEGAL
        me, opp, won = _drop(words, me, opp, move)
        to_move = 1 - np.int64(words[TO_MOVE])
    return _respond(words, me, opp, to_move, won, agent, function, address, obs,
                    mask) | (agent << SIDE_SHIFT)
