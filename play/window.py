"""``boardgym play --gui``: the game in a pygame window (the ``gui`` extra).

Click a cell, or a column in a game whose stones drop (four-in-a-row), where a token can also
be dragged from the pile right of the board. ``H`` toggles hints, a click after a game starts
the next, ``Esc`` or closing the window quits. Moves are animated from what they do on the
board: stones that turn over flip, dropped stones fall (the computer's slide over first); the
last move's cell is then framed. The computer thinks in a thread so that the window stays
responsive. Without a display (no ``DISPLAY`` or ``WAYLAND_DISPLAY`` on Linux, or SDL falling
back to a window nobody sees) the window refuses to open with ``NoDisplayError``, unless
``SDL_VIDEODRIVER`` asks for such a driver (``dummy`` in tests and for screenshots).

This module is the window's event loop, its players (the person's mouse, the computer's
thread) and its display checks; what a frame shows is drawn by ``play.drawing``.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from boardgym import agents
from boardgym.envs import render
from boardgym.play.drawing import STATUS_HEIGHT, Animation, Layout, Painter, animation_of
from boardgym.play.flow import (
    BoardView,
    Move,
    Options,
    QuitGame,
    Round,
    Scoreboard,
    keep_round,
    outcome_text,
    seats_of,
)

FPS = 30
FRAME_SECONDS = 1 / FPS
MOVE_FPS = 30
"""Frame rate cap while a ``PygameHuman`` waits for a move in ``act``."""
NOTICE_SECONDS = 2.0

NO_DISPLAY = "no display found to open a window on; play in the terminal instead: drop --gui"
HEADLESS_DRIVERS = ("offscreen", "dummy")
"""SDL video drivers that draw where nobody sees (SDL falls back to ``offscreen``)."""
DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY")
"""Environment variables naming the display on X11 and Wayland systems."""
DISPLAYLESS_PLATFORMS = ("darwin", "win32")
"""Platforms whose windows need none of ``DISPLAY_VARIABLES``."""


class NoDisplayError(RuntimeError):
    """pygame found no display to open a window on."""


def check_display_named(environ: Mapping[str, str], platform: str) -> None:
    """Refuse at once, before SDL probes (and prints), when an X11 / Wayland system names no
    display and ``SDL_VIDEODRIVER`` asks for no driver.

    Raises:
        NoDisplayError: no display named.
    """
    if environ.get("SDL_VIDEODRIVER") or platform.startswith(DISPLAYLESS_PLATFORMS):
        return
    if not any(environ.get(name) for name in DISPLAY_VARIABLES):
        raise NoDisplayError(NO_DISPLAY)


def check_driver(driver: str, requested: str | None) -> None:
    """Refuse a headless SDL ``driver`` that SDL fell back to (not the ``requested`` one).

    Raises:
        NoDisplayError: SDL opened no visible display.
    """
    if driver in HEADLESS_DRIVERS and driver != (requested or "").lower():
        raise NoDisplayError(NO_DISPLAY)


@contextmanager
def quiet_stderr() -> Iterator[None]:
    """Silence the process's standard error (file descriptor 2) for a while: SDL prints its
    failed display probes there, and a failure is reported as one ``NoDisplayError`` line."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def is_quit(event: Any) -> bool:
    """True for a window close or an Esc key press."""
    pygame = render.import_pygame()
    return bool(event.type == pygame.QUIT
                or (event.type == pygame.KEYDOWN and event.key == pygame.K_ESCAPE))


