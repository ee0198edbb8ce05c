"""`concord evaluate --scheme S` and `concord agreement --scheme S` per scheme at N samples (issue #28), each next
to a plain reference measured in the same run.

Projects: the demo's records of each scheme (resources/demo/*.jsonl) repeated to N samples under new ids and
imported with `concord import`; their human labels repeated for three annotators (ana, ben, cy), each keeping the
demo's decision with probability 0.8 and otherwise changing one of its kinds (a boolean flipped, a list element
dropped, another value the demo gives that kind), so the annotators disagree. Built once per scheme and size (`--dir` keeps them between runs); building is not timed.

Timed: each command in a child process of its own (interpreter start, imports, reading the project, the figures,
the JSON), median of `--runs` runs, with its CPU seconds, CPU share (CPU / wall) and peak resident memory
(ru_maxrss of that child). `concord evaluate` may fork a worker for the human ceiling (app/services/ceiling_worker.py):
its CPU is added to the command's (RUSAGE_CHILDREN), and the peak memory is the larger of the command's and its
worker's (each process's own peak: a forked worker shares the parent's pages until it writes them, so their sum
would overstate it; read the figure as the larger process's peak). References, each in a child process too and interleaved with the commands (so under
the same load), and each checked against the command's output:
- agreement: the same pooled Cohen's kappa per annotator pair, Fleiss' kappa and Krippendorff's alpha (with
  1000-replicate percentile intervals over samples) from the same label rows, in plain sqlite3 + pandas + numpy
  (benchmarks/agreement_reference.py: each scheme's items read from the rows in plain code), for every scheme;
- evaluate --scheme violations: the same figures from the same rows (`REFERENCE_EVALUATE_VIOLATIONS`: sqlite3, the
  library's pair table and vectorised matcher, numpy/pandas): per config and checker TP/FP/FN, P/R/F1 (equal) and
  the F1's 95% bootstrap interval (its own draws, so ends within a fifth of the interval's width), the humans'
  leaderboard (equal), the human ceiling's Fleiss' kappa and metric-vs-resolved kappa (estimates, equal);
- evaluate --scheme rgb: the human figures (RGB's four figures per model and task under the resolved labels, with
  1000-replicate percentile intervals drawn as Concord draws them), in plain sqlite3 + numpy (`REFERENCE_EVALUATE_RGB`),
  checked equal, every value and interval end, to the command's `human` rows; the command computes more beside them
  (two checkers' figures, agreement, noise table, the human ceiling), so the ratio is an upper bound;
- evaluate --scheme trace: the headline mean RAGBench relevance and utilization (annotator labels, all samples) and
  the annotator-vs-human `relevant` and `utilized` sentence-label kappa and F1 (pooled confusion counts), each with
  1000-replicate intervals over samples drawn as Concord draws them, in plain sqlite3 + numpy
  (`REFERENCE_EVALUATE_TRACE`), checked equal to the command's; again a part of what the command computes;
- evaluate --scheme rubric: the same figures per trait (the LLM's mean metrics; on the checked units the aligned
  items' counts, kept share, Cohen's kappa and metric means) in plain sqlite3 + numpy (`REFERENCE_RUBRIC`), and --scheme
  judge every judge figure (AUROC, balanced accuracy, F1, Cohen's kappa against the 'any' reference; the ECE and
  reliability bins of probability-like judges), each with its 1000-replicate interval drawn as Concord draws them,
  and the judges' own ceiling estimates, in plain sqlite3 + numpy + pandas (`REFERENCE_JUDGE`), both checked
  against the command's JSON (numbers within 1e-9; the human ceiling (app/services/ceiling.py) is not in them);
- evaluate --scheme addm: the three ADDM scores (ordinal AUPRC, process, consistency) per method and pooled, on the
  records' ground truth and on the human-labeled businesses, each with its 1000-replicate interval drawn as Concord
  draws them, in plain sqlite3 + numpy (`REFERENCE_EVALUATE_ADDM`; snippets the library's grounding locates),
  checked against the command's JSON (point AUPRC within 1e-9: summed in another order; the rest equal); the
  command computes more beside them (component tables, ranking, verdict agreement, the human ceiling);
- evaluate, other schemes: a floor, not the same figures: a plain sqlite3 read and json.loads of every row the
  scheme's evaluate reads (samples' payloads and labels), i.e. the data evaluate must read at least.
Prints the load average before each line and the ratio (wall and CPU) to the reference. One benchmark at a time on
a shared machine: the run holds an exclusive lock (`/tmp/concord-bench.lock`, flock) and waits for it.

    python benchmarks/bench_evaluate_schemes.py [--samples 100000] [--runs 5] [--schemes trace,rgb,...] [--dir D]
"""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchresult import emit

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo"
PY = sys.executable
SCHEMES = ("violations", "rubric", "trace", "rgb", "addm", "judge")
RECORDS = {"violations": "violations.jsonl", "rubric": "rubric.jsonl", "trace": "trace.jsonl", "rgb": "rgb.jsonl",
           "addm": "addm.jsonl", "judge": "judge.jsonl"}
LABELS = {"violations": "labels.jsonl", "rubric": "labels.jsonl", "trace": "trace_labels.jsonl",
          "rgb": "rgb_labels.jsonl", "addm": "addm_labels.jsonl", "judge": "judge_labels.jsonl"}
ANNOTATORS = ("ana", "ben", "cy")
LOCK = Path(tempfile.gettempdir()) / "concord-bench.lock"
LOCK_HELD = "CONCORD_BENCH_LOCK_HELD"


@contextmanager
def bench_lock() -> Iterator[None]:
    """One benchmark at a time on the machine: an exclusive flock, waited for (not when the process that started
    this one holds it for both, as `benchmarks/quick.py` does: LOCK_HELD set)."""
    if os.environ.get(LOCK_HELD):
        yield
        return
    with open(LOCK, "w") as fh:
        t0 = time.perf_counter()
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for {LOCK}: another benchmark is running", flush=True)
            fcntl.flock(fh, fcntl.LOCK_EX)
        waited = time.perf_counter() - t0
        if waited > 1:
            print(f"(waited {waited:.0f} s for {LOCK})")
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# -- building -----------------------------------------------------------------------------------------------------
def _scheme_of(line: dict[str, Any], ids: set[str]) -> bool:
    return line.get("sample") in ids


def _unit_key(line: dict[str, Any]) -> tuple[str, Any]:
    for key in ("checker", "trait", "unit"):
        if key in line:
            return key, line[key]
    return "unit", None


KEEP = frozenset({"scheme", "sample", "unit", "checker", "trait", "annotator", "status", "note"})


