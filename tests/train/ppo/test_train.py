"""Training scripts: smoke runs per game, resume after SIGKILL, self-play, config errors, plot."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from boardgym import agents
from boardgym.agents.checkpoint import OPTIMIZER_ENTRY, TRAIN_STATE_ENTRY, read_entry, read_tensors
from boardgym.agents.ppo.architecture import architecture_of
from boardgym.agents.ppo.planes import reversi_moves
from boardgym.agents.ppo.policies import TowerPolicy
from boardgym.agents.ppo.policy import load_network, read_metadata
from boardgym.envs.games import game, players, reversi
from boardgym.train.match.evaluate import play_match
from boardgym.train.ppo import runs, selfplay
from boardgym.train.ppo import trainer as ppo
from boardgym.train.ppo.callbacks import vector_match
from boardgym.train.ppo.config import load_config
from boardgym.train.ppo.environments import make_vec_env
from boardgym.train.tools import plot
from tests.paths import ROOT
from tests.runs import TINY_RUN

TINY = [*TINY_RUN, "--set", "teacher=null"]
ROLLOUT = 4 * 64
KILL_TIMEOUT_S = 120
POLL_S = 0.2

pytestmark = pytest.mark.slow


def only_run(runs_dir: Path) -> Path:
    (run,) = runs_dir.iterdir()
    return run


def train_tiny(game: str, runs_dir: Path, steps: int, *extra: str) -> Path:
    args = [game, "--timesteps", str(steps), "--runs-dir", str(runs_dir), *TINY,
            "--set", f"eval_every={steps // 2}", "--set", f"checkpoint_every={steps // 2}",
            *extra]
    assert ppo.main(args) == 0
    return only_run(runs_dir)


@pytest.mark.parametrize("game", ["reversi", "four_in_a_row", "tictactoe"])
def test_smoke_run_writes_a_complete_run_folder(game: str, tmp_path: Path) -> None:
    steps = 2048
    run = train_tiny(game, tmp_path, steps)
    assert run.name.startswith(f"{game}__maskableppo__0__")
    config = yaml.safe_load((run / "config.yaml").read_text())
    assert config["game"] == game and config["total_timesteps"] == steps
    assert (run / "command.txt").read_text().startswith(f"boardgym train {game} --timesteps")
    history = json.loads((run / "eval.json").read_text())
    start = [0] if config["eval_start"] else []
    assert [r["step"] for r in history] == [*start, steps // 2, steps]
    assert set(history[-1]["win_rates"]) == {"random"}
    assert read_metadata(run / "checkpoints" / "last.zip")["num_timesteps"] == steps
    assert any((run / "tb").rglob("events.out.tfevents*"))
    agent = agents.make(game, str(run / "checkpoints" / "best.zip"))
    assert agent is not None


def test_a_tower_run_in_bfloat16_saves_a_float32_policy(tmp_path: Path) -> None:
    """``precision: bfloat16`` is the run's setting, not the checkpoint's: the file's record
    and weights are float32's, and its policy plays in float32."""
    run = train_tiny("reversi", tmp_path, 1024, "--set", "tower=true", "--set",
                     "symmetric=false", "--set", "precision=bfloat16")
    assert yaml.safe_load((run / "config.yaml").read_text())["precision"] == "bfloat16"
    network, metadata = load_network(run / "checkpoints" / "last.zip")
    assert isinstance(network, TowerPolicy) and network.precision == "float32"
    assert metadata["policy"] == {"class": "TowerPolicy", **network.sizes()}
    assert all(weight.dtype == torch.float32 for weight in network.state_dict().values())
    result = play_match("reversi", str(run / "checkpoints" / "last.zip"), "random", games=2)
    assert result.a_wins + result.b_wins + result.ties == 2


