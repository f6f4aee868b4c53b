"""The one validation layer of every trainer's config (``train.common.config``): each
numeric key's declared range, YAML syntax of ``--set`` values and ``--config`` files, and
``env_kwargs`` against the game; every refusal one line naming the ``--set`` that mends it."""

from __future__ import annotations

import math
import types
import typing
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boardgym.envs.games import GAMES
from boardgym.train.az.config import AzConfig
from boardgym.train.common.config import (
    RunConfig,
    default_of,
    load_config,
    parse_sets,
    read_yaml,
)
from boardgym.train.ppo.config import TrainConfig

GAME = "tictactoe"


def config_classes() -> list[type[RunConfig]]:
    """Every trainer's config class: the package's subclasses of ``RunConfig``, at any
    depth (a new trainer's config is walked without editing this file)."""
    found, todo = [], [RunConfig]
    while todo:
        for kind in todo.pop().__subclasses__():
            todo.append(kind)
            if kind.__module__.startswith("boardgym."):
                found.append(kind)
    return found


def numeric(hint: Any) -> type | None:
    """``int`` or ``float`` when ``hint`` is one (optionally None, or a list of them)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return numeric(next(arg for arg in typing.get_args(hint) if arg is not type(None)))
    if typing.get_origin(hint) is list:
        return numeric(typing.get_args(hint)[0])
    return hint if hint in (int, float) else None


def numeric_keys() -> Iterator[tuple[type[RunConfig], str, type]]:
    """``(config class, key, int or float)`` for every numeric key of every config."""
    for kind in config_classes():
        keys = set(kind.keys())
        for name, hint in typing.get_type_hints(kind).items():
            if name in keys and numeric(hint) is not None:
                yield kind, name, numeric(hint)  # type: ignore[misc]


def outside(kind: type[RunConfig], name: str, number: type) -> list[Any]:
    """Values just outside the key's range on either side (and NaN, infinity for floats);
    a list key gets each as its one item."""
    valid = kind.ranges()[name]
    low = valid.low if valid.open_low else valid.low - 1
    high = valid.high if valid.open_high else valid.high + 1
    values: list[Any] = [number(low), number(high)]
    if number is float:
        values += [math.nan, math.inf]
    hint = typing.get_type_hints(kind)[name]
    return [[value] if "list" in str(hint) else value for value in values]


KEYS = list(numeric_keys())


def test_every_trainer_config_is_walked() -> None:
    assert {TrainConfig, AzConfig} <= set(config_classes())
    assert len(KEYS) > 60


@pytest.mark.parametrize(("kind", "name", "number"), KEYS,
                         ids=[f"{kind.__name__}.{name}" for kind, name, _ in KEYS])
def test_every_numeric_key_declares_a_range_that_refuses_what_is_outside(
        kind: type[RunConfig], name: str, number: type) -> None:
    assert name in kind.ranges(), f"{kind.__name__}.{name} has no declared range (ranged)"
    default = default_of(kind, name)
    assert default is None or all(item in kind.ranges()[name] for item in
                                  (default if isinstance(default, list) else [default]))
    for value in outside(kind, name, number):
        with pytest.raises(ValueError) as error:
            load_config(kind, GAME, overrides={name: value})
        message = str(error.value)
        assert message.startswith(f"{name} ") and f"--set {name}=" in message, message
        assert "\n" not in message


@pytest.mark.parametrize("kind", [TrainConfig, AzConfig])
@pytest.mark.parametrize("game", list(GAMES))
def test_the_shipped_configs_are_in_range(kind: type[RunConfig], game: str) -> None:
    assert load_config(kind, game).game == game


def test_positive_keys_are_read_off_the_ranges() -> None:
    assert {"n_envs", "batch_size", "gamma"} <= set(TrainConfig.POSITIVE_KEYS)
    assert "learning_rate" not in TrainConfig.POSITIVE_KEYS  # 0 freezes the weights
    assert "eval_simulations" not in AzConfig.POSITIVE_KEYS and \
        "simulations" in AzConfig.POSITIVE_KEYS


def test_set_malformed_yaml_one_line() -> None:
    with pytest.raises(ValueError) as error:
        parse_sets(["net_arch=[64,64"], TrainConfig.keys())
    message = str(error.value)
    assert message.startswith("--set net_arch: '[64,64' is not valid YAML")
    assert "--set 'net_arch=...'" in message and "\n" not in message


def test_set_names_the_unknown_key_before_parsing_its_value() -> None:
    with pytest.raises(ValueError, match=r"\['learning_rat'\] in --set \(did you mean "
                                         r"learning_rate\?\)"):
        parse_sets(["learning_rat=[1,"], TrainConfig.keys())


def test_set_env_kwargs_unknown_key() -> None:
    overrides = parse_sets(["env_kwargs={rows:5}"], TrainConfig.keys())
    with pytest.raises(ValueError) as error:
        load_config(TrainConfig, "four_in_a_row", overrides=overrides)
    message = str(error.value)
    assert "has no key 'rows:5'" in message and "valid keys: rows, columns, connect" in message
    assert message.endswith("--set 'env_kwargs={rows: 5}'")


@pytest.mark.parametrize(("kind", "env_kwargs", "message"), [
    (TrainConfig, {"rows": 99}, "env_kwargs: a 99x7 board does not fit"),
    (TrainConfig, {"reward": "gold"}, "env_kwargs: reward must be one of"),
    (TrainConfig, {"first_player": "me"}, "env_kwargs: first_player must be one of"),
    (AzConfig, {"reward": "win"}, "has no key 'reward'; valid keys: rows, columns, connect;"),
])
def test_env_kwargs_values_are_checked_with_the_game(kind: type[RunConfig],
                                                     env_kwargs: dict[str, Any],
                                                     message: str) -> None:
    with pytest.raises(ValueError, match="fix it with --set 'env_kwargs=") as error:
        load_config(kind, "four_in_a_row", overrides={"env_kwargs": env_kwargs})
    assert message in str(error.value)


def test_config_file_bad_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("gamma: 0.9\nnet_arch: [64, 64\n")
    with pytest.raises(ValueError) as error:
        read_yaml(path)
    assert str(error.value).startswith(f"config file {path} is not valid YAML")
    assert "line 3" in str(error.value) and "\n" not in str(error.value)


def test_config_file_binary_refused(tmp_path: Path) -> None:
    path = tmp_path / "last.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("policy.pth", bytes(range(256)))
    with pytest.raises(ValueError, match=r"is not a text file \(a checkpoint or an archive\?\)"
                                         r"; pass a YAML file"):
        read_yaml(path)


def test_opponents_names_checked_before_weights() -> None:
    with pytest.raises(ValueError, match=r"^opponents: unknown tictactoe player 'bogus'"):
        load_config(TrainConfig, GAME, overrides={"opponents": ["perfect", "bogus"]})
    with pytest.raises(ValueError, match=r"^eval_opponents: unknown tictactoe player"):
        load_config(AzConfig, GAME, overrides={"eval_opponents": ["random", "bogus"]})
