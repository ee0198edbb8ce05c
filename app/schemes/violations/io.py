"""Import rules of the `violations` scheme that need more than one record: checker names that do not look like
`name@version|model` are reported once per file; grounding statistics for the report."""
from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from app.io.export_parts import NO_SPLIT, Part, SchemeExport, count_splits
from app.io.export_select import unit_wanted
from app.io.labelstudio import SPANS, LabelStudioMapping, Span
from app.io.problems import Location, key, type_name
from app.io.records import CHECKER_RE
from app.progress import check as check_progress
from app.schemes.contracts import LABELS_COLUMNS
from calibration.schemes.base import Parsed, Table
from calibration.schemes.violations.parse import PlainSample, ViolationRecord, parse_record, plain_record
from calibration.schemes.violations.records import VIOLATION_FIELDS, Violation, ViolationSample

if TYPE_CHECKING:
    from app.corrections import SetLabels
    from app.io.export_select import Filters
    from app.progress import Progress
    from app.io.problems import Problems
    from app.io.records import RecordValidator, Validated
    from app.store import Project, WriteCounts
    from app.schemes.violations.store import PreparedViolations
    from app.schemes.violations.store_packed import PackedViolations

SCHEME = "violations"


@dataclass
class Collected:
    """What `collect` gathers from a file's valid violations records (`Validated.own["violations"]`)."""

    samples: list[PlainSample | ViolationSample] = field(default_factory=list)
    groundings: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # only quotes located in the text
    metas: dict[str, Mapping[str, Any] | None] = field(default_factory=dict)
    how: Counter[str] = field(default_factory=Counter)  # how each violation was placed


@dataclass
class Facts:
    """The import summary's part about violations (app.schemes.contracts.ImportFacts): how many violations from how
    many checkers, and how the ones given by quote were placed."""

    violations: int = 0  # ground-truth plus predicted violations in the file
    checkers: set[str] = field(default_factory=set)
    grounding: Counter[str] = field(default_factory=Counter)  # offsets, exact, casefold, fuzzy, ungrounded

    def merge(self, other: Facts) -> None:
        self.violations += other.violations
        self.checkers |= other.checkers
        self.grounding.update(other.grounding)

    def note(self) -> str:
        return f"; {self.violations} violations from {len(self.checkers)} checker(s)"

    def lines(self) -> list[str]:
        located = {k: n for k, n in self.grounding.items() if k != "offsets" and n}
        return ["  placed by quote: " + ", ".join(f"{n} {k}" for k, n in sorted(located.items()))] if located else []


def facts(collected: Collected | None) -> Facts:
    if collected is None:
        return Facts()
    samples = collected.samples
    return Facts(sum(len(s.ground_truth) + sum(map(len, s.predictions.values())) for s in samples),
                 {c for s in samples for c in s.predictions}, Counter(collected.how))


TABLE_COLUMNS = ("text", "ground_truth", "predictions")


def table_columns(columns: set[str]) -> list[str] | None:
    """A table with a `text` column holds violations records: they need their ground truth and predictions too."""
    return [c for c in TABLE_COLUMNS if c not in columns] if "text" in columns else None


def parse(rec: dict[str, Any]) -> Parsed:
    """How import validates a record: one valid as it stands becomes plain values (`plain_record`: no Violation
    objects, the store writes their fields as they are), any other goes through the scheme's parse, which says
    what is wrong or locates its quotes. `check`, `collect`, `record_id` and the store's prepare take either."""
    plain = plain_record(rec) if type(rec) is dict else None
    return Parsed(plain) if plain is not None else parse_record(rec if type(rec) is dict else dict(rec))


def record_id(record: PlainSample | ViolationRecord) -> str:
    return record.id if type(record) is PlainSample else record.sample.id


@dataclass
class Checkers:
    """The checker names a file's records used so far (the validator's state of this scheme: `state_of`)."""

    odd: dict[str, Location] = field(default_factory=dict)  # not like name@version|model: first used at
    good: set[str] = field(default_factory=set)  # names already checked (a file repeats a few checkers everywhere)


