"""The web page's server: the page's files and a JSON API over ``sessions``.

Endpoints (every answer about a game is ``Session.payload``: ``session``, ``kind``, ``game``
and its ``view``, see ``boards``):

- ``GET /``: the page; ``GET /static/...``: its script and style sheet.
- ``GET /api/games``: every game's name, title, side names, board options with their limits,
  players (the server's list: labels, never paths) and default opponent.
- ``POST /api/new`` ``{"game", "opponent", "seat": "first|second|random", "options",
  "position"}``: a game against the computer (its opening moves played).
- ``POST /api/move`` ``{"session", "cell"}``: the person's click, then the computer's reply.
- ``POST /api/undo`` ``{"session"}``: the person's last move and the replies taken back.
- ``POST /api/watch`` ``{"game", "first", "second", "options", "position"}``: two players.
- ``POST /api/step`` ``{"session"}``: the next move of a watched game.
- ``POST /api/replay`` ``{"text"}``: a record file's games (``games``), the first shown.
- ``POST /api/show`` ``{"session", "game", "ply"}``: a position of a replayed game.
- ``POST /api/record`` ``{"session"}``: ``{"record": one JSON line, "filename"}``.

A bad request is answered 4xx with ``{"error": "one line"}`` (400 bad input, 404 an unknown
session or page, 409 a move after the end or nothing to undo, 413 a body over
``MAX_BODY_BYTES``, checked on ``Content-Length`` and on the bytes received); anything
unexpected is a 500 with one line, never a traceback. The computer's moves are computed in
the request (plain ``def`` endpoints: FastAPI's thread pool).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException

from boardgym.play.web.boards import board
from boardgym.play.web.catalog import Catalog, RequestError
from boardgym.play.web.sessions import (
    MAX_SESSIONS,
    PlaySession,
    ReplaySession,
    Sessions,
    WatchSession,
)
from boardgym.train.common.commands import one_line

MAX_BODY_BYTES = 4 << 20
"""The largest request body read (a record file of thousands of games fits)."""
STATIC = Path(__file__).parent / "static"
"""The page's files, installed with the package."""
BAD_REQUEST, PAYLOAD_TOO_LARGE, SERVER_ERROR = 400, 413, 500

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Body(BaseModel):
    """A request body: strict types (no ``"4"`` for 4), no unknown keys."""

    model_config = ConfigDict(strict=True, extra="forbid")


class NewGame(Body):
    game: str
    opponent: str
    seat: str = "random"
    options: dict[str, int] = {}
    position: str | None = None


class Watch(Body):
    game: str
    first: str
    second: str
    options: dict[str, int] = {}
    position: str | None = None


class SessionKey(Body):
    session: str


class Click(SessionKey):
    cell: int


class Show(SessionKey):
    game: int
    ply: int


class RecordText(Body):
    text: str


def error(message: str, status: int = BAD_REQUEST) -> JSONResponse:
    """The answer to a refused request: ``{"error": message}`` as one line."""
    return JSONResponse({"error": one_line(message)}, status_code=status)


def validation_text(exc: RequestValidationError) -> str:
    """The first problem of a body pydantic refused, in one line naming the field."""
    problems = exc.errors()
    if not problems:
        return "the request body is not what this endpoint takes"
    first = problems[0]
    if first.get("type") == "json_invalid":
        return "the request body is not valid JSON"
    where = ".".join(str(part) for part in first.get("loc", ()) if part != "body")
    what = first.get("msg", "invalid")
    return f"{where}: {what}" if where else f"the request body: {what}"


class BodyLimit:
    """ASGI middleware: a request whose body is over ``limit`` bytes is answered 413 (its
    ``Content-Length`` checked first, then the bytes as they arrive)."""

    def __init__(self, app: Any, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length", b"0")
        if not declared.isdigit():
            await error("the Content-Length header is not a number of bytes")(
                scope, receive, send)
            return
        if int(declared) > self.limit:
            await self.refuse(scope, receive, send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self.refuse(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        await self.app(scope, replayed(b"".join(chunks), receive), send)

    async def refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer 413."""
        await error(f"the request body is over {self.limit} bytes; send less (a record "
                    "file of fewer games)", PAYLOAD_TOO_LARGE)(scope, receive, send)


def replayed(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` whole, then what ``receive`` gives."""
    given = False

    async def again() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return again


def create_app(catalog: Catalog, seed: int | None = None,
               limit: int = MAX_SESSIONS) -> FastAPI:
    """The server of ``catalog``'s players; game ``k`` is seeded ``[seed, k]`` (``seed``
    None: fresh entropy); at most ``limit`` sessions are kept."""
    app = FastAPI(title="boardgym", docs_url=None, redoc_url=None, openapi_url=None)
    sessions = Sessions(seed, limit)
    handlers(app)
    app.add_middleware(BodyLimit)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/api/games")
    def games() -> dict[str, Any]:
        return {"games": catalog.listing(), "seats": ["first", "second", "random"]}

    @app.post("/api/new")
    def new(body: NewGame) -> dict[str, Any]:
        chosen = board(body.game, body.options, body.position)
        opponent = catalog.player(chosen.record.name, body.opponent)
        session = sessions.play(chosen, opponent, body.seat)
        return session.payload(session.opening)

    @app.post("/api/move")
    def move(body: Click) -> dict[str, Any]:
        session: PlaySession = sessions.get(body.session, PlaySession)
        with session.lock:
            return session.payload(session.move(body.cell))

    @app.post("/api/undo")
    def undo(body: SessionKey) -> dict[str, Any]:
        session: PlaySession = sessions.get(body.session, PlaySession)
        with session.lock:
            session.undo()
            return session.payload()

    @app.post("/api/watch")
    def watch(body: Watch) -> dict[str, Any]:
        chosen = board(body.game, body.options, body.position)
        name = chosen.record.name
        players = (catalog.player(name, body.first), catalog.player(name, body.second))
        return sessions.watch(chosen, players).payload()

    @app.post("/api/step")
    def step(body: SessionKey) -> dict[str, Any]:
        session: WatchSession = sessions.get(body.session, WatchSession)
        with session.lock:
            return session.payload(session.step())

    @app.post("/api/replay")
    def replay(body: RecordText) -> dict[str, Any]:
        return sessions.replay(body.text).payload()

    @app.post("/api/show")
    def show(body: Show) -> dict[str, Any]:
        session: ReplaySession = sessions.get(body.session, ReplaySession)
        with session.lock:
            session.show(body.game, body.ply)
            return session.payload()

    @app.post("/api/record")
    def record(body: SessionKey) -> dict[str, str]:
        session = sessions.get(body.session)
        with session.lock:
            game = session.record()
        return {"record": game.to_json(), "filename": f"boardgym-{game.game}.jsonl"}

    return app


def handlers(app: FastAPI) -> None:
    """Every refusal answered with ``{"error": "one line"}``."""

    @app.exception_handler(RequestError)
    def refused(request: Request, exc: RequestError) -> JSONResponse:
        return error(str(exc), exc.status)

    @app.exception_handler(RequestValidationError)
    def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error(validation_text(exc))

    @app.exception_handler(HTTPException)
    def http(request: Request, exc: HTTPException) -> JSONResponse:
        return error(str(exc.detail), exc.status_code)

    @app.exception_handler(Exception)
    def unexpected(request: Request, exc: Exception) -> JSONResponse:
        return error(f"the server could not answer: {type(exc).__name__}: {exc}", SERVER_ERROR)
