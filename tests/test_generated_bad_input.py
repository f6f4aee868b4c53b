"""Generated bad input for every subcommand and every ``--set`` key: each case gets exit
code 2, one line on stderr, no traceback, no file or run folder left, within bounded time
and memory.

The cases are made, not listed: each numeric option of each command gets the values of its
kind that no command may take (wrong type, NaN, negative, zero where a count must be
positive, huge), each player argument the specs that name nothing or ask too much, and each
key of each trainer's config the values its type refuses (malformed YAML, wrong type, NaN,
negative and huge numbers). A new config key is covered without editing this file.
"""

from __future__ import annotations

import dataclasses
import resource
import signal
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boardgym.train.az.config import AzConfig
from boardgym.train.cli import main
from boardgym.train.ppo.config import TrainConfig
from boardgym.train.td.config import TdConfig

USAGE_ERROR = 2
SECONDS = 60
"""A bad input is refused before any work starts: well within this."""
MEMORY_KIB = 1024 * 1024
"""...and without growing the process's peak memory by more than this."""
HUGE = "1000000000000000"
NOT_INTEGERS = ("abc", "1.5", "nan", "[1,")
COUNT = "count"
"""An option that must be a positive integer."""
AMOUNT = "amount"
"""An option that may be 0 but never negative."""
CHANCE = "chance"
"""An option that is a probability below 1."""
DEVICE = "device"
"""A torch device: ``auto``, ``cpu``, ``cuda`` or ``cuda:N``."""

OPTIONS: dict[str, tuple[list[str], dict[str, str]]] = {
    "evaluate": (["tictactoe", "random", "rules"],
                 {"--games": COUNT, "--seed": AMOUNT, "--workers": COUNT, "--openings": AMOUNT,
                  "--random-moves": CHANCE}),
    "tournament": (["tictactoe", "random", "rules"],
                   {"--games": COUNT, "--seed": AMOUNT, "--workers": COUNT,
                    "--bootstrap": AMOUNT, "--openings": AMOUNT, "--random-moves": CHANCE}),
    "positions": (["four_in_a_row", "--out", "out.jsonl"],
                  {"--count": COUNT, "--seed": AMOUNT, "--workers": COUNT,
                   "--max-nodes": COUNT}),
    "quality": (["tictactoe", "random"],
                {"--limit": COUNT, "--seed": AMOUNT, "--workers": COUNT}),
    "play": (["tictactoe"], {"--seed": AMOUNT}),
    "replay": (["games.jsonl"], {"--game": AMOUNT}),
    "serve": ([], {"--port": AMOUNT, "--seed": AMOUNT}),
    "train": (["tictactoe"],
              {"--timesteps": COUNT, "--seed": AMOUNT, "--n-envs": COUNT,
               "--eval-quality": AMOUNT, "--patience": AMOUNT, "--device": DEVICE}),
    "selfplay": (["tictactoe"],
                 {"--timesteps": COUNT, "--seed": AMOUNT, "--n-envs": COUNT,
                  "--patience": AMOUNT, "--device": DEVICE}),
    "az": (["tictactoe"], {"--seed": AMOUNT, "--iterations": COUNT, "--minutes": "minutes",
                           "--workers": COUNT, "--device": DEVICE}),
    "td": (["tictactoe"], {"--seed": AMOUNT, "--games": COUNT, "--minutes": "minutes"}),
    "bench": ([], {"--seconds": "seconds", "--repeats": COUNT, "--sizes": COUNT}),
}
"""Each command: arguments that make it run, and its numeric options by kind."""

PLAYER_SPECS = ("bogus", "random:3", "alphabeta:-1", "alphabeta:0", f"alphabeta:{HUGE}",
                "mcts:0", f"mcts:{HUGE}", "mcts:nan", "az:", "az:200@", "az:200@no/such.zip",
                "shipped:no_such_file", "no/such/model.zip", "lookahead:999", "ntuple:",
                "ntuple:0@", "ntuple:0@no/such.zip", f"ntuple:{HUGE}@shipped:tictactoe")
GAMES = ("chess", "", "tictactoe,reversi")
TRAINERS = {"train": TrainConfig, "selfplay": TrainConfig, "az": AzConfig, "td": TdConfig}