def _changed(value: Any, rng: random.Random, others: list[Any]) -> Any:
    """A different decision the import still accepts: a boolean flipped, one element of a list dropped, one entry of
    an object changed, a string or number another demo label gave the same kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, list):
        return [v for i, v in enumerate(value) if i != rng.randrange(len(value))] if value else value
    if isinstance(value, dict) and value:
        key = rng.choice(sorted(value))
        return {**value, key: _changed(value[key], rng, [])}
    return rng.choice(others) if others else value


def _mutated(line: dict[str, Any], rng: random.Random, seen: dict[str, list[Any]]) -> dict[str, Any]:
    kinds = [k for k in line if k not in KEEP]
    if not kinds:
        return line
    kind = rng.choice(kinds)
    return {**line, kind: _changed(line[kind], rng, seen.get(kind, []))}


def write_inputs(scheme: str, n: int, folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """(records, labels) JSONL of n samples repeated from the demo's, three annotators' labels."""
    rng = random.Random(seed)
    templates = [json.loads(x) for x in (DEMO / RECORDS[scheme]).read_text(encoding="utf-8").splitlines() if x.strip()]
    ids = {t["id"] for t in templates}
    lines = [json.loads(x) for x in (DEMO / LABELS[scheme]).read_text(encoding="utf-8").splitlines() if x.strip()]
    lines = [x for x in lines if _scheme_of(x, ids)]
    first: dict[tuple[str, Any], dict[str, Any]] = {}  # (template, unit) -> the first demo annotator's line
    seen: dict[str, list[Any]] = {}  # kind -> the values the demo gives it (for strings and numbers)
    for x in lines:
        key = (x["sample"], _unit_key(x))
        if key not in first:
            first[key] = x
            for kind, value in x.items():
                seen.setdefault(kind, []).append(value)
    per_template: dict[str, list[dict[str, Any]]] = {}
    for (sid, _), x in first.items():
        per_template.setdefault(sid, []).append(x)
    rec_path, lab_path = folder / f"{scheme}.jsonl", folder / f"{scheme}_labels.jsonl"
    with open(rec_path, "w", encoding="utf-8") as rf, open(lab_path, "w", encoding="utf-8") as lf:
        for i in range(n):
            t = templates[i % len(templates)]
            new_id = f"{t['id']}-{i:07d}"
            rf.write(json.dumps({**t, "id": new_id}) + "\n")
            for x in per_template.get(t["id"], ()):
                for who in ANNOTATORS:
                    line = x if rng.random() < 0.8 else _mutated(x, rng, seen)
                    lf.write(json.dumps({**line, "sample": new_id, "annotator": who}) + "\n")
    return rec_path, lab_path


def build(scheme: str, n: int, folder: Path) -> Path:
    path = folder / f"{scheme}-{n}.concord"
    if path.exists():
        return path
    tmp = folder / f"{scheme}-{n}.partial.concord"
    tmp.unlink(missing_ok=True)
    t0 = time.perf_counter()
    rec, lab = write_inputs(scheme, n, folder)
    for args in (["init", str(tmp)], ["import", str(tmp), str(rec)], ["labels", "import", str(tmp), str(lab)]):
        subprocess.run([PY, "-m", "app.cli", *args], cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    rec.unlink()
    lab.unlink()
    tmp.rename(path)
    print(f"built {path.name} in {time.perf_counter() - t0:.0f} s (not timed)")
    return path


# -- timing -------------------------------------------------------------------------------------------------------
def child_env() -> dict[str, str]:
    """The children's environment: offline, and with compiled bytecode kept (in a temp dir, not the tree) as an
    installed package has it: a shell that sets PYTHONDONTWRITEBYTECODE would make every child recompile ~280
    modules (0.1-0.2 s a run) that no user pays after the first run."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1",
           "PYTHONPYCACHEPREFIX": str(Path(tempfile.gettempdir()) / "concord-bench-pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_child(argv: list[str]) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MB, stdout) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=child_env())
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    # CPU and peak memory: reported by the child itself (its own getrusage), see WRAP
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[3:]} failed ({proc.returncode}): {err[-2000:]}")
    stats = json.loads(err.strip().splitlines()[-1])
    return wall, stats["cpu"], stats["rss_mb"], out


WRAP = r"""
import contextlib, io, json, resource, sys, time
sys.path.insert(0, ".")
from app.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = main(sys.argv[1:])
r, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stdout.write(out.getvalue())
print(json.dumps({"rc": rc, "cpu": r.ru_utime + r.ru_stime + kids.ru_utime + kids.ru_stime,
                  "rss_mb": max(r.ru_maxrss, kids.ru_maxrss) / 1024}), file=sys.stderr)
sys.exit(rc)
"""

REFERENCE_EVALUATE_VIOLATIONS = r"""
# violations evaluate's figures from the same rows: sqlite3 reads, the library's pair table (similarity components)
# and vectorised matcher, numpy/pandas for everything else -- per config and checker TP/FP/FN, P/R/F1 and the F1's
# 95% bootstrap interval over samples (1000 replicates, multinomial draws over the distinct per-sample rows); the
# humans' own leaderboard; the human ceiling's Fleiss' kappa among annotators and the metric's Cohen's kappa against
# the resolved label (estimates).
import json, resource, sqlite3, sys
import numpy as np, pandas as pd
sys.path.insert(0, ".")
from calibration.schemes.violations.columns import ViolationColumns, object_array
from calibration.schemes.violations.config import PRESETS
from calibration.schemes.violations.matching import match
from calibration.schemes.violations.pairs import build_pair_table
path = sys.argv[1]
conn = sqlite3.connect(path)
assert not conn.execute("SELECT 1 FROM labels WHERE kind = 'ground_truth' LIMIT 1").fetchone()  # no curated truth
rowids, ids = zip(*conn.execute("SELECT rowid, id FROM samples WHERE scheme = 'violations' ORDER BY rowid"))
rows = conn.execute('SELECT s.rowid, v.checker, v.start, v."end", v.rule, v.category, v.explanation, v.correction '
                    "FROM samples s JOIN violations v ON v.sample_id = s.id WHERE s.scheme = 'violations' "
                    "ORDER BY s.rowid, v.checker, v.idx").fetchall()
rowid, checker, start, end, *texts = (list(c) for c in zip(*rows))
del rows
index = pd.Index(object_array(list(ids)))
unit_sid, unit_checker = zip(*conn.execute("SELECT sample_id, unit FROM units WHERE scheme = 'violations' AND unit != ''"))
cols = ViolationColumns(index.to_numpy(dtype=object), index.get_indexer(object_array(list(unit_sid))).astype(np.int64),
                        object_array(list(unit_checker)), np.searchsorted(np.array(rowids), np.array(rowid)),
                        object_array(checker), np.array(start, dtype=float), np.array(end, dtype=float),
                        *(object_array(t) for t in texts))
table = build_pair_table(cols, "jaccard")
groups, pairs = table.groups, table.pairs
G = len(groups)
s_code, samples = pd.factorize(groups["sample_id"].to_numpy(dtype=object))
c_code, checkers = pd.factorize(groups["checker"].to_numpy(dtype=object), sort=True)
S, C = len(samples), len(checkers)
n_gt, n_pred = groups["n_gt"].to_numpy(np.int64), groups["n_pred"].to_numpy(np.int64)
pg = pairs["group"].to_numpy(np.int64)

def prf(tp, fp, fn):
    tp, fp, fn = (np.asarray(x, dtype=float) for x in (tp, fp, fn))
    with np.errstate(invalid="ignore", divide="ignore"):
        empty = np.where((tp == 0) & (fp == 0) & (fn == 0), 1.0, 0.0)
        return (np.where(tp + fp > 0, tp / (tp + fp), empty), np.where(tp + fn > 0, tp / (tp + fn), empty),
                np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), 1.0))

out = {"configs": {}, "human": {}, "ceiling": {}}
masks = {}
for name in ("std_match", "ha_match"):
    config = PRESETS[name].with_(embedding="jaccard")
    mask = masks[name] = match(table, config, method=config.matching)
    tp = np.bincount(pg[mask], minlength=G)
    per = np.zeros((S, C, 3))
    np.add.at(per, (s_code, c_code), np.column_stack([tp, n_pred - tp, n_gt - tp]))
    tot = per.sum(0)
    p, r, f = prf(tot[:, 0], tot[:, 1], tot[:, 2])
    distinct, inverse = np.unique(per.reshape(S, C * 3), axis=0, return_inverse=True)
    draws = np.random.default_rng(0).multinomial(S, np.bincount(inverse.ravel()) / S, size=1000)
    reps = (draws @ distinct).reshape(1000, C, 3)
    lo, hi = np.nanquantile(prf(reps[..., 0], reps[..., 1], reps[..., 2])[2], [0.025, 0.975], axis=0)
    out["configs"][name] = {str(c): [int(tot[j, 0]), int(tot[j, 1]), int(tot[j, 2]), float(p[j]), float(r[j]),
                                     float(f[j]), float(lo[j]), float(hi[j])] for j, c in enumerate(checkers)}
# every annotator's current matches, and the resolved one, per unit
group_of = {(s, c): g for g, (s, c) in enumerate(zip(groups["sample_id"], groups["checker"]))}
labels = conn.execute("SELECT l.sample_id, l.unit, l.annotator, l.resolved, l.value FROM labels l JOIN samples s "
                      "ON s.id = l.sample_id WHERE s.scheme = 'violations' AND l.kind = 'matches' "
                      "AND l.value IS NOT NULL").fetchall()
who = sorted({r[2] for r in labels})
resolved, chosen = {}, {a: {} for a in who}
for sid, unit, annotator, is_resolved, value in labels:
    g = group_of.get((sid, unit))
    if g is not None:
        m = json.loads(value)
        chosen[annotator][g] = m
        if is_resolved:
            resolved[g] = m
lab = np.array(sorted(resolved), dtype=np.int64)
h_tp = np.zeros(G, dtype=np.int64)
h_tp[lab] = [len(resolved[g]) for g in lab]
h = pd.DataFrame({"checker": c_code[lab], "tp": h_tp[lab], "fp": n_pred[lab] - h_tp[lab], "fn": n_gt[lab] - h_tp[lab]})
for j, row in h.groupby("checker").agg(units=("tp", "size"), tp=("tp", "sum"), fp=("fp", "sum"), fn=("fn", "sum")).iterrows():
    out["human"][str(checkers[j])] = [int(row["units"]), int(row["tp"]), int(row["fp"]), int(row["fn"])]
# the ceiling's items: every (gt, pred) pair of the units two or more annotators labeled; each rater's 0/1
n_raters = sum(np.isin(np.arange(G), np.fromiter(chosen[a], np.int64)) for a in who)
shared = n_raters[pg] >= 2
assert n_gt.max(initial=0) < 100 and n_pred.max(initial=0) < 100  # the pair keys below
def rated(m_by_group):  # (pair is in the rater's matches, the rater labeled the pair's unit) per pair
    has = np.zeros(G, dtype=bool)
    has[np.fromiter(m_by_group, np.int64)] = True
    key = [g * 10_000 + int(a) * 100 + int(b) for g, ms in m_by_group.items() for a, b in ms]
    pair_key = pg * 10_000 + pairs["gt"].to_numpy(np.int64) * 100 + pairs["pred"].to_numpy(np.int64)
    return np.isin(pair_key, np.array(key, dtype=np.int64)), has[pg]
ones = np.zeros(len(pg))
raters = np.zeros(len(pg))
for a in who:
    yes, has = rated(chosen[a])
    ones += yes & has
    raters += has
m = raters[shared]
n1 = ones[shared]
agree = (n1 * (n1 - 1) + (m - n1) * (m - n1 - 1)) / (m * (m - 1))
q1 = (n1 / m).mean()
pe = q1 ** 2 + (1 - q1) ** 2
out["ceiling"]["fleiss"] = float((agree.mean() - pe) / (1 - pe))
yes_r, has_r = rated(resolved)
both = shared & has_r
x, y = masks["std_match"][both].astype(int), yes_r[both].astype(int)
conf = np.bincount(x * 2 + y, minlength=4).reshape(2, 2) / both.sum()
po, pe = np.trace(conf), (conf.sum(0) * conf.sum(1)).sum()
out["ceiling"]["kappa_vs_resolved"] = float((po - pe) / (1 - pe))
r = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps(out))
print(json.dumps({"cpu": r.ru_utime + r.ru_stime, "rss_mb": r.ru_maxrss / 1024}), file=sys.stderr)
"""


