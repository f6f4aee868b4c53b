"""The games the web page plays, watches and replays, kept in memory.

A session is one of: ``PlaySession`` (the person against a player of the list: the
computer's moves are played on the server as soon as it is its turn, so every answer leaves
the person to move or the game over), ``WatchSession`` (two players of the list, one move a
request) and ``ReplaySession`` (the games of a record file, any position of any game).
``Sessions`` holds them, at most ``MAX_SESSIONS`` (the least recently used dropped first).

Each game has its own random generator: ``numpy.random.default_rng([seed, k])`` for the
server's ``k``-th game when the server has a ``seed`` (so a seeded server replays a game
from the same moves, as ``evaluate``'s game ``k`` does), else fresh entropy. The draw of the
person's seat (``random``) comes first, as in ``boardgym play``.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from boardgym.envs.games.records import HUMAN, GameRecord, parse_records
from boardgym.play.flow import BoardView, Round, Seats, first_player, result_text, seat_text
from boardgym.play.replay import result_line
from boardgym.play.web.boards import Board, Shown, pass_text
from boardgym.play.web.catalog import Player, RequestError
from boardgym.train.match.evaluate import check_boards

MAX_SESSIONS = 256
"""The games kept at once; a new one beyond drops the least recently used."""
SEATS = {"first": 0, "second": 1}
"""The person's rules player of each seat choice (``random`` draws one)."""
SOURCE = "serve"
"""The ``source`` of the records the page downloads."""


class Session:
    """One game of the page; ``lock`` serialises its requests."""

    kind = ""

    def __init__(self, key: str, board: Board) -> None:
        self.key, self.board = key, board
        self.view = BoardView(board.record, board.config)
        self.lock = threading.Lock()

    def payload(self, messages: list[str] | None = None) -> dict[str, Any]:
        """The answer about this game: its ``session``, ``kind``, ``game`` and ``view``."""
        shown = self.shown()
        shown.messages += list(messages or [])
        return {"session": self.key, "kind": self.kind, "game": self.board.record.name,
                "view": shown.payload()}

    def shown(self) -> Shown:
        """What the page shows now."""
        raise NotImplementedError

    def record(self) -> GameRecord:
        """The game as a record (what the page downloads)."""
        raise NotImplementedError


class Game(Session):
    """A game from a board, its moves played through a ``Round`` (passes automatic)."""

    def __init__(self, key: str, board: Board, rng: np.random.Generator,
                 seed: tuple[int, int] | None, human_player: int = 0) -> None:
        super().__init__(key, board)
        self.rng, self.seed = rng, seed
        self.view.seats = Seats(human_player)
        self.round = self._round([])

    def _round(self, moves: list[int]) -> Round:
        """A round from the start position with ``moves`` played."""
        round_ = Round(self.board.record, self.board.config, self.view.seats)
        round_.state = self.board.start
        for action in moves:
            round_.play(action)
        return round_

    def states(self) -> list[Any]:
        """The start, then the position after each move."""
        states, state = [self.board.start], self.board.start
        for action in self.round.moves:
            state = self.board.record.rules.apply(state, action)
            states.append(state)
        return states

    def play(self, player: Player) -> list[str]:
        """``player``'s move for the side to move: what to announce (the move, a pass)."""
        action = player.agent.act(self.round.state, self.rng)
        side = self.view.side_name(int(self.round.state.to_move))
        move = self.round.play(action)
        said = [f"{player.label} ({side}) plays {self.view.move_name(action)}."]
        return said + ([] if move.passed is None else [pass_text(self.view, move.passed)])

    def _record(self, players: tuple[str, str]) -> GameRecord:
        seed, index = self.seed if self.seed is not None else (None, None)
        return GameRecord(self.board.record.name, tuple(self.round.moves), players,
                          self.board.config, self.board.start_text, seed=seed, index=index,
                          source=SOURCE)