def bad_values(kind: str) -> list[str]:
    """The values an option of ``kind`` never takes."""
    values = [*NOT_INTEGERS, "-1", HUGE]
    if kind == COUNT:
        values.append("0")
    if kind == CHANCE:
        values = ["abc", "nan", "inf", "-1", "1", "1.5"]
    if kind in ("minutes", "seconds"):
        values = ["abc", "nan", "inf", "-1", "0", "1e300"]
    if kind == DEVICE:
        values = ["gpu", "cuda:x", "cuda:-1", "", "cuda:999"]
    return values


def option_cases() -> Iterator[list[str]]:
    """Argument lists of each command with one numeric option made bad."""
    for command, (base, options) in OPTIONS.items():
        for option, kind in options.items():
            for value in bad_values(kind):
                yield [command, *base, option, value]
        if base:
            for game in GAMES:
                yield [command, game, *base[1:]]


def player_cases() -> Iterator[list[str]]:
    """Player specs that name nothing or ask too much, in each command that takes one."""
    for spec in PLAYER_SPECS:
        yield ["evaluate", "tictactoe", spec, "random"]
        yield ["evaluate", "reversi", "random", spec]
        yield ["evaluate", "four_in_a_row", spec, "random"]
        yield ["tournament", "tictactoe", "random", spec]
        yield ["quality", "tictactoe", spec]
        yield ["play", "tictactoe", "--opponent", spec]
        yield ["serve", "--port", "0", "--checkpoint", spec]
        yield ["train", "tictactoe", "--opponent", spec]


def key_values(hint: Any) -> list[str]:
    """``--set`` values that a config key of type ``hint`` refuses."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return key_values(next(arg for arg in args if arg is not type(None)))
    malformed = ["[1,", "{a: ", "a: b: c"]
    if hint is int:
        return [*malformed, "abc", "1.5", "[1]", "-1", HUGE, "-" + HUGE]
    if hint is float:
        return [*malformed, "abc", ".nan", ".inf", "-.inf", "-1e300", "1e300", "[1]"]
    if hint is bool:
        return [*malformed, "abc", "2", "[true]"]
    if hint is str:
        return [*malformed, "[a]", "{a: 1}", "12"]
    if origin is list:
        return [*malformed, "{a: 1}", "[[1]]", "[{a: 1}]"]
    if origin is dict:
        return [*malformed, "[1]", "abc", "{no_such_option: 1}"]
    raise AssertionError(f"no bad values for config keys of type {hint}")


def set_cases() -> Iterator[list[str]]:
    """Each trainer with one config key set to a value its type or range refuses."""
    for command, kind in TRAINERS.items():
        hints = typing.get_type_hints(kind)
        for item in dataclasses.fields(kind):
            if item.name == "game":
                continue
            for value in key_values(hints[item.name]):
                yield [command, "tictactoe", "--set", f"{item.name}={value}"]
            if item.name in kind.POSITIVE_KEYS:
                yield [command, "tictactoe", "--set", f"{item.name}=0"]


CASES = [*option_cases(), *player_cases(), *set_cases()]


class TookTooLong(Exception):
    """A case ran past ``SECONDS``."""


def on_alarm(signum: int, frame: Any) -> None:
    """Stop the case that ran too long."""
    raise TookTooLong


def peak_kib() -> int:
    """This process's peak resident memory so far (KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@pytest.mark.parametrize("argv", CASES, ids=[" ".join(case) for case in CASES])
def test_bad_input_is_one_line(argv: list[str], tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    """Exit code 2, one line on stderr naming the command, no traceback, nothing written."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    if argv[0] in TRAINERS:
        argv = [*argv, "--runs-dir", str(tmp_path / "runs")]
    before = peak_kib()
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(SECONDS)
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    err = capsys.readouterr().err
    assert code == USAGE_ERROR, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"boardgym {argv[0]}") or lines[0].startswith("boardgym:"), err
    assert list(tmp_path.iterdir()) == [], "a bad input left files behind"
    assert peak_kib() - before < MEMORY_KIB


def test_case_count() -> None:
    """The generator covers every command's options, players and every trainer key."""
    keys = sum(len(dataclasses.fields(kind)) - 1 for kind in TRAINERS.values())
    assert len(CASES) > 5 * keys + len(PLAYER_SPECS) * 7