def check(v: "RecordValidator", loc: Location, record: PlainSample | ViolationRecord | None) -> None:
    if record is None:
        return
    seen = v.state_of(SCHEME, Checkers)
    good = seen.good
    for checker in record.predictions if type(record) is PlainSample else record.sample.predictions:
        if checker not in good:
            if not CHECKER_RE.match(checker):
                seen.odd.setdefault(checker, loc)
            good.add(checker)


def merge_state(v: "RecordValidator", mine: Checkers, theirs: Checkers) -> None:
    for name, loc in theirs.odd.items():
        mine.odd.setdefault(name, loc)
    mine.good |= theirs.good


def collect(v: "RecordValidator", loc: Location, record: PlainSample | ViolationRecord) -> None:
    out = v.out.of(SCHEME, Collected)
    if type(record) is PlainSample:  # every violation placed by its offsets
        out.samples.append(record)
        if record.meta is not None:
            out.metas[record.id] = record.meta
        n = len(record.ground_truth) + sum(map(len, record.predictions.values()))
        if n:
            out.how["offsets"] += n
        return
    s = record.sample
    out.samples.append(s)
    if record.meta is not None:
        out.metas[s.id] = record.meta
    for hs in record.hows.values():
        if hs.count("offsets") != len(hs):  # only quotes located in the text need a note for the store
            out.groundings[s.id] = record.hows
            out.how.update(hs)
        elif hs:
            out.how["offsets"] += len(hs)


def finish(v: "RecordValidator") -> None:
    for name, first in v.state_of(SCHEME, Checkers).odd.items():
        v.problems.warn(first, f"predictions{key(name)}",
                        "checker names should look like name@version|model (e.g. baseline@1.0|gpt-4o)")


# -- streamed imports (app.io.parallel): rows prepared where the chunk was validated, written in file order ----------
def prepare(out: "Validated", line_hashes: Mapping[str, bytes]) -> "PreparedViolations":
    """The store rows of a chunk's valid records: the pure half of the store's write, so a worker process does it."""
    from app.schemes.violations.store import prepare_violation_samples

    mine: Collected = out.own.get(SCHEME) or Collected()
    return prepare_violation_samples(mine.samples, mine.groundings, mine.metas, line_hashes)


def pack(rows: "PreparedViolations") -> "PackedViolations":
    """A first load's rows as a worker sends them: one SQLite image the writer copies in C (store_packed)."""
    from app.schemes.violations.store_packed import pack as pack_rows

    return pack_rows(rows)


def write_prepared(project: "Project", rows: "PreparedViolations | PackedViolations", dataset_id: int | None,
                   line_hashes: Mapping[str, bytes]) -> "WriteCounts":
    from app.schemes.violations.store_packed import PackedViolations, write_packed

    if type(rows) is PackedViolations:
        return write_packed(project, rows, dataset_id)
    return project.store(SCHEME).write_prepared_violation_samples(rows, dataset_id, line_hashes)


# -- labels lines: an annotator's curated ground truth (issue #15) -------------------------------------------------
GROUND_TRUTH_LABEL_KEYS = frozenset(("scheme", "sample", "annotator", "ground_truth", "spans"))


def ground_truth_label(sample_id: str, text: str, rec: dict) -> tuple[str, list | None, list]:
    """A labels line {"sample", "annotator", "ground_truth": [V, ...]} (or "spans": [{"start", "end", "label"}])
    -> (label kind, value, FieldProblems), validated like the ground truth of an imported record."""
    from calibration.schemes.violations.curation import KIND, parse_ground_truth, spans_to_violations
    from calibration.schemes.base import FieldProblem

    if ("ground_truth" in rec) == ("spans" in rec):
        return KIND, None, [FieldProblem("", "a ground-truth line has either 'ground_truth' or 'spans', not both")]
    if "spans" in rec:
        raw, problems = spans_to_violations(rec["spans"])
        if problems:
            return KIND, None, problems
        value, problems = parse_ground_truth(sample_id, text, raw, "spans")
        return KIND, value, problems
    raw = rec["ground_truth"]
    if not isinstance(raw, list):
        return KIND, None, [FieldProblem("ground_truth", "expected an array of violations (use [] for none)")]
    value, problems = parse_ground_truth(sample_id, text, raw)
    return KIND, value, problems


