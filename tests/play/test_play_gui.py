"""``boardgym play --gui`` headless: real pygame mouse and key events posted to the queue, then
asserts on the game state and on pixels of the saved frame."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
pygame = pytest.importorskip("pygame")

from boardgym import agents  # noqa: E402
from boardgym.envs import render  # noqa: E402
from boardgym.envs.games import game, reversi, tictactoe  # noqa: E402
from boardgym.envs.render import HINT_COLOUR, LAST_MOVE_COLOUR  # noqa: E402
from boardgym.play import command as play  # noqa: E402
from boardgym.play.drawing import WIN_LINE, winning_line  # noqa: E402
from boardgym.play.flow import QuitGame  # noqa: E402
from boardgym.play.window import (  # noqa: E402
    GameWindow,
    NoDisplayError,
    check_display_named,
    check_driver,
)
from tests.paths import ROOT  # noqa: E402

MAX_FRAMES = 600
Pixel = tuple[int, int]
BLACK_DISC, WHITE_DISC = game("reversi").style.colours
RED, YELLOW = game("four_in_a_row").style.colours
X_MARK = game("tictactoe").style.colours[0]


@pytest.fixture
def window() -> Iterator[Callable[..., GameWindow]]:
    """Builds a ``GameWindow`` from ``boardgym play`` arguments; closes the display after."""

    def build(*args: str, agent: agents.Agent | None = None) -> GameWindow:
        options = play.options_from(play.parser().parse_args([*args, "--seed", "0"]))
        opponent = agent or agents.make(options.game, options.opponent)
        return GameWindow(options, opponent, np.random.default_rng(options.seed))

    yield build
    pygame.display.quit()


def click(pos: Pixel) -> None:
    """Post a left click (press and release) at ``pos``."""
    for kind in (pygame.MOUSEBUTTONDOWN, pygame.MOUSEBUTTONUP):
        pygame.event.post(pygame.event.Event(kind, pos=pos, button=1))


def centre(win: GameWindow, cell: int, dx: float = 0.0) -> Pixel:
    """The centre pixel of board ``cell``, moved ``dx`` cell widths right."""
    x, y = win.layout.cell_corner(cell)
    half = win.layout.cell // 2
    return x + half + int(dx * win.layout.cell), y + half


def run_until(win: GameWindow, done: Callable[[], bool]) -> None:
    """Frames (posted events included) until ``done()``; fails after ``MAX_FRAMES``."""
    for _ in range(MAX_FRAMES):
        assert win.frame(pygame.event.get())
        if done():
            return
        time.sleep(0.001)  # lets the computer's thinking thread run
    pytest.fail("the window never got there")


def settled(win: GameWindow) -> Callable[[], bool]:
    """True when the person is to move (or the game is over) and nothing is moving."""
    return lambda: win.animation is None and (win.round.human_to_move or win.round.over)


def saved_pixel(win: GameWindow, pos: Pixel, tmp_path: Path) -> tuple[int, int, int]:
    """The colour at ``pos`` of the window's frame saved as a PNG."""
    path = tmp_path / "frame.png"
    pygame.image.save(win.screen, str(path))
    return tuple(pygame.image.load(str(path)).get_at(pos))[:3]  # type: ignore[return-value]


def test_reversi_click_places_a_disc_flips_animate_and_hints_show(window, tmp_path) -> None:
    win = window("reversi", "--opponent", "random", "--side", "x", "--first", "you")
    run_until(win, settled(win))
    d3 = 19
    assert saved_pixel(win, centre(win, d3), tmp_path) == game("reversi").style.background
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_h))
    win.frame(pygame.event.get())
    assert saved_pixel(win, centre(win, d3), tmp_path) == HINT_COLOUR
    click(centre(win, d3))
    run_until(win, lambda: win.animation is not None)
    d4 = 27  # flipped by d3: mid-animation the disc is seen edge-on
    run_until(win, lambda: win.animation is not None and win.animation.progress >= 0.5)
    edge = saved_pixel(win, centre(win, d4, dx=0.3), tmp_path)
    assert edge == game("reversi").style.background
    run_until(win, lambda: win.animation is None)
    assert win.view.planes(win.round.state)[0].ravel()[[d3, d4]].tolist() == [1, 1]
    assert saved_pixel(win, centre(win, d3), tmp_path) == BLACK_DISC
    assert saved_pixel(win, centre(win, d4, dx=0.3), tmp_path) == BLACK_DISC
    run_until(win, settled(win))  # the computer answers: five discs and one more
    assert sum(reversi.score(win.round.state)) == 6


def test_reversi_click_on_an_illegal_square_does_nothing(window) -> None:
    win = window("reversi", "--opponent", "random", "--side", "x")
    run_until(win, settled(win))
    click(centre(win, 0))
    for _ in range(3):
        win.frame(pygame.event.get())
    assert win.round.state == reversi.initial_state()
    assert win.round.human_to_move


