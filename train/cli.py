"""The ``boardgym`` command: one subcommand per module (``python -m boardgym COMMAND``)."""

from __future__ import annotations

import sys
from importlib import import_module

COMMANDS = {
    "evaluate": ("boardgym.train.evaluate", "A against B in simulated matches"),
    "play": ("boardgym.train.play", "play a game yourself against any agent"),
    "train": ("boardgym.train.ppo", "train a MaskablePPO agent"),
    "selfplay": ("boardgym.train.selfplay", "train against a league of past snapshots"),
    "tournament": ("boardgym.train.tournament", "round robin with Elo ratings"),
    "plot": ("boardgym.train.plot", "learning curves of a run"),
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
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    if args[0] not in COMMANDS:
        print(f"boardgym: unknown command {args[0]!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = import_module(COMMANDS[args[0]][0])
    return int(module.main(args[1:]) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
