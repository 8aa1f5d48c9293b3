"""The files a report or an export writes, one row each: its name, suffix, the function that writes it and the words
that offer it. The QA report's formats (core/qa/report.py::FORMATS) are such rows, and so are the studio's exports of
a run (app/runs/exports.py::EXPORTS): `whisperkv qa --format`'s choices and help, the QA tab's report folder, the
studio's File ▸ Export menu and its save dialogs' filters are generated from them. A new format is one row and its
writer (docs/architecture.md, "How to add a QA report format")."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generic, Iterable, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class FileFormat(Generic[T]):
    name: str                          # the CLI's choice and the code's key: "csv"
    suffix: str                        # ".csv"
    write: Callable[[T, Path], None]   # writes what is reported (a QA report, a run) to a path
    description: str                   # what the file holds: the CLI's help, the studio's menu item
    kind: str                          # its type in a save dialog's filter: "CSV", "SubRip"

    @property
    def file_filter(self) -> str:
        """`CSV (*.csv)`, as a save dialog lists it."""
        return f"{self.kind} (*{self.suffix})"


def text_writer(render: Callable[[T], str], newline: str | None = None) -> Callable[[T, Path], None]:
    """A writer of the UTF-8 text `render` makes (newline="" leaves a CSV's own line ends alone)."""
    def write(subject: T, path: Path) -> None:
        path.write_text(render(subject), encoding="utf-8", newline=newline)
    return write


def named(formats: Iterable[FileFormat], name: str) -> FileFormat:
    return next(f for f in formats if f.name == name)


def names_help(formats: Iterable[FileFormat]) -> str:
    """`json: everything; csv: one row per clip`: each format in a line of help."""
    return "; ".join(f"{f.name}: {f.description}" for f in formats)
