"""The pace of an az network on this CPU: a forward pass over a batch, one gradient step.

``python -m boardgym.bench.network [CHECKPOINT] [--threads 2] [--repeats 7] [--precision
bfloat16]`` (default ``shipped:reversi_az``, float32). Most of a training run's
time on a CPU is these two operations (a Reversi PPO run with the 64-channel tower: about
90% in torch, by py-spy), so their times tell a slow machine from slow code: the model
cards quote them next to a run's steps per second. The forward pass is the network alone
over ``--forward`` boards, as self-play batches them; the gradient step is the az loss
(``train.az.losses``) and an AdamW step over ``--train`` samples. The boards are random
stone planes: the time of a convolution does not depend on the values it reads.
``--precision`` is the az config's key of that name: the number format the layers compute
in. Each figure is the median of ``--repeats`` runs after one warm-up run.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from boardgym.agents.az.checkpoint import load_network
from boardgym.agents.az.network import PRECISIONS, AzNet, computing_in
from boardgym.bench.throughput import machine
from boardgym.train.az.learn import losses
from boardgym.train.az.selfplay import Samples
from boardgym.train.common.commands import CommandParser, int_at_least

DEFAULT_CHECKPOINT = Path("shipped:reversi_az")
FORWARD_BATCH = 128
"""Boards per forward pass: the az self-play's games at once."""
TRAIN_BATCH = 256
"""Samples per gradient step: the az config's batch size."""
MS = 1000


def median_ms(run: Callable[[], object], repeats: int) -> float:
    """The median wall-clock milliseconds of ``repeats`` calls of ``run``, after one more."""
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return MS * statistics.median(times)


def random_samples(net: AzNet, count: int, rng: np.random.Generator) -> Samples:
    """``count`` training samples of ``net``'s shape: random stone planes, every move legal,
    uniform policy targets, every result a draw (0)."""
    arch = net.arch
    planes = rng.integers(0, 2, size=(count, arch.planes, arch.rows, arch.cols), dtype=np.uint8)
    masks = np.ones((count, arch.n_actions), dtype=bool)
    policies = np.full((count, arch.n_actions), 1 / arch.n_actions, dtype=np.float32)
    return Samples(planes, masks, policies, np.zeros(count, dtype=np.float32))


def measure(net: AzNet, forward: int, train: int, repeats: int, precision: str = "float32"
            ) -> dict[str, float]:
    """``{"forward_ms", "train_step_ms"}``: the medians of a forward pass over ``forward``
    boards (no gradients) and of a gradient step over ``train`` samples, the layers computing
    in ``precision``."""
    rng = np.random.default_rng(0)
    boards = torch.as_tensor(random_samples(net, forward, rng).observations,
                             dtype=torch.float32)
    batch = random_samples(net, train, rng)
    optimizer = torch.optim.AdamW(net.parameters())

    def step() -> None:
        policy_loss, value_loss = losses(net, batch, precision)
        optimizer.zero_grad()
        (policy_loss + value_loss).backward()
        optimizer.step()

    net.eval()
    with torch.no_grad(), computing_in(precision):
        forward_ms = median_ms(lambda: net(boards), repeats)
    net.train()
    return {"forward_ms": forward_ms, "train_step_ms": median_ms(step, repeats)}


def main(argv: list[str] | None = None) -> int:
    """Measure and print; returns the exit code."""
    parser = CommandParser(prog="python -m boardgym.bench.network",
                           description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path, nargs="?", default=DEFAULT_CHECKPOINT,
                        help=f"an az checkpoint (default {DEFAULT_CHECKPOINT})")
    positive = int_at_least(1)
    parser.add_argument("--threads", type=positive, default=2, help="torch threads (default 2)")
    parser.add_argument("--repeats", type=positive, default=7,
                        help="runs per figure; the median")
    parser.add_argument("--forward", type=positive, default=FORWARD_BATCH,
                        help="boards per pass")
    parser.add_argument("--train", type=positive, default=TRAIN_BATCH, help="samples per step")
    parser.add_argument("--precision", choices=sorted(PRECISIONS), default="float32",
                        help="the number format the layers compute in (default float32)")
    args = parser.parse_args(argv)
    try:
        net, _ = load_network(args.checkpoint)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    torch.set_num_threads(args.threads)
    figures = measure(net, args.forward, args.train, args.repeats, args.precision)
    arch = net.arch
    print(f"{machine()}; torch {torch.__version__}, {args.threads} threads, "
          f"{args.precision}")
    print(f"{args.checkpoint}: {arch.channels} channels, {arch.blocks} blocks, "
          f"{arch.rows}x{arch.cols} board")
    print(f"forward of {args.forward} boards: {figures['forward_ms']:.1f} ms; gradient step of "
          f"{args.train} samples: {figures['train_step_ms']:.1f} ms (medians of "
          f"{args.repeats})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
