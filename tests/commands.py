"""Running a command in-process the way the tests check its errors."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from boardgym.train import cli

USAGE_ERROR = 2
"""The exit code of every command-line error."""


def usage_error(argv: Sequence[str], capsys: pytest.CaptureFixture[str],
                main: Callable[[list[str]], int] = cli.main) -> str:
    """What ``main(argv)`` prints when it refuses ``argv``; fails the test unless it exits
    with code 2 and one line on stderr, without a traceback."""
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    err = capsys.readouterr().err
    assert done.value.code == USAGE_ERROR, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err
