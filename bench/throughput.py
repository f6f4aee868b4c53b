"""Random-play throughput in plies per second: single env, vector env, and peers side by side.

``boardgym bench`` (or ``python -m boardgym.bench.throughput``). A ply is one move on the board: the
agent's and the opponent's both count. Observations and masks are produced every step, and
the agent's random legal action is drawn from them (in the vector env, batched, by one
compiled call: ``random_actions``). Each rate is the median of ``--repeats`` runs of
``--seconds`` each, in wall-clock time and in this process's CPU time (steadier on a shared,
loaded machine). Peers are measured side by side, run for run: each run of ours is followed
by one of the peer's, and the ratio is the median of the runs' ratios. Pgx (``pgx.make`` +
``jax.vmap`` over as many games as the vector env, auto-reset, CPU) faces the vector env at
each size against ``random``; OpenSpiel (its C++ core through pyspiel, with observation
tensors) faces the single env (``gym.make``, wrappers included). Both are measured when
installed (``pip install -e ".[bench]"``).

The vector env is measured against each player that plays batched under its bare name
(``bench_opponents``: ``az`` needs a checkpoint, so it is not one), at the largest size for
all but ``random``. ``bench.search`` adds the alpha-beta players' speed. ``--markdown FILE``
also writes the tables, atomically; a file already there is overwritten only when it is such
a table (its first line is ``MARKDOWN_HEADER``...), otherwise ``--force`` is needed.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import gymnasium as gym
import numpy as np

import boardgym  # noqa: F401  (registers the games, their players and env ids)
from boardgym.bench.search import search_markdown, search_rows
from boardgym.envs.games import GAMES, players
from boardgym.envs.games.compiled import HALF, entry, stream_draw
from boardgym.envs.games.core import Game
from boardgym.train.common.commands import (
    CommandParser,
    add_force_option,
    check_output,
    first_line,
    int_at_least,
)
from boardgym.train.common.runs import write_atomic

PEER_NAMES = {"reversi": "othello", "four_in_a_row": "connect_four", "tictactoe": "tic_tac_toe"}
"""The games' names in Pgx and in OpenSpiel (the same in both)."""
SIZES = (1, 64, 4096, 65_536)
Rate = tuple[float, float]
"""Plies per second of wall-clock time and per second of this process's CPU time."""
BUILT_IN = ("reversi", "four_in_a_row", "tictactoe")
"""The games measured by default (the peers have them too)."""
Run = Callable[[float], Rate]
"""Plays for about the given seconds; returns its ``Rate``."""


class Row(NamedTuple):
    """One measurement: ours, and the peer run beside it (if any)."""

    game: str
    what: str
    opponent: str
    rate: Rate
    peer: str = ""
    peer_rate: Rate | None = None
    ratio: float | None = None
    """The median of the runs' ratios, ours over the peer's (wall clock)."""

MAX_SECONDS = 60.0
"""The longest run (``--seconds``): a rate steadies within seconds."""
MAX_REPEATS = 100
"""The most runs per number (``--repeats``)."""
MAX_SIZE = 65_536
"""The most games of a measured vector env (``--sizes``)."""
MARKDOWN_HEADER = "Machine: "
"""How the table of ``--markdown`` starts (``markdown``): what recognises the file."""


class Clock:
    """Wall-clock and process CPU time since construction."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def elapsed(self) -> float:
        """Wall-clock seconds so far."""
        return time.perf_counter() - self.wall

    def rate(self, plies: int) -> Rate:
        """``plies`` per wall-clock second and per CPU second."""
        return plies / self.elapsed(), plies / (time.process_time() - self.cpu)


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random index where ``mask`` is True (one uniform draw)."""
    legal = mask.nonzero()[0]  # np.flatnonzero(mask) is the same, ~10x slower on 9 cells
    return int(legal[int(rng.random() * len(legal))])


def single_env(game: str) -> Run:
    """The single env against the random opponent, random legal agent moves."""
    def run(seconds: float) -> Rate:
        env = gym.make(GAMES[game].env_id, opponent="random")
        rng = np.random.default_rng(0)
        _, info = env.reset(seed=0)
        plies, clock = 0, Clock()
        while clock.elapsed() < seconds:
            plies += info["opponent_action"] is not None
            _, _, terminated, _, info = env.step(random_legal(info["action_mask"], rng))
            plies += 1
            if terminated:
                plies += info["opponent_action"] is not None
                _, info = env.reset()
        return clock.rate(plies)
    return run


