"""Boards as SVG (``boardgym.envs.svg``) and ``render_mode="svg"``: well-formed documents whose
stones, hints, last-move frame and clickable cells match the position."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boardgym
from boardgym.envs.games import game
from boardgym.envs.render import first_player_planes
from boardgym.envs.svg import Svg, board_svg, move_cell, state_svg
from tests.test_new_game import GAME as FOUR_BY_FOUR

NS = {"svg": "http://www.w3.org/2000/svg"}


def attr(element: ET.Element | None, name: str) -> str:
    """An attribute that must be there."""
    assert element is not None
    value = element.get(name)
    assert value is not None, f"<{element.tag}> lacks {name}"
    return value


def parse(svg: Any) -> ET.Element:
    """The document's root element (fails on a document that is not well-formed XML)."""
    return ET.fromstring(svg)


def with_class(root: ET.Element, name: str) -> list[ET.Element]:
    """The elements whose class list holds ``name``."""
    return [e for e in root.iter() if name in e.get("class", "").split()]


def cells_of(root: ET.Element, name: str) -> list[int]:
    """The cells of the ``name`` elements, found as the cell rect sharing their centre."""
    centres = {}
    for rect in with_class(root, "cell"):
        x, y, size = (float(rect.get(k, 0)) for k in ("x", "y", "width"))
        centres[(round(x + size / 2, 1), round(y + size / 2, 1))] = int(attr(rect, "data-cell"))
    out = []
    for element in with_class(root, name):
        x, y = centre_of(element)
        out.append(centres[(round(x, 1), round(y, 1))])
    return sorted(out)


def centre_of(element: ET.Element) -> tuple[float, float]:
    """The centre of a rect, a circle or a path (the mean of the path's points)."""
    if element.tag.endswith("rect"):
        size = float(element.get("width", 0))
        return float(element.get("x", 0)) + size / 2, float(element.get("y", 0)) + size / 2
    if element.tag.endswith("path"):
        numbers = [float(n) for n in re.findall(r"-?[\d.]+", element.get("d", ""))]
        return float(np.mean(numbers[0::2])), float(np.mean(numbers[1::2]))
    return float(element.get("cx", 0)), float(element.get("cy", 0))


def stone_counts(root: ET.Element) -> tuple[int, int]:
    """How many first-player and second-player stones the drawing has."""
    stones = with_class(root, "stone")
    return (sum("first" in s.get("class", "").split() for s in stones),
            sum("second" in s.get("class", "").split() for s in stones))


def plane_counts(rules: Any, state: Any) -> tuple[int, int]:
    planes = first_player_planes(rules, state)
    return int(planes[0].sum()), int(planes[1].sum())


def legal_cells(name: str, state: Any) -> list[int]:
    rules = game(name).rules
    return sorted(move_cell(name, state, int(a)) for a in np.flatnonzero(rules.legal_mask(state)))


@pytest.fixture(scope="module")
def four_by_four() -> str:
    """The 4x4 tic-tac-toe of ``tests/test_new_game.py``, registered."""
    boardgym.register_game(FOUR_BY_FOUR)
    return FOUR_BY_FOUR.name


@pytest.mark.parametrize(("name", "text", "counts"), [
    ("reversi", None, (2, 2)),
    ("four_in_a_row", "4453", (2, 2)),
    ("tictactoe", "XO-X-O--X", (3, 2)),
])
def test_stones_match_the_planes(name: str, text: str | None, counts: tuple[int, int]) -> None:
    rules = game(name).rules
    state = rules.initial_state() if text is None else rules.parse(text)
    root = parse(state_svg(name, state))
    assert stone_counts(root) == plane_counts(rules, state) == counts


def test_four_in_a_row_stones_sit_where_they_fell() -> None:
    rules = game("four_in_a_row").rules
    root = parse(state_svg("four_in_a_row", rules.parse("4453")))
    bottom = 5 * 7  # the bottom row's first cell
    assert cells_of(root, "stone") == sorted([bottom + 3, bottom - 7 + 3, bottom + 4, bottom + 2])
    assert cells_of(root, "first") == [bottom + 3, bottom + 4]


