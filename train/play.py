"""Play a game yourself against any agent: ``boardgym play GAME --opponent SPEC [--gui]``.

In the terminal (the default) you choose your side, who goes first is drawn at random (or
``--first``), the board is shown after every move and rounds repeat with a running scoreboard
until you say no, type ``quit``, or end the input (Ctrl-D) or press Ctrl-C. With ``--gui`` the
game is a pygame window (the ``gui`` extra): click (or, in four-in-a-row, drag a token), ``H``
toggles hints, click after a game to play again, ``Esc`` or closing the window quits.
"""

from __future__ import annotations

import argparse
import math
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from boardgym.agents.human import (
    SIDES,
    BoardView,
    Layout,
    PygameHuman,
    QuitGame,
    Seats,
    TerminalHuman,
    TicTacToeView,
    is_quit,
    make_view,
)
from boardgym.envs import render
from boardgym.envs.games import GAMES, canonical_name
from boardgym.envs.turn_based import FourInARowEnv, ReversiEnv, TicTacToeEnv

from boardgym import agents

DEFAULT_OPPONENTS = {env.game: env.default_opponent
                     for env in (ReversiEnv, FourInARowEnv, TicTacToeEnv)}
FIRST_CHOICES = ("random", "you", "computer")
YES, NO = ("y", "yes"), ("n", "no")
GOODBYE = "Thanks for playing. Goodbye!"
EXIT_OK, EXIT_USAGE, EXIT_INTERRUPTED = 0, 2, 130
SIZE_OPTIONS = ("rows", "columns", "connect")


@dataclass(frozen=True)
class Options:
    """What ``boardgym play`` was asked for.

    Attributes:
        game: canonical game name.
        opponent: the agent spec of the computer player.
        side: 0 or 1 (index into ``SIDES[game]``), or None to ask.
        first: ``"random"``, ``"you"`` or ``"computer"``.
        config: keyword arguments of the rules' ``initial_state`` (board size).
        numpad: tic-tac-toe cells numbered like a keyboard's numpad.
        seed: seed of the random generator (first player draws, the agent's tie-breaks).
    """

    game: str
    opponent: str
    side: int | None
    first: str
    config: dict[str, int]
    numpad: bool
    seed: int | None


@dataclass(frozen=True)
class Move:
    """One move of a round: the position before and after, and who passed in between."""

    before: Any
    action: int
    after: Any
    passed: int | None
    """The rules player who had no legal move and passed, or None."""


class Round:
    """One game of a match: the position, and the seats of the person and the computer."""

    def __init__(self, rules: ModuleType, config: dict[str, int], seats: Seats) -> None:
        self.rules, self.seats = rules, seats
        self.state = rules.initial_state(**config)

    @property
    def over(self) -> bool:
        """True once the game has ended."""
        return bool(self.rules.is_terminal(self.state))

    @property
    def human_to_move(self) -> bool:
        """True when the person is to move."""
        return bool(self.state.to_move == self.seats.human_player)

    def play(self, action: int) -> Move:
        """Play ``action`` for the side to move (a legal one) and return what happened."""
        before = self.state
        self.state = self.rules.apply(before, action)
        repeat = self.state.to_move == before.to_move and not self.over
        return Move(before, action, self.state, 1 - before.to_move if repeat else None)

    def winner(self) -> int | None:
        """The rules player who won, or None for a tie (once over)."""
        outcome = int(self.rules.outcome(self.state))
        return None if outcome == 0 else (0 if outcome > 0 else 1)


def first_player(first: str, rng: np.random.Generator) -> int:
    """The person's rules player: 0 if they move first (``first`` may draw it at random)."""
    if first == "random":
        return int(rng.integers(2))
    return 0 if first == "you" else 1


