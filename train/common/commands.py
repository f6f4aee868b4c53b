"""What every subcommand shares: one-line usage errors, argument types, the board options,
the game list for help texts and the progress bar.

Every command-line error of every subcommand is one line on stderr and exit code 2, never a
traceback: the subcommands build their parsers with ``CommandParser`` and report bad values
found later with ``CommandParser.error`` too.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from boardgym.envs.games.core import one_line

EXIT_USAGE = 2


class CommandParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr (``prog: error: ...``),
    exit code 2, with no usage block (``--help`` still prints it)."""

    def error(self, message: str) -> NoReturn:
        """Print ``message`` as one line and exit with code 2."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(message)} (see --help)\n")


def game_parser(prog: str, description: str | None, **kwargs: Any) -> CommandParser:
    """A ``CommandParser`` for ``prog`` whose first argument is the game (a name or alias of
    ``game_names()``); ``kwargs`` go to ``ArgumentParser`` (e.g. ``formatter_class``)."""
    parser = CommandParser(prog=prog, description=description, **kwargs)
    parser.add_argument("game", help=f"the game: {game_names()}")
    return parser


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type`` accepting integers >= ``minimum``, with a usage error otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


def check_at_least(**limits: tuple[int, int]) -> None:
    """Raise a ValueError naming the first argument ``name=(value, minimum)`` whose value is
    below its minimum (the Python API's twin of ``int_at_least``)."""
    for name, (value, minimum) in limits.items():
        if value < minimum:
            raise ValueError(f"{name} must be >= {minimum}, got {value}")


def game_names() -> str:
    """The known games for help texts: ``reversi (othello), four_in_a_row (connect_four), ...``."""
    from boardgym.envs.games import GAMES

    return ", ".join(record.name + (f" ({', '.join(record.aliases)})" if record.aliases else "")
                     for record in GAMES.values())


def add_board_options(parser: argparse.ArgumentParser) -> None:
    """``--rows``-style options for every board option of every game (``Game.options``)."""
    from boardgym.envs.games import GAMES

    owners: dict[str, list[str]] = {}
    for record in GAMES.values():
        for name in record.options:
            owners.setdefault(name, []).append(record.name)
    for name, games in owners.items():
        parser.add_argument(f"--{name}", type=int_at_least(1),
                            help=f"board {name} ({', '.join(games)})")


def board_options(record: Any, args: argparse.Namespace) -> dict[str, int]:
    """The board options given on the command line, checked against ``record``'s game (its
    ``initial_state`` validates the values).

    Raises:
        ValueError: an option the game does not have, or a bad value (the message says which).
    """
    from boardgym.envs.games import GAMES

    names = {name for game in GAMES.values() for name in game.options}
    given = {name: getattr(args, name) for name in sorted(names)
             if getattr(args, name, None) is not None}
    options = record.board_options(given)
    record.rules.initial_state(**options)
    return options


def progress_bar(total: int | None, unit: str = "game", enabled: bool = True) -> Any:
    """A tqdm bar on stderr counting ``unit``s up to ``total``, or None when not ``enabled``,
    stderr is not a terminal, ``CI`` is set, or tqdm is missing."""
    if not enabled or not sys.stderr.isatty() or os.environ.get("CI"):
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit=unit, leave=False, file=sys.stderr)
