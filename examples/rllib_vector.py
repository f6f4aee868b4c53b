"""RLlib PPO with action masking on boardgym's batched vector env, against a built-in AI.

RLlib's env runners step ``gym.make_vec(..., vectorization_mode="vector_entry_point")``
directly (``gym_env_vectorize_mode="VECTOR_ENTRY_POINT"``): N games advance in one numpy
call, the opponent's replies included, and the masks reach RLlib's masking PPO module
through ``rllib_masking.MaskedVector``. Needs the ray extra::

    python examples/rllib_vector.py --game four_in_a_row --opponent random --iterations 20
    python examples/rllib_vector.py --game reversi --opponent corner_best --num-envs 64

Each iteration prints the episodes played and the learner's mean return (+1 win, -1 loss).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
from ray import tune
from ray.rllib.algorithms.ppo import PPOConfig
from rllib_masking import MaskedVector, module_spec, train

from boardgym.envs.games import game as game_record

ENV_NAME = "boardgym_masked_vector"
BATCH = 512
MINIBATCH = 128


def make_env(config: dict[str, Any]) -> MaskedVector:
    """The masked vector env of ``config``: ``game``, ``opponent``, ``num_envs`` (RLlib adds
    it) and any other env keyword argument (board options, ``first_player``, ...)."""
    options = dict(config)
    record = game_record(options.pop("game"))
    return MaskedVector(gym.make_vec(record.env_id, num_envs=options.pop("num_envs", 1),
                                     vectorization_mode="vector_entry_point", **options))


def config(game: str, opponent: str, num_envs: int, env_runners: int,
           batch: int = BATCH) -> PPOConfig:
    """PPO against ``opponent`` on ``num_envs`` batched games per env runner."""
    tune.register_env(ENV_NAME, make_env)
    return (PPOConfig()
            .environment(ENV_NAME, env_config={"game": game, "opponent": opponent})
            .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=num_envs,
                         gym_env_vectorize_mode=gym.VectorizeMode.VECTOR_ENTRY_POINT)
            .rl_module(rl_module_spec=module_spec())
            .training(train_batch_size_per_learner=batch, minibatch_size=MINIBATCH,
                      num_epochs=2)
            .debugging(seed=0))


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Train for ``--iterations``; returns each iteration's results."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="tictactoe", help="any boardgym game")
    parser.add_argument("--opponent", default="random", help="a built-in AI spec")
    parser.add_argument("--num-envs", type=int, default=16, help="games per env runner")
    parser.add_argument("--iterations", type=int, default=10, help="training iterations")
    parser.add_argument("--env-runners", type=int, default=0,
                        help="Ray actors collecting games (0: in this process)")
    args = parser.parse_args(argv)
    return train(config(args.game, args.opponent, args.num_envs, args.env_runners),
                 args.iterations, mean_return)


def mean_return(result: dict[str, Any]) -> str:
    """The iteration's mean game return of the learner."""
    return f"mean return {result['env_runners'].get('episode_return_mean', float('nan')):+.2f}"


if __name__ == "__main__":
    main()