@dataclass
class Scoreboard:
    """Wins, losses and ties of the person over the rounds of a match."""

    wins: int = 0
    losses: int = 0
    ties: int = 0

    def record(self, human_won: bool | None) -> None:
        """Count a round: True the person won, False the computer, None a tie."""
        if human_won is None:
            self.ties += 1
        elif human_won:
            self.wins += 1
        else:
            self.losses += 1

    def text(self, you: str, computer: str) -> str:
        """``Scoreboard after 3 rounds: you (X) 2 wins / 1 loss / 0 ties; ...``."""
        rounds = self.wins + self.losses + self.ties

        def tally(wins: int, losses: int) -> str:
            return (f"{wins} win{'s' * (wins != 1)} / {losses} loss{'es' * (losses != 1)} / "
                    f"{self.ties} tie{'s' * (self.ties != 1)}")

        return (f"Scoreboard after {rounds} round{'s' * (rounds != 1)}: you ({you}) "
                f"{tally(self.wins, self.losses)}; {computer} {tally(self.losses, self.wins)}")


def verdict(game: Round, opponent: str) -> str:
    """The end of a round for the person: ``You win!``, ``You lose to ...`` or a tie."""
    winner = game.winner()
    if winner is None:
        return "It's a tie."
    return "You win!" if winner == game.seats.human_player else f"You lose to {opponent}."


def result_text(view: BoardView, game: Round, opponent: str) -> str:
    """The end of a round in words: the score (Reversi), which side won, and the verdict."""
    winner = game.winner()
    score = view.score_text(game.state)
    parts = [score] if score else []
    if winner is not None:
        parts.append(f"{view.side_name(winner)} wins")
    return ". ".join([*parts, verdict(game, opponent)])


# --------------------------------------------------------------------------- terminal


class Terminal:
    """The terminal match: questions, boards after every move, rounds and the scoreboard."""

    def __init__(self, options: Options, agent: agents.Agent, rng: np.random.Generator,
                 read: Callable[[str], str] = input,
                 write: Callable[[str], None] = print) -> None:
        self.options, self.agent, self.rng = options, agent, rng
        self.read, self.write = read, write
        self.rules = GAMES[options.game]
        self.view = make_view(options.game, self.rules, options.numpad)
        self.human = TerminalHuman(self.view, read, write)

    def run(self) -> None:
        """Rounds until the person declines another (``QuitGame``, ``EOFError`` and
        ``KeyboardInterrupt`` pass through for the caller)."""
        self.write(f"Welcome to {self.view.title}! You play against {self.options.opponent}.")
        side = self.options.side if self.options.side is not None else self.ask_side()
        scoreboard = Scoreboard()
        while True:
            seats = Seats(side, first_player(self.options.first, self.rng))
            self.view.seats = seats
            game = self.play_round(Round(self.rules, self.options.config, seats))
            winner = game.winner()
            scoreboard.record(None if winner is None else winner == seats.human_player)
            self.write(scoreboard.text(SIDES[self.options.game][side], self.options.opponent))
            if not self.ask_yes_no("Play again? (yes or no): "):
                return

    def ask_side(self) -> int:
        """Ask which side the person plays until they name one."""
        names = SIDES[self.options.game]
        while True:
            text = self.read(f"Do you want to be {names[0]} or {names[1]}? ").strip()
            side = side_index(self.options.game, text)
            if side is not None:
                return side
            self.write(f"Please type {names[0]} or {names[1]}.")

    def ask_yes_no(self, question: str) -> bool:
        """Ask ``question`` until the answer is yes or no."""
        while True:
            answer = self.read(question).strip().lower()
            if answer in YES + NO:
                return answer in YES
            self.write("Please type yes or no.")

    def play_round(self, game: Round) -> Round:
        """Play one round to its end, showing every move; returns the finished round."""
        view, seats = self.view, game.seats
        you = view.side_name(seats.human_player)
        starter = "You go" if game.human_to_move else f"{self.options.opponent} goes"
        self.write(f"You are {you}. {starter} first.")
        if isinstance(view, TicTacToeView):
            self.write("The cells are numbered like this:\n" + view.text(game.state, True).rstrip())
        else:
            self.show(game)
        while not game.over:
            if game.human_to_move:
                move = game.play(self.human.act(game.state, self.rng))
            else:
                move = game.play(self.agent.act(game.state, self.rng))
                mover = view.side_name(move.before.to_move)
                self.write(f"{mover} ({self.options.opponent}) plays "
                           f"{view.move_name(move.action)}.")
            self.show(game)
            if move.passed is not None:
                self.write(f"{view.side_name(move.passed)} has no legal move and passes.")
        self.write(result_text(view, game, self.options.opponent))
        return game

    def show(self, game: Round) -> None:
        """The board (hints on the person's turn if asked) and the score line."""
        hints = self.human.hints and game.human_to_move and not game.over
        self.write(self.view.text(game.state, hints).rstrip("\n"))
        score = self.view.score_text(game.state)
        if score:
            self.write(score)


