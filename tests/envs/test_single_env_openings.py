"""The single env's ``opening=`` sampler (the vector env's rule, in ``envs.settings``) and
the dummy training env that uses it (``train.environments.OpponentMix``)."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import boardgym  # noqa: F401  (registers the ids)
from boardgym import agents
from boardgym.envs.games import GAMES
from boardgym.envs.settings import OPENING_DRAWS
from boardgym.train.ppo.config import load_config
from boardgym.train.ppo.environments import OpponentMix, OpponentPool, make_vec_env

FAST_OPPONENTS = {"Reversi-v0": "corner_best", "FourInARow-v0": "lookahead:1",
                  "TicTacToe-v0": "rules"}
IDS = list(FAST_OPPONENTS)
NO_PASS_IDS = ["FourInARow-v0", "TicTacToe-v0"]
"""Games where a reply is one opponent move (no passes), so the position after a reset is the
opening plus at most ``info["opponent_action"]``."""
MAX_PLIES = 6
EPISODES = 12
STEPS = 60
C4_WIN_FOR_SIDE_TO_MOVE = "121212"
"""Four-in-a-row, first player to move: column 1 completes four."""
C4_OPENING = "4453"
"""Four-in-a-row after four plies: the first player is to move."""


def record_of(env_id: str) -> Any:
    return next(g for g in GAMES.values() if g.env_id == env_id)


class RandomOpening:
    """``opening(rng)``: up to ``MAX_PLIES`` random plies that do not end the game, or None
    (the start position) one time in five; remembers what it returned last."""

    def __init__(self, env_id: str) -> None:
        self.env_id = env_id
        self.last: str | None = None

    def __call__(self, rng: np.random.Generator) -> str | None:
        rules = record_of(self.env_id).rules
        state = rules.initial_state()
        for _ in range(int(rng.integers(0, MAX_PLIES + 1))):
            after = rules.apply(state, int(rng.choice(np.flatnonzero(rules.legal_mask(state)))))
            if rules.is_terminal(after):
                break
            state = after
        self.last = None if rng.random() < 0.2 else str(rules.to_text(state))
        return self.last


class Scripted:
    """``opening(rng)``: the texts of ``drawn`` in turn (the last one from then on)."""

    def __init__(self, *drawn: str | None) -> None:
        self.drawn = drawn
        self.calls = 0

    def __call__(self, rng: np.random.Generator) -> str | None:
        self.calls += 1
        return self.drawn[min(self.calls, len(self.drawn)) - 1]


def make(env_id: str, **kwargs: Any) -> Any:
    kwargs.setdefault("opponent", FAST_OPPONENTS[env_id])
    return gym.make(env_id, disable_env_checker=True, **kwargs)


def first_legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def episodes(env: Any, seed: int | None, count: int = EPISODES) -> list[tuple[str, ...]]:
    """The positions of ``count`` episodes (the first legal action each move)."""
    games = []
    for episode in range(count):
        _, info = env.reset(seed=seed if episode == 0 else None)
        seen = [env.unwrapped.position_text()]
        done = False
        while not done:
            _, _, done, _, info = env.step(first_legal(info["action_mask"]))
            seen.append(env.unwrapped.position_text())
        games.append(tuple(seen))
    return games


# -- the env's opening= ------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", IDS)
def test_openings_give_unfinished_positions_where_the_agent_has_a_legal_move(
        env_id: str) -> None:
    rules = record_of(env_id).rules
    opening = RandomOpening(env_id)
    env = make(env_id, opening=opening)
    started = set()
    for seed in range(40):
        _, info = env.reset(seed=seed)
        state = rules.parse(env.unwrapped.position_text())
        assert not rules.is_terminal(state) and info["action_mask"].any()
        np.testing.assert_array_equal(info["action_mask"], rules.legal_mask(state))
        np.testing.assert_array_equal(info["action_mask"], env.unwrapped.action_masks())
        started.add(opening.last)
    assert len(started) > 10  # the games start from the sampler's many positions


@pytest.mark.parametrize("env_id", NO_PASS_IDS)
def test_games_start_from_the_drawn_opening(env_id: str) -> None:
    rules = record_of(env_id).rules
    opening = RandomOpening(env_id)
    env = make(env_id, opening=opening)
    for seed in range(40):
        _, info = env.reset(seed=seed)
        start = rules.initial_state() if opening.last is None else rules.parse(opening.last)
        reply = info["opponent_action"]
        expected = start if reply is None else rules.apply(start, reply)
        assert env.unwrapped.position_text() == rules.to_text(expected)


def test_an_opening_the_opponent_wins_at_once_is_drawn_again() -> None:
    opening = Scripted(C4_WIN_FOR_SIDE_TO_MOVE, C4_OPENING)
    env = make("FourInARow-v0", first_player="opponent", opening=opening)
    _, info = env.reset(seed=0)
    assert opening.calls == 2 and info["action_mask"].any()
    rules = record_of("FourInARow-v0").rules
    replied = rules.apply(rules.parse(C4_OPENING), info["opponent_action"])
    assert env.unwrapped.position_text() == rules.to_text(replied)


def test_openings_that_all_end_at_once_fall_back_to_the_start_position() -> None:
    opening = Scripted(C4_WIN_FOR_SIDE_TO_MOVE)
    env = make("FourInARow-v0", first_player="opponent", opening=opening)
    obs, info = env.reset(seed=0)
    assert opening.calls == OPENING_DRAWS
    assert info["action_mask"].all() and info["opponent_action"] is not None
    assert env.unwrapped.position_text() == str(info["opponent_action"] + 1)
    assert (obs[0].sum(), obs[1].sum()) == (0, 1)  # the start position and one reply


@pytest.mark.parametrize("env_id", IDS)
def test_openings_reproduce_from_the_seed_and_survive_copies(env_id: str) -> None:
    env = make(env_id, opening=RandomOpening(env_id))
    games = episodes(env, seed=4)
    assert games == episodes(make(env_id, opening=RandomOpening(env_id)), seed=4)
    assert games != episodes(env, seed=5)
    env.reset(seed=4)
    twins = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    rest = episodes(env, seed=None)
    for twin in twins:
        assert episodes(twin, seed=None) == rest


def test_without_openings_the_games_are_unchanged_by_the_argument() -> None:
    for env_id in IDS:
        assert episodes(make(env_id, opening=None), 2) == episodes(make(env_id), 2)


def test_the_position_option_wins_over_the_sampler() -> None:
    opening = Scripted(C4_WIN_FOR_SIDE_TO_MOVE)
    env = make("FourInARow-v0", first_player="agent", opening=opening)
    env.reset(seed=0, options={"position": C4_OPENING})
    rules = record_of("FourInARow-v0").rules
    assert opening.calls == 0
    assert rules.parse(env.unwrapped.position_text()) == rules.parse(C4_OPENING)


def test_the_single_env_plays_the_vector_envs_games_against_a_per_game_opponent() -> None:
    """The vector env runs an opponent without a batched twin with the generator of the seed
    of each sub-env; with the same openings it plays the single env's games."""
    env_id, seeds, steps = "TicTacToe-v0", [11, 12, 13], 40
    opponent = agents.make("tictactoe", "random")  # an Agent object: run game by game
    with pytest.warns(UserWarning, match="no batched version"):
        venv: Any = gym.make_vec(env_id, num_envs=len(seeds),
                                 vectorization_mode="vector_entry_point", opponent=opponent,
                                 opening=RandomOpening(env_id))
    obs, info = venv.reset(seed=seeds)
    batched = [[obs[i]] for i in range(len(seeds))]
    for _ in range(steps):
        obs, _, _, _, info = venv.step(
            np.array([first_legal(mask) if mask.any() else 0 for mask in info["action_mask"]]))
        for i in range(len(seeds)):
            batched[i].append(obs[i])
    for i, seed in enumerate(seeds):
        env = make(env_id, opponent=opponent, opening=RandomOpening(env_id))
        single, done = [env.reset(seed=seed)[0]], False
        for _ in range(steps):
            if done:
                single.append(env.reset()[0])
                done = False
                continue
            obs_i, _, done, _, _ = env.step(first_legal(env.unwrapped.action_masks()))
            single.append(obs_i)
        assert all(np.array_equal(a, b) for a, b in zip(single, batched[i], strict=True)), i


