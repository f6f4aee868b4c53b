"""The vector env's opponents: one spec, a list, or a sampler per sub-env; batched or run
game by game."""

from __future__ import annotations

import itertools
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from boardgym import agents
from boardgym.envs import games
from tests.envs.vectors import STEPS, make, random_actions


@pytest.mark.parametrize(("env_id", "opponent"), [("FourInARow-v0", "alphabeta:2"),
                                                  ("Reversi-v0", None)])
def test_looped_opponent_replays_single_envs_exactly(env_id: str, opponent: Any) -> None:
    """Without a batched twin the opponent runs per sub-env on the single env's stream: game
    by game with a warning (an Agent object), or in one compiled loop (``act_many``: the
    search players)."""
    n, seed = 3, 5
    if opponent is None:
        opponent = agents.make("reversi", "corner_best")  # an Agent object: looped
        with pytest.warns(UserWarning, match="no batched version"):
            env = make(env_id, num_envs=n, opponent=opponent)
    else:
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
