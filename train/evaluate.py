"""Simulated matches: agent A against agent B over many games (``boardgym evaluate``).

Game ``i`` of a match with seed ``S`` draws every random number (who moves first, the agents'
tie-breaks) from its own generator ``np.random.default_rng([S, i])``, so a game's result
depends only on ``(S, i)``: spreading games over worker processes changes nothing.

Use ``play_match`` from other scripts::

    from boardgym.train.evaluate import play_match
    result = play_match("reversi", "corner_best", "random", games=1000, seed=0)
    print(result.a_win_rate, result.a_win_ci95)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from boardgym import agents
from boardgym.agents import Agent
from boardgym.envs.games import game as game_record
from boardgym.train.cli import (
    CommandParser,
    add_board_options,
    board_options,
    game_names,
    int_at_least,
)

Z95 = 1.959963984540054
"""Standard normal quantile of 0.975: the z of a two-sided 95% interval."""
A_WON, B_WON, TIE = 1, -1, 0
CHUNK_GAMES = 25
"""Games per task handed to a worker process."""
PERCENT = 100
FIRST_PLAYER = 0


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion.

    Args:
        successes: number of successes, ``0 <= successes <= trials``.
        trials: number of trials, > 0.
        z: the normal quantile of the confidence level (95% by default).

    Returns:
        ``(low, high)``, both within ``[0, 1]``.
    """
    p = successes / trials
    z2n = z * z / trials
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / trials + z2n / trials / 4) / (1 + z2n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class MatchResult:
    """The counts of a match of A against B.

    Attributes:
        game: canonical game name.
        a: A's spec (or its class name when an ``Agent`` was given).
        b: B's spec (likewise).
        games: games played.
        a_wins: games A won.
        b_wins: games B won.
        ties: drawn games.
        seconds: wall-clock time of the match.
        outcomes: A's result in each game, in game order: +1 won, -1 lost, 0 tie.
    """

    game: str
    a: str
    b: str
    games: int
    a_wins: int
    b_wins: int
    ties: int
    seconds: float
    outcomes: tuple[int, ...] = field(default=(), repr=False)

    @property
    def a_win_rate(self) -> float:
        """The fraction of games A won (ties count as not won)."""
        return self.a_wins / self.games

    @property
    def a_win_ci95(self) -> tuple[float, float]:
        """The 95% Wilson interval of A's win rate."""
        return wilson_interval(self.a_wins, self.games)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``boardgym evaluate --json`` (keys as in DESIGN.md)."""
        low, high = self.a_win_ci95
        return {"game": self.game, "a": self.a, "b": self.b, "games": self.games,
                "a_wins": self.a_wins, "b_wins": self.b_wins, "ties": self.ties,
                "a_win_rate": self.a_win_rate, "a_win_ci95": [low, high],
                "seconds": round(self.seconds, 3)}

    def report(self) -> str:
        """The classic three lines (A wins, B wins, ties) and A's 95% Wilson interval."""
        label_a, label_b = (self.a, self.b) if self.a != self.b else (f"{self.a} (A)",
                                                                      f"{self.b} (B)")
        low, high = self.a_win_ci95
        rows = [(f"{label_a} wins", self.a_wins), (f"{label_b} wins", self.b_wins),
                ("Ties", self.ties)]
        lines = [f"{label}: {count} ({_percent(count / self.games)})" for label, count in rows]
        lines.append(f"{label_a} win rate {_percent(self.a_win_rate)}, 95% Wilson interval "
                     f"[{_percent(low)}, {_percent(high)}]  ({self.games} games, "
                     f"{self.seconds:.1f} s)")
        return "\n".join(lines)


def _percent(fraction: float) -> str:
    return f"{fraction * PERCENT:.1f}%"


def _label(spec: str | Agent) -> str:
    return spec if isinstance(spec, str) else type(spec).__name__


def game_rng(seed: int, index: int) -> np.random.Generator:
    """The generator of game ``index`` of a match seeded with ``seed`` (both >= 0)."""
    return np.random.default_rng([seed, index])


def play_game(game: str, a: Agent, b: Agent, rng: np.random.Generator, a_first: bool,
              config: dict[str, Any] | None = None) -> int:
    """Play one game of A against B on the rules state.

    Args:
        game: a game name or alias.
        a: agent A.
        b: agent B.
        rng: the only source of randomness (both agents' tie-breaks).
        a_first: whether A makes the first move.
        config: options of the game's ``initial_state`` (four-in-a-row board size).

    Returns:
        ``A_WON`` (+1), ``B_WON`` (-1) or ``TIE`` (0).
    """
    game_rules = game_record(game).rules
    state = game_rules.initial_state(**(config or {}))
    players = (a, b) if a_first else (b, a)
    while not game_rules.is_terminal(state):
        action = players[int(state.to_move)].act(state, rng)
        state = game_rules.apply(state, int(action))
    return int(game_rules.result(state, FIRST_PLAYER if a_first else 1 - FIRST_PLAYER))


def check_boards(game: str, players: Sequence[Agent], config: dict[str, Any] | None) -> None:
    """Check at once that every player can play this board (a checkpoint trained on another
    board size fails here, not in the middle of a game).

    Raises:
        ValueError: a player's ``check_board`` refuses the start position.
    """
    state = game_record(game).rules.initial_state(**(config or {}))
    for player in players:
        check = getattr(player, "check_board", None)
        if check is not None:
            check(state)


@dataclass(frozen=True)
class _Match:
    """What every game of a match shares; picklable when A and B are specs."""

    game: str
    a: str | Agent
    b: str | Agent
    seed: int
    alternate: bool
    config: dict[str, Any]
    stochastic: bool = False

    def players(self) -> tuple[Agent, Agent]:
        """A and B, built from their specs (checkpoints sampling if ``stochastic``)."""
        return (agents.make(self.game, self.a, stochastic=self.stochastic),
                agents.make(self.game, self.b, stochastic=self.stochastic))

    def play(self, a: Agent, b: Agent, index: int) -> int:
        """Game ``index`` of the match: A's result, a function of ``(seed, index)`` only."""
        rng = game_rng(self.seed, index)
        a_first = index % 2 == 0 if self.alternate else bool(rng.integers(2))
        return play_game(self.game, a, b, rng, a_first, self.config)


_worker_players: tuple[Agent, Agent] | None = None


def _init_worker(match: _Match) -> None:
    """Build A and B once per worker process."""
    global _worker_players
    _worker_players = match.players()


def _play_chunk(match: _Match, indices: range) -> list[int]:
    assert _worker_players is not None, "worker not initialised"
    return [match.play(*_worker_players, index) for index in indices]


def _chunks(games: int) -> list[range]:
    return [range(start, min(start + CHUNK_GAMES, games))
            for start in range(0, games, CHUNK_GAMES)]


def _outcomes(match: _Match, games: int, workers: int, advance: Callable[[int], object],
              players: tuple[Agent, Agent] | None) -> Iterator[int]:
    """A's result of each game in order; calls ``advance(n)`` as ``n`` more games finish.
    One process plays with ``players`` (built from the specs if None); each worker process
    builds its own once."""
    if workers == 1:
        a, b = players or match.players()
        for index in range(games):
            yield match.play(a, b, index)
            advance(1)
        return
    with ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(match,)) as pool:
        futures = [pool.submit(_play_chunk, match, chunk) for chunk in _chunks(games)]
        for future in futures:
            results = future.result()
            advance(len(results))
            yield from results


