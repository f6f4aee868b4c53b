"""Game records: a played game in its game's notation, one JSON object a line.

A record file holds one game a line (JSON lines), every game of a match in game order::

    {"format": "boardgym-record/1", "game": "reversi", "options": {},
     "start": "---------------------------OX------XO--------------------------- X",
     "moves": "f5 d6 c3 ...", "players": ["corner_best", "random"], "result": "1-0",
     "a": 0, "seed": 0, "index": 7, "source": "evaluate"}

- ``format``: ``RECORD_FORMAT``, the version of these keys.
- ``game``: the game's name; ``options``: its board options (four-in-a-row ``rows``,
  ``columns``, ``connect``), empty for the default board.
- ``start``: the start position in the game's position text (``rules.to_text``).
- ``moves``: the moves from there, separated by spaces, in the game's community notation:
  Reversi squares (``f5``, columns a-h, rows 1-8 from the top) with ``pass`` written where
  the side to move has no legal move, four-in-a-row column numbers from 1 (as in Pascal Pons'
  solver), tic-tac-toe cells 1-9 row by row from the top left. A move token is the last word
  of the game's action name (``Game.action_name``: ``column 4`` -> ``4``).
- ``players``: who played the first side (the first of ``Game.side_names``, ``X``), then
  who played the second: player specs (``corner_best``, a checkpoint path) or ``human``.
- ``result``: from the first side's view, as in PGN: ``1-0``, ``0-1``, ``1/2-1/2``, or
  ``*`` for an unfinished game.
- Optional: ``a`` (the seat, 0 or 1, of the match's first-named player A), ``seed`` and
  ``index`` (the match seed and the game's number from 0: its random numbers come from
  ``numpy.random.default_rng([seed, index])``, so the game is reproduced by the command
  with that seed), ``opening`` (how many of the moves were the fair match's opening),
  ``random_moves`` (a noisy match's chance of a random move), ``source`` (the command).

Reading a record replays its moves through the rules: an unknown or illegal move, a missing
or stray ``pass``, moves after the end, or a result the moves do not reach is refused with
one line naming the record's line, its game and the move (``RecordError``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from boardgym.envs.games import game as game_record
from boardgym.envs.games.core import Game, IllegalMoveError
from boardgym.files import atomic_path

RECORD_FORMAT = "boardgym-record/1"
PASS = "pass"
"""The token of a pass: the side to move had no legal move (Reversi)."""
HUMAN = "human"
"""The player name of a person in ``players``."""
UNFINISHED = "*"
RESULTS = {1: "1-0", -1: "0-1", 0: "1/2-1/2"}
"""The ``result`` text of the first side's result (+1 won, -1 lost, 0 tie)."""
MAX_RECORD_BYTES = 1 << 20
"""The longest record line read (far above any game of the shipped boards)."""
_REQUIRED = ("format", "game", "start", "moves", "players", "result")
_OPTIONAL_INTS = ("a", "seed", "index", "opening")


class RecordError(ValueError):
    """A record that cannot be read: the message is one line naming the line, the game and
    the move."""


