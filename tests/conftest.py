"""Test set-up: headless pygame, and a numba cache of each test worker's own.

numba's on-disk cache is not safe while two processes compile the same function into it at
once (one may load the other's half-written object and abort), which pytest-xdist's workers
do on a fresh checkout; each worker compiles into its own folder instead.
"""

import os
import tempfile

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(tempfile.gettempdir(),
                                                      f"boardgym-numba-{WORKER}"))