def violations_figures(out: str) -> dict[str, Any]:
    """The CLI's figures the violations evaluate reference computes, in its shape."""
    data = json.loads(out)["violations"]
    got: dict[str, Any] = {"configs": {}, "human": {}, "ceiling": {}}
    for name, res in data["configs"].items():
        got["configs"][name] = {c: [m["tp"], m["fp"], m["fn"], m["precision"], m["recall"], m["f1"], *m["f1_ci"]]
                                for c, m in res["checkers"].items()}
    got["human"] = {c: [m["units"], m["tp"], m["fp"], m["fn"]] for c, m in data["human"].items()}
    ceiling = data.get("human_ceiling") or {}
    got["ceiling"] = {"fleiss": ceiling["human_human"]["kappa"]["estimate"],
                      "kappa_vs_resolved": ceiling["metric_human"]["kappa_vs_resolved"]["estimate"]} if ceiling else {}
    return got


def same_violations(got: dict[str, Any], want: dict[str, Any], tol: float = 1e-9) -> bool:
    """Counts equal, estimates equal to rounding, F1 interval ends within a fifth of the interval's width (the
    reference draws its replicates over its own classes of samples, so other replicates)."""
    if got.keys() != want.keys() or got["human"] != want["human"] or got["configs"].keys() != want["configs"].keys():
        return False
    for name, by in want["configs"].items():
        if got["configs"][name].keys() != by.keys():
            return False
        for c, w in by.items():
            g = got["configs"][name][c]
            width = max(w[7] - w[6], 1e-12)
            if g[:3] != w[:3] or any(abs(a - b) > tol for a, b in zip(g[3:6], w[3:6])) or \
                    any(abs(a - b) > 0.2 * width for a, b in zip(g[6:], w[6:])):
                return False
    return got["ceiling"].keys() == want["ceiling"].keys() and all(
        abs(got["ceiling"][k] - want["ceiling"][k]) <= tol for k in want["ceiling"])


REFERENCE_READ = r"""
# the floor of evaluate: every row it reads (samples' payloads, labels, violations), json-decoded
import json, resource, sqlite3, sys
path, scheme = sys.argv[1:3]
conn = sqlite3.connect(path)
n = 0
for (payload,) in conn.execute("SELECT payload FROM samples WHERE scheme = ?", (scheme,)):
    n += len(json.loads(payload)) if payload else 0
for (value,) in conn.execute("SELECT l.value FROM labels l JOIN samples s ON s.id = l.sample_id WHERE s.scheme = ? "
                             "AND l.value IS NOT NULL", (scheme,)):
    json.loads(value)
if scheme == "violations":
    conn.execute('SELECT sample_id, checker, idx, start, "end", rule, category, explanation, correction '
                 "FROM violations").fetchall()
r = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"fields": n}))
print(json.dumps({"cpu": r.ru_utime + r.ru_stime, "rss_mb": r.ru_maxrss / 1024}), file=sys.stderr)
"""


REFERENCE_EVALUATE_RGB = r"""
# rgb evaluate's human figures, plainly: the four RGB figures (percent) per model and task under the resolved human
# labels, each over the units where the decisions it needs were judged, with 1000-replicate percentile intervals
# drawn as Concord draws them (numpy default_rng(0), chunks of 64 replicates of unit indices, units in import order,
# a record's single response first, then `responses` in order): sqlite3, json, numpy only
import json, resource, sqlite3, sys
import numpy as np
path, scheme = sys.argv[1:3]
n_boot, seed, alpha = 1000, 0, 0.05
conn = sqlite3.connect(path)
kinds = ("correct", "rejected", "error_detected", "error_corrected")
units = []
for sid, task, model, has_response, responses in conn.execute(
        "SELECT id, json_extract(payload, '$.task'), json_extract(payload, '$.model'), "
        "json_type(payload, '$.response') NOT IN ('null'), json_extract(payload, '$.responses') "
        "FROM samples WHERE scheme = 'rgb' ORDER BY rowid"):
    head = [model or "response"] if has_response else []
    for unit in head + (list(json.loads(responses)) if responses else []):
        units.append((sid, unit, task))
value = {}  # (sample, unit) -> kind -> 0/1, the resolved label
labeled = set()
for sid, unit, kind, v in conn.execute(
        "SELECT l.sample_id, l.unit, l.kind, l.value FROM labels l JOIN samples s ON s.id = l.sample_id "
        "WHERE s.scheme = 'rgb' AND l.resolved = 1 AND l.value IS NOT NULL ORDER BY l.sample_id, l.unit, l.event_id"):
    labeled.add((sid, unit))
    if kind in kinds:
        v = json.loads(v)
        value.setdefault((sid, unit), {})[kind] = -1 if v is None else int(bool(v))  # null: not judged
needs = {"accuracy": (0,), "rejection_rate": (1,), "error_detection_rate": (2,), "error_correction_rate": (2, 3)}
x = np.array([[value.get((s, u), {}).get(k, -1) for k in kinds] for s, u, _ in units], dtype=np.int64).reshape(-1, 4)
group = np.array([f"{u}\x00{t}" for _, u, t in units])
out = {}
for f_i, (figure, need) in enumerate(needs.items()):
    judged = (x[:, list(need)] >= 0).all(axis=1)
    for key in sorted(set(group[judged])):
        g = np.clip(x[judged & (group == key)], 0, 1)
        n = g.shape[0]
        cols = np.column_stack([g, g[:, 2] & g[:, 3]])
        def fig(sums):  # sums (..., 5) of the four decisions and detected-and-corrected
            if f_i < 3:
                return 100.0 * sums[..., f_i] / n
            det = sums[..., 2]
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(det > 0, 100.0 * sums[..., 4] / det, 0.0)
        rng = np.random.default_rng(seed)
        reps = []
        for lo in range(0, n_boot, 64):
            idx = rng.integers(0, n, size=(min(64, n_boot - lo), n), dtype=np.int32)
            reps.append(fig(np.stack([cols[:, c][idx].sum(axis=1) for c in range(5)], axis=-1)))
        reps = np.concatenate(reps)
        reps = reps[np.isfinite(reps)]
        low, high = np.percentile(reps, [100 * alpha / 2, 100 * (1 - alpha / 2)])
        model, task = key.split("\x00")
        out[f"{model}|{task}|{figure}"] = [float(fig(cols.sum(axis=0))), float(low), float(high), n]
units_labeled = sum(1 for s, u, _ in units if (s, u) in labeled)
r = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"human": out, "labeled_units": units_labeled, "units": len(units)}, sort_keys=True))
print(json.dumps({"cpu": r.ru_utime + r.ru_stime, "rss_mb": r.ru_maxrss / 1024}), file=sys.stderr)
"""


