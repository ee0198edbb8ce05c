"""Import rules of the `rubric` scheme that need more than one record: a trait has one definition across the file
and the project (the project's stored definition is written verbatim, so the store sees the same one)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from app.io.export_parts import NO_SPLIT, Part, SchemeExport, count_splits
from app.io.export_select import unit_wanted
from app.io.problems import Location
from app.schemes.contracts import LABELS_COLUMNS  # the labels file both curated exports share
from calibration.schemes.base import Table
from calibration.schemes.fields import clip
from calibration.schemes.rubric.records import RubricSample
from calibration.schemes.rubric import BucketError, validate_buckets
from calibration.schemes.rubric.traits import MetricTrait, TraitError

if TYPE_CHECKING:
    from app.corrections import SetLabels
    from app.io.export_select import Filters
    from app.progress import Progress
    from app.io.problems import Problems
    from app.io.records import RecordValidator, Validated
    from app.store import Project, WriteCounts

SCHEME = "rubric"


def project_context(project: "Project") -> dict[str, Any]:
    """The traits the project defines (name -> stored definition): a file may use them, not redefine them."""
    return {t["name"]: t for t in project.store(SCHEME).traits()}


TABLE_COLUMNS = ("question", "response", "traits")


def table_columns(columns: set[str]) -> list[str] | None:
    """Any one of the rubric's columns makes a table a rubric table: the others are then missing."""
    return [c for c in TABLE_COLUMNS if c not in columns] if columns.intersection(TABLE_COLUMNS) else None


def check(v: "RecordValidator", loc: Location, record: RubricSample | None) -> None:
    if record is None:
        return
    for i, t in enumerate(record.traits):
        _consistent(v, loc, f"traits[{i}]", t)


def collect(v: "RecordValidator", loc: Location, record: RubricSample) -> None:
    known = v.context(SCHEME) or {}
    stored = [known.get(t["name"]) for t in record.traits]
    if any(d is not None for d in stored):
        record = replace(record, traits=tuple(dict(d) if d is not None else t for d, t in zip(stored, record.traits)))
    v.out.of(SCHEME, list).append(record)


def prepare(out: "Validated", line_hashes: Mapping[str, bytes]) -> list[RubricSample]:
    """What a streamed import's chunk hands to `write_prepared` (the records: the store prepares their rows; the line
    hashes reach it through `write_prepared`)."""
    return list(out.own.get(SCHEME, ()))


def write_prepared(project: "Project", records: list[RubricSample], dataset_id: int | None,
                   line_hashes: Mapping[str, bytes]) -> "WriteCounts":
    return project.store(SCHEME).write_rubric_samples(records, dataset_id, line_hashes)


def _consistent(v: "RecordValidator", loc: Location, path: str, canonical: dict[str, Any]) -> None:
    name = canonical["name"]
    stored = (v.context(SCHEME) or {}).get(name)
    if stored is not None:
        try:
            same = MetricTrait.from_dict(stored, strict=False).to_dict() == canonical
        except (TraitError, TypeError):
            same = False
        if not same:
            v.problems.error(loc, path, f"trait {clip(name)} is already defined differently in the project")
        return
    seen = v.state_of(SCHEME, dict)  # trait name -> (definition, where first defined, field path)
    first = seen.get(name)
    if first is None:
        seen[name] = (dict(canonical), loc, path)
    elif first[0] != canonical:
        v.problems.error(loc, path, f"trait {clip(name)} is defined differently at {first[1]}")


def merge_state(v: "RecordValidator", mine: dict[str, Any], theirs: dict[str, Any]) -> None:
    """The trait definitions a later part of the file saw: one defined differently there is an error."""
    for name, (definition, loc, path) in theirs.items():
        seen = mine.get(name)
        if seen is None:
            mine[name] = (definition, loc, path)
        elif seen[0] != definition:
            v.problems.error(loc, path, f"trait {clip(name)} is defined differently at {seen[1]}")


# -- labels lines: a human's buckets for a (sample, trait) unit -------------------------------------------------------
LABEL_UNIT_KEY = "trait"
LABEL_VALUE_KEY = "buckets"
LABEL_KEYS = frozenset(("scheme", "sample", "trait", "annotator", "buckets"))


