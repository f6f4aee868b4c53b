"""Training that generalises: random training openings, the league's opponent mix, model
selection on play quality (``--eval-quality``, ``patience``)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from boardgym.agents.checkpoint import POLICY_ENTRY, read_tensors
from boardgym.agents.ppo.policy import read_metadata
from boardgym.envs.games import game as game_record
from boardgym.train.common.selection import QUALITY, Selection, selection_key
from boardgym.train.match.openings import replay, unfinished_opening
from boardgym.train.ppo import trainer as ppo
from boardgym.train.ppo.config import load_config
from boardgym.train.ppo.environments import OpponentPool, make_vec_env
from boardgym.train.ppo.runs import Run
from boardgym.train.ppo.selfplay import SNAPSHOTS, share_snapshot_weight
from boardgym.train.quality.agreement import (
    default_positions,
    judge,
    load_positions,
    selection_positions,
)
from boardgym.train.tools import plot
from tests.paths import ROOT
from tests.runs import TINY_RUN

GAMES = ["reversi", "four_in_a_row", "tictactoe"]
TINY = [*TINY_RUN, "--set", "learning_rate=0.003"]
DRAWS = 20_000
TOLERANCE = 0.02
"""Largest gap between a drawn share and its weight's share: ~4.5 standard deviations at
DRAWS draws, and the draws are seeded, so the test cannot flake."""


# -- openings ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_openings_are_legal_unfinished_and_reproducible(name: str) -> None:
    record = game_record(name)
    for seed in range(40):
        actions, state = unfinished_opening(record, 0, 12, np.random.default_rng(seed))
        assert len(actions) <= 12
        assert replay(record, actions) == state  # every ply legal, from the start position
        assert not record.rules.is_terminal(state)
        again = unfinished_opening(record, 0, 12, np.random.default_rng(seed))
        assert again == (actions, state)


def test_openings_stop_before_a_finished_position() -> None:
    # a tic-tac-toe game cannot last 20 plies: the opening stops where every move would end it
    record = game_record("tictactoe")
    lengths = set()
    for seed in range(30):
        actions, state = unfinished_opening(record, 20, 20, np.random.default_rng(seed))
        lengths.add(len(actions))
        assert not record.rules.is_terminal(state)
        assert all(record.rules.is_terminal(record.rules.apply(state, int(action)))
                   for action in np.flatnonzero(record.rules.legal_mask(state)))
    assert max(lengths) <= 8


def opening_positions(seed: int, steps: int = 40) -> list[list[str]]:
    """The positions of a 4-env training env with openings over ``steps`` random steps."""
    config = load_config("tictactoe", overrides={"n_envs": 4, "opening_plies": [1, 5],
                                                 "opponents": ["rules", "random"],
                                                 "opponent_weights": None})
    vec_env = make_vec_env(config, OpponentPool("tictactoe", config.opponents))
    vec_env.seed(seed)
    vec_env.reset()
    rng = np.random.default_rng(seed)
    seen = [vec_env.env_method("position_texts")[0]]
    for _ in range(steps):
        masks = np.array(vec_env.env_method("action_masks"))
        assert masks.any(axis=1).all()  # the learner always has a move
        vec_env.step(np.array([rng.choice(np.flatnonzero(mask)) for mask in masks]))
        seen.append(vec_env.env_method("position_texts")[0])
    vec_env.close()
    return seen


def test_training_env_starts_games_from_openings_reproducibly() -> None:
    first = opening_positions(3)
    assert first == opening_positions(3)
    assert first != opening_positions(4)
    assert "---------" not in first[0]  # at least one ply in every opening


def test_bad_training_options_are_refused_in_one_line(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    for bad in (["--set", "opening_plies=[3,1]"], ["--set", "opening_plies=[2]"],
                ["--eval-quality", "100000"], ["--set", "patience=-1"]):
        with pytest.raises(SystemExit) as exit_info:
            ppo.main(["tictactoe", "--runs-dir", str(tmp_path), *TINY, *bad])
        assert exit_info.value.code == 2
        assert capsys.readouterr().err.count("\n") == 1
    assert not any(tmp_path.iterdir())


# -- the league --------------------------------------------------------------------------------


def drawn_shares(pool: OpponentPool, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    agents = {id(pool.agent(spec)): spec for spec in pool.specs}
    counts = dict.fromkeys(pool.specs, 0)
    for _ in range(DRAWS):
        counts[agents[id(pool.sample(rng))]] += 1
    return {spec: count / DRAWS for spec, count in counts.items()}


def test_league_draws_opponents_in_the_configured_proportions(tmp_path: Path) -> None:
    config = load_config("tictactoe", overrides={
        "opponents": ["perfect", "alphabeta:2", "random"], "opponent_weights": [3, 2, 1],
        "snapshot_weight": 2.0})
    pool = ppo.default_pool(config)
    run = Run(config, tmp_path, pool)
    (tmp_path / SNAPSHOTS).mkdir()
    for name in ("step_1.zip", "step_2.zip", "step_3.zip", "step_4.zip"):
        shutil.copy(ROOT / "checkpoints" / "tictactoe.zip", tmp_path / SNAPSHOTS / name)
        pool.add(str(tmp_path / SNAPSHOTS / name))
    share_snapshot_weight(run)
    expected = {"perfect": 3 / 8, "alphabeta:2": 2 / 8, "random": 1 / 8,
                **{spec: 0.5 / 8 for spec in pool.specs[3:]}}
    assert pool.shares() == pytest.approx(expected)
    drawn = drawn_shares(pool, seed=0)
    assert all(abs(drawn[spec] - share) < TOLERANCE for spec, share in expected.items())


# -- model selection ---------------------------------------------------------------------------


def test_selection_prefers_quality_then_win_score() -> None:
    selection = Selection(QUALITY)
    offers = [(0.5, 0.9), (0.6, -0.2), (0.6, -0.1), (0.55, 1.0), (0.6, -0.1)]
    kept = [selection.offer(selection_key(win, quality), step)
            for step, (quality, win) in enumerate(offers)]
    assert kept == [True, True, True, False, False]
    assert (selection.step, selection.stalled) == (2, 2)
    assert Selection.from_dict(selection.to_dict()) == selection
    assert selection_key(0.3, None) == [0.3]


def test_selection_ranks_every_evaluation_holding_the_bar_above_the_others() -> None:
    selection = Selection(QUALITY, bar=True)
    offers = [(False, 0.8), (True, 0.5), (False, 0.9), (True, 0.6), (True, 0.55)]
    kept = [selection.offer(selection_key(0.0, quality, held), step)
            for step, (held, quality) in enumerate(offers)]
    assert kept == [True, True, False, True, False]
    assert selection.to_dict()["bar_held"] == 1.0 and selection.to_dict()["quality_score"] == 0.6
    assert Selection.from_dict(selection.to_dict()) == selection


@pytest.mark.parametrize(("bar", "names"), [({"random": 1.5}, "win rate in [0, 1]"),
                                             ({"lookahead:2": 0.9}, "not one of the eval")])
def test_a_bad_eval_bar_is_refused_naming_the_fix(bar: dict[str, float], names: str) -> None:
    with pytest.raises(ValueError, match=re.escape(names)):
        load_config("tictactoe", overrides={"eval_opponents": ["random"], "eval_bar": bar})


def train_tiny(tmp_path: Path, steps: int, *extra: str) -> Path:
    args = ["tictactoe", "--timesteps", str(steps), "--runs-dir", str(tmp_path), *TINY,
            "--eval-quality", "200", "--set", "checkpoint_every=1024", *extra]
    assert ppo.main(args) == 0
    (run,) = tmp_path.iterdir()
    return run


def expected_best(history: list[dict[str, Any]],
                  held: Callable[[dict[str, Any]], bool] | None = None) -> tuple[int, list[float]]:
    """The step ``best.zip`` must hold, re-derived from ``eval.json``'s records, and its
    selection key: the first evaluation with the largest key (``held``: whether a record
    held the bar; None: no bar)."""
    keys = {record["step"]: selection_key(record["win_rates"]["random"]
                                          - record["loss_rates"]["random"],
                                          record["quality"]["score"],
                                          None if held is None else held(record))
            for record in history}
    best_step = max(keys, key=lambda step: (keys[step], -step))  # the first of equal keys
    return best_step, keys[best_step]


def test_best_zip_is_the_evaluation_with_the_best_selection_quality(tmp_path: Path) -> None:
    run = train_tiny(tmp_path, 6144, "--set", "eval_every=1024")
    history = json.loads((run / "eval.json").read_text())
    assert len(history) == 6 and all("quality" in record for record in history)
    best_step, _ = expected_best(history)
    best = json.loads((run / "best.json").read_text())
    assert best["metric"] == QUALITY and best["step"] == best_step
    assert best["quality_score"] == max(record["quality"]["score"] for record in history)
    best_zip = run / "checkpoints" / "best.zip"
    assert read_metadata(best_zip)["num_timesteps"] == best_step
    step_zip = run / "checkpoints" / f"step_{best_step}.zip"
    for name, tensor in read_tensors(step_zip, POLICY_ENTRY).items():
        assert np.array_equal(tensor, read_tensors(best_zip, POLICY_ENTRY)[name])
    record = game_record("tictactoe")
    judged = judge("tictactoe", str(best_zip), selection_positions(record, 200))
    assert judged.score == pytest.approx(best["quality_score"])
    assert plot.quality_curves(history) and plot.best_step(run) == best_step
    assert plot.plot(run).read_bytes().startswith(b"\x89PNG")


def test_evaluations_judge_the_eval_quality_positions_when_given(tmp_path: Path) -> None:
    """``eval_quality_positions``: the evaluations judge that set's first ``eval_quality``
    positions instead of the shipped selection part."""
    record = game_record("tictactoe")
    lines = default_positions(record).read_text(encoding="utf-8").splitlines()
    chosen = tmp_path / "chosen.jsonl"
    chosen.write_text("\n".join(lines[-300:]) + "\n", encoding="utf-8")
    run = train_tiny(tmp_path / "runs", 2048, "--set", "eval_every=1024",
                     "--set", f"eval_quality_positions={chosen}")
    last = json.loads((run / "eval.json").read_text())[-1]
    judged = judge("tictactoe", str(run / "checkpoints" / f"step_{last['step']}.zip"),
                   load_positions(chosen, record)[:200])
    assert last["quality"]["positions"] == 200
    assert last["quality"]["score"] == pytest.approx(judged.score)


@pytest.mark.parametrize(("value", "extra", "message"), [
    ("missing.jsonl", [], "eval_quality_positions: no file"),
])
def test_unusable_eval_quality_positions_are_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, extra: list[str],
        message: str) -> None:
    with pytest.raises(SystemExit) as stop:
        ppo.main(["tictactoe", "--runs-dir", str(tmp_path), *TINY, "--eval-quality", "20",
                  "--set", f"eval_quality_positions={value}", *extra])
    error = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and len(error.splitlines()) == 1 and message in error
    assert not list(tmp_path.iterdir())


def test_eval_quality_zero_leaves_the_named_positions_unjudged(tmp_path: Path) -> None:
    """A config naming ``eval_quality_positions`` runs with quality off, judging nothing."""
    run = train_tiny(tmp_path, 1024, "--set", "eval_every=1024", "--eval-quality", "0",
                     "--set", "eval_quality_positions=missing.jsonl")
    assert all("quality" not in entry for entry in json.loads((run / "eval.json").read_text()))


def test_best_zip_holds_the_bar_when_an_evaluation_held_it(tmp_path: Path) -> None:
    run = train_tiny(tmp_path, 4096, "--set", "eval_every=1024",
                     "--set", "eval_bar={random: 0.5}")
    history = json.loads((run / "eval.json").read_text())
    best_step, key = expected_best(history, lambda record: record["win_rates"]["random"] >= 0.5)
    best = json.loads((run / "best.json").read_text())
    assert (best["step"], best["bar_held"]) == (best_step, key[0])
    assert read_metadata(run / "checkpoints" / "best.zip")["num_timesteps"] == best_step


def test_bar_games_judge_the_bar_from_the_start_position(tmp_path: Path) -> None:
    """With ``bar_games`` the bar is held or not on games of its own (6 here, the eval's 4)."""
    run = train_tiny(tmp_path, 3072, "--set", "eval_every=1024", "--set", "eval_openings=2",
                     "--set", "eval_bar={random: 0.5}", "--set", "bar_games=6")
    history = json.loads((run / "eval.json").read_text())
    for record in history:
        rate = record["bar_rates"]["random"]
        assert round(rate * 6, 9).is_integer()
        assert record["bar_held"] == (rate >= 0.5)
    best_step, key = expected_best(history, lambda record: record["bar_held"])
    best = json.loads((run / "best.json").read_text())
    assert (best["step"], best["bar_held"]) == (best_step, key[0])


def test_bar_games_need_a_bar(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="bar_games"):
        load_config("tictactoe", overrides={"eval_opponents": ["random"], "bar_games": 10})


def test_eval_start_makes_the_starting_network_a_candidate(tmp_path: Path) -> None:
    # learning rate 0: every evaluation equals the first, the one at step 0, which stays best
    run = train_tiny(tmp_path, 1024, "--set", "eval_every=512", "--set", "learning_rate=0",
                     "--set", "eval_start=true")
    history = json.loads((run / "eval.json").read_text())
    assert [record["step"] for record in history] == [0, 512, 1024]
    assert json.loads((run / "best.json").read_text())["step"] == 0
    assert (run / "checkpoints" / "step_0.zip").is_file()


def test_patience_stops_a_run_that_stopped_improving(tmp_path: Path) -> None:
    # learning rate 0: every evaluation equals the first, so the second is no new best
    run = train_tiny(tmp_path, 8192, "--set", "eval_every=512", "--set", "learning_rate=0",
                     "--patience", "1")
    history = json.loads((run / "eval.json").read_text())
    assert [record["step"] for record in history] == [512, 1024]
    best = json.loads((run / "best.json").read_text())
    assert (best["step"], best["stalled"]) == (512, 1)
    assert read_metadata(run / "checkpoints" / "last.zip")["num_timesteps"] < 8192
