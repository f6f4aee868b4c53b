"""Adding a game is one place: a small game defined here, through the public protocol alone,
gets the Gymnasium env, the vector env, the PettingZoo env, the generic players and
``boardgym evaluate`` without touching any other file.

The game: four-by-four tic-tac-toe (four in a row, column or diagonal wins), on 16-bit
bitboards. Each bit function serves a Python int (one game) and a ``uint64`` array (a batch).
"""

from __future__ import annotations

import json
import sys
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import boardgym
from boardgym import agents
from boardgym.envs.games.bitboard import Bits, bit_of, planes, select, unpack
from boardgym.envs.games.core import Game, IllegalMoveError, for_side, side_view

SIZE = 4
CELLS = SIZE * SIZE
FULL = (1 << CELLS) - 1
ACTION_CELLS = np.arange(CELLS)
BOARD_MAP = ACTION_CELLS.reshape(SIZE, SIZE)
LINES = ([[r * SIZE + c for c in range(SIZE)] for r in range(SIZE)]
         + [[r * SIZE + c for r in range(SIZE)] for c in range(SIZE)]
         + [[i * SIZE + i for i in range(SIZE)], [i * SIZE + SIZE - 1 - i for i in range(SIZE)]])
LINE_BITS = tuple(sum(1 << cell for cell in line) for line in LINES)
SYMBOLS = "-XO"


class State(NamedTuple):
    """A position: the side to move's marks, the other's, who moves (0 = X)."""

    me: Bits
    opp: Bits
    to_move: int | np.ndarray


def has_line(bits: Bits) -> Any:
    """True where ``bits`` hold a whole row, column or diagonal."""
    found: Any = False
    for line in LINE_BITS:
        found = found | ((bits & line) == line)
    return found


def initial_state() -> State:
    return State(0, 0, 0)


def initial_batch(n: int) -> State:
    return State(np.zeros(n, np.uint64), np.zeros(n, np.uint64), np.zeros(n, np.int64))


def action_bits(state: State) -> Bits:
    return select(has_line(state.opp), state.me & 0, FULL ^ (state.me | state.opp))


def legal_mask(state: State) -> np.ndarray:
    return unpack(action_bits(state), ACTION_CELLS).view(bool)


def play(state: State, action: Any) -> State:
    return State(state.opp, state.me | bit_of(action), 1 - state.to_move)


def apply(state: State, action: int) -> State:
    if not 0 <= action < CELLS or not action_bits(state) >> action & 1:
        raise IllegalMoveError(f"cell {action} cannot be played here")
    return play(state, action)


def apply_batch(state: State, actions: np.ndarray) -> State:
    return play(state, np.asarray(actions))


def is_terminal(state: State) -> Any:
    return has_line(state.opp) | ((state.me | state.opp) == FULL)


def result(state: State, side: Any) -> Any:
    return select(has_line(state.opp), for_side(select(state.to_move == 1, 1, -1), side), 0)


def observation(state: State, side: Any = None) -> np.ndarray:
    return planes(*side_view(state, side), BOARD_MAP)


def parse(text: str) -> State:
    if len(text) != CELLS or set(text) - set(SYMBOLS):
        raise ValueError(f"a position is {CELLS} characters X, O or -; got {text!r}")
    x = sum(1 << i for i, c in enumerate(text) if c == "X")
    o = sum(1 << i for i, c in enumerate(text) if c == "O")
    return State(x, o, 0) if x.bit_count() == o.bit_count() else State(o, x, 1)


def to_text(state: State) -> str:
    x, o = side_view(state, 0)
    return "".join(SYMBOLS[(int(x) >> i & 1) + 2 * (int(o) >> i & 1)] for i in range(CELLS))


GAME = Game(name="tictactoe4", title="Tic-tac-toe 4x4", rules=sys.modules[__name__],
            env_id="TicTacToe4-v0", env_doc="Four-by-four tic-tac-toe (a test game).")


@pytest.fixture(scope="module", autouse=True)
def registered() -> None:
    boardgym.register_game(GAME)


def test_gymnasium_env_passes_check_env() -> None:
    env = gym.make("TicTacToe4-v0", opponent="random")
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0, options={"position": "XO--------------"})
    assert obs.shape == (2, SIZE, SIZE)
    assert info["action_mask"].sum() in (CELLS - 2, CELLS - 3)  # the opponent may move first
    done = False
    while not done:
        action = int(np.flatnonzero(info["action_mask"])[0])
        obs, reward, done, _, info = env.step(action)
    assert reward in (-1.0, 0.0, 1.0) and info["winner"] == reward


def test_vector_env_runs_the_game_batched() -> None:
    env = gym.make_vec("TicTacToe4-v0", num_envs=16, vectorization_mode="vector_entry_point",
                       opponent="random")
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(1)
    finished = 0
    for _ in range(40):
        masks = info["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        obs, _, terminated, _, info = env.step(actions)
        finished += int(terminated.sum())
        assert obs.shape == (16, 2, SIZE, SIZE)
    assert finished > 0


def test_pettingzoo_env_plays_both_seats() -> None:
    pytest.importorskip("pettingzoo")
    from boardgym.envs.pettingzoo import env as aec_env

    aec = aec_env("tictactoe4")
    aec.reset(seed=0)
    totals = dict.fromkeys(aec.agents, 0.0)
    for agent in aec.agent_iter():
        observation, reward, terminated, truncated, _ = aec.last()
        totals[agent] += reward
        action = None if terminated or truncated else \
            int(np.flatnonzero(observation["action_mask"])[0])
        aec.step(action)
    assert sorted(totals.values()) in ([-1, 1], [0, 0])


@pytest.mark.parametrize("spec", ["random", "alphabeta:2", "mcts:30"])
def test_generic_players_play_legal_moves(spec: str) -> None:
    player = agents.make("tictactoe4", spec)
    state, rng = parse("XO-X-O----------"), np.random.default_rng(0)
    while not is_terminal(state):
        state = apply(state, int(player.act(state, rng)))


def test_alphabeta_takes_the_win() -> None:
    state = parse("XXX-OOO---------")  # X to move: cell 3 wins
    assert agents.make("tictactoe4", "alphabeta:2").act(state, np.random.default_rng(0)) == 3


def test_evaluate_command(capsys: pytest.CaptureFixture[str]) -> None:
    from boardgym.train.cli import main

    code = main(["evaluate", "tictactoe4", "alphabeta:2", "random", "--games", "6",
                 "--seed", "0", "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["games"] == 6 and report["a_wins"] + report["b_wins"] + report["ties"] == 6
