"""Random-play throughput in plies per second: single env, vector env, and peers.

``boardgym bench`` (or ``python -m boardgym.bench.throughput``). A ply is one move on the board: the
agent's and the opponent's both count. Observations and masks are produced every step, and
the agent's random legal action is drawn from them (in the vector env, batched). Each number
is the median of ``--repeats`` runs of ``--seconds`` each, in wall-clock time and in this
process's CPU time (steadier on a shared, loaded machine). Pgx (``pgx.make`` + ``jax.vmap``,
auto-reset, CPU) and OpenSpiel (C++ core through pyspiel, with observation tensors) are
measured in the same run when installed (``pip install -e ".[bench]"``).

The vector env is measured against each player that plays batched under its bare name
(``bench_opponents``: ``az`` needs a checkpoint, so it is not one). ``--markdown FILE`` also
writes the table, atomically; a file already there is overwritten only when it is such a
table (its first line is ``MARKDOWN_HEADER``...), otherwise ``--force`` is needed.
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

import gymnasium as gym
import numpy as np

import boardgym  # noqa: F401  (registers the games, their players and env ids)
from boardgym.envs.games import GAMES, players
from boardgym.envs.games.bitboard import bits_from_mask, choose, random_draws
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
SIZES = (1, 64, 1024, 4096)
PEER_BATCH = 1024
Rate = tuple[float, float]
"""Plies per second of wall-clock time and per second of this process's CPU time."""
BUILT_IN = ("reversi", "four_in_a_row", "tictactoe")
"""The games measured by default (the peers have them too)."""
Run = Callable[[float], Rate]
"""Plays for about the given seconds; returns its ``Rate``."""
Row = tuple[str, str, str, Rate]
"""``(game, what, opponent, rate)`` of one measurement."""
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
        env = gym.make(GAMES[game].env_id, opponent="random").unwrapped
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


def vector_env(game: str, n: int, opponent: str) -> Run:
    """The vector env of ``n`` games against a batched ``opponent``."""
    def run(seconds: float) -> Rate:
        env = gym.make_vec(GAMES[game].env_id, num_envs=n,
                           vectorization_mode="vector_entry_point", opponent=opponent)
        rng = np.random.default_rng(0)
        _, info = env.reset(seed=0)
        plies, clock = 0, Clock()
        while clock.elapsed() < seconds:
            legal = bits_from_mask(info["action_mask"])
            actions = choose(legal, random_draws(rng, n))
            _, _, _, _, info = env.step(actions)
            plies += int(np.count_nonzero(legal))  # the agent moved where it had a move
            plies += int(np.count_nonzero(info["_opponent_action"]))
        return clock.rate(plies)
    return run


def pgx_env(game: str) -> Run | None:
    """Pgx: ``jax.vmap`` over ``PEER_BATCH`` games, random legal moves, auto-reset; None if
    pgx is missing."""
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
        keys = jax.random.split(reset_key, PEER_BATCH)
        state = jax.vmap(auto_reset(env.step, env.init))(state, actions, keys)
        return state, key

    def run(seconds: float) -> Rate:
        key = jax.random.PRNGKey(0)
        state = jax.jit(jax.vmap(env.init))(jax.random.split(key, PEER_BATCH))
        state, key = step(state, key)
        jax.block_until_ready(state.observation)
        steps, clock = 0, Clock()
        while clock.elapsed() < seconds:
            state, key = step(state, key)
            steps += 1
        jax.block_until_ready(state.observation)
        return clock.rate(steps * PEER_BATCH)
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


def median_rate(run: Run, seconds: float, repeats: int) -> Rate:
    """Medians of the wall-clock and the CPU rates of ``repeats`` runs."""
    rates = [run(seconds) for _ in range(repeats)]
    return (statistics.median(wall for wall, _ in rates),
            statistics.median(cpu for _, cpu in rates))


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


def measure(games: list[str], sizes: list[int], seconds: float, repeats: int,
            peers: bool) -> list[Row]:
    """Rows ``(game, what, opponent, (wall, CPU) plies/s)``, printed as they come."""
    rows: list[Row] = []

    def add(game: str, what: str, opponent: str, run: Run | None) -> None:
        if run is None:
            print(f"{game:14} {what:22} not installed (pip install -e '.[bench]')")
            return
        wall, cpu = median_rate(run, seconds, repeats)
        rows.append((game, what, opponent, (wall, cpu)))
        print(f"{game:14} {what:22} {opponent:14} {wall:14,.0f} plies/s  (CPU time: "
              f"{cpu:,.0f})", flush=True)

    for game in games:
        add(game, "single env", "random", single_env(game))
        for opponent in bench_opponents(GAMES[game]):
            for n in sizes if opponent == "random" else sizes[-1:]:
                add(game, f"vector env N={n}", opponent, vector_env(game, n, opponent))
        if peers:
            add(game, f"Pgx vmap B={PEER_BATCH}", "random", pgx_env(game))
            add(game, "OpenSpiel (1 game)", "random", spiel_env(game))
    return rows


def markdown(rows: list[Row], sizes: list[int]) -> str:
    """The results table, with each vector-env row's ratio to Pgx on the same game."""
    pgx = {game: rate[0] for game, what, _, rate in rows if what.startswith("Pgx")}
    lines = [f"{MARKDOWN_HEADER}{machine()}.", "",
             "| game | env | opponent | plies/s | plies per CPU s | vs Pgx |",
             "|---|---|---|---:|---:|---:|"]
    for game, what, opponent, (wall, cpu) in rows:
        ratio = f"{wall / pgx[game]:.1f}x" if game in pgx else ""
        lines.append(f"| {game} | {what} | {opponent} | {wall:,.0f} | {cpu:,.0f} | {ratio} |")
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
    if args.markdown:
        write_atomic(args.markdown, markdown(rows, args.sizes))
    return 0


if __name__ == "__main__":
    from boardgym.train.cli import main as run_command

    raise SystemExit(run_command(["bench", *sys.argv[1:]]))