REFERENCE_EVALUATE_TRACE = r"""
# trace evaluate's mean RAGBench relevance and utilization (the annotator's listed keys over the document sentences,
# all samples) and annotator-vs-human sentence labels, plainly: for `relevant` and `utilized`, over the samples a
# human labeled (any of relevant, utilized, unsupported, adherent), each document sentence (documents_sentences'
# keys) an item, the annotator's (the record's all_*_sentence_keys) the prediction and the human's the truth:
# Cohen's kappa and F1 of the pooled confusion counts, with 1000-replicate percentile intervals over samples drawn
# as Concord draws them (numpy default_rng(0), chunks of 64 replicates, samples in import order): sqlite3, json,
# numpy only
import json, resource, sqlite3, sys
import numpy as np
path, scheme = sys.argv[1:3]
n_boot, seed, alpha = 1000, 0, 0.05
conn = sqlite3.connect(path)
human = {}
for sid, kind, v in conn.execute(
        "SELECT l.sample_id, l.kind, l.value FROM labels l JOIN samples s ON s.id = l.sample_id WHERE s.scheme = "
        "'trace' AND l.unit = '' AND l.resolved = 1 AND l.value IS NOT NULL ORDER BY l.sample_id, l.unit, l.event_id"):
    human.setdefault(sid, {})[kind] = json.loads(v)
fields = {"relevant": "$.all_relevant_sentence_keys", "utilized": "$.all_utilized_sentence_keys"}
conf = {kind: [] for kind in fields}
share = {kind: [] for kind in fields}  # RAGBench relevance / utilization: listed keys over document sentences
samples = checked = 0
for sid, sentences, relevant, utilized in conn.execute(
        "SELECT id, json_extract(payload, '$.documents_sentences'), json_extract(payload, ?), "
        "json_extract(payload, ?) FROM samples WHERE scheme = 'trace' ORDER BY rowid", tuple(fields.values())):
    samples += 1
    keys = [k for doc in json.loads(sentences) for k, _ in doc]
    for kind, annotator in (("relevant", relevant), ("utilized", utilized)):
        if annotator is not None and keys:
            share[kind].append(len(json.loads(annotator)) / len(keys))
    h = human.get(sid, {})
    if all(h.get(k) is None for k in ("relevant", "utilized", "unsupported", "adherent")):
        continue
    checked += 1
    for kind, annotator in (("relevant", relevant), ("utilized", utilized)):
        if annotator is None or h.get(kind) is None:
            continue
        a, t = set(json.loads(annotator)), set(h[kind])
        c = [sum(k in a and k in t for k in keys), sum(k in a and k not in t for k in keys),
             sum(k not in a and k in t for k in keys), sum(k not in a and k not in t for k in keys)]
        if sum(c):
            conf[kind].append(c)

def kappa_f1(c):  # c (..., 4): tp, fp, fn, tn
    tp, fp, fn, tn = (c[..., i] for i in range(4))
    n = tp + fp + fn + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (tp + tn) / n
        pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / n**2
        kappa = np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
        f1 = np.where(tp + fp + fn == 0, 1.0, 2 * tp / (2 * tp + fp + fn))
    return np.where(n > 0, kappa, np.nan), np.where(n > 0, f1, np.nan)

out = {}
for kind, rows in conf.items():
    c = np.array(rows, dtype=np.float64).reshape(-1, 4)
    n = c.shape[0]
    rng = np.random.default_rng(seed)
    sums = []
    for lo in range(0, n_boot, 64):
        idx = rng.integers(0, n, size=(min(64, n_boot - lo), n), dtype=np.int32)
        sums.append(np.stack([np.bincount(r, minlength=n) for r in idx]).astype(np.float64) @ c)
    reps = kappa_f1(np.concatenate(sums))
    est = kappa_f1(c.sum(axis=0))
    figures = []
    for e, r in zip(est, reps):
        r = r[np.isfinite(r)]
        figures.append([float(e), *(float(v) for v in np.percentile(r, [100 * alpha / 2, 100 * (1 - alpha / 2)]))])
    out[kind] = {"samples": n, "items": int(c.sum()), "kappa": figures[0], "f1": figures[1]}
means = {}
for kind, score in (("relevant", "relevance"), ("utilized", "utilization")):
    x = np.array(share[kind], dtype=np.float64)
    n = x.size
    rng = np.random.default_rng(seed)
    reps = []
    for lo in range(0, n_boot, 64):
        idx = rng.integers(0, n, size=(min(64, n_boot - lo), n), dtype=np.int32)
        w = np.stack([np.bincount(r, minlength=n) for r in idx]).astype(np.float64)
        reps.append(w @ x / n)  # each replicate's mean: its draws' weighted sum over the n drawn
    low, high = np.percentile(np.concatenate(reps), [100 * alpha / 2, 100 * (1 - alpha / 2)])
    means[score] = [float((np.ones((1, n)) @ x / n)[0]), float(low), float(high)]
r = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"labels": out, "means": means, "samples": samples, "human_samples": checked}, sort_keys=True))
print(json.dumps({"cpu": r.ru_utime + r.ru_stime, "rss_mb": r.ru_maxrss / 1024}), file=sys.stderr)
"""


def trace_evaluate_figures(out: str) -> dict[str, Any]:
    """The command's annotator-vs-human relevant and utilized figures as REFERENCE_EVALUATE_TRACE prints them."""
    data = json.loads(out)["trace"]
    means = data["means"]["ragbench"]["all"]
    return {"labels": {k: data["labels"][k] for k in ("relevant", "utilized")}, "samples": data["samples"],
            "means": {k: means[k] for k in ("relevance", "utilization")}, "human_samples": data["human_samples"]}


def rgb_evaluate_figures(out: str) -> dict[str, Any]:
    """The command's human figures (and unit counts) as REFERENCE_EVALUATE_RGB prints them."""
    data = json.loads(out)["rgb"]
    human = {f"{r['model']}|{r['task']}|{r['figure']}": [r["value"], r["low"], r["high"], r["n"]]
             for r in data["figures"] if r["source"] == "human"}
    return {"human": human, "labeled_units": data["labeled_units"], "units": data["units"]}