def label_command(problems: "Problems", loc: Location, rec: dict[str, Any], sid: str | None, unit: str | None,
                  unit_row: dict[str, Any] | None, ok: bool, status: str) -> "SetLabels | None":
    """{"sample", "trait", "annotator", "buckets": {"tp", "fn", "fp", "tn"}} -> the app's "edit buckets" change
    (the buckets plus `status`)."""
    from app.schemes.rubric.corrections import set_buckets
    dropped: list[str] = []
    try:
        buckets = validate_buckets(rec.get("buckets"), "buckets", dropped) if "buckets" in rec else None
    except BucketError as exc:
        problems.error(loc, exc.path, exc.message)
        return None
    for path in dropped:  # dropped as sample import drops them, and said, as sample import says it
        problems.warn(loc, path, "empty or whitespace-only excerpt dropped (as Karenina's deduplication does)")
    if buckets is None:
        problems.error(loc, "buckets", "is required")
        return None
    if not ok or sid is None or unit is None:
        return None
    return set_buckets(sid, unit, dict(buckets), status, "import buckets")


# -- export: the curated split (rubric records with the human buckets and their metrics) ----------------------------
# A (sample, trait) unit is decided when it has a 'buckets' label, or status 'accepted' alone, which means the human
# accepted the machine's buckets.
STRATUM = f"({SCHEME})"  # --stratify category: rubric samples have no category; they keep their share of the draw


@dataclass
class RubricUnit:
    sample_id: str
    trait: str
    annotator: str
    buckets: dict[str, list[str]]
    definition: dict[str, Any]


