"""What every subcommand shares: one-line usage errors, argument types and their caps, the
board options, the game list for help texts, the progress bar, Ctrl-C, and the files a
command writes where the user says.

Every command-line error of every subcommand is one line on stderr and exit code 2, never a
traceback: the subcommands build their parsers with ``CommandParser`` and report bad values
found later with ``CommandParser.error`` too. Ctrl-C ends any command with exit code 130 and
one line (``interruptible``, which the ``boardgym`` dispatcher runs every command in).

A file named on the command line (``--out``, ``--png``, ...) is overwritten only when it is
the command's own earlier output, recognised by its format header or its run folder;
anything else needs ``--force`` (``check_output``). Outputs are written atomically: a
temporary file in the same folder, then a rename (``boardgym.files.atomic_path``; text
files through ``train.common.runs.write_atomic``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from boardgym.envs.games.core import one_line

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
"""The exit code after Ctrl-C (128 + SIGINT, as shells report it)."""
EXIT_BROKEN_PIPE = 1
"""The exit code when the output is closed early (``boardgym ... | head``), said silently."""
MAX_GAMES = 1_000_000
"""The most games one command plays (``evaluate --games``; ``tournament --games``, per
pairing): a million games pin a win rate within 0.1 % (95 % Wilson interval); a match keeps
about 60 bytes a game (its outcome and a hash of its moves)."""
MAX_SEED = 2 ** 32 - 1
"""The largest seed a command takes (``--seed``): 32 bits, as most tools take, already more
matches than anyone plays."""
MAX_POSITIONS = 1_000_000
"""The most positions one command labels or judges (``positions --count``, ``quality
--limit``): the shipped sets hold thousands; a million Reversi endgames take weeks."""
GAMES_CAP = "MAX_GAMES: a million games pin a win rate within 0.1%"
"""Why ``--games`` stops at ``MAX_GAMES`` (the error message says it)."""
MAX_WORKERS = 1024
"""The most tasks running at once on any backend (``--workers``): Ray tasks over a cluster
of up to this many CPUs. The local backend's own cap is the machine's CPU count
(``local_cpus``)."""


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


def int_at_least(minimum: int, maximum: int | None = None,
                 cap: str = "") -> Callable[[str], int]:
    """An argparse ``type`` accepting integers >= ``minimum`` (and <= ``maximum`` when given:
    a documented cap, ``cap`` saying which and why), with a usage error otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(over(value, maximum, cap))
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


def over(value: int, maximum: int, cap: str = "") -> str:
    """The message of a value above its cap: ``must be at most MAXIMUM (CAP), got VALUE``."""
    why = f" ({cap})" if cap else ""
    return f"must be at most {maximum}{why}, got {value}"


def games_count(text: str) -> int:
    """The argparse ``type`` of every ``--games``: an integer in ``[1, MAX_GAMES]``."""
    return int_at_least(1, MAX_GAMES, GAMES_CAP)(text)


def local_cpus() -> int:
    """The CPUs of this machine: the most processes the local backend runs."""
    return os.cpu_count() or 1