# scheme -> (some of) the same figures computed plainly, what they are, and those figures read from the command's JSON
REFERENCE_RUBRIC = r"""
# rubric evaluate's figures from the same rows: per trait, the mean metrics of the LLM's buckets and, on the units a
# human checked, the aligned items' counts, kept share, Cohen's kappa and the metric means; sqlite3, json, numpy only.
import json, resource, sqlite3, sys
import numpy as np
path = sys.argv[1]
conn = sqlite3.connect(path)
traits = {name: json.loads(d) for name, d in conn.execute("SELECT name, definition FROM traits")}
llm = {}  # the newest machine buckets per unit
for sid, unit, value in conn.execute(
        "SELECT m.sample_id, m.unit, m.value FROM machine_labels m JOIN samples s ON s.id = m.sample_id "
        "WHERE s.scheme = 'rubric' AND m.value IS NOT NULL ORDER BY m.created_at"):
    llm[(sid, unit)] = value
human = {(sid, unit): value for sid, unit, value in conn.execute(
    "SELECT l.sample_id, l.unit, l.value FROM labels l JOIN samples s ON s.id = l.sample_id WHERE s.scheme = 'rubric' "
    "AND l.resolved = 1 AND l.kind = 'buckets' AND l.value IS NOT NULL ORDER BY l.event_id")}
NAMES = ("tp", "fn", "fp", "tn")

def keys(buckets, dedupe):
    out = []
    for name in NAMES:
        ks = [x.strip().casefold() for x in buckets.get(name) or [] if x.strip()]
        out.append(list(dict.fromkeys(ks)) if dedupe else ks)
    return out

def align(a, b, conf):  # per excerpt: same-bucket occurrences paired first, the rest in bucket order, else absent (4)
    by_a, by_b = {}, {}
    for by, side in ((by_a, a), (by_b, b)):
        for i, ks in enumerate(side):
            for k in ks:
                by.setdefault(k, []).append(i)
    for k in dict.fromkeys([*by_a, *by_b]):
        left, right = list(by_a.get(k, [])), list(by_b.get(k, []))
        for i in list(left):
            if i in right:
                left.remove(i); right.remove(i); conf[i, i] += 1
        while left or right:
            conf[left.pop(0) if left else 4, right.pop(0) if right else 4] += 1

def metrics(c):
    tp, fn, fp, tn = (c[:, i].astype(float) for i in range(4))
    def ratio(a, b):
        return np.divide(a, b, out=np.zeros(len(a)), where=b > 0)
    p, r = ratio(tp, tp + fp), ratio(tp, tp + fn)
    return {"precision": p, "recall": r, "f1": ratio(2 * p * r, p + r), "specificity": ratio(tn, tn + fp),
            "accuracy": ratio(tp + tn, tp + tn + fp + fn)}

rows, checked, confs = {}, {}, {}
for sid, unit in conn.execute("SELECT u.sample_id, u.unit FROM units u JOIN samples s ON s.id = u.sample_id "
                              "WHERE u.scheme = 'rubric' ORDER BY s.rowid, u.id"):
    if unit not in traits or (sid, unit) not in llm:
        continue
    dedupe = traits[unit].get("repeated_extraction", True)
    a = keys(json.loads(llm[(sid, unit)]), dedupe)
    rows.setdefault(unit, []).append([len(x) for x in a])
    if (sid, unit) in human:
        b = keys(json.loads(human[(sid, unit)]), dedupe)
        checked.setdefault(unit, []).append([len(x) for x in a] + [len(x) for x in b])
        align(a, b, confs.setdefault(unit, np.zeros((5, 5), dtype=np.int64)))
out = {}
for unit, r in rows.items():
    wanted = traits[unit]["metrics"]
    m = metrics(np.array(r))
    res = {"samples": len(r), "llm_metrics": {k: float(m[k].mean()) for k in wanted}, "agreement": None}
    if unit in checked:
        c, conf = np.array(checked[unit]), confs[unit]
        ml, mh = metrics(c[:, :4]), metrics(c[:, 4:])
        n = conf.sum()
        po, pe = np.trace(conf) / n, (conf.sum(0) * conf.sum(1)).sum() / n ** 2
        n_llm, kept = int(conf[:4].sum()), int(np.trace(conf[:4, :4]))
        res["agreement"] = {"n_samples": len(c), "n_items": int(n), "n_llm_items": n_llm, "n_kept": kept,
                            "kept_share": kept / n_llm if n_llm else None,
                            "kappa": float((po - pe) / (1 - pe)) if pe < 1 else None,
                            "metric_deltas": {k: float((ml[k] - mh[k]).mean()) for k in wanted},
                            "metrics_llm": {k: float(ml[k].mean()) for k in wanted},
                            "metrics_human": {k: float(mh[k].mean()) for k in wanted}}
    out[unit] = res
r = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps(out, sort_keys=True))
print(json.dumps({"cpu": r.ru_utime + r.ru_stime, "rss_mb": r.ru_maxrss / 1024}), file=sys.stderr)
"""