# -- labels lines: a human's match decisions on a (sample, checker) unit ---------------------------------------------
LABEL_UNIT_KEY = "checker"
LABEL_VALUE_KEY = "matches"
LABEL_KEYS = frozenset(("scheme", "sample", "checker", "annotator", "matches"))


def label_command(problems: "Problems", loc: Location, rec: dict[str, Any], sid: str | None, unit: str | None,
                  unit_row: dict[str, Any] | None, ok: bool, status: str) -> "SetLabels | None":
    """{"sample", "checker", "annotator", "matches": [[gt, pred], ...]} -> the app's "accept" change (the matches
    plus `status`); `unit_row` (the unit's store row, None when the line already failed) bounds the indices."""
    from app.schemes.violations.corrections import set_matches

    pairs = _matches(problems, loc, rec.get("matches"), unit_row)
    if pairs is None or not ok or sid is None or unit is None:
        return None
    return set_matches(sid, unit, pairs, status, "import matches")


def _matches(problems: "Problems", loc: Location, raw: Any, unit: dict[str, Any] | None) -> list[tuple[int, int]] | None:
    """Pairs [gt, pred] inside the sample's lists, each index used at most once (matching is one-to-one)."""
    err = problems.error
    if type(raw) is not list:
        err(loc, "matches", "is required (use [] when nothing matches)" if raw is None
            else f"expected an array of [gt_index, pred_index] pairs, got {type_name(raw)}")
        return None
    pairs: list[tuple[int, int]] = []
    used_g: dict[int, int] = {}
    used_p: dict[int, int] = {}
    ok = True
    for i, pair in enumerate(raw):
        path = f"matches[{i}]"
        if type(pair) is not list or len(pair) != 2 or any(type(x) is not int for x in pair):
            err(loc, path, f"expected a pair of integer indices [gt_index, pred_index], got {json.dumps(pair)}")
            ok = False
            continue
        g, p = pair
        if unit is not None:
            for j, (idx, n, what) in enumerate(((g, unit["n_gt"], "ground-truth"), (p, unit["n_pred"], "predicted"))):
                if not 0 <= idx < n:
                    err(loc, f"{path}[{j}]", f"index {idx} is out of range: the sample has {n} {what} "
                                             f"violation{'s' if n != 1 else ''} (indices 0..{n - 1})" if n
                        else f"index {idx} is out of range: the sample has no {what} violations")
                    ok = False
        if g in used_g:
            err(loc, f"{path}[0]", f"ground-truth violation {g} is already matched in matches[{used_g[g]}] "
                                   "(matching is one-to-one)")
            ok = False
        if p in used_p:
            err(loc, f"{path}[1]", f"prediction {p} is already matched in matches[{used_p[p]}] (matching is one-to-one)")
            ok = False
        used_g.setdefault(g, i)
        used_p.setdefault(p, i)
        pairs.append((g, p))
    return pairs if ok else None


# -- export: the curated split (human-validated ground truth, the human matches re-indexed to it) -------------------
# A (sample, checker) unit is decided when it has a one-to-one 'matches' label whose indices still fit the sample (a
# stale label after a re-import is skipped and counted). Only a selected unit's predictions and labels are written,
# so every prediction list in a split has a human decision behind it. Ground-truth-only samples (no checker) are
# left out: the label format has no decision to carry for them, so they could not survive a round trip.
#
# Human-validated ground truth (the choice that makes a split round-trip through import unchanged):
# - GT violations the human marked wrong ('gt_wrong') are dropped;
# - predictions the human marked as missing GT ('missing_gt', on a selected unit) are appended to the GT, after the
#   kept ones, in checker then prediction order; two checkers flagging the same span and rule add one GT violation;
# - human matches are re-indexed to the new GT; a pair whose GT was dropped is removed; each added GT violation is
#   matched to the prediction it came from. A missing-GT mark on a prediction the human also matched is
#   contradictory and ignored. For the other checkers of the sample an added violation is unmatched.
# Importing the split (import_file for the data, import_labels for the decisions, which marks each unit 'accepted')
# gives a project without gt_wrong/missing_gt marks whose GT and matches are exactly these, so exporting it again
# with statuses that include 'accepted' writes the same files.
NO_CATEGORY = "(none)"
NO_VIOLATIONS = "(no violations)"
GT_POLICY = (
    "ground_truth = the sample's ground truth minus the violations a human marked wrong, plus the predictions a "
    "human marked as missing ground truth (appended; each matched to the prediction it came from)"
)
# the curated `labels` file violations and rubric share: its CSV/Parquet columns (rubric.py uses the same)
GT_CHANGES = ("dropped_gt_wrong", "added_missing_gt", "ignored_missing_gt")


