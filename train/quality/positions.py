"""Labelled positions: every legal move's exact value, for judging play (``boardgym positions``).

Each line of a set is one JSON object ``{"position": TEXT, "moves": {"ACTION": VALUE}}``:
``TEXT`` is the game's position text (``rules.to_text``, read back with ``rules.parse``) and
``VALUE`` the exact game value, for the side to move, of playing ``ACTION`` there, as the
game's exact solver gives it:

- tic-tac-toe: ``boardgym.agents.tictactoe.move_values`` (win ``1 + empty cells`` at the
  end, so sooner is bigger; loss the negative; draw 0); every reachable position that is not
  over, enumerated, not sampled;
- four-in-a-row: Pascal Pons' score (``boardgym.agents.solvers.four_in_a_row``);
- Reversi: the final disc difference (``boardgym.agents.solvers.reversi``).

In every game a value's sign is its outcome class: > 0 a win, 0 a draw, < 0 a loss.

Sampled sets (four-in-a-row, Reversi): sample ``i`` of seed ``S`` draws everything from
``np.random.default_rng([S, i])``: a target number of stones on the board (uniform in the
window: the game's, or ``--stones``), then a number of uniformly random plies, then the
game's engine plays until the target is reached (the engine's tie-breaks drawn from the same
generator). A sample that ends the game early, repeats an earlier position, or that the
solver cannot label within ``--max-nodes`` positions (four-in-a-row) is skipped. The
transposition table is emptied before each four-in-a-row position, so whether a position
fits the budget depends on the position alone: a set's first ``n`` lines are the set made
with ``--count n``, and ``--workers`` and ``--backend`` (``train.common.backends``) change nothing.

With ``--player SPEC`` the command writes a move set instead, in any game: positions of
SPEC's own games, each with the move SPEC chooses there (``train.quality.moves``).

``--out FILE`` is written atomically once every line is made. A file already there is
overwritten only when it is a set (its first line a labelled position or a move label:
``is_position_file``), the command's own earlier output; anything else needs ``--force``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from boardgym import agents
from boardgym.envs.games import game as game_record
from boardgym.envs.games import reversi as reversi_rules
from boardgym.envs.games.core import Game, position_key
from boardgym.train.common.backends import (
    Backend,
    add_backend_options,
    backend_from_args,
    connect,
    flat_map,
    task_ranges,
)
from boardgym.train.common.commands import (
    CommandParser,
    add_force_option,
    check_at_least,
    check_output,
    first_line,
    game_names,
    int_at_least,
    positions_count,
    progress_bar,
    seed_value,
)
from boardgym.train.common.runs import write_atomic
from boardgym.train.quality.moves import first_distinct, move_lines

Values = dict[int, int]
"""Action -> the exact value of playing it, for the side to move."""
DEFAULT_MAX_NODES = 2_000_000
"""Default solver budget per position (four-in-a-row): positions needing more are skipped."""
SAMPLES_PER_TASK = 8
"""Samples handed to a worker process (or a Ray task) at a time, at most."""


class UnsolvedError(RuntimeError):
    """The solver could not label a position within its budget."""


@dataclass(frozen=True)
class Labeller:
    """How one game's positions are drawn and labelled.

    Attributes:
        values: ``(state, max_nodes) -> Values`` of a position that is not over; raises
            ``UnsolvedError`` past the budget (games whose solver has none ignore it).
        stones: the window of stones on the board ``(fewest, most)`` of sampled positions.
        engine: the player spec of the non-random plies of a sample.
        enumerate_all: the set is every reachable position that is not over (no sampling).
    """

    values: Callable[[Any, int], Values]
    stones: tuple[int, int] = (0, 0)
    engine: str = "random"
    enumerate_all: bool = False


def _tictactoe_values(state: Any, max_nodes: int) -> Values:
    """Tic-tac-toe's exact move values (the full minimax table needs no budget)."""
    from boardgym.agents.tictactoe import move_values

    return move_values(int(state.me), int(state.opp))


def _four_in_a_row_values(state: Any, max_nodes: int) -> Values:
    """Four-in-a-row's exact column scores, from an empty transposition table."""
    from boardgym.agents.solvers import four_in_a_row as solver

    solver.board(state.geom).reset()
    try:
        scores = solver.column_scores(state, max_nodes)
    except solver.BudgetExceededError as error:
        raise UnsolvedError(str(error)) from None
    return {column: score for column, score in enumerate(scores) if score is not None}


