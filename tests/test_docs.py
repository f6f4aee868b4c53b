"""The documents: the docs site builds strictly, the README stays short and its Python
examples run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

README = ROOT / "README.md"
README_LINES = 300


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a broken link, a missing page or a docstring target that
    is not found fails."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e .[docs]")
    pytest.importorskip("mkdocstrings", reason="the docs extra is not installed")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site"), "--config-file", str(ROOT / "mkdocs.yml")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "reference" / "env-specs" / "index.html").is_file()


def test_the_readme_is_at_most_300_lines() -> None:
    assert len(README.read_text().splitlines()) <= README_LINES


def test_the_readme_holds_no_issue_numbers_or_commit_hashes() -> None:
    text = README.read_text()
    assert not re.search(r"\bissue #?\d+|#\d{2,}\b", text, re.IGNORECASE)
    assert not re.search(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b", text)


def python_blocks(path: Path) -> list[str]:
    """The fenced ``python`` blocks of a markdown file."""
    return re.findall(r"^```python\n(.*?)^```", path.read_text(), re.MULTILINE | re.DOTALL)


@pytest.mark.slow
@pytest.mark.parametrize("number", range(len(python_blocks(README))))
def test_the_readme_python_examples_run(tmp_path: Path, number: int) -> None:
    """Each example runs as it stands, from a folder outside the checkout."""
    block = python_blocks(README)[number]
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "SDL_VIDEODRIVER": "dummy"})
    assert done.returncode == 0, f"README python block {number}:\n{block}\n{done.stderr[-3000:]}"
