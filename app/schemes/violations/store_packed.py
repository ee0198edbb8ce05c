"""A first load's violation rows packed by the import worker (issue #28 item 2): the chunk's samples, violations and
units as one SQLite database image (app.store.bulk.pack_tables) that the writer copies with an INSERT ... SELECT per
table. Only for a load into a project that holds no sample (app.store.bulk.first_load): every row is new, in file
order, so the copy stores what `ViolationsStore.write_prepared_violation_samples` stores, row for row."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.schemes.violations.store import SCHEME, VIOLATION_COLUMNS, PreparedViolations
from app.store.bulk import pack_tables
from app.store.counts import add_counts
from app.store.samples import WriteCounts

if TYPE_CHECKING:
    from app.store import Project

# the columns a packed sample row holds, in `PreparedViolations.samples` order (scheme and dataset are the writer's)
_SAMPLE_COLUMNS = ("id", "text", "payload", "split", "meta", "content_hash", "line_hash")
_VIOLATION_COLUMNS = tuple(f'"{c}"' for c in VIOLATION_COLUMNS)
_UNIT_COLUMNS = ("sample_id", "scheme", "unit", "summary")


@dataclass(slots=True)
class PackedViolations:
    """A chunk's rows as `pack` made them: the image, how many samples it holds and what they add to `row_counts`."""

    n_samples: int
    image: bytes
    deltas: Counter[tuple[str, str, str]]


def pack(prepared: PreparedViolations) -> PackedViolations:
    """The worker's half: the prepared rows packed into an image (and counted) once the chunk is validated."""
    image = pack_tables([("samples", _SAMPLE_COLUMNS, prepared.samples),
                         ("violations", _VIOLATION_COLUMNS, prepared.violations),
                         ("units", _UNIT_COLUMNS, prepared.units)])
    return PackedViolations(len(prepared.ids), image, prepared.row_deltas())


def write_packed(project: "Project", packed: PackedViolations, dataset_id: int | None) -> WriteCounts:
    """The writer's half, inside the import's transaction: every row copied in the image's (file) order, so the
    violations and units get the ids the row-by-row write gives them. OR FAIL: see the store's `_INSERT_VIOLATIONS`."""
    dataset = "NULL" if dataset_id is None else str(int(dataset_id))  # an int from the store: nothing to escape
    src = project.bulk.packed(packed.image)
    viol_cols, unit_cols = ", ".join(_VIOLATION_COLUMNS), ", ".join(_UNIT_COLUMNS)
    with project.transaction() as c:
        rest = ", ".join(_SAMPLE_COLUMNS[1:])  # the columns after id, as packed
        c.execute(f"INSERT OR FAIL INTO samples (id, scheme, dataset_id, {rest}) "
                  f"SELECT id, '{SCHEME}', {dataset}, {rest} FROM {src}.samples ORDER BY rowid")
        c.execute(f"INSERT OR FAIL INTO violations ({viol_cols}) SELECT {viol_cols} FROM {src}.violations ORDER BY rowid")
        c.execute(f"INSERT OR FAIL INTO units ({unit_cols}) SELECT {unit_cols} FROM {src}.units ORDER BY rowid")
        deltas = Counter(packed.deltas)
        deltas[("samples", SCHEME, "")] += packed.n_samples
        add_counts(c, deltas)
    return WriteCounts(added=packed.n_samples)