class PygameHuman:
    """An agent whose moves a person makes with the mouse in a pygame window.

    Click a cell (or, where stones drop, a column); where stones drop the token can also be
    dragged from the pile right of the board and released above a column. Feed it the
    window's events with ``handle``; ``poll`` returns the chosen legal action once.
    """

    def __init__(self, view: BoardView, layout: Layout) -> None:
        self.view, self.layout = view, layout
        self.dragging: tuple[int, int] | None = None
        """Pixel where a dragged token is, while the person drags one."""
        self._pressed: int | None = None
        self._chosen: int | None = None

    def handle(self, event: Any, state: Any) -> None:
        """Take one pygame event while the person is to move in ``state``."""
        pygame = render.import_pygame()
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            if self.view.drops and self._on_pile(event.pos):
                self.dragging = event.pos
            self._pressed = self.layout.cell_at(event.pos)
        elif event.type == pygame.MOUSEMOTION and self.dragging is not None:
            self.dragging = event.pos
        elif event.type == pygame.MOUSEBUTTONUP and event.button == 1:
            self._release(event.pos, state)

    def poll(self, state: Any) -> int | None:
        """The legal action the person chose in ``state``, once; None until they choose."""
        chosen, self._chosen = self._chosen, None
        return chosen if chosen in self.view.legal(state) else None

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """Wait for the person's move, keeping the window's events flowing.

        Raises:
            QuitGame: the window was closed or Esc pressed.
        """
        pygame = render.import_pygame()
        clock = pygame.time.Clock()
        while True:
            for event in pygame.event.get():
                if is_quit(event):
                    raise QuitGame
                self.handle(event, state)
            action = self.poll(state)
            if action is not None:
                return action
            clock.tick(MOVE_FPS)

    def _on_pile(self, pos: tuple[int, int]) -> bool:
        x, y = self.layout.human_pile
        return x <= pos[0] < x + self.layout.cell and y <= pos[1] < y + self.layout.cell

    def _release(self, pos: tuple[int, int], state: Any) -> None:
        """A drag released over the board, or a press and release on the same move, chooses."""
        dragged, self.dragging = self.dragging is not None, None
        pressed, self._pressed = self._pressed, None
        cell = self.layout.cell_at(pos, allow_strip=self.view.drops)
        if cell is None:
            return
        action = self.view.action_at(state, cell)
        if dragged or (pressed is not None and self.view.action_at(state, pressed) == action):
            self._chosen = action


class Thinker:
    """Runs a (possibly slow) agent in a thread so the window stays responsive."""

    def __init__(self, agent: agents.Agent, rng: np.random.Generator) -> None:
        self.agent, self.rng = agent, rng
        self._state: Any = None
        self._outcome: list[int | BaseException] = []
        self._thread: threading.Thread | None = None

    def poll(self, state: Any) -> int | None:
        """The agent's move in ``state`` once it has one; starts thinking on the first call.

        Raises:
            Exception: whatever the agent raised while thinking.
        """
        if self._state is not state:
            self._state, self._outcome = state, []
            self._thread = threading.Thread(target=self._think, args=(state, self._outcome),
                                            daemon=True)
            self._thread.start()
        if not self._outcome:
            return None
        if isinstance(self._outcome[0], BaseException):
            raise self._outcome[0]
        return self._outcome[0]

    def _think(self, state: Any, outcome: list[int | BaseException]) -> None:
        try:
            outcome.append(self.agent.act(state, self.rng))
        except Exception as error:  # handed to the window's thread by poll
            outcome.append(error)