def check_workers(name: str, workers: int) -> None:
    """Refuse a number of workers the backend ``name`` does not run.

    Raises:
        ValueError: below 1; above ``local_cpus()`` on the local backend; above
            ``MAX_WORKERS`` on Ray (one line naming the most and the way to more).
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if name == "local" and workers > local_cpus():
        raise ValueError(f"--workers {workers}: the local backend runs at most "
                         f"{local_cpus()} processes, this machine's CPUs (more run no "
                         f"faster); use --workers {local_cpus()} or fewer, or --backend ray "
                         "to spread the work over a cluster")
    if workers > MAX_WORKERS:
        raise ValueError(f"--workers {workers}: at most {MAX_WORKERS} tasks run at once "
                         "(MAX_WORKERS); use fewer")


def seed_value(text: str) -> int:
    """The argparse ``type`` of every ``--seed``: an integer in ``[0, MAX_SEED]``."""
    return int_at_least(0, MAX_SEED, "MAX_SEED")(text)


def positions_count(text: str) -> int:
    """The argparse ``type`` of a number of positions: an integer in ``[1, MAX_POSITIONS]``."""
    return int_at_least(1, MAX_POSITIONS, "MAX_POSITIONS")(text)


def check_at_least(**limits: tuple[int, int]) -> None:
    """Raise a ValueError naming the first argument ``name=(value, minimum)`` whose value is
    below its minimum (the Python API's twin of ``int_at_least``)."""
    for name, (value, minimum) in limits.items():
        if value < minimum:
            raise ValueError(f"{name} must be >= {minimum}, got {value}")


def check_at_most(cap: str = "", **limits: tuple[int, int]) -> None:
    """Raise a ValueError naming the first argument ``name=(value, maximum)`` whose value is
    above its cap (``cap`` says which and why; the twin of ``int_at_least``'s maximum)."""
    for name, (value, maximum) in limits.items():
        if value > maximum:
            raise ValueError(f"{name} {over(value, maximum, cap)}")


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


# -- Ctrl-C ----------------------------------------------------------------------------------


def interruptible(prog: str, main: Callable[[list[str]], int | None], argv: list[str]) -> int:
    """``main(argv)``'s exit code; after Ctrl-C (``KeyboardInterrupt``) one line on stderr,
    ``PROG: interrupted``, and ``EXIT_INTERRUPTED`` instead of a traceback. Whatever the
    command had started is undone on the way out (worker processes stopped, temporary
    files removed: ``atomic_path``), so no half-written file is left. When nobody reads
    the output any more (``BrokenPipeError``), ``EXIT_BROKEN_PIPE``, silently."""
    try:
        return int(main(argv) or 0)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # send what is still buffered, and Python's flush at exit, nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


# -- output files ----------------------------------------------------------------------------


def add_force_option(parser: argparse.ArgumentParser, what: str = "the output file") -> None:
    """Add ``--force``: overwrite ``what`` even when it is not this command's own output."""
    parser.add_argument("--force", action="store_true",
                        help=f"overwrite {what} even if it is not this command's own earlier "
                             "output (any other file there is refused without it)")


def check_output(path: str | Path, option: str, what: str, is_own: Callable[[Path], bool],
                 force: bool = False, folder: bool = True) -> Path:
    """``path``, a file a command is about to write, checked before any work: its folder
    exists (unless ``folder`` is False: the command makes it), it is no folder itself, and
    a file already there is overwritten only when ``is_own(path)`` recognises the command's
    own earlier output (its format header or run folder), or with ``force``.

    Args:
        path: the file.
        option: how the command line names it (``"--out"``), for the message.
        what: what the command writes there (``"a labelled position set"``).
        is_own: whether an existing file is the command's own output; it must not raise.
        force: overwrite whatever is there.

    Raises:
        ValueError: one line naming the path and the fix.
    """
    file = Path(path)
    if file.is_dir():
        raise ValueError(f"{option} {file} is a folder; name a file to write {what} to")
    if folder and not file.absolute().parent.is_dir():
        raise ValueError(f"{option} {file}: no folder {str(file.absolute().parent)!r}; "
                         "create it or choose another path")
    if file.exists() and not force and not is_own(file):
        raise ValueError(f"{option} {file}: a file is there that is not {what} this command "
                         "wrote; pass --force to overwrite it, or choose another path")
    return file


def head(path: Path, size: int = 4096) -> bytes:
    """The first ``size`` bytes of the file at ``path`` (empty when it cannot be read)."""
    try:
        with path.open("rb") as file:
            return file.read(size)
    except OSError:
        return b""


def first_line(path: Path) -> str:
    """The first line of the text file at ``path``, decoded leniently ('' when unreadable)."""
    return head(path).split(b"\n", 1)[0].decode("utf-8", "replace")


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_SOFTWARE = "Software"
"""The PNG text key that records which command drew a picture (``png_metadata``)."""


def png_metadata(command: str) -> dict[str, str]:
    """The ``savefig(metadata=...)`` of a picture drawn by ``boardgym COMMAND``."""
    return {PNG_SOFTWARE: f"boardgym {command}"}


def is_png_of(path: Path, command: str) -> bool:
    """True when ``path`` is a PNG whose ``png_metadata`` says ``boardgym COMMAND`` drew it."""
    data = head(path, 1 << 16)
    marker = f"{PNG_SOFTWARE}\0boardgym {command}".encode()
    return data.startswith(PNG_SIGNATURE) and marker in data.split(b"IDAT", 1)[0]


def argv_of(argv: Sequence[str] | None) -> list[str]:
    """The arguments a command was given: ``argv``, or the process's own when None."""
    return list(sys.argv[1:] if argv is None else argv)
