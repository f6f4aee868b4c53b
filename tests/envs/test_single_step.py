"""The single env's compiled step (``envs.single_step``) against its Python path.

The env with ``opponent="random"`` plays through the kernels; the same player given as an
``Agent`` object (``agents.make(game, "random")``) runs the Python path, the reference. Both
are driven side by side with the same seeds and actions, and every value they hand out is
compared: observations, rewards, flags, infos (masks included), ``action_masks()``, the
position text and the state.
"""

from __future__ import annotations

import copy
import pickle
import re
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import boardgym  # noqa: F401  (registers the ids)
from boardgym import agents
from boardgym.envs.games import GAMES, IllegalMoveError, reversi

IDS = {"reversi": "Reversi-v0", "four_in_a_row": "FourInARow-v0", "tictactoe": "TicTacToe-v0"}
H8 = 63
"""Reversi's square h8: bit 63."""


def pair(game: str, **kwargs: Any) -> tuple[gym.Env, gym.Env]:
    """The env on the compiled step and its reference on the Python path."""
    fast = gym.make(IDS[game], opponent="random", **kwargs)
    slow = gym.make(IDS[game], opponent=agents.make(game, "random", options=_board(kwargs)),
                    **kwargs)
    assert bare(fast)._fast is not None and bare(slow)._fast is None
    return fast, slow


def _board(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if k in ("rows", "columns", "connect")}


def bare(env: gym.Env) -> Any:
    """``env`` without its wrappers."""
    return env.unwrapped


def compiled(env: gym.Env) -> bool:
    """True when ``env``'s last step or reset ran on the kernels (their words hold the game)."""
    return bool(bare(env)._words_live)


def same(a: Any, b: Any) -> None:
    """``a`` and ``b`` are equal values of the same types (arrays: dtype, shape, contents)."""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b)
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            same(a[key], b[key])
    else:
        assert type(a) is type(b) and a == b, (a, b)


def same_env(fast: gym.Env, slow: gym.Env) -> None:
    same(bare(fast).action_masks(), bare(slow).action_masks())
    assert bare(fast).position_text() == bare(slow).position_text()
    assert bare(fast).state == bare(slow).state
    assert bare(fast).agent_side == bare(slow).agent_side


def pick(info: dict[str, Any], rng: np.random.Generator, illegal: float) -> int:
    """A legal action, or (with probability ``illegal``) an in-range illegal one."""
    mask = info["action_mask"]
    if rng.random() < illegal and not mask.all():
        return int(rng.choice(np.flatnonzero(~mask)))
    return int(rng.choice(np.flatnonzero(mask)))


def play_side_by_side(fast: gym.Env, slow: gym.Env, seed: int, episodes: int,
                      illegal: float = 0.0, options: Any = None) -> None:
    """``episodes`` games on both envs from ``reset(seed=seed)``, compared at every step."""
    rng = np.random.default_rng(seed)
    for episode in range(episodes):
        reset_seed = seed if episode == 0 else None
        reset_options = options(rng) if callable(options) else options
        try:
            slow_out = slow.reset(seed=reset_seed, options=reset_options)
        except ValueError as error:
            with pytest.raises(ValueError, match=re.escape(str(error))):
                fast.reset(seed=reset_seed, options=reset_options)
            continue
        same(fast.reset(seed=reset_seed, options=reset_options), slow_out)
        same_env(fast, slow)
        play_out(fast, slow, slow_out[1], rng, illegal)


def play_out(fast: gym.Env, slow: gym.Env, info: dict[str, Any], rng: np.random.Generator,
             illegal: float = 0.0) -> None:
    """The game going on in both envs (``info`` the last one handed out) played to its end,
    compared at every step."""
    done = False
    while not done:
        action = pick(info, rng, illegal)
        try:
            out = slow.step(action)
        except IllegalMoveError as error:
            with pytest.raises(IllegalMoveError) as raised:
                fast.step(action)
            assert str(raised.value) == str(error)
            same_env(fast, slow)
            continue
        same(fast.step(action), out)
        same_env(fast, slow)
        info, done = out[4], out[2]


@pytest.mark.parametrize("game", list(IDS))
@pytest.mark.parametrize("first_player", ["random", "agent", "opponent"])
def test_compiled_step_plays_the_python_games(game: str, first_player: str) -> None:
    fast, slow = pair(game, first_player=first_player)
    play_side_by_side(fast, slow, seed=11, episodes=6 if game == "reversi" else 20)
    assert compiled(fast) and not compiled(slow)


@pytest.mark.parametrize("game", list(IDS))
@pytest.mark.parametrize("mode", ["lose", "raise"])
def test_illegal_actions_on_both_paths(game: str, mode: str) -> None:
    fast, slow = pair(game, illegal_action=mode)
    play_side_by_side(fast, slow, seed=3, episodes=4 if game == "reversi" else 12, illegal=0.3)


@pytest.mark.parametrize("board", [{"rows": 4, "columns": 4, "connect": 3},
                                   {"rows": 7, "columns": 8},
                                   {"rows": 4, "columns": 12, "connect": 5}])
def test_four_in_a_row_boards(board: dict[str, int]) -> None:
    fast, slow = pair("four_in_a_row", **board)
    play_side_by_side(fast, slow, seed=5, episodes=8)


def test_reversi_score_reward() -> None:
    fast, slow = pair("reversi", reward="score")
    play_side_by_side(fast, slow, seed=2, episodes=4)


