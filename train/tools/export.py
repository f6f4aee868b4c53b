"""Export a checkpoint's network to ONNX (``boardgym export CHECKPOINT OUT.onnx``).

Takes az checkpoints (``boardgym az``: outputs ``logits`` and ``value``) and the PPO
checkpoints of ``boardgym train`` / ``selfplay`` (``checkpoints/*.zip``: outputs ``logits``
and ``value``). The input ``observations`` is a float32 batch ``(B, planes, rows, cols)`` of
mover's-view planes (``rules.observation``), the batch size dynamic. ``logits`` are over the
whole action space: mask the illegal actions before taking the best one.

After writing, the command checks the file (``--check N``, default 1000; 0 skips it):
onnxruntime and torch must pick the same best legal move on N positions of seeded random
games of the checkpoint's game and board; a mismatch exits with code 1.

The file is written atomically and marked in its metadata (``MARK``: the checkpoint it came
from); a file already at OUT is overwritten only when it bears that mark (an earlier
export), otherwise ``--force`` is needed.

Needs the ``onnx`` and ``onnxruntime`` packages (``pip install boardgym[export]``).

Examples::

    boardgym export checkpoints/four_in_a_row.zip four_in_a_row.onnx
    boardgym export runs/tictactoe__az__0__20250101-120000/checkpoints/model.zip ttt.onnx
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from boardgym.agents.az.checkpoint import is_az_checkpoint
from boardgym.agents.az.checkpoint import load_network as load_az_network
from boardgym.agents.checkpoint import board_kwargs
from boardgym.agents.ppo.policies import action_logits, members_of
from boardgym.agents.ppo.policy import load_network as load_policy_network
from boardgym.envs.games import game as game_record
from boardgym.files import atomic_path
from boardgym.train.common.commands import (
    CommandParser,
    add_force_option,
    check_output,
    int_at_least,
)

INPUT = "observations"
OUTPUTS = ("logits", "value")
OPSET = 17
DEFAULT_CHECKS = 1000
CHECK_SEED = 0
EXPORT_BATCH = 2
"""The example batch traced for the export (the batch axis stays dynamic)."""
EXIT_MISMATCH = 1
MARK = "boardgym_export"
"""The ONNX metadata key of a file this command wrote; its value is the checkpoint's path."""


