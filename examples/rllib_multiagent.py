"""RLlib PPO with action masking, self-play on any boardgym game's PettingZoo env.

Both seats are policies (``player_0`` moves first, ``player_1`` second), each an RLlib PPO
module that never samples an illegal move (``rllib_masking.py``); they learn against each
other. Needs the ray and pettingzoo extras::

    python examples/rllib_multiagent.py --game tictactoe --iterations 20
    python examples/rllib_multiagent.py --game four_in_a_row --iterations 50 --env-runners 2
    RAY_ADDRESS=HEAD:6379 python examples/rllib_multiagent.py --game reversi  # on a cluster

Each iteration prints the episodes played and each seat's mean return (+1 win, -1 loss).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.utils.typing import AgentID
from rllib_masking import MaskedTurns, module_spec, train

SEATS = ("player_0", "player_1")
BATCH = 512
MINIBATCH = 128


def seat_policy(agent_id: AgentID, episode: Any = None, **kwargs: Any) -> str:
    """Each seat plays with its own policy."""
    return str(agent_id)


def config(game: str, env_runners: int, batch: int = BATCH) -> PPOConfig:
    """PPO on ``game``'s turn-taking env, one masked module per seat."""
    return (PPOConfig()
            .environment(MaskedTurns, env_config={"game": game})
            .multi_agent(policies=set(SEATS), policy_mapping_fn=seat_policy)
            .rl_module(rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={seat: module_spec() for seat in SEATS}))
            .env_runners(num_env_runners=env_runners)
            .training(train_batch_size_per_learner=batch, minibatch_size=MINIBATCH,
                      num_epochs=2)
            .debugging(seed=0))


def seat_returns(result: dict[str, Any]) -> str:
    """Each seat's mean return in an iteration's results."""
    returns = result["env_runners"].get("module_episode_returns_mean", {})
    return ", ".join(f"{seat} {returns[seat]:+.2f}" for seat in SEATS if seat in returns)


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Train for ``--iterations``; returns each iteration's results."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="tictactoe", help="any boardgym game")
    parser.add_argument("--iterations", type=int, default=10, help="training iterations")
    parser.add_argument("--env-runners", type=int, default=0,
                        help="Ray actors collecting games (0: in this process)")
    args = parser.parse_args(argv)
    return train(config(args.game, args.env_runners), args.iterations, seat_returns)


if __name__ == "__main__":
    main()
