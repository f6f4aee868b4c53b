"""Fair-match openings: the positions games start from with ``--openings`` (``evaluate``,
``tournament``), and the balanced opening suites (``python -m boardgym.train.match.openings``).

Two deterministic players meet in only two distinct games from the start position. With
openings, every pair of games starts from its own opening, played twice with the seats
swapped, so a match samples many positions and no player is favoured by the opening itself.

An opening is a tuple of actions from the game's start position, applied with the rules
(``record.rules.apply``); it is given either as a number of plies or as a suite file:

- ``N`` plies: opening ``k`` of a match with seed ``S`` draws every random number from
  ``np.random.default_rng([S, k, OPENING_STREAM])``: ``N`` uniformly random legal plies.
  A draw is kept when it is *fair*: the game is not over and the game's exact solver, where
  one exists, does not prove it decided; otherwise the same generator draws again (at most
  ``MAX_ATTEMPTS`` times). The rule per game (``FAIRNESS``):

  - tic-tac-toe: the exact minimax value (``agents.tictactoe.value``) is a draw;
  - four-in-a-row: ``agents.solvers.four_in_a_row.solve`` with a budget of
    ``SOLVER_BUDGET`` positions (from an empty transposition table, so the verdict depends on
    the position alone) does not prove a win for either side. Positions it cannot solve in
    the budget count as undecided: early 7x6 positions are mostly wins in theory, but
    not ones a player can be expected to find;
  - other games (Reversi: no exact solver at 50+ empty squares): the game is not over.

- a suite file: opening ``k`` is line ``k`` (wrapping around when the match needs more
  openings than the file has). One opening per line: its actions by name (the game's
  ``action_name``, e.g. ``f5``), separated by commas; a tab and anything after it (the score)
  and lines starting with ``#`` are ignored. ``shipped:NAME`` names a suite shipped in the
  package (``SUITES``), from any folder: ``shipped:reversi_8ply``, 200 balanced 8-ply Reversi
  openings.

The suite command keeps random openings that the project's own search scores near even
(in the spirit of the XOT Reversi openings)::

    python -m boardgym.train.match.openings reversi --plies 8 --count 200 --seed 0 \\
        --out train/match/data/reversi_8ply.txt

Candidate ``i`` draws its plies from ``np.random.default_rng([S, i, OPENING_STREAM])``; it is
kept when it is fair (above), not a repeat of a kept position, and ``alphabeta:D``'s search
value (``agents.search.search`` with the game's own heuristics, for the side to move) is within
``--max-value`` of 0.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from boardgym import agents
from boardgym.agents import shipped
from boardgym.envs.games import game as game_record
from boardgym.envs.games.core import Game
from boardgym.train.common import commands
from boardgym.train.common.commands import game_parser, int_at_least
from boardgym.train.common.runs import write_atomic

Opening = tuple[int, ...]
"""The actions of an opening, from the game's start position."""
OPENING_STREAM = 1
"""Third seed word of the openings' generators, apart from the games' ``[seed, index]``."""
MAX_ATTEMPTS = 1000
"""Draws of one random opening before giving up (too many plies for the game)."""
SOLVER_BUDGET = 100_000
"""Positions the four-in-a-row solver may visit to prove an opening decided."""
SUITES = shipped.Kind("opening suite", "boardgym.train.match", "data", (".txt",))
"""The shipped opening suites (``shipped:NAME``), in this package's ``data/``."""
MOVE_SEPARATOR = ","
FIELD_SEPARATOR = "\t"
COMMENT = "#"
DEFAULT_PLIES = 8
DEFAULT_COUNT = 200
DEFAULT_DEPTH = 4
DEFAULT_MAX_VALUE = 2.0
"""Largest search value (for the side to move) of a balanced opening: in Reversi's
evaluation units, half a move of mobility."""


# -- fairness ---------------------------------------------------------------------------------


def _tictactoe_undecided(state: Any) -> bool:
    """Tic-tac-toe: the exact minimax value is a draw."""
    from boardgym.agents.tictactoe import value

    return value(int(state.me), int(state.opp)) == 0


def _four_in_a_row_undecided(state: Any) -> bool:
    """Four-in-a-row: the solver proves no win within ``SOLVER_BUDGET`` positions."""
    from boardgym.agents.solvers import four_in_a_row as solver

    solver.board(state.geom).reset()
    try:
        return solver.solve(state, SOLVER_BUDGET) == 0
    except solver.BudgetExceededError:
        return True


FAIRNESS: dict[str, Callable[[Any], bool]] = {
    "tictactoe": _tictactoe_undecided,
    "four_in_a_row": _four_in_a_row_undecided,
}
"""Game name -> whether a position (not over) is undecided, for games with an exact solver.
Other games' openings need only be unfinished."""


