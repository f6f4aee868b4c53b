"""The batched envs of ``gym.make_vec(..., vectorization_mode="vector_entry_point")``: the
Gymnasium vector API, autoreset, illegal actions, copies and openings."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from boardgym.envs import games, vector
from boardgym.envs.games import GAMES, IllegalMoveError
from tests.envs.vectors import IDS, STEPS, agent_view, make, random_actions, rollout


@pytest.mark.parametrize("env_id", IDS)
def test_vector_conformance(env_id: str) -> None:
    env = make(env_id)
    single = gym.make(env_id)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert env.single_observation_space == single.observation_space
    assert env.single_action_space == single.action_space
    assert env.observation_space == batch_space(single.observation_space, env.num_envs)
    assert env.action_space == batch_space(single.action_space, env.num_envs)
    for step in rollout(env, seed=3):
        obs, masks = step[0], step[-1]
        assert obs.dtype == np.uint8 and obs.flags.c_contiguous
        assert env.observation_space.contains(obs)
        assert masks.shape == (env.num_envs, single.action_space.n) and masks.dtype == bool
        if len(step) == 5:
            reward, terminated, truncated = step[1:4]
            assert reward.dtype == np.float64 and terminated.dtype == bool
            assert not truncated.any()
            assert set(np.unique(reward)) <= {-1.0, 0.0, 1.0}
            assert (masks.any(axis=1) == ~terminated).all()
    np.testing.assert_array_equal(env.unwrapped.action_masks(), masks)


@pytest.mark.parametrize("env_id", IDS)
def test_seeded_determinism(env_id: str) -> None:
    first, second = rollout(make(env_id), seed=7), rollout(make(env_id), seed=7)
    for a, b in zip(first, second, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
    other = rollout(make(env_id), seed=8)
    assert any((a[0] != b[0]).any() for a, b in zip(first, other, strict=True))


@pytest.mark.parametrize("env_id", IDS)
def test_next_step_autoreset_returns_the_new_games_first_observation(env_id: str) -> None:
    env = make(env_id, num_envs=16, first_player=["agent", "opponent"] * 8)
    single_first = gym.make(env_id, first_player="agent").reset(seed=0)[0]
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=1)
    ended_seen = 0
    for _ in range(STEPS):
        obs, reward, terminated, _, info = env.step(random_actions(info["action_mask"], rng))
        ended = np.flatnonzero(terminated)
        if ended.size == 0:
            continue
        ended_seen += ended.size
        assert (reward[ended] != 0).any() or (obs[ended].sum(axis=(1, 2, 3)) > 0).all()
        obs, reward, terminated, _, info = env.step(random_actions(info["action_mask"], rng))
        for i in ended:
            assert reward[i] == 0 and not terminated[i]
            assert info["action_mask"][i].any()
            if i % 2 == 0:  # the agent moves first: the empty start position
                np.testing.assert_array_equal(obs[i], single_first)
            else:  # the opponent has made exactly its first move
                assert obs[i][1].sum() > single_first[1].sum()
                assert obs[i].sum() == single_first.sum() + 1
    assert ended_seen > 0


@pytest.mark.parametrize("env_id", IDS)
def test_same_step_autoreset_reports_the_final_observation(env_id: str) -> None:
    env = make(env_id, autoreset_mode=AutoresetMode.SAME_STEP, first_player="agent")
    start = gym.make(env_id, first_player="agent").reset(seed=0)[0]
    rng = np.random.default_rng(2)
    obs, info = env.reset(seed=2)
    for _ in range(STEPS):
        obs, _reward, terminated, _, info = env.step(random_actions(info["action_mask"], rng))
        for i in np.flatnonzero(terminated):
            np.testing.assert_array_equal(obs[i], start)
            assert info["_final_obs"][i] and info["final_obs"][i].sum() > 0
            assert info["action_mask"][i].any()


def test_per_env_first_player() -> None:
    env = make("TicTacToe-v0", num_envs=4, first_player=["agent", "opponent", "agent",
                                                         "opponent"])
    obs, info = env.reset(seed=0)
    assert obs[:, 1].sum(axis=(1, 2)).tolist() == [0, 1, 0, 1]
    assert info["_opponent_action"].tolist() == [False, True, False, True]
    with pytest.raises(ValueError, match="first_player"):
        make("TicTacToe-v0", num_envs=4, first_player=["agent", "x", "agent", "agent"])


def test_illegal_actions_and_bad_input() -> None:
    env = make("TicTacToe-v0", num_envs=2, first_player="agent")
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.zeros(2, dtype=np.int64))
    env.reset(seed=0)
    env.step(np.array([4, 0]))
    _obs, reward, terminated, _, info = env.step(np.array([4, 1]))  # 4 is taken in sub-env 0
    assert terminated.tolist() == [True, False] and reward[0] == -1.0
    assert info["illegal_action"][0] and not info["action_mask"][0].any()
    for bad in (np.zeros(3, dtype=np.int64), np.array([0.5, 1.0]), np.array([0, 9])):
        with pytest.raises(ValueError, match="actions"):
            env.step(bad)
    strict = make("TicTacToe-v0", num_envs=2, first_player="agent", illegal_action="raise")
    strict.reset(seed=0)
    strict.step(np.array([4, 4]))
    with pytest.raises(IllegalMoveError, match="env 0"):
        strict.step(np.array([4, 0]))
    with pytest.raises(ValueError, match="num_envs"):
        make("TicTacToe-v0", num_envs=0)
    with pytest.raises(ValueError, match="connect"):
        make("FourInARow-v0", connect=9)


def test_reversi_score_reward_and_info() -> None:
    env = make("Reversi-v0", num_envs=32, reward="score", opponent="random")
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    for _ in range(STEPS):
        obs, reward, terminated, _, info = env.step(random_actions(info["action_mask"], rng))
        score = info["score"]
        np.testing.assert_array_equal(score[:, 0], obs[:, 0].sum(axis=(1, 2)))
        for i in np.flatnonzero(terminated):
            assert reward[i] == (score[i, 0] - score[i, 1]) / 64


def test_masks_handed_out_are_copies() -> None:
    env = make("TicTacToe-v0", num_envs=4, first_player="agent")
    _, info = env.reset(seed=0)
    legal = info["action_mask"].copy()
    info["action_mask"][:] = False
    env.unwrapped.action_masks()[:] = False
    np.testing.assert_array_equal(env.unwrapped.action_masks(), legal)
    _, _, _, _, info = env.step(np.argmax(legal, axis=1))
    assert not info["illegal_action"].any()


def test_raise_leaves_the_env_unchanged_and_legal_steps_go_on() -> None:
    env = make("TicTacToe-v0", num_envs=8, illegal_action="raise")
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=9)
    refused = 0
    for _ in range(STEPS):
        actions = random_actions(info["action_mask"], rng)
        live = np.flatnonzero(info["action_mask"].any(axis=1))
        if live.size:  # first try an illegal action in a game that goes on
            bad = actions.copy()
            i = live[0]
            bad[i] = int(np.flatnonzero(~info["action_mask"][i])[0]) \
                if not info["action_mask"][i].all() else bad[i]
            if not info["action_mask"][i, bad[i]]:
                twin = copy.deepcopy(env)
                with pytest.raises(IllegalMoveError, match=f"env {i}"):
                    env.step(bad)
                refused += 1
                expected = twin.step(actions)
                got = env.step(actions)
                for x, y in zip(expected[:4], got[:4], strict=True):
                    np.testing.assert_array_equal(x, y)
                info = got[4]
                continue
        _, _, _, _, info = env.step(actions)
    assert refused > 10


@pytest.mark.parametrize("actions", [np.array([0.0, 1.0]), np.array(["0", "1"]),
                                     np.array([True, False]), [0.5, 1]])
def test_non_integer_actions_are_refused(actions: Any) -> None:
    env = make("TicTacToe-v0", num_envs=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="integer"):
        env.step(actions)


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("duplicate", [copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))])
def test_vector_envs_pickle_and_deepcopy_and_step_identically(env_id: str,
                                                              duplicate: Any) -> None:
    env = make(env_id, num_envs=6)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=1)
    for _ in range(5):
        _, _, _, _, info = env.step(random_actions(info["action_mask"], rng))
    twin = duplicate(env)
    for _ in range(40):
        actions = random_actions(info["action_mask"], rng)
        a, b = env.step(actions), twin.step(actions)
        for x, y in zip(a[:4], b[:4], strict=True):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(a[4]["opponent_action"], b[4]["opponent_action"])
        info = a[4]


def test_one_vector_class_per_game_from_its_record() -> None:
    for record in GAMES.values():
        cls = getattr(vector, f"{record.class_prefix}VectorEnv")
        assert cls.record is record and record.env_id in cls.__doc__
        assert gym.spec(record.env_id).vector_entry_point == \
            f"boardgym.envs.vector:{cls.__name__}"


# -- openings --------------------------------------------------------------------------------

C4_WIN_FOR_SIDE_TO_MOVE = "121212"
"""Four-in-a-row, first player to move: column 1 completes four."""


def test_games_start_from_the_opening_samplers_positions() -> None:
    text = "4453"
    env = make("FourInARow-v0", num_envs=4, first_player="agent", opening=lambda rng: text)
    obs, info = env.reset(seed=0)
    state = games.rules("four_in_a_row").parse(text)
    for i in range(4):
        np.testing.assert_array_equal(obs[i], agent_view(games.rules("four_in_a_row"), state,
                                                         int(state.to_move)))
        np.testing.assert_array_equal(info["action_mask"][i],
                                      games.rules("four_in_a_row").legal_mask(state))


@pytest.mark.parametrize("env_id", IDS)
def test_random_openings_always_leave_the_agent_a_move_and_reproduce(env_id: str) -> None:
    record = next(g for g in GAMES.values() if g.env_id == env_id)

    def opening(rng: np.random.Generator) -> str | None:
        state = record.rules.initial_state()
        for _ in range(int(rng.integers(0, 7))):
            moves = np.flatnonzero(record.rules.legal_mask(state))
            after = record.rules.apply(state, int(rng.choice(moves)))
            if record.rules.is_terminal(after):
                break
            state = after
        return None if rng.random() < 0.2 else str(record.rules.to_text(state))

    def run(seed: int) -> list[tuple[np.ndarray, ...]]:
        env = make(env_id, num_envs=6, opening=opening)
        rng = np.random.default_rng(seed)
        obs, info = env.reset(seed=seed)
        assert info["action_mask"].any(axis=1).all()
        seen = [(obs.copy(), info["action_mask"].copy())]
        for _ in range(STEPS):
            obs, _, terminated, _, info = env.step(random_actions(info["action_mask"], rng))
            live = ~terminated
            assert info["action_mask"][live].any(axis=1).all()
            seen.append((obs.copy(), info["action_mask"].copy()))
        return seen

    first = run(3)
    assert all(np.array_equal(a, b) for x, y in zip(first, run(3), strict=True)
               for a, b in zip(x, y, strict=True))


def test_an_opening_the_opponent_wins_at_once_is_drawn_again() -> None:
    drawn: list[str | None] = [C4_WIN_FOR_SIDE_TO_MOVE, None]
    calls = []

    def opening(rng: np.random.Generator) -> str | None:
        calls.append(1)
        return drawn[min(len(calls), len(drawn)) - 1]

    env = make("FourInARow-v0", num_envs=1, first_player="opponent", opponent="lookahead:1",
               opening=opening)
    obs, info = env.reset(seed=0)
    assert len(calls) == 2 and info["action_mask"].all()
    assert obs[0, 1].sum() == 1  # the start position and the opponent's first disc


@pytest.mark.parametrize(("opening", "match"), [
    (42, "opening must be None or a callable"),
    (lambda rng: "not a position", "opening sampler's position"),
    (lambda rng: 7, "opening sampler's position"),
])
def test_bad_openings_are_refused(opening: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make("FourInARow-v0", num_envs=2, opening=opening).reset(seed=0)
