"""Store adapter of the `violations` scheme: its own `violations` table (one row per violation, so the pair table
and the list's category filter stay fast), samples and units (import workers prepare the rows: `prepare_violation_samples`),
and the row counts `concord status` prints."""
from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, groupby
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from app.schemes.contracts import StatusText
from app.schemes.violations.store_configs import MatchConfigs
from app.store.bulk import insert_flat
from app.store.counts import add_counts, count_rows, stored_counts, unit_counts
from app.store.project import dumps
from app.store.samples import WriteCounts, content_hash
from calibration.schemes.violations.parse import PlainSample
from calibration.schemes.violations.records import GROUND_TRUTH, VIOLATION_FIELDS, Violation, ViolationSample

if TYPE_CHECKING:
    from app.store import Project

SCHEME = "violations"
_EMPTY = "{}"


# a violation's fields in store column order (the order of the rows below); attrgetter: a third of a getattr loop
_FIELDS = attrgetter(*VIOLATION_FIELDS)
_NO_HOWS: Mapping[str, Sequence[str]] = {}


# The violations table's columns as the rows below hold them (`grounding`: how import placed the violation)
VIOLATION_COLUMNS = ("sample_id", "checker", "idx", *VIOLATION_FIELDS, "grounding")
_WIDTH = len(VIOLATION_COLUMNS)
# OR FAIL: these rows are all new (replaced samples' rows are deleted first) and any failure rolls back the caller's
# savepoint, so a statement need not undo its own rows: without foreign key checks (bulk.first_load) a multi-row
# INSERT then keeps no statement journal (each copied ~7 pages to it: 200 MB of writes for 100k samples).
_INSERT_VIOLATIONS = "INSERT OR FAIL INTO violations (" + ", ".join(f'"{c}"' for c in VIOLATION_COLUMNS) + ") VALUES "
_INSERT_UNITS = "INSERT OR FAIL INTO units (sample_id, scheme, unit, summary) VALUES "
_INSERT_SAMPLES = "INSERT INTO samples (id, scheme, dataset_id, text, payload, split, meta, content_hash, line_hash) VALUES "
_INSERT_NEW_SAMPLES = _INSERT_SAMPLES.replace("INSERT INTO", "INSERT OR FAIL INTO")  # none of the ids is stored
_UPSERT_SAMPLES = (" ON CONFLICT(id) DO UPDATE SET dataset_id=excluded.dataset_id, text=excluded.text, "
                   "payload=excluded.payload, split=excluded.split, meta=excluded.meta, content_hash=excluded.content_hash, "
                   "line_hash=excluded.line_hash")

_SAMPLE_WIDTH = 7  # a sample's values as written: id, text, payload, split, meta json, content hash, line hash
_UNIT_WIDTH = 4  # a unit's: sample id, scheme, unit, summary


@dataclass(slots=True)
class PreparedViolations:
    """The store rows of a batch of samples (`prepare_violation_samples`, perhaps in an import worker), each table's
    values one flat list, row after row: a chunk crosses the pipe from a worker as a few lists rather than objects per
    sample, and is written several rows per statement (insert_flat) without a loop over its samples when they are
    all new. `n_violations[i]`, `n_units[i]`: how many violation and unit rows sample i has."""

    ids: list[str]
    hashes: list[str]
    samples: list[Any]  # _SAMPLE_WIDTH values per sample
    violations: list[Any]  # VIOLATION_COLUMNS per violation
    n_violations: list[int]
    units: list[Any]  # _UNIT_WIDTH values per unit
    n_units: list[int]

    def only(self, keep: Sequence[int]) -> "PreparedViolations":
        """The rows of the samples at `keep` (indices, in order)."""
        v_at, u_at = list(accumulate(self.n_violations, initial=0)), list(accumulate(self.n_units, initial=0))
        sw, vw, uw = _SAMPLE_WIDTH, _WIDTH, _UNIT_WIDTH
        return PreparedViolations(
            [self.ids[i] for i in keep], [self.hashes[i] for i in keep],
            list(chain.from_iterable(self.samples[i * sw : (i + 1) * sw] for i in keep)),
            list(chain.from_iterable(self.violations[v_at[i] * vw : v_at[i + 1] * vw] for i in keep)),
            [self.n_violations[i] for i in keep],
            list(chain.from_iterable(self.units[u_at[i] * uw : u_at[i + 1] * uw] for i in keep)),
            [self.n_units[i] for i in keep])

    def row_deltas(self) -> Counter[tuple[str, str, str]]:
        """What writing these rows adds to `row_counts`: violations per checker, ungrounded ones, units (samples: the
        writer counts those it adds)."""
        viol_rows = self.violations
        deltas = count_rows(self.units, _UNIT_WIDTH, 1, 2)
        deltas.update({("violations", SCHEME, k): n for k, n in Counter(viol_rows[1::_WIDTH]).items()})
        deltas[("ungrounded", SCHEME, "")] += viol_rows[_WIDTH - 1::_WIDTH].count("ungrounded")
        return deltas


