"""The search players' ``act_many`` (a batch of games in one compiled loop) against the
reference, their ``act`` game after game (``players.act_each``'s loop for a player without
``act_many``): the same moves, and every generator left in the same state, for the compiled
alpha-beta of Reversi and four-in-a-row and the compiled mcts of the three games; and the
vector env against them playing the very games of single envs, without the slow warning."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from boardgym import agents
from boardgym.agents import reversi_search
from boardgym.agents.four_in_a_row_search import Table
from boardgym.agents.four_in_a_row_strong import search_many
from boardgym.envs.games import GAMES, four_in_a_row, players, reversi
from boardgym.envs.games.core import batch_of, join, unbatch
from tests.agents.test_mcts_compiled import random_positions, same_state

BIT_63 = 1 << 63
FOUR_BOARDS = [(6, 7, 4), (4, 5, 3), (7, 8, 5), (5, 4, 4), (4, 12, 5)]
"""Four-in-a-row board sizes ``(rows, columns, connect)``."""
SHARED = 20
"""The games of a batch that also play with one generator for them all."""


def game_by_game(agent: Any, batch: Any, rngs: list[np.random.Generator]) -> np.ndarray:
    """The reference: ``agent.act`` in each game in turn, game ``k`` with ``rngs[k]``."""
    return np.array([agent.act(unbatch(batch, k), rng) for k, rng in enumerate(rngs)])


def assert_same_as_game_by_game(agent: Any, positions: list[Any], seed: int) -> None:
    """``act_each`` (through ``act_many``) plays the reference's moves and leaves each
    generator in the reference's state: one generator per game, and one for all games."""
    assert players.plays_many(agent)
    batch = join([batch_of(state) for state in positions])
    expected_rngs = [np.random.default_rng([seed, k]) for k in range(len(positions))]
    actual_rngs = [np.random.default_rng([seed, k]) for k in range(len(positions))]
    expected = game_by_game(agent, batch, expected_rngs)
    np.testing.assert_array_equal(players.act_each(agent, batch, actual_rngs), expected)
    assert all(same_state(a, e) for a, e in zip(actual_rngs, expected_rngs, strict=True))
    shared_expected, shared_actual = np.random.default_rng(seed), np.random.default_rng(seed)
    few = join([batch_of(state) for state in positions[:SHARED]])
    expected = game_by_game(agent, few, [shared_expected] * SHARED)
    actual = players.act_each(agent, few, [shared_actual] * SHARED)
    np.testing.assert_array_equal(actual, expected)
    assert same_state(shared_actual, shared_expected)


def reversi_positions(count: int, seed: int) -> list[Any]:
    """``count`` random unfinished Reversi positions, endgames and bit 63 among them."""
    positions = random_positions(reversi, reversi.initial_state(), count, seed)
    assert any((state.me | state.opp) & BIT_63 for state in positions)
    assert any(64 - (state.me | state.opp).bit_count() <= reversi_search.ENDGAME_EMPTIES
               for state in positions)
    return positions


def four_positions(size: tuple[int, int, int], count: int, seed: int) -> list[Any]:
    """``count`` random unfinished four-in-a-row positions on a board of ``size``."""
    return random_positions(four_in_a_row, four_in_a_row.initial_state(*size), count, seed)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_reversi_alphabeta_batches_play_the_games_one_by_one(depth: int) -> None:
    positions = reversi_positions(250, seed=depth)
    assert_same_as_game_by_game(agents.make("reversi", f"alphabeta:{depth}"), positions, depth)


def test_reversi_alphabeta_4_batches_play_the_games_one_by_one() -> None:
    assert_same_as_game_by_game(agents.make("reversi", "alphabeta:4"),
                                reversi_positions(60, seed=4), 4)


def test_a_reversi_table_that_fills_in_a_batch_grows_and_the_moves_stay(
        monkeypatch: pytest.MonkeyPatch) -> None:
    table = reversi_search.Table(bits=2)
    monkeypatch.setattr(reversi_search, "TABLE", table)
    positions = reversi_positions(40, seed=5)
    batch = join([batch_of(state) for state in positions])
    agent = agents.make("reversi", "alphabeta:3")
    moves = players.act_each(agent, batch, [np.random.default_rng(k) for k in range(40)])
    assert table.slots > 4
    monkeypatch.setattr(reversi_search, "TABLE", reversi_search.Table())
    expected = game_by_game(agent, batch, [np.random.default_rng(k) for k in range(40)])
    np.testing.assert_array_equal(moves, expected)


