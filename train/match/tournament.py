"""Round-robin tournaments with Elo ratings (``boardgym tournament``).

Every pair of players meets ``games`` times, the first player alternating (the lower-listed
player moves first in even-numbered games), so both seatings are played equally. Tournament
game ``g`` draws all its randomness from ``train.match.evaluate.game_rng(seed, g)``: results
depend only on the seed, never on the number of worker processes or the backend
(``train.common.backends``).

Ratings are the Elo fit of the whole table with percentile bootstrap 95% intervals
(``train.match.elo``), anchored so that the anchor player (``random`` when it takes part,
otherwise the first player listed) is at 0. A player whose every pairing went one way has no
interval: the reports say ``undefined`` (``UNDEFINED``), the JSON ``null``. The finished round
robin is a ``train.match.results.Tournament``.

Outputs: ``--out PREFIX`` names ``PREFIX.json``, ``.md`` and ``.png``, written atomically;
files already there are overwritten only when ``PREFIX.json`` is a tournament's record (the
command's own earlier output), otherwise ``--force`` is needed.

Fair tournaments (``--openings``, see ``train.match.openings``): every pairing plays the same
openings, games ``2k`` and ``2k + 1`` of a pairing both from opening ``k`` with the seats
swapped. Each pairing then also reports its distinct games and the first-listed player's pair
score with its 95% interval over pairs (as ``boardgym evaluate`` does).

Noisy tournaments (``--random-moves P``): before each move, a side plays a uniformly random
legal move instead of its own with chance P, as in ``boardgym evaluate``
(``train.match.evaluate.play_moves``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from boardgym import agents
from boardgym.agents import Agent
from boardgym.envs.games import canonical_name
from boardgym.envs.games.records import GameRecord, record_writer
from boardgym.files import atomic_path
from boardgym.train.common import commands
from boardgym.train.common.backends import (
    Backend,
    add_backend_options,
    connect,
    flat_map,
    task_ranges,
)
from boardgym.train.common.runs import write_atomic
from boardgym.train.match import openings as fair
from boardgym.train.match.elo import MAX_BOOTSTRAP, bootstrap_elo, pairings
from boardgym.train.match.evaluate import (
    add_openings_option,
    add_random_moves_option,
    add_record_option,
    check_boards,
    check_random_moves,
    check_record_output,
    fair_openings,
    game_rng,
    play_moves,
)
from boardgym.train.match.results import (
    A_WON,
    B_WON,
    PAIR,
    TIE,
    Played,
    Tally,
    Tournament,
    random_moves_line,
)
from boardgym.train.match.results import UNDEFINED as UNDEFINED

DEFAULT_ANCHOR = "random"
BOOTSTRAP_SAMPLES = 1000
GAMES_PER_TASK = 4
"""Games handed to a worker process (or a Ray task) at a time."""
DEFAULT_GAMES = 20
OUTCOMES = (A_WON, TIE, B_WON)
"""Column order of the per-pairing counts: first-listed player's wins, ties, losses."""
SUFFIXES = (".json", ".md", ".png")
"""The outputs of ``--out PREFIX``; the JSON is the record that recognises them."""