def prepare_violation_samples(
    samples: Iterable[ViolationSample | PlainSample],
    groundings: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    metas: Mapping[str, Mapping[str, Any] | None] | None = None,
    line_hashes: Mapping[str, bytes] | None = None,
) -> PreparedViolations:
    """The samples' store rows: per sample (id, text, payload, split, meta json, content hash, raw line hash), its
    violation rows (VIOLATION_COLUMNS) and unit rows. `line_hashes`: id -> raw JSONL line hash (None elsewhere).

    The pure half of a write (no connection), so import workers can run it in other processes (staging below).
    A `PlainSample` (import's shortcut for a record valid as it stands) holds its violations' fields already.
    Rows hold one str object per distinct repeated value (checker, rule, category, explanation, correction, split,
    unit summary): the rows of a chunk cross a pipe from a worker, and pickle writes a shared object once and refers to
    it after (the importer unpickles them in half the time, and holds one copy); a memo as the rows are built costs
    a fifth of rebuilding every row afterwards.
    """
    groundings = groundings or {}
    metas = metas or {}
    line_hash = (line_hashes or {}).get
    one: Any = {}.setdefault
    out = PreparedViolations([], [], [], [], [], [], [])
    viol_rows, unit_rows = out.violations, out.units
    for s in samples:
        sid = s.id
        meta = metas.get(sid)
        how = groundings.get(sid, _NO_HOWS)
        n_rows = len(viol_rows)
        preds = [(one(k, k), vs) for k, vs in sorted(s.predictions.items())]
        plain = type(s) is PlainSample  # its violations are their fields in VIOLATION_FIELDS order already
        # Every dict built in sorted key order (predictions sorted by checker), so orjson need not sort them again
        payload = {
            "context": s.context,
            "gt": _violation_rows(sid, GROUND_TRUTH, s.ground_truth if plain else map(_FIELDS, s.ground_truth),
                                  how.get(GROUND_TRUTH, ()), viol_rows, one),
            "meta": meta,
            "pred": {k: _violation_rows(sid, k, vs if plain else map(_FIELDS, vs), how.get(k, ()), viol_rows, one)
                     for k, vs in preds},
            "split": s.split, "text": s.text,
        }
        # unchanged since schema 1: a re-import of an old file is still a no-op. meta is the file's own object (its
        # keys in any order): sorted by the hash then.
        h = content_hash(payload, key_ordered=meta is None)
        n_gt = len(s.ground_truth)
        for c, vs in preds or [(GROUND_TRUTH, ())]:
            unit_rows.extend((sid, SCHEME, c, one(summary := f'{{"n_gt":{n_gt},"n_pred":{len(vs)}}}', summary)))
        extra = _EMPTY if s.context is None else dumps({"context": s.context})
        split = s.split
        out.ids.append(sid)
        out.hashes.append(h)
        out.samples.extend((sid, s.text, extra, one(split, split), None if meta is None else dumps(meta), h, line_hash(sid)))
        out.n_violations.append((len(viol_rows) - n_rows) // _WIDTH)
        out.n_units.append(len(preds) or 1)
    return out


def _violation_rows(sid: str, checker: str, vs: Iterable[tuple[Any, ...]], hows: Sequence[str], rows: list[Any],
                    one: Any) -> list[dict[str, Any]]:
    """Append the store rows of one violation list (each violation's fields in VIOLATION_FIELDS order) to the flat
    `rows`; return the list as the content hash reads it. One pass over the fields for both."""
    out = []
    n_hows = len(hows)
    for i, (start, end, quote, rule, cat, expl, corr) in enumerate(vs):
        # the content hash's view of a violation (VIOLATION_FIELDS), keys in sorted order: see `prepare_...` above
        out.append({"category": cat, "correction": corr, "end": end, "explanation": expl, "quote": quote,
                    "rule": rule, "start": start})
        g = hows[i] if i < n_hows else ("offsets" if start is not None and end is not None else "ungrounded")
        rows.extend((sid, checker, i, start, end, quote, one(rule, rule), one(cat, cat), one(expl, expl), one(corr, corr), g))
    return out


class ViolationsStore(MatchConfigs):
    """The violations scheme's store part (`project.store("violations")`, or `store_of(project)` typed): its samples
    with their violations, the lists the view offers, human matches, counts, and match configs (MatchConfigs). Its
    tables come from the released migrations."""

    def write_violation_samples(
        self,
        samples: Sequence[ViolationSample | PlainSample],
        groundings: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
        metas: Mapping[str, Mapping[str, Any] | None] | None = None,
        dataset_id: int | None = None,
        line_hashes: Mapping[str, bytes] | None = None,
    ) -> WriteCounts:
        """Insert or replace samples; an unchanged sample (same content hash) is left alone, so re-imports are no-ops.

        `groundings[sample_id][checker]` lists how each violation was located ('offsets', 'exact', 'casefold',
        'fuzzy', 'ungrounded'), parallel to the violation lists. `line_hashes`: id -> raw JSONL line hash.
        """
        return self.write_prepared_violation_samples(
            prepare_violation_samples(samples, groundings, metas, line_hashes), dataset_id, line_hashes)

    def write_prepared_violation_samples(self, prepared: PreparedViolations, dataset_id: int | None = None,
                                         line_hashes: Mapping[str, bytes] | None = None) -> WriteCounts:
        """`write_violation_samples` of rows `prepare_violation_samples` made (perhaps in an import worker; the line
        hashes it was given are the ones written: `line_hashes` here only refreshes those of unchanged samples)."""
        counts = WriteCounts()
        existing = {} if self.project.bulk.into_empty else self.project.samples.existing_hashes(prepared.ids)
        replaced: list[str] = []
        if existing:
            todo, existed = self.project.samples.changed_samples(SCHEME, list(zip(prepared.ids, prepared.hashes)), counts,
                                                         line_hashes, existing)
            replaced = [sid for sid in prepared.ids if sid in existed]
            keep = [i for i, sid in enumerate(prepared.ids) if sid in todo]
            if len(keep) < len(prepared.ids):
                prepared = prepared.only(keep)
        else:  # all new (a first import): the batch is written as it came, with no upsert (no id can conflict)
            counts.added = len(prepared.ids)
        viol_rows, unit_rows = prepared.violations, prepared.units
        with self.transaction() as c:
            deltas = unit_counts(c, replaced)
            deltas.update(_violation_counts(c, replaced, -1))
            for sid in replaced:
                c.execute("DELETE FROM violations WHERE sample_id = ?", (sid,))
                c.execute("DELETE FROM units WHERE sample_id = ?", (sid,))
            # the dataset a literal: one parameter fewer per sample (an int from the store, so nothing to escape)
            dataset = "NULL" if dataset_id is None else str(int(dataset_id))
            row = f"(?, 'violations', {dataset}, ?, ?, ?, ?, ?, ?)"
            if existing:
                insert_flat(c, _INSERT_SAMPLES, row, prepared.samples, _UPSERT_SAMPLES)
            else:
                insert_flat(c, _INSERT_NEW_SAMPLES, row, prepared.samples)
            insert_flat(c, _INSERT_VIOLATIONS, "(" + ",".join("?" * _WIDTH) + ")", viol_rows)  # (ids in file order)
            insert_flat(c, _INSERT_UNITS, "(?, ?, ?, ?)", unit_rows)
            deltas[("samples", SCHEME, "")] += counts.added
            deltas.update(prepared.row_deltas())
            add_counts(c, deltas)
        return counts

    def violation_samples(self, ids: Sequence[str] | None = None, *, curated: bool = False) -> list[ViolationSample]:
        """Load samples with all their violations (ground truth under checker '').

        `curated`: a sample's resolved human ground truth (label kind `ground_truth`, unit '', issue #15) replaces
        the file's, as calibration, evaluation and export want; match indices then refer to the curated list."""
        if curated:
            found = self.violation_samples(ids)
            gt = self.curated_ground_truth([s.id for s in found] if ids is not None else None)
            if not gt:
                return found
            from calibration.schemes.violations.curation import with_ground_truth

            return [with_ground_truth(s, gt.get(s.id)) for s in found]
        where, params = "", ()
        if ids is not None:
            if not ids:
                return []
            where, params = f" AND s.id IN ({','.join('?' * len(ids))})", tuple(ids)
        texts = {
            r[0]: r[1:]
            for r in self.conn.execute(
                f"SELECT id, text, json_extract(payload, '$.context'), split FROM samples s "
                f"WHERE scheme='violations'{where} ORDER BY rowid", params)
        }
        viols: dict[str, dict[str, tuple[Violation, ...]]] = {sid: {} for sid in texts}
        vwhere = where.replace("s.id", "sample_id")
        # columns in Violation's field order, rows grouped per unit by the ORDER BY: one tuple per unit, built
        # with starmap (no per-row dict lookups; this loop runs once per violation, 600k times at 100k samples)
        cur = self.conn.execute(
            f'SELECT sample_id, checker, rule, start, "end", quote, category, explanation, correction FROM violations '
            f"WHERE 1=1{vwhere} ORDER BY sample_id, checker, idx",
            params,
        )
        # rules, categories, explanations and corrections repeat across violations: one str object per distinct
        # value (SQLite returns a new one per row; about 300 bytes per violation, 180 MB at 100k samples)
        one = {}.setdefault
        for (sid, checker), rows in groupby(cur, key=itemgetter(0, 1)):
            viols[sid][checker] = tuple(Violation(one(r, r), s, e, q, one(c, c), one(x, x), one(k, k))
                                        for _, _, r, s, e, q, c, x, k in rows)
        # A checker that ran on a sample and found nothing has a unit but no violation rows: it still owes the
        # sample's ground truth as false negatives, so it must come back as an empty prediction list.
        for sid, checker in self.conn.execute(
            f"SELECT sample_id, unit FROM units WHERE scheme = 'violations' AND unit != ''{vwhere}", params
        ):
            if sid in viols:
                viols[sid].setdefault(checker, ())
        out = []
        for sid, (text, context, split) in texts.items():
            by = viols[sid]
            gt = by.pop(GROUND_TRUTH, ())
            out.append(ViolationSample(sid, text, gt, by, context, split))
        return out

    def violation_columns(self, *, curated: bool = True) -> Any:
        """Every violation of the project as `ViolationColumns` (calibration/schemes/violations/columns.py), the
        curated ground truth in place of the file's as `violation_samples(curated=True)` has it (`curated`=False:
        the file's, as stored): what the violations view builds its pair table from (`concord evaluate` reads
        them window by window: `violation_windows`). Rows are read in chunks, each turned into arrays at once: no
        object per violation is kept (600k `Violation`s took seconds and about 360 MB at 100k samples). Per chunk
        the numbers are taken by C-level getters and each row's texts are found as one tuple among the chunk's
        distinct ones (pandas' hash table): a transpose of every row (`zip(*rows)`) and a dict lookup per text were
        half the read at 100k samples. Units come as one list of sample rowids per checker from SQL (no string per
        unit)."""
        chosen = self.curated_ground_truth() if curated else None
        return self._window_columns(None, chosen)

    def violation_windows(self, *, curated: bool = True) -> Any:
        """The violations as `ColumnWindows`: `violation_columns` of consecutive windows of samples (by rowid), each
        read when the caller gets to it, so `concord evaluate` holds one window's columns and pair table at a time
        (issue #28: the whole project's were 5.8 GB at 1M samples). `windows(None)`: one window of every sample."""
        import numpy as np

        from calibration.schemes.violations.columns import ColumnWindows

        chosen = self.curated_ground_truth() if curated else None

        def read(size: int | None) -> Any:
            if size is None:
                yield self._window_columns(None, chosen)
                return
            # every window from one snapshot of the file (a read transaction, unless the caller has one open), so a
            # write by another process between two windows is not half seen; it ends with the last window
            own = not self.conn.in_transaction
            if own:
                self.conn.execute("BEGIN")
            try:
                (listed,) = self.conn.execute(
                    "SELECT group_concat(rowid) FROM (SELECT rowid FROM samples WHERE scheme = 'violations' ORDER BY rowid)"
                ).fetchone()
                rowids = np.sort(np.fromstring(listed or "", dtype=np.int64, sep=","))
                for lo in range(0, rowids.size, size):
                    yield self._window_columns((int(rowids[lo]), int(rowids[min(lo + size, rowids.size) - 1])), chosen)
            finally:
                if own and self.conn.in_transaction:
                    self.conn.execute("COMMIT")

        return ColumnWindows(read)

    def _window_columns(self, rowids: tuple[int, int] | None, chosen: Mapping[str, Any] | None) -> Any:
        """`violation_columns` of the samples whose rowid is in the closed range `rowids` (None: every sample), the
        curated ground truth `chosen` (sample id -> value) in place of the file's."""
        import numpy as np

        from calibration.schemes.violations.columns import CODED_FIELDS, TextCodes, ViolationColumns, object_array

        within, params = ("", ()) if rowids is None else (" AND s.rowid BETWEEN ? AND ?", rowids)
        ids_of, ids = _columns(self.conn.execute(
            f"SELECT s.rowid, s.id FROM samples s WHERE s.scheme = 'violations'{within} ORDER BY s.rowid", params), 2)
        sample_rowids = np.array(ids_of, dtype=np.int64)
        # sample, start, end, then the codes of checker, rule, category, explanation, correction
        parts: list[list[np.ndarray]] = [[np.empty(0, dtype=t)] for t in (np.int64, *(np.float64,) * 2, *(np.int32,) * 5)]
        texts = _Texts()
        factory = self.conn.text_factory
        self.conn.text_factory = bytes  # texts as their UTF-8 bytes, decoded once per distinct value (_Texts)
        try:
            cur = self.conn.execute(
                'SELECT s.rowid, v.start, v."end", v.checker, v.rule, v.category, v.explanation, v.correction '
                f"FROM samples s JOIN violations v ON v.sample_id = s.id WHERE s.scheme = 'violations'{within} "
                "ORDER BY s.rowid, v.checker, v.idx", params)  # a unit's rows in list order
            while rows := cur.fetchmany(_CHUNK):
                for out, column in zip(parts, _chunk_columns(rows, sample_rowids, texts)):
                    out.append(column)
            del rows
            unit_sample, unit_checker = self._unit_columns(sample_rowids, texts, within, params)
        finally:
            self.conn.text_factory = factory
        sample, start, end, *coded = (np.concatenate(p) for p in parts)
        codes = TextCodes(texts.array(), dict(zip(CODED_FIELDS, (unit_checker, *coded))))
        shared = texts.array(none_last=True)  # code -1 -> None
        checker, *rest = (shared[c] for c in coded)
        cols = ViolationColumns(object_array(ids), unit_sample, shared[unit_checker], sample, checker, start, end, *rest,
                                codes=codes)
        if not chosen:
            return cols
        from calibration.schemes.violations.curation import violations_of

        mine = chosen if rowids is None else {sid: chosen[sid] for sid in ids if sid in chosen}
        return cols.with_ground_truth({sid: violations_of(value) for sid, value in mine.items()}) if mine else cols

    def _unit_columns(self, sample_rowids: Any, texts: _Texts, within: str = "", params: tuple[Any, ...] = ()
                      ) -> tuple[Any, Any]:
        """(sample index, checker code) of every unit with a checker (a prediction entry), grouped by checker: SQL joins
        each unit to its sample's rowid and lists them per checker (one text of numbers each), so no unit row becomes
        Python objects (400k (id, unit) rows were a fifth of the read at 100k samples)."""
        import numpy as np

        samples: list[np.ndarray] = [np.empty(0, dtype=np.int64)]
        checkers: list[np.ndarray] = [np.empty(0, dtype=np.int32)]
        for checker, n, listed in self.conn.execute(
                # CROSS JOIN: samples outer (SQLite keeps that order), each one's units by their (sample_id, unit)
                # index; the planner's own choice (units by unit, a sample lookup per unit) took half again as long
                "SELECT u.unit, COUNT(*), group_concat(s.rowid) FROM samples s CROSS JOIN units u ON u.sample_id = s.id "
                f"WHERE u.scheme = 'violations' AND u.unit != '' AND s.scheme = 'violations'{within} GROUP BY u.unit", params):
            found = np.fromstring(listed, dtype=np.int64, sep=",")
            if found.size != n:  # not one number per unit: the join said otherwise (cannot happen; never guess)
                raise RuntimeError(f"units of checker {checker!r}: {found.size} rowids for {n} units")
            samples.append(np.searchsorted(sample_rowids, found))
            checkers.append(np.full(n, texts.codes([checker])[0], dtype=np.int32))  # its UTF-8 bytes, as the rows'
        return np.concatenate(samples), np.concatenate(checkers)

    def curated_ground_truth(self, ids: Sequence[str] | None = None) -> dict[str, list[dict[str, Any]]]:
        """sample_id -> the resolved curated ground truth (violations as import reads them), where humans gave one."""
        where, params = "", ()
        if ids is not None:
            where, params = f" AND l.sample_id IN ({','.join('?' * len(ids))})", tuple(ids)
        excluded = self.project.guidelines.excluded_labels  # labels not valid under a guideline version (issue #29)
        return {sid: json.loads(v) for sid, v, who in self.conn.execute(
            "SELECT l.sample_id, l.value, l.annotator FROM labels l JOIN samples s ON s.id = l.sample_id "
            "WHERE l.kind = 'ground_truth' "
            f"AND l.unit = '' AND l.resolved = 1 AND l.value IS NOT NULL AND s.scheme = 'violations'{where}", params)
            if not excluded or (sid, "", who) not in excluded}

    def violation_sample(self, sample_id: str) -> ViolationSample | None:
        found = self.violation_samples([sample_id])
        return found[0] if found else None

    def violation_groundings(self, sample_id: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for checker, g in self.conn.execute(
            "SELECT checker, grounding FROM violations WHERE sample_id = ? ORDER BY checker, idx", (sample_id,)
        ):
            out.setdefault(checker, []).append(g)
        return out

    def checkers(self) -> list[str]:
        return [r[0] for r in self.conn.execute(
            "SELECT DISTINCT unit FROM units WHERE scheme = 'violations' AND unit != '' ORDER BY unit")]

    def categories(self) -> list[str]:
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT DISTINCT category FROM violations WHERE category IS NOT NULL AND category != '' ORDER BY category"
            )
        ]

    def rules(self) -> list[str]:
        """Every rule named in the project (ground truth and predictions): the choices when a human adds one."""
        return [r[0] for r in self.conn.execute(
            "SELECT DISTINCT rule FROM violations WHERE rule IS NOT NULL AND rule != '' ORDER BY rule")]

    def human_matches(self) -> dict[tuple[str, str], set[tuple[int, int]]]:
        """Current human match decisions per (sample_id, checker); a unit present here is human-labeled."""
        out: dict[tuple[str, str], set[tuple[int, int]]] = {}
        for sid, unit, value in self.conn.execute(
            "SELECT l.sample_id, l.unit, l.value FROM labels l JOIN samples s ON s.id = l.sample_id "
            "WHERE l.kind = 'matches' AND l.resolved = 1 AND s.scheme = ? AND l.value IS NOT NULL", (SCHEME,)
        ):
            out[(sid, unit)] = {(int(g), int(p)) for g, p in json.loads(value)}
        return out

    def violation_counts(self) -> tuple[dict[str, int], int]:
        """(violations per checker, ground truth under ''; ungrounded violations) for `concord status`."""
        per_checker = {k: n for (_, k), n in stored_counts(self.conn, "violations").items()}  # kept on write
        return per_checker, sum(stored_counts(self.conn, "ungrounded").values())


