"""Four-in-a-row's classic players, compiled: the lookahead's candidates and the vector env's
replies.

``respond_batch`` plays the opponent's replies in N games of any board size (its ``words``
table, ``four_in_a_row_bits.board_words``), each move chosen with one draw of the sub-env's
splitmix stream (``compiled.choose``) among the candidates of the player whose index in
``FOUR_IN_A_ROW_PLAYERS`` is ``code % ARGUMENT_BASE``, exactly as the batched players do in
the vector env: ``random``'s candidates are the playable columns, ``lookahead:N``'s (N =
``code // ARGUMENT_BASE``) those of highest ``potential`` (``lookahead_moves``).

``potential`` is ``agents.four_in_a_row``'s (its module docstring is the spec): the classic
program's ``getPotentialMoves``, searched here depth first, one position at a time, with the
same floats bit for bit: the same cases, and the same sums in the same order (``add``
follows this interpreter's ``sum``, as the array search's ``python_sum`` does). A reply that
wins is looked for before any reply is searched: the classic loop stops at the first one, and
its value -1 does not depend on the sums before it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boardgym.agents.compiled import ARGUMENT_BASE, FOUR_IN_A_ROW_PLAYERS
from boardgym.agents.four_in_a_row import SUM_COMPENSATES_FLOATS, SUM_COMPENSATES_INTS
from boardgym.envs.games.compiled import ONE, ZERO, choose, entry, stream_draw
from boardgym.envs.games.four_in_a_row_bits import (
    BOARD,
    COLUMN_MASKS,
    COLUMNS,
    has_line,
    landing,
    legal_columns,
    play,
)

RANDOM = FOUR_IN_A_ROW_PLAYERS.index("random")
LOOKAHEAD = FOUR_IN_A_ROW_PLAYERS.index("lookahead")
NO_ACTION = -1
"""``last`` of a game where the opponent did not move."""
WIN, LOSS = 1.0, -1.0
COMPENSATE_FLOATS, COMPENSATE_INTS = SUM_COMPENSATES_FLOATS, SUM_COMPENSATES_INTS


@njit(cache=True, inline="always")
def add(total: float, floating: bool, compensation: float, item: float,
        is_float: bool) -> tuple[float, bool, float]:
    """One item of builtin ``sum`` (``agents.four_in_a_row.python_sum``): the running total,
    whether a float came yet, and the compensation after adding ``item`` (a Python float
    where ``is_float``, else one of the small ints 0, 1, -1). The sum is ``finished``'s."""
    added = total + item
    if not COMPENSATE_FLOATS:
        return added, floating, compensation
    lost = (total - added) + item if abs(total) >= abs(item) else (item - added) + total
    if floating and (is_float or COMPENSATE_INTS):
        compensation = compensation + lost
    return added, floating or is_float, compensation


@njit(cache=True, inline="always")
def finished(total: float, compensation: float) -> float:
    """The sum ``add`` ran: the total with its compensation (a finite, non-zero one)."""
    if compensation != 0.0 and np.isfinite(compensation):
        return total + compensation
    return total


@njit(cache=True, inline="always")
def column_value(me: np.uint64, opp: np.uint64, drop: np.uint64, depth: int,
                 words: np.ndarray) -> tuple[float, bool, bool]:
    """Column ``c``'s ``potential`` value for the side to move owning ``me`` (``depth`` >=
    1), given its landing cell ``drop`` (0: a full column, valued 0): ``(value, whether it
    is a float, whether the drop wins)`` (a win ends the scan; the columns after it keep
    0)."""
    if drop == ZERO:
        return 0.0, False, False
    mine = me | drop
    if has_line(mine, words):
        return WIN, False, True
    after = me | opp | drop
    if after == words[BOARD]:
        return 0.0, False, False
    columns = int(words[COLUMNS])
    replies = landing(after, words)
    for k in range(columns):
        reply = replies & words[COLUMN_MASKS + k]
        if reply != ZERO and has_line(opp | reply, words):
            return LOSS, False, False
    total = 0.0
    for k in range(columns):
        reply = replies & words[COLUMN_MASKS + k]
        if reply != ZERO:
            total = total + potential_sum(mine, opp | reply, depth - 1, words) \
                / columns / columns
    return total, True, False