REFERENCE_JUDGE = r"""
# judge evaluate's figures from the same rows, plainly (sqlite3, json, numpy, pandas): per judge its threshold
# (declared, else 0.5 for a probability, else the median score), its decisions, AUROC (ties one half), balanced
# accuracy, F1 and Cohen's kappa against the 'any' reference (positive when any annotator said positive), for
# probability-like judges the ECE and the reliability bins, each figure with its 1000-replicate percentile interval
# over samples drawn as Concord draws them (numpy default_rng(0), chunks of 64 replicates of sample indices,
# samples in import order); and the judges' own ceiling estimates (each judge's mean Cohen's kappa against each
# annotator, the annotators' mean pairwise kappa).
import json, math, resource, sqlite3, sys
import numpy as np, pandas as pd
path = sys.argv[1]
n_boot, seed, alpha, bins = 1000, 0, 0.05, 10
conn = sqlite3.connect(path)
ids, scores, meta = [], {}, {}
for sid, payload in conn.execute("SELECT id, payload FROM samples WHERE scheme = 'judge' ORDER BY rowid"):
    i = len(ids)
    ids.append(sid)
    for name, j in json.loads(payload).get("judges", {}).items():
        j = j if isinstance(j, dict) else {"score": j}
        m = meta.setdefault(name, {})
        for key in ("high_means_positive", "probability", "threshold"):
            if j.get(key) is not None:
                m.setdefault(key, j[key])
        if j.get("score") is not None:
            scores.setdefault(name, {})[i] = float(j["score"])
n = len(ids)
pos = {sid: i for i, sid in enumerate(ids)}
per = {}  # annotator -> (n,) 0/1/NaN
for sid, who, value in conn.execute(
        "SELECT l.sample_id, l.annotator, l.value FROM labels l JOIN samples s ON s.id = l.sample_id WHERE "
        "s.scheme = 'judge' AND l.unit = '' AND l.kind = 'label' AND l.value IS NOT NULL"):
    per.setdefault(who, np.full(n, np.nan))[pos[sid]] = float(bool(json.loads(value)))
y = np.fmax.reduce(np.vstack(list(per.values())), axis=0) if per else np.full(n, np.nan)  # NaN: none

def figures(c):  # (..., 4) tp fp fn tn -> balanced accuracy, F1, kappa
    tp, fp, fn, tn = (c[..., i] for i in range(4))
    m = tp + fp + fn + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        ba = (tp / (tp + fn) + tn / (tn + fp)) / 2
        f1 = np.where(m > 0, np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), 0.0), np.nan)
        po, pe = (tp + tn) / m, ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (m * m)
        return {"balanced_accuracy": ba, "f1": f1, "kappa": np.where(pe < 1, (po - pe) / (1 - pe), np.nan)}

def auroc(p, q):  # (..., k) positive and negative weight per distinct score, ascending
    below = np.cumsum(q, axis=-1) - q
    with np.errstate(invalid="ignore", divide="ignore"):
        return (p * (below + 0.5 * q)).sum(-1) / (p.sum(-1) * q.sum(-1))

def interval(v):
    v = v[np.isfinite(v)]
    return [float(x) for x in np.percentile(v, [100 * alpha / 2, 100 * (1 - alpha / 2)])] if v.size else [math.nan] * 2

judges = {}
for name, by in scores.items():
    s = np.full(n, np.nan)
    s[list(by)] = list(by.values())
    m = meta[name]
    high = m.get("high_means_positive", True)
    got = s[~np.isnan(s)]
    prob = m["probability"] if "probability" in m else bool(got.min() >= 0 and got.max() <= 1)
    t = m["threshold"] if "threshold" in m else 0.5 if prob else float(np.median(got))
    keep = ~np.isnan(s) & ~np.isnan(y)
    yy = y[keep] == 1
    d = s[keep] >= t if high else s[keep] < t
    rows = np.column_stack([d & yy, d & ~yy, ~d & yy, ~d & ~yy]).astype(float)
    code = pd.factorize(s[keep] if high else -s[keep], sort=True)[0]  # distinct oriented scores, ascending
    k = code.max() + 1
    onehot = np.zeros((code.size, 2 * k))
    onehot[np.arange(code.size), code + k * yy] = 1.0  # negatives' codes, then positives'
    pp = s[keep] if high else 1 - s[keep]
    b = np.clip(np.floor(np.clip(pp, 0, 1) * bins), 0, bins - 1).astype(int)
    cal = np.zeros((code.size, 3 * bins))
    cal[np.arange(code.size), b], cal[np.arange(code.size), bins + b] = pp, yy
    cal[np.arange(code.size), 2 * bins + b] = 1.0
    judges[name] = dict(keep=keep, yy=yy, rows=rows, k=k, onehot=onehot, prob=prob, cal=cal, t=t, high=high, d=d, pp=pp, b=b)

def draw_figures(w, j, taken):  # w (reps, n) draw counts; taken: w on a set of samples, made once per set
    key = j["keep"].tobytes()
    if key not in taken:
        taken[key] = w[:, j["keep"]]
    ws = taken[key]
    c = ws @ j["rows"]
    out = figures(c)
    pq = ws @ j["onehot"]
    k = j["k"]
    out["auroc"] = auroc(pq[:, k:], pq[:, :k]) if 0 < j["yy"].sum() < j["yy"].size else np.full(len(w), np.nan)
    if j["prob"]:
        sums = ws @ j["cal"]
        with np.errstate(invalid="ignore", divide="ignore"):
            out["ece"] = np.abs(sums[:, bins:2 * bins] - sums[:, :bins]).sum(-1) / sums[:, 2 * bins:].sum(-1)
    return out

est = {name: draw_figures(np.ones((1, n)), j, {}) for name, j in judges.items()}
reps = {name: {f: [] for f in e} for name, e in est.items()}
rng = np.random.default_rng(seed)
for lo in range(0, n_boot, 64):
    idx = rng.integers(0, n, size=(min(64, n_boot - lo), n), dtype=np.int32)
    w = np.empty((len(idx), n))
    for r, drawn in enumerate(idx):
        w[r] = np.bincount(drawn, minlength=n)
    taken = {}
    for name, j in judges.items():
        for f, v in draw_figures(w, j, taken).items():
            reps[name][f].append(v)
out = {}
for name, j in judges.items():
    res = {"n": int(j["keep"].sum()), "positives": int(j["yy"].sum()), "threshold": float(j["t"]),
           "high_means_positive": bool(j["high"]), "probability": bool(j["prob"])}
    for f, v in est[name].items():
        low, high = interval(np.concatenate(reps[name][f]))
        res[f] = {"estimate": float(v[0]), "low": low, "high": high}
    if j["prob"]:
        res["reliability"] = [{"low": i / bins, "high": (i + 1) / bins, "mean_predicted": float(j["pp"][j["b"] == i].mean()),
                               "observed_rate": float(j["yy"][j["b"] == i].mean()), "count": int((j["b"] == i).sum())}
                              for i in range(bins) if (j["b"] == i).any()]
    out[name] = res

def kappa(a, b):  # Cohen's kappa of two 0/1 vectors
    c = np.array([(a & b).sum(), (~a & b).sum(), (a & ~b).sum(), (~a & ~b).sum()], dtype=float)
    return float(figures(c)["kappa"])

names = sorted(per)
pair_k = [kappa(per[a][both] == 1, per[b][both] == 1) for i, a in enumerate(names) for b in names[i + 1:]
          for both in [~np.isnan(per[a]) & ~np.isnan(per[b])]]
ceiling = {"mean_pair_kappa": float(np.mean(pair_k)), "judges": {}}
for name, by in scores.items():
    s = np.full(n, np.nan)
    s[list(by)] = list(by.values())
    j = judges[name]
    votes = np.where(np.isnan(s), np.nan, (s >= j["t"]) if j["high"] else (s < j["t"]))
    ceiling["judges"][name] = float(np.mean([kappa(per[a][both] == 1, votes[both] == 1) for a in names
                                             for both in [~np.isnan(per[a]) & ~np.isnan(votes)]]))
r = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"judges": out, "n_samples": n, "n_labeled": int((~np.isnan(y)).sum()), "ceiling": ceiling},
                 sort_keys=True))
print(json.dumps({"cpu": r.ru_utime + r.ru_stime, "rss_mb": r.ru_maxrss / 1024}), file=sys.stderr)
"""