def test_four_in_a_row_drag_from_pile_drops_with_gravity(window, tmp_path) -> None:
    win = window("four_in_a_row", "--opponent", "random", "--side", "red", "--first", "you")
    run_until(win, settled(win))
    pile = (win.layout.human_pile[0] + win.layout.cell // 2,
            win.layout.human_pile[1] + win.layout.cell // 2)
    above_column_3 = (centre(win, 2)[0], win.layout.top // 2)
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pile, button=1))
    pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=above_column_3, rel=(0, 0),
                                         buttons=(1, 0, 0)))
    win.frame(pygame.event.get())
    assert saved_pixel(win, above_column_3, tmp_path) == RED  # the dragged token
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=above_column_3, button=1))
    run_until(win, lambda: win.animation is not None)
    rows, cols = win.layout.rows, win.layout.cols
    landing = (rows - 1) * cols + 2
    win.frame([])
    assert saved_pixel(win, centre(win, landing), tmp_path) == render.HOLE  # still falling
    run_until(win, lambda: win.animation is None)
    assert saved_pixel(win, centre(win, landing), tmp_path) == RED
    assert win.view.planes(win.round.state)[0].ravel()[landing] == 1
    run_until(win, settled(win))  # the computer's token slides over and drops
    assert win.view.planes(win.round.state)[1].sum() == 1


def test_four_in_a_row_click_on_a_column_plays_there(window, tmp_path) -> None:
    win = window("connect_four", "--opponent", "random", "--side", "yellow")
    run_until(win, settled(win))  # red, the computer, moves first
    before = win.round.state
    click(centre(win, 4))  # top cell of column 5; the token falls as far as it can
    run_until(win, lambda: win.animation is None and not win.round.human_to_move)
    landing = win.view.cell(before, 4)
    assert landing // win.layout.cols >= win.layout.rows - 2  # on the bottom or one token
    assert win.view.planes(win.round.state)[1].ravel()[landing] == 1
    assert saved_pixel(win, centre(win, landing), tmp_path) == YELLOW


def test_tictactoe_game_to_the_end_line_banner_and_play_again(window, tmp_path) -> None:
    win = window("tictactoe", "--opponent", "random", "--side", "x", "--first", "you")
    for cell in (0, 1, 2, 3, 4, 5, 6, 7, 8):
        run_until(win, settled(win))
        if win.round.over:
            break
        if cell in win.view.legal(win.round.state):
            click(centre(win, cell))
            run_until(win, lambda: not win.round.human_to_move or win.round.over)
    run_until(win, settled(win))
    assert win.round.over
    winner = win.round.winner()
    if winner is not None:
        plane = win.view.planes(win.round.state)[win.view.seats.side(winner)].ravel()
        line = next(line for line in tictactoe.LINES if plane[list(line)].all())
        assert saved_pixel(win, centre(win, line[0]), tmp_path) == WIN_LINE
    click((5, 5))  # anywhere: the next round
    win.frame(pygame.event.get())
    assert win.round.state == tictactoe.initial_state()
    assert win.scoreboard.wins + win.scoreboard.losses + win.scoreboard.ties == 1


def test_tictactoe_x_mark_drawn_where_clicked(window, tmp_path) -> None:
    win = window("tictactoe", "--opponent", "random", "--side", "x", "--first", "you")
    run_until(win, settled(win))
    click(centre(win, 4))
    run_until(win, settled(win))
    assert saved_pixel(win, centre(win, 4), tmp_path) == X_MARK


class Slow:
    """A random tic-tac-toe player that thinks for a while."""

    SECONDS = 0.6

    def act(self, state: tictactoe.State, rng: np.random.Generator) -> int:
        time.sleep(self.SECONDS)
        return int(rng.choice(np.flatnonzero(tictactoe.legal_mask(state))))


def test_a_slow_agent_thinks_without_freezing_the_window(window) -> None:
    win = window("tictactoe", "--first", "computer", "--side", "o", agent=Slow())
    start = time.perf_counter()
    frames = 0
    while not win.round.human_to_move:
        assert win.frame(pygame.event.get())
        frames += 1
        assert time.perf_counter() - start < Slow.SECONDS * 5
    assert frames > 5  # many frames drawn while the agent was thinking
    assert "thinking" not in win.status_text()


def test_escape_and_window_close_quit(window) -> None:
    win = window("reversi", "--opponent", "random")
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_ESCAPE))
    assert not win.frame(pygame.event.get())
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    win.run()  # returns at once


def test_pygame_human_act_waits_for_a_legal_click(window) -> None:
    win = window("reversi", "--opponent", "random", "--side", "x", "--first", "you")
    state = win.round.state
    click(centre(win, 0))  # illegal: ignored
    click(centre(win, 37))  # f5
    assert win.human.act(state, np.random.default_rng(0)) == 37
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    with pytest.raises(QuitGame):
        win.human.act(state, np.random.default_rng(0))


class Broken:
    """An agent that fails while thinking."""

    def act(self, state: object, rng: np.random.Generator) -> int:
        raise RuntimeError("no move today")


