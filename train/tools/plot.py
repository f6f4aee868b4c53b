"""Learning curves of a run: win (and loss) rate against each eval opponent over steps.

``boardgym plot RUN_DIR [--out FILE.png]`` reads the run's ``eval.json`` (written by
any trainer: ``boardgym train``, ``selfplay``, ``az``, ``td``) and draws one line per opponent
(solid: won, dashed: lost), and, when the run judged its bar on games of its own
(``bar_games``), one dotted line per bar opponent for those games, and for the noisy ladder
of a td run (both sides making random moves) one dash-dot line per opponent; when the run
judged quality (``--eval-quality N``) a second panel below shows the outcome-kept and
best-move shares on the selection positions, with the step of ``best.zip`` marked. The PNG goes to
``RUN_DIR/learning_curve.png`` unless ``--out`` says otherwise, written atomically; a file
already there is overwritten only when it is a learning curve this command drew (or the run
folder's own ``learning_curve.png``), otherwise ``--force`` is needed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from boardgym.files import atomic_path
from boardgym.train.common.commands import (
    CommandParser,
    add_force_option,
    check_output,
    is_png_of,
    png_metadata,
)
from boardgym.train.common.runs import EVAL_FILE

DEFAULT_PNG = "learning_curve.png"
FIGURE_SIZE = (7.0, 4.0)
QUALITY_FIGURE_SIZE = (7.0, 6.5)
DPI = 120
PERCENT = 100
GAME_LINES = (("win_rates", "-", "o", "won"), ("loss_rates", "--", None, "lost"),
              ("bar_rates", ":", None, "bar games won"),
              ("noisy_win_rates", "-.", None, "won, random moves"))
"""The games panel's lines: key of an eval record, line style, marker and label."""
QUALITY_LINES = (("kept_rate", "outcome kept"), ("best_rate", "best move"))
"""The quality panel's lines: key of an eval record's ``"quality"`` and label."""
LEGEND_PLACE = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": "small"}
"""Where a panel's legend goes: outside the axes, to their right, so it covers no line."""
BEST_FILE = "best.json"
"""Written by training next to ``eval.json``: the step of ``best.zip`` (``train.runs``)."""


def read_history(run_dir: Path) -> list[dict[str, Any]]:
    """The eval records of the run in ``run_dir``.

    Raises:
        ValueError: no ``eval.json`` there, or it holds no evaluation yet.
    """
    path = run_dir / EVAL_FILE
    if not path.is_file():
        raise ValueError(f"{path} not found; pass a run folder made by `boardgym train`")
    history = json.loads(path.read_text())
    if not isinstance(history, list):
        raise ValueError(f"{path} is not a list of evaluations; pass a run folder made by "
                         "`boardgym train`")
    if not history:
        raise ValueError(f"{path} has no evaluation yet; let the run reach eval_every steps")
    return list(history)


def curves(history: list[dict[str, Any]],
           key: str = "win_rates") -> dict[str, tuple[list[int], list[float]]]:
    """``{opponent: (steps, rates)}`` from eval records; ``key`` is ``"win_rates"`` or
    ``"loss_rates"`` (records without it are skipped)."""
    lines: dict[str, tuple[list[int], list[float]]] = {}
    for record in history:
        for spec, rate in record.get(key, {}).items():
            steps, rates = lines.setdefault(spec, ([], []))
            steps.append(record["step"])
            rates.append(rate)
    return lines


def quality_curves(history: list[dict[str, Any]]) -> dict[str, tuple[list[int], list[float]]]:
    """``{label: (steps, shares)}`` of the quality figures (``QUALITY_LINES``) of the eval
    records that have them; empty when the run did not judge quality."""
    lines: dict[str, tuple[list[int], list[float]]] = {}
    for record in history:
        for key, label in QUALITY_LINES:
            share = record.get("quality", {}).get(key)
            if share is not None:
                steps, shares = lines.setdefault(label, ([], []))
                steps.append(record["step"])
                shares.append(share)
    return lines


def x_label(history: list[dict[str, Any]]) -> str:
    """What the records' ``step`` counts: their ``step_unit`` where they say (a td run:
    self-play games), self-play positions in an az run (its records have an
    ``iteration``), environment steps in a PPO run."""
    if isinstance(history[0].get("step_unit"), str):
        return str(history[0]["step_unit"])
    return "self-play positions" if "iteration" in history[0] else "training steps"