@pytest.mark.parametrize("bad", [42, "4453", [None]])
def test_an_opening_that_is_not_callable_is_one_clear_error(bad: Any) -> None:
    with pytest.raises(ValueError, match="opening must be None or a callable") as error:
        make("FourInARow-v0", opening=bad)
    assert "\n" not in str(error.value)
    env = make("FourInARow-v0")
    with pytest.raises(ValueError, match="opening must be None or a callable"):
        env.unwrapped.opening = bad


@pytest.mark.parametrize("text", ["not a position", 7, C4_WIN_FOR_SIDE_TO_MOVE + "1"])
def test_a_sampler_returning_no_unfinished_position_is_refused(text: Any) -> None:
    env = make("FourInARow-v0", opening=lambda rng: text)
    with pytest.raises(ValueError, match="opening sampler's position"):
        env.reset(seed=0)


# -- the dummy training env (OpponentMix) -------------------------------------------------------


def dummy_positions(seed: int, steps: int = STEPS) -> list[list[str]]:
    """The positions of a 3-env ``vectorization: dummy`` training env with openings."""
    config = load_config("tictactoe", overrides={
        "n_envs": 3, "opening_plies": [1, 5], "opponents": ["rules", "random"],
        "opponent_weights": None, "vectorization": "dummy"})
    vec_env = make_vec_env(config, OpponentPool("tictactoe", config.opponents))
    vec_env.seed(seed)
    vec_env.reset()
    rng = np.random.default_rng(seed)
    seen = [vec_env.env_method("position_text")]
    for _ in range(steps):
        masks = np.array(vec_env.env_method("action_masks"))
        assert masks.any(axis=1).all()  # the learner always has a move
        vec_env.step(np.array([rng.choice(np.flatnonzero(mask)) for mask in masks]))
        seen.append(vec_env.env_method("position_text"))
    vec_env.close()
    return seen


