"""Benchmark of the exact solvers (``boardgym.agents.solvers``): seconds per position.

Four-in-a-row: ``column_scores`` (the exact score of every column) of 7x6 positions reached
by ``--c4-plies`` uniformly random plies (a random count in that range), neither over nor
won at once by the side to move. Reversi: ``solve`` (the final disc difference) of positions
with each ``--empties`` count, reached by ``--random-plies`` random plies and then
``alphabeta:2`` self-play. Every position starts from an empty transposition table; the
compile time is left out (one warm-up position first).

    python -m boardgym.bench.solvers --c4 100 --reversi 20 --empties 16 20 --seed 0

Prints a markdown table of median / mean / p90 / max seconds.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import boardgym  # noqa: F401  (registers the players)
from boardgym.envs.games import four_in_a_row, players, reversi

PERCENTILE = 90
REVERSI_ENGINE = "alphabeta:2"
WARM_UP_C4 = "2252576253462244111563365343671351441"
WARM_UP_EMPTIES = 10


def _random_move(rules: Any, state: Any, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(rules.legal_mask(state))))


def c4_positions(count: int, plies: tuple[int, int], rng: np.random.Generator
                 ) -> Iterator[four_in_a_row.State]:
    """``count`` 7x6 positions after a random number of random plies in ``plies``
    (inclusive), none over or won at once by the side to move."""
    from boardgym.agents.solvers.four_in_a_row import winning_cells

    made = 0
    while made < count:
        state = four_in_a_row.initial_state()
        for _ in range(int(rng.integers(plies[0], plies[1] + 1))):
            state = four_in_a_row.play(state, _random_move(four_in_a_row, state, rng))
            if four_in_a_row.is_terminal(state):
                break
        if four_in_a_row.is_terminal(state) or _wins_at_once(state, winning_cells):
            continue
        made += 1
        yield state


def _wins_at_once(state: four_in_a_row.State, winning_cells: Callable[..., Any]) -> bool:
    from boardgym.agents.solvers.four_in_a_row import board

    geom = state.geom
    filled = np.uint64(state.me | state.opp)
    wins = winning_cells(np.uint64(state.me), filled, np.uint64(geom.board),
                         board(geom).directions, geom.connect, board(geom).scratch)
    return bool(wins & np.uint64(four_in_a_row.landing_cells(int(filled), geom)))


def reversi_positions(count: int, empties: int, random_plies: int, rng: np.random.Generator
                      ) -> Iterator[reversi.State]:
    """``count`` Reversi positions with ``empties`` empty squares and a move to play:
    ``random_plies`` random plies, then ``REVERSI_ENGINE`` for both sides."""
    engine = players.make(reversi.GAME, REVERSI_ENGINE)
    made = 0
    while made < count:
        state, ply = reversi.initial_state(), 0
        while _empties(state) > empties and not reversi.is_terminal(state):
            random = ply < random_plies
            state = reversi.play(state, _random_move(reversi, state, rng) if random
                                 else engine.act(state, rng))
            ply += 1
        if _empties(state) == empties and not reversi.is_terminal(state):
            made += 1
            yield state


def _empties(state: reversi.State) -> int:
    return reversi.CELLS - (state.me | state.opp).bit_count()


def timed(run: Callable[[Any], Any], reset: Callable[[], None], states: Iterator[Any]
          ) -> list[float]:
    """Seconds of ``run`` on each state, the table emptied before each."""
    seconds = []
    for state in states:
        reset()
        start = time.perf_counter()
        run(state)
        seconds.append(time.perf_counter() - start)
    return seconds


def row(name: str, seconds: list[float]) -> str:
    """A markdown table row: name, count, median, mean, p90, max seconds."""
    values = np.asarray(seconds)
    stats = (np.median(values), values.mean(), np.percentile(values, PERCENTILE), values.max())
    return f"| {name} | {len(values)} | " + " | ".join(f"{s:.3f}" for s in stats) + " |"


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--c4", type=int, default=100, help="four-in-a-row positions")
    parser.add_argument("--c4-plies", type=int, nargs=2, default=(12, 20),
                        help="range of random plies (inclusive)")
    parser.add_argument("--reversi", type=int, default=20, help="Reversi positions per count")
    parser.add_argument("--empties", type=int, nargs="*", default=[16, 20])
    parser.add_argument("--random-plies", type=int, default=10,
                        help=f"random Reversi plies before {REVERSI_ENGINE} self-play")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.c4 < 0 or args.reversi < 0 or not 0 <= args.c4_plies[0] <= args.c4_plies[1]:
        parser.error("counts must be >= 0 and --c4-plies LOW HIGH with 0 <= LOW <= HIGH")
    if any(not 1 <= e <= reversi.CELLS - 4 for e in args.empties):
        parser.error(f"--empties must lie in 1..{reversi.CELLS - 4}")
    from boardgym.agents.solvers import four_in_a_row as c4_solver
    from boardgym.agents.solvers import reversi as reversi_solver

    rng = np.random.default_rng(args.seed)
    c4_solver.column_scores(four_in_a_row.parse(WARM_UP_C4))
    reversi_solver.solve(next(reversi_positions(1, WARM_UP_EMPTIES, args.random_plies, rng)))
    c4_reset = c4_solver.board(four_in_a_row.initial_state().geom).reset
    print("| solver | positions | median s | mean s | p90 s | max s |")
    print("|---|---|---|---|---|---|")
    if args.c4:
        low, high = args.c4_plies
        seconds = timed(c4_solver.column_scores, c4_reset,
                        c4_positions(args.c4, (low, high), rng))
        print(row(f"four-in-a-row column_scores, {low}-{high} discs", seconds), flush=True)
    for empties in args.empties if args.reversi else []:
        seconds = timed(reversi_solver.solve, reversi_solver.TABLE.reset,
                        reversi_positions(args.reversi, empties, args.random_plies, rng))
        print(row(f"Reversi solve, {empties} empties", seconds), flush=True)


if __name__ == "__main__":
    main()
