"""The arguments the single env and the vector env share (``envs.settings``): checked once,
refused by both with the same message."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import boardgym  # noqa: F401  (registers the ids)

BAD_SHARED = [
    ("TicTacToe-v0", {"illegal_action": "ignore"}, "illegal_action must be one of"),
    ("TicTacToe-v0", {"reward": "margin"}, "reward must be one of"),
    ("TicTacToe-v0", {"reward": "score"}, "reward='win' for"),
    ("TicTacToe-v0", {"first_player": "x"}, "first_player must be one of"),
    ("TicTacToe-v0", {"opening": 42}, "opening must be None or a callable"),
    ("FourInARow-v0", {"connect": 9}, "connect must be between"),
    ("TicTacToe-v0", {"colour": "red"}, "the env's own arguments"),
]


def refusal(build: Any) -> str:
    """The message of the ValueError that ``build()`` raises."""
    with pytest.raises(ValueError) as error:
        build()
    return str(error.value)


@pytest.mark.parametrize(("env_id", "kwargs", "match"), BAD_SHARED)
def test_both_envs_refuse_a_bad_shared_argument_alike(env_id: str, kwargs: dict[str, Any],
                                                      match: str) -> None:
    single = refusal(lambda: gym.make(env_id, **kwargs))
    batched = refusal(lambda: gym.make_vec(env_id, num_envs=2,
                                           vectorization_mode="vector_entry_point", **kwargs))
    assert match in single
    assert "\n" not in single
    assert batched == single
