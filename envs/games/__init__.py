"""Pure game rules (numpy only): one module per game, each with one ``Game`` record.

``GAMES`` maps each canonical name to its record (``core.Game``); ``game(name)`` finds one by
name or alias; ``register_game`` adds a game (``boardgym.register_game`` also registers its
env ids). Every rules module implements ``core.Rules``.
"""

from __future__ import annotations

from boardgym.envs.games import four_in_a_row, reversi, tictactoe
from boardgym.envs.games.core import Game, IllegalMoveError, Rules

GAMES: dict[str, Game] = {}
"""Every known game by canonical name, in registration order."""


def register_game(record: Game) -> Game:
    """Add ``record`` to ``GAMES`` (a game registered again under the same name replaces it).

    Raises:
        ValueError: one of its names or aliases is another game's.
    """
    for name in (record.name, *record.aliases):
        owner = _owner(name)
        if owner is not None and owner.name != record.name:
            raise ValueError(f"game name {name!r} is taken by {owner.name!r}")
    GAMES[record.name] = record
    return record


def _owner(name: str) -> Game | None:
    """The game called ``name`` (or aliased so), if any."""
    for record in GAMES.values():
        if name == record.name or name in record.aliases:
            return record
    return None


def game(name: str | Game) -> Game:
    """The record of the game ``name`` (a canonical name or an alias; a record is returned
    as it is).

    Raises:
        ValueError: unknown name; the message lists the valid ones.
    """
    if isinstance(name, Game):
        return name
    found = _owner(name) if isinstance(name, str) else None
    if found is None:
        valid = ", ".join(sorted(n for g in GAMES.values() for n in (g.name, *g.aliases)))
        raise ValueError(f"unknown game {name!r}; choose one of: {valid}")
    return found


def canonical_name(name: str) -> str:
    """The canonical name of the game ``name`` (or alias); ValueError if unknown."""
    return game(name).name


def rules(name: str) -> Rules:
    """The rules module of the game ``name`` (or alias)."""
    return game(name).rules


for _module in (reversi, four_in_a_row, tictactoe):
    register_game(_module.GAME)

__all__ = ["GAMES", "Game", "IllegalMoveError", "Rules", "canonical_name", "game",
           "register_game", "rules"]