@pytest.mark.parametrize("size", FOUR_BOARDS, ids=str)
@pytest.mark.parametrize("depth", [1, 3, 6])
def test_four_in_a_row_alphabeta_batches_play_the_games_one_by_one(
        size: tuple[int, int, int], depth: int) -> None:
    positions = four_positions(size, 30 if size == (5, 4, 4) else 60, seed=sum(size) + depth)
    assert any(four_in_a_row.legal_bits(s) and size[0] * size[1]
               - (s.me | s.opp).bit_count() <= 20 for s in positions)  # the exact phase
    assert_same_as_game_by_game(agents.make("four_in_a_row", f"alphabeta:{depth}"), positions,
                                depth)


def test_a_four_in_a_row_table_that_fills_in_a_batch_grows_and_the_moves_stay() -> None:
    table = Table(bits=2)
    positions = four_positions((6, 7, 4), 30, seed=9)
    batch = join([batch_of(state) for state in positions])
    moves = search_many(batch, 6, [np.random.default_rng(k) for k in range(30)], table=table)
    assert table.bits > 2
    agent = agents.make("four_in_a_row", "alphabeta:6")
    expected = game_by_game(agent, batch, [np.random.default_rng(k) for k in range(30)])
    np.testing.assert_array_equal(moves, expected)


@pytest.mark.parametrize("name", ["reversi", "four_in_a_row", "tictactoe"])
@pytest.mark.parametrize("playouts", [1, 10, 50])
def test_mcts_batches_play_the_games_one_by_one(name: str, playouts: int) -> None:
    record = GAMES[name]
    positions = random_positions(record.rules, record.rules.initial_state(), 200,
                                 seed=playouts)
    assert_same_as_game_by_game(agents.make(name, f"mcts:{playouts}"), positions, playouts)


@pytest.mark.parametrize("size", FOUR_BOARDS[1:], ids=str)
def test_mcts_batches_on_other_four_in_a_row_boards(size: tuple[int, int, int]) -> None:
    assert_same_as_game_by_game(agents.make("four_in_a_row", "mcts:20"),
                                four_positions(size, 60, seed=sum(size)), 20)


@pytest.mark.parametrize(("name", "spec"), [("reversi", "alphabeta:2"),
                                            ("four_in_a_row", "alphabeta:2"),
                                            ("reversi", "mcts:5"), ("tictactoe", "mcts:5")])
def test_bad_batches_are_refused(name: str, spec: str) -> None:
    record = GAMES[name]
    agent = agents.make(name, spec)
    start = record.rules.initial_state()
    batch = join([batch_of(start), batch_of(start)])
    with pytest.raises(ValueError, match="one generator per game"):
        agent.act_many(batch, [np.random.default_rng(0)])
    with pytest.raises(ValueError, match="numpy Generator"):
        agent.act_many(batch, [np.random.default_rng(0), 7])
    finished = random_positions(record.rules, start, 1, seed=0)[0]
    while not record.rules.is_terminal(finished):
        finished = record.rules.apply(finished, int(np.flatnonzero(
            record.rules.legal_mask(finished))[0]))
    with pytest.raises(ValueError, match="finished game"):
        agent.act_many(join([batch_of(start), batch_of(finished)]),
                       [np.random.default_rng(0)] * 2)


VECTOR_CASES = [("Reversi-v0", "alphabeta:2"), ("FourInARow-v0", "alphabeta:2"),
                ("Reversi-v0", "mcts:50"), ("FourInARow-v0", "mcts:50"),
                ("TicTacToe-v0", "mcts:50")]


@pytest.mark.parametrize(("env_id", "opponent"), VECTOR_CASES)
def test_the_vector_env_plays_the_single_envs_games_without_a_warning(
        env_id: str, opponent: str) -> None:
    n, seed = 4, 11
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                           opponent=opponent)
    singles = [gym.make(env_id, opponent=opponent) for _ in range(n)]
    obs, info = env.reset(seed=seed)
    outs = [single.reset(seed=seed + i) for i, single in enumerate(singles)]
    pending = [False] * n
    for step in range(40):
        for i, (single_obs, single_info) in enumerate(outs):
            np.testing.assert_array_equal(obs[i], single_obs)
            np.testing.assert_array_equal(info["action_mask"][i], single_info["action_mask"])
        actions = np.array([np.flatnonzero(m)[step % m.sum()] if m.any() else 0
                            for m in info["action_mask"]])
        obs, reward, terminated, _, info = env.step(actions)
        for i, single in enumerate(singles):
            if pending[i]:
                outs[i], pending[i] = single.reset(), False
                continue
            single_obs, single_reward, pending[i], _, single_info = single.step(actions[i])
            outs[i] = (single_obs, single_info)
            assert reward[i] == single_reward and terminated[i] == pending[i]
