"""Build rules states for tests: from ASCII boards (``X`` first player, ``O`` second, else
empty), or by random play."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
from boardgym.envs.games import four_in_a_row, reversi, tictactoe


def _cells(text: str) -> list[str]:
    return [line.strip().replace(" ", "") for line in text.strip().splitlines()]


def _bits(rows: list[str], mark: str, board_map: np.ndarray) -> int:
    return sum(1 << int(board_map[r, c]) for r, row in enumerate(rows)
               for c, ch in enumerate(row) if ch == mark)


def _sides(first: int, second: int, to_move: int) -> tuple[int, int]:
    return (first, second) if to_move == 0 else (second, first)


def reversi_state(text: str, to_move: int = 0) -> reversi.State:
    """A Reversi position; ``to_move`` 0 means X moves."""
    rows = _cells(text)
    me, opp = _sides(_bits(rows, "X", reversi.BOARD_MAP), _bits(rows, "O", reversi.BOARD_MAP),
                     to_move)
    return reversi.State(me, opp, to_move, reversi.legal_bits(me, opp))


def c4_state(text: str, to_move: int = 0, connect: int = 4) -> four_in_a_row.State:
    """A four-in-a-row position sized by the text (rows of columns, top row first)."""
    rows = _cells(text)
    geom = four_in_a_row.geometry(len(rows), len(rows[0]), connect)
    x, o = _bits(rows, "X", geom.board_map), _bits(rows, "O", geom.board_map)
    me, opp = _sides(x, o, to_move)
    return four_in_a_row.State(me, opp, to_move, four_in_a_row.has_line(opp, geom), geom)


def ttt_state(text: str, to_move: int = 0) -> tictactoe.State:
    """A tic-tac-toe position."""
    rows = _cells(text)
    me, opp = _sides(_bits(rows, "X", tictactoe.BOARD_MAP), _bits(rows, "O", tictactoe.BOARD_MAP),
                     to_move)
    return tictactoe.State(me, opp, to_move)


def random_position(rules: ModuleType, rng: np.random.Generator, moves: int,
                    **config: Any) -> Any:
    """A position of ``rules`` after up to ``moves`` random moves, stopping before the game
    ends (``config``: the options of ``initial_state``)."""
    state = rules.initial_state(**config)
    for _ in range(moves):
        after = rules.apply(state, int(rng.choice(np.flatnonzero(rules.legal_mask(state)))))
        if rules.is_terminal(after):
            break
        state = after
    return state
