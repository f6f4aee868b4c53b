"""The learner: start weights, the optimizer and its learning-rate schedule, the losses and
the training steps.

Loss: cross-entropy to the search policy over the legal moves + ``value_weight`` x the mean
squared error to the value targets; each sample under a random board symmetry (8 for
Reversi and tic-tac-toe, the mirror for four-in-a-row) with ``augment``.
"""

from __future__ import annotations

import numpy as np
import torch

from boardgym.agents.az.checkpoint import CheckpointError, load_network
from boardgym.agents.az.network import (
    Architecture,
    AzNet,
    Symmetries,
    computing_in,
    device_of,
    grow,
    unfit_fields,
)
from boardgym.agents.devices import resolve_device
from boardgym.train.az.config import AzConfig
from boardgym.train.az.replay import ReplayBuffer
from boardgym.train.az.selfplay import Samples
from boardgym.train.common.commands import one_line


def new_learner(config: AzConfig) -> tuple[AzNet, torch.optim.Optimizer]:
    """A fresh network (seeded by ``config.seed``, built on the CPU: the same weights on
    every device; the ``init_from`` weights, if any) on ``config.device`` and its optimizer
    (``optimizer_for``).

    Raises:
        ValueError: ``init_from`` is not an az checkpoint of this game, board and network,
            or a GPU torch does not see.
    """
    torch.manual_seed(config.seed)
    net = AzNet(config.architecture())
    if config.init_from is not None:
        net.load_state_dict(start_weights(config.init_from, config.game, net.arch))
    return net, optimizer_for(config, net)


def start_weights(path: str, game: str, arch: Architecture, hidden_key: str = "hidden"
                  ) -> dict[str, torch.Tensor]:
    """The weights of the az checkpoint at ``path``, checked to be for ``game`` on the
    board of ``arch``; a smaller network is grown to ``arch`` (``agents.az.network.grow``:
    it plays exactly as the file does until training moves it).

    Args:
        path, game, arch: the checkpoint, and the game and network it must fit.
        hidden_key: the config key that sets ``arch.hidden`` (for the message).

    Raises:
        ValueError: no such file, not an az checkpoint, another game or board, or a network
            larger than ``arch`` in any size.
    """
    try:
        start, _ = load_network(path, game)
    except (FileNotFoundError, CheckpointError) as error:
        raise ValueError(f"init_from: {one_line(str(error))}; give --set init_from=PATH (or "
                         "shipped:NAME) of an az checkpoint of this game, or --set "
                         "init_from=null") from error
    theirs, ours = start.arch.to_dict(), arch.to_dict()
    names = {**{key: key for key in ours}, "hidden": hidden_key}
    unfit = [f"{names[key]} {theirs[key]} (config: {ours[key]})"
             for key in unfit_fields(start.arch, arch)]
    if unfit:
        raise ValueError(f"init_from: {path} has {', '.join(unfit)}; set the config's "
                         f"channels, blocks and {hidden_key} to the checkpoint's or larger "
                         "(a smaller network grows), or --set init_from=null")
    return (start if start.arch == arch else grow(start, arch)).state_dict()


def optimizer_for(config: AzConfig, net: AzNet) -> torch.optim.Optimizer:
    """AdamW over ``net``'s weights, moved to ``config.device`` first (``resolve_device``),
    with ``config``'s learning rate and weight decay (its state lives with the weights).

    Raises:
        ValueError: a GPU torch does not see.
    """
    net.to(resolve_device(config.device))
    return torch.optim.AdamW(net.parameters(), lr=config.learning_rate,
                             weight_decay=config.weight_decay)


def learning_rate_at(config: AzConfig, iteration: int) -> float:
    """The learning rate of iteration ``iteration``'s training steps (counted from 0), by
    ``config.lr_schedule``."""
    if config.lr_schedule == "linear":
        return config.learning_rate * max(0.0, 1.0 - iteration / config.iterations)
    return config.learning_rate


def set_learning_rate(optimizer: torch.optim.Optimizer, rate: float) -> None:
    """Train every parameter group of ``optimizer`` at ``rate`` from now on."""
    for group in optimizer.param_groups:
        group["lr"] = rate


def losses(net: AzNet, batch: Samples, precision: str = "float32"
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """``(policy loss, value loss)`` of a batch: cross-entropy to the policy targets over
    the legal moves, squared error to the results, on the device of ``net``'s weights; its
    layers compute in ``precision`` (``agents.az.network.PRECISIONS``), the losses in
    float32."""
    device = device_of(net)
    with computing_in(precision, device):
        logits, values = net(torch.as_tensor(batch.observations, dtype=torch.float32,
                                             device=device))
    masks = torch.as_tensor(batch.masks, device=device)
    log_probs = torch.log_softmax(logits.masked_fill(~masks, torch.finfo(logits.dtype).min),
                                  dim=1)
    targets = torch.as_tensor(batch.policies, dtype=torch.float32, device=device)
    policy_loss = -(targets * log_probs.masked_fill(~masks, 0.0)).sum(dim=1).mean()
    value_loss = torch.mean((values - torch.as_tensor(batch.values, device=device)) ** 2)
    return policy_loss, value_loss


def augmented(batch: Samples, symmetries: Symmetries, rng: np.random.Generator) -> Samples:
    """``batch`` with each sample under a random board symmetry (values unchanged)."""
    which = rng.integers(len(symmetries), size=len(batch))
    observations, masks, policies = symmetries.apply(which, batch.observations, batch.masks,
                                                     batch.policies)
    return Samples(observations, masks, policies, batch.values)


def train_steps(config: AzConfig, net: AzNet, optimizer: torch.optim.Optimizer,
                buffer: ReplayBuffer, symmetries: Symmetries, rng: np.random.Generator
                ) -> dict[str, float]:
    """``config.train_steps`` gradient steps on random batches (each sample under a random
    symmetry with ``augment``); the mean losses."""
    net.train()
    totals = np.zeros(2)
    for _ in range(config.train_steps):
        batch = buffer.sample(rng, config.batch_size)
        if config.augment:
            batch = augmented(batch, symmetries, rng)
        policy_loss, value_loss = losses(net, batch, config.precision)
        optimizer.zero_grad()
        (policy_loss + config.value_weight * value_loss).backward()
        optimizer.step()
        totals += [policy_loss.item(), value_loss.item()]
    net.eval()
    policy, value = totals / config.train_steps
    return {"policy_loss": policy, "value_loss": value, "loss": policy + value}
