"""MkDocs hooks of the documentation site (``mkdocs.yml``, ``hooks:``).

Two things the site needs that MkDocs does not do by itself:

* The API reference reads the sources statically (mkdocstrings' Python handler, griffe), but
  the repository keeps the package's folders at its top (``envs/``, ``agents/``, ...) and maps
  them under ``boardgym`` with setuptools' ``package-dir``. ``on_config`` builds a folder of
  symbolic links with the installed layout (``boardgym/envs -> envs/``, read from
  ``pyproject.toml``) and points the handler's ``paths`` at it.
* Each game's env class is made from its ``Game`` record at import, with the record's
  ``env_doc`` as its docstring, so no source file holds it. ``on_files`` writes those specs
  into a page, ``reference/env-specs.md``.
* The model cards live beside their checkpoints (``checkpoints/NAME.md``), outside
  ``docs/``. ``on_files`` adds each card to the site as ``checkpoints/NAME.md``, so pages
  link to ``checkpoints/NAME.md`` and the strict build checks those links. A card's links
  into the docs folder (``../docs/FILE``) are rewritten to where the file is on the site.
"""

from __future__ import annotations

import atexit
import inspect
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
"""The repository's top folder."""
PACKAGE = "boardgym"
CARDS = "checkpoints"
ENV_SPECS = "reference/env-specs.md"


def package_folders(root: Path = ROOT) -> dict[str, Path]:
    """Each subpackage's folder as ``pyproject.toml``'s ``package-dir`` maps it, by its
    dotted name (``"boardgym.envs" -> root / "envs"``), the root package included."""
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    return {name: root / folder for name, folder in setuptools["package-dir"].items()}


def installed_layout(destination: Path, root: Path = ROOT) -> Path:
    """Build under ``destination`` a ``boardgym`` folder laid out as installed: the root
    package's files, and a link for each mapped subpackage. Returns ``destination``."""
    folders = package_folders(root)
    top = destination / PACKAGE
    top.mkdir(parents=True)
    for item in folders.pop(PACKAGE).iterdir():
        (top / item.name).symlink_to(item)
    for name, folder in folders.items():
        link = destination.joinpath(*name.split("."))
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(folder, target_is_directory=True)
    return destination


@event_priority(100)
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Point the Python handler at a temporary installed layout (removed at exit)."""
    layout = Path(tempfile.mkdtemp(prefix="boardgym-docs-"))
    atexit.register(shutil.rmtree, layout, ignore_errors=True)
    installed_layout(layout)
    handlers = config.plugins["mkdocstrings"].config["handlers"]
    handlers.setdefault("python", {})["paths"] = [str(layout)]
    return config


def card_text(path: Path) -> str:
    """A model card's markdown as the site shows it: links into ``../docs/`` made site-root
    relative to the card's place (``checkpoints/``)."""
    return path.read_text().replace("](../docs/", "](../")


def env_specs() -> str:
    """The env spec page: each registered game's env class docstring, its headings demoted
    under the game's own."""
    from boardgym.envs.games import GAMES

    parts = ["# Environment specs", "",
             "Each game's env class is made from its `Game` record (`define_env`); its "
             "docstring, below, is the spec. `help(env.unwrapped)` shows the same text.", ""]
    for record in GAMES.values():
        aliases = "".join(f", alias `{alias}`" for alias in record.env_aliases)
        parts += [f"## `{record.env_id}` ({record.class_prefix}Env{aliases})", "",
                  re.sub(r"^## ", "### ", inspect.cleandoc(record.env_doc), flags=re.M), ""]
    return "\n".join(parts)


def on_files(files: Files, config: MkDocsConfig, **_: Any) -> Files:
    """Add the env spec page and the model cards (as ``checkpoints/NAME.md``)."""
    files.append(File.generated(config, ENV_SPECS, content=env_specs()))
    for card in sorted((ROOT / CARDS).glob("*.md")):
        files.append(File.generated(config, f"{CARDS}/{card.name}", content=card_text(card)))
    return files