@pytest.mark.parametrize(("name", "options", "shape"), [
    ("reversi", {}, (8, 8)), ("four_in_a_row", {}, (6, 7)),
    ("four_in_a_row", {"rows": 5, "columns": 8}, (5, 8)), ("tictactoe", {}, (3, 3)),
])
def test_every_cell_is_one_clickable_rect(name: str, options: dict[str, int],
                                          shape: tuple[int, int]) -> None:
    state = game(name).rules.initial_state(**options)
    root = parse(state_svg(name, state, hints=True))
    cells = with_class(root, "cell")
    assert sorted(int(attr(c, "data-cell")) for c in cells) == list(range(shape[0] * shape[1]))
    assert all(c.tag == "{http://www.w3.org/2000/svg}rect" for c in cells)
    above = root.find("svg:g", NS)  # stones, hints, marks and labels let clicks through
    assert above is not None and above.get("pointer-events") == "none"
    assert not [e for e in root if e.get("data-cell") is None and e.tag.endswith("rect")]


def test_root_names_the_game_and_has_a_size() -> None:
    root = parse(state_svg("reversi", game("reversi").rules.initial_state()))
    assert root.get("role") == "img" and root.get("aria-label") == "Reversi board"
    title = root.find("svg:title", NS)
    assert title is not None and title.text == "Reversi board"
    width, height = float(attr(root, "width")), float(attr(root, "height"))
    assert attr(root, "viewBox").split() == ["0", "0", attr(root, "width"), attr(root, "height")]
    assert width > 8 * 64 and height > 8 * 64  # the cells and the label bands


@pytest.mark.parametrize(("name", "text"), [("reversi", None), ("four_in_a_row", "4453"),
                                            ("four_in_a_row", "4444441"),
                                            ("tictactoe", "XO-X-O---")])
def test_hints_are_the_legal_moves_cells(name: str, text: str | None) -> None:
    rules = game(name).rules
    state = rules.initial_state() if text is None else rules.parse(text)
    root = parse(state_svg(name, state, hints=True))
    assert cells_of(root, "hint") == legal_cells(name, state)
    assert not with_class(parse(state_svg(name, state)), "hint")


def test_no_hints_once_the_game_is_over() -> None:
    state = game("tictactoe").rules.parse("XXXOO----")
    assert not with_class(parse(state_svg("tictactoe", state, hints=True)), "hint")


def test_move_cell_is_the_landing_cell() -> None:
    rules = game("four_in_a_row").rules
    state = rules.parse("4453")
    assert move_cell("four_in_a_row", state, 3) == 3 * 7 + 3  # on top of two tokens
    assert move_cell("four_in_a_row", state, 0) == 5 * 7
    assert move_cell("reversi", game("reversi").rules.initial_state(), 19) == 19


def test_last_move_is_framed_and_its_flips_marked() -> None:
    rules = game("reversi").rules
    before = rules.initial_state()
    after = rules.apply(before, 19)  # d3: flips d4
    root = parse(state_svg("reversi", after, last_action=19, previous=before))
    assert cells_of(root, "last") == [19]
    assert cells_of(root, "turned") == [27]


def test_last_move_of_a_dropped_token() -> None:
    rules = game("four_in_a_row").rules
    before = rules.parse("445")
    root = parse(state_svg("four_in_a_row", rules.apply(before, 3), last_action=3,
                           previous=before))
    assert cells_of(root, "last") == [3 * 7 + 3] and not with_class(root, "turned")


def test_board_svg_marks_the_given_cells() -> None:
    board = np.zeros((2, 3, 3), np.uint8)
    board[0, 1, 1] = board[1, 0, 2] = 1
    root = parse(board_svg("tictactoe", board, last=4, hints=[0, 8], turned=[2]))
    assert (cells_of(root, "last"), cells_of(root, "hint"), cells_of(root, "turned")) \
        == ([4], [0, 8], [2])
    assert stone_counts(root) == (1, 1)


