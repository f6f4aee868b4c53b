"""The replay buffer: the newest self-play samples, drawn from uniformly for training, saved
inside ``last.zip`` as plain tensors so that ``--resume`` goes on with the same buffer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from boardgym.agents.az.checkpoint import CheckpointError
from boardgym.agents.az.network import Architecture
from boardgym.train.az.selfplay import SAMPLE_FIELDS, Samples


class ReplayBuffer:
    """The newest ``capacity`` samples, in preallocated arrays (a ring).

    Args:
        arch: the board (observation shape and actions).
        capacity: samples kept.
    """

    def __init__(self, arch: Architecture, capacity: int) -> None:
        self.capacity = capacity
        self.observations = np.zeros((capacity, arch.planes, arch.rows, arch.cols), np.uint8)
        self.masks = np.zeros((capacity, arch.n_actions), bool)
        self.policies = np.zeros((capacity, arch.n_actions), np.float32)
        self.values = np.zeros(capacity, np.float32)
        self.size = 0
        self.next = 0

    def add(self, samples: Samples) -> None:
        """Store ``samples``, overwriting the oldest once full."""
        kept = min(len(samples), self.capacity)
        index = (self.next + np.arange(kept)) % self.capacity
        for name in SAMPLE_FIELDS:
            getattr(self, name)[index] = getattr(samples, name)[len(samples) - kept:]
        self.next = int((self.next + kept) % self.capacity)
        self.size = min(self.capacity, self.size + kept)

    def sample(self, rng: np.random.Generator, batch: int) -> Samples:
        """``batch`` samples drawn uniformly (with replacement)."""
        index = rng.integers(self.size, size=batch)
        return Samples(*(getattr(self, name)[index] for name in SAMPLE_FIELDS))

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The stored samples as plain tensors (``torch.load(weights_only=True)`` reads them)."""
        kept = slice(0, self.size)
        return {**{name: torch.from_numpy(getattr(self, name)[kept]) for name in SAMPLE_FIELDS},
                "next": torch.tensor(self.next)}

    def load_state_dict(self, state: dict[str, torch.Tensor], path: Path) -> None:
        """Restore what ``state_dict`` saved.

        Raises:
            CheckpointError: tensors that do not fit this buffer.
        """
        try:
            size = len(state["values"])
            for name in SAMPLE_FIELDS:
                getattr(self, name)[:size] = state[name].numpy()
            self.size, self.next = size, int(state["next"])
        except (KeyError, ValueError, TypeError, IndexError) as error:
            raise CheckpointError(f"{path}: its replay buffer does not fit the run's config "
                                  f"({error}); start a new run") from error