@dataclass
class ViolationUnit:
    """One selected (sample, checker) unit with the human matches on the original and on the curated GT."""

    sample_id: str
    checker: str
    annotator: str
    n_gt_original: int
    n_pred: int
    matches_original: list[tuple[int, int]]
    matches: list[tuple[int, int]] = field(default_factory=list)


def violation_dict(v: Violation, text: str) -> dict[str, Any]:
    """A violation as the import format has it. With offsets, `quote` is kept only when it is exactly the text at
    the offsets (the importer's rule): a checker's loose quote that was located case-insensitively or fuzzily is
    dropped and its located span kept. Without offsets the quote is written, and import locates it again the same way.
    """
    d = {k: getattr(v, k) for k in VIOLATION_FIELDS}
    if v.grounded and v.quote is not None and text[v.start:v.end] != v.quote:
        d["quote"] = None
    return d


def _same_key(v: Violation) -> tuple[Any, ...]:
    return (v.start, v.end, v.rule) if v.grounded else (None, v.quote, v.rule)


def curate_sample(
    s: ViolationSample, units: list[ViolationUnit], gt_wrong: Sequence[int], missing: Mapping[str, Sequence[int]]
) -> tuple[list[Violation], dict[str, int]]:
    """The human-validated GT of one sample; fills each unit's `matches` (see the module docstring)."""
    wrong = {int(i) for i in gt_wrong if 0 <= int(i) < len(s.ground_truth)}
    kept = [i for i in range(len(s.ground_truth)) if i not in wrong]
    new_index = {old: new for new, old in enumerate(kept)}
    gt = [s.ground_truth[i] for i in kept]
    added_at: dict[tuple[Any, ...], int] = {}
    n_added, n_ignored = 0, 0
    for u in sorted(units, key=lambda u: u.checker):
        pairs = {(new_index[g], p) for g, p in u.matches_original if g in new_index}
        matched = {p for _, p in pairs}
        used_gt = {g for g, _ in pairs}
        preds = s.predictions.get(u.checker, ())
        for j in sorted({int(j) for j in missing.get(u.checker, ())}):
            if not 0 <= j < len(preds):
                continue
            if j in matched:
                n_ignored += 1
                continue
            key = _same_key(preds[j])
            if key not in added_at:
                added_at[key] = len(gt)
                gt.append(preds[j])
                n_added += 1
            if added_at[key] in used_gt:  # the checker flagged the same violation twice: one match only
                n_ignored += 1
                continue
            pairs.add((added_at[key], j))
            used_gt.add(added_at[key])
        u.matches = sorted(pairs)
    return gt, {"dropped_gt_wrong": len(wrong), "added_missing_gt": n_added, "ignored_missing_gt": n_ignored}


def _dominant_category(gt: Sequence[Violation]) -> str:
    if not gt:
        return NO_VIOLATIONS
    counts = Counter(v.category or NO_CATEGORY for v in gt)
    return min(counts, key=lambda c: (-counts[c], c))


