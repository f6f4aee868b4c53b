"""One player's agreement with perfect play, as numbers and as reports: the ``Quality``
record of ``boardgym quality`` (its shares, their 95% Wilson intervals, its JSON object), the
text table and the bar chart.

The shares are those of ``train.quality.agreement``: *outcome kept* over the decisive
positions, *best move* over the contested ones; a share with no position to count is None
(``-`` in the table, 0 in the chart, an interval of ``(0, 1)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from boardgym.envs.games.core import Game
from boardgym.files import atomic_path
from boardgym.train.common.commands import is_png_of, png_metadata
from boardgym.train.match.results import wilson_interval

PERCENT = 100
MS_PER_SECOND = 1000
PNG_DPI = 120
LEGEND_ROOM = 1.2
"""The chart's height over 100%: room for the legend above the bars."""


@dataclass(frozen=True)
class Quality:
    """One player's agreement with perfect play.

    Attributes:
        player: the player's spec.
        positions: positions asked.
        decisive: positions whose moves differ in outcome class.
        kept: decisive positions where the player kept the best outcome class.
        contested: positions whose moves differ in value.
        best: contested positions where the player played a move of the highest value.
        seconds: total time of the player's ``act`` calls.
    """

    player: str
    positions: int
    decisive: int
    kept: int
    contested: int
    best: int
    seconds: float

    @property
    def ms_per_move(self) -> float:
        """Mean milliseconds of one ``act`` call."""
        return self.seconds * MS_PER_SECOND / self.positions

    def kept_ci95(self) -> tuple[float, float]:
        """95% Wilson interval of the outcome-kept share ((0, 1) with no decisive position)."""
        return _ci95(self.kept, self.decisive)

    def best_ci95(self) -> tuple[float, float]:
        """95% Wilson interval of the best-move share ((0, 1) with no contested position)."""
        return _ci95(self.best, self.contested)

    @property
    def kept_rate(self) -> float | None:
        """The outcome-kept share (None without decisive positions)."""
        return _rate(self.kept, self.decisive)

    @property
    def best_rate(self) -> float | None:
        """The best-move share (None without contested positions)."""
        return _rate(self.best, self.contested)

    @property
    def score(self) -> float:
        """One number for model selection: the mean of the outcome-kept and best-move shares
        (those with positions to count; 0 when neither has)."""
        rates = [rate for rate in (self.kept_rate, self.best_rate) if rate is not None]
        return float(np.mean(rates)) if rates else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of one player in ``boardgym quality --json``."""
        return {"player": self.player, "positions": self.positions,
                "decisive": self.decisive, "kept": self.kept,
                "kept_rate": self.kept_rate, "kept_ci95": list(self.kept_ci95()),
                "contested": self.contested, "best": self.best,
                "best_rate": self.best_rate, "best_ci95": list(self.best_ci95()),
                "ms_per_move": round(self.ms_per_move, 3)}


def _rate(successes: int, trials: int) -> float | None:
    """The share ``successes / trials``, None without trials."""
    return successes / trials if trials else None


def _ci95(successes: int, trials: int) -> tuple[float, float]:
    """The 95% Wilson interval of a share, ``(0, 1)`` without trials."""
    return wilson_interval(successes, trials) if trials else (0.0, 1.0)


# -- the table and the chart -------------------------------------------------------------------


def _share(successes: int, trials: int, interval: tuple[float, float]) -> str:
    if not trials:
        return "-"
    low, high = interval
    return (f"{successes / trials * PERCENT:5.1f}% [{low * PERCENT:5.1f}, {high * PERCENT:5.1f}]"
            f" of {trials}")


def table(results: Sequence[Quality]) -> str:
    """The quality table: one row per player."""
    width = max(len("player"), *(len(result.player) for result in results))
    header = (f"{'player':<{width}}  {'outcome kept (95% CI)':<30}  {'best move (95% CI)':<30}"
              "  ms/move")
    rows = [f"{result.player:<{width}}  "
            f"{_share(result.kept, result.decisive, result.kept_ci95()):<30}  "
            f"{_share(result.best, result.contested, result.best_ci95()):<30}  "
            f"{result.ms_per_move:7.2f}" for result in results]
    return "\n".join([header, *rows])


def is_chart(path: Path) -> bool:
    """True when ``path`` is a chart ``write_png`` drew (``boardgym quality --png``)."""
    return is_png_of(path, "quality")


def write_png(path: str | Path, game: Game, results: Sequence[Quality]) -> None:
    """A bar chart of both shares per player, with their 95% intervals as error bars,
    written atomically (and marked as ``boardgym quality``'s: ``is_chart``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    width = 0.4
    x = np.arange(len(results))
    figure, axes = plt.subplots(figsize=(max(4.0, 1.2 * len(results) + 2), 4))
    for offset, label, rate, interval in (
            (-width / 2, "outcome kept", lambda r: r.kept_rate, Quality.kept_ci95),
            (width / 2, "best move", lambda r: r.best_rate, Quality.best_ci95)):
        heights = np.array([(rate(result) or 0.0) * PERCENT for result in results])
        bounds = np.array([interval(result) for result in results]) * PERCENT
        errors = np.clip(np.stack([heights - bounds[:, 0], bounds[:, 1] - heights]), 0, None)
        axes.bar(x + offset, heights, width, yerr=errors, capsize=3, label=label)
    axes.set_xticks(x, [result.player for result in results], rotation=20, ha="right")
    axes.set_ylim(0, PERCENT * LEGEND_ROOM)
    axes.set_yticks(np.arange(0, PERCENT + 1, PERCENT // 5))
    axes.set_ylabel("% of positions (95% interval)")
    axes.set_title(f"{game.title}: agreement with perfect play")
    axes.legend(loc="upper center", ncols=2)
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, dpi=PNG_DPI, format="png", metadata=png_metadata("quality"))
    plt.close(figure)