def _reversi_values(state: Any, max_nodes: int) -> Values:
    """Reversi's exact final disc difference after each move (endgames: no budget)."""
    from boardgym.agents.solvers import reversi as solver

    return solver.move_scores(state)


FOUR_IN_A_ROW_STONES = (10, 34)
"""Discs of the four-in-a-row samples. Positions with 10 or 11 discs often need more than
the default budget and are then skipped (see ``train/quality/data/README.md``)."""
REVERSI_EMPTIES = (14, 20)
"""Empty squares of the Reversi endgames (with 20 empties a position takes a few seconds to
label: every legal move is solved)."""

LABELLERS: dict[str, Labeller] = {
    "tictactoe": Labeller(_tictactoe_values, enumerate_all=True),
    "four_in_a_row": Labeller(_four_in_a_row_values, FOUR_IN_A_ROW_STONES, "lookahead:2"),
    "reversi": Labeller(_reversi_values,
                        (reversi_rules.CELLS - REVERSI_EMPTIES[1],
                         reversi_rules.CELLS - REVERSI_EMPTIES[0]),
                        "alphabeta:2"),
}
"""Game name -> its ``Labeller``: the games that have an exact solver."""


def labeller(record: Game) -> Labeller:
    """The ``Labeller`` of a game.

    Raises:
        ValueError: the game has no exact solver.
    """
    if record.name not in LABELLERS:
        raise ValueError(f"no exact solver for {record.name}; choose one of "
                         f"{', '.join(LABELLERS)}")
    return LABELLERS[record.name]


def stones(state: Any) -> int:
    """The stones on the board of a single state."""
    return (int(state.me) | int(state.opp)).bit_count()


def legal_actions(record: Game, state: Any) -> list[int]:
    """The legal actions of a single state, ascending."""
    return [int(action) for action in np.flatnonzero(record.rules.legal_mask(state))]


def line(record: Game, state: Any, values: Values) -> str:
    """One JSON line of a set: the position text and its moves' values by action."""
    moves = {str(action): int(values[action]) for action in sorted(values)}
    return json.dumps({"position": position_key(record.rules, state), "moves": moves})


# -- drawing positions ---------------------------------------------------------------------


def reachable(record: Game) -> list[Any]:
    """Every position reachable from the start that is not over, fewest stones first, then
    by position text."""
    rules = record.rules
    start = rules.initial_state()
    seen = {position_key(rules, start): start}
    frontier = [start]
    while frontier:
        following = []
        for state in frontier:
            for action in legal_actions(record, state):
                child = rules.apply(state, action)
                text = position_key(rules, child)
                if text not in seen and not rules.is_terminal(child):
                    seen[text] = child
                    following.append(child)
        frontier = following
    return [seen[text] for text in sorted(seen, key=lambda text: (stones(seen[text]), text))]


@dataclass(frozen=True)
class _Sampler:
    """What every sample of a set shares (picklable for worker processes)."""

    game: str
    seed: int
    max_nodes: int
    stones: tuple[int, int]

    def draw(self, index: int, engine: Any) -> Any | None:
        """The position of sample ``index`` (a function of ``(seed, index)``), or None when
        the game ended before reaching its target."""
        record = game_record(self.game)
        fewest, most = self.stones
        rng = np.random.default_rng([self.seed, index])
        state = record.rules.initial_state()
        target = int(rng.integers(fewest, most + 1))
        random_plies = int(rng.integers(0, target - stones(state) + 1))
        plies = 0
        while stones(state) < target:
            if record.rules.is_terminal(state):
                return None
            if plies < random_plies:
                legal = legal_actions(record, state)
                action = legal[int(rng.integers(len(legal)))]
            else:
                action = int(engine.act(state, rng))
            state = record.rules.apply(state, action)
            plies += 1
        return None if record.rules.is_terminal(state) else state

    def label(self, index: int, engine: Any) -> tuple[str, Values] | None:
        """Sample ``index``'s position text and move values, or None when it is skipped
        (game over early, or unsolved within the budget)."""
        record = game_record(self.game)
        state = self.draw(index, engine)
        if state is None:
            return None
        try:
            values = labeller(record).values(state, self.max_nodes)
        except UnsolvedError:
            return None
        return line(record, state, values), values

    def engine(self) -> Any:
        """The player of the non-random plies (``Labeller.engine``)."""
        record = game_record(self.game)
        return agents.make(record, labeller(record).engine)

    def label_all(self, engine: Any, indices: range) -> list[tuple[str, Values] | None]:
        """Samples ``indices`` labelled in order (one task of ``backends.flat_map``)."""
        return [self.label(index, engine) for index in indices]