def _violation_units(project: Any, f: "Filters", labels: Mapping, skipped: Counter, progress: "Progress | None"
                     ) -> tuple[dict[str, ViolationSample], dict[str, list[ViolationUnit]]]:
    samples = {s.id: s for s in project.store(SCHEME).violation_samples(curated=True)}
    chosen: dict[str, list[ViolationUnit]] = {}
    for n, row in enumerate(project.units.unit_rows(SCHEME)):
        if n % 2000 == 0:
            check_progress(progress)
        sid, checker = row["sample_id"], row["unit"]
        s = samples[sid]
        status = labels.get((sid, checker, "status"), (None, ""))[0]
        if checker == "":  # a ground-truth-only sample: no checker, so no decision the split's labels could carry
            if status is not None and f.checkers is None and unit_wanted(status, "", f):
                skipped["ground truth only (no checker to decide on)"] += 1
            continue
        if not unit_wanted(status, checker, f):
            continue
        m = labels.get((sid, checker, "matches"))
        if m is None:
            skipped["no human matches"] += 1
            continue
        pairs = {(int(g), int(p)) for g, p in m[0]}
        n_gt, n_pred = len(s.ground_truth), len(s.predictions.get(checker, ()))
        if pairs and not (min(g for g, _ in pairs) >= 0 and max(g for g, _ in pairs) < n_gt
                          and min(p for _, p in pairs) >= 0 and max(p for _, p in pairs) < n_pred):
            skipped["stale human matches (indices out of range)"] += 1
            continue
        if len({g for g, _ in pairs}) != len(pairs) or len({p for _, p in pairs}) != len(pairs):
            skipped["invalid human matches (not one-to-one)"] += 1
            continue
        chosen.setdefault(sid, []).append(
            ViolationUnit(sid, checker, m[1], n_gt, n_pred, sorted(pairs))
        )
    return samples, chosen


def _prf(tp: int, n_pred: int, n_gt: int) -> dict[str, float]:
    """P/R/F1 with the one zero-denominator convention (calibration.schemes.violations.metrics.prf), so the data
    card and `concord evaluate` agree."""
    from calibration.schemes.violations.metrics import prf

    p, r, f = prf(tp, n_pred - tp, n_gt - tp)
    return {"precision": float(p), "recall": float(r), "f1": float(f)}


