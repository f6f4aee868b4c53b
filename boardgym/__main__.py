"""``python -m boardgym ...``: the ``boardgym`` command."""

from boardgym.train.cli import main

raise SystemExit(main())
