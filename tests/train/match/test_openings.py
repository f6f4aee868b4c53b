"""Fair-match openings: random openings (legal, fair, reproducible) and opening suites."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from boardgym.agents.solvers import four_in_a_row as solver
from boardgym.agents.tictactoe import move_values
from boardgym.envs.games import game
from boardgym.train.match import openings
from boardgym.train.match.openings import (
    SUITES,
    balanced_openings,
    load_suite,
    openings_from,
    parse_suite,
    random_opening,
    replay,
)

SUITE = SUITES.file("reversi_8ply")
SMALL_BOARD = {"rows": 4, "columns": 5, "connect": 4}
"""A four-in-a-row board small enough for the solver to settle every opening in its budget."""
COUNT = 12


@pytest.mark.parametrize(("name", "plies", "config"), [
    ("tictactoe", 3, {}), ("four_in_a_row", 6, {}), ("four_in_a_row", 4, SMALL_BOARD),
    ("reversi", 8, {}),
])
def test_random_openings_are_legal_unfinished_and_as_long_as_asked(
        name: str, plies: int, config: dict[str, int]) -> None:
    record = game(name)
    for index in range(COUNT):
        opening = random_opening(name, plies, seed=0, index=index, config=config)
        assert len(opening) == plies
        assert not record.rules.is_terminal(replay(record, opening, config))


def test_tictactoe_openings_are_exact_draws() -> None:
    for index in range(COUNT):
        state = replay(game("tictactoe"), random_opening("tictactoe", 4, 0, index))
        assert max(move_values(int(state.me), int(state.opp)).values()) == 0


def test_four_in_a_row_openings_are_not_decided_where_the_solver_can_tell() -> None:
    record = game("four_in_a_row")
    for index in range(COUNT):
        state = replay(record, random_opening(record.name, 4, 0, index, SMALL_BOARD),
                       SMALL_BOARD)
        assert solver.solve(state) == 0  # exact, no budget: this board is small


def test_random_openings_are_reproducible_from_the_seed() -> None:
    first = [random_opening("reversi", 6, 3, index) for index in range(COUNT)]
    openings._cached_opening.cache_clear()
    again = [random_opening("reversi", 6, 3, index) for index in range(COUNT)]
    other = [random_opening("reversi", 6, 4, index) for index in range(COUNT)]
    assert first == again
    assert first != other
    assert len(set(first)) > 1


def test_too_many_plies_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="use fewer --openings plies"):
        random_opening("tictactoe", 9, 0, 0)


def test_the_shipped_reversi_suite_is_legal_distinct_and_eight_plies() -> None:
    record = game("reversi")
    suite = load_suite(record, SUITE)
    assert len(suite) == openings.DEFAULT_COUNT
    assert all(len(opening) == openings.DEFAULT_PLIES for opening in suite)
    positions = {record.rules.to_text(replay(record, opening)) for opening in suite}
    assert len(positions) == len(suite)
    assert "made with: python -m boardgym.train.match.openings reversi" in SUITE.read_text()


def test_the_suite_command_reproduces_the_shipped_suite(tmp_path: Path) -> None:
    shipped = load_suite(game("reversi"), SUITE)[:3]
    made = balanced_openings("reversi", 8, 3, seed=0)
    assert tuple(item.opening for item in made) == shipped
    assert all(abs(item.value) <= openings.DEFAULT_MAX_VALUE for item in made)
    out = tmp_path / "suite.txt"
    assert openings.main(["reversi", "--count", "2", "--out", str(out)]) == 0
    assert load_suite(game("reversi"), out) == shipped[:2]


def test_suite_lines_are_names_with_comments_and_values_ignored() -> None:
    record = game("four_in_a_row")
    text = "# a comment\ncolumn 4,column 4,column 3\t+0\n\ncolumn 1\n"
    assert parse_suite(record, text) == ((3, 3, 2), (0,))
    source = openings_from("2", "connect_four", seed=1)
    assert source.plies == 2 and source.json_value() == 2


@pytest.mark.parametrize(("text", "message"), [
    ("f5,z9\n", "line 1: 'z9' is not a Reversi move"),
    ("# only a comment\n", "has no openings"),
    ("f5,f5\n", "line 1: opening move 2 (f5) is not legal"),
])
def test_bad_suites_name_the_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_suite(game("reversi"), text)


def test_bad_openings_values() -> None:
    with pytest.raises(ValueError, match="plies >= 1"):
        openings_from("0", "reversi", 0)
    with pytest.raises(ValueError, match="cannot read the opening suite"):
        openings_from("no/such/suite.txt", "reversi", 0)


def test_a_shipped_suite_by_name_from_any_folder(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    source = openings_from("shipped:reversi_8ply", "reversi", 0)
    assert source.suite == load_suite(game("reversi"), SUITE)
    assert source.json_value() == "shipped:reversi_8ply"
    with pytest.raises(ValueError, match=r"no shipped opening suite 'nothing'.*reversi_8ply"):
        openings_from("shipped:nothing", "reversi", 0)
    with pytest.raises(ValueError, match=re.escape(f"no file {tmp_path / 'reversi_8ply.txt'}; "
                                                   "shipped:reversi_8ply is the shipped")):
        openings_from("reversi_8ply.txt", "reversi", 0)
