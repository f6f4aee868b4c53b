"""Round-robin tournaments with Elo ratings (``boardgym tournament``).

Every pair of players meets ``games`` times, the first player alternating (the lower-listed
player moves first in even-numbered games), so both seatings are played equally. Tournament
game ``g`` draws all its randomness from ``train.match.evaluate.game_rng(seed, g)``: results
depend only on the seed, never on the number of worker processes or the backend
(``train.common.backends``).

Ratings are the Elo fit of the whole table with percentile bootstrap 95% intervals
(``train.match.elo``), anchored so that the anchor player (``random`` when it takes part,
otherwise the first player listed) is at 0.

Fair tournaments (``--openings``, see ``train.match.openings``): every pairing plays the same
openings, games ``2k`` and ``2k + 1`` of a pairing both from opening ``k`` with the seats
swapped. Each pairing then also reports its distinct games and the first-listed player's pair
score with its 95% interval over pairs (as ``boardgym evaluate`` does).
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
from typing import Any

import numpy as np

from boardgym import agents
from boardgym.agents import Agent
from boardgym.envs.games import canonical_name
from boardgym.train.common.backends import (
    Backend,
    add_backend_options,
    connect,
    flat_map,
    task_ranges,
)
from boardgym.train.common.commands import check_at_least, game_parser, int_at_least, progress_bar
from boardgym.train.match import openings as fair
from boardgym.train.match.elo import bootstrap_elo, pairings, tables
from boardgym.train.match.evaluate import (
    add_openings_option,
    check_boards,
    fair_openings,
    game_rng,
    play_moves,
)
from boardgym.train.match.results import A_WON, B_WON, PAIR, TIE, Moves, pair_fields

DEFAULT_ANCHOR = "random"
BOOTSTRAP_SAMPLES = 1000
GAMES_PER_TASK = 4
"""Games handed to a worker process (or a Ray task) at a time."""
DEFAULT_GAMES = 20
OUTCOMES = (A_WON, TIE, B_WON)
"""Column order of the per-pairing counts: first-listed player's wins, ties, losses."""


