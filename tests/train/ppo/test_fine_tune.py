"""Fine-tuning (config key ``init_from``): a new run starts from a policy checkpoint's
weights, and a checkpoint that cannot be its start is refused in one line naming the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from boardgym.agents.ppo.policy import load_network, read_metadata
from boardgym.train.ppo import trainer as ppo
from tests.paths import ROOT
from tests.runs import NO_BAR

NETWORK = ["--set", "channels=8", "--set", "blocks=1", "--set", "features_dim=32",
           "--set", "net_arch=[16]"]
TINY = ["--no-progress", "--set", "n_envs=4", "--set", "n_steps=64", "--set", "batch_size=64",
        "--set", "n_epochs=1", "--set", "eval_games=4", "--set", "eval_opponents=[random]",
        "--set", "opponents=[random]", *NO_BAR, "--set", "opponent_weights=null",
        "--set", "eval_every=256", "--set", "checkpoint_every=256", *NETWORK]
STEPS = 256

pytestmark = pytest.mark.slow


def train_tiny(runs_dir: Path, *extra: str) -> Path:
    """The last checkpoint of a one-rollout tic-tac-toe run with the ``extra`` arguments."""
    assert ppo.main(["tictactoe", "--timesteps", str(STEPS), "--runs-dir", str(runs_dir),
                     *TINY, *extra]) == 0
    (run,) = runs_dir.iterdir()
    return run / "checkpoints" / "last.zip"


def weights(checkpoint: Path) -> dict[str, torch.Tensor]:
    policy, _ = load_network(checkpoint)
    return policy.state_dict()


def distance(first: dict[str, torch.Tensor], second: dict[str, torch.Tensor]) -> float:
    return max(float((first[key] - second[key]).abs().max()) for key in first)


@pytest.fixture(scope="module")
def start(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_tiny(tmp_path_factory.mktemp("start"), "--seed", "1")


def test_a_fine_tuned_run_starts_from_the_checkpoints_weights(start: Path, tmp_path: Path) -> None:
    tuned = train_tiny(tmp_path / "tuned", "--set", f"init_from={start}",
                       "--set", "learning_rate=1e-9", "--set", "lr_schedule=constant")
    fresh = train_tiny(tmp_path / "fresh", "--set", "learning_rate=1e-9",
                       "--set", "lr_schedule=constant")
    assert distance(weights(tuned), weights(start)) < 1e-5
    assert distance(weights(fresh), weights(start)) > 1e-2
    assert read_metadata(tuned)["num_timesteps"] == STEPS


@pytest.mark.parametrize(("setting", "message"), [
    ("channels=16", "--set channels=8"),
    ("symmetric=true", "--set symmetric=false"),
    ("net_arch=[32]", "--set net_arch=[16]"),
])
def test_another_network_is_refused_naming_the_settings(start: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str],
                                                         setting: str, message: str) -> None:
    with pytest.raises(SystemExit) as stop:
        ppo.main(["tictactoe", "--runs-dir", str(tmp_path), *TINY, "--set", setting,
                  "--set", f"init_from={start}"])
    error = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and len(error.splitlines()) == 1
    assert message in error and "init_from" in error
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(("game", "checkpoint", "extra", "message"), [
    ("reversi", "tictactoe.zip", [], "'tictactoe', not 'reversi'"),
    ("tictactoe", "missing.zip", [], "missing.zip"),
    ("tictactoe", "tictactoe_az.zip", [], "init_from"),
    ("four_in_a_row", "four_in_a_row.zip", ["env_kwargs={rows: 5}", "eval_quality=0",
                                            "teacher=null"],
     "another board"),
])
def test_a_checkpoint_of_another_game_or_board_is_refused(tmp_path: Path, game: str,
                                                           checkpoint: str, extra: list[str],
                                                           message: str) -> None:
    sets = [item for setting in extra for item in ("--set", setting)]
    with pytest.raises(ValueError, match="init_from") as error:
        ppo.prepare(ppo.build_parser().parse_args(
            [game, "--runs-dir", str(tmp_path), *sets,
             "--set", f"init_from={ROOT / 'checkpoints' / checkpoint}"]),
            ppo.ALGO, ppo.default_pool)
    assert message in str(error.value) and "\n" not in str(error.value)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("content", [b"not a zip", b"PK\x03\x04 damaged"])
def test_a_damaged_start_checkpoint_is_refused_in_one_line(tmp_path: Path, content: bytes) -> None:
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(content)
    runs = tmp_path / "runs"
    with pytest.raises(ValueError, match="init_from") as error:
        ppo.prepare(ppo.build_parser().parse_args(
            ["tictactoe", "--runs-dir", str(runs), "--set", f"init_from={damaged}"]),
            ppo.ALGO, ppo.default_pool)
    assert "\n" not in str(error.value) and not runs.exists()