def best_step(run_dir: Path) -> int | None:
    """The step of the run's ``best.zip`` (from ``best.json``), if recorded."""
    path = run_dir / BEST_FILE
    if not path.is_file():
        return None
    step = json.loads(path.read_text()).get("step")
    return step if isinstance(step, int) and step >= 0 else None


def draw_quality(axes: Any, lines: dict[str, tuple[list[int], list[float]]],
                 best: int | None, x_axis: str) -> None:
    """The quality panel: one line per share, and the step of ``best.zip``; ``x_axis``
    names the x axis."""
    for label, (steps, shares) in lines.items():
        axes.plot(steps, [PERCENT * share for share in shares], marker="o", markersize=3,
                  label=label)
    if best is not None:
        axes.axvline(best, color="grey", linestyle=":", label="best.zip")
    axes.set_xlabel(x_axis)
    axes.set_ylabel("labelled positions judged (%)")
    axes.set_ylim(0, PERCENT)
    axes.grid(alpha=0.3)
    axes.legend(**LEGEND_PLACE)


def draw_games(axes: Any, history: list[dict[str, Any]]) -> None:
    """The games panel: per eval opponent its win rate (solid) and loss rate (dashed), and
    per bar opponent the win rate of the bar's own games (dotted, ``"bar_rates"``), per
    noisy opponent the win rate with random moves (dash-dot, ``"noisy_win_rates"``), each
    opponent in one colour."""
    colours: dict[str, Any] = {}
    for key, style, marker, outcome in GAME_LINES:
        for spec, (steps, rates) in curves(history, key).items():
            line, = axes.plot(steps, [PERCENT * rate for rate in rates], linestyle=style,
                              marker=marker, markersize=3, color=colours.get(spec),
                              label=f"{spec} ({outcome})")
            colours.setdefault(spec, line.get_color())
    axes.set_ylabel("games (%)")
    axes.set_ylim(0, PERCENT)
    axes.grid(alpha=0.3)
    axes.legend(title="against", **LEGEND_PLACE)


def plot(run_dir: Path, out: Path | None = None, title: str | None = None) -> Path:
    """Draw the learning curves of ``run_dir`` to a PNG (with a quality panel when the run
    judged quality); returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    history = read_history(run_dir)
    quality = quality_curves(history)
    if quality:
        figure, (axes, lower) = plt.subplots(2, 1, sharex=True, figsize=QUALITY_FIGURE_SIZE)
        draw_quality(lower, quality, best_step(run_dir), x_label(history))
    else:
        figure, axes = plt.subplots(figsize=FIGURE_SIZE)
    draw_games(axes, history)
    if not quality:
        axes.set_xlabel(x_label(history))
    axes.set_title(title or run_dir.name)
    figure.tight_layout()
    target = out or run_dir / DEFAULT_PNG
    with atomic_path(target) as tmp:  # bbox "tight": the legends outside the axes too
        figure.savefig(tmp, dpi=DPI, bbox_inches="tight", format="png",
                       metadata=png_metadata("plot"))
    plt.close(figure)
    return target


def check_target(run_dir: Path, out: Path | None, force: bool) -> None:
    """Check before drawing that the PNG may be written: a file already at ``out`` (default
    ``RUN_DIR/learning_curve.png``) is a learning curve (``png_metadata``), the run folder's
    own one, or ``force``.

    Raises:
        ValueError: another file there, or no folder for it (one line naming the fix).
    """
    default = run_dir / DEFAULT_PNG
    check_output(out or default, "--out", "a learning curve",
                 lambda path: path == default or is_png_of(path, "plot"), force)


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym plot``: returns the exit code."""
    parser = CommandParser(prog="boardgym plot", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path, help="a run folder (runs/GAME__ALGO__SEED__TIME)")
    parser.add_argument("--out", type=Path, help=f"PNG path (default RUN_DIR/{DEFAULT_PNG})")
    parser.add_argument("--title", help="figure title (default: the run folder's name)")
    add_force_option(parser, "the --out file")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        read_history(args.run_dir)
        check_target(args.run_dir, args.out, args.force)
        print(plot(args.run_dir, args.out, args.title))
    except (ValueError, OSError) as error:
        parser.error(str(error))
    return 0


if __name__ == "__main__":
    from boardgym.train.cli import main as run_command

    raise SystemExit(run_command(["plot", *sys.argv[1:]]))