@entry("i8(b1[:, ::1], u8, i8[::1])")
def _choices(masks: np.ndarray, draw_key: np.uint64, actions: np.ndarray) -> int:
    """Into ``actions[i]``: one uniformly random True index of each row of ``masks``, drawn
    from the splitmix stream keyed ``draw_key`` (0 for a row without one); returns how many
    rows had one."""
    moved = 0
    width = masks.shape[1]
    for i in range(masks.shape[0]):
        actions[i] = 0
        count = np.int64(0)
        for j in range(width):
            count += np.int64(masks[i, j])
        if count:
            moved += 1
            rank = np.int64(((stream_draw(draw_key, np.uint64(i)) >> HALF)
                             * np.uint64(count)) >> HALF)
            for j in range(width):
                if masks[i, j]:
                    if rank == 0:
                        actions[i] = j
                        break
                    rank -= 1
    return moved


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """A uniformly random legal action per row of the ``(N, A)`` bool ``masks`` (0 where
    none) and the number of rows with one: the agent of the vector env runs, in one
    compiled call whatever N."""
    actions = np.empty(masks.shape[0], dtype=np.int64)
    moved = _choices(np.ascontiguousarray(masks), np.uint64(rng.integers(2 ** 63)), actions)
    return actions, moved


def vector_env(game: str, n: int, opponent: str) -> Run:
    """The vector env of ``n`` games against a batched ``opponent``."""
    def run(seconds: float) -> Rate:
        env = gym.make_vec(GAMES[game].env_id, num_envs=n,
                           vectorization_mode="vector_entry_point", opponent=opponent)
        rng = np.random.default_rng(0)
        _, info = env.reset(seed=0)
        plies, clock = 0, Clock()
        while clock.elapsed() < seconds:
            actions, moved = random_actions(info["action_mask"], rng)
            _, _, _, _, info = env.step(actions)
            plies += moved + int(np.count_nonzero(info["_opponent_action"]))
        return clock.rate(plies)
    return run


def pgx_env(game: str, batch: int) -> Run | None:
    """Pgx: ``jax.vmap`` over ``batch`` games, random legal moves, auto-reset; None if pgx
    is missing."""
    try:
        import jax
        import pgx
        from pgx.experimental import auto_reset
    except ImportError:
        return None
    env = pgx.make(PEER_NAMES[game])  # type: ignore[arg-type]

    @jax.jit
    def step(state, key):  # type: ignore[no-untyped-def]
        key, act_key, reset_key = jax.random.split(key, 3)
        logits = jax.numpy.log(state.legal_action_mask.astype(jax.numpy.float32))
        actions = jax.random.categorical(act_key, logits, axis=1)
        keys = jax.random.split(reset_key, batch)
        state = jax.vmap(auto_reset(env.step, env.init))(state, actions, keys)
        return state, key

    key = jax.random.PRNGKey(0)
    start = jax.jit(jax.vmap(env.init))(jax.random.split(key, batch))

    def run(seconds: float) -> Rate:
        state, key_now = step(start, key)
        jax.block_until_ready(state.observation)
        steps, clock = 0, Clock()
        while clock.elapsed() < seconds:
            state, key_now = step(state, key_now)
            steps += 1
        jax.block_until_ready(state.observation)
        return clock.rate(steps * batch)
    return run


def spiel_env(game: str) -> Run | None:
    """OpenSpiel: one game, random legal moves, observation tensor each ply; None if missing."""
    try:
        import pyspiel
    except ImportError:
        return None
    spiel_game = pyspiel.load_game(PEER_NAMES[game])

    def run(seconds: float) -> Rate:
        rng = np.random.default_rng(0)
        state = spiel_game.new_initial_state()
        plies, clock = 0, Clock()
        while clock.elapsed() < seconds:
            if state.is_terminal():
                state = spiel_game.new_initial_state()
            state.observation_tensor()
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.random() * len(legal))])
            plies += 1
        return clock.rate(plies)
    return run


def median_rate(rates: list[Rate]) -> Rate:
    """Medians of the wall-clock and the CPU rates of several runs."""
    return (statistics.median(wall for wall, _ in rates),
            statistics.median(cpu for _, cpu in rates))


def side_by_side(ours: Run, peer: Run | None, seconds: float, repeats: int
                 ) -> tuple[Rate, Rate | None, float | None]:
    """``repeats`` runs of ``ours``, each followed by one of ``peer``: the median rates and
    the median of the runs' wall-clock ratios (ours / peer)."""
    mine, theirs = [], []
    for _ in range(repeats):
        mine.append(ours(seconds))
        if peer is not None:
            theirs.append(peer(seconds))
    if peer is None:
        return median_rate(mine), None, None
    ratio = statistics.median(a[0] / b[0] for a, b in zip(mine, theirs, strict=True))
    return median_rate(mine), median_rate(theirs), ratio


def machine() -> str:
    """CPU model, cores and load: the context every number here needs."""
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                 if line.startswith("model name")]
        cpu = names[0] if names else cpu
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy "
            f"{np.__version__}; load average {load:.1f} when measured")


def bench_opponents(record: Game) -> list[str]:
    """The players of ``record``'s game that play batched as a bare name (``random``,
    ``lookahead``...), the vector env's opponents here."""
    return [name for name in players.batched_names(record)
            if players.make_batched(record, name) is not None]


