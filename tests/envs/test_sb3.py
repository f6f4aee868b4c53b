"""The stable-baselines3 ``VecEnv`` face of the vector envs (``envs.sb3``)."""

from __future__ import annotations

import numpy as np
import pytest


def test_maskable_ppo_trains_through_the_sb3_adapter() -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.logger import Logger

    from boardgym.envs.sb3 import SB3VecEnv

    venv = SB3VecEnv.make("TicTacToe-v0", num_envs=16, opponent="random")
    venv.seed(0)
    model = sb3_contrib.MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=256,
                                    n_epochs=1, seed=0, device="cpu")
    model.set_logger(Logger(folder=None, output_formats=[]))  # else SB3 makes a /tmp/SB3-* dir
    model.learn(total_timesteps=2_048)
    obs = venv.reset()
    masks = get_action_masks(venv)
    assert masks.shape == (16, 9)
    actions, _ = model.predict(obs, action_masks=masks)
    assert masks[np.arange(16), actions].all()
    _, rewards, _dones, infos = venv.step(actions)
    assert rewards.dtype == np.float32 and len(infos) == 16


def test_sb3_adapter_refuses_float_actions_and_bad_seeds() -> None:
    pytest.importorskip("stable_baselines3")
    from boardgym.envs.sb3 import SB3VecEnv

    venv = SB3VecEnv.make("TicTacToe-v0", num_envs=2, opponent="random")
    venv.reset()
    for bad in (np.array([0.0, 1.0]), np.array(["0", "1"])):
        with pytest.raises(ValueError, match="integer"):
            venv.step_async(bad)
    for seed in (1.5, 2 ** 64, "1"):
        with pytest.raises(ValueError, match="seed"):
            venv.seed(seed)  # type: ignore[arg-type]
    assert venv.seed(4) == [4, 5]
