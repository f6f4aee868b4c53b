"""Simulated matches: agent A against agent B over many games (``boardgym evaluate``).

Game ``i`` of a match with seed ``S`` draws every random number (who moves first, the agents'
tie-breaks) from its own generator ``np.random.default_rng([S, i])``, so a game's result
depends only on ``(S, i)``: spreading games over worker processes or Ray tasks
(``train.common.backends``) changes nothing.

Fair matches (``--openings``, see ``train.match.openings``): games ``2k`` and ``2k + 1`` form
pair ``k``; both start from opening ``k`` (random plies or a suite's line), A moving first in
game ``2k`` and second in ``2k + 1``. The report then also counts the distinct games
(identical move sequences, opening included, counted once) and A's pair score with its 95%
interval over pairs (``train.match.results``).

Noisy matches (``--random-moves P``, the game-learning literature's way of judging a player
off its own self-play distribution): before each move of either side, the game's generator
draws ``rng.random() < P``; if true, that side plays a uniformly random legal move drawn from
the same generator (one ``rng.integers(count)`` over the legal actions in increasing order)
instead of its own. Opening plies are not affected; with ``P = 0`` nothing more is drawn, so
the games are those of a match without the option.

Use ``play_match`` from other scripts::

    from boardgym.train.match.evaluate import play_match
    result = play_match("reversi", "corner_best", "random", games=1000, seed=0)
    print(result.a_win_rate, result.a_win_ci95)
"""

from __future__ import annotations

import argparse
import json
import numbers
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from boardgym import agents
from boardgym.agents import Agent
from boardgym.envs.games import game as game_record
from boardgym.envs.games.core import Rules
from boardgym.envs.games.records import GameRecord, is_record_file, record_writer
from boardgym.train.common.backends import (
    Backend,
    add_backend_options,
    backend_from_args,
    connect,
    flat_map,
    task_ranges,
)
from boardgym.train.common.commands import (
    GAMES_CAP,
    MAX_GAMES,
    add_board_options,
    add_force_option,
    board_options,
    check_at_least,
    check_at_most,
    check_output,
    game_parser,
    games_count,
    progress_bar,
    seed_value,
)
from boardgym.train.match import openings as fair
from boardgym.train.match.results import (
    A_WON,
    B_WON,
    PAIR,
    TIE,
    MatchResult,
    Moves,
    Played,
    Tally,
    player_label,
)

CHUNK_GAMES = 25
"""Games per task handed to a worker process or a Ray task."""
FIRST_PLAYER = 0


def game_rng(seed: int, index: int) -> np.random.Generator:
    """The generator of game ``index`` of a match seeded with ``seed`` (both >= 0)."""
    return np.random.default_rng([seed, index])


def check_random_moves(random_moves: float, name: str = "random_moves") -> float:
    """``random_moves`` as a float, if it is a chance in ``[0, 1)``.

    Raises:
        ValueError: not a number, NaN, infinite or outside ``[0, 1)``: one line, ``name``
            (where the value came from) first.
    """
    if isinstance(random_moves, numbers.Real) and not isinstance(random_moves, bool) \
            and 0 <= random_moves < 1:
        return float(random_moves)
    raise ValueError(f"{name} must be a chance in [0, 1) (of a random legal move before "
                     f"each move, e.g. 0.1), got {random_moves!r}")


def random_move(rules: Rules, state: Any, rng: np.random.Generator) -> int:
    """A uniformly random legal action of ``state``: one ``rng.integers(count)`` over the
    ``count`` legal actions in increasing order."""
    legal = np.flatnonzero(rules.legal_mask(state))
    return int(legal[rng.integers(len(legal))])


def play_game(game: str, a: Agent, b: Agent, rng: np.random.Generator, a_first: bool,
              config: dict[str, Any] | None = None, opening: Sequence[int] = (),
              random_moves: float = 0.0) -> int:
    """Play one game of A against B on the rules state; A's result (see ``play_moves``)."""
    return play_moves(game, a, b, rng, a_first, config, opening, random_moves)[0]