def _printed(row: Row) -> Row:
    wall, cpu = row.rate
    beside = ""
    if row.peer_rate is not None:
        beside = f"  {row.peer}: {row.peer_rate[0]:,.0f} plies/s, ratio {row.ratio:.2f}x"
    print(f"{row.game:14} {row.what:22} {row.opponent:14} {wall:14,.0f} plies/s  (CPU time: "
          f"{cpu:,.0f}){beside}", flush=True)
    return row


def game_rows(game: str, sizes: list[int], seconds: float, repeats: int,
              peers: bool) -> list[Row]:
    """The rows of one game, printed as they come."""
    spiel = spiel_env(game) if peers else None
    rate, peer_rate, ratio = side_by_side(single_env(game), spiel, seconds, repeats)
    rows = [_printed(Row(game, "single env", "random", rate, "OpenSpiel", peer_rate, ratio))]
    for opponent in bench_opponents(GAMES[game]):
        for n in sizes if opponent == "random" else sizes[-1:]:
            pgx = pgx_env(game, n) if peers and opponent == "random" else None
            rate, peer_rate, ratio = side_by_side(vector_env(game, n, opponent), pgx,
                                                  seconds, repeats)
            rows.append(_printed(Row(game, f"vector env N={n}", opponent, rate,
                                     f"Pgx B={n}", peer_rate, ratio)))
    return rows


def measure(games: list[str], sizes: list[int], seconds: float, repeats: int,
            peers: bool) -> list[Row]:
    """Every game's rows (``game_rows``)."""
    if peers and (spiel_env(games[0]) is None or pgx_env(games[0], 1) is None):
        print("peers not installed (pip install -e '.[bench]'): measuring boardgym alone")
    return [row for game in games for row in game_rows(game, sizes, seconds, repeats, peers)]


def markdown(rows: list[Row]) -> str:
    """The results table: each row's rates and, where a peer ran beside it, the peer's rate
    and the median ratio of the paired runs."""
    lines = [f"{MARKDOWN_HEADER}{machine()}.", "",
             "| game | env | opponent | plies/s | plies per CPU s | peer | peer plies/s | ratio |",
             "|---|---|---|---:|---:|---|---:|---:|"]
    for row in rows:
        wall, cpu = row.rate
        peer = f"| {row.peer} | {row.peer_rate[0]:,.0f} | {row.ratio:.2f}x |" \
            if row.peer_rate is not None and row.ratio is not None else "| | | |"
        lines.append(f"| {row.game} | {row.what} | {row.opponent} | {wall:,.0f} | {cpu:,.0f} "
                     + peer)
    return "\n".join(lines) + "\n"


def seconds(text: str) -> float:
    """The argparse ``type`` of ``--seconds``: a number in ``(0, MAX_SECONDS]``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") \
            from None
    if not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
        raise argparse.ArgumentTypeError(f"must be > 0 and at most {MAX_SECONDS:g} "
                                         f"(MAX_SECONDS), got {text}")
    return value


def is_table(path: Path) -> bool:
    """True when ``path`` is a table ``--markdown`` wrote (``MARKDOWN_HEADER`` first)."""
    return first_line(path).startswith(MARKDOWN_HEADER)


def build_parser() -> CommandParser:
    """The ``boardgym bench`` argument parser."""
    parser = CommandParser(prog="boardgym bench", description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", choices=list(GAMES), default=list(BUILT_IN))
    parser.add_argument("--sizes", nargs="+", type=int_at_least(1, MAX_SIZE, "MAX_SIZE"),
                        default=list(SIZES),
                        help=f"vector env sizes (default {' '.join(map(str, SIZES))}; at most "
                             f"{MAX_SIZE})")
    parser.add_argument("--seconds", type=seconds, default=1.0,
                        help=f"per run (default 1, at most {MAX_SECONDS:g})")
    parser.add_argument("--repeats", type=int_at_least(1, MAX_REPEATS, "MAX_REPEATS"),
                        default=3, help=f"runs per number; the median (default 3, at most "
                                        f"{MAX_REPEATS})")
    parser.add_argument("--no-peers", action="store_true", help="skip Pgx and OpenSpiel")
    parser.add_argument("--no-search", action="store_true",
                        help="skip the search players' speed (bench.search)")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    add_force_option(parser, "the --markdown file")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns the exit code (2 with one line on stderr for bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.markdown:
            check_output(args.markdown, "--markdown", "a benchmark table", is_table, args.force)
    except ValueError as error:
        parser.error(str(error))
    print(machine())
    rows = measure(args.games, args.sizes, args.seconds, args.repeats, not args.no_peers)
    table = markdown(rows)
    if not args.no_search:
        table += "\n" + search_markdown(search_rows(args.games, args.repeats))
    if args.markdown:
        write_atomic(args.markdown, table)
    return 0


if __name__ == "__main__":
    from boardgym.train.cli import main as run_command

    raise SystemExit(run_command(["bench", *sys.argv[1:]]))
