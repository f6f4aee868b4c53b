"""Regenerate the documents' tables from the commands that print their numbers.

Every number in the README, the docs site and the model cards comes from a command printed
beside it. This script runs those commands and rewrites the tables, so a document and the code
cannot drift apart: ``make docs-tables`` regenerates everything, and the test suite reruns the
cheap tables and compares them with the committed text.

Markers
    A generated table sits between two HTML comments, each alone on its line::

        <!-- table NAME -->
        ...everything here is rewritten: the command line(s), then the table...
        <!-- /table -->

    NAME (letters, digits, ``_``, ``-``) names a spec. Text outside the markers is never
    touched; text inside is replaced, so write nothing by hand there. An empty block (the two
    markers on consecutive lines) is filled on the next run. Markers inside fenced code
    blocks (```) are shown text, not tables.

Specs
    Each spec is a mapping in a YAML file of specs: ``docs/tables.yaml`` (the README's and the
    site's tables) and a ``tables.yaml`` beside the markdown file, if there is one (e.g.
    ``checkpoints/tables.yaml`` for the model cards). A NAME defined twice is an error. Keys:

    ``kind``
        What the command prints and how it becomes rows:
        ``evaluate`` (``boardgym evaluate ... --json``: one row per command),
        ``quality`` (``boardgym quality ... --json``: one row per player),
        ``tournament`` (``boardgym tournament ... --out PREFIX``: one row per rated player,
        read from ``PREFIX.json``; the command also rewrites ``PREFIX.md`` and ``.png``),
        ``records`` (``boardgym evaluate ... --record FILE``: one row, the match's fields and
        the counts read back from FILE).
    ``command``
        The command as printed, starting with ``boardgym``; ``{VAR}`` placeholders are filled
        from each row. The script adds ``--json`` where the kind reads JSON (the plain output
        prints the same numbers) and runs it from the repository's top folder.
    ``rows``
        Optional list of mappings: the placeholders' values of each command, and any static
        text a column shows (``title``, ``card``, ...). Default: one row without values.
    ``columns``
        List of ``[TITLE, KEY]`` pairs. KEY is a field of the kind (see ``FIELDS``:
        ``a``, ``b``, ``games``, ``a_wins``, ``b_wins``, ``ties``, ``wtl`` (A's
        won-tied-lost), ``win_rate`` and ``pair_score`` with their 95% intervals, ``pairs``,
        ``distinct_games`` for evaluate; ``player``, ``positions``, ``decisive``,
        ``contested``, ``kept`` and ``best`` (shares with 95% intervals), ``kept_count``
        (kept / decisive), ``ms_per_move`` for quality; ``rank``, ``player``, ``elo``,
        ``elo_ci`` for tournament; the evaluate fields and ``file_games``, ``file_a_wins``,
        ``file_b_wins``, ``file_ties`` for records; ``command`` for any kind), else a key of
        the row.
    ``cheap``
        ``true`` if every command of the spec runs in seconds: the test reruns it. Default
        ``false`` (``make docs-tables`` only).
    ``caption``
        Optional line above the table; ``{command}`` stands for the printed command (with
        ``{VAR}`` shown as ``VAR`` when the rows differ). Default: ``Each row:
        `{command}```, or ``From `{command}`:`` for a single command. ``""``: no line.

Timings (``ms_per_move``) are printed but never compared: ``--check`` masks them.

Usage::

    python docs/tables.py [FILE ...] [--only NAME ...] [--cheap] [--check]

FILEs default to ``README.md``, ``docs/**/*.md`` and ``checkpoints/*.md``. ``--check`` writes
nothing and exits 1, naming each table whose regenerated text differs from the file's.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
"""The repository's top folder: where commands run and default files are found."""
SPECS = ROOT / "docs" / "tables.yaml"
"""The specs of the README's and the docs site's tables."""
SPEC_FILE = "tables.yaml"
"""The name of a spec file beside a markdown file."""
OPEN = re.compile(r"^<!-- table ([A-Za-z0-9_-]+) -->$")
CLOSE = "<!-- /table -->"
FENCE = "```"
KINDS = ("evaluate", "quality", "tournament", "records")
TIMING = frozenset({"ms_per_move"})
"""Fields that measure time: printed, never compared."""
MASK = "~"
"""What a timing cell reads as in ``--check``."""

Record = dict[str, Any]


class TableError(Exception):
    """A spec, a marker or a command is wrong; the message says which and why."""


