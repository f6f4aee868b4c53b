"""The players and boards the web page may choose from.

The page names a player by a label from the server's list only: the built-in AIs of each game
(``WEB_PLAYERS``: a short list whose every player moves within about a second) and the
checkpoints named at start-up (``--checkpoint``), each under its file's stem. A label the
list lacks (a path among them) is refused, so the page never makes the server open a file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boardgym import agents
from boardgym.agents.shipped import PREFIX
from boardgym.envs.games import GAMES
from boardgym.envs.games import game as game_record
from boardgym.envs.games.core import Game
from boardgym.envs.games.players import Agent

WEB_PLAYERS: Mapping[str, tuple[str, ...]] = {
    "reversi": ("random", "corner_best", "alphabeta:2", "alphabeta:4", "mcts:200"),
    "four_in_a_row": ("random", "lookahead:2", "alphabeta:4", "mcts:200"),
    "tictactoe": ("random", "rules", "perfect", "mcts:200"),
}
"""The built-in players offered for each game, weakest first (a game not listed here, one
added with ``register_game``, offers ``random`` and its default opponent)."""
OPTION_PROBE = range(1, 65)
"""The values tried for each board option to find its limits (``option_limits``)."""
MISMATCH = "was trained for"
"""The words of a checkpoint's message when it was loaded for another game than its own."""


class RequestError(ValueError):
    """A request the server refuses: ``status`` is the HTTP status, the message one line."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Player:
    """One player of the list: its label on the page, its spec and the agent."""

    label: str
    spec: str
    agent: Agent = field(compare=False, repr=False)


@dataclass
class Catalog:
    """Every game's players by label (built-in first, then the start-up checkpoints)."""

    players: dict[str, dict[str, Player]]

    def player(self, game: str, label: Any) -> Player:
        """The player ``label`` names for ``game``.

        Raises:
            RequestError: a label not in ``game``'s list (a path, an unknown name, no text).
        """
        known = self.players[game]
        if not isinstance(label, str) or label not in known:
            raise RequestError(f"unknown player {label!r} for {game}; choose one of: "
                               f"{', '.join(known)}")
        return known[label]

    def listing(self) -> list[dict[str, Any]]:
        """What ``GET /api/games`` says of each game: its name, title, side names, board
        options with their limits, players and default opponent."""
        return [{"name": name, "title": game_record(name).title,
                 "sides": list(game_record(name).side_names),
                 "options": option_limits(game_record(name)),
                 "players": list(players), "default": default_label(name, list(players))}
                for name, players in self.players.items()]


def default_label(game: str, players: Sequence[str]) -> str:
    """The opponent the page picks first: the game's default opponent if listed, else the
    second (a non-random) player."""
    default = game_record(game).default_opponent
    return default if default in players else players[min(1, len(players) - 1)]


def built_in(record: Game) -> tuple[str, ...]:
    """The built-in players offered for ``record``'s game."""
    return WEB_PLAYERS.get(record.name, tuple(dict.fromkeys(("random",
                                                             record.default_opponent))))


def catalog(checkpoints: Iterable[str] = ()) -> Catalog:
    """The list of every known game: ``built_in`` players and the ``checkpoints`` (specs:
    paths or ``shipped:NAME``), each added to the game it was trained for.

    Raises:
        ValueError: a checkpoint that loads for no game (the message is its one line).
    """
    players = {name: {spec: Player(spec, spec, agents.make(record, spec))
                      for spec in built_in(record)} for name, record in GAMES.items()}
    for spec in checkpoints:
        game, agent = load_checkpoint(spec)
        label = unique(checkpoint_label(spec), players[game])
        players[game][label] = Player(label, spec, agent)
    return Catalog(players)


def load_checkpoint(spec: str) -> tuple[str, Agent]:
    """The game ``spec``'s checkpoint was trained for, and its player (``spec``: a path,
    ``shipped:NAME``, or a player over one, ``ntuple:2@shipped:reversi_ntuple``).

    Raises:
        ValueError: not a checkpoint spec, or a checkpoint no game loads (the message of the
            game it names, else of the first game).
    """
    if not agents.is_checkpoint_spec(spec.rpartition("@")[2]):
        raise ValueError(f"--checkpoint {spec}: not a checkpoint; give a file path (with a "
                         "'/' or ending in .zip or .pt), shipped:NAME or a search over one "
                         "(ntuple:2@shipped:NAME); built-in players are listed already")
    errors: list[Exception] = []
    for name in GAMES:
        try:
            return name, agents.make(name, spec)
        except (ValueError, OSError) as error:
            errors.append(error)
    fitting = [error for error in errors if MISMATCH not in str(error)]
    raise ValueError(f"--checkpoint {spec}: {(fitting or errors)[0]}")


def checkpoint_label(spec: str) -> str:
    """The label of checkpoint ``spec``: its file's stem (``shipped:reversi`` ->
    ``reversi``, ``ntuple:2@runs/x/best.zip`` -> ``best``)."""
    path = spec.rpartition("@")[2]
    return path[len(PREFIX):] if path.startswith(PREFIX) else Path(path).stem


def unique(label: str, taken: Mapping[str, Any]) -> str:
    """``label``, or ``label-2``, ``label-3``, ... when it is taken."""
    candidate, number = label, 1
    while candidate in taken:
        number += 1
        candidate = f"{label}-{number}"
    return candidate


def option_limits(record: Game) -> dict[str, dict[str, int]]:
    """Each board option's default and the least and largest value the rules accept with
    the other options at their defaults (``{"rows": {"default": 6, "min": 4, "max": 15}}``)."""
    limits = {}
    for name, default in record.options.items():
        valid = [value for value in OPTION_PROBE if _accepted(record, {name: value})]
        limits[name] = {"default": int(default), "min": min(valid, default=int(default)),
                        "max": max(valid, default=int(default))}
    return limits


def _accepted(record: Game, options: dict[str, int]) -> bool:
    """Whether the rules make a board of ``options``."""
    try:
        record.rules.initial_state(**options)
    except ValueError:
        return False
    return True