class PlaySession(Game):
    """The person against ``opponent``, ``human_player`` their rules player (0: first)."""

    kind = "play"

    def __init__(self, key: str, board: Board, opponent: Player, rng: np.random.Generator,
                 seed: tuple[int, int] | None, human_player: int) -> None:
        super().__init__(key, board, rng, seed, human_player)
        self.opponent = opponent
        self.opening = self.reply()

    @property
    def seats(self) -> Seats:
        """Who sits where."""
        return self.view.seats

    def reply(self) -> list[str]:
        """The computer's moves until the person is to move or the game is over."""
        said: list[str] = []
        while not self.round.over and not self.round.human_to_move:
            said += self.play(self.opponent)
        return said

    def move(self, cell: Any) -> list[str]:
        """The person clicks board ``cell``: their move, then the computer's reply.

        Raises:
            RequestError: the game is over, no cell of the board, or no legal move there.
        """
        if self.round.over:
            raise RequestError("the game is over; start a new game", 409)
        cells = self.view.rows * self.view.cols
        if isinstance(cell, bool) or not isinstance(cell, int) or not 0 <= cell < cells:
            raise RequestError(f"cell must be a board cell from 0 to {cells - 1}, got {cell!r}")
        action = self.view.action_at(self.round.state, cell)
        if action not in self.view.legal(self.round.state):
            raise RequestError(f"{self.view.move_name(action)} is not a legal move here; "
                               "click one of the marked cells")
        move = self.round.play(action)
        said = [] if move.passed is None else [pass_text(self.view, move.passed)]
        return said + self.reply()

    def undo(self) -> None:
        """Take back the person's last move and the computer's replies after it.

        Raises:
            RequestError: the person has not moved yet.
        """
        states, human = self.states(), self.seats.human_player
        mine = [ply for ply in range(len(self.round.moves)) if states[ply].to_move == human]
        if not mine:
            raise RequestError("nothing to undo: you have not moved yet", 409)
        self.round = self._round(self.round.moves[:mine[-1]])
        self.seed = None  # the generator has moved on: the game no longer replays from it

    def status(self) -> str:
        """The result line once over, else whose move it is."""
        if self.round.over:
            return result_text(self.view, self.round, self.opponent.label)
        return f"Your move ({self.view.side_name(self.seats.human_player)})."

    def payload(self, messages: list[str] | None = None) -> dict[str, Any]:
        """``Session.payload`` with the seats line (``seat``) and ``can_undo``."""
        answer = super().payload(messages)
        human = self.seats.human_player
        answer["seat"] = seat_text(self.view, self.seats, self.opponent.label)
        answer["can_undo"] = any(s.to_move == human for s in self.states()[:-1])
        return answer

    def shown(self) -> Shown:
        """The position now, clickable when the person is to move."""
        return Shown(self.view, self.states(), self.round.moves, len(self.round.moves),
                     self.status(), person=not self.round.over)

    def record(self) -> GameRecord:
        """The game so far; the person is ``human``, the computer its spec."""
        players = [HUMAN, HUMAN]
        players[1 - self.seats.human_player] = self.opponent.spec
        return self._record((players[0], players[1]))


class WatchSession(Game):
    """``players[0]`` (first) against ``players[1]``, one move a ``step``."""

    kind = "watch"

    def __init__(self, key: str, board: Board, players: tuple[Player, Player],
                 rng: np.random.Generator, seed: tuple[int, int] | None) -> None:
        super().__init__(key, board, rng, seed)
        self.players = players

    def step(self) -> list[str]:
        """The side to move's player moves.

        Raises:
            RequestError: the game is over.
        """
        if self.round.over:
            raise RequestError("the game is over; start a new one to watch", 409)
        return self.play(self.players[int(self.round.state.to_move)])

    def shown(self) -> Shown:
        """The position now, with whose move it is or the result line."""
        if self.round.over:
            status = result_line(self.record(), self.view)
        else:
            player = int(self.round.state.to_move)
            status = f"{self.players[player].label} ({self.view.side_name(player)}) to move."
        return Shown(self.view, self.states(), self.round.moves, len(self.round.moves),
                     status)

    def record(self) -> GameRecord:
        """The game so far, the players by their specs."""
        return self._record((self.players[0].spec, self.players[1].spec))


