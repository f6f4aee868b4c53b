"""Test set-up: headless pygame, and a numba cache of each test worker's own.

numba's on-disk cache is not safe while two processes compile the same function into it at
once (one may load the other's half-written object and abort), which pytest-xdist's workers
do on a fresh checkout; each worker compiles into its own folder instead, named after a
digest of the compiled sources.
"""

import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
ROOT = Path(__file__).resolve().parent.parent


def compiled_sources_digest() -> str:
    """A digest of every package source that numba compiles: numba keys its cache on the
    defining file alone, so a kernel that inlines another file's function would otherwise
    keep running the old code after that file changes."""
    digest = hashlib.sha256()
    for path in sorted(ROOT.glob("[!.]*/**/*.py")):
        if "tests" not in path.parts and "numba" in (text := path.read_bytes().decode()):
            digest.update(path.relative_to(ROOT).as_posix().encode() + text.encode())
    return digest.hexdigest()[:12]


os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(
    tempfile.gettempdir(), f"boardgym-numba-{compiled_sources_digest()}-{WORKER}"))


def pytest_sessionstart(session: object) -> None:
    """Compile the exact solvers into this process's numba cache before any test runs.

    Tests start processes of their own (local workers, Ray tasks) that inherit the cache
    folder; with every solver compiled first, they only ever load it and never compile one
    function at the same time as each other. Without numba (no ``solvers`` extra) there is
    nothing to compile.
    """
    try:
        from boardgym.agents.solvers import four_in_a_row as connect_solver
        from boardgym.agents.solvers import reversi as reversi_solver
    except ImportError:
        return
    import numpy as np

    from boardgym.envs.games import game

    for name, solve, stones in (("reversi", reversi_solver.counted_move_scores, 56),
                                ("four_in_a_row", connect_solver.column_scores, 28)):
        for seed in range(SEEDS):  # random games until one reaches ``stones`` unfinished
            if solved_late_position(game(name), solve, stones, np.random.default_rng(seed)):
                break


SEEDS = 20
"""Random games tried for a late position to solve (one almost always suffices)."""


def solved_late_position(record: Any, solve: Any, count: int, rng: Any) -> bool:
    """Play ``record``'s game at random until it has ``count`` stones, then ``solve`` that
    position; False if the game ends first."""
    from boardgym.train.quality.positions import legal_actions, stones

    rules = record.rules
    state = rules.initial_state()
    while not rules.is_terminal(state):
        if stones(state) >= count:
            solve(state)
            return True
        state = rules.apply(state, int(rng.choice(legal_actions(record, state))))
    return False


RAY_CPUS = 2
"""CPUs of the local Ray the tests start."""


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One local Ray for a module's tests (skipped without the ray extra); shut down after
    the module if this fixture started it."""
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=RAY_CPUS, include_dashboard=False, logging_level="ERROR")
    yield
    if started:
        ray.shutdown()
