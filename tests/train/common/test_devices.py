"""The ``device`` of the trainers and network players (CPU only: torch sees no GPU here).

``auto`` resolves to the CPU and a run records the device it resolved to; a GPU torch does
not see, or a malformed device, is one line before any work (exit code 2, no run folder);
a resumed run may change its device; checkpoints hold CPU tensors; ``agents.make(...,
device=...)`` plays network players on that device and the same moves.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from boardgym import agents
from boardgym.agents.az.checkpoint import MODEL_ENTRY, OPTIMIZER_ENTRY
from boardgym.agents.devices import check_device, resolve_device
from boardgym.envs.games import game
from boardgym.train import cli
from tests.commands import usage_error
from tests.runs import TINY_RUN

AZ_TINY = ["--no-progress", "--iterations", "1", "--set", "games_per_iteration=2",
           "--set", "simulations=2", "--set", "considered=2", "--set", "train_steps=1",
           "--set", "batch_size=8", "--set", "eval_positions=5", "--set", "eval_games=2",
           "--set", "eval_opponents=[random]", "--set", "channels=4", "--set", "blocks=1",
           "--set", "hidden=8"]
"""An az run of about a second."""
PPO_TINY = [*TINY_RUN, "--timesteps", "256", "--set", "eval_quality=0", "--set", "teacher=null",
            "--set", "opening_plies=null", "--set", "eval_every=256",
            "--set", "checkpoint_every=256", "--set", "eval_start=false"]
"""A PPO run of a second or two on tic-tac-toe."""
MALFORMED = ("gpu", "cuda:x", "cuda:-1", "cuda:", "CPU", "cuda:01", "")
FORMS = "device must be auto, cpu, cuda or cuda:N (N a GPU index from 0)"
NO_GPU = "torch sees no CUDA GPU on this machine"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs in an empty folder (run folders go to ``runs/`` there), as in CI."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")


def run_folder() -> Path:
    """The one run folder the test made."""
    (folder,) = Path("runs").iterdir()
    return folder


def recorded_device(folder: Path) -> str:
    """The ``device`` of a run folder's ``config.yaml``."""
    return str(yaml.safe_load((folder / "config.yaml").read_text())["device"])


