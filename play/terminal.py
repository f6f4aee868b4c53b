"""``boardgym play`` in a terminal: the person types moves, the board is shown after each.

``TerminalHuman`` is the person as an agent (``act(state, rng)`` reads a move); ``Terminal``
runs the match: the side question, rounds with the board after every move (the last one
marked), passes announced, the result (with the classic margin line in games with a disc
count), the scoreboard, and "Play again?". With ``Options.pause`` each computer move waits for
Enter, as in the classic Reversegam.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from boardgym import agents
from boardgym.play.flow import (
    HELP,
    HINTS,
    PAUSE_PROMPT,
    QUIT,
    BadMove,
    BoardView,
    Move,
    Options,
    QuitGame,
    Round,
    Scoreboard,
    Seats,
    first_player,
    result_text,
    side_index,
)

YES, NO = ("y", "yes"), ("n", "no")


class TerminalHuman:
    """An agent whose moves a person types at a terminal.

    Besides moves it understands ``hints`` (toggle legal moves on the board), ``help`` and
    ``quit`` (raises ``QuitGame``). A malformed or illegal move is explained and asked again.
    End of input raises ``EOFError`` and Ctrl-C ``KeyboardInterrupt``, for the caller to end on.

    Attributes:
        hints: the legal moves are shown on the board.
        last: the move that led to the position asked about (marked on a board shown), or None.
    """

    def __init__(self, view: BoardView, read: Callable[[str], str] = input,
                 write: Callable[[str], None] = print) -> None:
        self.view, self.read, self.write = view, read, write
        self.hints = False
        self.last: Move | None = None

    def act(self, state: Any, rng: np.random.Generator) -> int:
        """The move the person types (``rng`` is unused: people bring their own chance)."""
        prompt = f"Your move ({self.view.side_name(state.to_move)}): "
        while True:
            text = self.read(prompt).strip().lower()
            if text == QUIT:
                raise QuitGame
            if text == HINTS:
                self.hints = not self.hints
                self.write(f"Hints {'on' if self.hints else 'off'}.")
                self.write(self.view.text(state, self.hints, self.last).rstrip("\n"))
            elif text == HELP:
                self.write(self.view.help)
            else:
                try:
                    return self.view.parse(text, state)
                except BadMove as error:
                    self.write(str(error))


class Terminal:
    """The terminal match: questions, boards after every move, rounds and the scoreboard.

    Args:
        options: what ``boardgym play`` was asked for.
        agent: the computer player.
        rng: the match's random generator.
        read, write: how lines are read and written (``input`` and ``print``).
    """

    def __init__(self, options: Options, agent: agents.Agent, rng: np.random.Generator,
                 read: Callable[[str], str] = input,
                 write: Callable[[str], None] = print) -> None:
        self.options, self.agent, self.rng = options, agent, rng
        self.read, self.write = read, write
        self.record = options.record
        self.view = BoardView(self.record, options.config, options.numpad)
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
            round_ = self.play_round(Round(self.record, self.options.config, seats))
            scoreboard.record(round_)
            self.write(scoreboard.text(self.record.side_names[side], self.options.opponent))
            if not self.ask_yes_no("Play again? (yes or no): "):
                return

    def ask_side(self) -> int:
        """Ask which side the person plays until they name one."""
        first, second = self.record.side_names
        while True:
            side = side_index(self.record, self.read(f"Do you want to be {first} or {second}? "))
            if side is not None:
                return side
            self.write(f"Please type {first} or {second}.")

    def ask_yes_no(self, question: str) -> bool:
        """Ask ``question`` until the answer is yes or no."""
        while True:
            answer = self.read(question).strip().lower()
            if answer in YES + NO:
                return answer in YES
            self.write("Please type yes or no.")

    def play_round(self, round_: Round) -> Round:
        """Play one round to its end, showing every move; returns the finished round."""
        view = self.view
        you = view.side_name(round_.seats.human_player)
        starter = "You go" if round_.human_to_move else f"{self.options.opponent} goes"
        self.write(f"You are {you}. {starter} first.")
        if view.numbered:
            self.write("The cells are numbered like this:\n"
                       + view.text(round_.state, hints=True).rstrip())
        else:
            self.show(round_)
        while not round_.over:
            if round_.human_to_move:
                self.human.last = round_.last
                move = round_.play(self.human.act(round_.state, self.rng))
            else:
                self.pause()
                move = round_.play(self.agent.act(round_.state, self.rng))
                mover = view.side_name(move.before.to_move)
                self.write(f"{mover} ({self.options.opponent}) plays "
                           f"{view.move_name(move.action)}.")
            self.show(round_)
            if move.passed is not None:
                self.write(f"{view.side_name(move.passed)} has no legal move and passes.")
        self.write(result_text(view, round_, self.options.opponent))
        return round_

    def pause(self) -> None:
        """With ``Options.pause``, wait for Enter (``quit`` raises ``QuitGame``)."""
        if self.options.pause and self.read(f"{PAUSE_PROMPT} ").strip().lower() == QUIT:
            raise QuitGame

    def show(self, round_: Round) -> None:
        """The board (hints on the person's turn if asked, the last move marked) and the
        score line."""
        hints = self.human.hints and round_.human_to_move and not round_.over
        self.write(self.view.text(round_.state, hints, round_.last).rstrip("\n"))
        score = self.view.score_text(round_.state)
        if score:
            self.write(score)