def _violation_counts(conn: sqlite3.Connection, sample_ids: Sequence[str], sign: int) -> Counter[tuple[str, str, str]]:
    """Violations of the given samples per checker and ungrounded ones, times `sign` (for the counts on delete)."""
    out: Counter[tuple[str, str, str]] = Counter()
    for i in range(0, len(sample_ids), 900):
        chunk = list(sample_ids[i : i + 900])
        for checker, n, ungrounded in conn.execute(
            "SELECT checker, COUNT(*), SUM(grounding = 'ungrounded') FROM violations "
            f"WHERE sample_id IN ({','.join('?' * len(chunk))}) GROUP BY checker", chunk):
            out[("violations", SCHEME, checker)] += sign * n
            out[("ungrounded", SCHEME, "")] += sign * int(ungrounded or 0)
    return out


_CHUNK = 10_000  # violation rows per fetch: the rows' Python objects (~7 MB) live only while one chunk becomes arrays


def _columns(cur: sqlite3.Cursor, n: int) -> tuple[tuple[Any, ...], ...]:
    """A result's columns as tuples (n empty ones when there are no rows)."""
    rows = cur.fetchall()
    return tuple(zip(*rows)) if rows else ((),) * n


_SAMPLE, _START, _END, _TEXTS = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(slice(3, None))