def play_moves(game: str, a: Agent, b: Agent, rng: np.random.Generator, a_first: bool,
               config: dict[str, Any] | None = None, opening: Sequence[int] = (),
               random_moves: float = 0.0) -> tuple[int, Moves]:
    """Play one game of A against B on the rules state, from the start or from an opening.

    Args:
        game: a game name or alias.
        a: agent A.
        b: agent B.
        rng: the only source of randomness (both agents' tie-breaks, the random moves).
        a_first: whether A is the first player (the side that moves first from the start
            position, whoever is to move after the opening).
        config: options of the game's ``initial_state`` (four-in-a-row board size).
        opening: actions applied with the rules before the agents play.
        random_moves: the chance, in ``[0, 1)``, that a side plays a uniformly random legal
            move (``random_move``) instead of its own, drawn before each of its moves as
            ``rng.random() < random_moves`` (0: nothing drawn; see the module docstring).

    Returns:
        ``A_WON`` (+1), ``B_WON`` (-1) or ``TIE`` (0), and every action of the game.

    Raises:
        ValueError: an illegal opening, or ``random_moves`` outside ``[0, 1)``.
    """
    check_random_moves(random_moves)
    record = game_record(game)
    game_rules = record.rules
    state = fair.replay(record, opening, config)
    moves = list(opening)
    players = (a, b) if a_first else (b, a)
    while not game_rules.is_terminal(state):
        if random_moves and rng.random() < random_moves:
            action = random_move(game_rules, state, rng)
        else:
            action = int(players[int(state.to_move)].act(state, rng))
        moves.append(action)
        state = game_rules.apply(state, action)
    side = FIRST_PLAYER if a_first else 1 - FIRST_PLAYER
    return int(game_rules.result(state, side)), tuple(moves)


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
    """What every game of a match shares; picklable when A and B are specs.

    Games are played in units: one game, or with ``openings`` the pair of games of one
    opening, so that a worker process draws each opening once.
    """

    game: str
    a: str | Agent
    b: str | Agent
    seed: int
    alternate: bool
    config: dict[str, Any]
    stochastic: bool = False
    openings: fair.Openings | None = None
    random_moves: float = 0.0

    @property
    def unit(self) -> int:
        """Games per unit of work: a pair with openings, else one."""
        return 1 if self.openings is None else PAIR

    def players(self) -> tuple[Agent, Agent]:
        """A and B, built from their specs (checkpoints sampling if ``stochastic``)."""
        return (agents.make(self.game, self.a, stochastic=self.stochastic),
                agents.make(self.game, self.b, stochastic=self.stochastic))

    def play(self, a: Agent, b: Agent, index: int, opening: Sequence[int] = ()) -> Played:
        """Game ``index`` of the match: A's result, the moves and the seats, a function of
        ``(seed, index)`` only."""
        rng = game_rng(self.seed, index)
        if self.openings is not None:
            a_first = index % PAIR == 0
        else:
            a_first = index % 2 == 0 if self.alternate else bool(rng.integers(2))
        result, moves = play_moves(self.game, a, b, rng, a_first, self.config, opening,
                                   self.random_moves)
        return Played(result, moves, a_first, len(opening))

    def record(self, index: int, played: Played) -> GameRecord:
        """The game record of game ``index``."""
        a, b = player_label(self.a), player_label(self.b)
        return GameRecord(self.game, played.moves, (a, b) if played.a_first else (b, a),
                          self.config, a=int(not played.a_first), seed=self.seed, index=index,
                          opening=played.opening, random_moves=self.random_moves,
                          source="evaluate")

    def play_unit(self, a: Agent, b: Agent, unit: int) -> list[Played]:
        """The games of unit ``unit``: game ``unit``, or pair ``unit`` from its opening."""
        if self.openings is None:
            return [self.play(a, b, unit)]
        opening = self.openings.opening(unit)
        return [self.play(a, b, unit * PAIR + seat, opening) for seat in range(PAIR)]

    def play_units(self, players: tuple[Agent, Agent], units: range) -> list[Played]:
        """The games of ``units`` in order (one task of ``train.common.backends.flat_map``)."""
        return [game for unit in units for game in self.play_unit(*players, unit)]