class ViolationsExport(SchemeExport):
    """`violations.<ext>` (records with the curated ground truth and the selected checkers' predictions) and the
    human matches in the shared `labels` file; counts per checker and category; machine-vs-human unit F1."""

    scheme = SCHEME
    columns = {SCHEME: ("id", "text", "ground_truth", "predictions", "split", "context", "meta"),
               "labels": LABELS_COLUMNS}
    params_name = "match config"  # the split is documented with the match config its machine F1 figures use

    def params_ref(self, project: Any, ref: str) -> str:
        return project.store(SCHEME).match_config(ref).ref  # a preset or a stored config; UsageError naming the known ones

    def candidates(self, project: Any, f: "Filters", skipped: Counter[str], progress: "Progress | None") -> Part:
        rows = project.decisions.label_rows(("status", "matches", "gt_wrong", "missing_gt"))
        labels = {(r["sample_id"], r["unit"], r["kind"]): (r["value"], r["annotator"]) for r in rows}
        samples, chosen = _violation_units(project, f, labels, skipped, progress)
        curated: dict[str, list[Violation]] = {}
        gt_changes: Counter[str] = Counter()
        for sid, units in chosen.items():
            missing = {u.checker: labels.get((sid, u.checker, "missing_gt"), ([], ""))[0] for u in units}
            gt_wrong = labels.get((sid, "", "gt_wrong"), ([], ""))[0]
            curated[sid], changes = curate_sample(samples[sid], units, gt_wrong, missing)
            gt_changes.update(changes)
        part = Part(SCHEME, self)
        for sid in chosen:
            if f.stratify == "category":
                part.strata[sid] = _dominant_category(curated[sid])
            elif f.stratify == "split":
                part.strata[sid] = samples[sid].split or NO_SPLIT
            elif f.stratify == "unit":
                part.strata[sid] = "+".join(sorted(u.checker for u in chosen[sid]))
            else:
                part.strata[sid] = "all"
        part.state = {"samples": samples, "chosen": chosen, "curated": curated,
                      "gt_changes": {k: gt_changes.get(k, 0) for k in GT_CHANGES}, "units": []}
        return part

    def export_rows(self, project: Any, part: Part, keep: set[str]) -> None:
        st = part.state
        samples, chosen, curated = st["samples"], st["chosen"], st["curated"]
        meta_rows = project.samples.sample_rows(SCHEME) if chosen else {}
        records: list[dict[str, Any]] = []
        labels: list[dict[str, Any]] = []
        for sid in sorted(keep & set(chosen)):
            s, units = samples[sid], sorted(chosen[sid], key=lambda u: u.checker)
            records.append({
                "id": sid, "text": s.text, "context": s.context, "split": s.split, "meta": meta_rows[sid]["meta"],
                "ground_truth": [violation_dict(v, s.text) for v in curated[sid]],
                "predictions": {u.checker: [violation_dict(v, s.text) for v in s.predictions.get(u.checker, ())]
                                for u in units},
            })
            for u in units:
                labels.append({"sample": sid, "checker": u.checker, "annotator": u.annotator,
                               "matches": [list(p) for p in u.matches]})
            st["units"].extend(units)
        part.datasets = {SCHEME: records, "labels": labels}
        part.annotators = {u.annotator for u in st["units"]}
        part.by_split = count_splits(records)
        part.n_units, part.n_labels = len(st["units"]), len(labels)
        part.unit_keys = {(u.sample_id, u.checker) for u in st["units"]}

    def manifest_counts(self, part: Part) -> dict[str, Any]:
        by_category: Counter[str] = Counter()
        n_gt = {}
        for r in part.records:
            by_category.update(v["category"] or NO_CATEGORY for v in r["ground_truth"])
            n_gt[r["id"]] = len(r["ground_truth"])
        checkers: dict[str, Counter[str]] = {}
        for u in part.state["units"]:
            c = checkers.setdefault(u.checker, Counter())
            c["units"] += 1
            c["predictions"] += u.n_pred
            c["ground_truth"] += n_gt[u.sample_id]
            c["human_matches"] += len(u.matches)
        by_checker = {k: {**dict(c), **_prf(c["human_matches"], c["predictions"], c["ground_truth"])}
                      for k, c in sorted(checkers.items())}
        return {"by_category": dict(sorted(by_category.items())), "by_checker": by_checker,
                "ground_truth": {SCHEME: sum(n_gt.values()), **part.state["gt_changes"]}}

    def manifest_agreement(self, project: Any, part: Part, config_ref: str) -> dict[str, Any]:
        """Human figures per checker, and the machine's unit F1 against the human one (when scores exist)."""
        from calibration.agreement import spearman

        units = part.state["units"]
        machine = {(r["sample_id"], r["unit"]): float(r["machine_f1"]) for r in project.units.unit_rows(SCHEME, config_ref)
                   if r["machine_f1"] is not None} if units else {}
        grouped: dict[str, list[tuple[float, float]]] = {}
        for u in units:
            m = machine.get((u.sample_id, u.checker))
            if m is not None:
                grouped.setdefault(u.checker, []).append((m, _prf(len(u.matches_original), u.n_pred, u.n_gt_original)["f1"]))
        per_checker: dict[str, dict[str, Any]] = {}
        for checker in sorted({u.checker for u in units}):
            pairs = grouped.get(checker, [])
            entry: dict[str, Any] = {"n_units_with_machine_scores": len(pairs)}
            if pairs:
                mf, hf = [p[0] for p in pairs], [p[1] for p in pairs]
                entry["machine_f1_mean"] = float(np.mean(mf))
                entry["human_f1_mean"] = float(np.mean(hf))
                entry["mean_abs_diff"] = float(np.mean(np.abs(np.subtract(mf, hf))))
                entry["spearman"] = spearman(mf, hf) if len(pairs) > 1 else math.nan
            per_checker[checker] = entry
        return {SCHEME: {"human_vs_ground_truth": self.manifest_counts(part)["by_checker"],
                         "machine_vs_human_unit_f1": {"config": config_ref, "per_checker": per_checker}}}

    def manifest_fields(self) -> dict[str, Any]:
        return {"ground_truth_policy": GT_POLICY}

    def manifest_params(self, project: Any, ref: str) -> dict[str, Any]:
        return {"match_config": {"ref": ref, "settings": project.store(SCHEME).match_config(ref).to_dict()}}

    def documented_ref(self, manifest: Mapping[str, Any]) -> str | None:
        return (manifest.get("match_config") or {}).get("ref")

    def card_files(self, ext: str) -> list[str]:
        return [f"- `{SCHEME}.{ext}`: one record per text: `id`, `text`, `context`, `split`, `meta`, `ground_truth` "
                "(the human-validated violations) and `predictions` (per checker `name@version|model`). A violation "
                "has `start`, `end` (code-point offsets, end exclusive), `quote`, `rule`, `category`, `explanation`, "
                "`correction`."]

    def card_label_line(self) -> str | None:
        return ("`{sample, checker, annotator, matches}` where `matches` lists the [ground-truth index, prediction "
                "index] pairs the human says are the same violation (every other pair is not a match)")

    def card_notes(self, manifest: Mapping[str, Any]) -> list[str]:
        return [f"Ground truth: {manifest['ground_truth_policy']}.", ""]

    def card_counts(self, counts: Mapping[str, Any]) -> list[str]:
        gt = counts["ground_truth"]
        return [f"- ground-truth violations: {gt[SCHEME]} ({gt['dropped_gt_wrong']} dropped as wrong, "
                f"{gt['added_missing_gt']} added as missing)"]

    def card_params(self, manifest: Mapping[str, Any]) -> list[str]:
        return [f"- match config: `{manifest['match_config']['ref']}`"]

    def card_tables(self, manifest: Mapping[str, Any], ext: str) -> list[str]:
        from app.io.markdown import cell, number

        c = manifest["counts"]
        lines: list[str] = []
        if c["by_category"]:
            lines += ["| category | ground-truth violations |", "|---|---|",
                      *[f"| {cell(k)} | {v} |" for k, v in c["by_category"].items()], ""]
        if c["by_checker"]:
            lines += ["Checkers, scored against the human-validated ground truth with the human matches:", "",
                      "| checker | units | predictions | matches | precision | recall | F1 |",
                      "|---|---|---|---|---|---|---|",
                      *[f"| {cell(k)} | {v['units']} | {v['predictions']} | {v['human_matches']} | "
                        f"{number(v['precision'])} | {number(v['recall'])} | {number(v['f1'])} |"
                        for k, v in c["by_checker"].items()], ""]
        return lines

    def overview_rows(self, counts: Mapping[str, Any]) -> list[tuple[str, str]]:
        gt = counts["ground_truth"]
        return [("ground-truth violations", f"{gt[SCHEME]} ({gt['dropped_gt_wrong']} dropped as wrong, "
                                            f"{gt['added_missing_gt']} added as missing)")]

    def count_tables(self, counts: Mapping[str, Any]) -> list[Table]:
        tables = []
        if counts["by_checker"]:
            tables.append(Table("per checker (human matches vs human-validated ground truth)",
                                ("checker", "units", "predictions", "matches", "P", "R", "F1"),
                                tuple((k, str(v["units"]), str(v["predictions"]), str(v["human_matches"]),
                                       f"{v['precision']:.3f}", f"{v['recall']:.3f}", f"{v['f1']:.3f}")
                                      for k, v in counts["by_checker"].items())))
        if counts["by_category"]:
            tables.append(Table("ground truth per category", ("category", SCHEME),
                                tuple((k, str(v)) for k, v in counts["by_category"].items())))
        return tables