class GameWindow:
    """The pygame game: a board, a status bar, banners; one ``frame`` per tick of ``run``.

    Tests drive it with ``frame(pygame.event.get())`` after posting events and look at
    ``round`` (the current ``Round``) and ``screen`` (the surface ``painter`` draws on).

    Raises:
        ImportError: pygame is not installed (the message says how to install it).
        NoDisplayError: no display to open the window on.
    """

    def __init__(self, options: Options, agent: agents.Agent, rng: np.random.Generator) -> None:
        self.pygame = render.import_pygame()
        self.options, self.rng = options, rng
        self.record = options.record
        self.view = BoardView(self.record, options.config, options.numpad)
        self.round = self.new_round()
        cell = self.record.style.cell
        margin = cell if self.view.drops else 0
        self.layout = Layout(cell, self.view.rows, self.view.cols, margin, margin,
                             STATUS_HEIGHT)
        self.human = PygameHuman(self.view, self.layout)
        self.computer = Thinker(agent, rng)
        self.scoreboard = Scoreboard()
        self.hints = False
        self.animation: Animation | None = None
        self.notice = ("", 0.0)
        self.screen = self._open()
        self.painter = Painter(self)

    def _open(self) -> Any:
        """Open the window; its surface.

        Raises:
            NoDisplayError: no display to show it on (``check_display_named``,
                ``check_driver``).
        """
        pygame = self.pygame
        check_display_named(os.environ, sys.platform)
        try:
            with quiet_stderr():
                pygame.display.init()
            check_driver(pygame.display.get_driver(), os.environ.get("SDL_VIDEODRIVER"))
            pygame.font.init()
            pygame.display.set_caption(f"boardgym: {self.record.title} against "
                                       f"{self.options.opponent}")
            return pygame.display.set_mode(self.layout.size)
        except (pygame.error, NoDisplayError) as error:
            pygame.display.quit()
            raise NoDisplayError(NO_DISPLAY if isinstance(error, NoDisplayError)
                                 else f"{NO_DISPLAY} ({error})") from error

    def new_round(self) -> Round:
        """A fresh round, the seats as ``--side``/``--first`` fix them or drawn
        (``flow.seats_of``: the first side name moves first)."""
        seats = seats_of(self.options, self.rng)
        self.view.seats = seats
        return Round(self.record, self.options.config, seats)

    def run(self) -> None:
        """Frames at a capped rate until the person quits."""
        clock = self.pygame.time.Clock()
        try:
            while self.frame(self.pygame.event.get()):
                self.pygame.display.flip()
                clock.tick(FPS)
        finally:
            self.pygame.display.quit()

    def frame(self, events: list[Any]) -> bool:
        """Handle ``events``, advance the game by one frame and draw it; False once quit."""
        for event in events:
            if is_quit(event):
                return False
            self.handle(event)
        self.advance()
        self.painter.draw()
        return True

    def handle(self, event: Any) -> None:
        """One event: H toggles hints; a click after the end starts the next round; others go
        to the person while it is their turn."""
        pygame = self.pygame
        if event.type == pygame.KEYDOWN and event.key == pygame.K_h:
            self.hints = not self.hints
        elif self.round.over and self.animation is None:
            if event.type == pygame.MOUSEBUTTONUP:
                self.round = self.new_round()
        elif self.round.human_to_move and self.animation is None:
            self.human.handle(event, self.round.state)

    def advance(self) -> None:
        """Move the animation on, or get the next move from whoever is to move."""
        self.notice = (self.notice[0], self.notice[1] - FRAME_SECONDS)
        if self.animation is not None:
            self.animation.elapsed += FRAME_SECONDS
            if self.animation.progress >= 1:
                self.finish(self.animation.move)
            return
        if self.round.over:
            return
        human = self.round.human_to_move
        player = self.human if human else self.computer
        action = player.poll(self.round.state)
        if action is not None:
            move = self.round.play(action)
            self.animation = animation_of(self.view, self.layout, move, human)

    def finish(self, move: Move) -> None:
        """A move has been shown: announce a pass, score the round if it ended."""
        self.animation = None
        if move.passed is not None:
            text = f"{self.view.side_name(move.passed)} has no legal move and passes"
            self.notice = (text, NOTICE_SECONDS)
        if self.round.over:
            self.scoreboard.record(self.round)
            keep_round(self.options, self.round)

    def status_text(self) -> str:
        """The status bar's first line: a notice (a pass), whose turn it is, or the result."""
        if self.notice[1] > 0:
            return self.notice[0]
        if self.round.over:
            return outcome_text(self.view, self.round, self.options.opponent)
        if self.round.human_to_move:
            side = self.view.side_name(self.round.seats.human_player)
            return f"Your move ({side}), H: hints"
        return f"{self.options.opponent} is thinking..."
