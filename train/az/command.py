"""AlphaZero-style training by search-guided self-play (``boardgym az GAME``).

Each iteration plays ``games_per_iteration`` games of self-play at once, every move chosen by
a batched Gumbel AlphaZero search (``agents.az.search``; one network call per simulation step
for all the games), stores each position with the search's improved policy and the game's
final result for the side to move in a replay buffer, then takes ``train_steps`` gradient
steps on batches drawn from the buffer, each sample under a random board symmetry (8 for
Reversi and tic-tac-toe, the mirror for four-in-a-row). Loss: cross-entropy to the search
policy over the legal moves + mean squared error to the result.

Every ``eval_every`` iterations (and at the end) the raw policy (``az:0``) is judged on a
fixed subset of the game's labelled positions (``train.quality.agreement.judge``) and plays
the fixed ladder ``eval_opponents`` (``train.match.evaluate.play_match``, both seatings).

A run folder ``runs/{game}__az__{seed}__{time}/`` holds ``config.yaml``, ``command.txt``,
``checkpoints/last.zip`` (written atomically every iteration, with the optimizer, the replay
buffer, the RNG streams and the counters: everything ``--resume RUN_DIR`` needs),
``checkpoints/model.zip`` (the network alone: the file to ship and to play with
``az:N@PATH``), ``checkpoints/iter_N.zip`` at each evaluation, ``progress.csv`` (one row per
iteration), ``eval.json`` (``boardgym plot`` draws it) and ``tb/`` (TensorBoard).
``--minutes M`` stops after the iteration that passes M minutes of training (resumes
included) and evaluates once more.

Examples::

    boardgym az tictactoe --minutes 3
    boardgym az four_in_a_row --minutes 90 --seed 0
    boardgym az reversi --set simulations=16 --set torch_threads=2
    boardgym az --resume runs/four_in_a_row__az__0__20250101-120000 --minutes 120
    boardgym az reversi --workers 2                       # self-play in two processes
    boardgym az reversi --backend ray --workers 8 --address HOST:PORT   # on Ray actors

``--workers K`` splits each iteration's self-play games into K shards played at once by
local processes or Ray actors (``train.az.workers``); the learner stays in this process. The
games depend on the seed and K, not on the backend: ``--workers 1`` on Ray plays the local
run's games.
"""

from __future__ import annotations

from collections.abc import Sequence

from boardgym.train.az.config import AzConfig
from boardgym.train.az.run import AzRun, new_run, open_run, train
from boardgym.train.common.trainers import Trainer


def done(run: AzRun) -> str:
    """The last line: the file to play and the one to resume from."""
    return f"done: {run.model} (play it as az:0@{run.model}; resume from {run.last})"


TRAINER = Trainer("az", __doc__ or "", "iterations", "iterations to train for", "iteration",
                  AzConfig, new_run, open_run, train, done, workers=True,
                  device=True)


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym az``: returns the exit code."""
    return TRAINER.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
