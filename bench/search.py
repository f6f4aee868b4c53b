"""The search players' speed: milliseconds a move and positions searched a second.

``python -m boardgym.bench.search`` (``boardgym bench`` prints it after the env throughput).
Each spec plays one move from each of ``POSITIONS`` middle-game positions, the same set every
run: position ``k`` is reached from the start by ``MIDDLE_PLIES[game]`` uniformly random
plies drawn with seed ``k`` (redrawn with the next seed when a game ends first). A move is
timed in CPU time after one warm-up move (compilation left out); the table gives the median
and the 90th percentile over the positions of the median of ``--repeats`` timings, and the
positions searched a second (all nodes over all time).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

import boardgym  # noqa: F401  (registers the games and their players)
from boardgym import agents
from boardgym.agents.search import SearchResult
from boardgym.agents.search import search as python_search
from boardgym.envs.games import GAMES
from boardgym.train.common.commands import CommandParser, int_at_least

POSITIONS = 20
MIDDLE_PLIES = {"reversi": 24, "four_in_a_row": 10, "tictactoe": 2}
"""Random plies from the start to a middle-game position, per game."""
SPECS = {"reversi": ("alphabeta:2", "alphabeta:4"), "four_in_a_row": ("alphabeta:6",),
         "tictactoe": ("alphabeta:9",)}
"""The specs measured by default: the depths of the README's tables."""
PERCENTILE = 90
MARKDOWN_HEADER = "| game | player | ms a move (median) |"


class SearchRow(NamedTuple):
    """One player's speed on the middle-game positions."""

    game: str
    spec: str
    median_ms: float
    p90_ms: float
    nodes_per_second: float | None
    """None for a player that does not report its positions searched."""


def middle_games(game: str, count: int = POSITIONS) -> Iterator[Any]:
    """``count`` unfinished positions of ``game``, ``MIDDLE_PLIES[game]`` random plies in."""
    rules = GAMES[game].rules
    seed = 0
    while count:
        rng, state = np.random.default_rng(seed), rules.initial_state()
        for _ in range(MIDDLE_PLIES[game]):
            if rules.is_terminal(state):
                break
            state = rules.apply(state, int(rng.choice(np.flatnonzero(rules.legal_mask(state)))))
        seed += 1
        if not rules.is_terminal(state):
            count -= 1
            yield state


def searched(player: Any, state: Any, rng: np.random.Generator) -> SearchResult | None:
    """The ``SearchResult`` of ``player``'s move, where it tells one: a compiled search's
    ``search(state, rng)``, or the Python search of an ``AlphaBetaAgent``; None otherwise."""
    if hasattr(player, "search"):
        return player.search(state, rng)  # type: ignore[no-any-return]
    if hasattr(player, "heuristics") and hasattr(player, "depth"):
        return python_search(state, player.heuristics, player.depth, rng)
    return None


def timed(player: Any, state: Any, repeats: int) -> tuple[float, int | None]:
    """The median CPU seconds of ``repeats`` moves from ``state`` (each seeded 0) and the
    positions one of them searched (None if not told)."""
    times, nodes = [], None
    for _ in range(repeats):
        rng = np.random.default_rng(0)
        start = time.process_time()
        result = searched(player, state, rng)
        if result is None:
            player.act(state, rng)
        times.append(time.process_time() - start)
        nodes = None if result is None else result.nodes
    return statistics.median(times), nodes


def measure_search(game: str, spec: str, repeats: int) -> SearchRow:
    """``spec``'s speed over ``middle_games(game)``, printed."""
    player = agents.make(game, spec)
    positions = list(middle_games(game))
    timed(player, positions[0], 1)  # compile / warm up
    runs = [timed(player, state, repeats) for state in positions]
    seconds: list[float] = [s for s, _ in runs]
    told: list[int] = [n for _, n in runs if n is not None]
    total = float(sum(seconds))
    rate = sum(told) / total if len(told) == len(runs) and total > 0 else None
    row = SearchRow(game, spec, 1e3 * statistics.median(seconds),
                    1e3 * float(np.percentile(seconds, PERCENTILE)), rate)
    nodes = "" if rate is None else f", {rate:,.0f} positions/s"
    print(f"{game:14} {spec:14} {row.median_ms:9.3f} ms a move (p{PERCENTILE} "
          f"{row.p90_ms:.3f}){nodes}", flush=True)
    return row


def search_rows(games: list[str], repeats: int,
                specs: list[str] | None = None) -> list[SearchRow]:
    """Every spec of ``specs`` (default: the game's ``SPECS``) for each of ``games``."""
    return [measure_search(game, spec, repeats) for game in games
            for spec in (specs or SPECS.get(game, ()))]


def search_markdown(rows: list[SearchRow]) -> str:
    """The search table."""
    lines = [f"{MARKDOWN_HEADER} ms (p{PERCENTILE}) | positions/s |", "|---|---|---:|---:|---:|"]
    for row in rows:
        rate = "" if row.nodes_per_second is None else f"{row.nodes_per_second:,.0f}"
        lines.append(f"| {row.game} | {row.spec} | {row.median_ms:.3f} | {row.p90_ms:.3f} | "
                     f"{rate} |")
    return "\n".join(lines) + "\n"


MAX_REPEATS = 100


def main(argv: list[str] | None = None) -> int:
    """Print the search table of the games asked for."""
    parser = CommandParser(prog="python -m boardgym.bench.search",
                           description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", choices=list(SPECS), default=list(SPECS))
    parser.add_argument("--repeats", type=int_at_least(1, MAX_REPEATS, "MAX_REPEATS"),
                        default=3, help="timings per move; the median (default 3)")
    parser.add_argument("--specs", nargs="+", metavar="SPEC",
                        help="the players to time (default: the README's search players), "
                             "e.g. ntuple:4@shipped:reversi_ntuple")
    args = parser.parse_args(argv)
    try:
        rows = search_rows(args.games, args.repeats, args.specs)
    except (ValueError, FileNotFoundError) as error:
        parser.error(str(error))
    print(search_markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
