"""The base of a scheme's store part (composition: `project.store(name)` builds the scheme's store contribution's
`PART` with the project, app/store/samples.py). A part reads and writes through the project's one connection and
its transactions, so its writes join a caller's transaction (e.g. an import's) as the project's own do."""
from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.store.assembled import Project


class ProjectPart:
    """A store part whose tables the project's released migrations create (app/store/schema.py): `create_tables`
    has nothing to do. A part with tables of its own overrides it (CREATE TABLE IF NOT EXISTS ...)."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def create_tables(self) -> None:
        """Nothing to create: the migrations made this part's tables."""

    @property
    def conn(self) -> sqlite3.Connection:
        return self.project.conn

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return self.project.transaction()

    def query(self, sql: str, params: tuple | dict = ()) -> list[Any]:
        return self.project.query(sql, params)

    def scalar(self, sql: str, params: tuple | dict = ()) -> Any:
        return self.project.scalar(sql, params)
