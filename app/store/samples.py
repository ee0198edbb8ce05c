"""Samples of every scheme (searchable text + JSON payload), datasets, units, and machine labels.

A scheme's own normalised tables (violations, traits) live in its store adapter, app/schemes/<name>/store.py; a
scheme without one is stored generically from its `base.Scheme` object (`write_samples`): the record's JSON as the
payload, its units with their summaries, and its machine labels under source 'import'.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from app.store.counts import add_counts, unit_counts
from app.store.label_reads import read_labels, read_labels_by_annotator
from app.store.parts import ProjectPart
from app.store.project import dumps, now

if TYPE_CHECKING:
    from app.schemes.contracts import StorePart

IMPORT_SOURCE = "import"  # machine labels that came with the imported records


@dataclass
class WriteCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0

    def add(self, other: "WriteCounts") -> None:
        self.added, self.updated, self.unchanged = (self.added + other.added, self.updated + other.updated,
                                                    self.unchanged + other.unchanged)


def content_hash(payload: Any, *, key_ordered: bool = False) -> str:
    """SHA-256 of the payload as `dumps` writes it. `key_ordered`: the caller built every dict of `payload` with its
    keys in sorted order, so orjson need not sort them (a third of its time on a violations sample's payload)."""
    # orjson writes what dumps() writes for ordinary data (sorted keys, compact, UTF-8), several times faster: importing
    # 100k samples hashes every one of them. dumps() covers what orjson refuses (non-str keys, huge ints).
    try:
        data = orjson.dumps(payload) if key_ordered else orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        data = dumps(payload).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


# may be an integer past 64 bits, which orjson reads as a float; [0-9] rather than \d: a JSON number's digits are
# ASCII, and the class is a third cheaper to scan for
_LONG_NUMBER = re.compile(r"[0-9]{19}")


def loads(text: str) -> Any:
    """json.loads of a short stored JSON text (a label value), by orjson (4x faster on the labels `evaluate` reads,
    guard included); json.loads for what orjson refuses (NaN, lone surrogates) or reads otherwise (integers past 64
    bits), so the same values. Not for payloads: on kilobytes of text the guard's scan costs what orjson saves."""
    if _LONG_NUMBER.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def _row(row: dict[str, Any]) -> dict[str, Any]:
    """A samples row with meta parsed and the payload's fields alongside the columns."""
    payload = row.pop("payload", None)
    row["meta"] = None if row.get("meta") is None else json.loads(row["meta"])
    if payload:
        for k, v in json.loads(payload).items():
            row.setdefault(k, v)
    return row


class SamplesPart(ProjectPart):
    """`project.samples`: datasets, samples (text + payload) and machine labels, of any scheme."""

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
        return {sid: scheme for sid, (scheme, _, _) in self.existing_hashes(ids).items()}

    def existing_hashes(self, ids: Iterable[str]) -> dict[str, tuple[str, str, bytes | None]]:
        """id -> (scheme, content hash, raw line hash) of the given ids that exist."""
        out: dict[str, tuple[str, str, bytes | None]] = {}
        ids = list(ids)
        for i in range(0, len(ids), 900):
            chunk = ids[i : i + 900]
            q = ",".join("?" * len(chunk))
            for sid, scheme, h, lh in self.conn.execute(
                    f"SELECT id, scheme, content_hash, line_hash FROM samples WHERE id IN ({q})", chunk):
                out[sid] = (scheme, h, lh)
        return out

    def changed_samples(self, scheme: str, hashes: Sequence[tuple[str, str]], counts: WriteCounts,
                 line_hashes: Mapping[str, bytes] | None = None,
                 existing: Mapping[str, tuple[str, str, bytes | None]] | None = None) -> tuple[set[str], set[str]]:
        """(ids to write, ids that existed) given (id, new hash) pairs; raises if an id belongs to another scheme.
        An unchanged sample read from a different raw line (e.g. keys reordered) gets that line's hash. `existing`:
        `existing_hashes` of the ids, when the caller read them already."""
        if existing is None:
            existing = self.existing_hashes(sid for sid, _ in hashes)
        todo: set[str] = set()
        replaced: set[str] = set()
        refresh: list[tuple[bytes, str]] = []
        for sid, h in hashes:
            old = existing.get(sid)
            if old is not None:
                if old[0] != scheme:
                    raise ValueError(f"sample {sid!r} already exists as a {old[0]} sample")
                if old[1] == h:
                    counts.unchanged += 1
                    lh = line_hashes.get(sid) if line_hashes else None
                    if lh is not None and lh != old[2]:
                        refresh.append((lh, sid))
                    continue
                replaced.add(sid)
                counts.updated += 1
            else:
                counts.added += 1
            todo.add(sid)
        self.refresh_line_hashes(refresh)
        return todo, replaced

    def refresh_line_hashes(self, rows: Sequence[tuple[bytes, str]]) -> None:
        """(line hash, id) of unchanged samples whose line differs from the one stored: the next re-import skips them."""
        if rows:
            with self.transaction() as c:
                c.executemany("UPDATE samples SET line_hash = ? WHERE id = ?", rows)

    # -- generic samples (schemes without a store adapter) ---------------------------------------------------------
    def write_samples(self, scheme_name: str, records: Sequence[Any], dataset_id: int | None = None,
                      line_hashes: Mapping[str, bytes] | None = None) -> WriteCounts:
        """Insert or replace records of a registered scheme; unchanged ones (same content hash) are left alone.
        `line_hashes`: id -> hash of the raw JSONL line each record was read from (app.store.bulk)."""
        from calibration.schemes.base import get

        scheme = get(scheme_name)
        counts = WriteCounts()
        prepared = []
        for r in records:
            data = scheme.to_json(r)
            payload = {k: v for k, v in data.items() if k not in ("scheme", "id", "split", "meta")}
            prepared.append((scheme.record_id(r), r, data, payload, content_hash(data)))
        todo, replaced = self.changed_samples(scheme.name, [(sid, h) for sid, _, _, _, h in prepared], counts, line_hashes)
        line_hashes = line_hashes or {}
        with self.transaction() as c:
            deltas = unit_counts(c, sorted(replaced))
            deltas[("samples", scheme.name, "")] += counts.added
            for sid in replaced:
                c.execute("DELETE FROM units WHERE sample_id = ?", (sid,))
                c.execute("DELETE FROM machine_labels WHERE sample_id = ? AND source = ?", (sid, IMPORT_SOURCE))
            for sid, r, data, payload, h in prepared:
                if sid not in todo:
                    continue
                meta = data.get("meta")
                c.execute(
                    "INSERT INTO samples (id, scheme, dataset_id, text, payload, split, meta, content_hash, line_hash) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET dataset_id=excluded.dataset_id, "
                    "text=excluded.text, payload=excluded.payload, split=excluded.split, meta=excluded.meta, "
                    "content_hash=excluded.content_hash, line_hash=excluded.line_hash",
                    (sid, scheme.name, dataset_id, scheme.record_text(r), dumps(payload), data.get("split"),
                     None if meta is None else dumps(meta), h, line_hashes.get(sid)),
                )
                for unit in scheme.units(r):
                    deltas[("units", scheme.name, unit)] += 1
                    c.execute("INSERT INTO units (sample_id, scheme, unit, summary) VALUES (?, ?, ?, ?)",
                              (sid, scheme.name, unit, dumps(scheme.unit_summary(r, unit))))
                    label = scheme.machine_label(r, unit)
                    if label is not None:
                        c.execute("INSERT INTO machine_labels VALUES (?, ?, ?, ?, NULL, ?) ON CONFLICT DO UPDATE SET "
                                  "value=excluded.value, error=NULL, created_at=excluded.created_at",
                                  (sid, unit, IMPORT_SOURCE, dumps(label), now()))
            add_counts(c, deltas)
            own = store_adapter(scheme.name).write_records
            if own is not None:  # the scheme's own tables, in the same transaction
                own(self.project, [r for sid, r, _, _, _ in prepared if sid in todo])
        return counts

    def records(self, scheme_name: str, ids: Sequence[str] | None = None,
                stored: Callable[[dict[str, Any]], Any] | None = None) -> list[Any]:
        """Records of a generically stored scheme, parsed back from their payloads (import order). `stored`: the
        scheme's reader of a record as its `to_json` wrote it (no problems collected: its store hook
        `load_records` passes it), tried first; a payload it refuses (ValueError, KeyError, TypeError,
        AttributeError) goes to the scheme's parser."""
        from calibration.schemes.base import get

        scheme = get(scheme_name)
        where, params = "", [scheme.name]
        if ids is not None:
            if not ids:
                return []
            where, params = f" AND id IN ({','.join('?' * len(ids))})", [scheme.name, *ids]
        out = []
        for sid, split, meta, payload in self.conn.execute(
            f"SELECT id, split, meta, payload FROM samples WHERE scheme = ?{where} ORDER BY rowid", params
        ):
            data = {"scheme": scheme.name, "id": sid, **json.loads(payload)}
            if split is not None:
                data["split"] = split
            if meta is not None:
                data["meta"] = json.loads(meta)
            if stored is not None:
                try:
                    out.append(stored(data))
                    continue
                except (ValueError, KeyError, TypeError, AttributeError):
                    pass
            parsed = scheme.parse(data)
            if parsed.record is not None:
                out.append(parsed.record)
        return out

    def sample_rows(self, scheme: str) -> dict[str, dict[str, Any]]:
        """Every sample of a scheme by id, meta parsed and payload fields alongside, in one query (bulk readers)."""
        rows = self.query("SELECT id, text, payload, split, meta FROM samples WHERE scheme = ? ORDER BY rowid", (scheme,))
        return {row["id"]: _row(row) for row in rows}

    def sample_row(self, sample_id: str) -> dict[str, Any] | None:
        rows = self.query("SELECT * FROM samples WHERE id = ?", (sample_id,))
        return _row(rows[0]) if rows else None

    # -- machine labels (any scheme: what an LLM, judge or imported file assigned to a unit) ------------------------
    def save_machine_label(self, sample_id: str, unit: str, source: str, value: Any, error: str | None = None,
                           summary: Mapping[str, Any] | None = None) -> None:
        """Store one machine label (None with an error when the machine failed); `summary` updates the unit's."""
        with self.transaction() as c:
            c.execute(
                "INSERT INTO machine_labels VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(sample_id, unit, source) "
                "DO UPDATE SET value=excluded.value, error=excluded.error, created_at=excluded.created_at",
                (sample_id, unit, source, None if value is None else dumps(value), error, now()),
            )
            if summary:
                c.execute("UPDATE units SET summary = json_patch(summary, ?) WHERE sample_id = ? AND unit = ?",
                          (dumps(dict(summary)), sample_id, unit))

    def save_machine_unit(self, sample_id: str, unit: str, source: str, value: Any, error: str | None = None,
                          summary: Mapping[str, Any] | None = None) -> None:
        """A machine label that is a unit of its own (e.g. an LLM annotator's labels of a sample, unit = source):
        stored like save_machine_label and, when it succeeded, listed as the sample's unit `unit` with `summary`.
        A failure stores the error only, so the list shows no unit without labels."""
        with self.transaction() as c:
            c.execute(
                "INSERT INTO machine_labels VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(sample_id, unit, source) "
                "DO UPDATE SET value=excluded.value, error=excluded.error, created_at=excluded.created_at",
                (sample_id, unit, source, None if value is None else dumps(value), error, now()),
            )
            if value is not None:
                new = c.execute("SELECT s.scheme FROM samples s WHERE s.id = ? AND NOT EXISTS (SELECT 1 FROM units u "
                                "WHERE u.sample_id = s.id AND u.unit = ?)", (sample_id, unit)).fetchone()
                c.execute("INSERT INTO units (sample_id, scheme, unit, summary) SELECT id, scheme, ?, ? FROM samples "
                          "WHERE id = ? ON CONFLICT(sample_id, unit) DO UPDATE SET summary=excluded.summary",
                          (unit, dumps(dict(summary or {})), sample_id))
                if new is not None:
                    add_counts(c, {("units", new[0], unit): 1})

    def machine_labels(self, scheme: str, source_prefix: str = "") -> dict[str, dict[tuple[str, str], Any]]:
        """Successful machine labels of a scheme's units by source (those starting with `source_prefix`):
        source -> (sample, unit) -> value. What an evaluation shows beside the checkers (e.g. `llm_judge:<model>`)."""
        out: dict[str, dict[tuple[str, str], Any]] = {}
        for sid, unit, source, value in self.conn.execute(
            "SELECT m.sample_id, m.unit, m.source, m.value FROM machine_labels m JOIN samples s ON s.id = m.sample_id "
            "WHERE s.scheme = ? AND m.value IS NOT NULL AND substr(m.source, 1, ?) = ? ORDER BY m.rowid",
            (scheme, len(source_prefix), source_prefix),
        ):
            out.setdefault(source, {})[(sid, unit)] = json.loads(value)
        return out

    def newest_machine_values(self, scheme: str) -> dict[tuple[str, str], str | None]:
        """(sample, unit) -> the JSON text of the unit's newest successful machine label, for a whole scheme in one
        query (what `machine_label(sid, unit)` reads one unit at a time: a query per unit was most of the ceiling's
        reading). A unit with several successful labels maps to None: ask `machine_label` for it, whose choice
        among labels made in the same second this does not try to copy."""
        out: dict[tuple[str, str], str | None] = {}
        for sid, unit, value in self.conn.execute(
            "SELECT m.sample_id, m.unit, m.value FROM machine_labels m JOIN samples s ON s.id = m.sample_id "
            "WHERE s.scheme = ? AND m.value IS NOT NULL", (scheme,),
        ):
            out[(sid, unit)] = None if (sid, unit) in out else value
        return out

    def machine_label(self, sample_id: str, unit: str, source: str | None = None) -> dict[str, Any] | None:
        """The machine label row of a unit (value parsed): the named source, else the newest successful one."""
        if source is not None:
            rows = self.query("SELECT * FROM machine_labels WHERE sample_id=? AND unit=? AND source=?", (sample_id, unit, source))
        else:
            rows = self.query(
                "SELECT * FROM machine_labels WHERE sample_id=? AND unit=? AND value IS NOT NULL "
                "ORDER BY created_at DESC LIMIT 1",
                (sample_id, unit),
            )
        if not rows:
            return None
        row = rows[0]
        row["value"] = None if row["value"] is None else json.loads(row["value"])
        return row


def store_adapter(scheme_name: str) -> StorePart:
    """What the scheme keeps in tables of its own (app/schemes/<name>/store.py) as a typed part, every hook None for a
    scheme stored generically (the same lookup as app/io/records.io_adapter: nothing here names a scheme)."""
    from app.schemes import loader

    return loader.store(scheme_name)


# The label reads scan the labels table in stored order and let SQLite's sorter order the rows: walking an index
# (labels_resolved, the primary key) costs a table lookup per row, twice the CPU at 100k samples. The order: sample,
# unit, then event (a later label of a kind replaces an earlier one), ties of one event by kind and annotator (the
# order the index walk gave them), so every read comes in one defined order.
_LABELS_STORED = "labels l NOT INDEXED"
_LABEL_ORDER = "l.sample_id, l.unit, l.event_id, l.kind, l.annotator"


class SchemeDataPart(ProjectPart):
    """`project.scheme_data`: what the registry-driven services read for any scheme: its records, its human labels,
    applied parameters (a scheme's store part answers for its own tables, through the hooks of its contribution)."""

    _records_memo: dict[tuple, list[Any]] | None = None  # while `records_once` is open

    @contextmanager
    def records_once(self) -> Iterator[None]:
        """Within: a scheme's records are parsed once while the project is unchanged (a command that reads them
        twice, e.g. `evaluate` and its human ceiling: parsing trace records was most of it at 20k samples). Keyed
        by this connection's changes and SQLite's data_version (others' commits), so a write reads them again."""
        self._records_memo = {}
        try:
            yield
        finally:
            self._records_memo = None

    def rekey_memo(self) -> None:
        """Key what `records_once` holds to the project's connection, after it was replaced by another on the same
        file with nothing written in between (the human ceiling's forked worker, app/services/ceiling_worker.py,
        reads through a connection of its own: the records and labels the parent read are not read again there)."""
        memo = self._records_memo
        if not memo:
            return
        now = (self.conn.total_changes, self.conn.execute("PRAGMA data_version").fetchone()[0])
        moved = {(*key[:-2], *now): value for key, value in memo.items()}
        memo.clear()
        memo.update(moved)

    def scheme_records(self, scheme_name: str) -> list[Any]:
        """Every record of a scheme as its `base.Scheme` type: the store adapter's `load_records(project)` when the
        scheme keeps tables of its own, else the generic payloads (`records`); parsed once within `records_once`."""
        memo = self._records_memo
        if memo is None:
            return self._scheme_records(scheme_name)
        key = (scheme_name, self.conn.total_changes, self.conn.execute("PRAGMA data_version").fetchone()[0])
        if key not in memo:
            # another scheme's records go (one scheme's at a time); this scheme's labels read in the same state stay
            # (an evaluate hook that reads lighter columns than the records read its labels first)
            for k in [k for k in memo if k[-2:] != key[1:] or scheme_name not in k[:2]]:
                del memo[k]
            memo[key] = self._scheme_records(scheme_name)
        return list(memo[key])

    def _scheme_records(self, scheme_name: str) -> list[Any]:
        loader = store_adapter(scheme_name).load_records
        if loader is not None:
            return list(loader(self.project))
        return self.project.samples.records(scheme_name)

    def scheme_item_records(self, scheme_name: str) -> dict[str, Any]:
        """Record id -> what the scheme's `label_items` reads of the record (agreement's items): the store adapter's
        `item_records(project)` when it can count that in SQL, else every record (`scheme_records`)."""
        loader = store_adapter(scheme_name).item_records
        if loader is not None:
            return loader(self.project)
        from calibration.schemes.base import registry

        scheme = registry().get(scheme_name)
        return {scheme.record_id(r): r for r in self.scheme_records(scheme_name)}

    def scheme_labels(self, scheme_name: str, annotator: str | None = None) -> dict[tuple[str, str], dict[str, Any]]:
        """(sample, unit) -> kind -> value: the resolved human labels of a scheme's samples (or one annotator's).
        Per-sample kinds sit under unit ''. Read once within `records_once` while the project is unchanged (evaluate
        and its human ceiling both read them: a second at 100k samples); callers get their own outer dict, and
        treat the per-unit dicts and their values as read-only: units with equal labels share them (label_reads)."""
        memo = self._records_memo
        if memo is None:
            return self._scheme_labels(scheme_name, annotator)
        key = ("labels", scheme_name, annotator, id(self.project.guidelines.excluded_labels), self.conn.total_changes,
               self.conn.execute("PRAGMA data_version").fetchone()[0])  # the guideline's exclusions in force too
        if key not in memo:
            memo[key] = self._scheme_labels(scheme_name, annotator)
        return dict(memo[key])

    def _scheme_labels(self, scheme_name: str, annotator: str | None) -> dict[tuple[str, str], dict[str, Any]]:
        who, params = ("l.resolved = 1", (scheme_name,)) if annotator is None else ("l.annotator = ?", (scheme_name, annotator))
        excluded = self.project.guidelines.excluded_labels  # app/store/guidelines.py: labels of another guideline
        return read_labels(self.conn.execute(
            f"SELECT l.sample_id, l.unit, l.kind, l.value, l.annotator FROM {_LABELS_STORED} JOIN samples s ON "
            f"s.id = l.sample_id WHERE s.scheme = ? AND {who} AND l.value IS NOT NULL ORDER BY {_LABEL_ORDER}", params
        ), excluded, loads)

    def labels_by_annotator(self, scheme_name: str) -> dict[str, dict[tuple[str, str], dict[str, Any]]]:
        """Annotator -> `scheme_labels(scheme_name, annotator)`, the same dicts, of every annotator with a label, from
        one read of the labels (one per annotator was 0.85 s each at 100k samples for the judge's evaluate): each
        annotator's rows come in the order of their own query (sample, unit, then event order)."""
        excluded = self.project.guidelines.excluded_labels  # app/store/guidelines.py: labels of another guideline
        return read_labels_by_annotator(self.conn.execute(
            f"SELECT l.sample_id, l.unit, l.kind, l.value, l.annotator FROM {_LABELS_STORED} JOIN samples s ON "
            f"s.id = l.sample_id WHERE s.scheme = ? AND l.value IS NOT NULL ORDER BY {_LABEL_ORDER}", (scheme_name,)
        ), excluded, loads)

    # -- applied parameters (what `calibrate --apply NAME` saves), per scheme ---------------------------------------
    # A scheme's store adapter may keep them in a table of its own (`save_params` / `load_params` / `param_refs`
    # hooks); any other scheme's go to the meta table as `params/<scheme>/<name>@<version>` -> JSON, so a plug-in
    # scheme needs no migration.
    def param_refs(self, scheme_name: str) -> list[str]:
        hook = store_adapter(scheme_name).param_refs
        if hook is not None:
            return list(hook(self.project))
        prefix = f"params/{scheme_name}/"
        return [k[len(prefix):] for (k,) in self.conn.execute(
            "SELECT key FROM meta WHERE key >= ? AND key < ? ORDER BY rowid", (prefix, prefix + "\uffff"))]

    def save_params(self, scheme_name: str, name: str, params: dict[str, Any], origin: str = "calibration",
                    version: str | None = None) -> str:
        """Save `params` as the next version of `name` (1.0.0, then 1.1.0, ...); returns `name@version`. An explicit
        `version` (a preset's own, pinned in the project) is stored as given; storing it again is a no-op, with
        different content it is refused (bump the version)."""
        if not name or "@" in name or "|" in name or "/" in name:
            raise ValueError(f"{name!r}: a parameter set name without '@', '|' or '/'")
        if version is not None and not all(x.isdigit() for x in version.split(".")):
            raise ValueError(f"{version!r}: a version of dot-separated numbers, e.g. 1.0.0")
        if version is None:
            versions = [r.split("@", 1)[1] for r in self.param_refs(scheme_name) if r.split("@", 1)[0] == name]
            version = "1.0.0"
            if versions:
                major, minor, _ = max(tuple(int(x) for x in v.split(".")) for v in versions)
                version = f"{major}.{minor + 1}.0"
        hook = store_adapter(scheme_name).save_params
        if hook is not None:
            return str(hook(self.project, name, version, params, origin))
        ref = f"{name}@{version}"
        key, data = f"params/{scheme_name}/{ref}", dumps(params)
        old = self.project.get_meta(key)
        if old is not None and old != data:
            raise ValueError(f"{scheme_name} parameters {ref} already exist with different settings; bump the version")
        self.project.set_meta(key, data)
        return ref

    def load_params(self, scheme_name: str, ref: str) -> dict[str, Any]:
        """`name@version` or `name` (its newest version); the scheme's presets are the caller's business."""
        hook = store_adapter(scheme_name).load_params
        if hook is not None:
            return dict(hook(self.project, ref))
        name, _, version = ref.partition("@")
        refs = [r for r in self.param_refs(scheme_name) if r == ref or (not version and r.split("@", 1)[0] == name)]
        if not refs:
            raise KeyError(ref)
        refs.sort(key=lambda r: tuple(int(x) for x in r.split("@", 1)[1].split(".")))
        return json.loads(str(self.project.get_meta(f"params/{scheme_name}/{refs[-1]}")))
