"""The vector env's compiled step (``envs.kernels``) against its Python path: the same games,
the same returns; when it applies; the compiled players' candidate sets."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from boardgym.agents import reversi as classic
from boardgym.agents.compiled import REVERSI_PLAYERS
from boardgym.agents.compiled import reversi as compiled_players
from boardgym.envs.games import GAMES, IllegalMoveError, players
from boardgym.envs.games import reversi as rules
from boardgym.envs.games.core import batch_of
from tests.envs.vectors import make, random_actions

COMPILED_OPPONENTS = ["random", "corner_best", "corner_side_best", "worst", "wpc"]
REVERSI = GAMES["reversi"]


def twins(num_envs: int = 64, **kwargs: Any) -> tuple[Any, Any]:
    """Two equal Reversi vector envs: the compiled step, and the Python path (the
    reference, through the documented ``compiled_step = None`` switch)."""
    fast, reference = (make("Reversi-v0", num_envs=num_envs, **kwargs) for _ in range(2))
    assert fast.unwrapped.compiled_step is not None
    reference.unwrapped.compiled_step = None
    return fast, reference


def assert_same_returns(fast: tuple[Any, ...], reference: tuple[Any, ...]) -> None:
    """Equal values and dtypes, ``info`` included (its keys in the same order)."""
    *arrays, info = fast
    *expected, expected_info = reference
    assert list(info) == list(expected_info)
    for got, want in zip([*arrays, *info.values()], [*expected, *expected_info.values()],
                         strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def step_both_refusing(fast: Any, reference: Any, info: dict[str, Any], actions: np.ndarray,
                       rng: np.random.Generator) -> tuple[Any, bool]:
    """Step the compiled env ``fast`` and the Python path's ``reference`` (both with
    ``illegal_action="raise"``) with ``actions``: where some are illegal, both refuse them
    and ``fast`` stays as it was, and both step with random legal actions instead. Returns
    ``fast``'s step and whether a step was refused."""
    legal = info["action_mask"][np.arange(len(actions)), actions] \
        | ~info["action_mask"].any(axis=1)
    refused = not legal.all()
    if refused:
        before = copy.deepcopy(fast)
        with pytest.raises(IllegalMoveError, match=f"env {np.flatnonzero(~legal)[0]}"):
            fast.step(actions)
        with pytest.raises(IllegalMoveError):
            reference.step(actions)
        assert fast.unwrapped.position_texts() == before.unwrapped.position_texts()
        actions = random_actions(info["action_mask"], rng)
    result = fast.step(actions)
    assert_same_returns(result, reference.step(actions))
    return result, refused