def _chunk_columns(rows: Sequence[tuple[Any, ...]], sample_rowids: Any, texts: _Texts) -> tuple[Any, ...]:
    """One chunk of violation rows (sample rowid, start, end, then the text columns) as columns: each violation's
    sample index, start and end as floats (None -> NaN, as `np.array(..., float64)` reads them), and each text column
    as codes (`texts`: the codes of every string read so far). A row's texts are looked up once, as one tuple (pandas'
    factorize), and only the chunk's distinct tuples are split into columns and coded."""
    import numpy as np
    import pandas as pd

    n = len(rows)
    sample = np.searchsorted(sample_rowids, np.fromiter(map(_SAMPLE, rows), dtype=np.int64, count=n))
    start = np.array(list(map(_START, rows)), dtype=np.float64)
    end = np.array(list(map(_END, rows)), dtype=np.float64)
    codes, distinct = pd.factorize(np.fromiter(map(_TEXTS, rows), dtype=object, count=n))
    return sample, start, end, *(texts.codes(column)[codes] for column in zip(*distinct))


class _Texts:
    """Every distinct text read so far (as SQLite's UTF-8 bytes), each with one code (None: -1), decoded once into one
    str object: rules, categories and checkers repeat across violations, and decoding a str per row was a fifth of
    the read at 100k samples (the pair table compares codes)."""

    def __init__(self) -> None:
        self.index: dict[bytes, int] = {}
        self._decoded: list[str] = []

    def codes(self, values: Iterable[bytes | None]) -> Any:
        import numpy as np

        index = self.index
        out = [-1 if v is None else index.setdefault(v, len(index)) for v in values]
        return np.array(out, dtype=np.int32)

    def array(self, *, none_last: bool = False) -> Any:
        """The strings in code order (`none_last`: and None after them, so code -1 indexes None)."""
        from calibration.schemes.violations.columns import object_array

        done = self._decoded
        for raw in list(self.index)[len(done):]:
            try:
                done.append(raw.decode("utf-8"))
            except UnicodeDecodeError:  # as sqlite3 refuses such a text when it decodes it
                raise sqlite3.OperationalError(f"Could not decode to UTF-8 text {raw[:40]!r}") from None
        return object_array([*done, *([None] if none_last else [])])