def reversi_h8_position(rng: np.random.Generator) -> str:
    """A Reversi position text with h8 (bit 63) taken and a move to play."""
    while True:
        state = reversi.initial_state()
        while state.legal:
            state = reversi.play(state, int(rng.choice(np.flatnonzero(reversi.legal_mask(state)))))
            if (state.me | state.opp) >> H8 & 1 and state.legal:
                return reversi.to_text(state)


@pytest.mark.parametrize("first_player", ["agent", "opponent", "random"])
def test_reversi_positions_with_h8_taken(first_player: str) -> None:
    fast, slow = pair("reversi", first_player=first_player)
    play_side_by_side(fast, slow, seed=7, episodes=6,
                      options=lambda rng: {"position": reversi_h8_position(rng)})


POSITIONS = {"four_in_a_row": ["4453", "", "1122334"], "tictactoe": ["X-O-X----", "---------"],
             "reversi": [reversi.to_text(reversi.initial_state())]}


@pytest.mark.parametrize("game", list(IDS))
def test_positions_on_reset(game: str) -> None:
    fast, slow = pair(game)
    texts = POSITIONS[game]
    play_side_by_side(fast, slow, seed=9, episodes=6,
                      options=lambda rng: {"position": texts[int(rng.integers(len(texts)))]})


@pytest.mark.parametrize("game", list(IDS))
def test_openings(game: str) -> None:
    texts = POSITIONS[game]

    def opening(rng: np.random.Generator) -> str | None:
        return texts[int(rng.integers(len(texts)))] if rng.random() < 0.7 else None

    fast, slow = pair(game, opening=opening)
    play_side_by_side(fast, slow, seed=4, episodes=8)


CLASSIC = {"reversi": "corner_best", "four_in_a_row": "lookahead:1", "tictactoe": "rules"}


@pytest.mark.parametrize("game", list(IDS))
def test_opponent_changed_mid_game(game: str) -> None:
    """From the kernels to a classic AI (the state read back from them) and back, and to an
    ``Agent`` object: the games stay the reference's."""
    fast, slow = pair(game)
    rng = np.random.default_rng(1)
    for seed in range(4):
        out = slow.reset(seed=seed)
        same(fast.reset(seed=seed), out)
        plies, info = 0, out[1]
        done = False
        while not done:
            if plies == 1:
                bare(fast).opponent = CLASSIC[game]
                bare(slow).opponent = CLASSIC[game]
            if plies == 2:
                bare(fast).opponent = "random"
                bare(slow).opponent = agents.make(game, "random")
            action = pick(info, rng, 0.0)
            stepped = slow.step(action)
            same(fast.step(action), stepped)
            same_env(fast, slow)
            info, done, plies = stepped[4], stepped[2], plies + 1


@pytest.mark.parametrize("game", list(IDS))
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_copies_mid_game_go_on_alike(game: str, how: str) -> None:
    fast, slow = pair(game)
    rng = np.random.default_rng(0)
    _, info = fast.reset(seed=8)
    slow.reset(seed=8)
    for _ in range(2):
        action = pick(info, rng, 0.0)
        _, _, done, _, info = fast.step(action)
        slow.step(action)
        assert not done and compiled(fast)
    twin = pickle.loads(pickle.dumps(fast.unwrapped)) if how == "pickle" \
        else copy.deepcopy(fast.unwrapped)
    reference = copy.deepcopy(slow.unwrapped)
    same_env(twin, reference)
    play_out(twin, reference, info, rng)
    assert compiled(twin)
    play_side_by_side(twin, reference, seed=8, episodes=3)


@pytest.mark.parametrize("game", list(IDS))
def test_a_32_bit_generator_plays_the_python_path(game: str) -> None:
    """``np_random`` replaced by an MT19937 generator (no 64-bit words): the Python path,
    mid-game and on the next reset."""
    fast, slow = pair(game)
    rng = np.random.default_rng(0)
    _, info = fast.reset(seed=0)
    slow.reset(seed=0)
    for env in (fast, slow):
        bare(env).np_random = np.random.Generator(np.random.MT19937(3))
    play_out(fast, slow, info, rng)
    assert not compiled(fast)
    same(fast.reset(), slow.reset())
    assert not compiled(fast)


@pytest.mark.parametrize("game", list(IDS))
@pytest.mark.parametrize("bit_generator", [np.random.Philox, np.random.SFC64,
                                           np.random.PCG64DXSM])
def test_other_64_bit_generators_play_on_the_kernels(game: str, bit_generator: Any) -> None:
    """Any bit generator with 64-bit words: the kernels draw its words as the Python path."""
    fast, slow = pair(game)
    rng = np.random.default_rng(0)
    _, info = fast.reset(seed=0)
    slow.reset(seed=0)
    for env in (fast, slow):
        bare(env).np_random = np.random.Generator(bit_generator(3))
    play_out(fast, slow, info, rng)
    assert compiled(fast)
    for _ in range(3):
        out = slow.reset()
        same(fast.reset(), out)
        play_out(fast, slow, out[1], rng)


def test_observations_and_masks_are_fresh_arrays() -> None:
    env = gym.make("TicTacToe-v0", opponent="random")
    obs, info = env.reset(seed=0)
    obs2, _, _, _, info2 = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    for a, b in ((obs, obs2), (info["action_mask"], info2["action_mask"])):
        assert a.flags.writeable and b.flags.writeable and not np.shares_memory(a, b)
    assert GAMES["tictactoe"].env_id == "TicTacToe-v0"
