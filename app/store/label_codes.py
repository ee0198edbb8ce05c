"""Every annotator's current labels as integer-coded columns, a chunk of whole samples at a time (issue #28 item 5:
`concord agreement` at 1M units x 3 annotators).

The rows and chunks of `DecisionsPart.label_column_chunks`, each column numbered once here (its codes in order of
first appearance within the chunk, and its distinct values): agreement numbered the columns that method had already
numbered to share their strings, so every label was hashed twice per column. Within a project whose samples are all
of one scheme the rows are read without the scheme's list of samples (a sort of every sample id into a temporary
b-tree before the first row, a fifth of the read at 100k samples): the samples then checked to exist (else the read
is done again with the list: `UnknownSamples`)."""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from app.store.decisions import whole_sample_fetches


@dataclass
class CodedChunk:
    """One chunk's labels of one scheme, in `label_column_chunks`' order: per column the codes (int64, in order of
    first appearance) and the distinct values (an object array), so that `values[codes]` is the column."""

    scheme: str
    sample: tuple[Any, Any]
    unit: tuple[Any, Any]
    kind: tuple[Any, Any]
    annotator: tuple[Any, Any]
    value: tuple[Any, Any]  # JSON texts

    def __len__(self) -> int:
        return len(self.sample[0])


class UnknownSamples(Exception):
    """A label names no sample of the project: read again with the scheme's samples listed."""


def label_code_chunks(project: Any, schemes: Sequence[str], *, skip: Sequence[str] = (), size: int = 100_000,
                      listed: bool = False) -> Iterator[CodedChunk]:
    """`label_column_chunks(schemes, skip=skip, size=size)` as CodedChunks. `listed`: filter by each scheme's list of
    samples even in a one-scheme project (what the caller does after `UnknownSamples`)."""
    import numpy as np

    conn = project.conn
    present = set(project.counts.sample_counts())
    where = f" AND l.kind NOT IN ({','.join('?' * len(skip))})" if skip else ""
    excluded = project.guidelines.excluded_labels  # app/store/guidelines.py: labels of another guideline
    for name in schemes:
        alone = not listed and present == {name}  # every sample is this scheme's: no list to probe
        scope, params = ("", tuple(skip)) if alone else (" AND l.sample_id IN (SELECT id FROM samples WHERE scheme = ?)",
                                                          (*skip, name))
        # a scan in stored order and SQLite's sorter, not the primary key's walk with a table lookup per row at random
        # in the file: at 1M samples with the file out of the page cache 202 s -> 88 s; same rows, same order (the key)
        cur = conn.execute("SELECT l.sample_id, l.unit, l.kind, l.annotator, l.value FROM labels l NOT INDEXED "
                           f"WHERE l.value IS NOT NULL{where}{scope} ORDER BY l.sample_id, l.unit, l.kind, l.annotator",
                           params)
        seen: list[Any] = []  # the distinct sample ids read (alone: checked against the samples at the end)
        for rows in whole_sample_fetches(cur, size, excluded):
            chunk = _coded(name, rows)
            if alone:
                seen.append(chunk.sample[1])
            yield chunk
        if alone and seen:
            _check_known(conn, np.concatenate(seen))


def _coded(name: str, rows: list[tuple]) -> CodedChunk:
    import numpy as np
    import pandas as pd

    coded = []
    for i in range(5):  # a column at a time straight into an array (zip(*rows) took three times as long)
        column = np.fromiter(map(itemgetter(i), rows), dtype=object, count=len(rows))
        codes, distinct = pd.factorize(column, sort=False)
        coded.append((codes.astype(np.int64, copy=False), _objects(distinct)))
    return CodedChunk(name, *coded)


def _objects(values: Any) -> Any:
    import numpy as np

    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _check_known(conn: Any, ids: Any) -> None:
    """Raise UnknownSamples when a labelled sample id (`ids` ascending, as the labels' order gives them) is not in the
    samples table: one pass beside the samples' id index in its order (SQLite's BINARY order of UTF-8 is Python's
    order of code points), no set of every id."""
    known = iter(conn.execute("SELECT id FROM samples ORDER BY id"))
    have = None
    for sid in ids.tolist():
        while have is None or have < sid:
            row = next(known, None)
            if row is None:
                raise UnknownSamples
            have = row[0]
        if have != sid:
            raise UnknownSamples
