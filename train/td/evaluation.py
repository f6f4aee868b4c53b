"""The TD run's in-run evaluations and its model selection.

Each evaluation judges the network's player (``ntuple:0``) on positions of the *selection*
part of the game's labelled set (``train.quality.agreement.selection_positions``: never the
report part), plays the ladder ``eval_opponents`` and the noisy ladder
``eval_noisy_opponents`` (both sides making a random move with chance
``eval_random_moves`` before each move, as the Othello League judges players), all from a
seed stream of the selection's own (``SELECTION_SEED`` past the run's seed: the reported
matches use other seeds or a fixed suite). Its record goes to ``eval.json`` (``boardgym
plot``), its selection key decides ``best.zip``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boardgym.agents.ntuple.model import NTupleNet
from boardgym.agents.ntuple.player import NTupleGreedy
from boardgym.envs.games import game as game_record
from boardgym.train.common.selection import TD_QUALITY, TD_WIN_RATE, Selection
from boardgym.train.match.evaluate import play_match
from boardgym.train.match.results import MatchResult
from boardgym.train.quality.agreement import Position, judge, selection_positions
from boardgym.train.td.config import TdConfig

SELECTION_SEED = 1_000_003
"""Added to the run's seed for the evaluations' games and tie-breaks."""
STEP_UNIT = "self-play games"
"""What an evaluation record's ``step`` counts (``boardgym plot`` labels its axis so)."""
HALF = 0.5


def evaluation_positions(config: TdConfig) -> list[Position]:
    """The selection positions every evaluation of the run judges (none with
    ``eval_positions: 0``).

    Raises:
        ValueError: fewer positions than ``eval_positions``, or a set on another board.
    """
    if not config.eval_positions:
        return []
    return selection_positions(game_record(config.game), config.eval_positions,
                               config.env_kwargs, config.eval_positions_file,
                               ("eval_positions", "--set eval_positions="))


def score(result: MatchResult) -> float:
    """A's score in a match: (wins + ties / 2) / games."""
    return (result.a_wins + HALF * result.ties) / result.games


def _ladder(config: TdConfig, player: NTupleGreedy, specs: list[str],
            random_moves: float) -> dict[str, MatchResult]:
    seed = SELECTION_SEED + config.seed
    openings = str(config.eval_openings) if config.eval_openings else None
    return {spec: play_match(config.game, player, spec, config.eval_games, seed=seed,
                             alternate=openings is None, config=config.env_kwargs,
                             openings=openings, random_moves=random_moves)
            for spec in specs}


def evaluate(config: TdConfig, net: NTupleNet, positions: list[Position], games: int,
             seconds: float) -> dict[str, Any]:
    """The evaluation record of ``net`` after ``games`` self-play games: ``step``, the
    ``seconds`` trained, ``win_rates`` and ``loss_rates`` against the ladder, their mean
    ``win_score``, ``noisy_win_rates`` and ``noisy_score`` of the noisy ladder, and the
    ``quality`` on ``positions`` (``kept_rate``, ``best_rate``; None without positions)."""
    player = NTupleGreedy(net, "ntuple:0")
    ladder = _ladder(config, player, config.eval_opponents, 0.0)
    noisy = _ladder(config, player, config.eval_noisy_opponents, config.eval_random_moves)
    quality: dict[str, Any] = {"positions": len(positions), "kept_rate": None,
                               "best_rate": None}
    if positions:
        judged = judge(config.game, player, positions, seed=SELECTION_SEED + config.seed,
                       built=player)
        quality["kept_rate"] = judged.kept / judged.decisive if judged.decisive else None
        quality["best_rate"] = judged.best / judged.contested if judged.contested else None
    return {"step": games, "step_unit": STEP_UNIT, "seconds": round(seconds, 1),
            "win_rates": {spec: result.a_win_rate for spec, result in ladder.items()},
            "loss_rates": {spec: result.b_wins / result.games for spec, result in ladder.items()},
            "win_score": _mean([score(result) for result in ladder.values()]),
            "noisy_win_rates": {spec: result.a_win_rate for spec, result in noisy.items()},
            "noisy_score": _mean([score(result) for result in noisy.values()]),
            "quality": quality}


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def selection_key(config: TdConfig, record: dict[str, Any]) -> list[float]:
    """The evaluation's key (``Selection``): the kept share, the ladder's score and the
    noisy ladder's score, quality first (``selection: quality``) or the ladder first
    (``selection: win_rate``); a part the run does not measure counts 0."""
    quality = record["quality"]["kept_rate"]
    parts = {"quality": quality or 0.0, "win": record["win_score"] or 0.0,
             "noisy": record["noisy_score"] or 0.0}
    order = ("quality", "win", "noisy") if config.selection == "quality" else \
        ("win", "quality", "noisy")
    return [float(parts[name]) for name in order]


def new_selection(config: TdConfig) -> Selection:
    """An empty selection of the run's metric."""
    return Selection(TD_QUALITY if config.selection == "quality" else TD_WIN_RATE)


def summary(record: dict[str, Any]) -> str:
    """One line of an evaluation record."""
    quality = record["quality"]
    parts = [f"{name} {quality[key]:.1%}" for name, key in
             (("kept", "kept_rate"), ("best", "best_rate")) if quality[key] is not None]
    parts += [f"{spec} {rate:.0%}/{record['loss_rates'][spec]:.0%}"
              for spec, rate in record["win_rates"].items()]
    parts += [f"noisy {spec} {rate:.0%}" for spec, rate in record["noisy_win_rates"].items()]
    return "; ".join(parts) or "nothing measured"
