"""Play quality judged by exact solvers (``boardgym quality``).

Each player is asked for a move (``act(state, rng)``) in every position of a labelled set
(``boardgym positions``; the shipped sets are ``shipped:NAME``, ``POSITION_SETS``), and its move is
compared with the exact values of all the legal moves there:

- *outcome kept*: the move's outcome class (win / draw / loss: the sign of its value) is the
  best move's. Counted over the *decisive* positions only, those where the legal moves do not
  all have the same outcome class;
- *best move*: the move's exact value is the highest (a fastest win, a slowest loss, the
  largest disc difference). Counted over the *contested* positions, those where the legal
  moves do not all have the same value;
- milliseconds per move: the mean time of ``act`` over every position.

Both shares come with 95% Wilson intervals. Position ``i`` draws the player's tie-breaks
from ``np.random.default_rng([seed, i])``, so the moves, and every count, do not depend on
``--workers`` or ``--backend`` (``train.common.backends``; only the times do).

Held-apart parts. Every labelled set splits, by a stable hash of each position's text
(``zlib.crc32``, the same on every machine and Python), into a *selection* part (about
``SELECTION_PERCENT`` % of the positions) and a *report* part (the rest): training runs pick
their best snapshot on the selection part (``--eval-quality``), model cards report on the
report part, so the reported figures were not used to choose the weights.
``--part all|report|selection`` judges one part (default ``all``, the whole set).
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, TypeVar

import numpy as np

from boardgym import agents
from boardgym.agents import Agent, shipped
from boardgym.envs.games import game as game_record
from boardgym.envs.games.core import Game
from boardgym.train.common.backends import (
    Backend,
    add_backend_options,
    backend_from_args,
    connect,
    flat_map,
    task_ranges,
)
from boardgym.train.common.commands import (
    add_force_option,
    check_at_least,
    check_output,
    game_parser,
    positions_count,
    progress_bar,
    seed_value,
)
from boardgym.train.match.evaluate import check_boards
from boardgym.train.match.results import player_label
from boardgym.train.quality.report import Quality, is_chart, table, write_png

T = TypeVar("T")

POSITION_SETS = shipped.Kind("position set", "boardgym.train.quality", "data",
                             (".jsonl", ".jsonl.gz"))
"""The shipped labelled sets, ``shipped:NAME`` wherever a set is read: each game's own
(``GAME``: what ``boardgym quality`` judges by default) and the four-in-a-row pretraining and
judging sets, in this package's ``data/`` (``data/README.md`` says how each was made)."""
GZIP_SUFFIX = ".gz"
"""The ending of a gzip-compressed set, read as its plain text."""
PERCENT = 100
CHUNK_POSITIONS = 50
"""Positions per task handed to a worker process (or a Ray task)."""
ALL, REPORT, SELECTION = "all", "report", "selection"
PARTS = (ALL, REPORT, SELECTION)
"""The parts of a labelled set ``--part`` may name."""
SELECTION_PERCENT = 20
"""About this share (%) of every labelled set is the selection part."""


@dataclass(frozen=True)
class Position:
    """One labelled position.

    Attributes:
        text: the position text (``rules.parse`` reads it).
        values: action -> exact value of the move for the side to move.
    """

    text: str
    values: dict[int, int]

    @property
    def best(self) -> int:
        """The highest value."""
        return max(self.values.values())

    @property
    def decisive(self) -> bool:
        """The legal moves do not all have the same outcome class."""
        return len({int(np.sign(value)) for value in self.values.values()}) > 1

    @property
    def contested(self) -> bool:
        """The legal moves do not all have the same value."""
        return len(set(self.values.values())) > 1

    def keeps_outcome(self, action: int) -> bool:
        """``action`` is legal here and has the best move's outcome class."""
        return action in self.values and bool(np.sign(self.values[action]) == np.sign(self.best))

    def is_best(self, action: int) -> bool:
        """``action`` is legal here and has the highest value."""
        return self.values.get(action) == self.best


def default_positions(record: Game) -> Path:
    """The shipped set of a game (``shipped:GAME``); where it would be for a game that ships
    none (a game added with ``register_game``), so that reading it says how to make one."""
    return POSITION_SETS.path(record.name)


