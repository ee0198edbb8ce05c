"""Read table rows straight from the b-tree pages of a damaged SQLite file, for `concord check --repair`.

Why: SQLite refuses a whole query at the first bad page, and a truncated file (its header counting pages past the
end) makes it refuse even the schema, while most pages are intact. The sqlite3 shell's `.recover` reads pages
instead, but it is not reachable from Python (the sqlite3 module has no recovery API; APSW ships a shell built
without it; the system `sqlite3` binary is not on every machine, and its 3.40 `.recover` fails on a truncated WAL
file). So this walks each table's b-tree from its root page with dissect.database (Fox-IT's maintained SQLite
file-format parser: page headers, cells, varints, records, overflow chains, committed WAL frames), skipping any
page it cannot parse, and yields (rowid, values) per row. Only table b-trees are read: indexes are rebuilt.

The file is opened with Python's `open()`: call this only while no SQLite connection of this process is open on
it (DESIGN.md: closing any descriptor of the file drops SQLite's locks).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dissect.database.sqlite3 import sqlite3 as dissect_sqlite3

LEAF_TABLE = 0x0D
INTERIOR_TABLE = 0x05


@dataclass
class PageWalk:
    """What one walk found: rows (rowid, values) and the pages and rows it had to skip."""

    rows: list[tuple[int, list[Any]]] = field(default_factory=list)
    bad_pages: int = 0  # pages missing (past the end of a truncated file) or unparseable
    bad_rows: int = 0  # cells on readable pages whose record (or overflow chain) could not be read


class PageReader:
    """A damaged SQLite file read page by page (see the module docstring)."""

    def __init__(self, path: str | Path) -> None:
        self.db = dissect_sqlite3.SQLite3(Path(path))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "PageReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def application_id(self) -> int:
        return int(self.db.header.application_id)

    @property
    def user_version(self) -> int:
        return int(self.db.header.user_version)

    def schema(self) -> list[tuple[str, str, str, int, str | None]]:
        """The rows of sqlite_master that could be read: (type, name, tbl_name, rootpage, sql)."""
        out = []
        for _, values in self.table_rows(1).rows:
            if len(values) >= 5 and all(isinstance(v, str) for v in values[:3]) and isinstance(values[3], int):
                out.append((values[0], values[1], values[2], values[3], values[4] if isinstance(values[4], str) else None))
        return out

    def table_rows(self, root: int) -> PageWalk:
        """Every readable row of the table b-tree rooted at page `root`, in b-tree order, in a list."""
        walk = PageWalk()
        walk.rows = list(self.iter_rows(root, walk))
        return walk

    def iter_rows(self, root: int, walk: PageWalk) -> Iterator[tuple[int, list[Any]]]:
        """The same rows one at a time (a large table need not fit in memory); `walk` counts what is skipped."""
        seen: set[int] = set()
        stack = [root]
        while stack:  # depth-first, children pushed in reverse so rows come out in rowid order
            num = stack.pop()
            if num in seen or not 1 <= num <= max(self.db.page_count, 1):
                walk.bad_pages += 1
                continue
            seen.add(num)
            try:
                page = self.db.page(num)
                kind = page.header.flags
                cells = list(page.cells())
            except Exception:  # noqa: BLE001 - any parse failure means this page is lost, not the recovery
                walk.bad_pages += 1
                continue
            if kind == INTERIOR_TABLE:
                stack.append(page.right_page)
                stack.extend(cell.left_page for cell in reversed(cells))
            elif kind == LEAF_TABLE:
                for cell in cells:
                    try:
                        row = (int(cell.key), list(cell.values))
                    except Exception:  # noqa: BLE001 - a bad record or overflow chain loses this row only
                        walk.bad_rows += 1
                        continue
                    yield row
            else:  # an index page (or garbage) where a table page was expected
                walk.bad_pages += 1
