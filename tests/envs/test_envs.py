"""The Gymnasium envs through their public API: checker, spaces, masks, seeding, bad input."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import boardgym
from boardgym.envs import turn_based
from boardgym.envs.games import GAMES, IllegalMoveError

ENV_IDS = list(boardgym.ENV_IDS)
SHAPES = {"Reversi-v0": ((2, 8, 8), 64), "FourInARow-v0": ((2, 6, 7), 7),
          "ConnectFour-v0": ((2, 6, 7), 7), "TicTacToe-v0": ((2, 3, 3), 9)}


def random_rollout(env: gym.Env, seed: int, episodes: int = 3) -> list[bytes]:
    """Observations and rewards of masked random play, as bytes for comparison."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace = [obs.tobytes()]
    for _ in range(episodes):
        done = False
        while not done:
            action = rng.choice(np.flatnonzero(info["action_mask"]))
            obs, reward, done, _, info = env.step(action)
            trace.append(obs.tobytes() + str((reward, info["opponent_action"])).encode())
        obs, info = env.reset()
        trace.append(obs.tobytes())
    return trace


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("render_mode", [None, *(mode for mode in turn_based.RENDER_MODES
                                                  if mode != "human")])  # human: below
def test_check_env_passes_without_warnings(env_id: str, render_mode: str | None) -> None:
    env = gym.make(env_id, render_mode=render_mode)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=False)
    assert not [str(w.message) for w in caught]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env_in_human_mode(env_id: str) -> None:
    pytest.importorskip("pygame")
    env = gym.make(env_id, render_mode="human")
    check_env(env.unwrapped, skip_render_check=False)
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_spaces(env_id: str) -> None:
    env = gym.make(env_id)
    shape, n = SHAPES[env_id]
    assert env.observation_space.shape == shape and env.observation_space.dtype == np.uint8
    assert env.action_space.n == n


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_seed_same_games_including_opponent_tie_breaks(env_id: str) -> None:
    assert random_rollout(gym.make(env_id), 7) == random_rollout(gym.make(env_id), 7)


def test_different_seeds_differ() -> None:
    env = gym.make("Reversi-v0", opponent="random")
    assert random_rollout(env, 1) != random_rollout(env, 2)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_masks_match_info_and_observation_is_the_agents_view(env_id: str) -> None:
    env = gym.make(env_id, opponent="random")
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        assert mask.dtype == bool and np.array_equal(mask, info["action_mask"])
        assert mask.any(), "the agent never sees a position without a legal move"
        assert not (obs[0] & obs[1]).any()
        obs, reward, done, truncated, info = env.step(rng.choice(np.flatnonzero(mask)))
        assert not truncated
    assert info["winner"] == reward
    assert not env.unwrapped.action_masks().any()


@pytest.mark.parametrize("first_player", ["agent", "opponent"])
def test_first_player(first_player: str) -> None:
    env = gym.make("TicTacToe-v0", opponent="random", first_player=first_player)
    for seed in range(5):
        obs, info = env.reset(seed=seed)
        assert obs.sum() == (0 if first_player == "agent" else 1)
        assert info["opponent_action"] is None if first_player == "agent" else \
            obs[1].flatten()[info["opponent_action"]] == 1


def test_random_first_player_varies_with_seed() -> None:
    env = gym.make("TicTacToe-v0", opponent="random")
    assert {int(env.reset(seed=s)[0].sum()) for s in range(20)} == {0, 1}


def test_reversi_forced_pass_is_played_inside_step() -> None:
    """Against an opponent that never lets the agent move, one step plays out many turns."""
    env = gym.make("Reversi-v0", opponent="random", first_player="agent")
    passes_seen = 0
    for seed in range(30):
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        done = False
        while not done:
            before = int(obs.sum())
            obs, _, done, _, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
            passes_seen += int(obs.sum()) - before > 2 and not done
            assert done or info["action_mask"].any()
    assert passes_seen > 0


def test_reversi_info_score_and_score_reward() -> None:
    env = gym.make("Reversi-v0", opponent="random", reward="score", first_player="agent")
    obs, info = env.reset(seed=0)
    assert info["score"] == (2, 2)
    rng, done = np.random.default_rng(0), False
    while not done:
        obs, reward, done, _, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
        mine, theirs = info["score"]
        assert (mine, theirs) == (obs[0].sum(), obs[1].sum())
    assert reward == pytest.approx((mine - theirs) / 64)