def _games(match: _Match, games: int, backend: Backend,
           advance: Callable[[int], object] | None,
           players: tuple[Agent, Agent] | None) -> Iterator[Played]:
    """Each game in order; calls ``advance(n)`` as ``n`` more
    games finish. In this process the games are played with ``players`` (built from the
    specs if None), unit by unit; each worker process builds its own once and plays tasks of
    about ``CHUNK_GAMES`` games."""
    units = task_ranges(max(1, CHUNK_GAMES // match.unit), backend, games // match.unit)
    return flat_map(match.play_units, units, match.players, backend, players, advance)


def play_match(game: str, a: str | Agent, b: str | Agent, games: int, seed: int = 0,
               alternate: bool = False, workers: int | None = None,
               config: dict[str, Any] | None = None,
               progress: bool | Callable[[int], object] = False, stochastic: bool = False,
               players: tuple[Agent, Agent] | None = None,
               openings: str | None = None, backend: str = "local",
               address: str | None = None, random_moves: float = 0.0,
               record: str | Path | None = None) -> MatchResult:
    """Play ``games`` games of A against B and count the results.

    The first player of each game is drawn from that game's generator, or alternates
    (A first in even-numbered games) with ``alternate``, or with ``openings`` games ``2k``
    and ``2k + 1`` play opening ``k`` with the seats swapped (A first in the even game).
    Results depend only on ``seed``, not on ``workers`` or ``backend``.

    Args:
        game: a game name or alias.
        a: A's spec (built-in name or checkpoint path, see ``agents.make``) or an ``Agent``.
        b: B's spec or ``Agent``.
        games: number of games, in ``[1, MAX_GAMES]``.
        seed: match seed, >= 0.
        alternate: alternate the first player instead of drawing it.
        workers: tasks running at once (``train.common.backends.Backend``: local processes, default
            1; Ray tasks, default the cluster's CPUs); agents given as objects must then be
            picklable.
        config: options of the game's ``initial_state`` (four-in-a-row ``rows``,
            ``columns``, ``connect``).
        progress: True: a progress bar of games when stderr is a terminal; or a callback,
            called with the number of games just finished (they add up to ``games``).
        stochastic: checkpoint agents sample their moves instead of the masked argmax.
        players: A and B already built from ``a`` and ``b`` (used when the games are played
            in this process), so that a checkpoint is loaded once per process.
        openings: fair games (``train.match.openings.openings_from``): a number of random plies
            (``"8"``) or the path of an opening suite; None: every game from the start.
        backend: ``"local"`` processes or ``"ray"`` (same results).
        address: the Ray cluster to join (default ``RAY_ADDRESS``, else a local Ray).
        random_moves: noisy games: the chance in ``[0, 1)`` that a side plays a uniformly
            random legal move instead of its own, before each of its moves (``play_moves``).
        record: a file to write every game's record to (``envs.games.records``: JSON lines,
            in game order), complete when the match ends, untouched if it fails.

    Raises:
        ValueError: unknown game or agent, bad option, ``games`` outside ``[1, MAX_GAMES]``,
            ``seed < 0``, ``workers`` outside what the backend runs, an odd number of
            games with openings, bad openings, ``random_moves`` outside ``[0, 1)``, or a Ray
            backend that cannot start.
    """
    random_moves = check_random_moves(random_moves)
    check_at_least(games=(games, 1), seed=(seed, 0))
    check_at_most(GAMES_CAP, games=(games, MAX_GAMES))
    where = Backend(backend, workers, address)
    name = game_record(game).name
    game_record(name).rules.initial_state(**(config or {}))  # validates before any work
    source = None if openings is None else fair_openings(name, openings, games, seed, config)
    match = _Match(name, a, b, seed, alternate, dict(config or {}), stochastic, source,
                   random_moves)
    bar = None if callable(progress) else progress_bar(games, enabled=bool(progress))
    advance = progress if callable(progress) else None if bar is None else bar.update
    start = time.perf_counter()
    tally = Tally()
    try:
        with record_writer(record) as out:
            for index, played in enumerate(_games(match, games, where, advance, players)):
                tally.add(played.result, played.moves)
                if out is not None:
                    out.write(match.record(index, played))
    finally:
        if bar is not None:
            bar.close()
    outcomes = tally.outcomes
    return MatchResult(name, player_label(a), player_label(b), games, outcomes.count(A_WON),
                       outcomes.count(B_WON), outcomes.count(TIE),
                       time.perf_counter() - start, outcomes, source, tally.distinct_games,
                       random_moves)


def fair_openings(game: str, spec: str, games: int, seed: int,
                  config: dict[str, Any] | None = None) -> fair.Openings:
    """The openings of a fair match of ``games`` games (the first one drawn at once, so that
    too many plies fail before any game).

    Raises:
        ValueError: an odd number of games, or ``openings_from`` refuses ``spec``, or no
            fair opening of that many plies.
    """
    if games % PAIR:
        raise ValueError(f"with --openings every opening is played twice: --games must be "
                         f"even, got {games}")
    source = fair.openings_from(spec, game, seed, config)
    source.opening(0)
    return source


# -- command line ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``boardgym evaluate`` argument parser."""
    parser = game_parser(
        prog="boardgym evaluate",
        description="Play agent A against agent B and report A's wins, B's wins and ties.")
    parser.add_argument("a", help="agent A: a built-in name (e.g. corner_best, lookahead:2, "
                                  "perfect) or a checkpoint path")
    parser.add_argument("b", help="agent B, likewise")
    parser.add_argument("--games", type=games_count, default=100,
                        help=f"number of games (default 100, at most {MAX_GAMES})")
    parser.add_argument("--seed", type=seed_value, default=0, help="match seed (default 0)")
    parser.add_argument("--alternate", action="store_true",
                        help="alternate the first player instead of drawing it per game")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--stochastic", action="store_true",
                        help="checkpoint agents sample their moves (default: masked argmax)")
    add_backend_options(parser, "the games")
    add_openings_option(parser)
    add_random_moves_option(parser)
    add_record_option(parser)
    add_force_option(parser, "the --record file")
    add_board_options(parser)
    return parser


def add_record_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--record FILE`` (every game's record, JSON lines) to a command's parser."""
    parser.add_argument("--record", metavar="FILE",
                        help="write every game's record to FILE, one JSON object a line in "
                             "game order (moves in the game's notation, players, seats, "
                             "result, seed; boardgym replay FILE shows them); a file there "
                             "is replaced only when it is a record file (else --force)")


def check_record_output(args: argparse.Namespace) -> None:
    """Check ``--record`` before any game is played (``check_output``)."""
    if args.record is not None:
        check_output(args.record, "--record", "a game record file", is_record_file,
                     args.force)


def random_moves_value(text: str) -> float:
    """The argparse ``type`` of ``--random-moves``: a number in ``[0, 1)``
    (``check_random_moves``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}") from None
    try:
        return check_random_moves(value, "P")
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_random_moves_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--random-moves P`` (noisy games) to a command's parser."""
    parser.add_argument("--random-moves", type=random_moves_value, default=0.0, metavar="P",
                        help="noisy games: before each of its moves, a side plays a uniformly "
                             "random legal move instead with chance P, in [0, 1) (the "
                             "literature's matches use 0.1; default 0: none)")


def add_openings_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--openings N|FILE`` (fair matches) to a command's parser."""
    parser.add_argument("--openings", metavar="N|FILE",
                        help="fair games: each pair of games starts from its own opening, "
                             "the seats swapped: N random legal plies not proven decided, "
                             "or the openings of a suite file (or a shipped one, e.g. "
                             "shipped:reversi_8ply); --games must be even")


def _resolve(parser: argparse.ArgumentParser,
             args: argparse.Namespace) -> tuple[dict[str, Any], tuple[Agent, Agent]]:
    """Check the game, the board options, both agents (built once, here) and the backend
    (Ray started or joined); returns the board options and the agents. Any problem ends the
    program with a one-line usage error.
    """
    try:
        record = game_record(args.game)
        args.game = record.name
        config = board_options(record, args)
        a, b = (agents.make(record, spec, stochastic=args.stochastic)
                for spec in (args.a, args.b))
        check_boards(record.name, (a, b), config)
        if args.openings is not None:
            fair_openings(record.name, args.openings, args.games, args.seed, config)
        check_record_output(args)
        connect(backend_from_args(args))
    except (ValueError, OSError, ImportError) as error:
        parser.error(str(error))
    return config, (a, b)


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym evaluate GAME A B --games N --seed S [--alternate] [--json] [--workers K]
    [--backend local|ray] [--address ADDR] [--openings N|FILE] [--random-moves P]
    [--record FILE [--force]]``.

    Returns:
        0 on success (a usage error exits with 2 and one line on stderr).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    config, players = _resolve(parser, args)
    result = play_match(args.game, args.a, args.b, args.games, args.seed, args.alternate,
                        args.workers, config, progress=True, stochastic=args.stochastic,
                        players=players, openings=args.openings, backend=args.backend,
                        address=args.address, random_moves=args.random_moves,
                        record=args.record)
    print(json.dumps(result.to_dict()) if args.json else result.report())
    return 0


if __name__ == "__main__":
    from boardgym.train.cli import main as run_command

    raise SystemExit(run_command(["evaluate", *sys.argv[1:]]))
