"""The config loader and the run folders every trainer shares (``train.common.config``,
``train.common.runs``), through a config of a trainer of their own."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
import torch
import yaml

from boardgym.train.common.config import (
    RunConfig,
    above,
    between,
    load_config,
    parse_sets,
    ranged,
)
from boardgym.train.common.runs import (
    CONFIG_FILE,
    last_checkpoint,
    new_run_folder,
    open_run_folder,
    removed_on_error,
    resumed_config,
    set_torch_rng,
    torch_rng_text,
)


@dataclass
class SketchConfig(RunConfig):
    """A trainer's config: two counts, a rate and a list."""

    HYPERPARAMS: ClassVar[str] = "sketch_{game}.yaml"
    RESUMABLE_KEYS: ClassVar[frozenset[str]] = frozenset({"steps"})

    steps: int = ranged(10, between(1, 1000))
    """Steps to train for."""
    depth: int = ranged(0, between(0, 9))
    """Search depth (0: none)."""
    rate: float = ranged(0.1, above(0.0, 1.0))
    """A rate in (0, 1]."""
    opponents: list[str] | None = None
    """Who to play."""

    def validate(self) -> None:
        """At least one opponent, if any are named."""
        if self.opponents == []:
            raise ValueError("opponents: name one; fix it with --set opponents=[random]")


@pytest.fixture
def sketch_file(tmp_path: Path) -> Path:
    path = tmp_path / "sketch.yaml"
    path.write_text("steps: 20\nrate: 1e-2\nopponents: [random]\n")
    return path


def test_a_yaml_file_and_overrides_become_a_checked_config(sketch_file: Path) -> None:
    config = load_config(SketchConfig, "connect_four", sketch_file,
                         parse_sets(["depth=2", "opponents=[rules, random]"],
                                    SketchConfig.keys()))
    assert config == SketchConfig("four_in_a_row", steps=20, depth=2, rate=0.01,
                                  opponents=["rules", "random"])
    assert isinstance(config.rate, float)  # YAML 1.1 reads 1e-2 as a string
    assert SketchConfig.default_file("tictactoe").name == "sketch_tictactoe.yaml"


@pytest.mark.parametrize(("overrides", "message"), [
    ({"bogus": 1}, "unknown config key(s) ['bogus']"),
    ({"steps": "many"}, "steps must be an integer, got 'many'; fix it with --set steps=..."),
    ({"steps": True}, "steps must be an integer"),
    ({"opponents": [3]}, "opponents must be a string"),
    ({"steps": 0}, "steps must be a positive integer, at most 1000, got 0; fix it with --set "
                   "steps=10"),
    ({"depth": -1}, "depth must be 0 or a positive integer, at most 9, got -1; fix it with "
                    "--set depth=0"),
    ({"seed": 2 ** 32}, "seed must be 0 or a positive integer, at most 4294967295"),
    ({"rate": "nan"}, "rate must be a number in (0, 1], got nan"),
    ({"rate": 2}, "rate must be a number in (0, 1], got 2.0; fix it with --set rate=0.1"),
    ({"opponents": []}, "opponents: name one"),
    ({"game": "chess"}, "unknown game"),
])
def test_bad_keys_and_values_fail_in_one_line(sketch_file: Path, overrides: dict[str, object],
                                              message: str) -> None:
    game = str(overrides.pop("game", "tictactoe"))
    with pytest.raises(ValueError) as error:
        load_config(SketchConfig, game, sketch_file, overrides)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_set_items_need_a_key_and_a_value() -> None:
    with pytest.raises(ValueError, match="--set needs key=value"):
        parse_sets(["steps"], SketchConfig.keys())
    with pytest.raises(ValueError, match=r"unknown config key\(s\) \['step'\] in --set"):
        parse_sets(["step=3"], SketchConfig.keys())


def test_a_resume_changes_only_the_resumable_keys(tmp_path: Path) -> None:
    directory = new_run_folder(SketchConfig("tictactoe", steps=5), tmp_path, "sketch")
    assert directory.name.startswith("tictactoe__sketch__0__")
    assert yaml.safe_load((directory / CONFIG_FILE).read_text())["steps"] == 5
    resumed = resumed_config(SketchConfig, directory, {"steps": 9}, "tictactoe", "sketch",
                             "sketch")
    assert resumed == SketchConfig("tictactoe", steps=9)
    with pytest.raises(ValueError, match="--resume keeps the run's depth; only steps can"):
        resumed_config(SketchConfig, directory, {"depth": 1}, None, "sketch", "sketch")
    with pytest.raises(ValueError, match="the run is a tictactoe run, not reversi"):
        resumed_config(SketchConfig, directory, {}, "reversi", "sketch", "sketch")
    with pytest.raises(ValueError, match=r"is not a run folder .* made by `boardgym sketch`"):
        resumed_config(SketchConfig, tmp_path, {}, None, "sketch", "sketch")
    with pytest.raises(ValueError, match="has no checkpoint yet"):
        last_checkpoint(directory)


def test_a_resume_rewrites_the_config_only_once_the_checkpoint_is_read(tmp_path: Path) -> None:
    directory = new_run_folder(SketchConfig("tictactoe", steps=5), tmp_path, "sketch")

    def unreadable(config: SketchConfig, folder: Path) -> None:
        last_checkpoint(folder)

    with pytest.raises(ValueError, match="has no checkpoint yet"):
        open_run_folder(SketchConfig, directory, {"steps": 9}, None, ("sketch", "sketch"),
                        unreadable)
    assert yaml.safe_load((directory / CONFIG_FILE).read_text())["steps"] == 5
    resumed = open_run_folder(SketchConfig, directory, {"steps": 9}, None, ("sketch", "sketch"),
                              lambda config, folder: (config, folder))
    assert resumed == (SketchConfig("tictactoe", steps=9), directory)
    assert yaml.safe_load((directory / CONFIG_FILE).read_text())["steps"] == 9


@dataclass
class Folder:
    """A run as ``removed_on_error`` sees it."""

    directory: Path

    @property
    def last(self) -> Path:
        return self.directory / "checkpoints" / "last.zip"


@pytest.mark.parametrize(("fresh", "checkpointed", "kept"),
                         [(True, False, False), (True, True, True), (False, False, True)])
def test_a_failed_start_leaves_no_run_folder(tmp_path: Path, fresh: bool, checkpointed: bool,
                                             kept: bool) -> None:
    run = Folder(new_run_folder(SketchConfig("tictactoe"), tmp_path, "sketch"))
    if checkpointed:
        run.last.write_bytes(b"")
    with pytest.raises(KeyboardInterrupt), removed_on_error(run, fresh):
        raise KeyboardInterrupt
    assert run.directory.is_dir() == kept


def test_torch_rng_state_survives_as_text() -> None:
    torch.manual_seed(3)
    saved = torch_rng_text()
    first = torch.rand(4)
    set_torch_rng(saved)
    torch.testing.assert_close(torch.rand(4), first)