def test_illegal_action_loses_by_default() -> None:
    env = gym.make("TicTacToe-v0", opponent="random", first_player="opponent")
    _, info = env.reset(seed=0)
    taken = int(info["opponent_action"])
    _, reward, terminated, _, info = env.step(taken)
    assert (reward, terminated, info["illegal_action"], info["winner"]) == (-1.0, True, True, -1)
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)


def test_illegal_action_can_raise() -> None:
    env = gym.make("Reversi-v0", opponent="random", illegal_action="raise", first_player="agent")
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError):
        env.step(0)
    env.step(19)  # the game goes on after the refused move


def test_illegal_action_raise_then_legal_actions_go_on() -> None:
    env = gym.make("TicTacToe-v0", opponent="rules", illegal_action="raise",
                   first_player="agent")
    obs, info = env.reset(seed=0)
    obs, _, _, _, info = env.step(4)
    taken = [a for a in range(9) if not info["action_mask"][a]]
    before = env.unwrapped.position_text()
    with pytest.raises(IllegalMoveError, match="illegal"):
        env.step(taken[0])
    assert env.unwrapped.position_text() == before
    np.testing.assert_array_equal(env.unwrapped.action_masks(), info["action_mask"])
    obs2, _, _, _, info2 = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert obs2.sum() > obs.sum() and "illegal_action" not in info2


@pytest.mark.parametrize("bad", [64, -1, "a", 2.5, np.array([1, 2]), True, np.float64(3.0)])
def test_actions_outside_the_space_raise(bad: object) -> None:
    env = gym.make("Reversi-v0", opponent="random")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.unwrapped.step(bad)


def test_numpy_integer_actions_are_accepted() -> None:
    env = gym.make("FourInARow-v0", opponent="random")
    env.reset(seed=0)
    env.step(np.int64(3))
    env.step(np.array(3))


def test_step_before_reset_raises() -> None:
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        gym.make("TicTacToe-v0", opponent="random").unwrapped.step(0)


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(first_player="x"), "first_player"),
    (dict(illegal_action="ignore"), "illegal_action"),
    (dict(reward="dense"), "reward"),
    (dict(opponent="no_such_ai"), "random"),
    (dict(render_mode="pdf"), "render_mode"),
    (dict(board_size=10), "board options.*render_mode"),
])
def test_bad_arguments_raise_clear_errors(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        gym.make("Reversi-v0", **kwargs)


@pytest.mark.parametrize("kwargs", [dict(rows=3), dict(columns=3), dict(connect=9),
                                    dict(reward="score")])
def test_bad_four_in_a_row_options(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        gym.make("FourInARow-v0", **kwargs)


def test_custom_four_in_a_row_size() -> None:
    env = gym.make("FourInARow-v0", rows=6, columns=9, connect=5, opponent="random")
    obs, info = env.reset(seed=0)
    assert obs.shape == (2, 6, 9) and env.action_space.n == 9 and info["action_mask"].all()
    assert random_rollout(env, 0)


def test_env_ids_resolve_without_importing_envs() -> None:
    code = ("import gymnasium as gym; e = gym.make('boardgym:TicTacToe-v0'); e.reset(seed=0); "
            "print(e.observation_space.shape)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(2, 3, 3)"


def test_opponent_may_be_an_agent_object() -> None:
    class FirstLegal:
        def act(self, state: object, rng: np.random.Generator) -> int:
            from boardgym.envs.games import tictactoe
            return int(np.flatnonzero(tictactoe.legal_mask(state))[0])

    env = gym.make("TicTacToe-v0", opponent=FirstLegal(), first_player="opponent")
    _, info = env.reset(seed=0)
    assert info["opponent_action"] == 0


def test_mask_copies_cannot_change_the_env() -> None:
    env = gym.make("TicTacToe-v0", opponent="random", first_player="agent")
    _, info = env.reset(seed=0)
    info["action_mask"][:] = False
    env.unwrapped.action_masks()[:] = False
    assert env.unwrapped.action_masks().all()
    env.step(0)  # still legal


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("duplicate", [copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))])
def test_pickle_and_deepcopy_step_identically(env_id: str, duplicate: object) -> None:
    env = gym.make(env_id)
    env.reset(seed=11)
    rng = np.random.default_rng(0)
    for _ in range(3):  # part of a game played before the copy
        mask = env.unwrapped.action_masks()
        _, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if done:
            env.reset()
    twin = duplicate(env)  # type: ignore[operator]
    assert type(twin.unwrapped) is type(env.unwrapped)
    for _ in range(40):
        mask = env.unwrapped.action_masks()
        np.testing.assert_array_equal(mask, twin.unwrapped.action_masks())
        action = int(rng.choice(np.flatnonzero(mask)))
        a, b = env.step(action), twin.step(action)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1:4] == b[1:4] and a[4]["opponent_action"] == b[4]["opponent_action"]
        if a[2]:
            np.testing.assert_array_equal(env.reset()[0], twin.reset()[0])


