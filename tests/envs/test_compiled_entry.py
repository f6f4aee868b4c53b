"""``compiled.entry``: kernels compiled for their one signature, on first use."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from numba import njit

from boardgym.envs.games.compiled import entry


@entry("u8(u8, u8)")
def _shifted_xor(a: np.uint64, b: np.uint64) -> np.uint64:
    return (a >> np.uint64(1)) ^ b


@njit(cache=True)
def _calls_entry(a: np.uint64) -> np.uint64:
    return _shifted_xor(a, np.uint64(1))


def test_a_python_call_compiles_the_signature_alone_and_takes_bit_63() -> None:
    top = (1 << 63) | 5
    assert _shifted_xor(top, 1) == (top >> 1) ^ 1
    assert _shifted_xor(3, 1) == 0
    assert [str(sig) for sig in _shifted_xor.signatures] == ["(uint64, uint64)"]
    with pytest.raises(OverflowError):
        _shifted_xor(-1, 0)


def test_a_kernel_calling_an_entry_gets_the_same_values() -> None:
    assert _calls_entry(np.uint64((1 << 64) - 1)) == (((1 << 64) - 1) >> 1) ^ 1
    assert len(_shifted_xor.signatures) == 1


def test_importing_the_rules_and_the_players_compiles_nothing() -> None:
    code = ("import boardgym, boardgym.agents.reversi_search as s, boardgym.agents.mcts as m\n"
            "from boardgym.envs.games import reversi_bits as r, four_in_a_row_bits as f\n"
            "kernels = [s.deepen, r.play, r.legal_moves_batch, f.play, f.play_batch]\n"
            "print(sum(len(k.signatures) for k in kernels))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "0"