def canonical_trait(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The trait as import stores it (MetricTrait.to_dict), so a split imported elsewhere exports the same bytes."""
    try:
        return MetricTrait.from_dict(definition, strict=False).to_dict()
    except (TraitError, TypeError):
        return dict(definition)


def _rubric_units(project: Any, f: "Filters", labels: Mapping, skipped: Counter) -> dict[str, list[RubricUnit]]:
    chosen: dict[str, list[RubricUnit]] = {}
    store = project.store(SCHEME)
    definitions = {t["name"]: t for t in store.traits()}
    for row in store.rubric_units():
        sid, trait = row["sample_id"], row["trait"]
        status, status_by = labels.get((sid, trait, "status"), (None, ""))
        if not unit_wanted(status, trait, f):
            continue
        human = labels.get((sid, trait, "buckets"))
        if human is not None:
            raw, annotator = human
        elif status == "accepted":
            machine = store.bucket_assignment(sid, trait)
            if machine is None or machine["buckets"] is None:
                skipped["accepted without any buckets"] += 1
                continue
            raw, annotator = machine["buckets"], status_by
        else:
            skipped["no human buckets"] += 1
            continue
        try:
            buckets = {k: list(v) for k, v in validate_buckets(raw).items()}
        except BucketError:
            skipped["invalid human buckets"] += 1
            continue
        chosen.setdefault(sid, []).append(RubricUnit(sid, trait, annotator, buckets, canonical_trait(definitions[trait])))
    return chosen


class RubricExport(SchemeExport):
    """`rubric.<ext>` (records with the decided traits, human buckets and metrics) and the human buckets in the
    shared `labels` file; counts per trait; LLM-vs-human bucket agreement per trait."""

    scheme = SCHEME
    columns = {SCHEME: ("id", "question", "response", "traits", "buckets", "metrics", "split", "meta"),
               "labels": LABELS_COLUMNS}

    def candidates(self, project: Any, f: "Filters", skipped: Counter[str], progress: "Progress | None") -> Part:
        rows = project.decisions.label_rows(("status", "buckets"))
        labels = {(r["sample_id"], r["unit"], r["kind"]): (r["value"], r["annotator"]) for r in rows}
        chosen = _rubric_units(project, f, labels, skipped)
        sample_rows = project.samples.sample_rows(SCHEME) if chosen else {}
        part = Part(SCHEME, self)
        for sid in chosen:
            if f.stratify == "category":
                part.strata[sid] = STRATUM
            elif f.stratify == "split":
                part.strata[sid] = sample_rows[sid]["split"] or NO_SPLIT
            elif f.stratify == "unit":
                part.strata[sid] = "+".join(sorted(u.trait for u in chosen[sid]))
            else:
                part.strata[sid] = "all"
        part.state = {"chosen": chosen, "rows": sample_rows, "units": []}
        return part

    def export_rows(self, project: Any, part: Part, keep: set[str]) -> None:
        from calibration.schemes.rubric import BUCKET_NAMES, BucketError, TraitError, compute_trait_metrics

        st = part.state
        records: list[dict[str, Any]] = []
        labels: list[dict[str, Any]] = []
        for sid in sorted(keep & set(st["chosen"])):
            row = st["rows"][sid]
            units = sorted(st["chosen"][sid], key=lambda u: u.trait)
            metrics = {}
            for u in units:
                try:
                    metrics[u.trait] = compute_trait_metrics(MetricTrait.from_dict(u.definition, strict=False), u.buckets)
                except (TraitError, BucketError):
                    metrics[u.trait] = {}
            records.append({
                "id": sid, "question": row.get("question"), "response": row.get("text"), "split": row.get("split"),
                "meta": row.get("meta"), "traits": [u.definition for u in units],
                "buckets": {u.trait: {b: u.buckets[b] for b in BUCKET_NAMES} for u in units}, "metrics": metrics,
            })
            for u in units:
                labels.append({"sample": sid, "trait": u.trait, "annotator": u.annotator,
                               "buckets": {b: u.buckets[b] for b in BUCKET_NAMES}})
            st["units"].extend(units)
        part.datasets = {SCHEME: records, "labels": labels}
        part.annotators = {u.annotator for u in st["units"]}
        part.by_split = count_splits(records)
        part.n_units, part.n_labels = len(st["units"]), len(labels)
        part.unit_keys = {(u.sample_id, u.trait) for u in st["units"]}

    def manifest_counts(self, part: Part) -> dict[str, Any]:
        by_trait: dict[str, Counter[str]] = {}
        for u in part.state["units"]:
            t = by_trait.setdefault(u.trait, Counter())
            t["units"] += 1
            for b, items in u.buckets.items():
                t[b] += len(items)
        return {"by_trait": {k: dict(sorted(v.items())) for k, v in sorted(by_trait.items())}}

    def manifest_agreement(self, project: Any, part: Part, config_ref: str) -> dict[str, Any]:
        from calibration.schemes.rubric.agreement import rubric_agreement

        pairs = []
        store = project.store(SCHEME)
        for u in part.state["units"]:
            llm = store.bucket_assignment(u.sample_id, u.trait)
            if llm is None or llm["buckets"] is None:
                continue
            try:
                pairs.append((llm["buckets"], u.buckets, MetricTrait.from_dict(u.definition, strict=False)))
            except TraitError:
                continue
        rubric = rubric_agreement(pairs) if pairs else {}
        return {"rubric_llm_vs_human": dict(sorted(rubric.items()))}

    def card_files(self, ext: str) -> list[str]:
        return [f"- `{SCHEME}.{ext}`: one record per question/response: `traits` (definitions), `buckets` (the human "
                "TP/FN/FP/TN buckets per trait) and `metrics` (computed from those buckets)."]

    def card_label_line(self) -> str | None:
        return "`{sample, trait, annotator, buckets}` for rubric traits"

    def card_agreement(self, manifest: Mapping[str, Any]) -> list[str]:
        from app.io.markdown import cell, number

        rubric = manifest["agreement"]["rubric_llm_vs_human"]
        if not rubric:
            return []
        return ["LLM buckets vs human buckets per trait:", "", "| trait | samples | kept share | kappa |", "|---|---|---|---|",
                *[f"| {cell(k)} | {v['n_samples']} | {number(v['kept_share'])} | {number(v['kappa'])} |"
                  for k, v in rubric.items()], ""]

    def count_tables(self, counts: Mapping[str, Any]) -> list[Table]:
        if not counts["by_trait"]:
            return []
        return [Table("per trait (human buckets)", ("trait", "units", "tp", "fn", "fp", "tn"),
                      tuple((k, *(str(v.get(c, 0)) for c in ("units", "tp", "fn", "fp", "tn")))
                            for k, v in counts["by_trait"].items()))]


EXPORT = RubricExport()
