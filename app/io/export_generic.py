"""The split's part for schemes without a store adapter (trace, rgb, addm, plug-ins): read through the registry.

A unit is selected when a human decided on it (app/store/counts.py: a label, a status, or a per-sample label of its
sample), its resolved status is one of the requested ones (any, when statuses is None) and its unit name passes
--checker. A sample is in the split when one of its units is. Datasets:
  <scheme>         the records as import reads them (`Scheme.to_json`), so the split imports again unchanged;
  <scheme>_labels  every annotator's labels of the selected units, one line per (sample, unit, kind, annotator):
                   {"scheme", "sample", "unit", "kind", "value", "annotator", "resolved"} -- the generic label line
                   `concord labels import` reads (README: "Label lines").
  <extra>          whatever the scheme's io adapter adds: `export_extra(project, records, labels)` in
                   app/schemes/<name>/io.py returns {dataset name: rows} for the selected records (parsed) and the
                   resolved labels of their scheme (e.g. trace: the TRACe scores of every label source, `trace_scores`).
Schemes with an export adapter (`EXPORT` in app/schemes/<name>/io.py) keep their own curated export.
Sampling: a sample's stratum is its record's `split` (--stratify split), the scheme ((<scheme>), --stratify
category: these schemes have no categories, so each keeps its share of the draw) or the units decided on it,
joined with '+' (--stratify unit).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from app.io.export_parts import NO_SPLIT, Part, SchemeExport, count_splits

if TYPE_CHECKING:
    from app.io.export_select import Filters
    from app.progress import Progress
    from app.store import Project

def _wanted(kinds: Mapping[str, Any], unit: str, statuses: tuple[str, ...] | None, units: tuple[str, ...] | None) -> bool:
    """A decided unit passes --checker and --status (None: any decision)."""
    if units is not None and unit not in units:
        return False
    return statuses is None or kinds.get("status") in statuses


class GenericExport(SchemeExport):
    """A scheme exported through the registry: its records (`to_json`) and every annotator's labels."""

    def __init__(self, scheme: str) -> None:
        self.scheme = scheme

    def candidates(self, project: "Project", f: "Filters", skipped: Counter[str], progress: "Progress | None") -> Part:
        from calibration.schemes.base import get

        scheme = get(self.scheme)
        resolved = project.scheme_data.scheme_labels(self.scheme)
        # the units a human decided on, by the rule every count uses (a per-sample label decides its sample's units)
        decided = project.counts.decided_units(self.scheme)
        chosen = sorted(k for k in decided if _wanted(resolved.get(k, {}), k[1], f.statuses, f.checkers))
        part = Part(self.scheme, self)
        units: dict[str, list[str]] = {}
        for sid, unit in chosen:
            units.setdefault(sid, []).append(unit)
        records, parsed = {}, {}
        for record in project.samples.records(self.scheme, sorted(units)) if units else ():
            data = scheme.to_json(record)
            records[str(data["id"])] = data
            parsed[str(data["id"])] = record
        for sid in sorted(units):
            if f.stratify == "split":
                key = records[sid].get("split") or NO_SPLIT
            elif f.stratify == "category":
                key = f"({self.scheme})"
            elif f.stratify == "unit":
                key = "+".join(sorted(units[sid]))
            else:
                key = "all"
            part.strata[sid] = key
        part.state = (scheme, units, records, parsed, resolved)
        return part

    def export_rows(self, project: "Project", part: Part, keep: set[str]) -> None:
        scheme, units, records, parsed, resolved = part.state
        ids = sorted(keep & set(units))
        out = [records[sid] for sid in ids]
        part.n_units = sum(len(units[sid]) for sid in ids)
        part.unit_keys = {(sid, u) for sid in ids for u in units[sid]}
        part.by_split = count_splits(out)
        wanted = {(sid, u) for sid in ids for u in units[sid]} | {(sid, "") for sid in ids}  # per-sample labels too
        labels = []
        for row in project.decisions.label_rows(list(scheme.label_kinds), every_annotator=True):
            if (row["sample_id"], row["unit"]) in wanted:
                labels.append({"scheme": self.scheme, "sample": row["sample_id"], "unit": row["unit"],
                               "kind": row["kind"], "value": row["value"], "annotator": row["annotator"],
                               "resolved": bool(row["resolved"])})
        labels.sort(key=lambda r: (r["sample"], r["unit"], r["kind"], r["annotator"]))
        if out:
            part.datasets = {self.scheme: out, f"{self.scheme}_labels": labels}
            from app.io.records import io_adapter

            extra = io_adapter(self.scheme).export_extra
            if extra is not None:
                part.datasets.update(extra(project, [parsed[sid] for sid in ids], resolved))
        part.n_labels = len(labels)

    def manifest_counts(self, part: Part) -> dict[str, Any]:
        return {}

    def card_tables(self, manifest: Mapping[str, Any], ext: str) -> list[str]:
        from app.io.markdown import cell

        v = manifest["counts"]["schemes"].get(self.scheme)
        if v is None:
            return []
        scheme = self.scheme
        return [f"`{scheme}.{ext}` holds {v['samples']} {cell(scheme)} records ({v['units']} human-decided units) as "
                f"`concord import` reads them; `{scheme}_labels.{ext}` holds every annotator's {v['labels']} labels of "
                "those units as label lines `{scheme, sample, unit, kind, value, annotator, resolved}`.", ""]
