"""Store adapter of the `rubric` scheme: trait definitions (its own table), samples and units; the LLM's buckets
are machine labels (the generic `machine_labels` table)."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from app.store.counts import add_counts, unit_counts
from app.store.parts import ProjectPart
from app.store.project import dumps, now
from app.store.samples import IMPORT_SOURCE, WriteCounts, content_hash
from calibration.schemes.rubric.columns import RubricColumns
from calibration.schemes.rubric.records import RubricSample

if TYPE_CHECKING:
    from app.store import Project

SCHEME = "rubric"


def _n_pred(buckets: Mapping[str, Sequence[str]] | None) -> int:
    return 0 if buckets is None else len(buckets.get("tp", [])) + len(buckets.get("fp", []))


class RubricStore(ProjectPart):
    """The rubric scheme's store part (`project.store("rubric")`, or `store_of(project)` typed): trait definitions,
    samples and units, and the LLM's buckets as machine labels. Its tables come from the released migrations."""

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

    def write_rubric_samples(self, samples: Sequence[RubricSample], dataset_id: int | None = None,
                             line_hashes: Mapping[str, bytes] | None = None) -> WriteCounts:
        """Insert or replace samples (unchanged ones are left alone); `line_hashes`: id -> raw JSONL line hash."""
        counts = WriteCounts()
        existing = self.project.samples.existing_hashes(s.id for s in samples)
        line_hashes = line_hashes or {}
        refresh: list[tuple[bytes, str]] = []
        deltas: Counter[tuple[str, str, str]] = Counter()
        with self.transaction() as c:
            for s in samples:
                payload = {"q": s.question, "r": s.response, "traits": list(s.traits), "buckets": s.buckets,
                           "split": s.split, "meta": s.meta}
                h = content_hash(payload)  # unchanged since schema 1: a re-import of an old file is still a no-op
                old = existing.get(s.id)
                if old is not None:
                    if old[0] != SCHEME:
                        raise ValueError(f"sample {s.id!r} already exists as a {old[0]} sample")
                    if old[1] == h:
                        counts.unchanged += 1
                        lh = line_hashes.get(s.id)
                        if lh is not None and lh != old[2]:
                            refresh.append((lh, s.id))
                        continue
                    counts.updated += 1
                    deltas.update(unit_counts(c, [s.id]))
                    c.execute("DELETE FROM units WHERE sample_id = ?", (s.id,))
                    c.execute("DELETE FROM machine_labels WHERE sample_id = ? AND source = ?", (s.id, IMPORT_SOURCE))
                else:
                    counts.added += 1
                    deltas[("samples", SCHEME, "")] += 1
                self.write_traits(s.traits)
                c.execute(
                    "INSERT INTO samples (id, scheme, dataset_id, text, payload, split, meta, content_hash, line_hash) "
                    "VALUES (?, 'rubric', ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET dataset_id=excluded.dataset_id, "
                    "text=excluded.text, payload=excluded.payload, split=excluded.split, meta=excluded.meta, "
                    "content_hash=excluded.content_hash, line_hash=excluded.line_hash",
                    (s.id, dataset_id, s.response, dumps({"question": s.question}), s.split,
                     None if s.meta is None else dumps(s.meta), h, line_hashes.get(s.id)),
                )
                for t in s.traits:
                    b = s.buckets.get(t["name"])
                    summary = {"mode": t.get("evaluation_mode", "tp_only"), "n_gt": len(t.get("tp_instructions", [])),
                               "n_pred": _n_pred(b)}
                    c.execute("INSERT INTO units (sample_id, scheme, unit, summary) VALUES (?, 'rubric', ?, ?)",
                              (s.id, t["name"], dumps(summary)))
                    deltas[("units", SCHEME, t["name"])] += 1
                    if b is not None:
                        c.execute("INSERT INTO machine_labels VALUES (?, ?, ?, ?, NULL, ?)",
                                  (s.id, t["name"], IMPORT_SOURCE, dumps(b), now()))
            add_counts(c, deltas)
        self.project.samples.refresh_line_hashes(refresh)
        return counts

    def rubric_units(self, trait: str | None = None) -> list[dict[str, Any]]:
        sql = ("SELECT u.sample_id, u.unit AS trait, json_extract(s.payload, '$.question') AS question, "
               "s.text AS response FROM units u JOIN samples s ON s.id = u.sample_id WHERE u.scheme = 'rubric'")
        params: tuple = ()
        if trait is not None:
            sql, params = sql + " AND u.unit = ?", (trait,)
        return self.query(sql + " ORDER BY u.id", params)

    def rubric_sample(self, sample_id: str) -> dict[str, Any] | None:
        rows = self.query("SELECT id, json_extract(payload, '$.question') AS question, text AS response, split "
                          "FROM samples WHERE id = ? AND scheme='rubric'", (sample_id,))
        return rows[0] if rows else None

    def human_buckets(self) -> dict[tuple[str, str], dict[str, list[str]]]:
        """Current (resolved) human buckets per (sample_id, trait)."""
        return {
            (sid, unit): json.loads(value)
            for sid, unit, value in self.conn.execute(
                "SELECT sample_id, unit, value FROM labels WHERE kind = 'buckets' AND resolved = 1 AND value IS NOT NULL"
            )
        }

    def evaluation_columns(self) -> RubricColumns:
        """The units evaluate reads (calibration/schemes/rubric/columns.py), as `load_records` has them: the rubric
        samples in import order, each one's units in order, a unit whose trait is defined and that has a successful
        machine label; its newest (the latest created_at, the later row on a tie, as load_records' sort keeps it),
        left as JSON text and coded among the distinct texts. No object per sample: a sample id and two numbers
        per unit."""
        from array import array

        import numpy as np

        definitions = self.traits()
        names = {t["name"]: k for k, t in enumerate(definitions)}
        codes: dict[str, int] = {}
        sample: list[str] = []
        trait, value = array("q"), array("q")
        last, newest = -1, ("", -1)
        for unit_id, sid, unit, created, row, text in self.conn.execute(
            "SELECT u.id, u.sample_id, u.unit, m.created_at, m.rowid, m.value FROM samples s "
            "JOIN units u ON u.sample_id = s.id JOIN machine_labels m ON m.sample_id = u.sample_id AND m.unit = u.unit "
            "WHERE s.scheme = ? AND u.scheme = ? AND m.value IS NOT NULL ORDER BY s.rowid, u.id", (SCHEME, SCHEME)
        ):
            if unit_id == last:  # another machine label of the same unit: the newest wins
                if (created, row) > newest:
                    newest = (created, row)
                    value[-1] = codes.setdefault(text, len(codes))
                continue
            t = names.get(unit)
            if t is None:
                continue
            last, newest = unit_id, (created, row)
            sample.append(sid)
            trait.append(t)
            value.append(codes.setdefault(text, len(codes)))
        return RubricColumns(definitions, list(codes), sample, np.asarray(trait, dtype=np.int64),
                             np.asarray(value, dtype=np.int64), encoded=True)

    def save_bucket_assignment(
        self, sample_id: str, trait: str, source: str, buckets: Mapping[str, list[str]] | None, error: str | None = None
    ) -> None:
        """The LLM's buckets for a unit, as a machine label; the unit's excerpt count follows."""
        self.project.samples.save_machine_label(sample_id, trait, source, None if buckets is None else dict(buckets), error,
                                        None if buckets is None else {"n_pred": _n_pred(buckets)})

    def bucket_assignment(self, sample_id: str, trait: str, source: str | None = None) -> dict[str, Any] | None:
        """The machine's buckets for a unit: the named source, else the newest successful one."""
        row = self.project.samples.machine_label(sample_id, trait, source)
        if row is None:
            return None
        row["trait"] = row["unit"]
        row["buckets"] = row["value"]
        return row


