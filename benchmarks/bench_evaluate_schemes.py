"""`concord evaluate --scheme S` and `concord agreement --scheme S` per scheme at N samples (issue #28), each next
to a plain reference measured in the same run.

Projects: the demo's records of each scheme (resources/demo/*.jsonl) repeated to N samples under new ids and
imported with `concord import`; their human labels repeated for three annotators (ana, ben, cy), each keeping the
demo's decision with probability 0.8 and otherwise changing one of its kinds (a boolean flipped, a list element
dropped, another value the demo gives that kind), so the annotators disagree. Built once per scheme and size (`--dir` keeps them between runs); building is not timed.

Timed: each command in a child process of its own (interpreter start, imports, reading the project, the figures,
the JSON), median of `--runs` runs, with its CPU seconds, CPU share (CPU / wall) and peak resident memory
(ru_maxrss of that child). References, each in a child process too and interleaved with the commands (so under
the same load), and each checked against the command's output:
- agreement: the same Cohen's kappa per annotator pair and Fleiss' kappa (with 1000-replicate percentile intervals
  over samples) from the same label rows, in plain sqlite3 + pandas + numpy (`REFERENCE_AGREEMENT`), for the schemes
  whose items need no scheme code to read: violations (every (ground truth, prediction) pair of a unit matched or
  not; the pair counts from SQL) and rgb (the four decisions);
- evaluate: for rubric, the same figures per trait (the LLM's mean metrics; on the checked units the aligned
  items' counts, kept share, Cohen's kappa and metric means) in plain sqlite3 + numpy (`REFERENCE_RUBRIC`), and for
  judge each judge's estimates (AUROC, balanced accuracy, F1, Cohen's kappa against the 'any' reference) in plain
  sqlite3 + numpy + pandas (`REFERENCE_JUDGE`), both checked against the command's JSON (numbers within 1e-9; the
  judge's intervals and calibration and every human ceiling are not in them); for the other schemes a floor, not
  the same figures: a plain sqlite3 read and json.loads of every row the scheme's evaluate reads (samples' payloads
  and labels; violations' rows), i.e. the data evaluate must read at least.
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
def run_child(argv: list[str]) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MB, stdout) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
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
r = resource.getrusage(resource.RUSAGE_SELF)
sys.stdout.write(out.getvalue())
print(json.dumps({"rc": rc, "cpu": r.ru_utime + r.ru_stime, "rss_mb": r.ru_maxrss / 1024}), file=sys.stderr)
sys.exit(rc)
"""

