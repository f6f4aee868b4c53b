"""Benchmarks' command lines: what they print, and one clear error for bad input."""

from __future__ import annotations

import pytest

from boardgym.bench import network


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_network_bench_prints_the_tower_and_both_times(precision: str,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    assert network.main(["checkpoints/tictactoe_az.zip", "--repeats", "1", "--forward", "4",
                         "--train", "4", "--threads", "1", "--precision", precision]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(f"1 threads, {precision}")
    assert out[1].startswith("checkpoints/tictactoe_az.zip:") and "3x3 board" in out[1]
    assert "forward of 4 boards:" in out[2] and "gradient step of 4 samples:" in out[2]


@pytest.mark.parametrize(("argv", "message"), [(["no/such.zip"], "not found"),
                                                (["--repeats", "0"], "must be >= 1"),
                                                (["--precision", "half"], "invalid choice")])
def test_network_bench_refuses_bad_input_in_one_line(argv: list[str], message: str,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    with pytest.raises(SystemExit) as exit_info:
        network.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err.splitlines()[-1]
