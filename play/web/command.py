"""Play, watch and replay games in a web page: ``boardgym serve [--port P] [--host H]
[--checkpoint PATH ...] [--seed S]``.

Starts a local web server (the ``web`` extra: FastAPI and uvicorn), bound to 127.0.0.1 by
default, prints its address and serves until Ctrl-C. The page plays a game against any
player of the server's list (each game's built-in AIs and the ``--checkpoint`` players,
under their file's stem), watches two of them play each other, replays a record file move
by move and downloads the game shown as a record. ``--seed S`` seeds the server's game
``k`` with ``[S, k]``, so the same clicks against a seeded player give the same game.
"""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from typing import Any

from boardgym.train.common.commands import (
    EXIT_USAGE,
    CommandParser,
    int_at_least,
    one_line,
    seed_value,
)

PROG = "boardgym serve"
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8000
MAX_PORT = 65535
INSTALL = "pip install 'boardgym[web]'"


def parser() -> argparse.ArgumentParser:
    """The ``boardgym serve`` argument parser."""
    p = CommandParser(prog=PROG, description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--port", type=int_at_least(0, MAX_PORT), default=DEFAULT_PORT,
                   help=f"the port to listen on (default: {DEFAULT_PORT}; 0: any free one)")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help=f"the address to listen on (default: {DEFAULT_HOST}, this machine "
                        "only; 0.0.0.0 lets other machines in)")
    p.add_argument("--checkpoint", action="append", default=[], metavar="PATH",
                   help="a checkpoint to offer as a player of the game it was trained for "
                        "(a path or shipped:NAME; repeat for more); the page lists it under "
                        "its file's stem")
    p.add_argument("--seed", type=seed_value,
                   help="seed game k's random numbers with [SEED, k] (default: fresh)")
    return p


def check_extra() -> None:
    """Raise ImportError naming the install line when FastAPI or uvicorn is missing."""
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as error:
        raise ImportError(f"the web page needs FastAPI and uvicorn ({error.name} is "
                          f"missing); install them with {INSTALL}") from None


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port``.

    Raises:
        ValueError: the port is taken, or the address cannot be listened on.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM)[0]
    except OSError as error:
        raise ValueError(f"--host {host}: {error.strerror or error}; give an address of "
                         "this machine, such as 127.0.0.1") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen()
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise ValueError(f"port {port} is in use; choose another with --port") from None
        raise ValueError(f"cannot listen on {host} port {port}: {error.strerror or error}; "
                         "choose another --host or --port") from None
    return sock


def address(sock: socket.socket) -> str:
    """The page's address on ``sock``."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def run(app: Any, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until Ctrl-C (uvicorn, quiet but for warnings)."""
    import uvicorn

    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(
        sockets=[sock])


def main(argv: list[str] | None = None) -> int:
    """Run ``boardgym serve``; returns 0 when the server stops (130 after Ctrl-C through
    the CLI's ``interruptible``), 2 with one line on stderr for a bad argument, a port in use
    or a missing ``web`` extra."""
    p = parser()
    args = p.parse_args(argv)
    try:
        check_extra()
    except ImportError as error:
        print(f"{PROG}: error: {one_line(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    from boardgym.play.web.catalog import catalog
    from boardgym.play.web.server import create_app

    try:
        players = catalog(args.checkpoint)
    except (ValueError, OSError) as error:
        p.error(str(error))
    try:
        sock = listening_socket(args.host, args.port)
    except ValueError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    with sock:
        print(f"{PROG}: {address(sock)} (Ctrl-C stops)", flush=True)
        run(create_app(players, args.seed), sock)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