def store_of(project: Project) -> ViolationsStore:
    """The project's violations store part, typed (what `project.store("violations")` returns)."""
    return project.store(SCHEME)


# -- hooks the generic store reads (app/store/samples.py SchemeDataPart, counts.py CountsPart.status_counts) ----------
def status_counts(project: Any) -> dict[str, Any]:
    """What `concord status` adds for violations: ground-truth, predicted (per checker) and ungrounded violations."""
    per_checker, ungrounded = store_of(project).violation_counts()
    return {"ground_truth_violations": per_checker.pop(GROUND_TRUTH, 0), "predicted_violations": per_checker,
            "ungrounded_violations": ungrounded}


def status_text(counts: Mapping[str, Any]) -> StatusText:
    """How `concord status` prints them: after the samples line, and predicted violations per checker (unit)."""
    return StatusText(f"; ground-truth violations: {counts['ground_truth_violations']}"
                      f"; ungrounded quotes: {counts['ungrounded_violations']}", counts["predicted_violations"])


def rebuild_counts(conn: sqlite3.Connection) -> None:
    """Recompute this adapter's row counts (app/store/counts.py): violations per checker, ungrounded ones."""
    conn.execute("DELETE FROM row_counts WHERE scheme = ? AND tbl IN ('violations', 'ungrounded')", (SCHEME,))
    conn.execute("INSERT INTO row_counts SELECT 'violations', ?, checker, COUNT(*) FROM violations GROUP BY checker",
                 (SCHEME,))
    conn.execute("INSERT INTO row_counts SELECT 'ungrounded', ?, '', COUNT(*) FROM violations "
                 "WHERE grounding = 'ungrounded' HAVING COUNT(*) > 0", (SCHEME,))


