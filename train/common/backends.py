"""One parallel map for every command that splits its work by seed: local processes or Ray.

``parallel_map(run, tasks, setup, backend)`` yields ``run(state, task)`` for each task, in
task order, where ``state = setup()`` is built once per worker process (the players of a
match, a solver's engine) and reused for every task that process runs. Commands split their
work so that a task's result depends only on the task (games are numbered and game ``i``
draws from ``default_rng([seed, i])``), never on the worker that runs it: every backend and
any number of workers give the same results.

Numbered work is handed out in index ranges (``task_ranges``: one index at a time in this
process), each task returning a list of results that ``flat_map`` flattens back into index
order.

Backends (``Backend``):

- ``local``: with one worker, in this process (with a ``state`` already built, if given);
  with more, a ``ProcessPoolExecutor`` whose initializer builds each process's state. At
  most ``local_cpus()`` processes (more run no faster; the Ray backend is the way to more),
  and never more than there are tasks: work that is one task runs in this process.
- ``ray``: Ray tasks (``pip install -e ".[ray]"``). With no address (neither ``--address``
  nor ``RAY_ADDRESS``) a local Ray is started (or the one this process already started is
  used); with one, this process joins that cluster. A task whose worker dies (a lost node, a
  killed process) is run again by Ray, up to ``TASK_RETRIES`` times: the same task, so the
  same result.

Both keep at most ``workers`` tasks running (``MAX_WORKERS`` at most) and at most ``AHEAD``
tasks per worker finished or running ahead of the one the caller waits for, so an endless
stream of tasks (labelling positions until enough are good) works, and a caller that stops
early wastes little.

Stopping: when the caller stops early, fails or is interrupted (Ctrl-C), the tasks still
running are stopped at once (local worker processes terminated, Ray tasks cancelled).
Worker processes ignore Ctrl-C themselves, so only the command reports it, in one line.

Use it from other code::

    from boardgym.train.common.backends import Backend, parallel_map
    squares = list(parallel_map(pow, range(10), lambda: 2, Backend("ray", workers=2)))
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import itertools
import logging
import os
import signal
import socket
import sys
import uuid
from collections.abc import Callable, Generator, Iterable, Iterator, Sized
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from boardgym.train.common.commands import MAX_WORKERS, check_workers, int_at_least, local_cpus

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")
Handle = Any
"""A running task: a ``concurrent.futures.Future`` or a Ray ``ObjectRef``."""

BACKENDS = ("local", "ray")
ADDRESS_VARIABLE = "RAY_ADDRESS"
"""The environment variable naming the Ray cluster to join (Ray's own)."""
LOCAL_ADDRESSES = ("auto", "local")
"""Addresses ``ray.init`` resolves itself (a Ray already running on this machine)."""
TASK_RETRIES = 3
"""Times Ray runs a task again after its worker died."""
PROBE_SECONDS = 5.0
"""How long to wait for the cluster's port to answer before calling it unreachable."""
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
"""An HTTP/2 client's first bytes: the connection preface, then an empty SETTINGS frame."""
FRAME_HEADER = 9
"""Bytes of an HTTP/2 frame header: length (3), type (1), flags (1), stream (4)."""
SETTINGS_FRAME = 4
"""The type of the SETTINGS frame, which an HTTP/2 server sends first."""
AHEAD = 4
"""Tasks per worker kept finished or running ahead of the one the caller waits for."""
INSTALL_HINT = 'the ray backend needs Ray: pip install -e ".[ray]"'
JOIN_SETTINGS = {"RAY_gcs_server_port_wait_time_s": "10"}
"""Ray's environment settings when joining a cluster that answered the probe, unless set
already: seconds of attempts to connect (Ray's default is 20)."""
AUTH_HINT = ("if the cluster uses token authentication (the default of `ray start`), set "
             "RAY_AUTH_MODE=token and give its token in ~/.ray/auth_token or RAY_AUTH_TOKEN")


@dataclass(frozen=True)
class Backend:
    """Where tasks run.

    Attributes:
        name: ``"local"`` (processes on this machine) or ``"ray"``.
        workers: tasks running at once: local processes (None: 1, in this process), or Ray
            tasks (None: every CPU of the cluster).
        address: the Ray cluster to join (``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``);
            None: ``RAY_ADDRESS`` if set, else a local Ray.
    """

    name: str = "local"
    workers: int | None = None
    address: str | None = None

    def __post_init__(self) -> None:
        if self.name not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {self.name!r}")
        if self.workers is not None:
            check_workers(self.name, self.workers)
        if self.address is not None and self.name != "ray":
            raise ValueError("--address joins a Ray cluster: add --backend ray")

    @property
    def inline(self) -> bool:
        """Whether tasks run in this process (the local backend with one worker)."""
        return self.name == "local" and (self.workers or 1) == 1


# -- command line ----------------------------------------------------------------------------


def add_backend_options(parser: argparse.ArgumentParser, what: str = "the work") -> None:
    """Add ``--workers K``, ``--backend local|ray`` and ``--address ADDR`` to a command."""
    parser.add_argument("--workers", type=int_at_least(1, MAX_WORKERS, "MAX_WORKERS"),
                        help=f"tasks running at once to spread {what} over: local processes "
                             "(default 1, at most this machine's CPU count; for more, "
                             "--backend ray) or Ray tasks (default: the cluster's CPUs; "
                             f"at most {MAX_WORKERS}); the results are the same for any number")
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help='where the work runs: "local" processes (default) or "ray" '
                             '(a local Ray, or the cluster of --address / RAY_ADDRESS; '
                             'pip install -e ".[ray]"); same results')
    add_address_option(parser)