def open_text(path: str | Path) -> TextIO:
    """The UTF-8 text file at ``path`` open for reading, decompressed as it is read when its
    name ends in ``.gz``."""
    if Path(path).suffix == GZIP_SUFFIX:
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_items(source: Path, parse: Callable[[Any], T], what: str, missing: str) -> list[T]:
    """``parse`` of each line's JSON value of the JSONL file ``source`` (gzip-compressed
    when its name ends in ``.gz``), in order.

    Raises:
        ValueError: no such file (the message is ``missing``, which says how to make one), a
            file that does not read or decompress: ``SOURCE: unreadable (why)``; a line
            that is not JSON or that ``parse`` refuses (ValueError, KeyError,
            TypeError, AttributeError): ``SOURCE:LINE: not WHAT (why)``; a file without
            lines: ``SOURCE: empty``.
    """
    if not source.is_file():
        raise ValueError(missing)
    items = []
    try:
        with open_text(source) as stream:
            lines = stream.read().splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise ValueError(f"{source}: unreadable ({error})") from None
    for number, text in enumerate(lines, start=1):
        try:
            items.append(parse(json.loads(text)))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"{source}:{number}: not {what} ({error})") from None
    if not items:
        raise ValueError(f"{source}: empty")
    return items


def load_positions(path: str | Path, record: Game) -> list[Position]:
    """The labelled positions of a JSONL file (``path``, or ``shipped:NAME``: a shipped set),
    each checked to parse as ``record``'s game and to have a move.

    Raises:
        ValueError: a missing or empty file, or a line that is not a labelled position of
            this game (the message names the line).
        FileNotFoundError: ``shipped:NAME`` of no shipped set (the message lists them).
    """
    source = shipped.resolve(path, POSITION_SETS)

    def position(item: Any) -> Position:
        record.rules.parse(item["position"])
        values = {int(action): int(value) for action, value in item["moves"].items()}
        if not values:
            raise ValueError("a position without moves")
        return Position(item["position"], values)

    looked = shipped.missing(source, POSITION_SETS)
    return read_items(source, position, f"a labelled {record.name} position",
                      f"no position file {str(source)!r} ({looked}): make one with boardgym "
                      f"positions {record.name} --out FILE, or pass --positions FILE")


def part_of(position: Position) -> str:
    """``SELECTION`` or ``REPORT``: the held-apart part ``position`` belongs to, from the CRC-32
    of its text (stable across machines, processes and Python versions)."""
    bucket = zlib.crc32(position.text.encode("utf-8")) % PERCENT
    return SELECTION if bucket < SELECTION_PERCENT else REPORT


def split(positions: Sequence[Position], part: str) -> list[Position]:
    """The positions of ``part`` (``"all"``, ``"report"`` or ``"selection"``), in set order.

    Raises:
        ValueError: an unknown part.
    """
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}; got {part!r}")
    return [position for position in positions if part == ALL or part_of(position) == part]


def selection_positions(record: Game, count: int, options: dict[str, Any] | None = None,
                        path: str | Path | None = None,
                        keys: tuple[str, str] = ("eval_quality", "--eval-quality ")
                        ) -> list[Position]:
    """The first ``count`` positions of the labelled set at ``path`` or, without one, of the
    selection part of ``record``'s shipped set (``default_positions``): what a training
    run's ``eval_quality`` judges.

    Args:
        record: the game.
        count: positions wanted, >= 1.
        options: the run's board options; the set must be on that board.
        path: the run's ``eval_quality_positions`` (None: the shipped set).
        keys: the trainer's name of ``count`` and how to set it, for the messages.

    Raises:
        ValueError: no such set, a malformed one, a set on another board, or fewer positions
            than ``count`` (the message gives the most there are).
    """
    if path is None:
        source = default_positions(record)
        chosen = split(load_positions(source, record), SELECTION)
    else:
        source = labelled_file(path, "eval_quality_positions", record)
        try:
            chosen = load_positions(source, record)
        except ValueError as error:
            raise ValueError(f"eval_quality_positions: {error}") from None
    if count > len(chosen):
        part = "" if path is None else " (eval_quality_positions)"
        raise ValueError(f"{keys[0]} is {count} but {source}{part} has {len(chosen)} "
                         f"positions to select on; use {keys[1]}{len(chosen)} or fewer")
    check_board(record, chosen[0].text, options,
                f"{keys[0]} judges the positions of {source}, on the default {record.title} "
                f"board; this run's board differs: use {keys[1]}0")
    return chosen[:count]