class PolicyHeads(nn.Module):
    """A PPO policy as ``observations -> (logits, value)`` (what the export traces)."""

    def __init__(self, policy: Any) -> None:
        super().__init__()
        self.policy = policy

    def forward(self, observations: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The policy's action logits and value of a batch of boards."""
        return (action_logits(self.policy, observations),
                self.policy.predict_values(observations).squeeze(1))


def load_heads(path: Path) -> tuple[nn.Module, str, dict[str, Any]]:
    """The network of an az or PPO checkpoint as ``observations -> (logits, value)``, with
    its game and board options.

    Raises:
        FileNotFoundError, CheckpointError: no such file or not a boardgym checkpoint.
        ValueError: a network with input planes computed outside torch (``mobility``),
            which ONNX cannot hold.
    """
    if is_az_checkpoint(path):
        net, record = load_az_network(path)
        return net.eval(), record["game"], record["env_kwargs"]
    policy, metadata = load_policy_network(path)
    if not all(getattr(member.features_extractor, "traceable", True)
               for member in members_of(policy)):
        raise ValueError(f"{path}: its network reads Reversi's mobility planes, which the "
                         "rules core computes outside torch and ONNX cannot hold; export a "
                         "network trained with mobility false")
    return PolicyHeads(policy).eval(), metadata["game"], board_kwargs(metadata["env_kwargs"])


def random_positions(game: str, options: dict[str, Any], count: int, seed: int = CHECK_SEED
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``(observations, legal masks)`` of ``count`` unfinished positions of seeded random
    games of ``game`` on the board of ``options``."""
    rules = game_record(game).rules
    rng = np.random.default_rng(seed)
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    state = rules.initial_state(**options)
    while len(masks) < count:
        if rules.is_terminal(state):
            state = rules.initial_state(**options)
        mask = rules.legal_mask(state)
        observations.append(rules.observation(state))
        masks.append(mask)
        state = rules.apply(state, int(rng.choice(np.flatnonzero(mask))))
    return np.stack(observations).astype(np.float32), np.stack(masks)


def export(heads: nn.Module, sample: np.ndarray, out: Path, source: str = "") -> None:
    """Write ``heads`` as ONNX to ``out`` (TorchScript-based exporter, a dynamic batch),
    atomically, with the metadata ``MARK = source``."""
    import onnx

    example = torch.as_tensor(sample[:EXPORT_BATCH])
    with atomic_path(out) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on Python values in the graph
        torch.onnx.export(heads, (example,), str(tmp), input_names=[INPUT],
                          output_names=list(OUTPUTS), opset_version=OPSET, dynamo=False,
                          dynamic_axes={name: {0: "batch"} for name in (INPUT, *OUTPUTS)})
        model = onnx.load(str(tmp))
        onnx.helper.set_model_props(model, {MARK: source})
        onnx.save(model, str(tmp))


def is_export(path: Path) -> bool:
    """True when ``path`` is an ONNX file this command wrote (its metadata has ``MARK``)."""
    import onnx

    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception:  # onnx raises many kinds on a file that is not ONNX
        return False
    return any(prop.key == MARK for prop in model.metadata_props)


def best_moves(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The most likely legal action per row."""
    return np.where(masks, logits, -np.inf).argmax(axis=1)


def check(heads: nn.Module, out: Path, observations: np.ndarray, masks: np.ndarray) -> int:
    """How many of the positions get a different best legal move from onnxruntime than
    from torch."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    onnx_logits = session.run([OUTPUTS[0]], {INPUT: observations})[0]
    with torch.inference_mode():
        torch_logits = heads(torch.as_tensor(observations))[0].numpy()
    return int((best_moves(onnx_logits, masks) != best_moves(torch_logits, masks)).sum())


def build_parser() -> argparse.ArgumentParser:
    """The ``boardgym export`` argument parser."""
    parser = CommandParser(prog="boardgym export", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", type=Path, help="an az or PPO checkpoint (.zip)")
    parser.add_argument("out", type=Path,
                        help="the ONNX file to write (a file there is overwritten only when "
                             "it is an earlier export, else --force)")
    add_force_option(parser, "OUT")
    parser.add_argument("--check", type=int_at_least(0), default=DEFAULT_CHECKS, metavar="N",
                        help=f"positions on which onnxruntime must pick torch's best move "
                             f"(default {DEFAULT_CHECKS}; 0: no check)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``boardgym export``: returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        import onnx  # noqa: F401  (torch.onnx needs it)
        import onnxruntime  # noqa: F401
    except ImportError:
        parser.error("export needs onnx and onnxruntime: pip install 'boardgym[export]'")
    try:
        check_output(args.out, "OUT", "an ONNX export", is_export, args.force)
        heads, game, options = load_heads(args.checkpoint)
        observations, masks = random_positions(game, options, max(args.check, EXPORT_BATCH))
        export(heads, observations, args.out, str(args.checkpoint))
    except torch.onnx.errors.OnnxExporterError as error:
        parser.error(f"cannot export {args.checkpoint} to ONNX ({error})")
    except (ValueError, OSError) as error:
        parser.error(str(error))
    print(f"{args.out}: {game} network, input {INPUT} {list(observations.shape[1:])}, "
          f"outputs {', '.join(OUTPUTS)}")
    if args.check:
        wrong = check(heads, args.out, observations[:args.check], masks[:args.check])
        print(f"check: onnxruntime picks torch's best move in {args.check - wrong} of "
              f"{args.check} positions")
        if wrong:
            return EXIT_MISMATCH
    return 0


if __name__ == "__main__":
    from boardgym.train.cli import main as run_command

    raise SystemExit(run_command(["export", *sys.argv[1:]]))