def side_index(game: str, text: str) -> int | None:
    """0 or 1 for a side name of ``game`` (any case, or its first letter), else None."""
    text = text.strip().lower()
    for index, name in enumerate(SIDES[game]):
        if text in (name.lower(), name[0].lower()):
            return index
    return None


# --------------------------------------------------------------------------- pygame

FPS = 30
FRAME_SECONDS = 1 / FPS
FLIP_SECONDS = 0.4
SLIDE_SECONDS = 0.35
GRAVITY = 40.0
"""Falling tokens' acceleration, in cells per second squared."""
NOTICE_SECONDS = 2.0
STATUS_HEIGHT = 56
STATUS_MARGIN = 8
FONT_SIZE = 24
BANNER_FONT_SIZE = 40
BACKGROUND = (32, 32, 40)
TEXT = (240, 240, 240)
HINT_COLOUR = (250, 210, 60)
WIN_LINE = (60, 200, 60)
WIN_LINE_WIDTH = 10
BANNER = (0, 0, 0, 180)


@dataclass
class Animation:
    """A move being shown on screen.

    Attributes:
        move: the move.
        human: True when the person made it.
        duration: seconds it takes.
        elapsed: seconds shown so far.
    """

    move: Move
    human: bool
    duration: float
    elapsed: float = 0.0

    @property
    def progress(self) -> float:
        """0 at the start, 1 at the end."""
        return min(1.0, self.elapsed / self.duration) if self.duration else 1.0


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