def sampled_lines(game: str, count: int, seed: int, max_nodes: int = DEFAULT_MAX_NODES,
                  backend: Backend | None = None,
                  advance: Callable[[int], object] | None = None,
                  window: tuple[int, int] | None = None) -> list[str]:
    """The first ``count`` distinct labelled samples of a game, as JSON lines.

    Args:
        game: a game with a sampling ``Labeller``.
        count: positions wanted, > 0.
        seed: the set's seed, >= 0.
        max_nodes: the solver's budget per position.
        backend: where the samples are labelled (default: in this process); same lines on
            any.
        advance: called with 1 each time a line is added.
        window: the stones on the board of the samples ``(fewest, most)``, already
            checked (``stones_window``); None: the game's (``Labeller.stones``).
    """
    where = backend or Backend()
    record = game_record(game)
    sampler = _Sampler(record.name, seed, max_nodes, window or labeller(record).stones)
    size = max(1, min(SAMPLES_PER_TASK, count // (where.workers or 1)))
    labels = flat_map(sampler.label_all, task_ranges(size, where), sampler.engine, where)
    with closing(labels):
        return [text for text, _ in first_distinct(labels, count, lambda item: item[0],
                                                   advance)]


def position_lines(game: str, count: int | None = None, seed: int = 0,
                   max_nodes: int = DEFAULT_MAX_NODES, backend: Backend | None = None,
                   advance: Callable[[int], object] | None = None,
                   window: Sequence[int] | None = None) -> list[str]:
    """A game's labelled set as JSON lines (see the module docstring).

    Args:
        game: a game name or alias with an exact solver.
        count: positions wanted (> 0); None: every reachable position for an enumerated game
            (tic-tac-toe), which takes its first ``count`` positions otherwise.
        seed: the seed of a sampled set (>= 0; an enumerated set has none).
        max_nodes: the solver's budget per position (four-in-a-row).
        backend: where a sampled set is labelled (``train.common.backends.Backend``; default: in
            this process); same lines on any.
        advance: called with the number of lines just added.
        window: the fewest and most stones on the board of a sampled set's positions
            (default: the game's window, ``Labeller.stones``).

    Raises:
        ValueError: no exact solver for the game, a sampled game without ``count``, a
            count, seed or budget below its minimum, a window on an enumerated game or
            outside the board, or a Ray backend that cannot start.
    """
    record = game_record(game)
    chosen = labeller(record)
    where = backend or Backend()
    check_at_least(count=(1 if count is None else count, 1), seed=(seed, 0),
                   max_nodes=(max_nodes, 1))
    if chosen.enumerate_all and window is not None:
        raise ValueError(f"{record.name}'s set is every reachable position, not a sample: "
                         "drop --stones")
    if chosen.enumerate_all:
        states = reachable(record)[:count]
        if advance is not None:
            advance(len(states))
        return [line(record, state, chosen.values(state, max_nodes)) for state in states]
    if count is None:
        raise ValueError(f"{record.name} positions are sampled: give --count N")
    checked = None if window is None else stones_window(record, window)
    connect(where)
    return sampled_lines(record.name, count, seed, max_nodes, where, advance, checked)


def stones_window(record: Game, window: Sequence[int]) -> tuple[int, int]:
    """``window`` as ``(fewest, most)`` stones of sampled positions, checked: more stones than
    the start position has, fewer than the board's cells.

    Raises:
        ValueError: a window that is not two such numbers, fewest first (names the range).
    """
    state = record.rules.initial_state()
    cells = int(np.prod(record.rules.observation(state, 0).shape[1:]))
    low, high = stones(state) + 1, cells - 1
    if len(window) != 2 or not low <= window[0] <= window[1] <= high:
        raise ValueError(f"--stones takes FEWEST MOST with {low} <= FEWEST <= MOST <= {high} "
                         f"on the {record.name} board")
    return int(window[0]), int(window[1])


# -- command line ----------------------------------------------------------------------------


def is_position_file(path: Path) -> bool:
    """True when the first line of ``path`` is a labelled position (``"position"`` and
    ``"moves"``) or a move label (``"position"`` and ``"move"``): a set this command
    wrote."""
    try:
        item = json.loads(first_line(path))
    except ValueError:
        return False
    return isinstance(item, dict) and "position" in item and ("moves" in item or "move" in item)


def build_parser() -> argparse.ArgumentParser:
    """The ``boardgym positions`` argument parser."""
    parser = CommandParser(
        prog="boardgym positions",
        description="Write a labelled position set: one JSON line per position with the exact "
                    "value of every legal move (for boardgym quality), or with --player the "
                    "move a player chooses (a move set, for pretraining).")
    parser.add_argument("game", help=f"the game: {game_names()} (those with an exact solver: "
                                     f"{', '.join(LABELLERS)})")
    parser.add_argument("--count", type=positions_count,
                        help="positions to write (required for sampled games; tic-tac-toe: "
                             "all reachable positions by default)")
    parser.add_argument("--seed", type=seed_value, default=0,
                        help="seed of a sampled set (default 0)")
    parser.add_argument("--out", required=True,
                        help="the JSONL file to write (a file there is overwritten only when "
                             "it is a position or move set, else --force)")
    add_force_option(parser, "the --out file")
    parser.add_argument("--max-nodes", type=int_at_least(1),
                        help="solver budget per position; positions needing more are skipped "
                             f"(four-in-a-row; default {DEFAULT_MAX_NODES}; not with --player)")
    parser.add_argument("--player", metavar="SPEC",
                        help="write a move set instead: positions of SPEC's own games (random "
                             "openings, some random moves), each with the move SPEC chooses "
                             "there and the game's result (any game; train.quality.moves)")
    parser.add_argument("--stones", type=int, nargs=2, metavar=("FEWEST", "MOST"),
                        help="the window of stones on the board of sampled positions (default: "
                             "the game's, e.g. Reversi's endgames of 14-20 empty squares, "
                             "44 50; not with --player)")
    add_backend_options(parser, "the samples")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym positions GAME [--count N] [--seed S] --out FILE [--max-nodes M]
    [--player SPEC] [--stones FEWEST MOST] [--workers K] [--backend local|ray]
    [--address ADDR] [--force]``.

    Returns:
        0 on success (a usage error exits with 2 and one line on stderr).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    bar = progress_bar(args.count, "position")
    try:
        out = check_output(args.out, "--out", "a position set", is_position_file, args.force)
        backend = backend_from_args(args)
        advance = None if bar is None else bar.update
        if args.player is None:
            lines = position_lines(args.game, args.count, args.seed,
                                   args.max_nodes or DEFAULT_MAX_NODES, backend, advance,
                                   args.stones)
        elif args.count is None:
            raise ValueError("a move set needs --count N")
        elif args.stones is not None:
            raise ValueError("--stones is the window of a labelled set's samples; a move set "
                             "(--player) takes positions from whole games: drop --stones")
        elif args.max_nodes is not None:
            raise ValueError("--max-nodes is the exact solver's budget; a move set (--player) "
                             "has none: drop --max-nodes")
        else:
            lines = move_lines(args.game, args.player, args.count, args.seed, backend, advance)
    except ValueError as error:  # raised before any work: bad game or arguments
        parser.error(str(error))
    finally:
        if bar is not None:
            bar.close()
    record = game_record(args.game)
    write_atomic(out, "".join(text + "\n" for text in lines))
    kind = "positions" if args.player is None else f"moves of {args.player}"
    print(f"wrote {len(lines)} {record.name} {kind} to {out}")
    return 0


if __name__ == "__main__":
    import sys

    from boardgym.train.cli import main as run_command

    raise SystemExit(run_command(["positions", *sys.argv[1:]]))
