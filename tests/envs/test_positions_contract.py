"""The position contract: ``reset(options={"position": text})`` never hands the agent a
position without a legal move (single env and vector env alike), Reversi texts are read with
the pass made, and the opening sampler keeps its redraw rule."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import boardgym  # noqa: F401
from boardgym.envs.games import reversi

REVERSI_X_MUST_PASS = "OX" + "-" * 62 + " X"
"""X to move without a legal move: O is to move, and its c1 takes every disc."""
C4_RED_WINS = "445566"
"""Red to move and wins at once (columns 3 or 7)."""
FINISHED = {"Reversi-v0": "X" * 64 + " O", "FourInARow-v0": "1212121",
            "TicTacToe-v0": "XXXOO----"}
ENDED_BY_OPPONENT = [
    ("Reversi-v0", REVERSI_X_MUST_PASS, "agent", "first_player='opponent'"),
    ("FourInARow-v0", C4_RED_WINS, "opponent", "first_player='agent'"),
    ("TicTacToe-v0", "XX-OO----", "opponent", "first_player='agent'"),
]


def vector(env_id: str, n: int = 2, **kwargs: Any) -> Any:
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)


def one_line_error(call: Any, *args: Any, **kwargs: Any) -> str:
    """The message of the ValueError ``call`` raises (checked to be one line)."""
    with pytest.raises(ValueError) as info:
        call(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("env_id", list(FINISHED))
def test_reset_refuses_finished_position_single_and_vector(env_id: str) -> None:
    text = FINISHED[env_id]
    single = one_line_error(gym.make(env_id).reset, options={"position": text})
    batched = one_line_error(vector(env_id).reset, options={"position": text})
    for message in (single, batched):
        assert "is finished" in message and "legal move" in message
    assert "sub-env 0" in batched


@pytest.mark.parametrize(("env_id", "text", "first", "fix"), ENDED_BY_OPPONENT)
def test_reset_refuses_position_the_opponent_ends_single_and_vector(
        env_id: str, text: str, first: str, fix: str) -> None:
    """The reported holes: the opponent's reply ends the game before the agent moves."""
    single = gym.make(env_id, first_player=first)
    batched = vector(env_id, first_player=first)
    for message in (one_line_error(single.reset, seed=0, options={"position": text}),
                    one_line_error(batched.reset, seed=0, options={"position": text})):
        assert "ends before the agent moves" in message and fix in message
    with pytest.raises(gym.error.ResetNeeded):
        single.step(0)  # the refused reset leaves no game to step
    with pytest.raises(gym.error.ResetNeeded):
        batched.step(np.zeros(2, dtype=np.int64))


@pytest.mark.parametrize(("env_id", "text", "first", "fix"), ENDED_BY_OPPONENT)
def test_the_named_fix_gives_the_agent_a_legal_move(env_id: str, text: str, first: str,
                                                    fix: str) -> None:
    other = fix.split("'")[1]
    _, info = gym.make(env_id, first_player=other).reset(options={"position": text})
    assert info["action_mask"].any() and "winner" not in info
    _, info = vector(env_id, first_player=other).reset(options={"position": text})
    assert info["action_mask"].any(axis=1).all()


def test_reversi_text_whose_side_to_move_must_pass_is_read_with_the_pass() -> None:
    """One rule, in ``parse``: after reading, the side to move has a legal move unless the
    game is over, as after ``apply``; ``to_text`` names the side that moves."""
    state = reversi.parse(REVERSI_X_MUST_PASS)
    assert state.to_move == 1 and reversi.legal_mask(state).any()
    assert reversi.to_text(state) == REVERSI_X_MUST_PASS[:-1] + "O"
    env = gym.make("Reversi-v0", first_player="opponent")
    _, info = env.reset(options={"position": REVERSI_X_MUST_PASS})
    assert np.flatnonzero(info["action_mask"]).tolist() == [2]  # c1, O's only move


def test_vector_reset_takes_one_position_per_sub_env() -> None:
    env = vector("FourInARow-v0", 3, first_player="agent")
    _, info = env.reset(seed=0, options={"position": ["4453", "", "12"]})
    assert info["action_mask"].all(axis=1).all()
    assert env.unwrapped.position_texts()[1:] == ["", "12"]
    _, info = env.reset(options={"position": "77", "reset_mask": np.array([0, 1, 0], bool)})
    assert env.unwrapped.position_texts()[1] == "77"


@pytest.mark.parametrize(("options", "expected"), [
    ({"position": ["4453"]}, "a position text or a list of 2 of them"),
    ({"position": 7}, "a position text or a list of 2 of them"),
    ({"position": ["4453", "9"]}, "sub-env 1"),
    ({"board": "4453"}, "'position': text or list of N texts"),
])
def test_vector_reset_position_errors_name_the_fix(options: dict[str, Any],
                                                   expected: str) -> None:
    assert expected in one_line_error(vector("FourInARow-v0").reset, options=options)


def test_vector_position_wins_over_the_opening_sampler() -> None:
    env = vector("FourInARow-v0", 2, first_player="agent", opening=lambda rng: "1111")
    env.reset(seed=0, options={"position": "4453"})
    assert env.unwrapped.position_texts() == ["4354", "4354"]  # a batch keeps no move order


def test_opening_sampler_keeps_its_redraw_rule() -> None:
    """A sampler's position that the opponent ends is drawn again, never refused."""
    draws = iter([C4_RED_WINS, "4453"])
    env = gym.make("FourInARow-v0", first_player="opponent", opponent="lookahead:2",
                   opening=lambda rng: next(draws, None))
    _, info = env.reset(seed=0)
    assert info["action_mask"].any()
    assert env.unwrapped.position_text().startswith("4453")