def load_records(project: Any) -> list[Any]:
    """The violations samples as `ViolationRecord`s (the scheme's record type), meta from the samples table."""
    from calibration.schemes.violations.parse import ViolationRecord

    metas = {sid: None if m is None else json.loads(m)
             for sid, m in project.conn.execute("SELECT id, meta FROM samples WHERE scheme = ?", (SCHEME,))}
    return [ViolationRecord(s, metas.get(s.id), {}) for s in store_of(project).violation_samples(curated=True)]


class SpanCounts(NamedTuple):
    """What the scheme's `label_items` reads of a sample: how many ground-truth violations it has and how many each
    checker predicted, as ranges of those lengths in place of the violations."""

    ground_truth: range
    predictions: dict[str, range]


def item_records(project: Any) -> dict[str, Any]:
    """Sample id -> a record holding the sample's `SpanCounts` (the curated ground truth's length where humans gave
    one, as `load_records`), counted in SQL: agreement at 100k samples built every sample with its violations only
    to take these lengths. Each sample's counts come as one JSON text ([[checker, n], ...] by checker), read in the
    violations' (sample, checker) index order (a seek per sample in the samples' order read a 0.5 GB index's pages
    at random at 1M samples), and samples with the same text (and curated length) share one record, made once."""
    import orjson

    from calibration.schemes.violations.parse import ViolationRecord

    curated = {sid: len(value) for sid, value in store_of(project).curated_ground_truth().items()}
    texts: dict[str, str] = {}  # equal texts one object
    counted = {sid: texts.setdefault(text, text) for sid, text in project.conn.execute(
        "SELECT v.sample_id, (SELECT json_group_array(json_array(checker, n)) FROM (SELECT checker, COUNT(*) AS n "
        "FROM violations w WHERE w.sample_id = v.sample_id GROUP BY checker ORDER BY checker)) "
        "FROM (SELECT DISTINCT sample_id FROM violations) v")}
    del texts
    shared: dict[tuple[str, int | None], Any] = {}
    out: dict[str, Any] = {}
    for (sid,) in project.conn.execute("SELECT id FROM samples WHERE scheme = ? ORDER BY rowid", (SCHEME,)):
        key = (counted.get(sid, "[]"), curated.get(sid))  # no violations: the empty array json_group_array gives
        record = shared.get(key)
        if record is None:
            by_checker = dict(orjson.loads(key[0]))
            if key[1] is not None:
                by_checker[GROUND_TRUTH] = key[1]
            preds = {c: range(n) for c, n in by_checker.items() if c != GROUND_TRUTH}
            record = shared[key] = ViolationRecord(SpanCounts(range(by_checker.get(GROUND_TRUTH, 0)), preds), None, {})
        out[sid] = record
    return out