def is_fair(record: Game, state: Any) -> bool:
    """Whether ``state`` may start a fair game: not over, and not proven decided (see the
    module docstring for each game's rule)."""
    if record.rules.is_terminal(state):
        return False
    undecided = FAIRNESS.get(record.name)
    return undecided is None or undecided(state)


def replay(record: Game, opening: Sequence[int], config: dict[str, Any] | None = None) -> Any:
    """The position reached by playing ``opening`` from the start.

    Raises:
        ValueError: an illegal action, or a move after the game ended.
    """
    rules = record.rules
    state = rules.initial_state(**(config or {}))
    for ply, action in enumerate(opening, start=1):
        if rules.is_terminal(state) or not rules.legal_mask(state)[action]:
            raise ValueError(f"opening move {ply} ({record.action_name(action)}) is not "
                             "legal there; fix the opening")
        state = rules.apply(state, action)
    return state


def _random_plies(record: Game, plies: int, rng: np.random.Generator,
                  config: dict[str, Any]) -> tuple[Opening, Any]:
    """``plies`` uniformly random legal actions from the start (fewer if the game ends)."""
    rules = record.rules
    state, actions = rules.initial_state(**config), list[int]()
    while len(actions) < plies and not rules.is_terminal(state):
        action = int(rng.choice(np.flatnonzero(rules.legal_mask(state))))
        actions.append(action)
        state = rules.apply(state, action)
    return tuple(actions), state


def unfinished_opening(record: Game, low: int, high: int, rng: np.random.Generator,
                       config: dict[str, Any] | None = None) -> tuple[Opening, Any]:
    """A random training opening and the position it reaches, never a finished one.

    The number of plies is drawn uniformly from ``[low, high]``; each ply is uniformly random
    among the legal moves that do not end the game. The opening stops early where every legal
    move would end it. Every random number comes from ``rng``.

    Args:
        record: the game.
        low, high: the fewest and most plies, ``0 <= low <= high``.
        rng: the generator (a seeded one reproduces the opening).
        config: board options.

    Returns:
        The actions from the start position and the (unfinished) position they reach.
    """
    rules = record.rules
    state, actions = rules.initial_state(**(config or {})), list[int]()
    plies = int(rng.integers(low, high + 1))
    while len(actions) < plies:
        moves = [int(action) for action in np.flatnonzero(rules.legal_mask(state))
                 if not rules.is_terminal(rules.apply(state, int(action)))]
        if not moves:
            break
        action = moves[int(rng.integers(len(moves)))]
        actions.append(action)
        state = rules.apply(state, action)
    return tuple(actions), state


def opening_rng(seed: int, index: int) -> np.random.Generator:
    """The generator of opening ``index`` of seed ``seed``."""
    return np.random.default_rng([seed, index, OPENING_STREAM])


@lru_cache(maxsize=4096)
def _cached_opening(game: str, plies: int, seed: int, index: int,
                    options: tuple[tuple[str, Any], ...]) -> Opening:
    record, config, rng = game_record(game), dict(options), opening_rng(seed, index)
    for _ in range(MAX_ATTEMPTS):
        actions, state = _random_plies(record, plies, rng, config)
        if len(actions) == plies and is_fair(record, state):
            return actions
    raise ValueError(f"no fair {record.title} opening of {plies} plies in {MAX_ATTEMPTS} "
                     "tries: use fewer --openings plies")


def random_opening(game: str, plies: int, seed: int, index: int,
                   config: dict[str, Any] | None = None) -> Opening:
    """Opening ``index`` of seed ``seed``: ``plies`` random legal plies reaching a fair
    position (the module docstring gives the rule). Cached per process.

    Raises:
        ValueError: no fair position after ``MAX_ATTEMPTS`` draws (too many plies).
    """
    return _cached_opening(game_record(game).name, plies, seed, index,
                           tuple(sorted((config or {}).items())))


# -- suites -----------------------------------------------------------------------------------


def _action_names(record: Game, config: dict[str, Any]) -> dict[str, int]:
    """Action name -> action, over every action of the game."""
    actions = len(record.rules.legal_mask(record.rules.initial_state(**config)))
    return {record.action_name(action): action for action in range(actions)}


def format_opening(record: Game, opening: Opening) -> str:
    """The suite-file text of an opening: its action names joined by commas."""
    return MOVE_SEPARATOR.join(record.action_name(action) for action in opening)