class ReplaySession(Session):
    """The games of a record file; ``game`` and ``ply`` say which position is shown."""

    kind = "replay"

    def __init__(self, key: str, records: list[GameRecord]) -> None:
        self.records = records
        self.game, self.ply = 0, 0
        super().__init__(key, Board(records[0].record, dict(records[0].options),
                                    records[0].start_state()))

    def show(self, game: Any, ply: Any) -> None:
        """Show the position after ``ply`` moves of game ``game`` (from 0, in file order).

        Raises:
            RequestError: no such game or ply.
        """
        if isinstance(game, bool) or not isinstance(game, int) \
                or not 0 <= game < len(self.records):
            raise RequestError(f"game must be from 0 to {len(self.records) - 1}, got {game!r}")
        moves = len(self.records[game].moves)
        if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply <= moves:
            raise RequestError(f"ply must be from 0 to {moves} (the game's moves), got {ply!r}")
        if game != self.game:
            record = self.records[game]
            self.board = Board(record.record, dict(record.options), record.start_state())
            self.view = BoardView(record.record, dict(record.options))
        self.game, self.ply = game, ply

    def games(self) -> list[dict[str, Any]]:
        """Each game of the file: its number, game, players, result and move count."""
        return [{"number": k if r.index is None else r.index, "game": r.game,
                 "players": list(r.players), "result": r.result, "moves": len(r.moves)}
                for k, r in enumerate(self.records)]

    def shown(self) -> Shown:
        """The chosen position, the result line at the end of a game."""
        record = self.records[self.game]
        states = record.states()
        total = len(record.moves)
        status = result_line(record, self.view) if self.ply == total else \
            f"Move {self.ply} of {total}." if self.ply else f"The start ({total} moves)."
        messages = []
        if self.ply and states[self.ply].to_move == states[self.ply - 1].to_move \
                and not record.record.rules.is_terminal(states[self.ply]):
            messages.append(pass_text(self.view, 1 - int(states[self.ply].to_move)))
        return Shown(self.view, states, record.moves, self.ply, status, messages=messages)

    def payload(self, messages: list[str] | None = None) -> dict[str, Any]:
        """``Session.payload`` with the file's ``games`` and the one shown (``shown_game``)."""
        answer = super().payload(messages)
        answer["games"], answer["shown_game"] = self.games(), self.game
        return answer

    def record(self) -> GameRecord:
        """The game shown, as read."""
        return self.records[self.game]


class Sessions:
    """The sessions by key, at most ``limit``; ``seed`` seeds game ``k``'s generator with
    ``[seed, k]``."""

    def __init__(self, seed: int | None = None, limit: int = MAX_SESSIONS) -> None:
        self.seed, self.limit = seed, limit
        self.games = 0
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def _generator(self) -> tuple[np.random.Generator, tuple[int, int] | None]:
        """The next game's generator and its ``(seed, k)`` (None unseeded)."""
        with self._lock:
            number, self.games = self.games, self.games + 1
        if self.seed is None:
            return np.random.default_rng(), None
        return np.random.default_rng([self.seed, number]), (self.seed, number)

    def _add(self, session: Session) -> Session:
        with self._lock:
            self._sessions[session.key] = session
            while len(self._sessions) > self.limit:
                self._sessions.popitem(last=False)
        return session

    def get(self, key: Any, kind: type[Session] = Session) -> Any:
        """The session ``key`` of ``kind``, now the most recently used.

        Raises:
            RequestError: 404 for an unknown (or dropped) session, 400 for one of another kind.
        """
        with self._lock:
            session = self._sessions.get(key) if isinstance(key, str) else None
            if session is None:
                raise RequestError(f"unknown session {key!r}; start a new game (the server "
                                   f"keeps the last {self.limit} in memory)", 404)
            self._sessions.move_to_end(key)
        if not isinstance(session, kind):
            raise RequestError(f"session {key!r} is a {session.kind} session, not "
                               f"{kind.kind or 'a game'}")
        return session

    def play(self, board: Board, opponent: Player, seat: Any) -> PlaySession:
        """A new game of the person against ``opponent`` in ``seat`` (first, second,
        random).

        Raises:
            RequestError: an unknown seat, or a player that cannot play this board.
        """
        if seat not in (*SEATS, "random"):
            raise RequestError(f"seat must be first, second or random, got {seat!r}")
        _check_boards(board, [opponent])
        rng, seed = self._generator()
        human = first_player("random", rng) if seat == "random" else SEATS[seat]
        return self._add(PlaySession(secrets.token_hex(8), board, opponent, rng, seed,
                                     human))  # type: ignore[return-value]

    def watch(self, board: Board, players: tuple[Player, Player]) -> WatchSession:
        """A new game of ``players`` (first, second) to watch."""
        _check_boards(board, list(players))
        rng, seed = self._generator()
        return self._add(WatchSession(secrets.token_hex(8), board, players, rng,
                                      seed))  # type: ignore[return-value]

    def replay(self, text: Any) -> ReplaySession:
        """The games of a record file's ``text``.

        Raises:
            RequestError: no text, or a bad record (the records module's line).
        """
        if not isinstance(text, str):
            raise RequestError("text must be the record file's text")
        try:
            records = parse_records(text, "the record file")
        except ValueError as error:
            raise RequestError(str(error)) from None
        return self._add(ReplaySession(secrets.token_hex(8), records))  # type: ignore[return-value]


def _check_boards(board: Board, players: list[Player]) -> None:
    """Refuse a player (a checkpoint) that cannot play ``board``'s size."""
    try:
        check_boards(board.record.name, [p.agent for p in players], board.config)
    except ValueError as error:
        raise RequestError(str(error)) from None