@dataclass(frozen=True)
class GameRecord:
    """One game: where it started, its moves, who played and how it ended.

    Attributes:
        game: the game's name (or alias; kept as the canonical name).
        moves: the actions played from the start, passes not included (they are automatic).
        players: the first side's player, then the second's (specs or ``HUMAN``).
        options: the board options.
        start: the start position's text; None: the game's initial position (kept as its
            text).
        a: the seat (0 first, 1 second) of the match's player A, if a match.
        seed: the match seed, if any.
        index: the game's number in its match, from 0, if any.
        opening: how many of ``moves`` were the fair match's opening.
        random_moves: a noisy match's chance of a random move before each move.
        source: the command that played the game (``evaluate``, ``play``, ...).
    """

    game: str
    moves: tuple[int, ...]
    players: tuple[str, str]
    options: Mapping[str, int] = field(default_factory=dict)
    start: str | None = None
    a: int | None = None
    seed: int | None = None
    index: int | None = None
    opening: int = 0
    random_moves: float = 0.0
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "game", game_record(self.game).name)
        object.__setattr__(self, "moves", tuple(int(move) for move in self.moves))
        object.__setattr__(self, "players", tuple(self.players))
        object.__setattr__(self, "options", dict(self.options))
        if self.start is None:
            rules = self.record.rules
            object.__setattr__(self, "start", rules.to_text(rules.initial_state(**self.options)))

    @property
    def record(self) -> Game:
        """The game's ``Game`` record."""
        return game_record(self.game)

    def start_state(self) -> Any:
        """The rules state the game started from."""
        return self.record.rules.parse(self.start, **self.options)

    def states(self) -> list[Any]:
        """The rules states of the game: the start, then the position after each move.

        Raises:
            IllegalMoveError: a move the rules refuse (records read from text are checked
                when read).
        """
        states = [self.start_state()]
        for move in self.moves:
            states.append(self.record.rules.apply(states[-1], move))
        return states

    def final_state(self) -> Any:
        """The position after the last move."""
        return self.states()[-1]

    @property
    def finished(self) -> bool:
        """Whether the moves end the game."""
        return bool(self.record.rules.is_terminal(self.final_state()))

    @property
    def result(self) -> str:
        """The first side's result as PGN writes it (``RESULTS``), ``*`` if unfinished."""
        final = self.final_state()
        if not self.record.rules.is_terminal(final):
            return UNFINISHED
        return RESULTS[int(self.record.rules.result(final, 0))]

    def winner(self) -> int | None:
        """The side that won (0 the first, 1 the second); None for a tie or unfinished."""
        result = self.result
        return None if result not in (RESULTS[1], RESULTS[-1]) else int(result == RESULTS[-1])

    def notation(self) -> list[str]:
        """The moves as the game's community writes them, ``pass`` where a side passed."""
        record, rules = self.record, self.record.rules
        tokens, state = [], self.start_state()
        for move in self.moves:
            after = rules.apply(state, move)
            tokens.append(move_token(record, move))
            if after.to_move == state.to_move and not rules.is_terminal(after):
                tokens.append(PASS)
            state = after
        return tokens

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the record (keys as in the module docstring)."""
        data: dict[str, Any] = {
            "format": RECORD_FORMAT, "game": self.game, "options": dict(self.options),
            "start": self.start, "moves": " ".join(self.notation()), "players": list(self.players),
            "result": self.result}
        optional = {"a": self.a, "seed": self.seed, "index": self.index,
                    "opening": self.opening or None, "random_moves": self.random_moves or None,
                    "source": self.source or None}
        data.update({key: value for key, value in optional.items() if value is not None})
        return data

    def to_json(self) -> str:
        """The record as one line of JSON."""
        return json.dumps(self.to_dict())

    def _repr_svg_(self) -> str:
        """The final position as an SVG picture (what notebooks show)."""
        from boardgym.envs.svg import state_svg  # drawing sits above the rules: looked up late

        states = self.states()
        last = self.moves[-1] if self.moves else None
        return str(state_svg(self.game, states[-1], last_action=last,
                             previous=states[-2] if self.moves else None))


def move_token(record: Game, action: int) -> str:
    """The notation of ``action``: the last word of its name (``f5``, ``4``, ``5``)."""
    return record.action_name(int(action)).split()[-1].lower()


def _tokens_to_actions(record: Game, start: Any, tokens: Sequence[str], where: str
                       ) -> tuple[int, ...]:
    """The actions of ``tokens`` replayed from ``start``, each checked.

    Raises:
        RecordError: an unknown or illegal move, a missing or stray pass, a move after the
            end; the message starts with ``where``.
    """
    rules = record.rules
    names = {move_token(record, a): a for a in range(len(rules.legal_mask(start)))}
    state, moves, must_pass, number = start, [], False, 0
    for token in tokens:
        number += 1
        if token == PASS:
            if not must_pass:
                raise RecordError(f"{where}, move {number}: 'pass' but the side to move has "
                                  "a legal move")
            must_pass = False
            continue
        if must_pass:
            raise RecordError(f"{where}, move {number}: {token!r} where the side to move had "
                              "no legal move; write 'pass' first")
        if rules.is_terminal(state):
            raise RecordError(f"{where}, move {number}: {token!r} after the end of the game")
        if token not in names:
            raise RecordError(f"{where}, move {number}: {token!r} is not a {record.title} move")
        try:
            after = rules.apply(state, names[token])
        except IllegalMoveError:
            raise RecordError(f"{where}, move {number}: {token} is not legal here") from None
        must_pass = after.to_move == state.to_move and not rules.is_terminal(after)
        state = after
        moves.append(names[token])
    if must_pass:
        raise RecordError(f"{where}: the moves end where a side has no legal move; "
                          "write its 'pass'")
    return tuple(moves)


def _field(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``data[key]`` if it is of ``kind`` (bools are no ints), else a ``RecordError``."""
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in (
            kind if isinstance(kind, tuple) else (kind,))):
        raise RecordError(f"{where}: {key!r} has the wrong type ({type(value).__name__})")
    return value


def _header(data: Any, where: str) -> tuple[Game, dict[str, int]]:
    """The game and the board options of a record object, its keys checked."""
    if not isinstance(data, dict):
        raise RecordError(f"{where}: a record is a JSON object, got {type(data).__name__}")
    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        raise RecordError(f"{where}: no {', '.join(map(repr, missing))} (a truncated record?)")
    if data["format"] != RECORD_FORMAT:
        raise RecordError(f"{where}: format {data['format']!r} is not {RECORD_FORMAT!r}")
    try:
        record = game_record(_field(data, "game", str, where))
        options = record.board_options(_field(data, "options", dict, where)
                                       if "options" in data else {})
    except RecordError:
        raise
    except ValueError as error:
        raise RecordError(f"{where}: {error}") from None
    return record, options


