"""What the web page is shown of one position: the board picture, the cells it may click,
the move list; and the board a request asks for, checked.

Every answer about a game carries a ``view`` (``Shown.payload``): ``svg`` (the board drawn by
``envs.svg``, every cell a ``data-cell="K"`` rect), ``cells`` (the cells the person may click
-> the action each plays; empty when it is not their turn), ``status`` (one line: whose move,
or the result line), ``messages`` (what just happened: the computer's moves, the passes),
``moves`` (the move list, ``"X f5"``, with ``", O passes"`` after a move the other side
answers with a pass), ``current`` (how many of those moves the board shows) and ``over``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from boardgym.envs.games import game as game_record
from boardgym.envs.games.core import Game
from boardgym.envs.games.records import move_token
from boardgym.envs.svg import state_svg
from boardgym.play.flow import BoardView
from boardgym.play.web.catalog import RequestError

MAX_POSITION_CHARS = 4096
"""The longest start position text read (far above any board's text)."""


@dataclass(frozen=True)
class Board:
    """The game, board options and start position a request asked for."""

    record: Game
    config: dict[str, int]
    start: Any

    @property
    def start_text(self) -> str:
        """The start position in the game's position text."""
        return str(self.record.rules.to_text(self.start))


def board(game: Any, options: Any = None, position: Any = None) -> Board:
    """The board of ``game`` (a name) with board ``options`` from ``position`` (the game's
    position text, as ``reset(options={"position": ...})`` reads it; None: the start).

    Raises:
        RequestError: an unknown game, a bad option or value, a bad or finished position.
    """
    try:
        record = game_record(game)
        config = record.board_options(options or {})
        start = record.rules.initial_state(**config)
    except (ValueError, TypeError) as error:
        raise RequestError(str(error)) from None
    if position is not None:
        start = parsed_position(record, config, position)
    return Board(record, config, start)


def parsed_position(record: Game, config: Mapping[str, int], text: str) -> Any:
    """The position ``text`` of ``record``'s game on the board of ``config``, one a side
    can move in.

    Raises:
        RequestError: too long, not a position of the game, or a finished game.
    """
    if len(text) > MAX_POSITION_CHARS:
        raise RequestError(f"the position is longer than {MAX_POSITION_CHARS} characters")
    try:
        state = record.rules.parse(text, **config)
    except ValueError as error:
        raise RequestError(f"the position: {error}") from None
    if record.rules.is_terminal(state):
        raise RequestError("the position is a finished game; give one where a side can "
                           "still move")
    return state


def mover(states: Sequence[Any], ply: int) -> int:
    """The rules player who played move ``ply`` (from 0) of a game through ``states``."""
    return int(states[ply].to_move)


def passed(record: Game, before: Any, after: Any) -> bool:
    """Whether the side to move after a move had no legal move and passed (it moves again)."""
    return bool(after.to_move == before.to_move and not record.rules.is_terminal(after))


def pass_text(view: BoardView, player: int) -> str:
    """The announcement of rules ``player``'s pass, as the terminal says it."""
    return f"{view.side_name(player)} has no legal move and passes."


def move_list(view: BoardView, moves: Sequence[int], states: Sequence[Any]) -> list[str]:
    """Each move as ``"X f5"``, with ``", O passes"`` when the other side passed after it."""
    listed = []
    for ply, action in enumerate(moves):
        player = mover(states, ply)
        text = f"{view.side_name(player)} {move_token(view.record, action)}"
        if passed(view.record, states[ply], states[ply + 1]):
            text += f", {view.side_name(1 - player)} passes"
        listed.append(text)
    return listed


def clickable(view: BoardView, state: Any) -> dict[str, int]:
    """Every board cell a click on which plays a legal move -> that action (four-in-a-row:
    every cell of a column that is not full)."""
    legal = set(view.legal(state))
    cells = {}
    for cell in range(view.rows * view.cols):
        action = view.action_at(state, cell)
        if action in legal:
            cells[str(cell)] = int(action)
    return cells


@dataclass
class Shown:
    """One position as the page shows it (see the module docstring for ``payload``)."""

    view: BoardView
    states: Sequence[Any]
    moves: Sequence[int]
    current: int
    status: str
    person: bool = False
    """The person is to move here: hints drawn and the legal cells clickable."""
    messages: list[str] = field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        """The ``view`` object of an answer."""
        state = self.states[self.current]
        last = {} if self.current == 0 else {"last_action": self.moves[self.current - 1],
                                             "previous": self.states[self.current - 1]}
        svg = state_svg(self.view.record, state, hints=self.person, **last)
        return {"svg": str(svg), "cells": clickable(self.view, state) if self.person else {},
                "status": self.status, "messages": list(self.messages),
                "moves": move_list(self.view, self.moves, self.states),
                "current": self.current, "over": bool(self.view.rules.is_terminal(state))}