def illegal_mixed(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random legal actions, with an arbitrary action in about one sub-env in twelve."""
    actions = random_actions(masks, rng)
    wild = rng.random(len(actions)) < 1 / 12
    actions[wild] = rng.integers(masks.shape[1], size=int(wild.sum()))
    return actions


@pytest.mark.parametrize("reward", ["win", "score"])
@pytest.mark.parametrize("opponent", COMPILED_OPPONENTS)
def test_compiled_step_plays_the_python_paths_games(opponent: str, reward: str) -> None:
    fast, reference = twins(opponent=opponent, reward=reward)
    rng = np.random.default_rng(3)
    obs, info = fast.reset(seed=11)
    assert_same_returns((obs, info), reference.reset(seed=11))
    illegal = ended = 0
    for step in range(300):
        if step == 150:  # a partial reset on the Python path, then compiled steps again
            options = {"reset_mask": rng.random(fast.num_envs) < 0.3}
            assert_same_returns(fast.reset(options=options), reference.reset(options=options))
        actions = illegal_mixed(info["action_mask"], rng)
        result = fast.step(actions)
        assert_same_returns(result, reference.step(actions))
        info = result[4]
        illegal += int(info["illegal_action"].sum())
        ended += int(result[2].sum())
    np.testing.assert_array_equal(fast.unwrapped.action_masks(),
                                  reference.unwrapped.action_masks())
    assert fast.unwrapped.position_texts() == reference.unwrapped.position_texts()
    assert illegal > 100 and ended > illegal


def test_a_partial_reset_leaves_no_moves_in_games_waiting_for_their_restart() -> None:
    env = make("Reversi-v0", num_envs=2, opponent="random", first_player="agent")
    env.reset(seed=0)
    _, _, terminated, _, _ = env.step(np.array([0, 0]))  # a1 is never legal at the start
    assert terminated.all()
    _, info = env.reset(options={"reset_mask": np.array([True, False])})
    assert info["action_mask"][0].any() and not info["action_mask"][1].any()
    _, _, terminated, _, info = env.step(np.array([19, 19]))  # sub-env 1 restarts: no move
    assert not terminated.any() and not info["illegal_action"].any()
    assert env.unwrapped.position_texts()[1] == rules.to_text(rules.initial_state())


def test_first_players_positions_and_raise_match_the_python_path() -> None:
    first = ["agent", "opponent", "random", "random"] * 4
    fast, reference = twins(num_envs=16, first_player=first, illegal_action="raise")
    rng = np.random.default_rng(0)
    assert_same_returns(fast.reset(seed=2), reference.reset(seed=2))
    for _ in range(6):
        actions = random_actions(fast.unwrapped.action_masks(), rng)
        assert_same_returns(fast.step(actions), reference.step(actions))
    texts = fast.unwrapped.position_texts()
    obs, info = fast.reset(seed=5, options={"position": texts})
    assert_same_returns((obs, info), reference.reset(seed=5, options={"position": texts}))
    refused = 0
    for _ in range(120):
        actions = illegal_mixed(info["action_mask"], rng)
        result, was_refused = step_both_refusing(fast, reference, info, actions, rng)
        refused += was_refused
        info = result[4]
    assert refused > 20


@pytest.mark.parametrize("kwargs", [
    {"opponent": "alphabeta:1"}, {"opponent": ["random", "worst"] * 2},
    {"opponent": lambda rng: "random"}, {"opening": lambda rng: None},
    {"autoreset_mode": AutoresetMode.SAME_STEP}])
def test_the_python_path_runs_where_the_compiled_step_does_not_apply(kwargs: Any) -> None:
    assert make("Reversi-v0", num_envs=4, **kwargs).unwrapped.compiled_step is None


def test_the_compiled_step_applies_to_one_spec_with_a_compiled_twin() -> None:
    assert make("Reversi-v0", num_envs=4, opponent=["worst"] * 4).unwrapped.compiled_step
    assert make("TicTacToe-v0", num_envs=4, opponent="mcts:8").unwrapped.compiled_step is None


def test_the_registry_names_the_compiled_twins() -> None:
    twinned = {name for name, entry in players.entries(REVERSI).items() if entry.compiled}
    assert twinned == set(COMPILED_OPPONENTS) == set(REVERSI_PLAYERS)
    for code, name in enumerate(REVERSI_PLAYERS):
        twin = players.make_compiled(REVERSI, name)
        assert twin is not None and twin.code == code
        assert twin.respond_batch is compiled_players.respond_batch
    assert players.make_compiled(REVERSI, "corner_best:2") is None
    assert players.make_compiled(REVERSI, players.make(REVERSI, "random")) is None
    assert players.make_compiled(GAMES["tictactoe"], "mcts:8") is None


def random_positions(count: int, rng: np.random.Generator) -> list[rules.State]:
    """Positions of random games (late ones included, so h8, bit 63, is often taken)."""
    found: list[rules.State] = []
    while len(found) < count:
        state = rules.initial_state()
        while state.legal:
            found.append(state)
            state = rules.play(state, int(rng.choice(np.flatnonzero(rules.legal_mask(state)))))
        found.append(state)
    return found


def test_compiled_candidates_equal_the_classic_players() -> None:
    positions = random_positions(600, np.random.default_rng(4))
    assert any(state.me >> 63 or state.opp >> 63 for state in positions)
    python = {"random": lambda state: state.legal,
              **{name: candidates for name, (candidates, _) in classic.CLASSIC.items()}}
    for name in COMPILED_OPPONENTS:
        code = REVERSI_PLAYERS.index(name)
        for state in positions:
            want = int(python[name](batch_of(state))[0])
            assert compiled_players.candidates(code, state.me, state.opp, state.legal) == want
