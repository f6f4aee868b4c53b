"""Four-in-a-row's classic players, compiled: the vector env's replies.

``respond_batch`` plays the opponent's replies in N games of any board size (its ``words``
table, ``four_in_a_row_bits.board_words``), each move chosen with one draw of the sub-env's
splitmix stream (``compiled.choose``) among the candidates of the player whose code is its
index in ``FOUR_IN_A_ROW_PLAYERS``, exactly as the batched players do in the vector env:
``random``'s candidates are the playable columns.
"""

from __future__ import annotations

import numpy as np

from boardgym.agents.compiled import FOUR_IN_A_ROW_PLAYERS
from boardgym.envs.games.compiled import ZERO, choose, entry, stream_draw
from boardgym.envs.games.four_in_a_row_bits import legal_columns, play

RANDOM = FOUR_IN_A_ROW_PLAYERS.index("random")
NO_ACTION = -1
"""``last`` of a game where the opponent did not move."""


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

    Branch-free: the reply is worked out in every game and kept where the opponent moves (a
    branch on that would be mispredicted in half the games)."""
    for i in range(me.shape[0]):
        mine, theirs, mover, line = me[i], opp[i], to_move[i], won[i]
        columns = legal_columns(mine, theirs, line, words)
        moving = not skip[i] and columns != ZERO and mover != agent_side[i]
        counter = counters[i] + np.uint64(moving)
        action = choose(columns, stream_draw(keys[i], counter))
        after_me, after_opp, after_won = play(mine, theirs, action, words)
        me[i] = after_me if moving else mine
        opp[i] = after_opp if moving else theirs
        won[i] = after_won if moving else line
        to_move[i] = 1 - mover if moving else mover
        counters[i] = counter
        last[i] = action if moving else NO_ACTION


__all__ = ["RANDOM", "respond_batch"]