class Window:
    """The pygame game: a board, a status bar, banners; one ``frame`` per tick of ``run``.

    Tests drive it with ``frame(pygame.event.get())`` after posting events and look at
    ``game`` (the current ``Round``) and ``screen`` (the drawn surface).
    """

    def __init__(self, options: Options, agent: agents.Agent, rng: np.random.Generator) -> None:
        self.pygame = render.import_pygame()
        self.options, self.rng = options, rng
        self.rules = GAMES[options.game]
        self.view = make_view(options.game, self.rules, options.numpad)
        self.side = options.side or 0
        self.game = self.new_round()
        rows, cols = self.view.planes(self.game.state).shape[1:]
        cell = render.STYLES[options.game].cell
        dropping = options.game == "four_in_a_row"
        self.layout = Layout(cell, rows, cols, cell * dropping, cell * dropping, STATUS_HEIGHT)
        self.human = PygameHuman(self.view, self.layout, draggable=dropping)
        self.computer = Thinker(agent, rng)
        self.scoreboard = Scoreboard()
        self.hints = False
        self.animation: Animation | None = None
        self.notice = ("", 0.0)
        self.pygame.display.init()
        self.pygame.font.init()
        self.pygame.display.set_caption(f"boardgym: {options.game} against {options.opponent}")
        self.screen = self.pygame.display.set_mode(self.layout.size)
        self.font = self.pygame.font.Font(None, FONT_SIZE)
        self.banner_font = self.pygame.font.Font(None, BANNER_FONT_SIZE)

    def new_round(self) -> Round:
        """A fresh round with the first player drawn (or as ``--first`` says)."""
        seats = Seats(self.side, first_player(self.options.first, self.rng))
        self.view.seats = seats
        return Round(self.rules, self.options.config, seats)

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
        self.draw()
        return True

    def handle(self, event: Any) -> None:
        """One event: H toggles hints; a click after the end starts the next round; others go
        to the person while it is their turn."""
        pygame = self.pygame
        if event.type == pygame.KEYDOWN and event.key == pygame.K_h:
            self.hints = not self.hints
        elif self.game.over and self.animation is None:
            if event.type == pygame.MOUSEBUTTONUP:
                self.game = self.new_round()
        elif self.game.human_to_move and self.animation is None:
            self.human.handle(event, self.game.state)

    def advance(self) -> None:
        """Move the animation on, or get the next move from whoever is to move."""
        self.notice = (self.notice[0], self.notice[1] - FRAME_SECONDS)
        if self.animation is not None:
            self.animation.elapsed += FRAME_SECONDS
            if self.animation.progress >= 1:
                self.finish(self.animation.move)
            return
        if self.game.over:
            return
        human = self.game.human_to_move
        player = self.human if human else self.computer
        action = player.poll(self.game.state)
        if action is not None:
            move = self.game.play(action)
            self.animation = Animation(move, human, self.duration(move, human))

    def finish(self, move: Move) -> None:
        """A move has been shown: announce a pass, score the round if it ended."""
        self.animation = None
        if move.passed is not None:
            text = f"{self.view.side_name(move.passed)} has no legal move and passes"
            self.notice = (text, NOTICE_SECONDS)
        if self.game.over:
            winner = self.game.winner()
            self.scoreboard.record(None if winner is None
                                   else winner == self.game.seats.human_player)

    def duration(self, move: Move, human: bool) -> float:
        """Seconds the animation of ``move`` lasts."""
        if self.options.game == "reversi":
            return FLIP_SECONDS
        if self.options.game == "four_in_a_row":
            row = self.view.cell(move.before, move.action) // self.layout.cols
            fall = math.sqrt(2 * (row + 1) / GRAVITY)
            return fall + (0 if human else SLIDE_SECONDS)
        return 0.0

    # ---- drawing

    def draw(self) -> None:
        """Draw the whole window for the current frame on ``screen``."""
        self.screen.fill(BACKGROUND)
        self.draw_board()
        if self.options.game == "four_in_a_row":
            self.draw_piles()
        if self.animation is not None:
            self.draw_animation(self.animation)
        if self.game.over and self.animation is None:
            self.draw_win_line()
        self.draw_status()
        if self.game.over and self.animation is None:
            self.draw_banner()

    def draw_board(self) -> None:
        """The board: before the animated move during an animation, with hint dots if on."""
        animation = self.animation
        state = self.game.state
        planes = self.view.planes(state)
        if animation is not None and self.options.game == "reversi":
            planes = planes * (1 - self.flipped_cells(animation.move))[None]
        elif animation is not None:
            planes = self.view.planes(animation.move.before)
        frame = render.rgb(self.options.game, planes)
        if self.hints and self.game.human_to_move and animation is None and not self.game.over:
            cells = [self.view.cell(state, a) for a in self.view.legal(state)]
            frame = render.highlight(self.options.game, frame, cells, HINT_COLOUR)
        self.blit_array(frame, (0, self.layout.top))

    def flipped_cells(self, move: Move) -> np.ndarray:
        """A (rows, cols) 0/1 uint8 array of the discs ``move`` turned over."""
        before, after = self.view.planes(move.before), self.view.planes(move.after)
        turned = (before.sum(axis=0) > 0) & (before != after).any(axis=0)
        return turned.astype(np.uint8)

    def draw_animation(self, animation: Animation) -> None:
        """The moving pieces: turning discs, or a token sliding over and falling."""
        move, t = animation.move, animation.progress
        side = self.view.seats.side(move.before.to_move)
        if self.options.game == "reversi":
            squeeze = abs(math.cos(math.pi * t))
            colour = 1 - side if t < 0.5 else side
            for cell in np.flatnonzero(self.flipped_cells(move)):
                self.blit_piece(colour, self.layout.cell_corner(int(cell)), squeeze)
        elif self.options.game == "four_in_a_row":
            self.blit_piece(side, self.token_position(animation))

    def token_position(self, animation: Animation) -> tuple[int, int]:
        """Where a dropped token is: sliding from the computer's pile, then falling."""
        cell = self.layout.cell
        target = self.view.cell(animation.move.before, animation.move.action)
        x, y_end = self.layout.cell_corner(target)
        elapsed = animation.elapsed
        if not animation.human:
            start = self.layout.computer_pile[0]
            if elapsed < SLIDE_SECONDS:
                return int(start + (x - start) * elapsed / SLIDE_SECONDS), 0
            elapsed -= SLIDE_SECONDS
        y = 0.5 * GRAVITY * elapsed ** 2 * cell
        return x, int(min(y, y_end))

    def draw_piles(self) -> None:
        """Four-in-a-row's token piles right of the board, and the dragged token."""
        human_side = self.view.seats.human_side
        self.blit_piece(human_side, self.layout.human_pile)
        self.blit_piece(1 - human_side, self.layout.computer_pile)
        if self.human.dragging is not None:
            half = self.layout.cell // 2
            x, y = self.human.dragging
            self.blit_piece(human_side, (x - half, y - half))

    def draw_win_line(self) -> None:
        """Tic-tac-toe: a line through the winning three."""
        if self.options.game != "tictactoe" or self.game.winner() is None:
            return
        owned = self.view.planes(self.game.state).reshape(2, -1)
        for line in self.rules.LINES:
            for plane in owned:
                if all(plane[c] for c in line):
                    half = self.layout.cell // 2
                    ends = [self.layout.cell_corner(c) for c in (line[0], line[-1])]
                    points = [(x + half, y + half) for x, y in ends]
                    self.pygame.draw.line(self.screen, WIN_LINE, *points, WIN_LINE_WIDTH)

    def status_text(self) -> str:
        """The status bar's first line: a notice (a pass), whose turn it is, or the result."""
        if self.notice[1] > 0:
            return self.notice[0]
        if self.game.over:
            return result_text(self.view, self.game, self.options.opponent)
        if self.game.human_to_move:
            side = self.view.side_name(self.game.seats.human_player)
            return f"Your move ({side}), H: hints"
        return f"{self.options.opponent} is thinking..."

    def draw_status(self) -> None:
        """The status bar: the status line with Reversi's score, then the scoreboard."""
        board, width = self.scoreboard, self.layout.size[0]
        first, second = (self.layout.board_bottom + STATUS_HEIGHT * k // 4 for k in (1, 3))
        self.blit_text(self.font, self.status_text(), (STATUS_MARGIN, first), "midleft")
        self.blit_text(self.font, self.view.score_text(self.game.state),
                       (width - STATUS_MARGIN, second), "midright")
        tally = f"you {board.wins}, {self.options.opponent} {board.losses}, ties {board.ties}"
        self.blit_text(self.font, tally, (STATUS_MARGIN, second), "midleft")

    def draw_banner(self) -> None:
        """The result across the board, with how to play again."""
        text = verdict(self.game, self.options.opponent)
        width = self.layout.size[0]
        band = self.pygame.Surface((width, BANNER_FONT_SIZE * 2), self.pygame.SRCALPHA)
        band.fill(BANNER)
        centre_y = self.layout.board_bottom // 2
        self.screen.blit(band, (0, centre_y - BANNER_FONT_SIZE))
        self.blit_text(self.banner_font, text, (width // 2, centre_y - 10),
                       "center")
        self.blit_text(self.font, "click to play again, Esc to quit",
                       (width // 2, centre_y + 22), "center")

    def blit_text(self, font: Any, text: str, at: tuple[int, int], anchor: str) -> None:
        """Draw ``text`` with its ``anchor`` point (a pygame Rect attribute) at ``at``."""
        image = font.render(text, True, TEXT)
        self.screen.blit(image, image.get_rect(**{anchor: at}))

    def blit_array(self, frame: np.ndarray, at: tuple[int, int]) -> None:
        """Draw an RGB image ``(H, W, 3)`` with its top-left corner at ``at``."""
        self.screen.blit(self.pygame.surfarray.make_surface(frame.swapaxes(0, 1)), at)

    def blit_piece(self, side: int, at: tuple[int, int], squeeze: float = 1.0) -> None:
        """Draw side ``side``'s piece (0: the first side name) with its corner at ``at``."""
        image = render.piece(self.options.game, side, squeeze)
        surface = self.pygame.image.frombuffer(image.tobytes(), image.shape[1::-1], "RGBA")
        self.screen.blit(surface, at)


# --------------------------------------------------------------------------- command line


def parser() -> argparse.ArgumentParser:
    """The ``boardgym play`` argument parser."""
    p = argparse.ArgumentParser(prog="boardgym play", description=__doc__.split("\n\n")[0])
    p.add_argument("game", help="reversi, four_in_a_row (connect_four) or tictactoe")
    p.add_argument("--opponent", help="a built-in agent name or a checkpoint path "
                   "(default: the env's default opponent)")
    p.add_argument("--gui", action="store_true", help="play in a pygame window (gui extra)")
    p.add_argument("--side", help="your side: X or O (four-in-a-row: red or black); "
                   "asked if not given (the window uses the first)")
    p.add_argument("--first", choices=FIRST_CHOICES, default="random",
                   help="who moves first in each round (default: random)")
    p.add_argument("--numpad", action="store_true",
                   help="tic-tac-toe: number cells like a numpad (7 8 9 on the top row)")
    for name in SIZE_OPTIONS:
        p.add_argument(f"--{name}", type=int, help=f"four-in-a-row: board {name}")
    p.add_argument("--seed", type=int, help="seed for the first-player draws and the agent")
    return p


def options_from(args: argparse.Namespace) -> Options:
    """Checked ``Options`` from parsed arguments.

    Raises:
        ValueError: unknown game or side, a size option off four-in-a-row, a bad board size.
    """
    game = canonical_name(args.game)
    side = None
    if args.side is not None:
        side = side_index(game, args.side)
        if side is None:
            raise ValueError(f"--side for {game} must be {' or '.join(SIDES[game])}, "
                             f"got {args.side!r}")
    config = {name: getattr(args, name) for name in SIZE_OPTIONS
              if getattr(args, name) is not None}
    if config and game != "four_in_a_row":
        raise ValueError("--rows, --columns and --connect are four-in-a-row options")
    GAMES[game].initial_state(**config)  # validates the board size
    make_view(game, GAMES[game], args.numpad)  # validates --numpad
    return Options(game, args.opponent or DEFAULT_OPPONENTS[game], side, args.first, config,
                   args.numpad, args.seed)


def main(argv: list[str] | None = None) -> int:
    """Run ``boardgym play``; returns the exit code (0 also after quit, EOF; 130 on Ctrl-C)."""
    args = parser().parse_args(argv)
    try:
        options = options_from(args)
        agent = agents.make(options.game, options.opponent)
    except (ValueError, ImportError) as error:
        print(f"boardgym play: {error}", file=sys.stderr)
        return EXIT_USAGE
    rng = np.random.default_rng(options.seed)
    try:
        if args.gui:
            Window(options, agent, rng).run()
        else:
            Terminal(options, agent, rng).run()
    except ImportError as error:
        print(f"boardgym play: {error}", file=sys.stderr)
        return EXIT_USAGE
    except (QuitGame, EOFError):
        print(f"\n{GOODBYE}")
        return EXIT_OK
    except KeyboardInterrupt:
        print(f"\n{GOODBYE}")
        return EXIT_INTERRUPTED
    print(GOODBYE)
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