def test_an_agent_error_surfaces_in_the_window_thread(window) -> None:
    win = window("tictactoe", "--first", "computer", agent=Broken())
    with pytest.raises(RuntimeError, match="no move today"):
        run_until(win, lambda: False)


def test_winning_line_finds_the_longest_run_of_stones() -> None:
    plane = np.zeros((6, 7), dtype=np.uint8)
    for k in range(4):  # a rising diagonal from the bottom left
        plane[5 - k, k] = 1
    plane[0, 6] = 1
    assert winning_line(plane) == (2 * 7 + 3, 5 * 7) or winning_line(plane) == (5 * 7, 2 * 7 + 3)
    assert winning_line(np.eye(2, dtype=np.uint8)) is None  # two in a row is no line


NO_DISPLAY_VARIABLES = ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY")


@pytest.mark.parametrize("display", [
    {"SDL_VIDEODRIVER": "no_such_driver"},
    {},  # nothing set: SDL would fall back to an invisible window and wait forever
    {"DISPLAY": ":987"},  # a display that is not there: SDL falls back likewise
])
def test_no_display_is_one_line_and_exit_code_2(display: dict[str, str]) -> None:
    env = {key: value for key, value in os.environ.items() if key not in NO_DISPLAY_VARIABLES}
    completed = subprocess.run([sys.executable, "-m", "boardgym", "play", "tictactoe", "--gui",
                                "--opponent", "random"], capture_output=True, text=True,
                               env={**env, **display}, cwd=ROOT, timeout=120)
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1
    assert "no display found" in completed.stderr and "drop --gui" in completed.stderr


def test_display_checks_allow_what_was_asked_for() -> None:
    check_display_named({}, "darwin")  # macOS and Windows windows need no DISPLAY
    check_display_named({"SDL_VIDEODRIVER": "dummy"}, "linux")
    check_display_named({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    with pytest.raises(NoDisplayError, match="drop --gui"):
        check_display_named({"DISPLAY": ""}, "linux")
    check_driver("dummy", "dummy")
    check_driver("x11", None)
    with pytest.raises(NoDisplayError, match="no display found"):
        check_driver("offscreen", None)


def edge_pixel(win: GameWindow, cell: int, tmp_path: Path) -> tuple[int, int, int]:
    """The saved frame's colour just inside the left edge of board ``cell``, halfway down."""
    x, y = win.layout.cell_corner(cell)
    return saved_pixel(win, (x + 1, y + win.layout.cell // 2), tmp_path)


def test_the_last_move_is_framed(window, tmp_path) -> None:
    win = window("reversi", "--opponent", "random", "--side", "x", "--first", "you")
    run_until(win, settled(win))
    d3 = 19
    assert edge_pixel(win, d3, tmp_path) != LAST_MOVE_COLOUR  # no move yet
    click(centre(win, d3))
    run_until(win, lambda: win.animation is not None)
    win.frame([])
    assert edge_pixel(win, d3, tmp_path) != LAST_MOVE_COLOUR  # not while the discs turn
    run_until(win, lambda: win.animation is None)
    assert edge_pixel(win, d3, tmp_path) == LAST_MOVE_COLOUR
    run_until(win, lambda: win.round.human_to_move and win.animation is None)
    last = win.round.last
    assert last is not None and last.action != d3
    assert edge_pixel(win, win.view.cell(last.before, last.action), tmp_path) \
        == LAST_MOVE_COLOUR
    assert edge_pixel(win, d3, tmp_path) != LAST_MOVE_COLOUR
    four = window("four_in_a_row", "--opponent", "random", "--side", "red", "--first", "you")
    run_until(four, settled(four))
    click(centre(four, 2))
    run_until(four, lambda: four.animation is None and not four.round.human_to_move)
    bottom = (four.layout.rows - 1) * four.layout.cols + 2  # framed where the token landed
    assert edge_pixel(four, bottom, tmp_path) == LAST_MOVE_COLOUR


def test_reversi_window_ends_with_the_margin(window) -> None:
    win = window("reversi", "--opponent", "random", "--side", "o")
    # the person plays O, the second player, in the window as in the .obf text
    win.round.state = reversi.parse("X" * 20 + "O" * 44 + " X")
    win.frame([])
    assert win.status_text() == "O wins. You beat the computer by 24 points!"


def test_play_x_moves_first_in_the_window(window, tmp_path) -> None:
    """The person on O: the computer opens with the first player's discs (X, black), and the
    status asks the person for O's move."""
    win = window("reversi", "--opponent", "random", "--side", "o")
    assert not win.round.human_to_move
    run_until(win, settled(win))
    last = win.round.last
    assert last is not None and last.before.to_move == 0  # the first player opened
    assert win.status_text() == "Your move (O), H: hints"
    assert reversi.score(win.round.state) == (4, 1)  # X, the computer, has four discs
    opened = win.view.cell(last.before, last.action)
    assert saved_pixel(win, centre(win, opened), tmp_path) == BLACK_DISC
