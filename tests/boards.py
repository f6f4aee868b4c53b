"""Build rules states for tests: from ASCII boards (``X`` first player, ``O`` second, else
empty), or by random play."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from boardgym.agents.base import BatchedCandidatePlayer
from boardgym.envs.games import four_in_a_row, game, players, reversi, tictactoe
from boardgym.envs.games.bitboard import bits_from_mask, choose, random_draws
from boardgym.envs.games.core import put, take

PLANES = 2
"""An observation's planes: its cells are the board's cells twice."""


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


def random_batch(rules: ModuleType, n: int, seed: int = 0, first_stop: int = 0,
                 longest: int | None = None, quiet: bool = False,
                 options: dict[str, Any] | None = None) -> Any:
    """A batched state of ``n`` games of uniformly random play, each stopped at a random ply
    in ``first_stop .. longest - 1`` (``longest``: the board's cell count) or at its end.
    ``quiet`` play avoids the moves that end the game while it has others, so games last and
    threats pile up. ``options``: the board options of ``initial_batch``."""
    rng, options = np.random.default_rng(seed), options or {}
    state = rules.initial_batch(n, **options)
    longest = longest or rules.observation(rules.initial_state(**options)).size // PLANES
    stop = rng.integers(first_stop, longest, size=n)
    for ply in range(longest):
        mask = legal = rules.legal_mask(state)
        if quiet:
            ending = np.stack([rules.is_terminal(rules.apply_batch(state, np.full(n, a)))
                               for a in range(legal.shape[1])], axis=1)
            mask = np.where((legal & ~ending).any(axis=1, keepdims=True), legal & ~ending, legal)
        moving = np.flatnonzero((ply < stop) & legal.any(axis=1))
        if not moving.size:
            break
        actions = choose(bits_from_mask(mask[moving]), random_draws(rng, len(moving)))
        put(state, moving, rules.apply_batch(take(state, moving), actions))
    return state


def candidate_sets(game_name: str, spec: str, state: Any) -> np.ndarray:
    """The ``uint64`` candidate-move bitmask per game of the batched player ``spec``."""
    player = players.make_batched(game(game_name), spec)
    assert isinstance(player, BatchedCandidatePlayer), f"{spec} has no candidate sets"
    return player.candidates(state)