POSITIONS = {
    "Reversi-v0": ("-" * 19 + "X" + "-" * 7 + "XX" + "-" * 6 + "XO" + "-" * 27 + " O",
                   "X" * 64 + " O"),
    "FourInARow-v0": ("4453", "1212121"),
    "TicTacToe-v0": ("X-O-X----", "XXXOO----"),
}


@pytest.mark.parametrize("env_id", list(POSITIONS))
def test_reset_from_a_position(env_id: str) -> None:
    """The agent plays the side to move of the position: the episode starts right there."""
    text, _ = POSITIONS[env_id]
    rules = gym.make(env_id).unwrapped.record.rules
    start = rules.parse(text)
    first = "agent" if start.to_move == 0 else "opponent"
    env = gym.make(env_id, opponent="random", first_player=first)
    obs, info = env.reset(seed=0, options={"position": text})
    assert env.unwrapped.position_text() == rules.to_text(start)
    np.testing.assert_array_equal(obs, rules.observation(start, start.to_move))
    np.testing.assert_array_equal(info["action_mask"], rules.legal_mask(start))
    assert info["opponent_action"] is None


def test_reset_from_a_position_the_opponent_moves_when_to_move() -> None:
    env = gym.make("TicTacToe-v0", opponent="rules", first_player="agent")
    obs, info = env.reset(seed=0, options={"position": "X--------"})  # O to move
    assert info["opponent_action"] is not None
    assert obs[0].sum() == 1 and obs[1].sum() == 1  # the agent plays X


@pytest.mark.parametrize("env_id", list(POSITIONS))
@pytest.mark.parametrize("text", ["?", "", "not a position at all", 42])
def test_reset_from_bad_text_names_what_is_wrong(env_id: str, text: object) -> None:
    env = gym.make(env_id, opponent="random")
    if env_id == "FourInARow-v0" and text == "":
        env.reset(options={"position": text})  # the empty board
        return
    with pytest.raises(ValueError, match=r"position|column|move|characters|squares"):
        env.reset(options={"position": text})


@pytest.mark.parametrize("env_id", list(POSITIONS))
def test_reset_from_a_finished_position_is_refused(env_id: str) -> None:
    env = gym.make(env_id, opponent="random")
    with pytest.raises(ValueError, match="finished"):
        env.reset(options={"position": POSITIONS[env_id][1]})


def test_unknown_reset_option_is_refused() -> None:
    with pytest.raises(ValueError, match="position"):
        gym.make("TicTacToe-v0").reset(options={"board": "X--------"})


def test_one_class_per_game_from_its_record() -> None:
    for record in GAMES.values():
        cls = getattr(turn_based, f"{record.class_prefix}Env")
        assert cls.__doc__ == record.env_doc and cls.record is record
        assert gym.spec(record.env_id).entry_point == f"boardgym.envs.turn_based:{cls.__name__}"
        assert boardgym.ENV_IDS[record.env_id] == cls.__name__
        for alias in record.env_aliases:
            assert boardgym.ENV_IDS[alias] == cls.__name__
    with pytest.raises(AttributeError, match="ReversiEnv"):
        turn_based.ChessEnv  # noqa: B018


def test_reward_score_only_for_scored_games() -> None:
    for record in GAMES.values():
        if record.scored:
            gym.make(record.env_id, reward="score")
        else:
            with pytest.raises(ValueError, match="score"):
                gym.make(record.env_id, reward="score")


class LowestLegal:
    """A deterministic tic-tac-toe opponent: the lowest free cell."""

    def act(self, state: object, rng: np.random.Generator) -> int:
        return int(np.flatnonzero(GAMES["tictactoe"].rules.legal_mask(state))[0])


def test_an_opponent_set_later_is_kept_by_copies() -> None:
    env = gym.make("TicTacToe-v0", first_player="opponent")
    env.unwrapped.opponent = LowestLegal()
    assert isinstance(env.unwrapped.opponent_spec, LowestLegal)
    for twin in (env, copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert twin.reset(seed=0)[1]["opponent_action"] == 0
    env.unwrapped.opponent = "random"
    assert {pickle.loads(pickle.dumps(env)).reset(seed=s)[1]["opponent_action"]
            for s in range(20)} != {0}
