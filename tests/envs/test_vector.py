"""The batched envs of ``gym.make_vec(..., vectorization_mode="vector_entry_point")``."""

from __future__ import annotations

import copy
import itertools
import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

import boardgym  # noqa: F401  (registers the ids)
from boardgym import agents
from boardgym.envs import games, vector
from boardgym.envs.games import GAMES, IllegalMoveError
from boardgym.envs.games.bitboard import bits_from_mask, choose, random_draws

FAST_OPPONENTS = {"Reversi-v0": "corner_best", "FourInARow-v0": "lookahead:1",
                  "TicTacToe-v0": "rules"}
IDS = list(FAST_OPPONENTS)
STEPS = 120


def make(env_id: str, num_envs: int = 8, **kwargs: Any) -> Any:
    kwargs.setdefault("opponent", FAST_OPPONENTS[env_id])
    return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                        **kwargs)


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per sub-env (0 where there is none)."""
    return choose(bits_from_mask(masks), random_draws(rng, len(masks)))


def rollout(env: Any, seed: int, steps: int = STEPS) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace = [(obs, info["action_mask"])]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(random_actions(
            info["action_mask"], rng))
        trace.append((obs, reward, terminated, truncated, info["action_mask"]))
    return trace


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


def test_sub_env_games_do_not_depend_on_num_envs() -> None:
    small, large = make("Reversi-v0", num_envs=2), make("Reversi-v0", num_envs=5)
    obs_s, info_s = small.reset(seed=[11, 12])
    obs_l, info_l = large.reset(seed=[11, 40, 41, 42, 43])
    rng = np.random.default_rng(0)
    for _ in range(STEPS):
        np.testing.assert_array_equal(obs_s[0], obs_l[0])
        action = random_actions(info_s["action_mask"][:1], rng)[0]
        rest = random_actions(info_l["action_mask"][1:], rng)
        other = random_actions(info_s["action_mask"][1:], rng)[0]
        obs_s, reward_s, _, _, info_s = small.step(np.array([action, other]))
        obs_l, reward_l, _, _, info_l = large.step(np.concatenate(([action], rest)))
        assert reward_s[0] == reward_l[0]


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


def agent_view(rules: Any, state: Any, agent_side: int) -> np.ndarray:
    """The rules' observation of ``state`` with the agent's stones in plane 0."""
    planes = rules.observation(state)
    return planes if state.to_move == agent_side else planes[::-1]


@pytest.mark.parametrize(("env_id", "game"), [("FourInARow-v0", "four_in_a_row"),
                                              ("TicTacToe-v0", "tictactoe")])
def test_observations_replay_the_moves_of_each_game(env_id: str, game: str) -> None:
    """Each observation shows the position reached by the moves the sub-env reports, even
    when the caller writes into the arrays it was given, and through illegal actions."""
    rules = games.rules(game)
    n = 24
    env = make(env_id, num_envs=n, opponent="random")
    rng = np.random.default_rng(4)
    obs, info = env.reset(seed=4)
    states: list[Any] = [None] * n
    sides = [0] * n

    def start(i: int) -> None:  # a new game: the opponent's first move, if it had one
        states[i], sides[i] = rules.initial_state(), int(info["_opponent_action"][i])
        if sides[i]:
            states[i] = rules.apply(states[i], int(info["opponent_action"][i]))

    for i in range(n):
        start(i)
    terminated = np.zeros(n, dtype=bool)
    illegal_seen = ended_seen = 0
    for _ in range(STEPS):
        for i in range(n):
            np.testing.assert_array_equal(obs[i], agent_view(rules, states[i], sides[i]))
        obs[:] = 1  # the caller's array: the env must not read it back
        actions = random_actions(info["action_mask"], rng)
        taken = np.flatnonzero(~info["action_mask"][0])
        actions[0] = taken[0] if taken.size else 0  # sub-env 0 fills column/cell 0, then errs
        starting = terminated
        obs, _, terminated, _, info = env.step(actions)
        illegal_seen += info["illegal_action"].sum()
        ended_seen += terminated.sum()
        for i in range(n):
            if starting[i]:
                start(i)
            elif not info["illegal_action"][i]:
                states[i] = rules.apply(states[i], int(actions[i]))
                if info["_opponent_action"][i]:
                    states[i] = rules.apply(states[i], int(info["opponent_action"][i]))
    assert illegal_seen > 0 and ended_seen > 4 * n


@pytest.mark.parametrize(("env_id", "opponent"), [("FourInARow-v0", "alphabeta:2"),
                                                  ("Reversi-v0", None)])
def test_looped_opponent_replays_single_envs_exactly(env_id: str, opponent: Any) -> None:
    """Without a batched twin the opponent runs per sub-env on the single env's stream."""
    n, seed = 3, 5
    if opponent is None:
        opponent = agents.make("reversi", "corner_best")  # an Agent object: looped
    with pytest.warns(UserWarning, match="no batched version"):
        env = make(env_id, num_envs=n, opponent=opponent)
    singles = [gym.make(env_id, opponent=opponent) for _ in range(n)]
    obs, info = env.reset(seed=seed)
    single_out = [s.reset(seed=seed + i) for i, s in enumerate(singles)]
    pending = [False] * n
    for step in range(60):
        for i, (s_obs, s_info) in enumerate(single_out):
            np.testing.assert_array_equal(obs[i], s_obs)
            np.testing.assert_array_equal(info["action_mask"][i], s_info["action_mask"])
        actions = np.array([np.flatnonzero(m)[step % m.sum()] if m.any() else 0
                            for m in info["action_mask"]])
        obs, reward, terminated, _, info = env.step(actions)
        for i, s in enumerate(singles):
            if pending[i]:
                single_out[i], pending[i] = s.reset(), False
                assert reward[i] == 0 and not terminated[i]
                continue
            s_obs, s_reward, pending[i], _, s_info = s.step(actions[i])
            single_out[i] = (s_obs, s_info)
            assert reward[i] == s_reward and terminated[i] == pending[i]
            assert info["winner"][i] == s_info.get("winner", 0)


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