def labelled_file(path: str | Path, key: str, record: Game) -> Path:
    """The file of the config key ``key``'s labelled set ``path`` (or ``shipped:NAME``: a
    shipped set) when a file is there.

    Raises:
        ValueError: no such file, or no such shipped set (the message says how to make one,
            or to unset ``key``).
    """
    try:
        source = shipped.resolve(path, POSITION_SETS)
    except FileNotFoundError as error:
        raise ValueError(f"{key}: {error}") from None
    if not source.is_file():
        looked = shipped.missing(source, POSITION_SETS)
        raise ValueError(f"{key}: no file {str(source)!r} ({looked}); label positions with "
                         f"boardgym positions {record.name} --count N --seed S --out FILE (or "
                         f"--set {key}=null)")
    return source


def check_board(record: Game, text: str, options: dict[str, Any] | None, message: str) -> None:
    """Refuse a labelled position (its ``text``) that is not on the board of ``options``
    (board options, e.g. ``agents.checkpoint.board_kwargs`` of a run's ``env_kwargs``).

    Raises:
        ValueError: with ``message``.
    """
    rules, sample = record.rules, record.rules.parse(text)
    start = rules.initial_state(**(options or {}))
    if rules.observation(sample).shape != rules.observation(start).shape or \
            getattr(sample, "geom", None) != getattr(start, "geom", None):
        raise ValueError(message)


def tally(player: str, positions: Sequence[Position], actions: Sequence[int],
          seconds: float) -> Quality:
    """The ``Quality`` of ``player`` from its move in each position."""
    decisive = [(position, action) for position, action in zip(positions, actions, strict=True)
                if position.decisive]
    contested = [(position, action) for position, action in zip(positions, actions, strict=True)
                 if position.contested]
    return Quality(player, len(positions), len(decisive),
                   int(sum(position.keeps_outcome(action) for position, action in decisive)),
                   len(contested),
                   int(sum(position.is_best(action) for position, action in contested)),
                   seconds)


@dataclass(frozen=True)
class _Task:
    """What every position of a judging run shares (picklable when the player is a spec)."""

    game: str
    player: str | Agent
    seed: int

    def make(self) -> Agent:
        """The player."""
        return agents.make(self.game, self.player)

    def ask(self, player: Agent, position: Position, index: int) -> tuple[int, float]:
        """The player's move in position ``index`` and the seconds it took."""
        state = game_record(self.game).rules.parse(position.text)
        rng = np.random.default_rng([self.seed, index])
        start = time.perf_counter()
        action = int(player.act(state, rng))
        return action, time.perf_counter() - start

    def ask_all(self, player: Agent, chunk: list[tuple[int, Position]]
                ) -> list[tuple[int, float]]:
        """The moves and times of numbered positions (one task of
        ``train.common.backends.flat_map``)."""
        return [self.ask(player, position, index) for index, position in chunk]


def _answers(task: _Task, positions: Sequence[Position], backend: Backend,
             player: Agent | None,
             advance: Callable[[int], object] | None) -> Iterator[tuple[int, float]]:
    """The player's move and time in each position, in order: one by one in this process
    (with ``player`` if built), else ``CHUNK_POSITIONS`` at a time."""
    chunks = ([(index, positions[index]) for index in indices]
              for indices in task_ranges(CHUNK_POSITIONS, backend, len(positions)))
    return flat_map(task.ask_all, chunks, task.make, backend, player, advance)