def _ignore(_: int) -> None:
    """A progress callback that does nothing."""


def progress_bar(games: int, enabled: bool) -> Any:
    """A tqdm bar on stderr when ``enabled``, tqdm is installed and stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=games, unit="game", leave=False, file=sys.stderr)


def play_match(game: str, a: str | Agent, b: str | Agent, games: int, seed: int = 0,
               alternate: bool = False, workers: int = 1,
               config: dict[str, Any] | None = None,
               progress: bool | Callable[[int], object] = False, stochastic: bool = False,
               players: tuple[Agent, Agent] | None = None) -> MatchResult:
    """Play ``games`` games of A against B and count the results.

    The first player of each game is drawn from that game's generator, or alternates
    (A first in even-numbered games) with ``alternate``. Results depend only on ``seed``, not
    on ``workers``.

    Args:
        game: a game name or alias.
        a: A's spec (built-in name or checkpoint path, see ``agents.make``) or an ``Agent``.
        b: B's spec or ``Agent``.
        games: number of games, > 0.
        seed: match seed, >= 0.
        alternate: alternate the first player instead of drawing it.
        workers: processes to spread the games over (agents given as objects must then be
            picklable).
        config: options of the game's ``initial_state`` (four-in-a-row ``rows``,
            ``columns``, ``connect``).
        progress: True: a progress bar of games when stderr is a terminal; or a callback,
            called with the number of games just finished (they add up to ``games``).
        stochastic: checkpoint agents sample their moves instead of the masked argmax.
        players: A and B already built from ``a`` and ``b`` (used when ``workers == 1``), so
            that a checkpoint is loaded once per process.

    Raises:
        ValueError: unknown game or agent, bad option, ``games < 1``, ``seed < 0`` or
            ``workers < 1``.
    """
    for name, value, minimum in (("games", games, 1), ("seed", seed, 0), ("workers", workers, 1)):
        if value < minimum:
            raise ValueError(f"{name} must be >= {minimum}, got {value}")
    name = game_record(game).name
    game_record(name).rules.initial_state(**(config or {}))  # validates before any work
    match = _Match(name, a, b, seed, alternate, dict(config or {}), stochastic)
    bar = None if callable(progress) else progress_bar(games, progress)
    advance = progress if callable(progress) else _ignore if bar is None else bar.update
    start = time.perf_counter()
    try:
        outcomes = tuple(_outcomes(match, games, workers, advance, players))
    finally:
        if bar is not None:
            bar.close()
    return MatchResult(name, _label(a), _label(b), games, outcomes.count(A_WON),
                       outcomes.count(B_WON), outcomes.count(TIE),
                       time.perf_counter() - start, outcomes)


# -- command line ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``boardgym evaluate`` argument parser."""
    parser = CommandParser(
        prog="boardgym evaluate",
        description="Play agent A against agent B and report A's wins, B's wins and ties.")
    parser.add_argument("game", help=f"the game: {game_names()}")
    parser.add_argument("a", help="agent A: a built-in name (e.g. corner_best, lookahead:2, "
                                  "perfect) or a checkpoint path")
    parser.add_argument("b", help="agent B, likewise")
    parser.add_argument("--games", type=int_at_least(1), default=100,
                        help="number of games (default 100)")
    parser.add_argument("--seed", type=int_at_least(0), default=0, help="match seed (default 0)")
    parser.add_argument("--alternate", action="store_true",
                        help="alternate the first player instead of drawing it per game")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--stochastic", action="store_true",
                        help="checkpoint agents sample their moves (default: masked argmax)")
    parser.add_argument("--workers", type=int_at_least(1), default=1,
                        help="processes to spread the games over (same results as 1)")
    add_board_options(parser)
    return parser


def _resolve(parser: argparse.ArgumentParser,
             args: argparse.Namespace) -> tuple[dict[str, Any], tuple[Agent, Agent]]:
    """Check the game, the board options and both agents (built once, here); returns the
    board options and the agents. Any problem ends the program with a one-line usage error.
    """
    try:
        record = game_record(args.game)
        args.game = record.name
        config = board_options(record, args)
        a, b = (agents.make(record, spec, stochastic=args.stochastic)
                for spec in (args.a, args.b))
        check_boards(record.name, (a, b), config)
    except (ValueError, OSError, ImportError) as error:
        parser.error(str(error))
    return config, (a, b)


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym evaluate GAME A B --games N --seed S [--alternate] [--json] [--workers K]``.

    Returns:
        0 on success (a usage error exits with 2 and one line on stderr).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    config, players = _resolve(parser, args)
    result = play_match(args.game, args.a, args.b, args.games, args.seed, args.alternate,
                        args.workers, config, progress=True, stochastic=args.stochastic,
                        players=players)
    print(json.dumps(result.to_dict()) if args.json else result.report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