def refusal(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one line the command refuses ``argv`` with; nothing left in the folder."""
    err = usage_error(argv, capsys)
    assert list(Path().iterdir()) == [], "a refused command left files behind"
    return err


# -- the resolution ----------------------------------------------------------------------

def test_auto_and_cpu_resolve_to_the_cpu() -> None:
    assert not torch.cuda.is_available()  # the premise of this file
    assert resolve_device("auto") == "cpu"
    assert resolve_device("cpu") == "cpu"


@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:3"])
def test_a_gpu_torch_does_not_see_is_refused(device: str) -> None:
    with pytest.raises(ValueError, match=f"device {device}: {NO_GPU}.*--device cpu"):
        resolve_device(device)


@pytest.mark.parametrize("device", [*MALFORMED, 0, None, ["cpu"]])
def test_malformed_devices_name_the_forms(device: object) -> None:
    with pytest.raises(ValueError, match=re.escape(FORMS)) as refused:
        check_device(device)
    assert "--device auto" in str(refused.value)
    with pytest.raises(ValueError, match=re.escape(FORMS)):
        resolve_device(device)


def test_with_one_gpu_cuda_passes_and_cuda_3_is_refused(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert resolve_device("auto") == "cuda"
    assert resolve_device("cuda") == "cuda"
    assert resolve_device("cuda:0") == "cuda:0"
    with pytest.raises(ValueError, match=r"device cuda:3: torch sees 1 CUDA GPU\(s\), cuda:0 "
                                         r"to cuda:0; fix it with --device cuda:0"):
        resolve_device("cuda:3")


# -- the commands --------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["train", "selfplay"])
@pytest.mark.parametrize("device", ["cuda", "cuda:3"])
def test_ppo_commands_refuse_a_missing_gpu(command: str, device: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(capsys, command, "tictactoe", "--device", device)
    assert f"boardgym {command}: error: device {device}: {NO_GPU}" in err
    assert "--device cpu" in err


@pytest.mark.parametrize("command", ["train", "selfplay"])
@pytest.mark.parametrize("device", ["gpu", "cuda:x", "cuda:-1"])
def test_ppo_commands_refuse_a_malformed_device(command: str, device: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(capsys, command, "tictactoe", "--device", device)
    assert f"argument --device: {FORMS}, got '{device}'" in err


@pytest.mark.parametrize("command", ["train", "az"])
@pytest.mark.parametrize(("device", "message"), [
    ("cuda", NO_GPU), ("cuda:3", NO_GPU), ("gpu", FORMS), ("'cuda:x'", FORMS)])
def test_the_device_key_is_checked_before_any_work(command: str, device: str, message: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(capsys, command, "tictactoe", "--set", f"device={device}")
    assert f"boardgym {command}: error: " in err and message in err


def test_az_records_the_resolved_device_and_may_change_it_on_resume(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["az", "tictactoe", *AZ_TINY]) == 0
    folder = run_folder()
    assert recorded_device(folder) == "cpu"
    config = folder / "config.yaml"  # as a run on a GPU machine records it
    config.write_text(config.read_text().replace("device: cpu", "device: cuda"))
    capsys.readouterr()
    err = usage_error(["az", "--resume", str(folder), "--iterations", "2"], capsys)
    assert f"device cuda: {NO_GPU}" in err
    assert cli.main(["az", "--resume", str(folder), "--iterations", "2", "--no-progress",
                     "--set", "device=auto"]) == 0
    assert recorded_device(folder) == "cpu"


def test_az_checkpoints_hold_cpu_tensors() -> None:
    assert cli.main(["az", "tictactoe", *AZ_TINY]) == 0
    last = run_folder() / "checkpoints" / "last.zip"
    with zipfile.ZipFile(last) as archive:
        for entry in (MODEL_ENTRY, OPTIMIZER_ENTRY):
            state = torch.load(io.BytesIO(archive.read(entry)), weights_only=True)
            tensors = [*state.values()] if entry == MODEL_ENTRY else \
                [value for group in state["state"].values() for value in group.values()]
            assert tensors and all(tensor.device.type == "cpu" for tensor in tensors)


def test_ppo_records_the_resolved_device_and_may_change_it_on_resume(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["train", "tictactoe", *PPO_TINY, "--device", "auto"]) == 0
    folder = run_folder()
    assert recorded_device(folder) == "cpu"
    config = folder / "config.yaml"  # as a run on a GPU machine records it
    config.write_text(config.read_text().replace("device: cpu", "device: cuda:1"))
    capsys.readouterr()
    err = usage_error(["train", "--resume", str(folder), "--timesteps", "512"], capsys)
    assert f"device cuda:1: {NO_GPU}" in err
    assert cli.main(["train", "--resume", str(folder), "--timesteps", "512", "--no-progress",
                     "--device", "auto"]) == 0
    assert recorded_device(folder) == "cpu"


# -- the players -----------------------------------------------------------------------------

def moves_of(agent: agents.Agent, plies: int = 5) -> list[int]:
    """The moves ``agent`` plays for both sides from tic-tac-toe's start."""
    rules = game("tictactoe").rules
    state, moves = rules.initial_state(), []
    for _ in range(plies):
        moves.append(agent.act(state, np.random.default_rng(0)))
        state = rules.apply(state, moves[-1])
    return moves


@pytest.mark.parametrize("spec", ["az:8@shipped:tictactoe_az", "shipped:tictactoe_az",
                                  "shipped:tictactoe", "az:4@shipped:tictactoe"])
@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_network_players_play_the_same_moves_on_a_device(spec: str, device: str) -> None:
    assert moves_of(agents.make("tictactoe", spec, device=device)) == \
        moves_of(agents.make("tictactoe", spec))


@pytest.mark.parametrize("spec", ["az:8@shipped:tictactoe_az", "shipped:tictactoe"])
def test_network_players_refuse_a_missing_gpu(spec: str) -> None:
    with pytest.raises(ValueError, match=NO_GPU):
        agents.make("tictactoe", spec, device="cuda")
    with pytest.raises(ValueError, match=re.escape(FORMS)):
        agents.make("tictactoe", spec, device="gpu")


def test_players_without_a_network_ignore_the_device() -> None:
    assert moves_of(agents.make("tictactoe", "rules", device="cuda:3")) == \
        moves_of(agents.make("tictactoe", "rules"))
