"""Files shipped inside the package, named ``shipped:NAME`` and found from any folder.

Everything a command reads by default travels in the installed package: the checkpoints
(the repository's top-level ``checkpoints/``, installed as ``boardgym.checkpoints``), the
labelled position sets, the opening suites. A *kind* (``Kind``) says where the package keeps
one sort of file and how those files' names end; ``NAME`` is a file's name without that
ending (its stem): ``shipped:reversi`` is ``checkpoints/reversi.zip`` where a checkpoint is
read, ``shipped:four_in_a_row_solved`` is ``four_in_a_row_solved.jsonl.gz`` where a position
set is read. Each module that reads a sort of file defines its kind; this module holds the
one resolver (``resolve``) and the checkpoints' kind (``CHECKPOINTS``). Anything that is not
``shipped:NAME`` is a path and stays one.

The files are found with ``importlib.resources`` relative to the package, never the working
directory, so a wheel install and a source checkout behave alike. Only plain folders are
supported (a regular install or an editable one), not a zipped package.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

PREFIX = "shipped:"
"""What starts the spec of a shipped file."""


@dataclass(frozen=True)
class Kind:
    """One sort of shipped file.

    Attributes:
        what: how messages name one such file (``"checkpoint"``).
        package: the package that holds them (``"boardgym.checkpoints"``).
        folder: their folder inside that package (``""``: the package's own folder).
        suffixes: how their file names end, in order of preference (``(".zip",)``); the
            first one that matches a file gives its name.
    """

    what: str
    package: str
    folder: str
    suffixes: tuple[str, ...]

    def directory(self) -> Path:
        """The folder that holds the files of this kind."""
        return Path(str(files(self.package))) / self.folder

    def name_of(self, filename: str) -> str | None:
        """The shipped name a file called ``filename`` would have (None: not of this kind)."""
        return next((filename[:-len(suffix)] for suffix in self.suffixes
                     if filename.endswith(suffix) and len(filename) > len(suffix)), None)

    def names(self) -> list[str]:
        """The names of the shipped files of this kind, sorted."""
        found = (self.name_of(path.name) for path in self.directory().iterdir()
                 if path.is_file())
        return sorted({name for name in found if name is not None})

    def path(self, name: str) -> Path:
        """Where the file ``name`` of this kind is, or would be: the first suffix with a file,
        else the first suffix (a name need not be shipped: see ``file``)."""
        candidates = [self.directory() / f"{name}{suffix}" for suffix in self.suffixes]
        return next((path for path in candidates if path.is_file()), candidates[0])

    def file(self, name: str) -> Path:
        """The shipped file called ``name``.

        Raises:
            FileNotFoundError: no shipped file of this kind has that name (the message
                lists the names there are).
        """
        known = self.names()
        if name not in known:
            raise FileNotFoundError(f"no shipped {self.what} {name!r}; the shipped "
                                    f"{self.what}s: {self.listing()}")
        return self.path(name)

    def listing(self) -> str:
        """The specs of the shipped files of this kind, comma-separated."""
        return ", ".join(f"{PREFIX}{name}" for name in self.names()) or "none"


CHECKPOINTS = Kind("checkpoint", "boardgym.checkpoints", "", (".zip",))
"""The shipped checkpoints: ``checkpoints/NAME.zip`` of the repository."""


def is_shipped(spec: str | Path) -> bool:
    """True when ``spec`` reads as ``shipped:NAME`` (a ``Path`` too, as its text)."""
    return str(spec).startswith(PREFIX)


def resolve(spec: str | Path, kind: Kind = CHECKPOINTS) -> Path:
    """The file ``spec`` names: a shipped file of ``kind`` for ``shipped:NAME``, anything
    else as the path it is (which need not exist).

    Raises:
        FileNotFoundError: ``shipped:NAME`` with a name no shipped file of ``kind`` has.
    """
    if is_shipped(spec):
        return kind.file(str(spec)[len(PREFIX):])
    return Path(spec)


def missing(path: str | Path, kind: Kind = CHECKPOINTS) -> str:
    """What to say of a file of ``kind`` that is not at ``path``: the absolute path looked
    at, then the ``shipped:`` name of a shipped file of the same file name (which works from
    any folder), or else the shipped names there are."""
    looked = Path(path).absolute()
    name = kind.name_of(looked.name)
    if name is not None and name in kind.names():
        return (f"no file {looked}; {PREFIX}{name} is the shipped {kind.what} of that name, "
                "found from any folder")
    return f"no file {looked}; the shipped {kind.what}s: {kind.listing()}"


__all__ = ["CHECKPOINTS", "PREFIX", "Kind", "is_shipped", "missing", "resolve"]
