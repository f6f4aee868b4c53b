"""Ctrl-C in any command: exit code 130, one line on stderr, no traceback, no file left;
worker processes stop without tracebacks of their own; a closed output ends silently."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from boardgym.files import atomic_path
from boardgym.train.cli import main
from boardgym.train.common.commands import EXIT_INTERRUPTED, interruptible
from boardgym.train.match import evaluate, tournament
from boardgym.train.quality import positions


def interrupt(*args: Any, **kwargs: Any) -> Any:
    """Stands in for a command's work: the user presses Ctrl-C."""
    raise KeyboardInterrupt


@pytest.mark.parametrize(("argv", "module", "work"), [
    (["evaluate", "tictactoe", "random", "random"], evaluate, "play_match"),
    (["tournament", "tictactoe", "random", "rules"], tournament, "run_tournament"),
    (["positions", "tictactoe", "--out", "out.jsonl"], positions, "position_lines"),
])
def test_ctrl_c_exits_130_one_line(argv: list[str], module: Any, work: str, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(module, work, interrupt)
    assert main(argv) == EXIT_INTERRUPTED
    captured = capsys.readouterr()
    assert captured.err == f"boardgym {argv[0]}: interrupted\n"
    assert list(tmp_path.iterdir()) == [], "an interrupted command left a file"


def test_an_interrupted_write_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise KeyboardInterrupt
    assert target.read_text() == "old" and sorted(tmp_path.iterdir()) == [target]
    with atomic_path(target) as tmp:
        tmp.write_text("new")
    assert target.read_text() == "new" and sorted(tmp_path.iterdir()) == [target]


def test_a_closed_output_ends_silently(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    def closed(argv: list[str]) -> int:
        raise BrokenPipeError

    with (tmp_path / "stdout").open("w") as stdout:  # a real file for the redirection
        monkeypatch.setattr(sys, "stdout", stdout)
        assert interruptible("boardgym x", closed, []) == 1
    assert capsys.readouterr().err == ""


POOL_SCRIPT = """
import time
from boardgym.train.common.backends import Backend, parallel_map
from boardgym.train.common.commands import interruptible

def run(state, task):
    time.sleep(0.2 if task == 0 else 60)
    return task

def setup():
    return None

def body(argv):
    for result in parallel_map(run, range(8), setup, Backend(workers=2)):
        print("ready", flush=True)

raise SystemExit(interruptible("boardgym test", body, []))
"""
"""A command whose two workers are busy (one for a minute) once it prints ``ready``."""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="two local workers need two CPUs")
def test_ctrl_c_stops_local_workers_without_their_tracebacks(tmp_path: Path) -> None:
    """SIGINT to the whole process group, as a terminal's Ctrl-C sends it, while a worker
    is in the middle of a task: the command alone reports it, and stops at once."""
    process = subprocess.Popen([sys.executable, "-c", POOL_SCRIPT], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True,
                               cwd=tmp_path)
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == EXIT_INTERRUPTED
    assert err == "boardgym test: interrupted\n", err
