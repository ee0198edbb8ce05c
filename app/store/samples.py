"""Samples, violations, traits, bucket assignments and the units (sample x checker/trait) humans review."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from app.store.project import ProjectBase, dumps, now
from calibration.schemes.violations.records import GROUND_TRUTH, Violation, ViolationSample

VIOLATION_FIELDS = ("start", "end", "quote", "rule", "category", "explanation", "correction")


@dataclass(frozen=True)
class RubricSample:
    id: str
    question: str
    response: str
    traits: tuple[Mapping[str, Any], ...]  # trait definitions as dicts (see calibration.schemes.rubric)
    buckets: Mapping[str, Mapping[str, list[str]]]  # LLM buckets per trait name, from the imported file
    split: str | None = None
    meta: Mapping[str, Any] | None = None


@dataclass
class WriteCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0


def content_hash(payload: Any) -> str:
    # orjson writes what dumps() writes for ordinary data (sorted keys, compact, UTF-8), several times faster: importing
    # 100k samples hashes every one of them. dumps() covers what orjson refuses (non-str keys, huge ints).
    try:
        data = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        data = dumps(payload).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def _violation_dict(v: Violation) -> dict[str, Any]:
    return {k: getattr(v, k) for k in VIOLATION_FIELDS}


PreparedSample = tuple[str, str, tuple[Any, ...], list[tuple[Any, ...]], list[tuple[Any, ...]]]


def prepare_violation_samples(
    samples: Iterable[ViolationSample],
    groundings: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    metas: Mapping[str, Mapping[str, Any] | None] | None = None,
) -> Iterator[PreparedSample]:
    """Per sample: (id, content hash, (id, text, context, split, meta json, hash), violation rows, unit rows).

    The pure half of a write (no connection), so import workers can run it in other processes (app.store.staging).
    """
    groundings = groundings or {}
    metas = metas or {}
    for s in samples:
        meta = metas.get(s.id)
        payload = {
            "text": s.text, "context": s.context, "split": s.split, "meta": meta,
            "gt": [_violation_dict(v) for v in s.ground_truth],
            "pred": {k: [_violation_dict(v) for v in vs] for k, vs in sorted(s.predictions.items())},
        }
        h = content_hash(payload)
        viol_rows = []
        how = groundings.get(s.id, {})
        lists = [(GROUND_TRUTH, s.ground_truth)] + sorted(s.predictions.items())
        for checker, vs in lists:
            hows = how.get(checker, ())
            for i, v in enumerate(vs):
                g = hows[i] if i < len(hows) else ("offsets" if v.grounded else "ungrounded")
                viol_rows.append((s.id, checker, i, v.start, v.end, v.quote, v.rule, v.category, v.explanation, v.correction, g))
        checkers = sorted(s.predictions) or [GROUND_TRUTH]
        unit_rows = [(s.id, "violations", c, len(s.ground_truth), len(s.predictions.get(c, ()))) for c in checkers]
        yield s.id, h, (s.id, s.text, s.context, s.split, None if meta is None else dumps(meta), h), viol_rows, unit_rows


class SamplesMixin(ProjectBase):
    # -- datasets --------------------------------------------------------------------------------------------------
    def add_dataset(self, name: str, path: str | None, sha256: str | None, n_records: int) -> int:
        with self.transaction() as c:
            c.execute(
                "INSERT INTO datasets (name, path, sha256, n_records, imported_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET path=excluded.path, sha256=excluded.sha256, "
                "n_records=excluded.n_records, imported_at=excluded.imported_at",
                (name, path, sha256, n_records, now()),
            )
            return int(self.scalar("SELECT id FROM datasets WHERE name = ?", (name,)))

    def dataset(self, name: str) -> dict[str, Any] | None:
        rows = self.query("SELECT * FROM datasets WHERE name = ?", (name,))
        return rows[0] if rows else None

    def sample_schemes(self, ids: Iterable[str]) -> dict[str, str]:
        """The scheme of each given id that exists (import checks an id is not reused across schemes)."""
        return {sid: scheme for sid, (scheme, _) in self._existing_hashes(ids).items()}

    def _existing_hashes(self, ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        out: dict[str, tuple[str, str]] = {}
        ids = list(ids)
        for i in range(0, len(ids), 900):
            chunk = ids[i : i + 900]
            q = ",".join("?" * len(chunk))
            for sid, scheme, h in self.conn.execute(f"SELECT id, scheme, content_hash FROM samples WHERE id IN ({q})", chunk):
                out[sid] = (scheme, h)
        return out

    # -- violations samples ----------------------------------------------------------------------------------------
    def write_violation_samples(
        self,
        samples: Sequence[ViolationSample],
        groundings: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
        metas: Mapping[str, Mapping[str, Any] | None] | None = None,
        dataset_id: int | None = None,
    ) -> WriteCounts:
        """Insert or replace samples; an unchanged sample (same content hash) is left alone, so re-imports are no-ops.

        `groundings[sample_id][checker]` lists how each violation was located ('offsets', 'exact', 'casefold',
        'fuzzy', 'ungrounded'), parallel to the violation lists.
        """
        counts = WriteCounts()
        existing = self._existing_hashes(s.id for s in samples)
        sample_rows, viol_rows, unit_rows, replaced = [], [], [], []
        for sid, h, row, vrows, urows in prepare_violation_samples(samples, groundings, metas):
            old = existing.get(sid)
            if old is not None:
                if old[0] != "violations":
                    raise ValueError(f"sample {sid!r} already exists as a {old[0]} sample")
                if old[1] == h:
                    counts.unchanged += 1
                    continue
                replaced.append(sid)
                counts.updated += 1
            else:
                counts.added += 1
            sample_rows.append((sid, dataset_id, *row[1:]))
            viol_rows.extend(vrows)
            unit_rows.extend(urows)
        with self.transaction() as c:
            for sid in replaced:
                c.execute("DELETE FROM violations WHERE sample_id = ?", (sid,))
                c.execute("DELETE FROM units WHERE sample_id = ?", (sid,))
            c.executemany(
                "INSERT INTO samples (id, scheme, dataset_id, text, context, split, meta, content_hash) "
                "VALUES (?, 'violations', ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET dataset_id=excluded.dataset_id, "
                "text=excluded.text, context=excluded.context, split=excluded.split, meta=excluded.meta, "
                "content_hash=excluded.content_hash",
                sample_rows,
            )
            c.executemany(
                'INSERT INTO violations (sample_id, checker, idx, start, "end", quote, rule, category, explanation, '
                "correction, grounding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                viol_rows,
            )
            c.executemany("INSERT INTO units (sample_id, scheme, unit, n_gt, n_pred) VALUES (?, ?, ?, ?, ?)", unit_rows)
        return counts

    def violation_samples(self, ids: Sequence[str] | None = None) -> list[ViolationSample]:
        """Load samples with all their violations (ground truth under checker '')."""
        where, params = "", ()
        if ids is not None:
            if not ids:
                return []
            where, params = f" AND s.id IN ({','.join('?' * len(ids))})", tuple(ids)
        texts = {
            r[0]: r[1:]
            for r in self.conn.execute(f"SELECT id, text, context, split FROM samples s WHERE scheme='violations'{where} ORDER BY rowid", params)
        }
        viols: dict[str, dict[str, list[Violation]]] = {sid: {} for sid in texts}
        vwhere = where.replace("s.id", "sample_id")
        for sid, checker, start, end, quote, rule, cat, expl, corr in self.conn.execute(
            f'SELECT sample_id, checker, start, "end", quote, rule, category, explanation, correction FROM violations '
            f"WHERE 1=1{vwhere} ORDER BY sample_id, checker, idx",
            params,
        ):
            viols[sid].setdefault(checker, []).append(Violation(rule, start, end, quote, cat, expl, corr))
        # A checker that ran on a sample and found nothing has a unit but no violation rows: it still owes the
        # sample's ground truth as false negatives, so it must come back as an empty prediction list.
        for sid, checker in self.conn.execute(
            f"SELECT sample_id, unit FROM units WHERE scheme = 'violations' AND unit != ''{vwhere}", params
        ):
            if sid in viols:
                viols[sid].setdefault(checker, [])
        out = []
        for sid, (text, context, split) in texts.items():
            by = viols[sid]
            gt = tuple(by.pop(GROUND_TRUTH, ()))
            out.append(ViolationSample(sid, text, gt, {k: tuple(v) for k, v in by.items()}, context, split))
        return out

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

    # -- rubric samples --------------------------------------------------------------------------------------------
    def write_traits(self, traits: Iterable[Mapping[str, Any]]) -> None:
        """Store trait definitions by name; a different definition under an existing name is an error."""
        with self.transaction() as c:
            for t in traits:
                definition = dumps(dict(t))
                old = self.scalar("SELECT definition FROM traits WHERE name = ?", (t["name"],))
                if old is None:
                    c.execute("INSERT INTO traits VALUES (?, ?)", (t["name"], definition))
                elif old != definition:
                    raise ValueError(f"trait {t['name']!r} is already defined differently in this project")

    def get_trait(self, name: str) -> dict[str, Any] | None:
        d = self.scalar("SELECT definition FROM traits WHERE name = ?", (name,))
        return None if d is None else json.loads(d)

    def traits(self) -> list[dict[str, Any]]:
        return [json.loads(r[0]) for r in self.conn.execute("SELECT definition FROM traits ORDER BY name")]

    def write_rubric_samples(self, samples: Sequence[RubricSample], dataset_id: int | None = None) -> WriteCounts:
        counts = WriteCounts()
        existing = self._existing_hashes(s.id for s in samples)
        with self.transaction() as c:
            for s in samples:
                payload = {"q": s.question, "r": s.response, "traits": list(s.traits), "buckets": s.buckets,
                           "split": s.split, "meta": s.meta}
                h = content_hash(payload)
                old = existing.get(s.id)
                if old is not None:
                    if old[0] != "rubric":
                        raise ValueError(f"sample {s.id!r} already exists as a {old[0]} sample")
                    if old[1] == h:
                        counts.unchanged += 1
                        continue
                    counts.updated += 1
                    c.execute("DELETE FROM units WHERE sample_id = ?", (s.id,))
                    c.execute("DELETE FROM bucket_assignments WHERE sample_id = ? AND source = 'import'", (s.id,))
                else:
                    counts.added += 1
                self.write_traits(s.traits)
                c.execute(
                    "INSERT INTO samples (id, scheme, dataset_id, text, question, split, meta, content_hash) "
                    "VALUES (?, 'rubric', ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET text=excluded.text, "
                    "question=excluded.question, split=excluded.split, meta=excluded.meta, content_hash=excluded.content_hash",
                    (s.id, dataset_id, s.response, s.question, s.split, None if s.meta is None else dumps(s.meta), h),
                )
                for t in s.traits:
                    b = s.buckets.get(t["name"])
                    n_pred = 0 if b is None else len(b.get("tp", [])) + len(b.get("fp", []))
                    c.execute(
                        "INSERT INTO units (sample_id, scheme, unit, n_gt, n_pred) VALUES (?, 'rubric', ?, ?, ?)",
                        (s.id, t["name"], len(t.get("tp_instructions", [])), n_pred),
                    )
                    if b is not None:
                        c.execute(
                            "INSERT INTO bucket_assignments VALUES (?, ?, 'import', ?, NULL, ?)",
                            (s.id, t["name"], dumps(b), now()),
                        )
        return counts

    def rubric_units(self, trait: str | None = None) -> list[dict[str, Any]]:
        sql = ("SELECT u.sample_id, u.unit AS trait, s.question, s.text AS response FROM units u "
               "JOIN samples s ON s.id = u.sample_id WHERE u.scheme = 'rubric'")
        params: tuple = ()
        if trait is not None:
            sql, params = sql + " AND u.unit = ?", (trait,)
        return self.query(sql + " ORDER BY u.id", params)

    def rubric_sample(self, sample_id: str) -> dict[str, Any] | None:
        rows = self.query("SELECT id, question, text AS response, split FROM samples WHERE id = ? AND scheme='rubric'", (sample_id,))
        return rows[0] if rows else None

    def save_bucket_assignment(
        self, sample_id: str, trait: str, source: str, buckets: Mapping[str, list[str]] | None, error: str | None = None
    ) -> None:
        with self.transaction() as c:
            c.execute(
                "INSERT INTO bucket_assignments VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(sample_id, trait, source) "
                "DO UPDATE SET buckets=excluded.buckets, error=excluded.error, created_at=excluded.created_at",
                (sample_id, trait, source, None if buckets is None else dumps(buckets), error, now()),
            )
            if buckets is not None:
                c.execute(
                    "UPDATE units SET n_pred = ? WHERE sample_id = ? AND unit = ?",
                    (len(buckets.get("tp", [])) + len(buckets.get("fp", [])), sample_id, trait),
                )

    def bucket_assignment(self, sample_id: str, trait: str, source: str | None = None) -> dict[str, Any] | None:
        """The machine's buckets for a unit: the named source, else the newest successful one."""
        if source is not None:
            rows = self.query("SELECT * FROM bucket_assignments WHERE sample_id=? AND trait=? AND source=?", (sample_id, trait, source))
        else:
            rows = self.query(
                "SELECT * FROM bucket_assignments WHERE sample_id=? AND trait=? AND buckets IS NOT NULL "
                "ORDER BY created_at DESC LIMIT 1",
                (sample_id, trait),
            )
        if not rows:
            return None
        row = rows[0]
        row["buckets"] = None if row["buckets"] is None else json.loads(row["buckets"])
        return row

    def sample_rows(self, scheme: str) -> dict[str, dict[str, Any]]:
        """Every sample of a scheme by id, meta parsed, in one query (bulk readers such as export)."""
        rows = self.query("SELECT id, text, question, context, split, meta FROM samples WHERE scheme = ?", (scheme,))
        for row in rows:
            row["meta"] = None if row["meta"] is None else json.loads(row["meta"])
        return {row["id"]: row for row in rows}

    def sample_row(self, sample_id: str) -> dict[str, Any] | None:
        rows = self.query("SELECT * FROM samples WHERE id = ?", (sample_id,))
        if not rows:
            return None
        row = rows[0]
        row["meta"] = None if row["meta"] is None else json.loads(row["meta"])
        return row
