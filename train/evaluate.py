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
from boardgym.agents.base import Agent
from boardgym.envs.games import canonical_name, rules

from boardgym import agents

Z95 = 1.959963984540054
"""Standard normal quantile of 0.975: the z of a two-sided 95% interval."""
A_WON, B_WON, TIE = 1, -1, 0
CHUNK_GAMES = 25
"""Games per task handed to a worker process."""
PERCENT = 100
FOUR_IN_A_ROW_OPTIONS = ("rows", "columns", "connect")


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
    game_rules = rules(game)
    state = game_rules.initial_state(**(config or {}))
    players = (a, b) if a_first else (b, a)
    while not game_rules.is_terminal(state):
        action = players[int(state.to_move)].act(state, rng)
        state = game_rules.apply(state, int(action))
    first_player_result = int(game_rules.outcome(state))
    return first_player_result if a_first else -first_player_result


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


def _outcomes(match: _Match, games: int, workers: int,
              advance: Callable[[int], object]) -> Iterator[int]:
    """A's result of each game in order; calls ``advance(n)`` as ``n`` more games finish."""
    if workers == 1:
        a, b = match.players()
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


def _progress_bar(games: int, enabled: bool) -> Any:
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
               config: dict[str, Any] | None = None, progress: bool = False,
               stochastic: bool = False) -> MatchResult:
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
        progress: show a progress bar when stderr is a terminal.
        stochastic: checkpoint agents sample their moves instead of the masked argmax.

    Raises:
        ValueError: unknown game or agent, bad option, ``games < 1``, ``seed < 0`` or
            ``workers < 1``.
    """
    for name, value, minimum in (("games", games, 1), ("seed", seed, 0), ("workers", workers, 1)):
        if value < minimum:
            raise ValueError(f"{name} must be >= {minimum}, got {value}")
    name = canonical_name(game)
    rules(name).initial_state(**(config or {}))  # validates the options before any work
    match = _Match(name, a, b, seed, alternate, dict(config or {}), stochastic)
    bar = _progress_bar(games, progress)
    start = time.perf_counter()
    try:
        outcomes = tuple(_outcomes(match, games, workers, _ignore if bar is None else bar.update))
    finally:
        if bar is not None:
            bar.close()
    return MatchResult(name, _label(a), _label(b), games, outcomes.count(A_WON),
                       outcomes.count(B_WON), outcomes.count(TIE),
                       time.perf_counter() - start, outcomes)


# -- command line ----------------------------------------------------------------------------


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type`` accepting integers >= ``minimum``, with a usage error otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


def build_parser() -> argparse.ArgumentParser:
    """The ``boardgym evaluate`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="boardgym evaluate",
        description="Play agent A against agent B and report A's wins, B's wins and ties.")
    parser.add_argument("game", help="reversi, four_in_a_row (connect_four) or tictactoe")
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
    for option in FOUR_IN_A_ROW_OPTIONS:
        parser.add_argument(f"--{option}", type=int_at_least(1),
                            help=f"four_in_a_row board {option}")
    return parser


def _resolve(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Any]:
    """Check the game, the options and both agents; returns the game options.

    Any problem ends the program with a usage error naming the fix.
    """
    try:
        args.game = canonical_name(args.game)
        config = {option: getattr(args, option) for option in FOUR_IN_A_ROW_OPTIONS
                  if getattr(args, option) is not None}
        if config and args.game != "four_in_a_row":
            raise ValueError(f"--{', --'.join(config)}: board options are only for "
                             "four_in_a_row")
        rules(args.game).initial_state(**config)
        for spec in (args.a, args.b):
            agents.make(args.game, spec)
    except (ValueError, OSError, ImportError) as error:
        parser.error(str(error))
    return config


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym evaluate GAME A B --games N --seed S [--alternate] [--json] [--workers K]``.

    Returns:
        0 on success (argparse exits with 2 on a usage error).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    config = _resolve(parser, args)
    result = play_match(args.game, args.a, args.b, args.games, args.seed, args.alternate,
                        args.workers, config, progress=True, stochastic=args.stochastic)
    print(json.dumps(result.to_dict()) if args.json else result.report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
