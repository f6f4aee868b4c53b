"""Writing files: the one atomic write of the project.

Checkpoints, run records and every file a command writes go through ``atomic_path``, so an
interrupted or failed write (Ctrl-C, a full disk, a killed process) never leaves part of a
file. It sits at the bottom of the layers (no import from the project), so the rules, the
players and the commands all share it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path next to ``path`` to write the whole file to: flushed to disk and
    renamed over ``path`` when the body succeeds, removed when it fails or is interrupted
    (Ctrl-C), so ``path`` holds its old content or the new one, never part of a file. The
    one atomic write of the project: checkpoints, run records and every command's output."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        yield tmp
        with tmp.open("rb") as file:
            os.fsync(file.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


__all__ = ["atomic_path"]
