"""What every command shares: capped integer options and the files a command may write."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from boardgym.files import atomic_path
from boardgym.train.common.commands import (
    MAX_GAMES,
    check_at_most,
    check_output,
    games_count,
    int_at_least,
    is_png_of,
    png_metadata,
)


def test_an_integer_option_stops_at_its_cap() -> None:
    parse = int_at_least(1, 10, "TEN: the most there is")
    assert parse("10") == 10
    with pytest.raises(argparse.ArgumentTypeError,
                       match=r"must be at most 10 \(TEN: the most there is\), got 11"):
        parse("11")
    assert games_count(str(MAX_GAMES)) == MAX_GAMES
    with pytest.raises(argparse.ArgumentTypeError, match=f"at most {MAX_GAMES}"):
        games_count(str(MAX_GAMES + 1))
    check_at_most("CAP", games=(3, 3))
    with pytest.raises(ValueError, match=r"games must be at most 3 \(CAP\), got 4"):
        check_at_most("CAP", games=(4, 3))


def never(path: Path) -> bool:
    return False


def test_an_output_file_is_overwritten_only_when_it_is_the_commands_own(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    assert check_output(target, "--out", "a set", never) == target  # nothing there yet
    target.write_text("someone's")
    with pytest.raises(ValueError, match=r"--out .*out.txt: a file is there that is not a set "
                                         r"this command wrote; pass --force"):
        check_output(target, "--out", "a set", never)
    assert check_output(target, "--out", "a set", lambda path: True) == target
    assert check_output(target, "--out", "a set", never, force=True) == target
    with pytest.raises(ValueError, match="is a folder"):
        check_output(tmp_path, "--out", "a set", never, force=True)
    with pytest.raises(ValueError, match="no folder"):
        check_output(tmp_path / "missing" / "out.txt", "--out", "a set", never)
    assert check_output(tmp_path / "new" / "out.txt", "--out", "a set", never, folder=False)


def test_a_picture_records_the_command_that_drew_it(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(1, 1))
    ours, theirs = tmp_path / "ours.png", tmp_path / "theirs.png"
    with atomic_path(ours) as tmp:
        figure.savefig(tmp, format="png", metadata=png_metadata("plot"))
    figure.savefig(theirs)
    plt.close(figure)
    assert is_png_of(ours, "plot") and not is_png_of(ours, "quality")
    assert not is_png_of(theirs, "plot") and not is_png_of(tmp_path / "none.png", "plot")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["ours.png", "theirs.png"]