class EdgeLegal:
    """A deterministic opponent: the lowest (or highest) legal action."""

    def __init__(self, rules: Any, highest: bool) -> None:
        self.rules, self.highest = rules, highest

    def act(self, state: Any, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(self.rules.legal_mask(state))
        return int(legal[-1] if self.highest else legal[0])


def edge_players() -> tuple[EdgeLegal, EdgeLegal]:
    rules = games.rules("tictactoe")
    return EdgeLegal(rules, highest=False), EdgeLegal(rules, highest=True)


def test_a_list_of_opponents_plays_each_sub_env_as_its_own_opponent() -> None:
    """Sub-env ``i`` of a mixed list plays exactly the games of an env whose every sub-env
    has ``opponent[i]``, given the same seeds and actions."""
    specs = ["random", "rules", "perfect", "rules_center"]
    mixed = make("TicTacToe-v0", num_envs=4, opponent=specs)
    assert mixed.unwrapped.opponents == specs
    uniform = {spec: make("TicTacToe-v0", num_envs=4, opponent=spec) for spec in specs}
    rng = np.random.default_rng(3)
    obs, info = mixed.reset(seed=20)
    outs = {spec: env.reset(seed=20) for spec, env in uniform.items()}
    for _ in range(STEPS):
        for i, spec in enumerate(specs):
            np.testing.assert_array_equal(obs[i], outs[spec][0][i])
        actions = random_actions(info["action_mask"], rng)
        obs, reward, _, _, info = mixed.step(actions)
        for i, spec in enumerate(specs):
            out = uniform[spec].step(actions)
            assert out[1][i] == reward[i]
            outs[spec] = (out[0], out[4])


def first_moves_match(env: Any, steps: int = STEPS) -> int:
    """Step ``env`` (opponent first, tic-tac-toe, opponents ``EdgeLegal``) with random
    actions; check each game's first opponent move is its current opponent's: the lowest
    cell (0) or the highest (8). Returns how many first moves were checked."""
    rng = np.random.default_rng(2)
    obs, info = env.reset(seed=0)
    checked = 0
    for _ in range(steps):
        for i, opponent in enumerate(env.unwrapped.opponents):
            if obs[i].sum() == 1:  # a new game: the opponent's first move only
                assert info["opponent_action"][i] == (0 if opponent.highest is False else 8)
                checked += 1
        obs, _, _, _, info = env.step(random_actions(info["action_mask"], rng))
    return checked


def test_agent_objects_in_a_list_move_game_by_game() -> None:
    lowest, highest = edge_players()
    with pytest.warns(UserWarning, match="no batched version"):
        env = make("TicTacToe-v0", num_envs=4, first_player="opponent",
                   opponent=[lowest, highest, highest, lowest])
    assert env.unwrapped.opponents == [lowest, highest, highest, lowest]
    assert first_moves_match(env) > 8


def test_a_sampler_draws_each_new_games_opponent_from_the_sub_envs_generator() -> None:
    calls: list[int] = []

    def sampler(rng: np.random.Generator) -> str:
        assert isinstance(rng, np.random.Generator)
        calls.append(1)
        return ["random", "rules", "perfect"][int(rng.integers(3))]

    def run(seed: int) -> list[list[str]]:
        env = make("TicTacToe-v0", num_envs=6, opponent=sampler)
        rng = np.random.default_rng(1)
        _, info = env.reset(seed=seed)
        seen = [env.unwrapped.opponents]
        for _ in range(STEPS):
            _, _, _, _, info = env.step(random_actions(info["action_mask"], rng))
            seen.append(env.unwrapped.opponents)
        return seen

    first = run(5)
    games_started = 6 + sum(sum(a != b for a, b in zip(x, y, strict=True))
                            for x, y in itertools.pairwise(first))
    assert len(calls) >= games_started > 6
    assert {spec for row in first for spec in row} == {"random", "rules", "perfect"}
    assert run(5) == first and run(6) != first


def test_a_sampler_of_agents_sets_each_games_opponent() -> None:
    lowest, highest = edge_players()
    env = make("TicTacToe-v0", num_envs=8, first_player="opponent",
               opponent=lambda rng: highest if rng.random() < 0.5 else lowest)
    with pytest.warns(UserWarning, match="no batched version"):
        assert first_moves_match(env) > 16
    assert {id(o) for o in env.unwrapped.opponents} <= {id(lowest), id(highest)}


@pytest.mark.parametrize("bad", [["random"] * 3, 42, ["random", 7, "rules", "rules"]])
def test_bad_opponent_lists_are_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="opponent"):
        make("TicTacToe-v0", num_envs=4, opponent=bad)


def test_unknown_opponent_in_a_list_is_refused() -> None:
    with pytest.raises(ValueError, match="no_such_ai"):
        make("TicTacToe-v0", num_envs=2, opponent=["random", "no_such_ai"])


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


@pytest.mark.parametrize("seed", [1.5, 2 ** 64, "3", -1, [1, 2.0], [1, 2], True])
def test_bad_seeds_are_refused(seed: Any) -> None:
    env = make("TicTacToe-v0", num_envs=3)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=seed)


def test_the_largest_seeds_are_taken() -> None:
    env = make("TicTacToe-v0", num_envs=3)
    env.reset(seed=2 ** 64 - 3)
    env.reset(seed=[2 ** 64 - 1, 0, np.uint64(7)])


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
