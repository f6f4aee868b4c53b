"""Rendering: text boards like the classic programs, drawn images, and the pygame window."""

from __future__ import annotations

import dataclasses
import sys

import gymnasium as gym
import numpy as np
import pytest

import boardgym  # noqa: F401
from boardgym.envs import render
from boardgym.envs.games import GAMES


def test_reversi_ansi_has_algebraic_labels_and_the_start_discs() -> None:
    """Columns a-h and rows 1-8, as the square names (``e3`` is action 2*8+4)."""
    env = gym.make("Reversi-v0", opponent="random", render_mode="ansi", first_player="agent")
    env.reset(seed=0)
    lines = env.render().splitlines()
    assert lines[0].strip() == "abcdefgh" and lines[-1].strip() == "abcdefgh"
    assert GAMES["reversi"].action_name(2 * 8 + 4) == "e3"
    assert lines[5] == "4|   OX   |4" and lines[6] == "5|   XO   |5"


def test_four_in_a_row_ansi_shows_column_numbers_and_a_dropped_token() -> None:
    env = gym.make("FourInARow-v0", opponent="random", render_mode="ansi", first_player="agent")
    env.reset(seed=0)
    env.step(3)
    lines = env.render().splitlines()
    assert lines[0].strip() == "1234567"
    assert lines[6][2 + 3] == "X"
    assert lines[6].count("O") + lines[5].count("O") == 1


def test_tictactoe_ansi_grid() -> None:
    env = gym.make("TicTacToe-v0", opponent="random", render_mode="ansi", first_player="agent")
    env.reset(seed=0)
    env.step(4)
    text = env.render()
    assert "---+---+---" in text and text.splitlines()[2][5] == "X"


def test_rgb_reversi_disc_colours() -> None:
    env = gym.make("Reversi-v0", opponent="random", render_mode="rgb_array",
                   first_player="agent")
    env.reset(seed=0)
    frame = env.render()
    cell = frame.shape[0] // 8
    assert frame.shape == (8 * cell, 8 * cell, 3) and frame.dtype == np.uint8

    def centre(row: int, col: int) -> np.ndarray:
        return frame[row * cell + cell // 2, col * cell + cell // 2]

    assert centre(3, 4).max() < 60  # e4: a black disc
    assert centre(3, 3).min() > 200  # d4: a white disc
    assert centre(0, 0)[1] > centre(0, 0)[0]  # empty square: green


def test_rgb_four_in_a_row_red_token_in_a_blue_frame() -> None:
    env = gym.make("FourInARow-v0", opponent="random", render_mode="rgb_array",
                   first_player="agent")
    env.reset(seed=0)
    env.step(0)
    frame = env.render()
    cell = frame.shape[1] // 7
    r, g, b = frame[5 * cell + cell // 2, cell // 2]
    assert r > 180 and g < 80 and b < 80
    r, g, b = frame[2, 2]
    assert b > 150 and r < 50


def test_human_mode_opens_a_window() -> None:
    pytest.importorskip("pygame")
    env = gym.make("TicTacToe-v0", opponent="random", render_mode="human")
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    env.close()


def test_human_mode_without_pygame_names_the_gui_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pygame", None)
    env = gym.make("TicTacToe-v0", opponent="random", render_mode="human")
    with pytest.raises(ImportError, match=r"boardgym\[gui\]"):
        env.reset(seed=0)


def test_styles_come_from_the_records() -> None:
    for name, record in GAMES.items():
        assert render.STYLES[name] is record.style
        for alias in record.aliases:
            assert render.STYLES[alias] is record.style
    assert set(render.STYLES) == set(GAMES)


@pytest.mark.parametrize("name", list(GAMES))
def test_every_frame_has_one_line_per_row_and_the_stones(name: str) -> None:
    record = GAMES[name]
    state = record.rules.initial_state()
    board = render.first_player_planes(record.rules, state)
    text = render.ansi(record, board)
    cells = "".join(ch for ch in text if ch in record.style.symbols[1:])
    assert len(cells) == board.sum()
    assert len(text.splitlines()) >= board.shape[1]


def test_an_unknown_text_frame_names_the_valid_ones() -> None:
    record = GAMES["tictactoe"]
    odd = dataclasses.replace(record, style=dataclasses.replace(record.style, text_frame="hex"))
    board = render.first_player_planes(record.rules, record.rules.initial_state())
    with pytest.raises(ValueError, match="box, rack, grid"):
        render.ansi(odd, board)


def test_an_env_in_human_mode_pickles_without_its_window() -> None:
    pytest.importorskip("pygame")
    import pickle

    env = gym.make("TicTacToe-v0", opponent="random", render_mode="human")
    env.reset(seed=0)
    twin = pickle.loads(pickle.dumps(env.unwrapped))
    twin.step(int(np.flatnonzero(twin.action_masks())[0]))
    env.close()
    twin.close()
