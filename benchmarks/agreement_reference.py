"""The plain reference for `concord agreement --scheme S --json` (benchmarks/bench_evaluate_schemes.py runs it in a
child process beside the command): the pooled figures -- Cohen's kappa per annotator pair, Fleiss' kappa and
Krippendorff's (nominal) alpha, each with a 1000-replicate percentile interval over samples -- from the same label
rows, with sqlite3, json, pandas and numpy only.

Each scheme's items are read here from the rows in plain code, as its `label_items` defines them (nothing of Concord
is imported): violations, every (ground truth, prediction) pair of a unit matched or not (the pair counts from SQL);
rgb, the four decisions; judge, the sample label; addm, the verdict and each incident's severity per review; rubric,
each excerpt (stripped, casefolded) and its bucket; trace, each document sentence relevant / utilized or not, each
response sentence unsupported or not and the adherence verdict (sentence keys from the payload's keyed sentences: the
benchmark's records carry them). Kinds keep their categories apart, as the pooled figures do. Span kinds (judge marks)
are not items and are left out, as they are of the pooled kappa.

    python benchmarks/agreement_reference.py PROJECT SCHEME   -> one JSON line {name: [estimate, low, high]}
"""
from __future__ import annotations

import json
import resource
import sqlite3
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

KINDS = {"violations": ("matches",), "rgb": ("correct", "rejected", "error_detected", "error_corrected"),
         "judge": ("label",), "addm": ("verdict", "incidents", "quality"), "rubric": ("buckets",),
         "trace": ("relevant", "utilized", "unsupported", "adherent", "support")}
VERDICT = {"low risk": "Low Risk", "low": "Low Risk", "high risk": "High Risk", "high": "High Risk",
           "critical risk": "Critical Risk", "critical": "Critical Risk"}
BUCKETS = ("tp", "fn", "fp", "tn")  # a repeated excerpt keeps its last bucket in this order


def items(scheme: str, kind: str, unit: str, value: Any, context: Any) -> Iterator[tuple[str, Any]]:
    """(item, category) of one annotator's label of one unit."""
    if scheme == "violations":
        n_gt, n_pred = context.get(("", ""), 0), context.get(("", unit), 0)
        chosen = {(int(g), int(p)) for g, p in value}
        yield from ((f"{g},{p}", int((g, p) in chosen)) for g in range(n_gt) for p in range(n_pred))
    elif scheme in ("rgb", "judge"):
        if kind in KINDS[scheme]:
            yield kind, bool(value) if scheme == "rgb" else value
    elif scheme == "addm":
        if kind == "verdict" and isinstance(value, str):
            v = VERDICT.get(" ".join(value.strip().strip("'\"`").replace("_", " ").split()).casefold())
            if v is not None:
                yield "verdict", v
        elif kind == "incidents":
            seen: dict[str, str] = {}
            for x in value or ():
                seen.setdefault(f"review:{x['review_id']}", str(x["severity"]).casefold())
            yield from seen.items()
    elif scheme == "rubric":
        found: dict[str, str] = {}
        for name in BUCKETS:
            for e in (value or {}).get(name, []):
                found[e.strip().casefold()] = name
        yield from found.items()
    elif scheme == "trace":
        docs, resp = context
        if kind in ("relevant", "utilized", "unsupported"):
            chosen = set(value)
            yield from ((f"{kind}:{k}", k in chosen) for k in (resp if kind == "unsupported" else docs))
        if kind == "adherent":
            yield "adherent", bool(value)
        elif kind == "unsupported":
            yield "adherent", not value


def contexts(conn: sqlite3.Connection, scheme: str) -> dict[str, Any]:
    """What a sample's items depend on besides the label: violations' counts per checker, trace's sentence keys."""
    out: dict[str, Any] = {}
    if scheme == "violations":
        for sid, checker, n in conn.execute("SELECT sample_id, checker, COUNT(*) FROM violations GROUP BY 1, 2"):
            out.setdefault(sid, {})[("", checker)] = n
    elif scheme == "trace":
        for sid, payload in conn.execute("SELECT id, payload FROM samples WHERE scheme = 'trace'"):
            p = json.loads(payload)
            out[sid] = ([k for doc in p["documents_sentences"] for k, _ in doc], [k for k, _ in p["response_sentences"]])
    return out


