"""``boardgym play`` in a terminal: the person types moves, the board is shown after each.

``TerminalHuman`` is the person as an agent (``act(state, rng)`` reads a move); ``Terminal``
runs the match: rounds (the side that moves first is the game's first side name, ``X``; who
that is comes from ``--side``/``--first`` or a draw each round) with the board after every
move (the last one marked), passes announced, the result (with the classic margin line in
games with a disc count), the scoreboard, and "Play again?". With ``Options.pause`` each
computer move waits for Enter, as in the classic Reversegam.
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
    fixed_seat,
    keep_round,
    result_text,
    seat_text,
    seats_of,
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
        options = self.options
        self.write(f"Welcome to {self.view.title}! You play against {options.opponent}.")
        seat = fixed_seat(self.record, options.side, options.first)
        if seat is None:
            self.write(f"{self.record.side_names[0]} moves first; who does is drawn each round.")
        you = None if seat is None else self.record.side_names[seat]
        scoreboard = Scoreboard()
        while True:
            seats = seats_of(options, self.rng)
            self.view.seats = seats
            round_ = self.play_round(Round(self.record, options.config, seats))
            scoreboard.record(round_)
            keep_round(options, round_)
            self.write(scoreboard.text(you, options.opponent))
            if not self.ask_yes_no("Play again? (yes or no): "):
                return

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
        self.write(seat_text(view, round_.seats, self.options.opponent))
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