def parse_suite(record: Game, text: str, config: dict[str, Any] | None = None,
                source: str = "the suite") -> tuple[Opening, ...]:
    """The openings of a suite file's text (format in the module docstring), each checked
    to be legal and to leave the game unfinished.

    Raises:
        ValueError: an unknown action name, an illegal or finishing opening, or no openings.
    """
    names = _action_names(record, config or {})
    openings = []
    for number, line in enumerate(text.splitlines(), start=1):
        moves = line.split(FIELD_SEPARATOR)[0].strip()
        if not moves or moves.startswith(COMMENT):
            continue
        words = [word.strip() for word in moves.split(MOVE_SEPARATOR)]
        unknown = [word for word in words if word not in names]
        if unknown:
            raise ValueError(f"{source}, line {number}: {unknown[0]!r} is not a "
                             f"{record.title} move")
        opening = tuple(names[word] for word in words)
        try:
            state = replay(record, opening, config)
        except ValueError as error:
            raise ValueError(f"{source}, line {number}: {error}") from None
        if record.rules.is_terminal(state):
            raise ValueError(f"{source}, line {number}: the opening ends the game")
        openings.append(opening)
    if not openings:
        raise ValueError(f"{source} has no openings")
    return tuple(openings)


def load_suite(record: Game, path: str | Path, config: dict[str, Any] | None = None
               ) -> tuple[Opening, ...]:
    """The openings of the suite file at ``path``, or of the shipped suite ``shipped:NAME``
    (see ``parse_suite``).

    Raises:
        ValueError: the file cannot be read (the message says where it was looked for and
            lists the shipped suites), or ``parse_suite`` refuses it.
    """
    try:
        text = shipped.resolve(path, SUITES).read_text(encoding="utf-8")
    except OSError as error:
        why = error if shipped.is_shipped(path) else \
            f"{error.strerror}: {shipped.missing(path, SUITES)}"
        raise ValueError(f"cannot read the opening suite {path} ({why}); give a number of "
                         "plies or an existing file") from None
    return parse_suite(record, text, config, str(path))


@dataclass(frozen=True)
class Openings:
    """Where a match's openings come from: random plies or a suite; picklable.

    Attributes:
        game: canonical game name.
        plies: plies of random openings (0 with a suite).
        seed: the match seed.
        config: board options.
        suite: the suite's openings (empty for random openings).
        label: how the report names them (``"8-ply random"`` or the suite's path).
    """

    game: str
    plies: int
    seed: int
    config: tuple[tuple[str, Any], ...] = ()
    suite: tuple[Opening, ...] = ()
    label: str = ""

    def opening(self, index: int) -> Opening:
        """Opening ``index`` (a suite wraps around)."""
        if self.suite:
            return self.suite[index % len(self.suite)]
        return random_opening(self.game, self.plies, self.seed, index, dict(self.config))

    @property
    def description(self) -> str:
        """``"8-ply random openings"`` or ``"the openings of PATH"``."""
        return (f"the openings of {self.label}" if self.suite
                else f"{self.plies}-ply random openings")

    def json_value(self) -> int | str:
        """The ``"openings"`` value of JSON reports: the plies or the suite's path."""
        return self.label if self.suite else self.plies


def openings_from(spec: str, game: str, seed: int,
                  config: dict[str, Any] | None = None) -> Openings:
    """The ``Openings`` of an ``--openings`` value: a number of plies (>= 1) or a suite path.

    Raises:
        ValueError: plies below 1, or a suite that ``load_suite`` refuses.
    """
    record = game_record(game)
    options = tuple(sorted((config or {}).items()))
    if spec.strip().lstrip("-").isdigit():
        plies = int(spec)
        if plies < 1:
            raise ValueError(f"--openings must be a number of plies >= 1 or a suite file, "
                             f"got {spec}")
        return Openings(record.name, plies, seed, options)
    return Openings(record.name, 0, seed, options, load_suite(record, spec, config), spec)


# -- the suite command ------------------------------------------------------------------------


@dataclass(frozen=True)
class Balanced:
    """One opening of a balanced suite.

    Attributes:
        opening: its actions.
        value: the search value for the side to move.
    """

    opening: Opening
    value: float