EXPORT = ViolationsExport()


# -- Label Studio (app/io/labelstudio.py): span labels are violations ------------------------------------------------
def _ls_record(sample_id: str, text: str, predictions: dict[str, Any], _levels: list[str] | None) -> dict[str, Any]:
    return {"id": sample_id, "text": text, "ground_truth": [], "predictions": predictions}


def _ls_label_line(sample_id: str, annotator: str, spans: list[Span], _choice: Any) -> dict[str, Any]:
    """An annotator's spans are their curated ground truth of the sample (as `concord labels import` records it)."""
    return {"sample": sample_id, "annotator": annotator,
            "spans": [{"start": s, "end": e, "label": lab} for s, e, lab in spans]}


def _ls_prediction(text: str, spans: list[Span], _choice: Any, _score: float | None,
                   _levels: list[str] | None) -> list[dict[str, Any]]:
    """A prediction's spans are the violations of checker `model_version` (labels "A", "B" are the rule "A|B")."""
    return [{"start": s, "end": e, "quote": text[s:e], "rule": "|".join(lab), "category": lab[0].split(".", 1)[0]}
            for s, e, lab in spans]


LABELSTUDIO = LabelStudioMapping(
    SPANS, "ground_truth", record=_ls_record, label_line=_ls_label_line, prediction=_ls_prediction,
    predictions_of=lambda rec: rec.get("predictions", {}),
    spans_of=lambda value: [(v.get("start"), v.get("end"), v["rule"].split("|")) for v in value or ()],
    skipped="predicted violations without offsets", unlabeled="annotated violations without offsets")
