"""Play a game yourself against any agent: ``boardgym play GAME --opponent SPEC [--gui]``.

The side that moves first is always the game's first side name (``X``, ``red``), as in the
position notation: ``--side`` or ``--first`` says which side you play, else who moves first
is drawn each round. In the terminal (the default) the board is shown after every move with
the last move marked, and rounds repeat with a running scoreboard until you say no, type
``quit``, or end the input (Ctrl-D) or press Ctrl-C; ``--pause`` waits for Enter before each
computer move. With ``--gui`` the game is a pygame window (the ``gui`` extra): click (or,
where stones drop, drag a token), ``H`` toggles hints, the last move is framed, click after
a game to play again, ``Esc`` or closing the window quits; with no display it says so in one
line (exit code 2).

The flow of a match is ``play.flow``; the terminal is ``play.terminal``, the window
``play.window`` (drawn by ``play.drawing``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from boardgym import agents
from boardgym.envs.games import GAMES
from boardgym.envs.games import game as game_record
from boardgym.envs.games.records import is_record_file
from boardgym.play.flow import (
    FIRST_CHOICES,
    BoardView,
    Options,
    QuitGame,
    fixed_seat,
    side_index,
)
from boardgym.play.terminal import Terminal
from boardgym.play.window import GameWindow, NoDisplayError
from boardgym.train.common.commands import (
    EXIT_USAGE,
    add_board_options,
    board_options,
    game_parser,
    one_line,
    seed_value,
)
from boardgym.train.match.evaluate import check_boards

GOODBYE = "Thanks for playing. Goodbye!"
EXIT_OK, EXIT_INTERRUPTED = 0, 130
EXIT_BROKEN_PIPE = 1
"""The output was closed early (``boardgym play ... | head``)."""


def parser() -> argparse.ArgumentParser:
    """The ``boardgym play`` argument parser."""
    p = game_parser("boardgym play", (__doc__ or "").split("\n\n")[0])
    p.add_argument("--opponent", help="the computer player: a built-in name (e.g. random, "
                   "corner_best, lookahead:2, perfect), a search player alphabeta:DEPTH or "
                   "mcts:SIMULATIONS, or a checkpoint path (default: the game's default "
                   "opponent)")
    p.add_argument("--gui", action="store_true", help="play in a pygame window (gui extra)")
    sides = "; ".join(f"{record.name}: {' or '.join(record.side_names)}"
                      for record in GAMES.values())
    p.add_argument("--side", help=f"your side ({sides}); the first named moves first, so "
                   "this also says who moves first (default: as --first says)")
    p.add_argument("--first", choices=FIRST_CHOICES, default="random",
                   help="who moves first in each round, and so plays the first side "
                   "(default: random, drawn each round)")
    p.add_argument("--numpad", action="store_true",
                   help="a 3x3 board (tic-tac-toe): number cells like a numpad (7 8 9 on top)")
    p.add_argument("--pause", action="store_true",
                   help="terminal: wait for Enter before each computer move (\"Press Enter to "
                   "see the computer's move.\", as the classic Reversegam); off by default so "
                   "scripted play does not block")
    add_board_options(p)
    p.add_argument("--seed", type=seed_value,
                   help="seed for the first-player draws and the agent")
    p.add_argument("--record", metavar="FILE",
                   help="add each finished game's record to FILE (JSON lines; created if "
                        "missing; boardgym replay FILE shows them)")
    return p


def check_record_file(path: str | None) -> None:
    """Check that ``--record`` names a file games can be added to: a record file, an empty
    file, or a new file in a folder that exists.

    Raises:
        ValueError: a folder, a missing folder, or a file that holds something else.
    """
    if path is None:
        return
    file = Path(path)
    if file.is_dir() or not file.absolute().parent.is_dir():
        raise ValueError(f"--record {file}: name a file in a folder that exists")
    if file.exists() and file.stat().st_size and not is_record_file(file):
        raise ValueError(f"--record {file} holds something other than game records; "
                         "choose another file")


def options_from(args: argparse.Namespace) -> Options:
    """Checked ``Options`` from parsed arguments.

    Raises:
        ValueError: unknown game or side, a board option the game lacks or a bad board size,
            ``--numpad`` off a 3x3 board.
    """
    record = game_record(args.game)
    side = None
    if args.side is not None:
        side = side_index(record, args.side)
        if side is None:
            raise ValueError(f"--side for {record.name} must be "
                             f"{' or '.join(record.side_names)}, got {args.side!r}")
    fixed_seat(record, side, args.first)  # validates --side against --first
    config = board_options(record, args)
    BoardView(record, config, args.numpad)  # validates --numpad
    check_record_file(args.record)
    return Options(record.name, args.opponent or record.default_opponent, side, args.first,
                   config, args.numpad, args.seed, args.pause, args.record)


def main(argv: list[str] | None = None) -> int:
    """Run ``boardgym play``; returns the exit code (0 also after quit, EOF; 130 on Ctrl-C;
    2 with one line on stderr for a bad argument or no display; 1, silently, when the output
    is closed early)."""
    p = parser()
    args = p.parse_args(argv)
    try:
        options = options_from(args)
        agent = agents.make(options.game, options.opponent)
        check_boards(options.game, [agent], options.config)
    except (ValueError, OSError, ImportError) as error:
        p.error(str(error))
    try:
        return play(options, agent, args.gui)
    except BrokenPipeError:
        # nobody reads on: send what is still buffered, and Python's flush at exit, nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def play(options: Options, agent: agents.Agent, gui: bool) -> int:
    """Play the match in the window (``gui``) or the terminal; returns the exit code and
    says goodbye (``BrokenPipeError`` passes through)."""
    rng = np.random.default_rng(options.seed)
    try:
        if gui:
            GameWindow(options, agent, rng).run()
        else:
            Terminal(options, agent, rng).run()
    except (ImportError, NoDisplayError) as error:
        print(f"boardgym play: error: {one_line(str(error))}", file=sys.stderr)
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