def add_address_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--address ADDR``: the Ray cluster a command joins."""
    parser.add_argument("--address", metavar="ADDR",
                        help="the Ray cluster to join (HOST:PORT as printed by `ray start "
                             "--head`, or ray://HOST:PORT); default: RAY_ADDRESS, else a "
                             "local Ray")


def backend_from_args(args: argparse.Namespace) -> Backend:
    """The ``Backend`` of a command's ``--backend``, ``--workers`` and ``--address``.

    Raises:
        ValueError: ``--address`` without ``--backend ray``, or more ``--workers`` than the
            backend runs (``check_workers``).
    """
    return Backend(args.backend, args.workers, args.address)


# -- Ray -------------------------------------------------------------------------------------


def cluster_address(backend: Backend) -> str | None:
    """The address of the Ray cluster ``backend`` joins: ``--address``, else ``RAY_ADDRESS``,
    else None (a local Ray)."""
    return backend.address or os.environ.get(ADDRESS_VARIABLE) or None


def probe(address: str) -> None:
    """Check within about ``2 * PROBE_SECONDS`` that a gRPC server (Ray's GCS, or a Ray
    Client server for ``ray://``) answers at ``address`` (``[ray://]HOST:PORT``), so that
    joining an unreachable cluster fails at once: ``ray.init`` would retry for minutes.

    Raises:
        ValueError: a malformed address, nothing listening there, or a server that does
            not speak HTTP/2 (gRPC).
    """
    if address in LOCAL_ADDRESSES:
        return
    host, _, port = address.split("://")[-1].rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"Ray address {address!r} is not HOST:PORT; pass the address "
                         "`ray start --head` printed (e.g. 127.0.0.1:6379)")
    fix = f"start it with `ray start --head` or fix --address / {ADDRESS_VARIABLE}"
    try:
        with socket.create_connection((host.strip("[]"), int(port)),
                                      timeout=PROBE_SECONDS) as connection:
            connection.sendall(HTTP2_PREFACE)
            header = connection.recv(FRAME_HEADER)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ValueError(f"cannot reach the Ray cluster at {address} ({reason}); {fix}") \
            from None
    if len(header) < FRAME_HEADER or header[3] != SETTINGS_FRAME:
        raise ValueError(f"the server at {address} is not a Ray cluster (no gRPC answer); {fix}")


@contextmanager
def _native_stderr_silenced() -> Iterator[None]:
    """Send what native code writes to file descriptor 2 to the null device for a while
    (Ray's core logs a warning per failed attempt to reach a cluster)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as sink:
        os.dup2(sink.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def require_ray() -> None:
    """Check that Ray is installed.

    Raises:
        ValueError: it is not (the message says how to install it).
    """
    if importlib.util.find_spec("ray") is None:
        raise ValueError(INSTALL_HINT)


def connect(backend: Backend) -> None:
    """Make sure this process can run Ray tasks: nothing for the local backend; for Ray, use
    the Ray this process already started or joined, else join ``cluster_address(backend)``
    or start a local Ray.

    Raises:
        ValueError: Ray is not installed, or the cluster cannot be reached (one line naming
            the fix).
    """
    if backend.name != "ray":
        return
    require_ray()
    import ray

    if ray.is_initialized():
        return
    address = cluster_address(backend)
    if address is None:
        try:
            ray.init(include_dashboard=False, logging_level=logging.ERROR)
        except (ConnectionError, RuntimeError, TimeoutError, ValueError) as error:
            raise ValueError(f"cannot start a local Ray: {error}") from None
        return
    probe(address)
    for name, value in JOIN_SETTINGS.items():
        os.environ.setdefault(name, value)
    try:
        with _native_stderr_silenced():
            ray.init(address=address, logging_level=logging.ERROR)
    except (ConnectionError, RuntimeError, TimeoutError, ValueError) as error:
        raise ValueError(f"cannot join the Ray cluster at {address}: {error}; "
                         f"{AUTH_HINT}") from None


def cluster_cpus() -> int:
    """The CPUs of the Ray cluster this process is connected to (at least 1)."""
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))


# -- the map ---------------------------------------------------------------------------------


_worker_key: str | None = None
_worker_state: Any = None


def _state_for(key: str, setup: Callable[[], Any]) -> Any:
    """The state of map ``key`` in this worker process, built by ``setup`` on first use."""
    global _worker_key, _worker_state
    if _worker_key != key:
        _worker_state = setup()
        _worker_key = key
    return _worker_state


def _start_worker(key: str, setup: Callable[[], Any]) -> None:
    """A local worker process's start: Ctrl-C is the command's to report, not each worker's
    (the command stops its workers); then the map's state is built."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _state_for(key, setup)


def _run_task(key: str, functions: tuple[Callable[[], S], Callable[[S, T], R]], task: T) -> R:
    """Run one task in a worker process (a pool's or Ray's)."""
    setup, run = functions
    return run(_state_for(key, setup), task)


class _Runner(Protocol):
    """Submits tasks somewhere and hands back their results."""

    def submit(self, task: Any) -> Handle:
        """Start ``task``; returns its handle."""

    def wait(self, handles: list[Handle]) -> list[Handle]:
        """Block until at least one of ``handles`` is finished; returns the finished ones."""

    def result(self, handle: Handle) -> Any:
        """The result of a finished task (its exception raised here)."""

    def cancel(self, handles: list[Handle]) -> None:
        """Stop tasks whose results are no longer wanted."""


@dataclass
class _PoolRunner(Generic[S, T, R]):
    """Tasks on a local process pool."""

    pool: concurrent.futures.ProcessPoolExecutor
    key: str
    functions: tuple[Callable[[], S], Callable[[S, T], R]]

    def submit(self, task: T) -> Handle:
        return self.pool.submit(_run_task, self.key, self.functions, task)

    def wait(self, handles: list[Handle]) -> list[Handle]:
        done, _ = concurrent.futures.wait(handles, return_when=concurrent.futures.FIRST_COMPLETED)
        return list(done)

    def result(self, handle: Handle) -> R:
        return handle.result()

    def cancel(self, handles: list[Handle]) -> None:
        for handle in handles:
            handle.cancel()


@contextmanager
def _pool(workers: int, key: str, setup: Callable[[], Any]
          ) -> Iterator[concurrent.futures.ProcessPoolExecutor]:
    """A pool of ``workers`` local processes, each with the state ``setup`` builds; shut down
    in order when the body ends; stopped at once when it fails, is interrupted or is closed
    early: no more tasks start, and the processes, which may be running tasks nobody waits
    for any more, are terminated (quietly: they ignore Ctrl-C, and SIGTERM ends them without
    a traceback)."""
    pool = concurrent.futures.ProcessPoolExecutor(workers, initializer=_start_worker,
                                                  initargs=(key, setup))
    try:
        yield pool
    except BaseException:
        processes = list(getattr(pool, "_processes", None) or {})
        pool.shutdown(wait=False, cancel_futures=True)
        for pid in processes:
            with suppress(OSError):  # already gone
                os.kill(pid, signal.SIGTERM)
        raise
    pool.shutdown(wait=True)


@dataclass
class _RayRunner:
    """Tasks on Ray, retried when their worker dies."""

    key: str
    functions: Any
    """The ``ObjectRef`` of ``(setup, run)``, stored once in Ray's object store."""

    def __post_init__(self) -> None:
        import ray

        self.remote: Any = ray.remote(_run_task).options(max_retries=TASK_RETRIES, num_cpus=1)

    def submit(self, task: Any) -> Handle:
        return self.remote.remote(self.key, self.functions, task)

    def wait(self, handles: list[Handle]) -> list[Handle]:
        import ray

        done, _ = ray.wait(handles, num_returns=1)
        return list(done)

    def result(self, handle: Handle) -> Any:
        import ray

        return ray.get(handle)

    def cancel(self, handles: list[Handle]) -> None:
        import ray

        for handle in handles:
            ray.cancel(handle, force=True)


_END = object()


def _in_order(runner: _Runner, tasks: Iterable[Any], workers: int) -> Iterator[Any]:
    """The results of ``tasks`` in task order, at most ``workers`` running at once and at
    most ``AHEAD * workers`` started and not yet handed to the caller."""
    pending = iter(tasks)
    running: dict[Handle, int] = {}
    finished: dict[int, Handle] = {}
    submitted = handed = 0
    exhausted = False
    try:
        while True:
            while not exhausted and len(running) < workers and \
                    submitted - handed < AHEAD * workers:
                task = next(pending, _END)
                if task is _END:
                    exhausted = True
                    break
                running[runner.submit(task)] = submitted
                submitted += 1
            if handed in finished:
                yield runner.result(finished.pop(handed))
                handed += 1
            elif running:
                for handle in runner.wait(list(running)):
                    finished[running.pop(handle)] = handle
            else:
                return
    finally:
        runner.cancel(list(running))


def parallel_map(run: Callable[[S, T], R], tasks: Iterable[T], setup: Callable[[], S],
                 backend: Backend | None = None,
                 state: S | None = None) -> Generator[R, None, None]:
    """``run(state, task)`` for each task, in task order (see the module docstring).

    Args:
        run: a task's work; with more than one worker, picklable (a module-level function
            or a method of a picklable object) and a function of its task alone.
        tasks: the tasks, finite or endless (stop iterating the results to stop); when
            they have a length (``task_ranges`` of a total), no more workers than tasks
            are started, and a single local task runs in this process.
        setup: builds the state of a worker process (picklable likewise).
        backend: where the tasks run (default: local, in this process); ``connect`` it
            first to fail early on bad input.
        state: the state already built in this process, used when tasks run inline.

    Raises:
        ValueError: the Ray backend cannot start (see ``connect``).
    """
    backend = backend or Backend()
    count = len(tasks) if isinstance(tasks, Sized) else None
    if backend.inline or (backend.name == "local" and count is not None and count <= 1):
        built = setup() if state is None else state
        for task in tasks:
            yield run(built, task)
        return
    key = uuid.uuid4().hex
    if backend.name == "local":
        workers = min(backend.workers or 1, count or local_cpus())
        with _pool(workers, key, setup) as pool:
            yield from _in_order(_PoolRunner(pool, key, (setup, run)), tasks, workers)
        return
    connect(backend)
    import ray

    runner = _RayRunner(key, ray.put((setup, run)))
    workers = backend.workers or cluster_cpus()
    yield from _in_order(runner, tasks, workers if count is None else max(1, min(workers, count)))


@dataclass(frozen=True)
class _Ranges:
    """The index ranges of ``range(total)`` in steps of ``step``: made as they are read, with
    a length (the number of tasks)."""

    total: int
    step: int

    def __len__(self) -> int:
        return -(-self.total // self.step)

    def __iter__(self) -> Iterator[range]:
        for start in range(0, self.total, self.step):
            yield range(start, min(start + self.step, self.total))


def task_ranges(size: int, backend: Backend, total: int | None = None) -> Iterable[range]:
    """The index ranges ``[0, step)``, ``[step, 2 * step)``, ... that split work into tasks:
    ``step`` is ``size`` (>= 1), or 1 when ``backend`` runs tasks in this process (so that
    progress is counted index by index); up to ``total`` indices (the last range cut there;
    the ranges then have a length, and nothing is made before it is read), or forever when
    ``total`` is None."""
    step = 1 if backend.inline else size
    if total is not None:
        return _Ranges(total, step)
    return (range(start, start + step) for start in itertools.count(0, step))


def flat_map(run: Callable[[S, T], list[R]], tasks: Iterable[T], setup: Callable[[], S],
             backend: Backend | None = None, state: S | None = None,
             advance: Callable[[int], object] | None = None) -> Generator[R, None, None]:
    """``parallel_map`` of tasks that each return a list: the lists' items, flattened in task
    order (arguments as there). ``advance(n)`` is called with each task's number of items
    before they are handed on (a progress bar's update). Close the generator to stop early:
    ``parallel_map``'s workers run a few tasks ahead and are cancelled then."""
    with closing(parallel_map(run, tasks, setup, backend, state)) as results:
        for chunk in results:
            if advance is not None:
                advance(len(chunk))
            yield from chunk
