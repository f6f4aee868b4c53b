"""What a match comes to: game outcomes, pairs of games, Wilson intervals, ``MatchResult``
and a round robin's ``Tournament``.

A game's outcome is A's result: ``A_WON`` (+1), ``B_WON`` (-1) or ``TIE`` (0). A fair match
(``--openings``) plays each opening twice, the seats swapped (``PAIR`` games): games ``2k``
and ``2k + 1`` form pair ``k``. A pair scores 1, 0.5 or 0 for A (the mean of its two games, a
tie counting half), and the pair scores are the samples of A's score. Its 95% interval is the
Wilson score interval of their mean over the pairs: the variance ``p (1 - p)`` it assumes is
the largest any score in ``[0, 1]`` with mean ``p`` can have, so the interval is
conservative, and it stays open when every pair scores alike.

A noisy match (``random_moves`` p > 0) makes each side play a uniformly random legal move
instead of its own with probability p before each of its moves (``train.match.evaluate``);
its reports say so (``random_moves_line``) and its JSON adds ``random_moves``
(``random_moves_fields``).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from boardgym.train.match.elo import pairings, tables

if TYPE_CHECKING:
    from boardgym.agents import Agent
    from boardgym.train.match.openings import Openings

Z95 = 1.959963984540054
"""Standard normal quantile of 0.975: the z of a two-sided 95% interval."""
A_WON, B_WON, TIE = 1, -1, 0
PAIR = 2
"""Games per opening of a fair match: one in each seating."""
PERCENT = 100
Moves = tuple[int, ...]
"""Every action of one game, its opening included."""
UNDEFINED = "undefined (every game of its pairings went one way)"
"""How the reports show an interval the bootstrap cannot give (``train.match.elo``)."""


class Played(NamedTuple):
    """One game of a match as a worker returns it."""

    result: int
    """A's result: ``A_WON``, ``B_WON`` or ``TIE``."""
    moves: Moves
    a_first: bool
    """Whether A played the first side."""
    opening: int = 0
    """How many of ``moves`` were the opening."""


class Tally:
    """A's outcomes of a stream of games, in game order, and how many distinct games there
    were, kept small: a byte an outcome and a 64-bit hash of each distinct game's moves (two
    games whose hashes collide, about one chance in 10**7 in a million games, count once);
    the moves themselves are not kept."""

    def __init__(self) -> None:
        self._outcomes = array("b")
        self._games: set[int] = set()

    def add(self, outcome: int, moves: Moves) -> None:
        """Count one game: A's ``outcome`` and every action of the game."""
        self._outcomes.append(outcome)
        self._games.add(hash(moves))

    @property
    def outcomes(self) -> tuple[int, ...]:
        """A's outcome in each game so far, in order."""
        return tuple(self._outcomes)

    @property
    def distinct_games(self) -> int:
        """The games so far with distinct move sequences."""
        return len(self._games)


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion.

    Args:
        successes: number of successes, ``0 <= successes <= trials`` (a sum of scores in
            ``[0, 1]`` for a conservative interval of their mean).
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


def pair_scores(outcomes: Sequence[int] | np.ndarray) -> np.ndarray:
    """A's score in each pair of games (1, 0.5 or 0), from A's outcomes in game order; an odd
    last game is left out."""
    games = len(outcomes) // PAIR * PAIR
    points = (np.asarray(outcomes[:games], dtype=float) + 1) / 2
    return points.reshape(-1, PAIR).mean(axis=1)


def pair_fields(outcomes: Sequence[int] | np.ndarray, distinct_games: int) -> dict[str, Any]:
    """The JSON fields of a fair match: ``pairs``, ``distinct_games``, A's mean pair score
    ``a_pair_score`` and its 95% interval over pairs ``a_pair_ci95`` (``[low, high]``).

    Args:
        outcomes: A's outcome in each game, in game order (at least one pair).
        distinct_games: the games with distinct move sequences.
    """
    scores = pair_scores(outcomes)
    low, high = wilson_interval(float(scores.sum()), len(scores))
    return {"pairs": len(scores), "distinct_games": distinct_games,
            "a_pair_score": float(scores.mean()), "a_pair_ci95": [low, high]}


def player_label(player: str | Agent) -> str:
    """How reports name a player: its spec, or its class name when an ``Agent`` was given."""
    return player if isinstance(player, str) else type(player).__name__


def random_moves_fields(random_moves: float) -> dict[str, float]:
    """The JSON field of a noisy match, ``{"random_moves": p}``; none when p is 0 (the
    JSON of a match without random moves is unchanged)."""
    return {"random_moves": random_moves} if random_moves else {}


def random_moves_line(random_moves: float) -> str:
    """What a report says of a noisy match: ``random moves: 10% of each side's moves``."""
    return f"random moves: {random_moves * PERCENT:g}% of each side's moves"


