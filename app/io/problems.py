"""Problems found in an input file, collected (all of them, not only the first) and reported as one error.

Every problem names its place as `file:line: field: message`, e.g.
`data.jsonl:7: predictions["naive@1|gpt-4o"][2].end: 412 is past the end of the text (380 code points)`.
CSV rows are numbered as in a spreadsheet (the header is row 1); Parquet rows from 1.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from app.errors import UsageError
from calibration.schemes.fields import key, type_name  # noqa: F401 - one helper for both (re-exported)


@dataclass(frozen=True, slots=True)
class Location:
    """Where a record came from: a file and a line (JSONL) or row (CSV, Parquet)."""

    file: str
    number: int | None  # None: the whole file
    unit: str = "line"  # "line", "row", or an entry of a scheme's own file ("sample": FaithBench's samples[i], 1-based)

    def __str__(self) -> str:
        if self.number is None:
            return self.file
        return f"{self.file}:{self.number}" if self.unit == "line" else f"{self.file}:{self.unit} {self.number}"


@dataclass(frozen=True, slots=True)
class Problem:
    location: Location
    field: str  # a path into the record such as `ground_truth[0].rule`; '' for the whole line
    message: str
    code: str = ""  # a warning's kind (calibration/schemes/fields.py WARNING_KINDS), counted in the import summary
    count: int = 1  # how many lines it stands for (a coded warning is reported once per file and field)

    def __str__(self) -> str:
        return f"{self.location}: {self.field}: {self.message}" if self.field else f"{self.location}: {self.message}"


@dataclass
class Problems:
    """A collector shared by the validators of one file."""

    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def error(self, location: Location, field_path: str, message: str) -> None:
        self.errors.append(Problem(location, field_path, message))

    def warn(self, location: Location, field_path: str, message: str, code: str = "", count: int = 1) -> None:
        self.warnings.append(Problem(location, field_path, message, code, count))

    def raise_if_any(self, path: str | Path, what: str = "nothing was imported") -> None:
        if self.errors:
            raise ImportErrors(str(path), self.errors, self.warnings, what)


class ImportErrors(UsageError):
    """The file has problems; nothing was written. `problems` lists every one, in file order."""

    def __init__(self, path: str, problems: Iterable[Problem], warnings: Iterable[Problem] = (),
                 what: str = "nothing was imported") -> None:
        self.path = path
        self.problems = sorted(problems, key=_order)
        self.warnings = list(warnings)
        n = len(self.problems)
        head = f"{path}: {n} problem{'s' if n != 1 else ''} found, {what}:"
        super().__init__("\n".join([head, *(f"  {p}" for p in self.problems)]))

    @property
    def numbers(self) -> list[int]:
        """The line (or row) numbers with problems, ascending, without repeats."""
        return sorted({p.location.number for p in self.problems if p.location.number is not None})


def _order(p: Problem) -> tuple[int, int]:
    n = p.location.number
    return (0, 0) if n is None else (1, n)
