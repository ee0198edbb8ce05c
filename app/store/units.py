"""The review list: units (sample x checker, trait, ...) with their scheme's summary, machine score and the
resolved human status, paged. A unit's summary is JSON (the scheme's `unit_summary`); its keys come back as
columns of the row, and any of them can be sorted on."""
from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.store.parts import ProjectPart

if TYPE_CHECKING:
    from calibration.unit_scores import UnitScores

SORTABLE = {"id": "u.id", "sample_id": "u.sample_id", "scheme": "u.scheme", "unit": "u.unit",
            "machine_f1": "ms.score", "machine_score": "ms.score", "status": "status"}
_SUMMARY_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _order_column(key: str) -> str:
    col = SORTABLE.get(key)
    if col is not None:
        return col
    if _SUMMARY_KEY.match(key):  # a summary key (n_gt, n_pred, mode, ...): checked, so safe to splice in
        return f"json_extract(u.summary, '$.{key}')"
    return "u.id"


def _with_summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for row in rows:
        summary = row.pop("summary", None)
        if summary:
            for k, v in json.loads(summary).items():
                row.setdefault(k, v)
    return rows


def _counts_json(tp: Any, fp: Any, fn: Any, f1: Any, encode: Any) -> str:
    """`encode({"tp": tp, "fp": fp, "fn": fn, "f1": f1})` (sorted keys), by one format string when the figures are
    plain ints and a finite float (what evaluate stores per unit): 200k encoder calls cost a second at 100k samples.
    json writes an int or a float as its repr, so the text is the same."""
    if type(tp) is int and type(fp) is int and type(fn) is int and type(f1) is float and math.isfinite(f1):
        return f'{{"f1":{f1!r},"fn":{fn},"fp":{fp},"tp":{tp}}}'
    return encode({"tp": tp, "fp": fp, "fn": fn, "f1": f1})


def _rows_digest(rows: Sequence[tuple[Any, ...]], score: str) -> str:
    """A digest of the rows `set_machine_scores` is given (and the headline figure's name): equal digests, equal
    stored rows, so an unchanged write is found before the rows are formatted. Each column's repr (unambiguous, and
    the type of every value shows: 1 and 1.0 are stored as different text); by column, not repr(rows): half the time."""
    import hashlib

    h = hashlib.blake2b(repr(score).encode(), digest_size=16)
    for column in zip(*rows) if rows else ():
        h.update(repr(column).encode())
    return h.hexdigest()


def _formatted(rows: Sequence[tuple[Any, ...]], score: str, encode: Any) -> list[tuple[Any, ...]]:
    """(sample_id, unit, headline figure, figures JSON) of each row, as the machine_scores table stores them."""
    out = []
    for row in rows:
        if len(row) == 3:
            sid, unit, figures = row
            head = figures.get(score) if isinstance(figures, Mapping) else None
            text = encode(dict(figures))
        else:
            sid, unit, tp, fp, fn, f1 = row
            head = f1 if score == "f1" else {"tp": tp, "fp": fp, "fn": fn, "f1": f1}.get(score)
            text = _counts_json(tp, fp, fn, f1, encode)
        out.append((sid, unit, None if head is None else float(head), text))
    return out


def _formatted_columns(scores: UnitScores, score: str, encode: Any) -> list[tuple[Any, ...]]:
    """`_formatted` of `UnitScores`: the same rows, each distinct (tp, fp, fn, f1) formatted once by `_counts_json`
    (a few hundred distinct figures among 400k units at 100k samples) and the headline taken from its column."""
    import numpy as np

    code = _row_codes((scores.tp, scores.fp, scores.fn, scores.f1.view(np.int64)))  # f1 by its bits: -0.0, NaN kept
    first = np.empty(int(code.max(initial=-1)) + 1, dtype=np.int64)
    first[code[::-1]] = np.arange(len(code) - 1, -1, -1)  # a row of each distinct code (its first)
    texts = np.empty(len(first), dtype=object)
    texts[:] = [_counts_json(*figures, encode) for figures in zip(
        scores.tp[first].tolist(), scores.fp[first].tolist(), scores.fn[first].tolist(), scores.f1[first].tolist())]
    heads: Any = {"f1": scores.f1, "tp": scores.tp, "fp": scores.fp, "fn": scores.fn}.get(score)
    head = heads.astype(np.float64).tolist() if heads is not None else [None] * len(scores)
    return list(zip(scores.sample_id.tolist(), scores.unit.tolist(), head, texts[code].tolist()))


