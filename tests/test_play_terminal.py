"""``boardgym play`` in a terminal: real pseudo-terminal sessions (pexpect) for each game, and
a scripted in-process game for Reversi's announced pass."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from boardgym.envs.games import game, reversi
from boardgym.train import play, play_terminal
from boardgym.train.play_flow import BoardView, Options, QuitGame

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 20
PROMPT = r"Your move \((X|O|red|yellow)\): "
AGAIN = r"Play again\? \(yes or no\): "
REVERSI_ROW = re.compile(r"^([1-8])\|(.{8})\|\1\r?$", re.MULTILINE)


def spawn(*args: str) -> pexpect.spawn:
    """``python -m boardgym play ARGS`` in a pseudo-terminal."""
    child = pexpect.spawn(sys.executable, ["-m", "boardgym", "play", *args], cwd=str(ROOT),
                          encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 200))
    child.setecho(False)
    return child


def finish(child: pexpect.spawn, status: int = 0) -> str:
    """Wait for the goodbye and the end; check the exit status; return the last output."""
    child.expect("Goodbye")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == status
    assert "Traceback" not in child.before
    return str(child.before)


def reversi_hints(text: str) -> list[str]:
    """The squares marked ``.`` on the last Reversi board in ``text``, as ``53``-style moves."""
    rows = REVERSI_ROW.findall(text)[-8:]
    return [f"{col + 1}{int(row)}" for row, line in rows for col, c in enumerate(line)
            if c == "."]


def test_reversi_full_game_with_hints_both_move_styles_and_play_again_no() -> None:
    child = spawn("reversi", "--opponent", "random", "--seed", "5", "--side", "x",
                  "--first", "you")
    child.expect("Welcome to Reversi! You play against random.")
    child.expect("You are X. You go first.")
    child.expect(PROMPT)
    child.sendline("hints")
    child.expect("Hints on.")
    moves = 0
    while child.expect([PROMPT, AGAIN]) == 0:
        move = reversi_hints(child.before)[0]
        letter_style = "abcdefgh"[int(move[0]) - 1] + move[1]
        child.sendline(letter_style if moves % 2 else move)
        moves += 1
    end = child.before
    assert re.search(r"X: \d+  O: \d+\. (X wins|O wins|It's a tie)", end)
    assert re.search(r"Scoreboard after 1 round: you \(X\) \d win", end)
    assert moves >= 10
    child.sendline("no")
    finish(child)


def test_reversi_malformed_and_illegal_moves_are_explained_then_quit() -> None:
    child = spawn("reversi", "--opponent", "random", "--seed", "0", "--side", "o",
                  "--first", "you")
    child.expect(PROMPT)
    child.sendline("z9")
    child.expect("'z9' is not a move. Type a square as its name, like a1, or as column then "
                 "row digits, like 11")
    child.expect(PROMPT)
    child.sendline("11")
    child.expect("a1 is not a legal move here; type 'hints' to see the legal moves.")
    child.expect(PROMPT)
    child.sendline("44")
    child.expect("d4 is not a legal move here")
    child.expect(PROMPT)
    child.sendline("quit")
    finish(child)


def test_reversi_end_of_input_and_ctrl_c_say_goodbye() -> None:
    child = spawn("reversi", "--opponent", "random", "--seed", "0")
    child.expect("Do you want to be X or O\\? ")
    child.sendline("green")
    child.expect("Please type X or O.")
    child.sendeof()
    finish(child)
    child = spawn("reversi", "--opponent", "random", "--seed", "0", "--side", "x",
                  "--first", "you")
    child.expect(PROMPT)
    child.sendintr()
    finish(child, status=play.EXIT_INTERRUPTED)


def test_four_in_a_row_refuses_a_full_column_and_bad_numbers() -> None:
    # Connect 5 on 4 rows can only be made across a full row: column 1 fills before any win.
    child = spawn("four_in_a_row", "--opponent", "random", "--seed", "2", "--side", "red",
                  "--first", "you", "--rows", "4", "--columns", "5", "--connect", "5")
    child.expect("Welcome to Four-in-a-row!")
    child.expect(PROMPT)
    child.sendline("6")
    child.expect("'6' is not a move. Type a column number from 1 to 5;")
    for _ in range(5):  # at most 4 tokens fit
        child.expect(PROMPT)
        child.sendline("1")
        if child.expect(["column 1 is not a legal move here", r"\(random\) plays"]) == 0:
            break
    else:
        pytest.fail("column 1 never filled")
    child.expect(PROMPT)
    child.sendeof()
    finish(child)


def test_four_in_a_row_full_game_to_the_end() -> None:
    child = spawn("connect_four", "--opponent", "random", "--seed", "4", "--side", "yellow",
                  "--first", "computer")
    child.expect("You are yellow. random goes first.")
    child.expect(r"red \(random\) plays column \d\.")
    column = 0
    while child.expect([PROMPT, AGAIN]) == 0:
        column = column % 7 + 1  # the next column, also after "column n is not legal"
        child.sendline(str(column))
    assert re.search(r"(red wins|yellow wins|It's a tie)", child.before)
    assert "Scoreboard after 1 round: you (yellow)" in child.before
    child.sendline("no")
    finish(child)


def test_tictactoe_numpad_two_rounds_with_scoreboard_then_eof() -> None:
    child = spawn("tictactoe", "--opponent", "random", "--seed", "1", "--numpad",
                  "--side", "x", "--first", "you")
    child.expect("The cells are numbered like this:")
    child.expect(r" 7 \| 8 \| 9")
    child.expect(PROMPT)
    child.sendline("7")
    child.expect(r" X \|   \|  ")  # 7 is the top-left cell on a numpad
    for round_number in (1, 2):
        cells = iter("123456789")
        while child.expect([PROMPT, AGAIN]) == 0:
            child.sendline(next(cells))
        assert re.search(r"(X wins|O wins|It's a tie)", child.before)
        assert f"Scoreboard after {round_number} round" in child.before
        child.sendline("yes" if round_number == 1 else "maybe")
    child.expect("Please type yes or no.")
    child.sendeof()
    finish(child)


def test_tictactoe_taken_cell_hints_and_malformed_input() -> None:
    child = spawn("tictactoe", "--opponent", "random", "--seed", "0", "--side", "o",
                  "--first", "computer")
    child.expect(r"X \(random\) plays cell (\d)\.")
    taken = child.match.group(1)
    child.expect(PROMPT)
    child.sendline(taken)
    child.expect(f"cell {taken} is not a legal move here")
    child.sendline("ten")
    child.expect(r"'ten' is not a move. Type a cell number from 1 to 9 \(1 2 3 is the top row\)")
    child.sendline("hints")
    child.expect("Hints on.")
    child.expect(PROMPT)
    free = [n for n in "123456789" if n != taken]
    assert all(n in child.before for n in free)
    child.sendline("quit")
    finish(child)


class Scripted:
    """Plays the given actions in order, then the first legal move."""

    def __init__(self, actions: list[int]) -> None:
        self.actions = iter(actions)

    def act(self, state: reversi.State, rng: np.random.Generator) -> int:
        return next(self.actions, int(np.flatnonzero(reversi.legal_mask(state))[0]))


def test_reversi_pass_is_announced() -> None:
    # X: c4 e6 a4 c2; O: c3 b4 a5 a3 -- then X has no legal move and O plays again.
    typed = iter(["34", "56", "14", "32", "quit"])
    out: list[str] = []
    options = Options("reversi", "scripted", 0, "you", {}, False, 0)
    terminal = play_terminal.Terminal(options, Scripted([18, 25, 32, 16]),
                                      np.random.default_rng(0), read=lambda prompt: next(typed),
                                      write=out.append)
    with pytest.raises(QuitGame):
        terminal.run()
    text = "\n".join(out)
    assert "X has no legal move and passes." in text
    assert text.index("O (scripted) plays a3.") < text.index("passes")
    assert "O (scripted) plays" in text[text.index("passes"):]


def test_views_name_and_parse_moves_alike() -> None:
    view = BoardView(game("reversi"), {})
    start = reversi.initial_state()
    assert view.parse("43", start) == view.parse("d3", start) == view.parse("D3", start) == 19
    assert view.move_name(19) == "d3"
    columns = BoardView(game("four_in_a_row"), {"columns": 9})
    empty = columns.rules.initial_state(columns=9)
    assert columns.parse("9", empty) == columns.parse("column 9", empty) == 8
    assert columns.cell(empty, 8) == 5 * 9 + 8  # the token falls to the bottom row
    numpad = BoardView(game("tictactoe"), {}, numpad=True)
    assert numpad.parse("7", numpad.rules.initial_state()) == 0  # 7 is the top-left cell
    assert numpad.move_name(0) == "cell 7" and numpad.numbered and not columns.numbered


@pytest.mark.parametrize(("args", "message"), [
    (["tictactoe", "--side", "green"], "--side for tictactoe must be X or O, got 'green'"),
    (["four_in_a_row", "--side", "black"], "must be red or yellow"),
    (["reversi", "--rows", "5"], "Reversi has no option 'rows'"),
    (["reversi", "--numpad"], "--numpad numbers the cells of a 3x3 board"),
    (["four_in_a_row", "--rows", "3"], "rows and columns must each be >= 4"),
    (["reversi", "--opponent", "nope"], "unknown reversi player 'nope'"),
    (["chess"], "unknown game 'chess'"),
    (["tictactoe", "--seed", "-1"], "--seed: must be >= 0"),
])
def test_bad_arguments_name_the_fix(args: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        play.main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