@entry("f8(u8, u8, i8, u8[::1])")
def potential_sum(me: np.uint64, opp: np.uint64, depth: int, words: np.ndarray) -> float:
    """``sum(potential(position, depth))`` for the side to move owning ``me`` (0 at depth 0
    or on a full board). The columns after a win, valued the int 0, change no sum."""
    if depth == 0 or (me | opp) == words[BOARD]:
        return 0.0
    drops = landing(me | opp, words)
    total, floating, compensation = 0.0, False, 0.0
    for c in range(int(words[COLUMNS])):
        value, is_float, wins = column_value(me, opp, drops & words[COLUMN_MASKS + c], depth,
                                             words)
        total, floating, compensation = add(total, floating, compensation, value, is_float)
        if wins:
            break
    return finished(total, compensation)


@entry("u8(u8, u8, i8, u8[::1])")
def lookahead_moves(me: np.uint64, opp: np.uint64, depth: int, words: np.ndarray) -> np.uint64:
    """``lookahead:depth``'s candidates (``depth`` >= 1) for the side to move owning ``me``
    in a game going on: the playable columns (as bits) of highest ``potential(position,
    depth)`` (those after a winning column are worth 0)."""
    drops = landing(me | opp, words)
    best, chosen, scanning = -np.inf, ZERO, True
    for c in range(int(words[COLUMNS])):
        drop = drops & words[COLUMN_MASKS + c]
        value, wins = 0.0, False
        if scanning:
            value, _, wins = column_value(me, opp, drop, depth, words)
        scanning = scanning and not wins
        column = ONE << np.uint64(c)
        if drop != ZERO and value > best:
            best, chosen = value, column
        elif drop != ZERO and value == best:
            chosen |= column
    return chosen


@entry("void(u8[:], u8[:], i8[:], b1[:], u8[::1], i8[:], u8[:], u8[:], b1[:], i8[:], i8)")
def respond_batch(me: np.ndarray, opp: np.ndarray, to_move: np.ndarray, won: np.ndarray,
                  words: np.ndarray, agent_side: np.ndarray, keys: np.ndarray,
                  counters: np.ndarray, skip: np.ndarray, last: np.ndarray, code: int) -> None:
    """Player ``code``'s reply in each game ``i`` of a batch (``me``, ``opp``, ``to_move``,
    ``won``: the batched state's fields, changed in place; ``words``: the board size's
    table) not ``skip[i]`` where the game is not over and ``to_move[i] != agent_side[i]``:
    it advances ``counters[i]`` by one and drops in the candidate column that ``choose``
    picks with the stream word ``stream_draw(keys[i], counters[i])``. The agent moves next
    (four-in-a-row has no passes). ``last[i]`` becomes the column played there, or
    ``NO_ACTION``.

    Branch-free for ``random``: the reply is worked out in every game and kept where the
    opponent moves (a branch on that would be mispredicted in half the games); the lookahead
    searches only there."""
    player, depth = code % ARGUMENT_BASE, code // ARGUMENT_BASE
    for i in range(me.shape[0]):
        mine, theirs, mover, line = me[i], opp[i], to_move[i], won[i]
        columns = legal_columns(mine, theirs, line, words)
        moving = not skip[i] and columns != ZERO and mover != agent_side[i]
        if player == LOOKAHEAD:
            columns = lookahead_moves(mine, theirs, depth, words) if moving else ZERO
        counter = counters[i] + np.uint64(moving)
        action = choose(columns, stream_draw(keys[i], counter))
        after_me, after_opp, after_won = play(mine, theirs, action, words)
        me[i] = after_me if moving else mine
        opp[i] = after_opp if moving else theirs
        won[i] = after_won if moving else line
        to_move[i] = 1 - mover if moving else mover
        counters[i] = counter
        last[i] = action if moving else NO_ACTION


__all__ = ["LOOKAHEAD", "RANDOM", "add", "column_value", "finished", "lookahead_moves",
           "potential_sum", "respond_batch"]
