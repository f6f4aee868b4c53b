"""The documents' generated tables: the script's markers, specs and check, and the cheap
tables of the README, the docs site and the model cards as their commands print them now."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.paths import ROOT


def load_tables() -> ModuleType:
    """``docs/tables.py`` as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("docs_tables", ROOT / "docs" / "tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


tables = load_tables()

SPEC = """\
ttt:
  kind: evaluate
  cheap: true
  command: boardgym evaluate tictactoe {a} perfect --games 20 --seed 3
  rows: [{a: random, note: weakest}, {a: rules, note: classic}]
  columns: [[A, a], [what, note], [games, games], [A wins, a_wins], [ties, ties],
            ["A win rate", win_rate]]
slow:
  kind: evaluate
  command: boardgym evaluate tictactoe random random --games 10
  columns: [[A wins, a_wins]]
quality:
  kind: quality
  cheap: true
  command: boardgym quality tictactoe perfect random --limit 30
  columns: [[player, player], [kept, kept], [ms, ms_per_move]]
"""


def document(tmp_path: Path, *names: str) -> Path:
    """A markdown file with empty blocks for ``names``, and the spec file beside it."""
    (tmp_path / "tables.yaml").write_text(SPEC)
    blocks = "".join(f"<!-- table {name} -->\n<!-- /table -->\n\nkept text\n" for name in names)
    path = tmp_path / "page.md"
    path.write_text(f"# Page\n\n{blocks}")
    return path


def test_a_block_is_filled_from_its_commands_and_then_checks_clean(tmp_path: Path) -> None:
    path = document(tmp_path, "ttt")
    assert tables.main([str(path)]) == 0
    text = path.read_text()
    assert "Each row: `boardgym evaluate tictactoe A perfect --games 20 --seed 3`." in text
    assert "| `random` | weakest | 20 | 0 |" in text
    assert "| `rules` | classic | 20 | 0 |" in text
    assert text.count("kept text") == 1 and text.startswith("# Page\n\n<!-- table ttt -->\n")
    assert tables.main([str(path), "--check"]) == 0


def test_a_relative_path_reads_its_spec_file_once(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    document(tmp_path, "ttt")
    monkeypatch.chdir(tmp_path)
    assert tables.main(["page.md", "--check"]) == 1
    assert tables.main(["page.md"]) == 0
    assert "| `rules` | classic | 20 | 0 |" in (tmp_path / "page.md").read_text()


def test_markers_shown_in_a_code_block_are_text(tmp_path: Path) -> None:
    path = document(tmp_path)
    shown = "```\n<!-- table nowhere -->\n<!-- /table -->\n```\n"
    path.write_text(shown)
    assert tables.main([str(path)]) == 0
    assert path.read_text() == shown


def test_check_names_a_table_whose_numbers_differ_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = document(tmp_path, "ttt")
    tables.main([str(path)])
    wrong = path.read_text().replace("| `random` | weakest | 20 | 0 |",
                                     "| `random` | weakest | 20 | 1 |")
    path.write_text(wrong)
    capsys.readouterr()
    assert tables.main([str(path), "--check"]) == 1
    assert "ttt differs from its command" in capsys.readouterr().out
    assert path.read_text() == wrong


def with_random_timed(path: Path, timing: str) -> list[str]:
    """The quality table at ``path`` regenerated, then ``random``'s ms/move cell set to
    ``timing``; returns the file's lines as written."""
    tables.main([str(path)])
    lines = path.read_text().splitlines()
    row = next(number for number, line in enumerate(lines) if line.startswith("| `random`"))
    cells = lines[row].split("|")
    cells[3] = f" {timing} "
    lines[row] = "|".join(cells)
    path.write_text("\n".join(lines) + "\n")
    return lines


def test_timings_are_printed_but_never_compared(tmp_path: Path) -> None:
    path = document(tmp_path, "quality")
    lines = with_random_timed(path, "12345")
    row = next(number for number, line in enumerate(lines) if line.startswith("| `random`"))
    assert tables.main([str(path), "--check"]) == 0
    lines[row] = lines[row].replace("| `random` |", "| `rules` |")
    path.write_text("\n".join(lines) + "\n")
    assert tables.main([str(path), "--check"]) == 1


def test_a_regenerate_run_writes_new_timings_too(tmp_path: Path) -> None:
    path = document(tmp_path, "quality")
    with_random_timed(path, "12345")
    assert tables.main([str(path)]) == 0
    assert "12345" not in path.read_text()


def test_cheap_runs_skip_the_expensive_tables(tmp_path: Path) -> None:
    path = document(tmp_path, "slow")
    assert tables.main([str(path), "--cheap"]) == 0
    assert "<!-- table slow -->\n<!-- /table -->" in path.read_text()


@pytest.mark.parametrize(("body", "message"), [
    ("<!-- table nowhere -->\n<!-- /table -->\n", "no spec for table nowhere"),
    ("<!-- table ttt -->\n", "never closed"),
    ("<!-- /table -->\n", "without a table"),
])
def test_bad_markers_are_one_line_and_exit_code_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, message: str) -> None:
    path = document(tmp_path)
    path.write_text(body)
    assert tables.main([str(path)]) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1


def test_a_spec_with_an_unknown_key_is_refused(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = document(tmp_path, "ttt")
    (tmp_path / "tables.yaml").write_text(SPEC.replace("  cheap: true\n", "  chaep: true\n", 1))
    assert tables.main([str(path)]) == 2
    assert "unknown keys ['chaep']" in capsys.readouterr().err


@pytest.mark.slow
def test_the_documents_cheap_tables_are_what_their_commands_print() -> None:
    """Every cheap table of the README, the docs site and the model cards, rerun now."""
    assert tables.main(["--cheap", "--check"]) == 0
