"""The compiled step of four-in-a-row (every board size) and tic-tac-toe against the vector
env's Python path (``compiled_step = None``): the same games, stream draws and returns."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

from boardgym.agents.compiled import FOUR_IN_A_ROW_PLAYERS, TICTACTOE_PLAYERS
from boardgym.envs.games import GAMES, players
from tests.envs.test_vector_kernels import assert_same_returns, illegal_mixed, step_both_refusing
from tests.envs.vectors import make, random_actions

BOARDS = [{}, {"rows": 4, "columns": 4, "connect": 3}, {"rows": 15, "columns": 4},
          {"rows": 7, "columns": 8, "connect": 5}, {"rows": 4, "columns": 12, "connect": 12},
          {"rows": 9, "columns": 6, "connect": 2}, {"rows": 5, "columns": 9}]
"""Four-in-a-row boards: the default, the smallest, both 64-bit ones (15x4 and 7x8: the
sentinel of the last column is bit 63; no board has more than 60 cells), the widest, a
line of two, and more than 8 columns."""
CASES: list[tuple[str, str, dict[str, int]]] = [
    *(("TicTacToe-v0", name, {}) for name in TICTACTOE_PLAYERS),
    *(("FourInARow-v0", name, board) for name in FOUR_IN_A_ROW_PLAYERS for board in BOARDS)]


def twins(env_id: str, num_envs: int = 37, **kwargs: Any) -> tuple[Any, Any]:
    """Two equal vector envs: the compiled step, and the Python path (the reference)."""
    fast, reference = (make(env_id, num_envs=num_envs, **kwargs) for _ in range(2))
    assert fast.unwrapped.compiled_step is not None
    reference.unwrapped.compiled_step = None
    return fast, reference


def wild(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random legal actions, with an arbitrary action in about one sub-env in four (often
    illegal: a full column, a taken cell)."""
    actions = random_actions(masks, rng)
    chosen = rng.random(len(actions)) < 1 / 4
    actions[chosen] = rng.integers(masks.shape[1], size=int(chosen.sum()))
    return actions


def play_both(fast: Any, reference: Any, info: dict[str, Any], steps: int,
              rng: np.random.Generator) -> tuple[int, int]:
    """``steps`` steps of both envs with the same (partly illegal) actions, their returns
    compared; the illegal actions and the games ended."""
    illegal = ended = 0
    for _ in range(steps):
        actions = wild(info["action_mask"], rng)
        result = fast.step(actions)
        assert_same_returns(result, reference.step(actions))
        info = result[4]
        illegal += int(info["illegal_action"].sum())
        ended += int(result[2].sum())
    return illegal, ended


@pytest.mark.parametrize(("env_id", "opponent", "board"), CASES,
                         ids=[f"{e[:4]}-{o}-{'x'.join(map(str, b.values())) or 'default'}"
                              for e, o, b in CASES])
def test_compiled_step_plays_the_python_paths_games(env_id: str, opponent: str,
                                                     board: dict[str, int]) -> None:
    fast, reference = twins(env_id, opponent=opponent, **board)
    rng = np.random.default_rng(7)
    obs, info = fast.reset(seed=3)
    assert_same_returns((obs, info), reference.reset(seed=3))
    illegal, ended = play_both(fast, reference, info, 60, rng)
    options = {"reset_mask": rng.random(fast.num_envs) < 0.3}  # the Python path, then on
    obs, info = fast.reset(options=options)
    assert_same_returns((obs, info), reference.reset(options=options))
    more_illegal, more_ended = play_both(fast, reference, info, 60, rng)
    np.testing.assert_array_equal(fast.unwrapped.action_masks(),
                                  reference.unwrapped.action_masks())
    assert fast.unwrapped.position_texts() == reference.unwrapped.position_texts()
    assert ended + more_ended > illegal + more_illegal + 20
    assert illegal + more_illegal > 0 or board.get("connect", 4) < 3  # no column ever fills


@pytest.mark.parametrize(("env_id", "board"), [("TicTacToe-v0", {}), ("FourInARow-v0", {}),
                                               ("FourInARow-v0", {"rows": 4, "columns": 5})])
def test_first_players_positions_and_raise_match_the_python_path(
        env_id: str, board: dict[str, int]) -> None:
    first = ["agent", "opponent", "random", "random"] * 4
    fast, reference = twins(env_id, num_envs=16, opponent="random", first_player=first,
                            illegal_action="raise", **board)
    rng = np.random.default_rng(1)
    obs, info = fast.reset(seed=2)
    assert_same_returns((obs, info), reference.reset(seed=2))
    refused = 0
    for step in range(80):
        if step == 4:  # games from positions (X to move: the agent, first), on the Python path
            texts = fast.unwrapped.position_texts()
            chosen = fast.unwrapped.action_masks().any(axis=1) & (np.array(first) == "agent") \
                & (fast.unwrapped.state.to_move == 0)
            assert chosen.any()
            options = {"position": texts, "reset_mask": chosen}
            obs, info = fast.reset(seed=5, options=options)
            assert_same_returns((obs, info), reference.reset(seed=5, options=options))
        actions = wild(info["action_mask"], rng)
        result, was_refused = step_both_refusing(fast, reference, info, actions, rng)
        refused += was_refused
        info = result[4]
    assert refused > 3


@pytest.mark.parametrize(("env_id", "opponent"), [("TicTacToe-v0", "perfect"),
                                                  ("FourInARow-v0", "random")])
def test_a_pickled_env_steps_on_compiled_as_the_original(env_id: str, opponent: str) -> None:
    env = make(env_id, num_envs=9, opponent=opponent, rows=5) if env_id[0] == "F" else \
        make(env_id, num_envs=9, opponent=opponent)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=4)
    for _ in range(5):
        _, _, _, _, info = env.step(random_actions(info["action_mask"], rng))
    clone = pickle.loads(pickle.dumps(env))
    assert clone.unwrapped.compiled_step is not None
    for _ in range(40):
        actions = illegal_mixed(info["action_mask"], rng)
        result = env.step(actions)
        assert_same_returns(clone.step(actions), result)
        info = result[4]


@pytest.mark.parametrize(("game", "names"), [("tictactoe", TICTACTOE_PLAYERS),
                                             ("four_in_a_row", FOUR_IN_A_ROW_PLAYERS)])
def test_the_registry_names_the_compiled_twins(game: str, names: tuple[str, ...]) -> None:
    record = GAMES[game]
    twinned = {name for name, entry in players.entries(record).items() if entry.compiled}
    assert twinned == set(names)
    for code, name in enumerate(names):
        twin = players.make_compiled(record, name)
        assert twin is not None and twin.code == code
    assert players.make_compiled(record, "random:2") is None
