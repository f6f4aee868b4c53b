"""PPO over an az network (config key ``tower``, ``agents.ppo.policies.TowerPolicy``): a run that
starts from an az checkpoint plays its raw policy exactly; the checkpoint round trip; bad
settings and damaged records refused in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from boardgym.agents.az.checkpoint import load_network as load_az
from boardgym.agents.az.network import PRECISIONS, Evaluator
from boardgym.agents.checkpoint import CheckpointError, checkpoint_metadata, load_state
from boardgym.agents.ppo.policies import TowerPolicy, logits_and_values
from boardgym.agents.ppo.policy import build_policy, load_network, masked_logits, write_checkpoint
from boardgym.envs.games import tictactoe
from boardgym.train.cli import main
from boardgym.train.ppo import trainer as ppo
from boardgym.train.ppo.config import load_config
from boardgym.train.ppo.teacher import FrozenPolicy
from tests.boards import random_position
from tests.paths import ROOT
from tests.records import rewrite_policy_record

AZ_FILE = ROOT / "checkpoints" / "tictactoe_az.zip"
AZ_SIZES = {"channels": 32, "blocks": 2, "tower_hidden": 64}
"""The shipped tic-tac-toe az network's sizes."""


def tower_config(**changes: Any) -> Any:
    """The tic-tac-toe run config with an az tower of the shipped az network's sizes."""
    return load_config("tictactoe", None, {"tower": True, **AZ_SIZES, **changes})


def fresh_policy(config: Any) -> TowerPolicy:
    """The untrained policy a run of ``config`` builds, with its ``init_from`` weights."""
    architecture = ppo.config_architecture(config)
    policy = build_policy(checkpoint_metadata(config.game, {}, 0, architecture), "the config")
    start = ppo.initial_weights(config)
    if start is not None:
        load_state(policy, start, str(config.init_from), "init_from")
    assert isinstance(policy, TowerPolicy)
    return policy


def positions(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and legal masks of ``count`` random unfinished tic-tac-toe positions."""
    rng = np.random.default_rng(seed)
    states = [random_position(tictactoe, rng, moves=int(rng.integers(0, 6)))
              for _ in range(count)]
    return (np.stack([tictactoe.observation(state) for state in states]),
            np.stack([tictactoe.legal_mask(state) for state in states]))


@pytest.mark.parametrize("sizes", [{}, {"channels": 48, "blocks": 3, "tower_hidden": 96}],
                         ids=["its sizes", "grown"])
def test_a_run_from_an_az_checkpoint_starts_as_its_raw_policy(sizes: dict[str, int]) -> None:
    """Of the file's sizes or larger (the file's network grown): step 0 is its raw policy."""
    policy = fresh_policy(tower_config(init_from=str(AZ_FILE), **sizes))
    net, _ = load_az(AZ_FILE, "tictactoe")
    observations, masks = positions(32, seed=0)
    az_logits, az_values = Evaluator(net)(observations, masks)
    np.testing.assert_allclose(masked_logits(policy, observations, masks), az_logits,
                               rtol=1e-5, atol=1e-5)
    with torch.inference_mode():
        _, values = logits_and_values(policy, torch.as_tensor(observations))
    np.testing.assert_allclose(values.numpy(), az_values, rtol=1e-5, atol=1e-5)


def test_a_tower_checkpoint_loads_as_the_same_policy(tmp_path: Path) -> None:
    policy = fresh_policy(tower_config(init_from=str(AZ_FILE)))
    path = tmp_path / "tower.zip"
    write_checkpoint(path, policy, "tictactoe", {}, 0)
    loaded, metadata = load_network(path, "tictactoe")
    assert metadata["policy"] == {"class": "TowerPolicy", "channels": 32, "blocks": 2,
                                  "hidden": 64}
    observations, masks = positions(16, seed=1)
    np.testing.assert_allclose(masked_logits(loaded, observations, masks),
                               masked_logits(policy, observations, masks))


@pytest.mark.parametrize(("change", "message"), [
    ({"channels": 0}, "channels=0 is not an integer in [1, 4096]"),
    ({"blocks": "2"}, "has blocks='2', not int"),
    ({"net_arch": [16]}, "unknown keys ['net_arch']"),
    ({"hidden": None}, "lacks 'hidden'"),
])
def test_a_damaged_tower_record_is_refused_in_one_line(change: dict[str, Any], message: str,
                                                       tmp_path: Path) -> None:
    path = tmp_path / "tower.zip"
    write_checkpoint(path, fresh_policy(tower_config()), "tictactoe", {}, 0)
    rewrite_policy_record(path, change)
    with pytest.raises(CheckpointError) as error:
        load_network(path, "tictactoe")
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(("changes", "message"), [
    ({"symmetric": True}, "fix symmetric=true with --set, or set tower=false"),
    ({"members": 2, "average_symmetries": True},
     "fix average_symmetries=true, members=2 with --set"),
    ({"blocks": 0}, "fix blocks=0 with --set"),
])
def test_a_tower_takes_its_sizes_only(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tower_config(**changes)


def test_a_bad_precision_is_refused_naming_the_fix() -> None:
    with pytest.raises(ValueError, match="precision must be one of"):
        tower_config(precision="half")
    with pytest.raises(ValueError, match="precision applies to az tower policies only"):
        load_config("tictactoe", None, {"precision": "bfloat16"})


def test_the_frozen_start_computes_in_the_runs_precision() -> None:
    """``teacher: pretrained``'s frozen start runs in the run's precision, as the learner:
    bfloat16 moves its probabilities a little from float32's, no further."""
    observations, masks = positions(64, seed=3)
    config = tower_config(init_from=str(AZ_FILE))
    result = {precision: FrozenPolicy(fresh_policy(config), precision).network_result(
        observations, masks).policy for precision in PRECISIONS}
    assert not np.array_equal(result["bfloat16"], result["float32"])
    np.testing.assert_allclose(result["bfloat16"], result["float32"], atol=0.05)
    with pytest.raises(ValueError, match="precision must be one of"):
        FrozenPolicy(fresh_policy(config), "half")


def test_an_az_checkpoint_of_a_larger_tower_is_refused_naming_the_keys() -> None:
    with pytest.raises(ValueError, match=r"tower_hidden 64 \(config: 32\).*set the config's "
                                         r"channels, blocks and tower_hidden"):
        ppo.initial_weights(tower_config(init_from=str(AZ_FILE), tower_hidden=32))
    with pytest.raises(ValueError, match="is an az network"):
        ppo.initial_weights(load_config("tictactoe", None, {"init_from": str(AZ_FILE)}))


def test_a_tower_checkpoint_exports_to_onnx(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("onnxruntime")
    path = tmp_path / "tower.zip"
    write_checkpoint(path, fresh_policy(tower_config(init_from=str(AZ_FILE))), "tictactoe", {}, 0)
    assert main(["export", str(path), str(tmp_path / "tower.onnx"), "--check", "300"]) == 0
    assert "in 300 of 300 positions" in capsys.readouterr().out