def judge(game: str, player: str | Agent, positions: Sequence[Position], seed: int = 0,
          workers: int | None = None, advance: Callable[[int], object] | None = None,
          built: Agent | None = None, backend: str = "local",
          address: str | None = None) -> Quality:
    """A player's agreement with the exact values of ``positions``.

    Args:
        game: a game name or alias.
        player: a player spec (``agents.make``) or an ``Agent`` (picklable if ``workers > 1``).
        positions: the labelled positions (``load_positions``).
        seed: position ``i`` draws the player's randomness from ``default_rng([seed, i])``.
        workers: tasks running at once (``train.common.backends.Backend``: local processes, default
            1; Ray tasks, default the cluster's CPUs); same moves for any number.
        advance: called with the number of positions just judged (None: not called).
        built: the player already built from ``player`` (used in this process).
        backend: ``"local"`` processes or ``"ray"`` (same moves).
        address: the Ray cluster to join (default ``RAY_ADDRESS``, else a local Ray).

    Raises:
        ValueError: unknown game or player, no positions, ``seed < 0``, ``workers < 1``, or
            a Ray backend that cannot start.
    """
    check_at_least(positions=(len(positions), 1), seed=(seed, 0))
    where = Backend(backend, workers, address)
    connect(where)
    task = _Task(game_record(game).name, player, seed)
    answers = list(_answers(task, positions, where, built, advance))
    return tally(player_label(player), positions, [action for action, _ in answers],
                 sum(seconds for _, seconds in answers))


# -- command line ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``boardgym quality`` argument parser."""
    parser = game_parser(
        prog="boardgym quality",
        description="How often each player keeps the game-theoretic outcome and plays an "
                    "exactly best move, on positions labelled by the exact solvers.")
    parser.add_argument("players", nargs="+", metavar="SPEC",
                        help="players: built-in names (perfect, solver, lookahead:2, ...) or "
                             "checkpoint paths")
    parser.add_argument("--positions", metavar="FILE",
                        help="labelled positions: a file or shipped:NAME, a shipped set "
                             "(default: shipped:GAME, the game's own)")
    parser.add_argument("--part", choices=PARTS, default=ALL,
                        help="judge the whole set (all, default), or only its held-apart "
                             "report or selection part (split by a stable hash of each "
                             f"position; selection is about {SELECTION_PERCENT}%%)")
    parser.add_argument("--limit", type=positions_count,
                        help="judge only the first N positions (of the part)")
    parser.add_argument("--seed", type=seed_value, default=0,
                        help="seed of the players' tie-breaks (default 0)")
    add_backend_options(parser, "the positions")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--png", metavar="OUT",
                        help="also draw a bar chart to this PNG file (a file there is "
                             "overwritten only when it is such a chart, else --force)")
    add_force_option(parser, "the --png file")
    return parser


def _resolve(parser: argparse.ArgumentParser, args: argparse.Namespace
             ) -> tuple[Game, Path, list[Position], list[Agent]]:
    """The game, the positions' file and contents, and the players built once; any problem
    ends the program with a one-line usage error."""
    try:
        record = game_record(args.game)
        path = Path(args.positions) if args.positions else default_positions(record)
        positions = split(load_positions(path, record), args.part)[:args.limit]
        built = [agents.make(record, spec) for spec in args.players]
        check_boards(record.name, built, None)
        if args.png:
            check_output(args.png, "--png", "a quality chart", is_chart, args.force)
        connect(backend_from_args(args))
    except (ValueError, OSError, ImportError) as error:
        parser.error(str(error))
    return record, path, positions, built


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym quality GAME SPEC... [--positions FILE] [--part PART] [--limit N] [--seed S]
    [--json] [--workers K] [--backend local|ray] [--address ADDR] [--png OUT [--force]]``.

    Returns:
        0 on success (a usage error exits with 2 and one line on stderr).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    record, path, positions, built = _resolve(parser, args)
    bar = progress_bar(len(positions) * len(built), "position")
    advance = None if bar is None else bar.update
    try:
        results = [judge(record.name, spec, positions, args.seed, args.workers, advance, player,
                         args.backend, args.address)
                   for spec, player in zip(args.players, built, strict=True)]
    finally:
        if bar is not None:
            bar.close()
    if args.png:
        write_png(args.png, record, results)
    if args.json:
        print(json.dumps({"game": record.name, "positions_file": str(path),
                          "part": args.part, "positions": len(positions), "seed": args.seed,
                          "players": [result.to_dict() for result in results]}))
    else:
        part = "" if args.part == ALL else f" ({args.part} part)"
        print(f"{record.title}: {len(positions)} positions{part} from {path}, seed {args.seed}")
        print(table(results))
    return 0


if __name__ == "__main__":
    import sys

    from boardgym.train.cli import main as run_command

    raise SystemExit(run_command(["quality", *sys.argv[1:]]))