# -- playing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Schedule:
    """Who plays whom in tournament game ``g``; picklable for worker processes."""

    game: str
    specs: tuple[str, ...]
    games: int
    seed: int
    openings: fair.Openings | None = None

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """The pairings ``(i, j)``, ``i < j``, in ``train.match.elo.pairings`` order."""
        return pairings(len(self.specs))

    def play(self, players: Sequence[Agent], index: int) -> tuple[int, Moves]:
        """Tournament game ``index``: the first-listed player's result (+1/0/-1) and the
        moves (from opening ``(index % games) // 2`` with openings)."""
        i, j = self.pairs[index // self.games]
        local = index % self.games
        opening = () if self.openings is None else self.openings.opening(local // PAIR)
        return play_moves(self.game, players[i], players[j], game_rng(self.seed, index),
                          local % PAIR == 0, opening=opening)

    def players(self) -> list[Agent]:
        """Every player, built from its spec."""
        return [agents.make(self.game, spec) for spec in self.specs]

    def play_games(self, players: Sequence[Agent], indices: range) -> list[tuple[int, Moves]]:
        """Games ``indices`` in order (one task of ``train.common.backends.flat_map``)."""
        return [self.play(players, index) for index in indices]


def play_round_robin(schedule: _Schedule, backend: Backend,
                     advance: Callable[[int], object] | None,
                     players: Sequence[Agent]) -> list[tuple[int, Moves]]:
    """Every game's result and moves in game order; ``advance(n)`` (if given) is called as
    ``n`` games finish. In this process the games are played one by one with ``players`` (built
    from the specs); each worker process builds its own once and plays ``GAMES_PER_TASK`` at
    a time (whole pairs of games: it is even)."""
    tasks = task_ranges(GAMES_PER_TASK, backend, len(schedule.pairs) * schedule.games)
    return list(flat_map(schedule.play_games, tasks, schedule.players, backend, list(players),
                         advance))


@dataclass(frozen=True)
class Tournament:
    """A finished round robin.

    Attributes:
        game: canonical game name.
        players: the specs, in the order given.
        games: games per pairing.
        seed: the tournament seed.
        counts: ``(pairs, 3)``: per pairing ``(i, j)``, ``i < j`` in
            ``train.match.elo.pairings`` order, player i's wins, ties and losses.
        anchor: index of the player rated 0.
        ratings: Elo per player.
        intervals: ``(players, 2)`` bootstrap 95% intervals.
        seconds: wall-clock time.
        openings: where the openings came from (None: every game from the start).
        outcomes: ``(pairs, games)``: the first-listed player's result in each game.
        distinct: per pairing, its games with distinct move sequences.
    """

    game: str
    players: tuple[str, ...]
    games: int
    seed: int
    counts: np.ndarray
    anchor: int
    ratings: np.ndarray
    intervals: np.ndarray
    seconds: float
    openings: fair.Openings | None = None
    outcomes: np.ndarray | None = None
    distinct: tuple[int, ...] = ()

    def fair_fields(self, pairing: int) -> dict[str, Any]:
        """A fair pairing's extra JSON fields: pairs, distinct games, pair score and interval
        (``train.match.results.pair_fields``)."""
        assert self.outcomes is not None, "no games recorded"
        return pair_fields(self.outcomes[pairing], self.distinct[pairing])

    def score_table(self) -> np.ndarray:
        """``(n, n)``: row player's score fraction against the column player (NaN diagonal)."""
        points, games = tables(self.counts.astype(float), len(self.players))
        with np.errstate(invalid="ignore"):
            return points / games

    def ranking(self) -> list[int]:
        """Player indices, best rating first."""
        return sorted(range(len(self.players)), key=lambda p: -self.ratings[p])

    def to_dict(self) -> dict[str, Any]:
        """The JSON object saved next to the pictures."""
        pairs = [{"a": self.players[i], "b": self.players[j], "games": self.games,
                  "a_wins": int(w), "b_wins": int(lost), "ties": int(t),
                  **({} if self.openings is None else self.fair_fields(p))}
                 for p, ((i, j), (w, t, lost)) in enumerate(zip(
                     pairings(len(self.players)), self.counts, strict=True))]
        ratings = [{"player": self.players[p], "elo": round(float(self.ratings[p]), 1),
                    "ci95": [round(float(x), 1) for x in self.intervals[p]]}
                   for p in self.ranking()]
        openings = {} if self.openings is None else {"openings": self.openings.json_value()}
        return {"game": self.game, "players": list(self.players),
                "games_per_pair": self.games, "seed": self.seed, **openings,
                "anchor": self.players[self.anchor], "ratings": ratings, "pairs": pairs,
                "seconds": round(self.seconds, 1)}


def run_tournament(game: str, specs: Sequence[str], games: int, seed: int = 0,
                   workers: int | None = None, anchor: str | None = None,
                   bootstrap: int = BOOTSTRAP_SAMPLES,
                   advance: Callable[[int], object] | None = None,
                   openings: str | None = None, backend: str = "local",
                   address: str | None = None) -> Tournament:
    """Play a round robin among ``specs`` and rate the players.

    Args:
        game: a game name or alias.
        specs: two or more distinct agent specs (built-in names or checkpoint paths).
        games: games per pairing, >= 1; the first player alternates.
        seed: tournament seed, >= 0.
        workers: tasks running at once (``train.common.backends.Backend``: local processes, default
            1; Ray tasks, default the cluster's CPUs); same results for any number.
        anchor: the spec rated 0 (default ``random`` if present, else the first spec).
        bootstrap: bootstrap resamples for the intervals, >= 1.
        advance: called with the number of games just finished (a progress bar's update;
            None: not called).
        openings: fair games (``train.match.openings.openings_from``): a number of random plies
            (``"8"``) or the path of an opening suite; ``games`` must then be even.
        backend: ``"local"`` processes or ``"ray"`` (same results).
        address: the Ray cluster to join (default ``RAY_ADDRESS``, else a local Ray).

    Raises:
        ValueError: unknown game or agent, fewer than two or repeated specs, an anchor that is
            not a player, a count below its minimum, bad openings, or a Ray backend that
            cannot start.
    """
    name = canonical_name(game)
    specs = tuple(specs)
    where = Backend(backend, workers, address)
    anchor_index, players = _check(name, specs, games, seed, anchor, bootstrap)
    source = None if openings is None else fair_openings(name, openings, games, seed)
    connect(where)
    schedule = _Schedule(name, specs, games, seed, source)
    start = time.perf_counter()
    played = play_round_robin(schedule, where, advance, players)
    results = np.array([result for result, _ in played]).reshape(-1, games)
    distinct = tuple(len({moves for _, moves in played[p * games:(p + 1) * games]})
                     for p in range(len(schedule.pairs)))
    counts = np.stack([(results == outcome).sum(axis=1) for outcome in OUTCOMES], axis=1)
    ratings, intervals = bootstrap_elo(counts, len(specs), anchor_index, bootstrap,
                                       np.random.default_rng([seed, len(results.flat)]))
    return Tournament(name, specs, games, seed, counts, anchor_index, ratings, intervals,
                      time.perf_counter() - start, source, results, distinct)


def _check(game: str, specs: tuple[str, ...], games: int, seed: int, anchor: str | None,
           bootstrap: int) -> tuple[int, list[Agent]]:
    """Validate the arguments of ``run_tournament``; returns the anchor's index and the
    players (each built once, here)."""
    if len(specs) < 2 or len(set(specs)) != len(specs):
        raise ValueError(f"a tournament needs two or more distinct players, got {list(specs)}")
    check_at_least(games=(games, 1), seed=(seed, 0), bootstrap=(bootstrap, 1))
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
    lines = [f"# {t.game} tournament", "", f"`{command}`", "",
             f"{t.games} games per pairing, {seating}; Elo anchored at "
             f"`{t.players[t.anchor]}` = 0, 95% bootstrap intervals.", "",
             "| rank | player | Elo | 95% interval |", "|---:|---|---:|---|"]
    lines += [f"| {rank} | `{t.players[p]}` | {t.ratings[p]:.0f} | "
              f"[{t.intervals[p, 0]:.0f}, {t.intervals[p, 1]:.0f}] |"
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
    """The ratings as a plain-text table, best first."""
    t = tournament
    width = max(len(spec) for spec in t.players)
    lines = [f"{'rank':>4}  {'player':<{width}}  {'Elo':>6}  95% interval"]
    lines += [f"{rank:>4}  {t.players[p]:<{width}}  {t.ratings[p]:>6.0f}  "
              f"[{t.intervals[p, 0]:.0f}, {t.intervals[p, 1]:.0f}]"
              for rank, p in enumerate(t.ranking(), 1)]
    return "\n".join(lines)


def draw(tournament: Tournament, path: Path) -> None:
    """Save a PNG: ratings with 95% error bars, and the pairwise score heat map."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t, order = tournament, tournament.ranking()
    labels = [t.players[p] for p in order]
    size = len(order)
    fig, (left, right) = plt.subplots(1, 2, figsize=(7 + size, 1.5 + 0.6 * size))
    errors = np.abs(t.intervals[order].T - t.ratings[order])
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
    fig.savefig(path, dpi=100)
    plt.close(fig)


def save(tournament: Tournament, prefix: Path, command: str) -> list[Path]:
    """Write ``prefix.json``, ``prefix.md`` and ``prefix.png``; returns their paths."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    paths = [prefix.with_suffix(suffix) for suffix in (".json", ".md", ".png")]
    paths[0].write_text(json.dumps({**tournament.to_dict(), "command": command}, indent=2)
                        + "\n")
    paths[1].write_text(markdown(tournament, command))
    draw(tournament, paths[2])
    return paths


# -- command line ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``boardgym tournament`` argument parser."""
    parser = game_parser(
        prog="boardgym tournament",
        description="Round robin (both seatings) among agents, with Elo ratings.")
    parser.add_argument("specs", nargs="+", metavar="SPEC",
                        help="two or more agents: built-in names (e.g. random, corner_best, "
                             "alphabeta:4, mcts:200) or checkpoint paths")
    parser.add_argument("--games", type=int_at_least(1), default=DEFAULT_GAMES,
                        help=f"games per pairing, first player alternating "
                             f"(default {DEFAULT_GAMES})")
    parser.add_argument("--seed", type=int_at_least(0), default=0, help="seed (default 0)")
    add_backend_options(parser, "the games")
    parser.add_argument("--anchor", help="the player rated 0 (default: random if playing, "
                                         "else the first)")
    parser.add_argument("--bootstrap", type=int_at_least(1), default=BOOTSTRAP_SAMPLES,
                        help=f"bootstrap resamples (default {BOOTSTRAP_SAMPLES})")
    parser.add_argument("--out", type=Path,
                        help="path prefix of the .json/.md/.png outputs "
                             "(default runs/tournament/GAME)")
    add_openings_option(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym tournament GAME SPEC... --games N [--workers K] [--backend local|ray]
    [--address ADDR] [--seed S] [--out P]``.

    Prints the ratings, saves JSON, Markdown and PNG. Returns 0 (2 on a usage error).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    pairs = len(args.specs) * (len(args.specs) - 1) // 2
    bar = progress_bar(pairs * args.games, enabled=True)
    try:
        name = canonical_name(args.game)
        result = run_tournament(name, args.specs, args.games, args.seed, args.workers,
                                args.anchor, args.bootstrap,
                                None if bar is None else bar.update,
                                args.openings, args.backend, args.address)
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
    prefix = args.out if args.out is not None else Path("runs/tournament") / name
    try:
        saved = save(result, prefix, command)
    except OSError as error:
        parser.error(f"cannot save the results to {prefix}.* ({error.strerror}); choose "
                     "another --out")
    for path in saved:
        print(f"saved {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