REFERENCE_AGREEMENT = r"""
# Cohen's kappa per annotator pair and Fleiss' kappa over the items, with percentile bootstrap intervals over samples
# (1000 replicates), from the label rows: sqlite3, json, pandas, numpy only.
import json, resource, sqlite3, sys
import numpy as np, pandas as pd
path, scheme = sys.argv[1:3]
conn = sqlite3.connect(path)
# every annotator's current label (one row per sample, unit, kind and annotator)
last = {(sid, unit, who, kind): value for sid, unit, who, kind, value in conn.execute(
    "SELECT l.sample_id, l.unit, l.annotator, l.kind, l.value FROM labels l JOIN samples s ON s.id = l.sample_id "
    "WHERE s.scheme = ? AND l.value IS NOT NULL AND l.kind IN ('matches', 'correct', 'rejected', 'error_detected', "
    "'error_corrected') ORDER BY l.sample_id, l.unit, l.kind, l.annotator", (scheme,))}
items = []
if scheme == "violations":
    counts = {}
    for sid, checker, n in conn.execute("SELECT sample_id, checker, COUNT(*) FROM violations GROUP BY 1, 2"):
        counts[(sid, checker)] = n
    for (sid, unit, who, kind), value in last.items():
        if kind != "matches":
            continue
        chosen = {(int(g), int(p)) for g, p in json.loads(value)}
        n_gt, n_pred = counts.get((sid, ""), 0), counts.get((sid, unit), 0)
        for g in range(n_gt):
            for p in range(n_pred):
                items.append((sid, f"{unit}|{g},{p}", who, str(int((g, p) in chosen))))
else:  # rgb: the four decisions, each kind's categories its own (as agreement pools kinds)
    for (sid, unit, who, kind), value in last.items():
        items.append((sid, f"{unit}|{kind}", who, f"{kind}={bool(json.loads(value))}"))
df = pd.DataFrame(items, columns=["sample", "item", "annotator", "category"])
wide = df.pivot_table(index=["sample", "item"], columns="annotator", values="category", aggfunc="first")
cats = sorted(df["category"].unique())
code = {c: i for i, c in enumerate(cats)}
k = len(cats)
samples = wide.index.get_level_values(0)
s_codes, s_names = pd.factorize(samples)
n_s = len(s_names)
who = list(wide.columns)
coded = wide.apply(lambda col: col.map(code)).to_numpy(dtype=float)  # NaN: not labeled
blocks = []
pairs = [(a, b) for i, a in enumerate(who) for b in who[i + 1:]]
for a, b in pairs:
    x, y = coded[:, who.index(a)], coded[:, who.index(b)]
    ok = ~(np.isnan(x) | np.isnan(y))
    cell = (x[ok] * k + y[ok]).astype(np.int64)
    per = np.zeros((n_s, k * k))
    np.add.at(per, (s_codes[ok], cell), 1)
    blocks.append(per)
present = ~np.isnan(coded)
n_u = present.sum(1)
onehot = np.zeros((coded.shape[0], k))
for c in range(k):
    onehot[:, c] = (coded == c).sum(1)
pairable = n_u >= 2
p_u = np.where(pairable, ((onehot * (onehot - 1)).sum(1)) / np.where(pairable, n_u * (n_u - 1), 1), 0)
q_u = np.where(pairable[:, None], onehot / np.where(pairable, n_u, 1)[:, None], 0)
fl = np.zeros((n_s, 2 + k))
np.add.at(fl, s_codes, np.column_stack([p_u, pairable.astype(float), q_u]))
per_sample = np.concatenate(blocks + [fl], axis=1)

def figures(sums):
    out = []
    for i in range(len(pairs)):
        conf = sums[..., i * k * k:(i + 1) * k * k].reshape(*sums.shape[:-1], k, k)
        n = conf.sum((-2, -1))
        po = np.trace(conf, axis1=-2, axis2=-1) / n
        pe = (conf.sum(-1) * conf.sum(-2)).sum(-1) / n ** 2
        out.append((po - pe) / (1 - pe))
    f = sums[..., len(pairs) * k * k:]
    p_bar = f[..., 0] / f[..., 1]
    p_c = f[..., 2:] / f[..., 1:2]
    pe = (p_c ** 2).sum(-1)
    out.append((p_bar - pe) / (1 - pe))
    return np.stack(out, axis=-1)

with np.errstate(invalid="ignore", divide="ignore"):
    est = figures(per_sample.sum(0))
    rng = np.random.default_rng(0)
    reps = []
    for lo in range(0, 1000, 64):
        idx = rng.integers(0, n_s, size=(min(64, 1000 - lo), n_s), dtype=np.int32)
        w = np.stack([np.bincount(r, minlength=n_s) for r in idx]).astype(float)
        reps.append(figures(w @ per_sample))
    reps = np.concatenate(reps)
out = {}
for j, name in enumerate([f"{a}/{b}" for a, b in pairs] + ["fleiss"]):
    v = reps[:, j][np.isfinite(reps[:, j])]
    lo, hi = np.percentile(v, [2.5, 97.5])
    out[name] = [float(est[j]), float(lo), float(hi)]
r = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps(out))
print(json.dumps({"cpu": r.ru_utime + r.ru_stime, "rss_mb": r.ru_maxrss / 1024}), file=sys.stderr)
"""

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
# judge evaluate's estimates from the same rows: per judge its threshold (declared, else 0.5 for a probability, else
# the median score), its decisions, and AUROC (ties one half), balanced accuracy, F1 and Cohen's kappa against the
# 'any' reference (positive when any annotator said positive); sqlite3, json, numpy, pandas only.
import json, resource, sqlite3, sys
import numpy as np, pandas as pd
path = sys.argv[1]
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
pos = {sid: i for i, sid in enumerate(ids)}
y = np.full(len(ids), np.nan)
for sid, value in conn.execute(
        "SELECT l.sample_id, l.value FROM labels l JOIN samples s ON s.id = l.sample_id WHERE s.scheme = 'judge' "
        "AND l.unit = '' AND l.kind = 'label' AND l.value IS NOT NULL"):
    v = float(bool(json.loads(value)))
    i = pos[sid]
    y[i] = v if np.isnan(y[i]) else max(y[i], v)
out = {}
for name, by in scores.items():
    s = np.full(len(ids), np.nan)
    s[list(by)] = list(by.values())
    m = meta[name]
    high = m.get("high_means_positive", True)
    got = s[~np.isnan(s)]
    prob = m["probability"] if "probability" in m else bool(got.min() >= 0 and got.max() <= 1)
    t = m["threshold"] if "threshold" in m else 0.5 if prob else float(np.median(got))
    keep = ~np.isnan(s) & ~np.isnan(y)
    sc, yy = s[keep], y[keep] == 1
    d = sc >= t if high else sc < t
    tp, fp, fn, tn = (float((d & yy).sum()), float((d & ~yy).sum()), float((~d & yy).sum()), float((~d & ~yy).sum()))
    n = tp + fp + fn + tn
    ranks = pd.Series(sc if high else -sc).rank().to_numpy()
    P, N = yy.sum(), (~yy).sum()
    po, pe = (tp + tn) / n, ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / n ** 2
    out[name] = {"auroc": float((ranks[yy].sum() - P * (P + 1) / 2) / (P * N)),
                 "balanced_accuracy": (tp / (tp + fn) + tn / (tn + fp)) / 2,
                 "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0, "kappa": (po - pe) / (1 - pe)}
r = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps(out, sort_keys=True))
print(json.dumps({"cpu": r.ru_utime + r.ru_stime, "rss_mb": r.ru_maxrss / 1024}), file=sys.stderr)
"""

# evaluate's reference per scheme: the same figures where one is written, else the read floor
REFERENCE_EVALUATE = {"rubric": REFERENCE_RUBRIC, "judge": REFERENCE_JUDGE}


def evaluate_figures(out: str, scheme: str) -> Any:
    """What the scheme's evaluate reference prints, taken from the command's JSON."""
    data = json.loads(out)[scheme]
    if scheme == "rubric":
        return {k: v for k, v in data.items() if k != "human_ceiling"}
    return {name: {f: j[f]["estimate"] for f in ("auroc", "balanced_accuracy", "f1", "kappa")}
            for name, j in data["judges"].items()}


def close(a: Any, b: Any, tol: float = 1e-9) -> bool:
    """Equal structure, numbers within tol (the reference computes kappa its own plain way)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], tol) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(a - b) <= tol
    return a == b