def balanced_openings(game: str, plies: int, count: int, seed: int, depth: int = DEFAULT_DEPTH,
                      max_value: float = DEFAULT_MAX_VALUE,
                      advance: Callable[[int], object] = lambda n: None) -> list[Balanced]:
    """``count`` distinct fair openings of ``plies`` random plies whose ``alphabeta:depth``
    search value is within ``max_value`` of 0 (candidates in seed order, see the module
    docstring).

    Args:
        game: a game name or alias (its ``alphabeta`` player supplies the heuristics).
        plies: plies per opening, >= 1.
        count: openings wanted, >= 1.
        seed: the seed, >= 0.
        depth: search depth in plies.
        max_value: the largest accepted absolute search value.
        advance: called with 1 for each opening kept (a progress bar's update).

    Raises:
        ValueError: bad arguments, or no balanced opening in ``MAX_ATTEMPTS * count``
            candidates.
    """
    from boardgym.agents.search import search

    record = game_record(game)
    searcher = agents.make(record, f"alphabeta:{depth}")
    heuristics = getattr(searcher, "heuristics", None)
    if heuristics is None:
        raise ValueError(f"{record.title}'s alphabeta player has no heuristics to score with")
    kept: list[Balanced] = []
    seen: set[Any] = set()
    for index in range(MAX_ATTEMPTS * count):
        actions, state = _random_plies(record, plies, opening_rng(seed, index), {})
        key = heuristics.key(state)
        if len(actions) < plies or key in seen or not is_fair(record, state):
            continue
        seen.add(key)
        value = search(state, heuristics, depth, np.random.default_rng([seed, index])).value
        if abs(value) <= max_value:
            kept.append(Balanced(actions, value))
            advance(1)
            if len(kept) == count:
                return kept
    raise ValueError(f"only {len(kept)} balanced openings in {MAX_ATTEMPTS * count} "
                     "candidates: raise --max-value or lower --count")


def suite_text(game: str, balanced: Sequence[Balanced], command: str, depth: int,
               max_value: float) -> str:
    """A suite file: a header saying how it was made, then one opening and its value a line."""
    record = game_record(game)
    header = [
        f"{COMMENT} {len(balanced)} balanced {record.title} openings (boardgym opening suite)",
        f"{COMMENT} made with: {command}",
        f"{COMMENT} Each: {len(balanced[0].opening)} random legal plies from the start "
        "(generator",
        f"{COMMENT}   np.random.default_rng([seed, candidate, {OPENING_STREAM}])), kept when the "
        "game is not over,",
        f"{COMMENT}   the position is new, and alphabeta:{depth}'s search value (the project's "
        "own",
        f"{COMMENT}   heuristics, for the side to move) is within {max_value:g} of 0.",
        f"{COMMENT} Format: moves by name, comma-separated; a tab, then that search value.",
    ]
    lines = [f"{format_opening(record, item.opening)}{FIELD_SEPARATOR}{item.value:+g}"
             for item in balanced]
    return "\n".join(header + lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    """The suite command's argument parser."""
    parser = game_parser(
        prog="python -m boardgym.train.match.openings",
        description="Write a balanced opening suite: random openings that the game's "
                    "alpha-beta search scores near even.")
    parser.add_argument("--plies", type=int_at_least(1), default=DEFAULT_PLIES,
                        help=f"plies per opening (default {DEFAULT_PLIES})")
    parser.add_argument("--count", type=int_at_least(1), default=DEFAULT_COUNT,
                        help=f"openings to write (default {DEFAULT_COUNT})")
    parser.add_argument("--seed", type=commands.seed_value, default=0, help="seed (default 0)")
    parser.add_argument("--depth", type=int_at_least(1), default=DEFAULT_DEPTH,
                        help=f"alpha-beta depth of the scoring search (default {DEFAULT_DEPTH})")
    parser.add_argument("--max-value", type=float, default=DEFAULT_MAX_VALUE,
                        help="largest absolute search value kept (default "
                             f"{DEFAULT_MAX_VALUE:g})")
    parser.add_argument("--out", type=Path, required=True,
                        help="the suite file to write (a file there is overwritten only when "
                             "it is a suite this command wrote, else --force)")
    commands.add_force_option(parser, "the --out file")
    return parser


def is_suite(path: Path) -> bool:
    """True when ``path`` starts with the header ``suite_text`` writes."""
    return commands.first_line(path).endswith("(boardgym opening suite)")


def main(argv: Sequence[str] | None = None) -> int:
    """Write a balanced suite; returns 0 (2 on a usage error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    bar = commands.progress_bar(args.count, enabled=True)
    try:
        commands.check_output(args.out, "--out", "an opening suite", is_suite, args.force,
                              folder=False)
        balanced = balanced_openings(args.game, args.plies, args.count, args.seed, args.depth,
                                     args.max_value,
                                     (lambda n: None) if bar is None else bar.update)
        command = " ".join(["python -m boardgym.train.match.openings",
                            *(sys.argv[1:] if argv is None else argv)])
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(args.out, suite_text(args.game, balanced, command, args.depth,
                                          args.max_value))
    except ValueError as error:
        parser.error(str(error))
    except OSError as error:
        parser.error(f"cannot write {args.out} ({error.strerror}); choose another --out")
    finally:
        if bar is not None:
            bar.close()
    print(f"wrote {len(balanced)} openings to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(commands.interruptible(build_parser().prog, main, sys.argv[1:]))