# -- playing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Schedule:
    """Who plays whom in tournament game ``g``; picklable for worker processes."""

    game: str
    specs: tuple[str, ...]
    games: int
    seed: int
    openings: fair.Openings | None = None
    random_moves: float = 0.0

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """The pairings ``(i, j)``, ``i < j``, in ``train.match.elo.pairings`` order."""
        return pairings(len(self.specs))

    def play(self, players: Sequence[Agent], index: int) -> Played:
        """Tournament game ``index``: the first-listed player's result (+1/0/-1), the
        moves (from opening ``(index % games) // 2`` with openings) and the seats."""
        i, j = self.pairs[index // self.games]
        local = index % self.games
        opening = () if self.openings is None else self.openings.opening(local // PAIR)
        a_first = local % PAIR == 0
        result, moves = play_moves(self.game, players[i], players[j],
                                   game_rng(self.seed, index), a_first, opening=opening,
                                   random_moves=self.random_moves)
        return Played(result, moves, a_first, len(opening))

    def record(self, index: int, played: Played) -> GameRecord:
        """The game record of tournament game ``index`` (A: the pairing's first-listed)."""
        i, j = self.pairs[index // self.games]
        a, b = self.specs[i], self.specs[j]
        return GameRecord(self.game, played.moves, (a, b) if played.a_first else (b, a),
                          a=int(not played.a_first), seed=self.seed, index=index,
                          opening=played.opening, random_moves=self.random_moves,
                          source="tournament")

    def players(self) -> list[Agent]:
        """Every player, built from its spec."""
        return [agents.make(self.game, spec) for spec in self.specs]

    def play_games(self, players: Sequence[Agent], indices: range) -> list[Played]:
        """Games ``indices`` in order (one task of ``train.common.backends.flat_map``)."""
        return [self.play(players, index) for index in indices]


def play_round_robin(schedule: _Schedule, backend: Backend,
                     advance: Callable[[int], object] | None,
                     players: Sequence[Agent], record: str | Path | None = None) -> list[Tally]:
    """Each pairing's ``Tally`` (its games' results and distinct games), in pairing order;
    ``advance(n)`` (if given) is called as ``n`` games finish; with ``record``, every game's
    record is written there. In this process the games are played one by one with
    ``players`` (built from the specs); each worker process builds its own once and plays
    ``GAMES_PER_TASK`` at a time (whole pairs of games: it is even)."""
    tasks = task_ranges(GAMES_PER_TASK, backend, len(schedule.pairs) * schedule.games)
    tallies: list[Tally] = []
    games = flat_map(schedule.play_games, tasks, schedule.players, backend, list(players),
                     advance)
    with record_writer(record) as out:
        for index, played in enumerate(games):
            if index % schedule.games == 0:
                tallies.append(Tally())
            tallies[-1].add(played.result, played.moves)
            if out is not None:
                out.write(schedule.record(index, played))
    return tallies


def run_tournament(game: str, specs: Sequence[str], games: int, seed: int = 0,
                   workers: int | None = None, anchor: str | None = None,
                   bootstrap: int = BOOTSTRAP_SAMPLES,
                   advance: Callable[[int], object] | None = None,
                   openings: str | None = None, backend: str = "local",
                   address: str | None = None, random_moves: float = 0.0,
                   record: str | Path | None = None) -> Tournament:
    """Play a round robin among ``specs`` and rate the players.

    Args:
        game: a game name or alias.
        specs: two or more distinct agent specs (built-in names or checkpoint paths).
        games: games per pairing, in ``[1, MAX_GAMES]``; the first player alternates.
        seed: tournament seed, >= 0.
        workers: tasks running at once (``train.common.backends.Backend``: local processes, default
            1; Ray tasks, default the cluster's CPUs); same results for any number.
        anchor: the spec rated 0 (default ``random`` if present, else the first spec).
        bootstrap: bootstrap resamples for the intervals, in ``[1, MAX_BOOTSTRAP]``.
        advance: called with the number of games just finished (a progress bar's update;
            None: not called).
        openings: fair games (``train.match.openings.openings_from``): a number of random plies
            (``"8"``) or the path of an opening suite; ``games`` must then be even.
        backend: ``"local"`` processes or ``"ray"`` (same results).
        address: the Ray cluster to join (default ``RAY_ADDRESS``, else a local Ray).
        random_moves: noisy games: the chance in ``[0, 1)`` that a side plays a uniformly
            random legal move instead of its own, before each of its moves.
        record: a file to write every game's record to (JSON lines, in game order).

    Raises:
        ValueError: unknown game or agent, fewer than two or repeated specs, an anchor that is
            not a player, a count below its minimum, bad openings, ``random_moves`` outside
            ``[0, 1)``, or a Ray backend that cannot start.
    """
    random_moves = check_random_moves(random_moves)
    name = canonical_name(game)
    specs = tuple(specs)
    where = Backend(backend, workers, address)
    anchor_index, players = _check(name, specs, games, seed, anchor, bootstrap)
    source = None if openings is None else fair_openings(name, openings, games, seed)
    connect(where)
    schedule = _Schedule(name, specs, games, seed, source, random_moves)
    start = time.perf_counter()
    tallies = play_round_robin(schedule, where, advance, players, record)
    results = np.array([tally.outcomes for tally in tallies], dtype=np.int8)
    distinct = tuple(tally.distinct_games for tally in tallies)
    counts = np.stack([(results == outcome).sum(axis=1) for outcome in OUTCOMES], axis=1)
    ratings, intervals = bootstrap_elo(counts, len(specs), anchor_index, bootstrap,
                                       np.random.default_rng([seed, len(results.flat)]))
    return Tournament(name, specs, games, seed, counts, anchor_index, ratings, intervals,
                      time.perf_counter() - start, source, results, distinct, random_moves)


def _check(game: str, specs: tuple[str, ...], games: int, seed: int, anchor: str | None,
           bootstrap: int) -> tuple[int, list[Agent]]:
    """Validate the arguments of ``run_tournament``; returns the anchor's index and the
    players (each built once, here)."""
    if len(specs) < 2 or len(set(specs)) != len(specs):
        raise ValueError(f"a tournament needs two or more distinct players, got {list(specs)}")
    commands.check_at_least(games=(games, 1), seed=(seed, 0), bootstrap=(bootstrap, 1))
    commands.check_at_most(commands.GAMES_CAP, games=(games, commands.MAX_GAMES))
    commands.check_at_most("MAX_BOOTSTRAP", bootstrap=(bootstrap, MAX_BOOTSTRAP))
    players = [agents.make(game, spec) for spec in specs]
    check_boards(game, players, None)
    if anchor is None:
        return (specs.index(DEFAULT_ANCHOR) if DEFAULT_ANCHOR in specs else 0), players
    if anchor not in specs:
        raise ValueError(f"--anchor {anchor!r} is not one of the players {list(specs)}")
    return specs.index(anchor), players


# -- reports ---------------------------------------------------------------------------------


def _cell(counts: np.ndarray, i: int, j: int, n: int) -> str:
    """``wins-ties-losses`` of player i against player j."""
    pair = {players: p for p, players in enumerate(pairings(n))}
    if (i, j) in pair:
        w, t, lost = counts[pair[i, j]]
    else:
        lost, t, w = counts[pair[j, i]]
    return f"{w}-{t}-{lost}"


def markdown(tournament: Tournament, command: str) -> str:
    """The ratings table and the pairwise table (row's wins-ties-losses) as Markdown."""
    t = tournament
    order = t.ranking()
    seating = ("first player alternating" if t.openings is None else
                f"pairs of games from {t.openings.description}, seats swapped")
    seating += f"; {random_moves_line(t.random_moves)}" if t.random_moves else ""
    lines = [f"# {t.game} tournament", "", f"`{command}`", "",
             f"{t.games} games per pairing, {seating}; Elo anchored at "
             f"`{t.players[t.anchor]}` = 0, 95% bootstrap intervals.", "",
             "| rank | player | Elo | 95% interval |", "|---:|---|---:|---|"]
    lines += [f"| {rank} | `{t.players[p]}` | {t.ratings[p]:.0f} | {t.interval_text(p)} |"
              for rank, p in enumerate(order, 1)]
    return "\n".join(lines) + "\n\n" + pairwise_markdown(t) + fair_markdown(t)


def fair_markdown(tournament: Tournament) -> str:
    """With openings: each pairing's pair score (first-listed player), its 95% interval over
    pairs and the distinct games, as Markdown; otherwise an empty string."""
    t = tournament
    if t.openings is None:
        return ""
    lines = ["", "Pairs of games (first-listed player's pair score, 95% interval over pairs):",
             "", "| a | b | pairs | a's pair score | 95% interval | distinct games |",
             "|---|---|---:|---:|---|---:|"]
    for p, (i, j) in enumerate(pairings(len(t.players))):
        fields = t.fair_fields(p)
        low, high = fields["a_pair_ci95"]
        lines.append(f"| `{t.players[i]}` | `{t.players[j]}` | {fields['pairs']} | "
                     f"{fields['a_pair_score']:.3f} | [{low:.3f}, {high:.3f}] | "
                     f"{fields['distinct_games']} |")
    return "\n".join(lines) + "\n"


def pairwise_markdown(tournament: Tournament) -> str:
    """The pairwise table as Markdown: the row player's wins-ties-losses against each column
    player, best-rated first."""
    t, n = tournament, len(tournament.players)
    order = t.ranking()
    lines = ["| | " + " | ".join(f"`{t.players[p]}`" for p in order) + " |",
             "|---|" + "---:|" * n]
    lines += [f"| `{t.players[i]}` | " + " | ".join(
        "" if i == j else _cell(t.counts, i, j, n) for j in order) + " |" for i in order]
    return "Pairwise results (row player's wins-ties-losses):\n\n" + "\n".join(lines) + "\n"


def text_report(tournament: Tournament) -> str:
    """The ratings as a plain-text table, best first (then the random moves of a noisy
    tournament)."""
    t = tournament
    width = max(len(spec) for spec in t.players)
    lines = [f"{'rank':>4}  {'player':<{width}}  {'Elo':>6}  95% interval"]
    lines += [f"{rank:>4}  {t.players[p]:<{width}}  {t.ratings[p]:>6.0f}  {t.interval_text(p)}"
              for rank, p in enumerate(t.ranking(), 1)]
    return "\n".join(lines + ([random_moves_line(t.random_moves)] if t.random_moves else []))


def draw(tournament: Tournament, path: Path) -> None:
    """Save a PNG: ratings with 95% error bars, and the pairwise score heat map."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t, order = tournament, tournament.ranking()
    labels = [t.players[p] for p in order]
    size = len(order)
    fig, (left, right) = plt.subplots(1, 2, figsize=(7 + size, 1.5 + 0.6 * size))
    errors = np.nan_to_num(np.abs(t.intervals[order].T - t.ratings[order]))  # undefined: none
    left.errorbar(t.ratings[order], range(size), xerr=errors, fmt="o", capsize=4)
    left.set_yticks(range(size), labels)
    left.invert_yaxis()
    left.set_xlabel(f"Elo ({t.players[t.anchor]} = 0), 95% bootstrap interval")
    left.grid(axis="x", alpha=0.3)
    scores = t.score_table()[np.ix_(order, order)]
    image = right.imshow(scores, cmap="RdYlGn", vmin=0, vmax=1)
    right.set_xticks(range(size), labels, rotation=45, ha="right")
    right.set_yticks(range(size), labels)
    for i in range(size):
        for j in range(size):
            if i != j:
                right.text(j, i, f"{scores[i, j]:.2f}", ha="center", va="center", fontsize=8)
    fig.colorbar(image, ax=right, label="row player's score")
    fig.suptitle(f"{t.game}: {t.games} games per pairing")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100, format="png", metadata=commands.png_metadata("tournament"))
    plt.close(fig)


def outputs(prefix: Path) -> list[Path]:
    """The files ``--out PREFIX`` names: ``PREFIX.json``, ``.md``, ``.png``."""
    return [prefix.with_suffix(suffix) for suffix in SUFFIXES]


def is_record(path: Path) -> bool:
    """True when ``path`` is a tournament's JSON record (this command's own output)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and {"players", "ratings", "pairs", "games_per_pair"} \
        <= set(record)


def is_report(path: Path) -> bool:
    """True when ``path`` is a tournament's Markdown (``# GAME tournament`` first) or its
    PNG (``png_metadata`` says so)."""
    if path.suffix == ".png":
        return commands.is_png_of(path, "tournament")
    title = commands.first_line(path)
    return title.startswith("# ") and title.endswith(" tournament")


def check_outputs(prefix: Path, force: bool) -> None:
    """Check before any game that the outputs of ``prefix`` may be written: each file
    already there is a tournament's (``is_record``, ``is_report``), or its ``PREFIX.json``
    is a tournament's record, or ``force``.

    Raises:
        ValueError: a foreign file there (the message names it and ``--force``).
    """
    record = outputs(prefix)[0]
    ours = record.is_file() and is_record(record)
    for path in outputs(prefix):
        commands.check_output(path, "--out", "a tournament's output",
                     lambda file: ours or is_report(file), force, folder=False)


def save(tournament: Tournament, prefix: Path, command: str) -> list[Path]:
    """Write ``prefix.json``, ``prefix.md`` and ``prefix.png``, each atomically; returns
    their paths."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    paths = outputs(prefix)
    write_atomic(paths[0], json.dumps({**tournament.to_dict(), "command": command}, indent=2)
                 + "\n")
    write_atomic(paths[1], markdown(tournament, command))
    draw(tournament, paths[2])
    return paths


# -- command line ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``boardgym tournament`` argument parser."""
    parser = commands.game_parser(
        prog="boardgym tournament",
        description="Round robin (both seatings) among agents, with Elo ratings.")
    parser.add_argument("specs", nargs="+", metavar="SPEC",
                        help="two or more agents: built-in names (e.g. random, corner_best, "
                             "alphabeta:4, mcts:200) or checkpoint paths")
    parser.add_argument("--games", type=commands.games_count, default=DEFAULT_GAMES,
                        help=f"games per pairing, first player alternating "
                             f"(default {DEFAULT_GAMES}, at most {commands.MAX_GAMES})")
    parser.add_argument("--seed", type=commands.seed_value, default=0,
                        help="seed (default 0)")
    add_backend_options(parser, "the games")
    parser.add_argument("--anchor", help="the player rated 0 (default: random if playing, "
                                         "else the first)")
    parser.add_argument("--bootstrap", default=BOOTSTRAP_SAMPLES,
                        type=commands.int_at_least(1, MAX_BOOTSTRAP, "MAX_BOOTSTRAP"),
                        help=f"bootstrap resamples (default {BOOTSTRAP_SAMPLES}, at most "
                             f"{MAX_BOOTSTRAP})")
    parser.add_argument("--out", type=Path,
                        help="path prefix of the .json/.md/.png outputs "
                             "(default runs/tournament/GAME); files there are overwritten "
                             "only when they are a tournament's own (else --force)")
    commands.add_force_option(parser, "the --out files and the --record file")
    add_openings_option(parser)
    add_random_moves_option(parser)
    add_record_option(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym tournament GAME SPEC... --games N [--workers K] [--backend local|ray]
    [--address ADDR] [--seed S] [--out P] [--force] [--openings N|FILE] [--random-moves P]
    [--record FILE]``.

    Prints the ratings, saves JSON, Markdown and PNG. Returns 0 (2 on a usage error).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    pairs = len(args.specs) * (len(args.specs) - 1) // 2
    bar = commands.progress_bar(pairs * args.games, enabled=True)
    try:
        name = canonical_name(args.game)
        prefix = args.out if args.out is not None else Path("runs/tournament") / name
        check_outputs(prefix, args.force)
        check_record_output(args)
        result = run_tournament(name, args.specs, args.games, args.seed, args.workers,
                                args.anchor, args.bootstrap,
                                None if bar is None else bar.update,
                                args.openings, args.backend, args.address,
                                args.random_moves, args.record)
    except (ValueError, OSError, ImportError) as error:
        parser.error(str(error))
    finally:
        if bar is not None:
            bar.close()
    command = shlex.join(["boardgym", "tournament",
                          *(sys.argv[1:] if argv is None else argv)])
    print(text_report(result))
    print()
    print(pairwise_markdown(result) + fair_markdown(result))
    try:
        saved = save(result, prefix, command)
    except OSError as error:
        parser.error(f"cannot save the results to {prefix}.* ({error.strerror}); choose "
                     "another --out")
    for path in saved:
        print(f"saved {path}")
    return 0


if __name__ == "__main__":
    from boardgym.train.cli import main as run_command

    raise SystemExit(run_command(["tournament", *sys.argv[1:]]))
