"""Pure game rules (numpy only): one module per game, all with the same interface.

``initial_state(**config)``, ``legal_mask(state)``, ``apply(state, action)``,
``is_terminal(state)``, ``outcome(state)``, ``observation(state)``, ``state.to_move``, and the
batched twins ``initial_batch(n, **config)`` / ``apply_batch(state, actions)``.
"""

from __future__ import annotations

from types import ModuleType

from boardgym.envs.games import four_in_a_row, reversi, tictactoe
from boardgym.envs.games.errors import IllegalMoveError

GAMES: dict[str, ModuleType] = {
    "reversi": reversi,
    "four_in_a_row": four_in_a_row,
    "tictactoe": tictactoe,
}
ALIASES = {"connect_four": "four_in_a_row", "othello": "reversi", "tic_tac_toe": "tictactoe"}


def canonical_name(game: str) -> str:
    """The canonical game name for ``game`` or an alias.

    Raises:
        ValueError: unknown name; the message lists the valid ones.
    """
    name = ALIASES.get(game, game)
    if name not in GAMES:
        valid = ", ".join(sorted([*GAMES, *ALIASES]))
        raise ValueError(f"unknown game {game!r}; choose one of: {valid}")
    return name


def rules(game: str) -> ModuleType:
    """The rules module of ``game`` (a name or alias)."""
    return GAMES[canonical_name(game)]


__all__ = ["ALIASES", "GAMES", "IllegalMoveError", "canonical_name", "rules"]
