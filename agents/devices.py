"""Where torch computes: the ``device`` of the trainers and of the network players.

A device is written ``auto``, ``cpu``, ``cuda`` or ``cuda:N`` (N a GPU index from 0).
``auto`` is a CUDA GPU when torch sees one (``torch.cuda.is_available()``), else the CPU.
``check_device`` checks the form alone (no torch: configs check it at construction);
``resolve_device`` also checks that torch sees the GPU asked for and returns the device to
use, never ``auto``. Both raise a one-line ``ValueError`` naming the fix. torch is imported
only to resolve ``auto`` and the CUDA forms.
"""

from __future__ import annotations

import re

DEFAULT_DEVICE = "auto"
"""The trainers' default: a GPU when torch sees one, else the CPU."""
CPU = "cpu"
"""The players' default (a player moves one position at a time: the CPU is fast enough)."""
DEVICE_FORMS = "auto, cpu, cuda or cuda:N (N a GPU index from 0)"
"""The forms a device is written in, as the messages name them."""
DEVICE_PATTERN = re.compile(r"auto|cpu|cuda(:(0|[1-9][0-9]*))?")
"""A well-formed device."""


def check_device(text: object) -> str:
    """``text`` if it is a well-formed device (``DEVICE_FORMS``); imports nothing.

    Raises:
        ValueError: any other value: ``device must be auto, cpu, cuda or cuda:N ..., got
            'gpu'; fix it with --device auto (config key device)``.
    """
    if not isinstance(text, str) or DEVICE_PATTERN.fullmatch(text) is None:
        raise ValueError(f"device must be {DEVICE_FORMS}, got {text!r}; fix it with --device "
                         "auto (config key device: --set device=auto)")
    return text


def resolve_device(text: object) -> str:
    """The device ``text`` asks for, checked against the GPUs torch sees: ``auto`` becomes
    ``cuda`` when torch sees a CUDA GPU, else ``cpu``; ``cpu``, ``cuda`` and ``cuda:N`` stay
    as they are.

    Raises:
        ValueError: a malformed device (``check_device``), or ``cuda`` / ``cuda:N`` where
            torch sees no CUDA GPU or fewer than N + 1 of them (the message names
            ``--device cpu`` and ``auto``).
    """
    device = check_device(text)
    if device == CPU:
        return CPU
    import torch  # only the GPU forms need it

    available = torch.cuda.is_available()
    if device == DEFAULT_DEVICE:
        return "cuda" if available else CPU
    if not available:
        raise ValueError(f"device {device}: torch sees no CUDA GPU on this machine (a CPU "
                         "build of torch, or no GPU); fix it with --device cpu (or auto: "
                         "the GPU when there is one), or install a CUDA build of torch")
    index = int(device.partition(":")[2] or 0)
    count = torch.cuda.device_count()
    if index >= count:
        raise ValueError(f"device {device}: torch sees {count} CUDA GPU(s), cuda:0 to "
                         f"cuda:{count - 1}; fix it with --device cuda:0 (or cpu, or auto)")
    return device


__all__ = ["CPU", "DEFAULT_DEVICE", "DEVICE_FORMS", "check_device", "resolve_device"]
