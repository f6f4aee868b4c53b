"""Training-time evaluations from fair openings (config key ``eval_openings``): both the
per-game path (``callbacks.match``, through ``play_match``) and the batched path
(``callbacks.vector_match``, the vector env's ``opening=`` and seats per sub-env)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
import yaml

from boardgym.envs.games import game as game_record
from boardgym.train.common.config import HYPERPARAMS_DIR
from boardgym.train.match import openings as fair
from boardgym.train.match.evaluate import play_match
from boardgym.train.ppo import trainer as ppo
from boardgym.train.ppo.callbacks import (
    fair_openings,
    fair_seating,
    learner_agent,
    match,
    vector_match,
)
from boardgym.train.ppo.config import TrainConfig, load_config
from boardgym.train.ppo.environments import make_vec_env
from boardgym.train.ppo.runs import save_checkpoint
from tests.runs import NO_BAR

TINY = {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1, "channels": 8,
        "blocks": 1, "features_dim": 32, "net_arch": [16]}
GAMES = 16
SEED = 3
PLIES = 2


def tiny_config(**overrides: Any) -> Any:
    return load_config("tictactoe", overrides={**TINY, **overrides})


def fresh_model(seed: int) -> Any:
    """An untrained model: a deterministic player (masked argmax) that plays poorly."""
    config = tiny_config(seed=seed)
    vec_env = make_vec_env(config, ppo.default_pool(config))
    learner = ppo.build_model(config, vec_env, None)
    vec_env.close()
    return learner


@pytest.fixture(scope="module")
def model() -> Any:
    """The learner."""
    return fresh_model(0)


@pytest.fixture(scope="module")
def opponent(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Another untrained model's checkpoint: deterministic, with a batched twin, and about as
    weak as the learner, so the outcomes vary."""
    path = tmp_path_factory.mktemp("opponent") / "opponent.zip"
    save_checkpoint(fresh_model(1), path, "tictactoe", {})
    return str(path)


# -- the config key ------------------------------------------------------------------------------


def test_eval_openings_is_off_unless_a_hyperparameter_file_sets_it() -> None:
    for path in HYPERPARAMS_DIR.glob("*.yaml"):
        if not path.name.startswith(("az_", "td_")):  # the PPO files only
            data = yaml.safe_load(path.read_text())
            name = path.stem
            assert load_config(name).eval_openings == data.get("eval_openings", 0)
    assert TrainConfig("tictactoe").eval_openings == 0


@pytest.mark.parametrize(("overrides", "message"), [
    ({"eval_openings": -1}, "eval_openings must be 0 or a positive integer"),
    ({"eval_openings": 2, "eval_games": 5}, "eval_games must be even"),
    ({"eval_openings": 2, "league_games": 7}, "league_games must be even"),
    ({"eval_openings": 9}, "no fair tictactoe opening of that many plies"),
    ({"eval_openings": "two"}, "eval_openings must be an integer"),
])
def test_bad_eval_openings_are_refused_in_one_line(overrides: dict[str, Any],
                                                    message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        tiny_config(**overrides)
    assert "\n" not in str(error.value)


# -- the per-game path ---------------------------------------------------------------------------


def test_without_openings_the_matches_are_todays(model: Any, opponent: str) -> None:
    config = tiny_config()
    result = match(model, config, opponent, GAMES, SEED)
    today = play_match("tictactoe", learner_agent(model, config), opponent, GAMES, seed=SEED)
    assert result.outcomes == today.outcomes and result.openings is None
    assert result.distinct_games <= 2  # a deterministic pair from the start: two games at most
    assert fair_openings(config, SEED) is None and fair_seating(None, GAMES, SEED) == {}


def test_with_openings_the_matches_are_play_matchs_fair_matches(model: Any,
                                                                 opponent: str) -> None:
    config = tiny_config(eval_openings=PLIES)
    result = match(model, config, opponent, GAMES, SEED)
    fair_match = play_match("tictactoe", learner_agent(model, config), opponent, GAMES, seed=SEED,
                            openings=str(PLIES))
    assert result.outcomes == fair_match.outcomes
    assert result.openings == fair_match.openings and result.pairs == GAMES // 2
    assert result.distinct_games > 2  # no longer one game played over and over


# -- the batched path ----------------------------------------------------------------------------


def test_the_vector_env_plays_play_matchs_openings_and_seats() -> None:
    config = tiny_config(eval_openings=PLIES)
    record = game_record("tictactoe")
    kwargs = fair_seating(fair_openings(config, SEED), GAMES, SEED)
    venv: Any = gym.make_vec(record.env_id, num_envs=GAMES,
                             vectorization_mode="vector_entry_point", opponent="random",
                             **kwargs)
    _, info = venv.reset(seed=SEED)
    source = fair.openings_from(str(PLIES), "tictactoe", SEED)
    for i, text in enumerate(venv.position_texts()):
        opening = fair.replay(record, source.opening(i // 2))
        assert len(source.opening(i // 2)) == PLIES
        assert int(venv.agent_side[i]) == i % 2  # the learner first in the even game
        reply = int(info["opponent_action"][i])
        expected = opening if reply < 0 else record.rules.apply(opening, reply)
        assert record.rules.parse(text) == expected, i
    assert len({tuple(source.opening(k)) for k in range(GAMES // 2)}) > 1
    venv.close()


def test_vector_match_with_openings_gives_the_per_game_paths_outcomes(
        model: Any, opponent: str) -> None:
    config = tiny_config(eval_openings=PLIES)
    batched = vector_match(model.policy, config, opponent, GAMES, SEED)
    per_game = match(model, config, opponent, GAMES, SEED)
    assert batched.outcomes == per_game.outcomes  # both players deterministic
    assert len(set(batched.outcomes)) > 1
    assert batched.openings == per_game.openings
    assert batched.a_pair_scores.tolist() == per_game.a_pair_scores.tolist()
    plain = vector_match(model.policy, tiny_config(), opponent, GAMES, SEED)
    assert plain.openings is None and plain.outcomes != batched.outcomes


def test_an_odd_number_of_fair_games_is_refused() -> None:
    with pytest.raises(ValueError, match="games must be even"):
        fair_seating(fair_openings(tiny_config(eval_openings=PLIES), SEED), GAMES + 1, SEED)


# -- a training run ------------------------------------------------------------------------------


def test_a_training_run_evaluates_from_fair_openings(tmp_path: Path) -> None:
    steps = 256
    args = ["tictactoe", "--timesteps", str(steps), "--runs-dir", str(tmp_path),
            "--no-progress", *[f"--set={key}={json.dumps(value)}" for key, value in TINY.items()],
            "--set", "eval_games=4", "--set", "eval_openings=2",
            "--set", "eval_opponents=[random, alphabeta:1]", "--set", "opponents=[random]",
            *NO_BAR,
            "--set", "opponent_weights=null", "--set", f"eval_every={steps}",
            "--set", f"checkpoint_every={steps}"]
    assert ppo.main(args) == 0
    (run,) = tmp_path.iterdir()
    assert yaml.safe_load((run / "config.yaml").read_text())["eval_openings"] == 2
    history = json.loads((run / "eval.json").read_text())
    assert set(history[-1]["win_rates"]) == {"random", "alphabeta:1"}
