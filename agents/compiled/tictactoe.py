"""Tic-tac-toe's classic players, compiled: the vector env's replies.

Each classic AI of ``agents.tictactoe`` reads its candidate moves from a table by position
index ``me << CELLS | opp`` (``RULES_TABLE``, ``RULES_CENTER_TABLE``, ``PERFECT_TABLE``);
``random``'s candidates are the legal cells. ``respond_batch`` plays the opponent's replies
in N games, each move chosen with one draw of the sub-env's splitmix stream
(``compiled.choose``) among the candidates of the player whose code is its index in
``TICTACTOE_PLAYERS``, exactly as the batched players do in the vector env. The tables (2 MB
each) go into the kernel as an argument, not frozen into its code.
"""

from __future__ import annotations

import numpy as np

from boardgym.agents import tictactoe as classic
from boardgym.agents.compiled import TICTACTOE_PLAYERS
from boardgym.envs.games.compiled import ZERO, choose, entry, stream_draw
from boardgym.envs.games.tictactoe_bits import CELLS, legal, play

RANDOM = TICTACTOE_PLAYERS.index("random")
POSITION = np.uint64(CELLS)
NO_ACTION = -1
"""``last`` of a game where the opponent did not move."""
NO_TABLE = np.zeros(1, dtype=np.uint64)
"""``random``'s table argument (not read)."""
TABLE_OF = {TICTACTOE_PLAYERS.index("rules"): classic.RULES_TABLE,
            TICTACTOE_PLAYERS.index("rules_center"): classic.RULES_CENTER_TABLE,
            TICTACTOE_PLAYERS.index("perfect"): classic.PERFECT_TABLE}
"""The candidate table of each tabulated player, by code."""


@entry("void(u8[:], u8[:], i8[:], i8[:], u8[:], u8[:], b1[:], i8[:], i8, u8[::1])")
def respond_tabulated(me: np.ndarray, opp: np.ndarray, to_move: np.ndarray,
                      agent_side: np.ndarray, keys: np.ndarray, counters: np.ndarray,
                      skip: np.ndarray, last: np.ndarray, code: int, table: np.ndarray) -> None:
    """Player ``code``'s reply in each game ``i`` of a batch (``me``, ``opp``, ``to_move``:
    the batched state's fields, changed in place) not ``skip[i]`` where the game is not over
    and ``to_move[i] != agent_side[i]``: it advances ``counters[i]`` by one and plays the
    candidate that ``choose`` picks with the stream word ``stream_draw(keys[i],
    counters[i])``: among the legal cells (``RANDOM``) or ``table[me << CELLS | opp]``. The
    agent moves next (tic-tac-toe has no passes). ``last[i]`` becomes the move played there,
    or ``NO_ACTION``.

    Branch-free: the reply is worked out in every game and kept where the opponent moves (a
    branch on that would be mispredicted in half the games)."""
    for i in range(me.shape[0]):
        mine, theirs, mover = me[i], opp[i], to_move[i]
        cells = legal(mine, theirs)
        moving = not skip[i] and cells != ZERO and mover != agent_side[i]
        counter = counters[i] + np.uint64(moving)
        candidates = cells if code == RANDOM else table[(mine << POSITION) | theirs]
        action = choose(candidates, stream_draw(keys[i], counter))
        after_me, after_opp, after_mover, _ = play(mine, theirs, mover, action)
        me[i] = after_me if moving else mine
        opp[i] = after_opp if moving else theirs
        to_move[i] = after_mover if moving else mover
        counters[i] = counter
        last[i] = action if moving else NO_ACTION


def respond_batch(me: np.ndarray, opp: np.ndarray, to_move: np.ndarray, agent_side: np.ndarray,
                  keys: np.ndarray, counters: np.ndarray, skip: np.ndarray, last: np.ndarray,
                  code: int) -> None:
    """``respond_tabulated`` with player ``code``'s table (``players.CompiledTwin``'s
    ``respond_batch``)."""
    respond_tabulated(me, opp, to_move, agent_side, keys, counters, skip, last, code,
                      TABLE_OF.get(code, NO_TABLE))


__all__ = ["RANDOM", "TABLE_OF", "respond_batch", "respond_tabulated"]
