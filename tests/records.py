"""Damaging a checkpoint's record on purpose, for the tests that it is refused."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any


def rewrite_policy_record(path: Path, change: dict[str, Any]) -> None:
    """Rewrite the policy checkpoint at ``path`` with ``change`` applied to its architecture
    record (``boardgym.json``'s ``policy``); a ``None`` value drops that key."""
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    record = json.loads(entries["boardgym.json"])
    record["policy"] = {key: value for key, value in {**record["policy"], **change}.items()
                        if value is not None}
    entries["boardgym.json"] = json.dumps(record).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