def _percent(fraction: float) -> str:
    """``fraction`` as a percentage with one decimal: ``"62.5%"``."""
    return f"{fraction * PERCENT:.1f}%"


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
        openings: where fair matches' openings came from (None: every game from the start).
        distinct_games: games with distinct move sequences.
        random_moves: the chance of a random move before each move (0: none).
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
    openings: Openings | None = None
    distinct_games: int = 0
    random_moves: float = 0.0

    @property
    def a_win_rate(self) -> float:
        """The fraction of games A won (ties count as not won)."""
        return self.a_wins / self.games

    @property
    def a_win_ci95(self) -> tuple[float, float]:
        """The 95% Wilson interval of A's win rate."""
        return wilson_interval(self.a_wins, self.games)

    @property
    def pairs(self) -> int:
        """Pairs of games from one opening (0 without openings)."""
        return 0 if self.openings is None else self.games // PAIR

    @property
    def a_pair_scores(self) -> np.ndarray:
        """A's score in each pair: 1, 0.5 or 0 (the mean of its two games, a tie half)."""
        return pair_scores(self.outcomes[:self.pairs * PAIR])

    @property
    def a_pair_score(self) -> float:
        """A's mean pair score."""
        return float(self.a_pair_scores.mean())

    @property
    def a_pair_ci95(self) -> tuple[float, float]:
        """The 95% interval of A's pair score (Wilson, over pairs: see the module docstring)."""
        return wilson_interval(float(self.a_pair_scores.sum()), self.pairs)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``boardgym evaluate --json`` (keys as in DESIGN.md); fair
        matches add ``openings``, ``pairs``, ``distinct_games``, ``a_pair_score`` and
        ``a_pair_ci95``, noisy ones ``random_moves``."""
        low, high = self.a_win_ci95
        report = {"game": self.game, "a": self.a, "b": self.b, "games": self.games,
                  "a_wins": self.a_wins, "b_wins": self.b_wins, "ties": self.ties,
                  "a_win_rate": self.a_win_rate, "a_win_ci95": [low, high]}
        if self.openings is not None:
            report.update({"openings": self.openings.json_value(),
                           **pair_fields(self.outcomes, self.distinct_games)})
        report.update(random_moves_fields(self.random_moves))
        return {**report, "seconds": round(self.seconds, 3)}

    def report(self) -> str:
        """The classic three lines (A wins, B wins, ties) and A's 95% Wilson interval, then
        the pairs of a fair match and the random moves of a noisy one."""
        label_a, label_b = (self.a, self.b) if self.a != self.b else (f"{self.a} (A)",
                                                                      f"{self.b} (B)")
        low, high = self.a_win_ci95
        rows = [(f"{label_a} wins", self.a_wins), (f"{label_b} wins", self.b_wins),
                ("Ties", self.ties)]
        lines = [f"{label}: {count} ({_percent(count / self.games)})" for label, count in rows]
        lines.append(f"{label_a} win rate {_percent(self.a_win_rate)}, 95% Wilson interval "
                     f"[{_percent(low)}, {_percent(high)}]  ({self.games} games, "
                     f"{self.seconds:.1f} s)")
        if self.openings is not None:
            low, high = self.a_pair_ci95
            lines.append(f"{self.pairs} pairs from {self.openings.description}, "
                         f"{self.distinct_games} distinct games; {label_a} pair score "
                         f"{_percent(self.a_pair_score)}, 95% interval over pairs "
                         f"[{_percent(low)}, {_percent(high)}]")
        if self.random_moves:
            lines.append(random_moves_line(self.random_moves))
        return "\n".join(lines)


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
        intervals: ``(players, 2)`` bootstrap 95% intervals (NaN: undefined, see
            ``train.match.elo``).
        seconds: wall-clock time.
        openings: where the openings came from (None: every game from the start).
        outcomes: ``(pairs, games)``: the first-listed player's result in each game.
        distinct: per pairing, its games with distinct move sequences.
        random_moves: the chance of a random move before each move (0: none).
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
    openings: Openings | None = None
    outcomes: np.ndarray | None = None
    distinct: tuple[int, ...] = ()
    random_moves: float = 0.0

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

    def interval(self, player: int) -> list[float] | None:
        """Player ``player``'s 95% interval rounded to 0.1, or None where it is undefined."""
        low, high = self.intervals[player]
        return None if np.isnan(low) else [round(float(low), 1), round(float(high), 1)]

    def interval_text(self, player: int) -> str:
        """The interval as the reports print it: ``[low, high]`` or ``UNDEFINED``."""
        low, high = self.intervals[player]
        return UNDEFINED if np.isnan(low) else f"[{low:.0f}, {high:.0f}]"

    def ranking(self) -> list[int]:
        """Player indices, best rating first."""
        return sorted(range(len(self.players)), key=lambda p: -self.ratings[p])

    def to_dict(self) -> dict[str, Any]:
        """The JSON object saved next to the pictures (``random_moves`` only in a noisy
        tournament)."""
        pairs = [{"a": self.players[i], "b": self.players[j], "games": self.games,
                  "a_wins": int(w), "b_wins": int(lost), "ties": int(t),
                  **({} if self.openings is None else self.fair_fields(p))}
                 for p, ((i, j), (w, t, lost)) in enumerate(zip(
                     pairings(len(self.players)), self.counts, strict=True))]
        ratings = [{"player": self.players[p], "elo": round(float(self.ratings[p]), 1),
                    "ci95": self.interval(p)} for p in self.ranking()]
        openings = {} if self.openings is None else {"openings": self.openings.json_value()}
        return {"game": self.game, "players": list(self.players),
                "games_per_pair": self.games, "seed": self.seed, **openings,
                **random_moves_fields(self.random_moves),
                "anchor": self.players[self.anchor], "ratings": ratings, "pairs": pairs,
                "seconds": round(self.seconds, 1)}