REFERENCE_EVALUATE_ADDM = r"""
# addm evaluate's figures, plainly: per method (and pooled "overall") the three ADDM scores -- ordinal AUPRC, process
# score, consistency -- under the addm_v2 policy against the records' ground truth and again on the businesses humans
# labeled (their resolved verdict / incidents replacing the ground truth's), each with its 1000-replicate 95%
# percentile interval over businesses drawn as Concord draws them (numpy default_rng(0), int32 indices in chunks of
# min(64, 4e6 // max(n, 3 x distinct scores)) replicates, businesses in import order, one draw for every method);
# snippets located exactly (str.find), else by the library's locate (case-insensitive, then fuzzy): sqlite3, json,
# numpy (and the library's grounding for the rare inexact snippet); the cyclic GC off (many small acyclic objects)
import gc, json, resource, sqlite3, sys
import numpy as np
gc.disable()
sys.path.insert(0, ".")
from calibration.grounding import locate
path, scheme = sys.argv[1:3]
n_boot, seed, alpha = 1000, 0, 0.05
VERDICT = {"Low Risk": 0, "High Risk": 1, "Critical Risk": 2}
POINTS, BONUS = {"mild": 2.0, "moderate": 5.0, "severe": 15.0}, {"False assurance": 5.0, "Dismissive staff": 3.0}
MODS, WEIGHTS = ("False assurance", "Dismissive staff"), (0.35, 0.30, 0.15, 0.15, 0.05)
conn = sqlite3.connect(path)
ids, gt_verdict, gt_first, results = [], [], [], []  # results: per business, method -> (verdict, score, error, evidences)
methods = set()
for sid, payload in conn.execute("SELECT id, payload FROM samples WHERE scheme = 'addm' ORDER BY rowid"):
    p = json.loads(payload)
    texts = {r["review_id"]: r["text"] for r in p["reviews"]}
    ids.append(sid)
    gt_verdict.append(VERDICT[p["ground_truth"]["verdict"]])
    first = {}
    for x in p["ground_truth"].get("incidents") or []:
        first.setdefault(x["review_id"], (x["severity"], set(x.get("modifiers") or ())))
    gt_first.append(first)
    res = {}
    for name, m in p["methods"].items():
        evs = []
        for x in m.get("evidences") or []:
            snip = x.get("snippet")
            q = snip.strip() if snip is not None else ""
            text = texts.get(x["review_id"]) or ""
            grounded = None if not q else (text.find(q) >= 0 or locate(snip, text).start is not None)
            evs.append((x["review_id"], x["severity"], x.get("modifiers") or [], grounded))
        res[name] = (VERDICT.get(m.get("verdict")), m.get("risk_score"), m.get("error"), evs)
        methods.add(name)
    results.append(res)
methods = sorted(methods)
human = {}  # sample -> kind -> value (resolved, per-sample)
for sid, kind, value in conn.execute(
        "SELECT l.sample_id, l.kind, l.value FROM labels l JOIN samples s ON s.id = l.sample_id WHERE s.scheme = 'addm' "
        "AND l.resolved = 1 AND l.unit = '' AND l.kind IN ('verdict', 'incidents') AND l.value IS NOT NULL"):
    human.setdefault(sid, {})[kind] = json.loads(value)


def counts(first, r):  # the 12 count columns of one method's result on one business
    verdict, _, error, evs = r
    if error is not None:
        return [0] * 12
    claimed = {e[0] for e in evs}
    c = [len(claimed), len(claimed & first.keys())] + [0] * 10
    pts = 0
    for rid, sev, mods, grounded in evs:
        if rid in first:
            c[3] += 1; c[2] += sev == first[rid][0]
            for m in MODS:
                c[5] += 1; c[4] += (m in mods) == (m in first[rid][1])
        if grounded is not None:
            c[9] += 1; c[8] += grounded
        extra = 0
        for m in mods:
            extra = extra + BONUS.get(m, 0.0)
        pts = pts + (POINTS.get(sev, 0.0) + extra)
    if verdict is not None:
        ok = int((2 if pts >= 8.0 else 1 if pts >= 4.0 else 0) == verdict)
        c[6], c[7] = ok, 1
        if evs:
            c[10], c[11] = ok, 1
    return c


def process(s):  # s (..., 12) column sums -> process score
    def ratio(a, b):
        return np.divide(s[..., a], s[..., b], out=np.zeros_like(s[..., a]), where=s[..., b] > 0)
    comps = (np.where(s[..., 0] > 0, ratio(1, 0), 1.0), ratio(2, 3), ratio(4, 5), ratio(6, 7), ratio(8, 9))
    weighted = sum(w * v for w, v in zip(WEIGHTS, comps))
    total = sum(WEIGHTS[:4]) + WEIGHTS[4] * (s[..., 9] > 0)
    return np.where(total > 0, weighted / np.where(total > 0, total, 1.0) * 100.0, 0.0)


def consistency(s):
    return np.divide(s[..., 10], s[..., 11], out=np.zeros_like(s[..., 10]), where=s[..., 11] > 0) * 100.0


def auprc(hist):  # hist (..., k, 3) draws per (distinct score ascending, gt class) -> ordinal AUPRC
    def ap(pos, neg):
        P, N = pos.sum(axis=-1), neg.sum(axis=-1)
        tp, seen = np.cumsum(pos[..., ::-1], axis=-1), np.cumsum((pos + neg)[..., ::-1], axis=-1)
        prec = np.divide(tp, seen, out=np.zeros_like(tp), where=seen > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where((P > 0) & (N > 0), (pos[..., ::-1] * prec).sum(axis=-1) / P, np.nan)
    vals = np.stack([ap(hist[..., 1] + hist[..., 2], hist[..., 0]), ap(hist[..., 2], hist[..., 0] + hist[..., 1])], -1)
    valid = np.isfinite(vals).sum(axis=-1)
    mean = np.where(valid > 0, np.nansum(vals, axis=-1) / np.maximum(valid, 1), 0.0)
    return np.where(hist.sum(axis=(-2, -1)) >= 2, mean, 0.0)


def interval(v):
    v = v[np.isfinite(v)]
    return [float(x) for x in np.percentile(v, [100 * alpha / 2, 100 * (1 - alpha / 2)])] if v.size else [None, None]


def figures(rows):  # rows: (gt verdict, first incidents, results) per business
    n = len(rows)
    gt = np.array([g for g, _, _ in rows], dtype=np.int64)
    c, cell, k = {}, {}, {}
    for m in methods:
        c[m] = np.array([counts(f, res[m]) if m in res else [0] * 12 for _, f, res in rows], dtype=np.float64).reshape(n, 12)
        score = np.array([np.nan if m not in res or res[m][2] is not None else res[m][1] if res[m][1] is not None
                          else np.nan if res[m][0] is None else res[m][0] * 5.0 for _, _, res in rows])
        keep = ~np.isnan(score)
        uniq, code = np.unique(score[keep], return_inverse=True)
        cell[m], k[m] = np.full(n, 3 * uniq.size), uniq.size
        cell[m][keep] = code * 3 + gt[keep]
    pooled = sum(c.values())  # whole numbers: the pooled replicate sums are the methods' added
    out = {}
    for m in methods:
        hist = np.bincount(cell[m], minlength=3 * k[m] + 1)[:3 * k[m]].reshape(k[m], 3).astype(np.float64)
        s = c[m].sum(axis=0)
        out[m] = {"auprc": float(auprc(hist)), "process_score": float(process(s)), "consistency_score": float(consistency(s))}
    s = pooled.sum(axis=0)
    out["overall"] = {"auprc": float(np.mean([out[m]["auprc"] for m in methods])), "process_score": float(process(s)),
                      "consistency_score": float(consistency(s))}
    chunk = int(max(1, min(64, 4_000_000 // max(n, 3 * max(k.values())))))
    rng = np.random.default_rng(seed)
    reps = {m: {"auprc": [], "process": [], "consistency": []} for m in [*methods, "overall"]}
    for lo in range(0, n_boot, chunk):
        idx = rng.integers(0, n, size=(min(chunk, n_boot - lo), n), dtype=np.int32)
        w = np.empty(idx.shape)  # draw counts (reps, n)
        for j, i in enumerate(idx):
            w[j] = np.bincount(i, minlength=n)
        every = w @ np.hstack([c[m] for m in methods])
        aucs = []
        for j, m in enumerate(methods):
            hist = np.empty((len(w), 3 * k[m] + 1))
            for r, wr in enumerate(w):
                hist[r] = np.bincount(cell[m], weights=wr, minlength=3 * k[m] + 1)
            aucs.append(auprc(hist[:, :3 * k[m]].reshape(-1, k[m], 3)))
            s = every[:, 12 * j:12 * (j + 1)]
            reps[m]["auprc"].append(aucs[-1]); reps[m]["process"].append(process(s)); reps[m]["consistency"].append(consistency(s))
        s = every.reshape(len(w), len(methods), 12).sum(axis=1)
        reps["overall"]["auprc"].append(np.mean(aucs, axis=0))
        reps["overall"]["process"].append(process(s)); reps["overall"]["consistency"].append(consistency(s))
    for m, r in reps.items():
        for name in ("auprc", "process", "consistency"):
            out[m][f"{name}_ci"] = interval(np.concatenate(r[name]))
    return out


rows = list(zip(gt_verdict, gt_first, results))
truth = []
for sid, (g, first, res) in zip(ids, rows):
    h = human.get(sid)
    if not h:
        continue
    v = VERDICT.get(h.get("verdict")) if h.get("verdict") is not None else None
    inc = h.get("incidents")
    if v is None and inc is None:
        continue
    if inc is not None:
        first = {}
        for x in inc:
            first.setdefault(str(x["review_id"]), (str(x["severity"]).strip().casefold(), set(x.get("modifiers") or ())))
    truth.append((g if v is None else v, first, res))
out = {"n_businesses": len(rows), "n_human": len(truth), "figures": figures(rows), "human": figures(truth) if truth else {}}
r = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps(out, sort_keys=True))
print(json.dumps({"cpu": r.ru_utime + r.ru_stime, "rss_mb": r.ru_maxrss / 1024}), file=sys.stderr)
"""


def evaluate_figures(out: str, scheme: str) -> Any:
    """What the scheme's evaluate reference prints, taken from the command's JSON."""
    data = json.loads(out)[scheme]
    if scheme == "rubric":
        return {k: v for k, v in data.items() if k != "human_ceiling"}
    if scheme == "addm":
        return addm_evaluate_figures(data)
    ceiling = data.get("ceiling") or {}
    return {"judges": data["judges"], "n_samples": data["n_samples"], "n_labeled": data["n_labeled"],
            "ceiling": {"mean_pair_kappa": ceiling.get("mean_pair_kappa"), "judges": ceiling.get("judges")}}