def _row_codes(columns: Sequence[Any]) -> Any:
    """One code per distinct row of the int64 `columns` (0..k-1): each column factorized by hashing and the codes
    combined two at a time (np.unique(axis=0) sorted the rows: over a second for 800k)."""
    import numpy as np
    import pandas as pd

    code = np.zeros(len(columns[0]), dtype=np.int64)
    for column in columns:
        c, distinct = pd.factorize(column)
        code = pd.factorize(code * len(distinct) + c)[0].astype(np.int64)  # < n_rows**2: no overflow below 3e9 rows
    return code


@dataclass
class UnitFilter:
    statuses: tuple[str, ...] = ()  # any of 'unlabeled', 'accepted', 'corrected', 'skipped', 'flagged'
    units: tuple[str, ...] = ()  # checkers or traits
    scheme: str | None = None
    category: str | None = None
    search: str = ""
    config_ref: str = ""  # the machine figures shown: the window sets the config box's ref; "" shows none
    extra: dict[str, Any] = field(default_factory=dict)
    # blind mode (issue #15): the status is this annotator's own label, not the resolved one ...
    annotator: str | None = None
    # ... and only the units assigned to this annotator are listed (their queue)
    assigned_to: str | None = None


class UnitsPart(ProjectPart):
    """`project.units`: the review list's units, paged and filtered, and the machine scores shown beside them."""

    _search_memo: tuple[tuple[str, int, int], str] | None = None  # the last text search's sample ids (JSON)

    def _unit_where(self, f: UnitFilter) -> tuple[str, list[Any]]:
        clauses, params = [], []
        if f.scheme:
            clauses.append("u.scheme = ?")
            params.append(f.scheme)
        if f.units:
            clauses.append(f"u.unit IN ({','.join('?' * len(f.units))})")
            params.extend(f.units)
        if f.statuses:
            st = list(f.statuses)
            parts = []
            if "unlabeled" in st:
                parts.append("st.value IS NULL")
                st.remove("unlabeled")
            if st:
                parts.append(f"json_extract(st.value, '$') IN ({','.join('?' * len(st))})")
                params.extend(st)
            clauses.append("(" + " OR ".join(parts) + ")")
        if f.category:
            clauses.append("EXISTS (SELECT 1 FROM violations v WHERE v.sample_id = u.sample_id AND v.category = ?)")
            params.append(f.category)
        if f.assigned_to:
            clauses.append("EXISTS (SELECT 1 FROM assignments a WHERE a.sample_id = u.sample_id AND a.unit = u.unit"
                           " AND a.annotator = ?)")
            params.append(f.assigned_to)
        if f.search.strip():
            clauses.append("(s.text LIKE ? OR u.sample_id LIKE ? OR s.payload LIKE ?)")
            like = f"%{f.search.strip()}%"
            params.extend([like, like, like])
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params

    _FROM = (
        " FROM units u JOIN samples s ON s.id = u.sample_id"
        " LEFT JOIN labels st ON st.sample_id = u.sample_id AND st.unit = u.unit AND st.kind = 'status'"
        " AND {whose}"
        " LEFT JOIN machine_scores ms ON ms.unit_id = u.id AND ms.config_ref = ?"
    )

    def _from(self, f: UnitFilter, labels_first: bool = False) -> tuple[str, list[Any]]:
        """The FROM clause and its parameters: the status joined is the resolved one, or `f.annotator`'s own.
        `labels_first` (a status filter without 'unlabeled' that matches few units) joins the labels as an inner join
        (the same rows: the filter drops units without a status label), so SQLite starts from the status labels
        instead of scanning every unit in list order to find a few accepted ones (213 ms at 200k units for a page of
        40 -> under 1 ms)."""
        frm = self._FROM
        if labels_first:
            frm = frm.replace(" LEFT JOIN labels st", " JOIN labels st", 1)
        if f.annotator:
            return frm.format(whose="st.annotator = ?"), [f.annotator, f.config_ref]
        return frm.format(whose="st.resolved = 1"), [f.config_ref]

    def _search_samples(self, where: str, params: list[Any], search: str) -> tuple[str, list[Any]]:
        """`where` narrowed to the units of the samples whose text, id or payload contains `search` (as
        `_unit_where` searches). The samples are read in one pass, each once (not once per unit: 304 -> 73 ms for a
        count at 200k units), and their ids kept until the project changes, so the list's count and its first page
        after a search read the texts once between them (two passes took 2 s at 1M units)."""
        key = (search, self.conn.execute("PRAGMA data_version").fetchone()[0], self.conn.total_changes)
        memo = self._search_memo
        if memo is None or memo[0] != key:
            like = f"%{search}%"
            ids = [r[0] for r in self.conn.execute(
                "SELECT id FROM samples WHERE text LIKE ? OR id LIKE ? OR payload LIKE ?", (like, like, like))]
            memo = self._search_memo = (key, json.dumps(ids))
        where = (where + " AND" if where else " WHERE") + " u.sample_id IN (SELECT value FROM json_each(?))"
        return where, [*params, memo[1]]

    def _count_with_status(self, f: UnitFilter) -> int:
        """`count_units` for a status filter with 'unlabeled' (and at most a scheme and units besides): the units
        matching the scheme and units (kept counts) less those with a status label, plus those whose status label is
        one of the other statuses asked for. Counted from the status labels (few) instead of probing the labels once
        per unit (94 ms at 200k units, half a second at 1M)."""
        whose, params = ("st.annotator = ?", [f.annotator]) if f.annotator else ("st.resolved = 1", [])
        where = ""
        if f.scheme:
            where += " AND u.scheme = ?"
            params.append(f.scheme)
        if f.units:
            where += f" AND u.unit IN ({','.join('?' * len(f.units))})"
            params.extend(f.units)
        others = [s for s in f.statuses if s != "unlabeled"]
        listed = f"json_extract(st.value, '$') IN ({','.join('?' * len(others))})" if others else "0"
        labeled, kept = self.conn.execute(
            f"SELECT COUNT(*), COALESCE(SUM({listed}), 0) FROM labels st JOIN units u ON u.sample_id = st.sample_id"
            f" AND u.unit = st.unit WHERE st.kind = 'status' AND {whose} AND st.value IS NOT NULL{where}",
            [*others, *params]).fetchone()
        return self.count_units(UnitFilter(scheme=f.scheme, units=f.units)) - int(labeled) + int(kept)

    def count_units(self, f: UnitFilter | None = None) -> int:
        """Units matching `f`: the row count of `unit_page` over every page, read the cheapest way.

        The window and its status bar count on every open and after every commit, so: no filter, or only a scheme and
        units, reads the counts kept on write (app/store/counts.py; COUNT over the units table took 5-20 ms at 200k);
        otherwise only the tables the filter needs are joined (the machine score never changes a count; the sample
        only matters to a search), and a status filter without 'unlabeled' joins the labels as an inner join so
        SQLite starts from the few status labels instead of scanning every unit (65-90 ms -> well under 1 ms)."""
        f = f or UnitFilter()
        if not (f.statuses or f.category or f.assigned_to or f.search.strip()):
            where, params = "", []
            if f.scheme:
                where, params = " AND scheme = ?", [f.scheme]
            if f.units:
                where += f" AND key IN ({','.join('?' * len(f.units))})"
                params.extend(f.units)
            return int(self.scalar(f"SELECT COALESCE(SUM(n), 0) FROM row_counts WHERE tbl = 'units'{where}", params))
        if "unlabeled" in f.statuses and not (f.category or f.assigned_to or f.search.strip()):
            return self._count_with_status(f)
        where, params = self._unit_where(dataclasses.replace(f, search=""))
        if f.search.strip():
            where, params = self._search_samples(where, params, f.search.strip())
        frm, fparams = " FROM units u", []
        if f.statuses:
            join = "LEFT JOIN" if "unlabeled" in f.statuses else "JOIN"  # no status label = unlabeled
            whose, fparams = ("st.annotator = ?", [f.annotator]) if f.annotator else ("st.resolved = 1", [])
            frm += (f" {join} labels st ON st.sample_id = u.sample_id AND st.unit = u.unit AND st.kind = 'status'"
                    f" AND {whose}")
        return int(self.scalar("SELECT COUNT(*)" + frm + where, [*fparams, *params]))

    def unit_page(self, f: UnitFilter | None = None, offset: int = 0, limit: int = 200,
                  order_by: str = "id", descending: bool = False, after: int | None = None,
                  matching: int | None = None) -> list[dict[str, Any]]:
        """`limit` rows of the list from `offset`. In list order (`order_by` 'id', ascending), `after` = the id of the
        last row already read starts the page right after it (keyset paging: OFFSET steps over every row before it,
        256 ms for a page 150,000 rows down at 200k units; `offset` is then ignored).

        `matching`: the caller's `count_units(f)`, when it has it, to read the fewer rows when matches are rare. In
        list order SQLite reads units until the page fills: about limit x units / matching of them. A text search
        matching under 4 pages' worth then reads every sample's texts once instead, as its count did (a unit's
        search costs about four times a sample's in that one pass, measured at 200k units); a status filter without
        'unlabeled' starts from its status labels when there are fewer of them than sqrt(limit x units / 4) (a
        status label read and sorted costs about four units probed in order). Without it: units in list order."""
        f = f or UnitFilter()
        search_samples = labels_first = False
        if matching is not None and (f.search.strip() or (f.statuses and "unlabeled" not in f.statuses)):
            units = self.count_units(UnitFilter(scheme=f.scheme, units=f.units))
            search_samples = bool(f.search.strip()) and matching < 4 * limit
            labels_first = bool(f.statuses) and "unlabeled" not in f.statuses and 4 * matching * matching < limit * units
        if search_samples:
            where, params = self._unit_where(dataclasses.replace(f, search=""))
            where, params = self._search_samples(where, params, f.search.strip())
        else:
            where, params = self._unit_where(f)
        col = _order_column(order_by)
        direction = "DESC" if descending else "ASC"
        frm, fparams = self._from(f, labels_first)
        if after is not None and col == "u.id" and not descending:
            where = (where + " AND" if where else " WHERE") + " u.id > ?"
            params.append(after)
            offset = 0
        sql = (
            "SELECT u.id, u.sample_id, u.scheme, u.unit, u.summary, ms.score AS machine_f1,"
            " COALESCE(json_extract(st.value, '$'), 'unlabeled') AS status" + frm + where
            + f" ORDER BY {col} {direction}, u.id ASC LIMIT ? OFFSET ?"
        )
        return _with_summary(self.query(sql, [*fparams, *params, limit, offset]))

    def unit_rows(self, scheme: str, config_ref: str | None = None) -> list[dict[str, Any]]:
        """Every unit of a scheme in one query (bulk readers such as export), with the machine F1 under config_ref."""
        return _with_summary(self.query(
            "SELECT u.sample_id, u.unit, u.summary, ms.score AS machine_f1, ms.figures FROM units u"
            " LEFT JOIN machine_scores ms ON ms.unit_id = u.id AND ms.config_ref = ?"
            " WHERE u.scheme = ? ORDER BY u.sample_id, u.unit",
            (config_ref or "", scheme),
        ))

    def unit(self, unit_id: int) -> dict[str, Any] | None:
        rows = _with_summary(self.query("SELECT * FROM units WHERE id = ?", (unit_id,)))
        return rows[0] if rows else None

    def units_for_sample(self, sample_id: str) -> list[dict[str, Any]]:
        return _with_summary(self.query("SELECT * FROM units WHERE sample_id = ? ORDER BY unit", (sample_id,)))

    def unit_schemes(self) -> list[str]:
        """The schemes that have units in this project (the review list's scheme filter offers only these).

        Read from the row counts kept on write (app/store/counts.py): DISTINCT over the units table scanned every
        unit (47 ms at 200k units, a third of opening the window)."""
        return [r[0] for r in self.conn.execute(
            "SELECT scheme FROM row_counts WHERE tbl = 'units' AND n > 0 GROUP BY scheme ORDER BY scheme")]

    def unit_names(self, scheme: str | None = None) -> list[tuple[str, str]]:
        """Distinct (scheme, unit) pairs, e.g. every checker and trait (the list's unit filter); from the row counts."""
        if scheme is None:
            return [tuple(r) for r in self.conn.execute(  # type: ignore[misc]
                "SELECT scheme, key FROM row_counts WHERE tbl = 'units' AND n > 0 ORDER BY scheme, key")]
        return [tuple(r) for r in self.conn.execute(  # type: ignore[misc]
            "SELECT scheme, key FROM row_counts WHERE tbl = 'units' AND n > 0 AND scheme = ? ORDER BY key", (scheme,))]

    def set_machine_scores(self, config_ref: str, rows: Sequence[tuple[Any, ...]], score: str = "f1") -> None:
        """Replace the per-unit machine figures stored for a config. A row is (sample_id, unit, figures dict), or
        (sample_id, unit, tp, fp, fn, f1); `figures[score]` is the list's headline (sortable) figure. `rows` may be
        `UnitScores` (those rows as columns: digested from their bytes and formatted per distinct figures)."""
        # imported here: it brings numpy, which is not on app.store's import path
        from calibration.unit_scores import UnitScores

        digest = rows.digest(score) if isinstance(rows, UnitScores) else None
        columns = rows if digest is not None else None  # None: rows one by one (a non-str id in UnitScores too)
        if digest is None:
            rows = list(rows)  # read twice: for the digest, then formatted
            digest = _rows_digest(rows, score)
        key = f"machine_scores:{config_ref}"
        stored = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        n_now = self.conn.execute("SELECT COUNT(*) FROM machine_scores WHERE config_ref = ?", (config_ref,)).fetchone()[0]
        if stored is not None and stored[0] == f"{digest} {n_now}" and n_now == len(rows):
            # the same rows as the last write, every one of them stored then, none gone since (a unit deleted or
            # re-imported takes its row with it, which the count shows; only this method writes the table): the
            # table already holds exactly these rows
            return
        # one encoder for every row: json.dumps with options builds a new JSONEncoder per call (2 s per 100k rows);
        # same options as project.dumps, so the stored text is identical
        encode = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode
        out = _formatted_columns(columns, score, encode) if columns is not None else _formatted(rows, score, encode)
        with self.transaction() as c:
            # rows land in a temporary table and find their unit ids in one join (an INSERT ... SELECT per row
            # looked each unit up in its own statement); then only what changed is written: units no longer scored
            # lose their row, changed figures are updated, unchanged ones are not touched. Evaluating again with the
            # same config rewrote 100k rows per config at 100k samples (dirtying every page of the table and adding
            # them to the WAL); now it writes nothing.
            c.execute("CREATE TEMP TABLE IF NOT EXISTS machine_scores_in (sample_id TEXT, unit TEXT, score REAL, figures TEXT)")
            c.execute("CREATE TEMP TABLE IF NOT EXISTS machine_scores_ids (unit_id INTEGER PRIMARY KEY, score REAL, figures TEXT)")
            try:
                c.executemany("INSERT INTO temp.machine_scores_in VALUES (?, ?, ?, ?)", out)
                c.execute("INSERT OR REPLACE INTO temp.machine_scores_ids SELECT u.id, m.score, m.figures "
                          "FROM temp.machine_scores_in m JOIN units u ON u.sample_id = m.sample_id AND u.unit = m.unit")
                c.execute("DELETE FROM machine_scores WHERE config_ref = ? "
                          "AND unit_id NOT IN (SELECT unit_id FROM temp.machine_scores_ids)", (config_ref,))
                c.execute("INSERT INTO machine_scores SELECT ?, unit_id, score, figures FROM temp.machine_scores_ids "
                          "WHERE true ON CONFLICT (config_ref, unit_id) DO UPDATE SET score = excluded.score, "
                          "figures = excluded.figures WHERE score IS NOT excluded.score OR figures IS NOT excluded.figures",
                          (config_ref,))
            finally:
                c.execute("DELETE FROM temp.machine_scores_in")
                c.execute("DELETE FROM temp.machine_scores_ids")
            n_now = c.execute("SELECT COUNT(*) FROM machine_scores WHERE config_ref = ?", (config_ref,)).fetchone()[0]
            c.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                      (key, f"{digest} {n_now}"))

    def machine_scores(self, config_ref: str) -> dict[tuple[str, str], dict[str, Any]]:
        """(sample_id, unit) -> the figures stored for a config."""
        return {(sid, unit): json.loads(fig) for sid, unit, fig in self.conn.execute(
            "SELECT u.sample_id, u.unit, ms.figures FROM machine_scores ms JOIN units u ON u.id = ms.unit_id "
            "WHERE ms.config_ref = ?", (config_ref,))}

    # -- what to label next (issue #16) ---------------------------------------------------------------------------
    def label_order(self, scheme: str) -> list[tuple[str, str]]:
        """(sample_id, unit) of a scheme in the order they were first given a label other than status/note (event
        ids: the order the humans labeled them; the learning curve grows its subsets along it)."""
        return [(s, u) for s, u, _ in self.conn.execute(
            "SELECT e.sample_id, e.unit, MIN(e.id) AS first FROM events e JOIN samples s ON s.id = e.sample_id"
            " WHERE s.scheme = ? AND e.kind NOT IN ('status', 'note') AND e.after IS NOT NULL"
            " GROUP BY e.sample_id, e.unit ORDER BY first", (scheme,))]

    def adjudicated_units(self) -> set[tuple[str, str]]:
        """(sample_id, unit) whose labels an adjudicator settled (the annotators queue skips them)."""
        return {(s, u) for s, u in self.conn.execute("SELECT DISTINCT sample_id, unit FROM labels WHERE adjudicated = 1")}
