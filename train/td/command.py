"""TD learning of an n-tuple network by self-play (``boardgym td GAME``).

An n-tuple network values an afterstate (the position after a move, for the side that
made it) as ``tanh`` of a sum of lookup tables, each indexed by the contents of a small
group of cells and shared over the board's symmetries (``agents.ntuple``). Both sides play
the network's best afterstate (or, with chance ``epsilon``, a random move), and after each
move the previous afterstate's value moves toward the new one's, the last toward the
game's result: TD(lambda) with the traces of the last few afterstates, optionally with a
step size per weight (TCL). A lookup costs nanoseconds, so one CPU core plays thousands of
games a second.

Every ``eval_every`` games (and at the end) the network's player (``ntuple:0``) is judged on
the selection part of the game's labelled positions and plays the ladder
``eval_opponents`` and the noisy ladder (``eval_noisy_opponents`` with
``eval_random_moves``); ``best.zip`` keeps the best evaluation (``selection``).

A run folder ``runs/{game}__td__{seed}__{time}/`` holds ``config.yaml``, ``command.txt``,
``checkpoints/last.zip`` (what ``--resume RUN_DIR`` needs), ``checkpoints/model.zip`` (the
network: play it as ``ntuple:0@PATH`` or search it as ``ntuple:4@PATH``),
``checkpoints/best.zip`` with ``best.json``, ``progress.csv`` and ``eval.json`` (``boardgym
plot``). ``--minutes M`` stops after the chunk that passes M minutes of training.

Examples::

    boardgym td tictactoe --games 100000
    boardgym td reversi --minutes 60 --seed 0
    boardgym td four_in_a_row --set trace_decay=0.5 --set tcl=tcl_exp
    boardgym td --resume runs/reversi__td__0__20250101-120000 --minutes 90
"""

from __future__ import annotations

from collections.abc import Sequence

from boardgym.train.common.trainers import Trainer
from boardgym.train.td.config import TdConfig
from boardgym.train.td.evaluation import evaluation_positions
from boardgym.train.td.run import TdRun, new_run, open_run, train


def done(run: TdRun) -> str:
    """The last line: the file to play and the one to resume from."""
    return f"done: {run.model} (play it as ntuple:0@{run.model}; resume from {run.last})"


TRAINER = Trainer("td", __doc__ or "", "games", "self-play games to train for",
                  "chunk of games", TdConfig, new_run, open_run, train, done,
                  check=evaluation_positions)


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym td``: returns the exit code."""
    return TRAINER.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
