"""``boardgym play`` in a terminal: real pseudo-terminal sessions (pexpect) for each game, and
a scripted in-process game for Reversi's announced pass."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from typing import TYPE_CHECKING

import numpy as np
import pytest

from boardgym.envs.games import game, reversi
from boardgym.play import command as play
from boardgym.play import terminal as play_terminal
from boardgym.play.flow import (
    LAST_COLUMN_MARK,
    LAST_ROW_MARK,
    PAUSE_PROMPT,
    BoardView,
    Options,
    QuitGame,
    Round,
    Seats,
    margin_text,
    result_text,
)
from tests.paths import ROOT

pexpect = pytest.importorskip("pexpect")
if TYPE_CHECKING:
    from pexpect import spawn as Child

TIMEOUT = 20
PROMPT = r"Your move \((X|O|red|yellow)\): "
AGAIN = r"Play again\? \(yes or no\): "
REVERSI_ROW = re.compile(r"^([1-8])\|(.{8})\|\1(?: <)?\r?$", re.MULTILINE)
MARGIN = (r"(You beat the computer by \d+ points?!|You lost\. The computer beat you by \d+ "
          r"points?\.|The game was a tie!)")


def spawn(*args: str) -> Child:
    """``python -m boardgym play ARGS`` in a pseudo-terminal, with Ctrl-C's default action,
    as a person's shell gives it (a shell without job control starts background jobs with
    SIGINT ignored, and Python then installs no KeyboardInterrupt for the child)."""
    child = pexpect.spawn(sys.executable, ["-m", "boardgym", "play", *args], cwd=str(ROOT),
                          encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 200),
                          preexec_fn=default_interrupt)
    child.setecho(False)
    return child


def default_interrupt() -> None:
    """In the child before ``exec``: SIGINT back to its default action."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt(child: Child, tries: int = 3, patience: float = 5.0) -> None:
    """Press Ctrl-C until the goodbye comes, as a person would press it again.

    Python's ``input()`` over readline can lose a Ctrl-C that lands after the prompt is
    written but before it waits for the keyboard (the flag is set, nobody looks until the
    next keystroke); on a loaded machine that window is wide enough to hit.
    """
    for _ in range(tries):
        child.sendintr()
        if child.expect(["Goodbye", pexpect.TIMEOUT], timeout=patience) == 0:
            return
    raise AssertionError(f"no goodbye after {tries} Ctrl-C; the game's last output: "
                         f"{str(child.before)[-300:]!r}")


def finish(child: Child, status: int = 0, said_goodbye: bool = False) -> str:
    """Wait for the goodbye (unless ``said_goodbye``) and the end; check the exit status;
    return the last output."""
    if not said_goodbye:
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
    assert re.search(r"X: \d+  O: \d+\. ((X|O) wins\. )?" + MARGIN, end)
    assert re.search(r"Scoreboard after 1 round: you \(X\) \d win", end)
    assert moves >= 10
    child.sendline("no")
    finish(child)