def test_labels_follow_the_text_board() -> None:
    reversi = parse(state_svg("reversi", game("reversi").rules.initial_state()))
    texts = [t.text for t in reversi.iter("{http://www.w3.org/2000/svg}text")]
    assert texts.count("a") == 2 and texts.count("8") == 2  # above and below, both sides
    rack = parse(state_svg("four_in_a_row", game("four_in_a_row").rules.initial_state()))
    assert [t.text for t in rack.iter("{http://www.w3.org/2000/svg}text")] \
        == [str(c) for c in range(1, 8)]
    grid = parse(state_svg("tictactoe", game("tictactoe").rules.parse("X--------")))
    assert [t.text for t in grid.iter("{http://www.w3.org/2000/svg}text")] \
        == [str(c) for c in range(2, 10)]  # the empty cells' numbers
    bare = parse(state_svg("reversi", game("reversi").rules.initial_state(), labels=False))
    assert not list(bare.iter("{http://www.w3.org/2000/svg}text"))


def test_a_registered_game_draws(four_by_four: str) -> None:
    rules = game(four_by_four).rules
    state = rules.parse("XO-X-O----------")
    root = parse(state_svg(four_by_four, state, hints=True))
    assert len(with_class(root, "cell")) == 16 and stone_counts(root) == (2, 2)
    assert cells_of(root, "hint") == legal_cells(four_by_four, state)


def test_repr_svg_and_determinism() -> None:
    state = game("reversi").rules.initial_state()
    svg = state_svg("reversi", state, hints=True)
    assert isinstance(svg, Svg)
    assert svg._repr_svg_() == svg and isinstance(svg._repr_svg_(), str)
    assert state_svg("reversi", state, hints=True) == svg


@pytest.mark.parametrize(("call", "match"), [
    (lambda: board_svg("tictactoe", np.zeros((3, 3), np.uint8)), "planes"),
    (lambda: board_svg("tictactoe", np.zeros((2, 3, 3), np.uint8), last=9), "off the board"),
    (lambda: board_svg("tictactoe", np.zeros((2, 3, 3), np.uint8), hints=[-1]), "off the board"),
    (lambda: state_svg("tictactoe", game("tictactoe").rules.initial_state(), last_action=0),
     "both"),
])
def test_bad_input_is_one_clear_error(call: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("env_id", list(boardgym.ENV_IDS))
def test_env_renders_svg_with_the_agents_moves_as_hints(env_id: str) -> None:
    env = gym.make(env_id, render_mode="svg", opponent="random")
    _, info = env.reset(seed=0)
    svg = env.render()
    assert isinstance(svg, Svg)
    root = parse(svg)
    unwrapped: Any = env.unwrapped
    record, state = unwrapped.record, unwrapped.state
    assert stone_counts(root) == plane_counts(record.rules, state)
    assert cells_of(root, "hint") == sorted(
        move_cell(record, state, int(a)) for a in np.flatnonzero(info["action_mask"]))


def test_finished_env_draws_no_hints() -> None:
    env = gym.make("TicTacToe-v0", render_mode="svg", opponent="random", first_player="agent")
    env.reset(seed=0)
    env.unwrapped.step(0)
    _, _, done, _, info = env.unwrapped.step(0)  # cell 0 again: illegal, the game ends
    assert done and info["illegal_action"]
    assert not with_class(parse(env.render()), "hint")


def test_pettingzoo_renders_svg() -> None:
    pytest.importorskip("pettingzoo")
    from boardgym.envs.pettingzoo import env as aec_env

    aec = aec_env("tictactoe", render_mode="svg")
    aec.reset(seed=0)
    aec.step(4)
    root = parse(aec.render())
    assert stone_counts(root) == (1, 0) and len(with_class(root, "hint")) == 8


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(["reversi", "four_in_a_row", "tictactoe"]),
       choices=st.lists(st.integers(0, 10**6), max_size=40))
def test_random_games_draw_their_planes(name: str, choices: list[int]) -> None:
    rules = game(name).rules
    state = rules.initial_state()
    for choice in choices:
        legal = np.flatnonzero(rules.legal_mask(state))
        if rules.is_terminal(state) or not legal.size:
            break
        state = rules.apply(state, int(legal[choice % legal.size]))
    root = parse(state_svg(name, state, hints=True))
    assert stone_counts(root) == plane_counts(rules, state)
    assert cells_of(root, "stone") == np.flatnonzero(
        first_player_planes(rules, state).any(axis=0)).tolist()