def evaluation_records(project: Any) -> Any:
    """What the scheme's evaluate hook reads (app/services/evaluation.py): the violations as columns, not records, read
    window by window of samples as the hook asks (`ColumnWindows`)."""
    return store_of(project).violation_windows()


def param_refs(project: Any) -> list[str]:
    """Applied parameters are match configs (so `evaluate --use` and the app read them as before); presets first."""
    return store_of(project).match_config_refs()


def save_params(project: Any, name: str, version: str, params: Mapping[str, Any], origin: str) -> str:
    from calibration.schemes.violations.config import DEFAULT_EMBEDDING, MatchConfig

    config = MatchConfig.from_dict({"name": name, "version": version, "matching": params.get("matching", "greedy"),
                                    "embedding": params.get("embedding") or DEFAULT_EMBEDDING, "weights": params["weights"],
                                    "thresholds": params["thresholds"]})
    return store_of(project).save_match_config(config, origin=origin)


def load_params(project: Any, ref: str) -> dict[str, Any]:
    return store_of(project).match_config(ref).to_dict()


PART = ViolationsStore  # composed: `project.store("violations")` (app/store/samples.py)
BULK_TABLES = ("violations",)  # an import fills it in bulk: its indexes are rebuilt after (app/store/bulk.py)


def units_citing(project: Any, rules: Iterable[str], categories: Iterable[str]) -> set[tuple[str, str]]:
    """(sample, checker) of the units a change of these rules or categories affects (the guideline re-queue, issue
    #29): a checker's violation citing one, or the sample's ground truth citing one (then every checker of it)."""
    rules, categories = sorted(set(rules)), sorted(set(categories))
    if not rules and not categories:
        return set()
    cite = (f"(rule IN ({','.join('?' * len(rules))}) OR category IN ({','.join('?' * len(categories))}))")
    rows = project.conn.execute(
        f"SELECT DISTINCT v.sample_id, u.unit FROM violations v JOIN units u ON u.sample_id = v.sample_id "
        f"AND u.scheme = '{SCHEME}' AND u.unit != '' AND (v.checker = '{GROUND_TRUTH}' OR v.checker = u.unit) "
        f"WHERE {cite}", (*rules, *categories))
    return {(s, u) for s, u in rows}