@dataclass(frozen=True)
class Spec:
    """One table: where its numbers come from and how they are shown."""

    name: str
    kind: str
    command: str
    columns: tuple[tuple[str, str], ...]
    rows: tuple[dict[str, Any], ...] = ({},)
    cheap: bool = False
    caption: str | None = None

    def commands(self) -> list[str]:
        """The printed command of each row, placeholders filled."""
        return [fill(self.command, row, self.name) for row in self.rows]


@dataclass
class Runner:
    """Runs commands once each (tables may share one) and keeps their records."""

    cache: dict[str, list[Record]] = field(default_factory=dict)

    def records(self, kind: str, command: str) -> list[Record]:
        """The rows ``command`` yields for ``kind``."""
        if command not in self.cache:
            self.cache[command] = READERS[kind](command)
        return self.cache[command]


def fill(template: str, row: dict[str, Any], name: str) -> str:
    """``template`` with its ``{VAR}`` placeholders filled from ``row``."""
    try:
        return template.format(**row)
    except (KeyError, IndexError, ValueError) as error:
        raise TableError(f"table {name}: no value for {error} in a row") from None


def run(command: str, *extra: str) -> str:
    """Run a printed ``boardgym ...`` command (plus ``extra`` arguments) and return stdout."""
    words = shlex.split(command)
    if not words or words[0] != "boardgym":
        raise TableError(f"not a boardgym command: {command}")
    print(f"running: {command}", file=sys.stderr, flush=True)
    done = subprocess.run([sys.executable, "-m", "boardgym", *words[1:], *extra], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise TableError(f"`{command}` failed: {done.stderr.strip()}")
    return done.stdout


def last_json(text: str, command: str) -> Record:
    """The JSON object on the last non-empty line of a command's output."""
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        value = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        raise TableError(f"`{command}` printed no JSON object") from None
    if not isinstance(value, dict):
        raise TableError(f"`{command}` printed no JSON object")
    return value


def read_evaluate(command: str) -> list[Record]:
    """One record: the match's JSON object."""
    return [last_json(run(command, "--json"), command)]


def read_quality(command: str) -> list[Record]:
    """One record per player, each with the set's fields (``game``, ``part``, ...)."""
    report = last_json(run(command, "--json"), command)
    common = {key: value for key, value in report.items() if key != "players"}
    return [{**common, **player} for player in report["players"]]


def read_tournament(command: str) -> list[Record]:
    """One record per rated player, best first, with its ``rank``."""
    words = shlex.split(command)
    if "--out" not in words[:-1]:
        raise TableError(f"`{command}`: a tournament table needs --out PREFIX")
    prefix = words[words.index("--out") + 1]
    run(command)
    report = json.loads((ROOT / f"{prefix}.json").read_text())
    return [{**player, "rank": rank} for rank, player in enumerate(report["ratings"], 1)]


def read_records(command: str) -> list[Record]:
    """One record: the match's JSON object and the counts of its ``--record FILE``, each
    game's winner read from the file (``file_games``, ``file_a_wins``, ``file_b_wins``,
    ``file_ties``)."""
    from boardgym.envs.games.records import read_records as read_file

    words = shlex.split(command)
    if "--record" not in words[:-1]:
        raise TableError(f"`{command}`: a records table needs --record FILE")
    path = ROOT / words[words.index("--record") + 1]
    path.parent.mkdir(parents=True, exist_ok=True)
    report = last_json(run(command, "--json", "--force"), command)
    games = read_file(path)
    a = sum(game.winner() == game.a for game in games)
    ties = sum(game.winner() is None for game in games)
    return [{**report, "file_games": len(games), "file_a_wins": a,
             "file_b_wins": len(games) - a - ties, "file_ties": ties}]


READERS: dict[str, Callable[[str], list[Record]]] = {
    "evaluate": read_evaluate, "quality": read_quality, "tournament": read_tournament,
    "records": read_records}


def code(value: Any) -> str:
    """``value`` as inline code."""
    return f"`{value}`"


def percent(rate: float | None, interval: Sequence[float] | None = None) -> str:
    """A share as ``12.3%``, with ``[lo, hi]`` in percent when an interval is given."""
    if rate is None:
        return "-"
    text = f"{100 * rate:.1f}%"
    if interval is not None:
        text += f" [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]"
    return text


FIELDS: dict[str, Callable[[Record], str]] = {
    "a": lambda r: code(r["a"]),
    "b": lambda r: code(r["b"]),
    "games": lambda r: str(r["games"]),
    "a_wins": lambda r: str(r["a_wins"]),
    "b_wins": lambda r: str(r["b_wins"]),
    "ties": lambda r: str(r["ties"]),
    "wtl": lambda r: f"{r['a_wins']}-{r['ties']}-{r['b_wins']}",
    "win_rate": lambda r: percent(r["a_win_rate"], r["a_win_ci95"]),
    "pairs": lambda r: str(r["pairs"]),
    "distinct_games": lambda r: str(r["distinct_games"]),
    "pair_score": lambda r: percent(r["a_pair_score"], r["a_pair_ci95"]),
    "player": lambda r: code(r["player"]),
    "positions": lambda r: str(r["positions"]),
    "decisive": lambda r: str(r["decisive"]),
    "contested": lambda r: str(r["contested"]),
    "kept": lambda r: percent(r["kept_rate"], r["kept_ci95"]),
    "kept_count": lambda r: f"{r['kept']} / {r['decisive']}",
    "best": lambda r: percent(r["best_rate"], r["best_ci95"]),
    "ms_per_move": lambda r: f"{r['ms_per_move']:.3g}",
    "rank": lambda r: str(r["rank"]),
    "file_games": lambda r: str(r["file_games"]),
    "file_a_wins": lambda r: str(r["file_a_wins"]),
    "file_b_wins": lambda r: str(r["file_b_wins"]),
    "file_ties": lambda r: str(r["file_ties"]),
    "elo": lambda r: f"{r['elo']:.1f}",
    "elo_ci": lambda r: ("undefined" if r["ci95"] is None
                         else f"[{r['ci95'][0]:.1f}, {r['ci95'][1]:.1f}]"),
}
"""How each field of a command's record is written in a table cell."""
NUMBERS = frozenset({"games", "a_wins", "b_wins", "ties", "pairs", "distinct_games",
                     "file_games", "file_a_wins", "file_b_wins", "file_ties",
                     "positions", "decisive", "contested", "ms_per_move", "rank", "elo"})
"""Fields shown right-aligned."""


def cell(key: str, record: Record, row: dict[str, Any], command: str) -> str:
    """The text of one table cell: a record's field, the command, or the row's own text."""
    if key == "command":
        return code(command)
    if key not in FIELDS:
        if key not in row:
            raise TableError(f"no field or row value {key!r} for `{command}`")
        return str(row[key])
    try:
        return FIELDS[key](record)
    except KeyError as error:
        raise TableError(f"no field {error} in the output of `{command}`") from None


def caption(spec: Spec) -> str:
    """The line above the table (empty for none)."""
    template = spec.caption
    if template == "":
        return ""
    shown = spec.commands()
    if len(set(shown)) == 1:
        command = shown[0]
        template = template or "From `{command}`:"
    else:
        names = {key: key.upper() for row in spec.rows for key in row}
        command = spec.command.format(**names)
        template = template or "Each row: `{command}`."
    return template.replace("{command}", command)


def render(spec: Spec, runner: Runner) -> list[str]:
    """The lines of a table's block (between, not including, its markers)."""
    titles = [title for title, _ in spec.columns]
    lines = ["| " + " | ".join(titles) + " |",
             "|" + "|".join("---:" if key in NUMBERS else "---" for _, key in spec.columns) + "|"]
    for row, command in zip(spec.rows, spec.commands(), strict=True):
        for record in runner.records(spec.kind, command):
            cells = [cell(key, record, row, command) for _, key in spec.columns]
            lines.append("| " + " | ".join(cells) + " |")
    head = caption(spec)
    return ([head, ""] if head else []) + lines


def mask_timings(lines: Sequence[str], spec: Spec) -> list[str]:
    """``lines`` of a block with the cells of timing columns replaced by ``MASK``."""
    timed = {index for index, (_, key) in enumerate(spec.columns) if key in TIMING}
    masked = []
    for line in lines:
        if timed and line.startswith("|") and not line.startswith("|-"):
            cells = [MASK if index in timed else text.strip()
                     for index, text in enumerate(line.strip().strip("|").split("|"))]
            line = "| " + " | ".join(cells) + " |"
        masked.append(line)
    return masked


def parse_spec(name: str, data: Any) -> Spec:
    """A ``Spec`` from its YAML mapping, checked."""
    if not isinstance(data, dict):
        raise TableError(f"table {name}: a spec is a mapping")
    unknown = set(data) - {"kind", "command", "columns", "rows", "cheap", "caption"}
    if unknown:
        raise TableError(f"table {name}: unknown keys {sorted(unknown)}")
    if data.get("kind") not in KINDS:
        raise TableError(f"table {name}: kind must be one of {', '.join(KINDS)}")
    columns = tuple((str(title), str(key)) for title, key in data.get("columns", []))
    if not columns or not isinstance(data.get("command"), str):
        raise TableError(f"table {name}: needs a command and columns")
    rows = tuple(dict(row) for row in data.get("rows") or [{}])
    return Spec(name, data["kind"], data["command"], columns, rows, bool(data.get("cheap")),
                data.get("caption"))


def load_specs(paths: Iterable[Path]) -> dict[str, Spec]:
    """Every spec of the given YAML files (those that exist), by name."""
    specs: dict[str, Spec] = {}
    for path in paths:
        if not path.is_file():
            continue
        try:
            content = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as error:
            raise TableError(f"{path}: not YAML: {error}") from None
        for name, data in content.items():
            if name in specs:
                raise TableError(f"table {name} is defined twice ({path})")
            specs[name] = parse_spec(name, data)
    return specs


@dataclass(frozen=True)
class Block:
    """One marked table in a file: its name and its lines' span (markers excluded)."""

    name: str
    start: int
    stop: int


def find_blocks(lines: Sequence[str], path: Path) -> list[Block]:
    """The marked tables of a file's lines, in order (markers inside fenced code blocks, as
    in a page that shows them, are text)."""
    blocks, opened, fenced = [], None, False
    for number, line in enumerate(lines):
        if line.lstrip().startswith(FENCE):
            fenced = not fenced
        if fenced:
            continue
        match = OPEN.match(line.strip())
        if match:
            if opened is not None:
                raise TableError(f"{path}:{number + 1}: table inside table {opened[0]}")
            opened = (match.group(1), number + 1)
        elif line.strip() == CLOSE:
            if opened is None:
                raise TableError(f"{path}:{number + 1}: {CLOSE} without a table")
            blocks.append(Block(opened[0], opened[1], number))
            opened = None
    if opened is not None:
        raise TableError(f"{path}: table {opened[0]} is never closed")
    return blocks


@dataclass
class Options:
    """What to regenerate and whether to write it."""

    only: frozenset[str] = frozenset()
    cheap: bool = False
    check: bool = False

    def wants(self, spec: Spec) -> bool:
        """Whether this run regenerates ``spec``."""
        return (not self.only or spec.name in self.only) and (spec.cheap or not self.cheap)


def update(path: Path, options: Options, runner: Runner) -> list[str]:
    """Regenerate the wanted tables of one file; return the names of those that changed."""
    lines = path.read_text().splitlines()
    specs = load_specs(dict.fromkeys([SPECS, path.resolve().parent / SPEC_FILE]))
    changed, retimed = [], False
    for block in reversed(find_blocks(lines, path)):
        if block.name not in specs:
            raise TableError(f"{path}: no spec for table {block.name}")
        spec = specs[block.name]
        if not options.wants(spec):
            continue
        new, old = render(spec, runner), lines[block.start:block.stop]
        if mask_timings(new, spec) != mask_timings(old, spec):
            changed.append(block.name)
        retimed = retimed or new != old
        lines[block.start:block.stop] = new
    if retimed and not options.check:
        write_text(path, "\n".join(lines) + "\n")
    return changed[::-1]


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file, then a rename)."""
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False,
                                     suffix=".tmp") as handle:
        handle.write(text)
    Path(handle.name).replace(path)


def default_files() -> list[Path]:
    """The documents with tables: the README, the docs site's pages, the model cards."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
            *sorted((ROOT / "checkpoints").glob("*.md"))]


def main(argv: Sequence[str] | None = None) -> int:
    """Regenerate (or ``--check``) the tables of the given files; 0 if nothing differs."""
    parser = argparse.ArgumentParser(description="Regenerate the documents' tables.")
    parser.add_argument("files", nargs="*", type=Path, help="markdown files (default: all)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="only this table (repeatable)")
    parser.add_argument("--cheap", action="store_true", help="only the cheap tables")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a table differs (timings masked)")
    args = parser.parse_args(argv)
    options = Options(frozenset(args.only), args.cheap, args.check)
    runner, differing = Runner(), []
    try:
        for path in args.files or default_files():
            differing += [f"{path}: {name}" for name in update(Path(path), options, runner)]
    except TableError as error:
        print(f"tables: {error}", file=sys.stderr)
        return 2
    verb = "differs from its command" if args.check else "rewritten"
    for line in differing:
        print(f"{line} {verb}")
    return 1 if args.check and differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
