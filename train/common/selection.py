"""Model selection, for every trainer: which evaluation a run's ``best.zip`` holds.

An evaluation is ranked by its *selection key*, a list of floats compared
lexicographically (most important first); ``Selection`` keeps the best key, its step and
how many evaluations have passed since (for ``patience``), and is saved as ``best.json``
and in the resume state. The metric names the key's parts (``KEY_NAMES``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

QUALITY, WIN_RATE = "quality", "win_rate"
"""Selection metrics: the quality score, then the win score; or the win score alone."""
TD_QUALITY, TD_WIN_RATE = "td_quality", "td_win_rate"
"""The TD trainer's metrics: quality first, or the win score first (``train.td``)."""
KEY_NAMES = {QUALITY: ("quality_score", "win_score"), WIN_RATE: ("win_score",),
             TD_QUALITY: ("quality_score", "win_score", "noisy_score"),
             TD_WIN_RATE: ("win_score", "quality_score", "noisy_score")}
"""The parts of each metric's selection key, most important first."""


BAR_NAME = "bar_held"
"""The first part of the selection key of a run with an ``eval_bar``."""


def selection_key(win_score: float, quality_score: float | None,
                  bar_held: bool | None = None) -> list[float]:
    """What evaluations are ranked by: ``[quality_score, win_score]`` when the run judges
    quality (ties in quality broken by the win score), else ``[win_score]``; with an
    ``eval_bar`` (``bar_held`` not None), preceded by 1.0 where the evaluation held the bar
    and 0.0 where not, so that every evaluation holding it ranks above every other."""
    key = [win_score] if quality_score is None else [quality_score, win_score]
    return key if bar_held is None else [float(bar_held), *key]


@dataclass
class Selection:
    """Which evaluation ``best.zip`` holds, and how many evaluations since it improved.

    Attributes:
        metric: ``QUALITY`` or ``WIN_RATE`` (see ``selection_key``).
        bar: whether the key starts with ``BAR_NAME`` (the run has an ``eval_bar``).
        key: the best evaluation's selection key, compared lexicographically; empty before
            the first evaluation.
        step: the best evaluation's step (-1 before the first).
        stalled: evaluations since the best one.
    """

    metric: str = WIN_RATE
    key: list[float] = field(default_factory=list)
    step: int = -1
    stalled: int = 0
    bar: bool = False

    @property
    def key_names(self) -> tuple[str, ...]:
        """The names of the key's parts, most important first."""
        return (BAR_NAME,) * self.bar + KEY_NAMES[self.metric]

    def offer(self, key: Sequence[float], step: int) -> bool:
        """Whether the evaluation of ``key`` at ``step`` is a new best (then it is kept as
        such; else ``stalled`` grows by one)."""
        if self.key and list(key) <= self.key:
            self.stalled += 1
            return False
        self.key, self.step, self.stalled = list(key), step, 0
        return True

    def to_dict(self) -> dict[str, Any]:
        """Plain data: ``best.json``'s content and the resume state's ``"selection"``."""
        return {"metric": self.metric, "step": self.step, "stalled": self.stalled,
                **dict(zip(self.key_names, self.key, strict=False))}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Selection:
        """The selection saved by ``to_dict``."""
        selection = cls(data["metric"], [], data["step"], data["stalled"], BAR_NAME in data)
        selection.key = [data[name] for name in selection.key_names if name in data]
        return selection

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Selection:
        """The selection of a checkpoint's training state (one written before selection on
        quality has only its ``best_score``: the best win score, -1 before any)."""
        if "selection" in state:
            return cls.from_dict(state["selection"])
        best = float(state["best_score"])
        return cls(WIN_RATE, [best] if best > -1 else [])