def store_of(project: Project) -> RubricStore:
    """The project's rubric store part, typed (what `project.store("rubric")` returns)."""
    return project.store(SCHEME)


# -- hooks the generic store reads (app/store/samples.py SchemeDataPart) ----------------------------------------------
def load_records(project: Any) -> list[RubricSample]:
    """The rubric samples as `RubricSample`s: traits from the traits table, the machine's buckets per trait (the
    newest successful machine label: an LLM run after import replaces the imported buckets)."""
    traits = {t["name"]: t for t in store_of(project).traits()}
    units: dict[str, list[str]] = {}
    for sid, unit in project.conn.execute("SELECT sample_id, unit FROM units WHERE scheme = ? ORDER BY id", (SCHEME,)):
        units.setdefault(sid, []).append(unit)
    import orjson  # the buckets and payloads are JSON of strings only: the same values, several times faster

    buckets: dict[str, dict[str, Any]] = {}
    for sid, unit, value in project.conn.execute(
        "SELECT m.sample_id, m.unit, m.value FROM machine_labels m JOIN samples s ON s.id = m.sample_id "
        "WHERE s.scheme = ? AND m.value IS NOT NULL ORDER BY m.created_at", (SCHEME,)
    ):
        buckets.setdefault(sid, {})[unit] = orjson.loads(value)
    out = []
    for sid, text, payload, split, meta in project.conn.execute(
        "SELECT id, text, payload, split, meta FROM samples WHERE scheme = ? ORDER BY rowid", (SCHEME,)
    ):
        out.append(RubricSample(sid, orjson.loads(payload).get("question", ""), text,
                                tuple(traits[u] for u in units.get(sid, ()) if u in traits), buckets.get(sid, {}),
                                split, None if meta is None else json.loads(meta)))
    return out


def evaluation_records(project: Any) -> RubricColumns:
    """What the scheme's evaluate hook reads (app/services/evaluation.py): the units as columns, not records."""
    return store_of(project).evaluation_columns()


PART = RubricStore  # composed: `project.store("rubric")` (app/store/samples.py)
