"""Shipped files by name: ``shipped:NAME`` resolves inside the package, from any folder."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import pytest

import boardgym  # noqa: F401  (registers the envs)
from boardgym import agents
from boardgym.agents import shipped
from boardgym.agents.checkpoint import holds_entry
from tests.paths import ROOT


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory outside the checkout."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_shipped_checkpoints_are_the_top_level_folder_by_stem() -> None:
    stems = sorted(path.stem for path in (ROOT / "checkpoints").glob("*.zip"))
    assert shipped.CHECKPOINTS.names() == stems
    assert {"reversi", "reversi_az", "reversi_az_64x6", "four_in_a_row", "four_in_a_row_az",
            "tictactoe", "tictactoe_az"} <= set(stems)
    assert shipped.resolve("shipped:tictactoe").samefile(ROOT / "checkpoints" / "tictactoe.zip")


def test_paths_stay_paths() -> None:
    assert shipped.resolve("runs/x/checkpoints/best.zip") == Path("runs/x/checkpoints/best.zip")
    assert shipped.resolve(Path("shipped:tictactoe")) == shipped.resolve("shipped:tictactoe")
    assert agents.is_checkpoint_spec("shipped:tictactoe")
    assert not agents.is_checkpoint_spec("lookahead:2")


@pytest.mark.parametrize("name", ["nothing", "", "../checkpoints/tictactoe", "tictactoe.zip"])
def test_an_unknown_name_lists_the_shipped_ones(name: str) -> None:
    listing = re.escape(shipped.CHECKPOINTS.listing())
    with pytest.raises(FileNotFoundError,
                       match=rf"^no shipped checkpoint {re.escape(repr(name))}; .*{listing}$"):
        shipped.resolve(f"shipped:{name}")
    assert not holds_entry(f"shipped:{name}", "az.json")


def test_players_and_opponents_by_shipped_name_from_any_folder(elsewhere: Path) -> None:
    policy = agents.make("tictactoe", "shipped:tictactoe")
    assert "shipped:tictactoe" in repr(policy)
    assert agents.make("tictactoe", "shipped:tictactoe") is policy  # loaded once
    raw = agents.make("tictactoe", "shipped:tictactoe_az")
    assert raw is agents.make("tictactoe", "az:0@shipped:tictactoe_az")
    assert "az:8@shipped:tictactoe" in repr(agents.make("tictactoe", "az:8@shipped:tictactoe"))
    env = gym.make("TicTacToe-v0", opponent="shipped:tictactoe_az", first_player="opponent")
    _, info = env.reset(seed=0)
    assert info["action_mask"].sum() == 8


def test_a_missing_path_says_where_it_looked_and_the_shipped_name(elsewhere: Path) -> None:
    looked = elsewhere / "checkpoints" / "tictactoe.zip"
    with pytest.raises(FileNotFoundError, match=re.escape(
            f"checkpoint checkpoints/tictactoe.zip not found: no file {looked}; "
            "shipped:tictactoe is the shipped checkpoint of that name, found from any folder")):
        agents.make("tictactoe", "checkpoints/tictactoe.zip")
    with pytest.raises(FileNotFoundError, match=re.escape(
            f"no file {elsewhere / 'mine.zip'}; the shipped checkpoints: shipped:")):
        agents.make("tictactoe", "az:4@mine.zip")
    with pytest.raises(FileNotFoundError, match="no shipped checkpoint 'nothing'"):
        gym.make("TicTacToe-v0", opponent="shipped:nothing")


def test_a_checkpoint_of_another_game_by_name_is_refused() -> None:
    with pytest.raises(ValueError, match="trained for 'four_in_a_row'"):
        agents.make("tictactoe", "shipped:four_in_a_row")