def addm_evaluate_figures(data: dict[str, Any]) -> dict[str, Any]:
    """The command's addm_v2 scores with their intervals, per method and overall, on the records' ground truth and
    on the human-labeled businesses, as REFERENCE_EVALUATE_ADDM prints them."""
    def pick(res: dict[str, Any]) -> dict[str, Any]:
        rows = {**res["methods"], "overall": res["overall"]}
        return {m: {k: r[k] for k in ("auprc", "process_score", "consistency_score", "auprc_ci", "process_ci",
                                      "consistency_ci")} for m, r in rows.items()}
    human = data["human"].get("addm_v2")
    return {"n_businesses": data["n_businesses"], "n_human": data["n_human"],
            "figures": pick(data["policies"]["addm_v2"]), "human": pick(human) if human else {}}


def close(a: Any, b: Any, tol: float = 1e-9) -> bool:
    """Equal structure, numbers within tol (the reference computes kappa its own plain way)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], tol) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(a - b) <= tol
    return a == b


# evaluate's reference per scheme: the same figures where one is written, else the read floor (REFERENCE_READ)
EVALUATE_REFERENCES = {"violations": REFERENCE_EVALUATE_VIOLATIONS, "rgb": REFERENCE_EVALUATE_RGB,
                       "trace": REFERENCE_EVALUATE_TRACE, "rubric": REFERENCE_RUBRIC, "judge": REFERENCE_JUDGE,
                       "addm": REFERENCE_EVALUATE_ADDM}
EVALUATE_REF_NAMES = {"violations": "sqlite3 + numpy + the library's matcher", "rgb": "sqlite3 + numpy: human figures",
                      "trace": "sqlite3 + numpy: relevance, utilization, their kappa, F1",
                      "rubric": "sqlite3 + numpy: every figure per trait", "judge": "sqlite3 + numpy: every judge figure, with intervals",
                      "addm": "sqlite3 + numpy: the three scores per method, with intervals"}
EVALUATE_FIGURES = {"rgb": rgb_evaluate_figures, "trace": trace_evaluate_figures}


def agreement_figures(out: str, scheme: str) -> dict[str, list[float]]:
    """The command's pooled pair kappas, Fleiss' kappa and alpha, as the reference prints them (over every item
    kind)."""
    data = json.loads(out)
    res: dict[str, list[float]] = {}
    for p in data.get("pairs", []):
        if p.get("kappa"):
            k = p["kappa"]
            res[f"{p['a']}/{p['b']}"] = [k["estimate"], k["low"], k["high"]]
    for name, key in (("fleiss", "kappa"), ("alpha", "alpha")):
        k = data["overall"][key]
        res[name] = [k["estimate"], k["low"], k["high"]]
    return res


def same(a: dict[str, list[float]], b: dict[str, list[float]], tol: float = 1e-9) -> bool:
    """Estimates and interval ends equal to rounding (the reference draws the same samples: same seed and order)."""
    return a.keys() == b.keys() and all(abs(u - v) <= tol for k in a for u, v in zip(a[k], b[k]))


def line(label: str, runs: list[tuple[float, float, float]], ref: list[tuple[float, float, float]] | None,
         load: tuple[float, ...]) -> str:
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    rss = max(r[2] for r in runs)
    text = (f"{label:<28} median {wall:6.2f} s wall, {cpu:6.2f} s CPU (share {cpu / wall:.2f}), {rss:5.0f} MB; "
            f"load {load[0]:.2f}")
    if ref:
        rw, rc = statistics.median(r[0] for r in ref), statistics.median(r[1] for r in ref)
        text += f"; reference {rw:.2f} s wall, {rc:.2f} s CPU -> ratio {wall / rw:.2f}x wall, {cpu / rc:.2f}x CPU"
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--schemes", default=",".join(SCHEMES))
    ap.add_argument("--commands", default="evaluate,agreement")
    ap.add_argument("--dir", type=Path, default=None, help="keep the built projects here (reused when present)")
    args = ap.parse_args()
    schemes = [s for s in args.schemes.split(",") if s]
    commands = [c for c in args.commands.split(",") if c]
    folder = args.dir or Path(tempfile.mkdtemp(prefix="concord-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    results = []
    with bench_lock():
        # compiled once before the timed runs (child_env keeps the bytecode), as after an install
        subprocess.run([PY, "-m", "compileall", "-q", "app", "calibration"], cwd=ROOT, check=True, env=child_env(),
                       stdout=subprocess.DEVNULL)
        print(f"load average {os.getloadavg()}, {os.cpu_count()} CPUs; {args.samples:,} samples per scheme, "
              f"median of {args.runs}")
        for scheme in schemes:
            path = build(scheme, args.samples, folder)
            for command in commands:
                argv = [PY, "-c", WRAP, command, str(path), "--scheme", scheme, "--json"]
                if command == "evaluate" and scheme == "violations":
                    argv[5:5] = ["--embedding", "jaccard"]
                ref_argv = ([PY, "-c", EVALUATE_REFERENCES.get(scheme, REFERENCE_READ)] if command == "evaluate"
                            else [PY, str(ROOT / "benchmarks" / "agreement_reference.py")])
                runs, refs, outs, ref_outs = [], [], set(), set()
                load = os.getloadavg()
                for _ in range(args.runs):
                    wall, cpu, rss, out = run_child(argv)
                    runs.append((wall, cpu, rss))
                    outs.add(out)
                    wall, cpu, rss, out = run_child([*ref_argv, str(path), scheme])
                    refs.append((wall, cpu, rss))
                    ref_outs.add(out)
                print(line(f"{command} --scheme {scheme}", runs, refs or None, load))
                print(f"  {'identical output in every run' if len(outs) == 1 else 'OUTPUTS DIFFER between runs'}")
                matched = None  # evaluate's reference is a floor: other figures
                if command == "agreement":
                    got = agreement_figures(next(iter(outs)), scheme)
                    want = json.loads(next(iter(ref_outs)))
                    matched = same(got, want) and len(outs) == 1
                    print(f"  reference figures {'equal' if same(got, want) else 'DIFFER: ' + repr((got, want))} "
                          f"({', '.join(f'{k} {v[0]:.4f}' for k, v in want.items())})")
                if command == "evaluate" and scheme == "violations":
                    got = violations_figures(next(iter(outs)))
                    want = json.loads(next(iter(ref_outs)))
                    matched = same_violations(got, want) and len(outs) == 1
                    print(f"  reference figures {'equal' if same_violations(got, want) else 'DIFFER: ' + repr((got, want))}"
                          f" (ceiling {', '.join(f'{k} {v:.4f}' for k, v in want['ceiling'].items())})")
                elif command == "evaluate" and scheme in ("rubric", "judge", "addm"):
                    got, want = evaluate_figures(next(iter(outs)), scheme), json.loads(next(iter(ref_outs)))
                    matched = close(got, want) and len(outs) == 1
                    print(f"  reference figures {'equal' if close(got, want) else 'DIFFER: ' + repr((got, want))} "
                          f"({EVALUATE_REF_NAMES[scheme]}, to 1e-9)")
                elif command == "evaluate" and scheme in EVALUATE_FIGURES:
                    got, want = EVALUATE_FIGURES[scheme](next(iter(outs))), json.loads(next(iter(ref_outs)))
                    matched = got == want and len(outs) == 1 and len(ref_outs) == 1
                    print(f"  reference figures {'equal (exactly)' if got == want else 'DIFFER: ' + repr((got, want))}"
                          f" ({EVALUATE_REF_NAMES[scheme]}, with intervals)")
                ref_name = (EVALUATE_REF_NAMES.get(scheme, "sqlite3 read floor") if command == "evaluate"
                            else "sqlite3 + pandas")
                results.append((f"{command} --scheme {scheme}, {args.samples:,} samples (ref: {ref_name})", runs, refs,
                                matched, load[0]))
        print(f"load average after {os.getloadavg()}")
    for timed, runs, refs, matched, load in results:
        med = [statistics.median(r[i] for r in runs) for i in (0, 1)]
        ref = [statistics.median(r[i] for r in refs) for i in (0, 1)] if refs else [None, None]
        emit(timed, *med, *ref, matched=matched, load=load)


if __name__ == "__main__":
    main()