def test_the_dummy_training_env_starts_games_from_openings_reproducibly() -> None:
    first = dummy_positions(3)
    assert first == dummy_positions(3)
    assert first != dummy_positions(4)
    assert all(text != "---------" for text in first[0])  # at least one ply in every opening


def opponent_mix(seed: int | None = None) -> OpponentMix:
    pool = OpponentPool("tictactoe", ["rules", "random"])
    mix = OpponentMix(make("TicTacToe-v0"), pool, opening_plies=(1, 5))
    if seed is not None:
        mix.reset(seed=seed)
    return mix


def resets(mix: OpponentMix, count: int = EPISODES) -> list[tuple[str, str]]:
    """The opponent spec and first position of ``count`` resets."""
    seen = []
    for _ in range(count):
        mix.reset()
        env = mix.unwrapped
        seen.append((repr(env.opponent_spec), env.position_text()))  # type: ignore[attr-defined]
    return seen


def test_the_rng_state_of_an_opponent_mix_resumes_its_draws() -> None:
    straight = opponent_mix(seed=7)
    resets(straight, 3)
    saved = straight.get_rng_state()
    resumed = opponent_mix()
    resumed.set_rng_state(saved)
    expected = resets(straight)
    assert resets(resumed) == expected
    assert len({position for _, position in expected}) > 1
    older = opponent_mix()  # a state saved before openings moved into the env
    older.set_rng_state({**saved, "opening": np.random.default_rng(0).bit_generator.state})
    assert resets(older) == expected