def main() -> None:
    path, scheme = sys.argv[1:3]
    conn = sqlite3.connect(path)
    kinds = KINDS[scheme]
    context = contexts(conn, scheme)
    rows = []
    for sid, unit, who, kind, value in conn.execute(
            "SELECT l.sample_id, l.unit, l.annotator, l.kind, l.value FROM labels l JOIN samples s ON s.id = l.sample_id "
            f"WHERE s.scheme = ? AND l.value IS NOT NULL AND l.kind IN ({','.join('?' * len(kinds))})",
            (scheme, *kinds)):
        v = json.loads(value)
        for item, category in items(scheme, kind, unit, v, context.get(sid, {})):
            rows.append((sid, f"{kind}|{unit}|{item}", who, f"{kind}={category}", kind))
    df = pd.DataFrame(rows, columns=["sample", "item", "annotator", "category", "kind"])
    wide = df.pivot_table(index=["sample", "item"], columns="annotator", values="category", aggfunc="first")
    cats = sorted(df["category"].unique())
    code = {c: i for i, c in enumerate(cats)}
    k = len(cats)
    # samples in the order the command's pooled table first names them (kinds by name, then samples by id), so the
    # seeded draws pick the same samples and the intervals are the same, not only alike
    order = pd.unique(df.sort_values(["kind", "sample"], kind="stable")["sample"])
    s_names = pd.Index(order)
    s_codes = s_names.get_indexer(wide.index.get_level_values(0))
    n_s = len(s_names)
    who = list(wide.columns)
    coded = wide.apply(lambda col: col.map(code)).to_numpy(dtype=float)  # NaN: not labeled
    blocks = []
    pairs = [(a, b) for i, a in enumerate(who) for b in who[i + 1:]]
    for a, b in pairs:
        x, y = coded[:, who.index(a)], coded[:, who.index(b)]
        ok = ~(np.isnan(x) | np.isnan(y))
        per = np.zeros((n_s, k * k))
        np.add.at(per, (s_codes[ok], (x[ok] * k + y[ok]).astype(np.int64)), 1)
        blocks.append(per)
    n_u = (~np.isnan(coded)).sum(1)
    onehot = np.stack([(coded == c).sum(1) for c in range(k)], axis=1).astype(float)
    pairable = n_u >= 2
    m = np.where(pairable, n_u, 2).astype(float)
    p_u = np.where(pairable, (onehot * (onehot - 1)).sum(1) / (m * (m - 1)), 0)
    q_u = np.where(pairable[:, None], onehot / m[:, None], 0)
    o_u = np.where(pairable[:, None, None], (onehot[:, :, None] * onehot[:, None, :]
                                            - onehot[:, :, None] * np.eye(k)) / (m - 1)[:, None, None], 0)
    fl = np.zeros((n_s, 2 + k + k * k))
    np.add.at(fl, s_codes, np.column_stack([p_u, pairable.astype(float), q_u, o_u.reshape(len(o_u), k * k)]))
    per_sample = np.concatenate(blocks + [fl], axis=1)

    def figures(sums: np.ndarray) -> np.ndarray:
        out = []
        for i in range(len(pairs)):
            conf = sums[..., i * k * k:(i + 1) * k * k].reshape(*sums.shape[:-1], k, k)
            n = conf.sum((-2, -1))
            po = np.trace(conf, axis1=-2, axis2=-1) / n
            pe = (conf.sum(-1) * conf.sum(-2)).sum(-1) / n ** 2
            out.append((po - pe) / (1 - pe))
        f = sums[..., len(pairs) * k * k:]
        p_bar = f[..., 0] / f[..., 1]
        pe = ((f[..., 2:2 + k] / f[..., 1:2]) ** 2).sum(-1)
        out.append((p_bar - pe) / (1 - pe))
        o = f[..., 2 + k:].reshape(*f.shape[:-1], k, k)
        n_c = o.sum(-1)
        n = n_c.sum(-1)
        d_o = o.sum((-2, -1)) - np.trace(o, axis1=-2, axis2=-1)
        d_e = n ** 2 - (n_c ** 2).sum(-1)
        out.append(1 - (n - 1) * d_o / d_e)
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
    for j, name in enumerate([f"{a}/{b}" for a, b in pairs] + ["fleiss", "alpha"]):
        v = reps[:, j][np.isfinite(reps[:, j])]
        lo, hi = np.percentile(v, [2.5, 97.5])
        out[name] = [float(est[j]), float(lo), float(hi)]
    r = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps(out))
    print(json.dumps({"cpu": r.ru_utime + r.ru_stime, "rss_mb": r.ru_maxrss / 1024}), file=sys.stderr)


if __name__ == "__main__":
    main()
