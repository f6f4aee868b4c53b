"""The ``boardgym`` command: the table of subcommands (``python -m boardgym COMMAND``).

Each subcommand is a module with ``main(argv) -> int``, imported only when it runs; what the
subcommands share (one-line errors, argument types, board options) is
``boardgym.train.common.commands``. Every subcommand runs under ``interruptible``: Ctrl-C
ends it with exit code 130 and one line on stderr (``boardgym COMMAND: interrupted``).
"""

from __future__ import annotations

import sys
from importlib import import_module

from boardgym.train.common.commands import EXIT_USAGE, interruptible

COMMANDS = {
    "evaluate": ("boardgym.train.match.evaluate", "A against B in simulated matches"),
    "tournament": ("boardgym.train.match.tournament", "round robin with Elo ratings"),
    "positions": ("boardgym.train.quality.positions",
                  "write labelled positions (exact move values)"),
    "quality": ("boardgym.train.quality.agreement",
                "agreement with exact solvers on labelled positions"),
    "play": ("boardgym.play.command", "play a game yourself against any agent"),
    "serve": ("boardgym.play.web.command", "a web page to play, watch and replay games"),
    "replay": ("boardgym.play.replay", "step through a game record in the terminal"),
    "train": ("boardgym.train.ppo.trainer", "train a MaskablePPO agent"),
    "selfplay": ("boardgym.train.ppo.selfplay", "train against a league of past snapshots"),
    "tune": ("boardgym.train.ppo.tune", "hyperparameter sweep with Ray Tune"),
    "az": ("boardgym.train.az.command",
           "train an AlphaZero-style agent by search-guided self-play"),
    "td": ("boardgym.train.td.command", "train an n-tuple network by TD self-play"),
    "export": ("boardgym.train.tools.export", "export a checkpoint's network to ONNX"),
    "plot": ("boardgym.train.tools.plot", "learning curves of a run"),
    "bench": ("boardgym.bench.throughput", "environment throughput, peers side by side"),
}


def usage() -> str:
    """The list of subcommands."""
    lines = ["usage: boardgym COMMAND [ARGS...]  (boardgym COMMAND --help for its options)", ""]
    lines += [f"  {name:<11} {text}" for name, (_, text) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run ``boardgym COMMAND ARGS...``; returns the exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        print(usage())
        return 0
    if not args or args[0] not in COMMANDS:
        given = f"unknown command {args[0]!r}" if args else "no command given"
        print(f"boardgym: error: {given}; choose one of {', '.join(COMMANDS)} "
              "(boardgym --help)", file=sys.stderr)
        return EXIT_USAGE
    name = args[0]
    return interruptible(f"boardgym {name}",
                         lambda rest: import_module(COMMANDS[name][0]).main(rest), args[1:])


if __name__ == "__main__":
    raise SystemExit(main())