def record_from_dict(data: Any, where: str = "the record") -> GameRecord:
    """The ``GameRecord`` of a JSON object, its moves replayed and checked.

    Raises:
        RecordError: a missing key, a wrong type, an unknown game, a bad start position, a
            bad move, or a ``result`` that the moves do not reach (a truncated game).
    """
    record, options = _header(data, where)
    players = _field(data, "players", list, where)
    if len(players) != 2 or not all(isinstance(p, str) for p in players):
        raise RecordError(f"{where}: 'players' must be the two players' names")
    try:
        start = record.rules.parse(_field(data, "start", str, where), **options)
    except ValueError as error:
        raise RecordError(f"{where}: the start position: {error}") from None
    moves = _tokens_to_actions(record, start, _field(data, "moves", str, where).split(), where)
    extras = {key: _field(data, key, int, where) for key in _OPTIONAL_INTS if key in data}
    if extras.get("a", 0) not in (0, 1) or min(extras.values(), default=0) < 0:
        raise RecordError(f"{where}: 'a' is a seat (0 or 1); 'seed', 'index' and 'opening' "
                          "are >= 0")
    if "random_moves" in data:
        extras["random_moves"] = _field(data, "random_moves", (int, float), where)
    if "source" in data:
        extras["source"] = _field(data, "source", str, where)
    game = GameRecord(record.name, moves, (players[0], players[1]), options, data["start"],
                      **extras)
    if game.result != data["result"]:
        reached = "do not finish the game" if game.result == UNFINISHED else \
            f"reach {game.result}"
        raise RecordError(f"{where}: the result is {data['result']!r} but the moves "
                          f"{reached} (a truncated or altered record)")
    return game


def parse_records(text: str, source: str = "the record file") -> list[GameRecord]:
    """Every record of a record file's text (blank lines skipped), each checked.

    Raises:
        RecordError: a line that is no JSON, too long, or no valid record (see
            ``record_from_dict``); or no records at all.
    """
    games = [record for _, record in _parsed_lines(text.splitlines(), source)]
    if not games:
        raise RecordError(f"{source} has no game records (one JSON object a line)")
    return games


def _parsed_lines(lines: Iterable[str], source: str) -> Iterator[tuple[int, GameRecord]]:
    """``(line number, record)`` of each non-blank line."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}, line {number}"
        if len(line) > MAX_RECORD_BYTES:
            raise RecordError(f"{where}: longer than {MAX_RECORD_BYTES} characters")
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            raise RecordError(f"{where}: not JSON ({error.msg})") from None
        if isinstance(data, dict) and isinstance(data.get("index"), int):
            where += f" (game {data['index']})"
        yield number, record_from_dict(data, where)


def read_records(path: str | Path) -> list[GameRecord]:
    """The records of the file at ``path`` (see ``parse_records``).

    Raises:
        RecordError: the file is not a record file (the message names it).
        OSError: the file cannot be read.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{file} is not a text file of game records") from None
    return parse_records(text, str(file))


def is_record_file(path: Path) -> bool:
    """Whether ``path`` starts like a record file (its first line names ``RECORD_FORMAT``);
    never raises."""
    try:
        with path.open("rb") as file:
            first = file.readline(MAX_RECORD_BYTES)
        return json.loads(first).get("format") == RECORD_FORMAT
    except (OSError, ValueError, AttributeError):
        return False


class RecordWriter:
    """Writes records to ``path`` as games finish, atomically: the file appears, complete,
    when the ``with`` block ends without an error, and is left as it was otherwise.

    Use::

        with RecordWriter("games.jsonl") as out:
            out.write(record)
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._stack = ExitStack()
        self._file: TextIO | None = None

    def __enter__(self) -> RecordWriter:
        with ExitStack() as stack:
            temporary = stack.enter_context(atomic_path(self.path))
            self._file = stack.enter_context(temporary.open("w", encoding="utf-8"))
            self._stack = stack.pop_all()
        return self

    def write(self, record: GameRecord) -> None:
        """Add one game's line."""
        if self._file is None:
            raise RuntimeError("RecordWriter.write outside its with block")
        self._file.write(record.to_json() + "\n")

    def __exit__(self, *exc: Any) -> bool | None:
        self._file = None
        return self._stack.__exit__(*exc)


def record_writer(path: str | Path | None) -> AbstractContextManager[RecordWriter | None]:
    """A ``RecordWriter`` to ``path``, or (``path`` None) a context that yields None."""
    return nullcontext() if path is None else RecordWriter(path)


def append_record(path: str | Path, record: GameRecord) -> None:
    """Add ``record`` to the end of the record file at ``path`` (created if missing), one
    whole line at a time (what ``play`` does after each game)."""
    with Path(path).open("a", encoding="utf-8") as file:
        file.write(record.to_json() + "\n")


__all__ = ["HUMAN", "PASS", "RECORD_FORMAT", "GameRecord", "RecordError", "RecordWriter",
           "append_record", "is_record_file", "move_token", "parse_records", "read_records",
           "record_from_dict", "record_writer"]