def agreement_figures(out: str, scheme: str) -> dict[str, list[float]]:
    """The command's pair kappas and Fleiss' kappa, as the reference prints them (over every item kind)."""
    data = json.loads(out)
    res: dict[str, list[float]] = {}
    for p in data.get("pairs", []):
        if p.get("kappa"):
            k = p["kappa"]
            res[f"{p['a']}/{p['b']}"] = [k["estimate"], k["low"], k["high"]]
    k = data["overall"]["kappa"]
    res["fleiss"] = [k["estimate"], k["low"], k["high"]]
    return res


def same(a: dict[str, list[float]], b: dict[str, list[float]], tol: float = 1e-9, ci_tol: float = 2e-3) -> bool:
    """Estimates equal (to rounding); intervals within ci_tol (the reference may order samples, so replicates,
    another way)."""
    return a.keys() == b.keys() and all(abs(a[k][0] - b[k][0]) <= tol and abs(a[k][1] - b[k][1]) <= ci_tol
                                         and abs(a[k][2] - b[k][2]) <= ci_tol for k in a)


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
        print(f"load average {os.getloadavg()}, {os.cpu_count()} CPUs; {args.samples:,} samples per scheme, "
              f"median of {args.runs}")
        for scheme in schemes:
            path = build(scheme, args.samples, folder)
            for command in commands:
                argv = [PY, "-c", WRAP, command, str(path), "--scheme", scheme, "--json"]
                if command == "evaluate" and scheme == "violations":
                    argv[5:5] = ["--embedding", "jaccard"]
                has_ref = command == "evaluate" or scheme in ("violations", "rgb")
                ref_code = (REFERENCE_EVALUATE.get(scheme, REFERENCE_READ) if command == "evaluate"
                            else REFERENCE_AGREEMENT)
                runs, refs, outs, ref_outs = [], [], set(), set()
                load = os.getloadavg()
                for _ in range(args.runs):
                    wall, cpu, rss, out = run_child(argv)
                    runs.append((wall, cpu, rss))
                    outs.add(out)
                    if has_ref:
                        wall, cpu, rss, out = run_child([PY, "-c", ref_code, str(path), scheme])
                        refs.append((wall, cpu, rss))
                        ref_outs.add(out)
                print(line(f"{command} --scheme {scheme}", runs, refs or None, load))
                print(f"  {'identical output in every run' if len(outs) == 1 else 'OUTPUTS DIFFER between runs'}")
                matched = None  # evaluate's reference is a floor: other figures
                if command == "agreement" and has_ref:
                    got = agreement_figures(next(iter(outs)), scheme)
                    want = json.loads(next(iter(ref_outs)))
                    matched = same(got, want) and len(outs) == 1
                    print(f"  reference figures {'equal' if same(got, want) else 'DIFFER: ' + repr((got, want))} "
                          f"({', '.join(f'{k} {v[0]:.4f}' for k, v in want.items())})")
                if command == "evaluate" and scheme in REFERENCE_EVALUATE:
                    got, want = evaluate_figures(next(iter(outs)), scheme), json.loads(next(iter(ref_outs)))
                    matched = close(got, want) and len(outs) == 1
                    print(f"  reference figures {'equal' if close(got, want) else 'DIFFER: ' + repr((got, want))}")
                ref_name = ("sqlite3 read floor" if command == "evaluate" and scheme not in REFERENCE_EVALUATE
                            else "sqlite3 + numpy" if command == "evaluate" else "sqlite3 + pandas")
                results.append((f"{command} --scheme {scheme}, {args.samples:,} samples"
                                + (f" (ref: {ref_name})" if has_ref else " (no ref)"), runs, refs, matched, load[0]))
        print(f"load average after {os.getloadavg()}")
    for timed, runs, refs, matched, load in results:
        med = [statistics.median(r[i] for r in runs) for i in (0, 1)]
        ref = [statistics.median(r[i] for r in refs) for i in (0, 1)] if refs else [None, None]
        emit(timed, *med, *ref, matched=matched, load=load)


if __name__ == "__main__":
    main()