def test_reversi_malformed_and_illegal_moves_are_explained_then_quit() -> None:
    child = spawn("reversi", "--opponent", "random", "--seed", "0", "--side", "x")
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
    child.expect("X moves first; who does is drawn each round.")
    child.expect(r"You are (X\. You go first\.|O\. random \(X\) goes first\.)")
    child.expect(PROMPT)
    child.sendeof()
    finish(child)
    child = spawn("reversi", "--opponent", "random", "--seed", "0", "--side", "x",
                  "--first", "you")
    child.expect(PROMPT)
    interrupt(child)
    finish(child, status=play.EXIT_INTERRUPTED, said_goodbye=True)


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
    child.expect(r"You are yellow\. random \(red\) goes first\.")
    child.expect(r"red \(random\) plays column \d\.")
    column = 0
    while child.expect([PROMPT, AGAIN]) == 0:
        column = column % 7 + 1  # the next column, also after "column n is not legal"
        child.sendline(str(column))
    assert re.search(r"((red|yellow) wins\. (You win!|You lose to random\.)|It's a tie\.)",
                     child.before)
    assert "black" not in child.before.lower()
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
    (["tictactoe", "--side", "o", "--first", "you"],
     "--side O and --first you disagree: X moves first in tictactoe; drop one of them"),
    (["four_in_a_row", "--side", "red", "--first", "computer"], "red moves first"),
])
def test_bad_arguments_name_the_fix(args: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        play.main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def last_move_mark(board: str) -> tuple[str, int]:
    """The line ending in ``LAST_ROW_MARK`` and the character column of ``LAST_COLUMN_MARK``
    on a text board."""
    lines = board.rstrip("\n").split("\n")
    marked = [line for line in lines if line.endswith(LAST_ROW_MARK)]
    assert len(marked) == 1 and lines[-1].lstrip().startswith(LAST_COLUMN_MARK)
    return marked[0], lines[-1].index(LAST_COLUMN_MARK)


def test_reversi_last_move_is_marked_where_its_algebraic_name_says() -> None:
    typed = iter(["34", "quit"])  # c4 typed as the seed game's column-then-row digits
    out: list[str] = []
    options = Options("reversi", "scripted", 0, "you", {}, False, 0)
    terminal = play_terminal.Terminal(options, Scripted([20]), np.random.default_rng(0),
                                      read=lambda prompt: next(typed), write=out.append)
    with pytest.raises(QuitGame):
        terminal.run()
    assert "O (scripted) plays e3." in out
    boards = [text for text in out if LAST_COLUMN_MARK in text]
    for board, (square, disc) in zip(boards, [("c4", "X"), ("e3", "O")], strict=True):
        ruler = board.split("\n")[0]
        row, column = last_move_mark(board)
        assert ruler == "  abcdefgh"  # the record's Style labels the columns
        assert row.startswith(f"{square[1]}|") and ruler[column] == square[0]
        assert row[column] == disc and board.rstrip().endswith(f"last move: {square}")


@pytest.mark.parametrize(("name", "config", "actions", "cell", "mark"), [
    ("four_in_a_row", {}, [3, 3], 4 * 7 + 3, "O"),  # the second token lands on the first
    ("tictactoe", {}, [4, 0], 0, "O"),
])
def test_last_move_marker_stands_on_the_cell_played(name: str, config: dict[str, int],
                                                     actions: list[int], cell: int,
                                                     mark: str) -> None:
    view = BoardView(game(name), config)
    round_ = Round(game(name), config, Seats(0))
    for action in actions:
        round_.play(action)
    board = view.text(round_.state, last=round_.last)
    row, column = last_move_mark(board)
    assert row[column] == mark
    unmarked = board.replace(f"{LAST_ROW_MARK}\n", "\n").rstrip("\n").rsplit("\n", 1)[0]
    assert view.text(round_.state) == unmarked + "\n"  # the marks are all that was added
    assert view.cell_position(round_.state, cell)[1] == column


@pytest.mark.parametrize(("position", "human_side", "line"), [
    ("X" * 40 + "O" * 24 + " X", 0, "X: 40  O: 24. X wins. You beat the computer by 16 points!"),
    ("X" * 40 + "O" * 24 + " X", 1,
     "X: 40  O: 24. X wins. You lost. The computer beat you by 16 points."),
    ("X" * 32 + "O" * 32 + " X", 0, "X: 32  O: 32. The game was a tie!"),
    ("X" * 33 + "O" * 31 + " X", 1,
     "X: 33  O: 31. X wins. You lost. The computer beat you by 2 points."),
])
def test_scored_games_end_with_the_reversegam_margin(position: str, human_side: int,
                                                       line: str) -> None:
    record = game("reversi")
    view = BoardView(record, {})
    round_ = Round(record, {}, Seats(human_side))
    view.seats = round_.seats
    round_.state = reversi.parse(position)
    assert result_text(view, round_, "random") == line
    assert margin_text(view, round_) in line


def test_pause_waits_for_enter_before_each_computer_move() -> None:
    child = spawn("tictactoe", "--opponent", "random", "--seed", "3", "--side", "o",
                  "--first", "computer", "--pause")
    child.expect(re.escape(PAUSE_PROMPT))
    assert "plays" not in child.before
    child.sendline("")
    child.expect(r"X \(random\) plays cell \d\.")
    child.expect(PROMPT)
    child.sendline(next(n for n in "123456789"
                        if f"cell {n}" not in child.before))
    child.expect(re.escape(PAUSE_PROMPT))
    child.sendline("quit")
    finish(child)


def test_help_documents_pause_and_the_opponent_specs() -> None:
    text = play.parser().format_help()
    for phrase in ("--pause", "Press Enter to see the computer's move.", "alphabeta:DEPTH",
                   "mcts:SIMULATIONS", "checkpoint path", "red or yellow"):
        assert phrase in " ".join(text.split()), phrase


def test_output_closed_early_ends_quietly() -> None:
    child = subprocess.Popen([sys.executable, "-m", "boardgym", "play", "reversi", "--opponent",
                              "random", "--side", "x", "--first", "you"], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().startswith("Welcome to Reversi!")
    child.stdout.close()  # like `boardgym play ... | head -1`
    _, err = child.communicate("hints\n" * 200 + "quit\n", timeout=TIMEOUT * 3)
    assert child.returncode == play.EXIT_BROKEN_PIPE and err == ""