@pytest.mark.parametrize(("game", "settings", "kind"), [
    ("reversi", ["tower=false", "symmetric=true", "average_symmetries=false"],
     "SymmetricPolicy"),
    ("four_in_a_row", ["symmetric=true", "average_symmetries=false", "members=1"],
     "SymmetricPolicy"),
    ("four_in_a_row", ["average_symmetries=true", "symmetric=false", "members=1"],
     "AveragedPolicy"),
    ("four_in_a_row", ["average_symmetries=true", "symmetric=false", "members=2"],
     "EnsemblePolicy"),
    ("reversi", ["tower=true", "symmetric=false"], "TowerPolicy"),
])
def test_symmetric_policy_trains_saves_and_plays(game: str, settings: list[str], kind: str,
                                                 tmp_path: Path) -> None:
    pairs = [part for setting in settings for part in ("--set", setting)]
    run = train_tiny(game, tmp_path, 1024, *pairs)
    network, metadata = load_network(run / "checkpoints" / "last.zip")
    assert type(network).__name__ == kind == metadata["policy"]["class"]
    result = play_match(game, str(run / "checkpoints" / "last.zip"), "random", games=4)
    assert result.a_wins + result.b_wins + result.ties == 4


def test_resume_after_sigkill_continues_the_step_count(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "boardgym.train.ppo.trainer", "tictactoe",
               "--timesteps", "200000",
               "--runs-dir", str(tmp_path), *TINY, "--set", "eval_every=100000",
               "--set", f"checkpoint_every={ROLLOUT}", "--set", "vectorization=dummy"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    last = None
    deadline = time.monotonic() + KILL_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            runs = list(tmp_path.iterdir())
            candidate = runs[0] / "checkpoints" / "last.zip" if runs else None
            if candidate is not None and candidate.is_file() and \
                    read_metadata(candidate)["num_timesteps"] >= 2 * ROLLOUT:
                last = candidate
                break
            time.sleep(POLL_S)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert last is not None, "no checkpoint within the time limit"
    killed_at = read_metadata(last)["num_timesteps"]
    agents.make("tictactoe", str(last))  # the file survived the kill intact
    assert read_entry(last, TRAIN_STATE_ENTRY)["pool"]["specs"] == ["random"]
    target = killed_at + 2 * ROLLOUT
    assert ppo.main(["--resume", str(last.parent.parent), "--timesteps", str(target),
                     "--no-progress"]) == 0
    assert read_metadata(last)["num_timesteps"] == target
    commands = (last.parent.parent / "command.txt").read_text().splitlines()
    assert len(commands) == 2 and "--resume" in commands[1]


def test_selfplay_adds_snapshots_to_a_saved_pool(tmp_path: Path) -> None:
    steps = 4 * ROLLOUT
    args = ["tictactoe", "--timesteps", str(steps), "--runs-dir", str(tmp_path), *TINY,
            "--set", f"snapshot_every={ROLLOUT}", "--set", "snapshot_margin=0.0",
            "--set", "league_games=2", "--set", "max_snapshots=2",
            "--set", f"eval_every={steps}", "--set", f"checkpoint_every={steps}"]
    assert selfplay.main(args) == 0
    run = only_run(tmp_path)
    assert run.name.startswith("tictactoe__selfplay__0__")
    pool = json.loads((run / "pool.json").read_text())
    snapshots = [spec for spec in pool["specs"] if "snapshots" in spec]
    assert pool["specs"][0] == "random" and len(snapshots) == 2
    assert all(Path(spec).is_file() for spec in snapshots)
    saved = read_entry(run / "checkpoints" / "last.zip", TRAIN_STATE_ENTRY)
    assert saved["pool"] == pool


def test_bad_config_values_are_usage_errors(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    for bad, message in ((["--set", "n_envz=4"], "unknown config key"),
                         (["--set", "n_envs=0"], "n_envs must be a positive integer"),
                         (["--set", "pretrain_batch_size=0"],
                          "pretrain_batch_size must be a positive integer"),
                         (["--opponent", "nobody"], "unknown tictactoe player"),
                         (["--set", "n_steps=banana"], "n_steps must be an integer"),
                         (["--set", "torch_threads=100000"],
                          "torch_threads must be a positive integer, at most"),
                         (["--set", "lr_schedule=cosine"],
                          "fix it with --set lr_schedule=linear"),
                         (["--seed", "-1"], "--seed: must be >= 0"),
                         (["--set", "seed=-1"],
                          "seed must be 0 or a positive integer, at most 4294967295")):
        with pytest.raises(SystemExit) as exit_info:
            ppo.main(["tictactoe", "--runs-dir", str(tmp_path), *bad])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1
        assert not any(tmp_path.iterdir()), "no run folder is left behind"
    with pytest.raises(SystemExit):
        ppo.main(["--resume", str(tmp_path / "missing")])
    assert "not a run folder" in capsys.readouterr().err


def test_vector_match_plays_one_whole_game_per_sub_env() -> None:
    model, _ = load_network(ROOT / "checkpoints" / "tictactoe.zip")
    config = load_config("tictactoe")
    for opponent in players.batched_names(game("tictactoe")):
        if players.make_batched(game("tictactoe"), opponent) is None:
            continue  # az: needs a checkpoint
        result = vector_match(model, config, opponent, 64, seed=3)
        assert (result.games, len(result.outcomes)) == (64, 64)
        assert result.b_wins == 0 and result.a_wins + result.ties == 64, opponent
    few, many = (vector_match(model, config, "random", games, seed=5) for games in (16, 64))
    assert few.outcomes == many.outcomes[:16] and many.a_wins > 48


def test_resume_rebuilds_weights_optimizer_and_counters_from_the_checkpoint(
        tmp_path: Path) -> None:
    run_dir = train_tiny("tictactoe", tmp_path, ROLLOUT * 2, "--set", "vectorization=dummy")
    last = run_dir / "checkpoints" / "last.zip"
    run, state = runs.open_run(run_dir, {})
    vec_env = make_vec_env(run.config, run.pool)
    model = ppo.resumed_model(run, vec_env, state)
    vec_env.close()
    saved, metadata = load_network(last)
    assert architecture_of(model.policy) == metadata["policy"] == \
        ppo.config_architecture(run.config)
    for name, tensor in saved.state_dict().items():
        assert torch.equal(model.policy.state_dict()[name], tensor), name
    optimizer = read_tensors(last, OPTIMIZER_ENTRY)
    for index, values in optimizer["state"].items():
        for key, tensor in values.items():
            assert torch.equal(model.policy.optimizer.state_dict()["state"][index][key], tensor)
    assert model.num_timesteps == metadata["num_timesteps"] == ROLLOUT * 2
    assert model._n_updates == state["counters"]["n_updates"] > 0


def test_mixed_opponents_train_on_one_vector_env_drawing_each_games_opponent() -> None:
    config = load_config("tictactoe", overrides={"opponents": ["rules", "random"],
                                                 "opponent_weights": [3, 1], "n_envs": 64})
    vec_env = make_vec_env(config, ppo.default_pool(config))
    vec_env.seed(0)
    vec_env.reset()
    opponents = vec_env.get_attr("opponents")[0]
    assert vec_env.num_envs == 64 and vec_env.action_masks().shape == (64, 9)
    assert set(opponents) == {"rules", "random"} and opponents.count("rules") > 32
    vec_env.close()


def test_a_failed_resume_leaves_the_run_as_it_was(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run = train_tiny("tictactoe", tmp_path, ROLLOUT * 2)
    config = (run / "config.yaml").read_bytes()
    resume = ["--resume", str(run)]
    for args, message in (([*resume, "--set", "channels=4"], "--resume keeps the run's channels"),
                          ([*resume, "--opponent", "perfect"], "--resume keeps the run's opponent"),
                          ([*resume, "--set", "n_steps=banana"], "n_steps must be an integer"),
                          (["reversi", *resume], "the run is a tictactoe run, not reversi")):
        with pytest.raises(SystemExit) as exit_info:
            ppo.main(args)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1
        assert (run / "config.yaml").read_bytes() == config


def test_plot_draws_a_png(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "eval.json").write_text(json.dumps([
        {"step": 100, "seconds": 1.0, "win_rates": {"random": 0.5, "rules": 0.1}},
        {"step": 200, "seconds": 2.0, "win_rates": {"random": 0.9, "rules": 0.4}}]))
    assert plot.main([str(run)]) == 0
    assert (run / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_draws_the_bar_games_in_their_opponent_colour() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    history = [{"step": step, "win_rates": {"corner_best": won, "random": 1.0},
                "loss_rates": {"corner_best": 1 - won, "random": 0.0},
                "bar_rates": {"corner_best": bar}}
               for step, won, bar in [(0, 0.6, 0.7), (100, 0.9, 0.975)]]
    figure, axes = plt.subplots()
    plot.draw_games(axes, history)
    lines = {line.get_label(): line for line in axes.get_lines()}
    bar = lines["corner_best (bar games won)"]
    assert list(bar.get_ydata()) == pytest.approx([70.0, 97.5])
    assert bar.get_linestyle() == ":"
    assert bar.get_color() == lines["corner_best (won)"].get_color()
    assert lines["random (won)"].get_color() != bar.get_color()
    assert "random (bar games won)" not in lines
    plt.close(figure)


def test_plot_legends_sit_beside_the_panels_not_over_their_lines() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    history = [{"step": step, "win_rates": {"corner_best": won},
                "quality": {"kept_rate": 0.8, "best_rate": 0.5}}
               for step, won in [(0, 0.6), (100, 0.9)]]
    figure, (games, quality) = plt.subplots(2, 1)
    plot.draw_games(games, history)
    plot.draw_quality(quality, plot.quality_curves(history), 100, plot.x_label(history))
    figure.canvas.draw()
    for axes in (games, quality):
        legend = axes.get_legend().get_window_extent()
        assert legend.x0 >= axes.get_window_extent().x1
    plt.close(figure)


def test_plot_names_what_the_steps_count() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ppo_history = [{"step": 100, "win_rates": {"random": 0.5}}]
    az_history = [{"step": 5000, "iteration": 3, "win_rates": {"random": 0.5},
                   "quality": {"kept_rate": 0.7, "best_rate": 0.6}}]
    assert plot.x_label(ppo_history) == "training steps"
    figure, axes = plt.subplots()
    plot.draw_quality(axes, plot.quality_curves(az_history), None, plot.x_label(az_history))
    assert axes.get_xlabel() == "self-play positions"
    plt.close(figure)


def test_mobility_planes_match_the_rules_legal_moves() -> None:
    rng = np.random.default_rng(0)
    state = reversi.initial_state()
    while not reversi.is_terminal(state):
        planes = torch.as_tensor(reversi.observation(state)[None], dtype=torch.float32)
        moves = reversi_moves(planes[:, 0], planes[:, 1])[0].numpy().reshape(-1) > 0
        assert (moves == reversi.legal_mask(state)).all()
        state = reversi.apply(state, int(rng.choice(np.flatnonzero(reversi.legal_mask(state)))))


def test_mobility_is_refused_outside_reversi(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        ppo.main(["tictactoe", "--runs-dir", str(tmp_path), "--set", "mobility=true"])
    error = capsys.readouterr().err
    assert "mobility planes are Reversi's" in error and "--set mobility=false" in error
    assert len(error.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_one_symmetric_policy_at_a_time(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        ppo.main(["four_in_a_row", "--runs-dir", str(tmp_path), "--set", "symmetric=true",
                  "--set", "average_symmetries=true"])
    error = capsys.readouterr().err
    assert "average_symmetries" in error and "set one of them to false" in error
    assert len(error.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())
