"""The addm scheme's evaluation hook: `concord evaluate --scheme addm` as a `base.Report`.

Per policy (options `presets`/`preset`, names of PRESETS or policy dicts as `Policy.to_dict()` writes them;
default addm_v2): each method's three scores with bootstrap intervals, the process component table (per method
and overall, like ADDM's console output) and a ranking. Where humans labeled a business (`verdict` and/or
`incidents` at unit ''), the same figures again on those businesses with the human labels as the truth, and the
agreement of each method's verdict -- and of the policy's verdict from the human-validated incidents -- with the
human verdict (quadratic-weighted kappa and accuracy, with intervals from the same bootstrap draw).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from calibration.agreement import percentile_interval, resample_counts
from calibration.blas import one_blas_thread
from calibration.schemes.addm.calibrate import N_CLASSES, quadratic_kappa_from_confusion
from calibration.schemes.addm.evaluation import COMPONENT_LABELS as _LABELS
from calibration.schemes.addm.evaluation import DEFAULT_BOOT, evaluate
from calibration.schemes.addm.metrics import policy_verdict
from calibration.schemes.addm.policy import COMPONENTS, PRESETS, VERDICTS, Policy, verdict_ordinal
from calibration.schemes.addm.records import AddmSample
from calibration.schemes.addm.search import human_incidents
from calibration.schemes.base import Report, Table

SCHEME = "addm"
POLICY_VERDICT = "policy(human incidents)"  # the agreement row of the policy applied to the human-validated incidents


def policies(options: Mapping[str, Any]) -> list[Policy]:
    """The policies `options` asks for: `presets` (list) or `preset`, each a preset name or a policy dict, then
    `params` (stored parameters, `concord evaluate --use`); addm_v2 when none is given."""
    wanted = options.get("presets") or ([options["preset"]] if options.get("preset") else [])
    if isinstance(wanted, (str, Mapping)):
        wanted = [wanted]
    params = options.get("params") or []
    wanted = [*wanted, *([params] if isinstance(params, Mapping) else params)] or ["addm_v2"]
    out = []
    for p in wanted:
        if isinstance(p, Policy):
            out.append(p)
        elif isinstance(p, Mapping):
            out.append(Policy.from_dict(p))
        elif p in PRESETS:
            out.append(PRESETS[p])
        else:
            raise ValueError(f"preset: unknown addm policy {p!r}; known: {', '.join(PRESETS)}")
    return out


def human_truth(records: Sequence[AddmSample], labels: Mapping[tuple[str, str], Mapping[str, Any]]) -> list[AddmSample]:
    """The businesses a human labeled, with the human verdict and/or incidents replacing the ground truth's."""
    out = []
    for r in records:
        lab = labels.get((r.id, ""), {})
        v, inc = verdict_ordinal(lab.get("verdict")), lab.get("incidents")
        if v is None and inc is None:
            continue
        # the constructor, not dataclasses.replace (the same sample; replace's generic path was a tenth of evaluate)
        out.append(AddmSample(r.id, r.reviews, r.verdict if v is None else v,
                              r.incidents if inc is None else human_incidents(inc), r.methods, r.split, r.meta))
    return out


def _pct(v: float | None, scale: float = 1.0) -> str:
    return "N/A" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v * scale:.1f}%"


def _ci(pair: Sequence[float | None], scale: float = 1.0) -> str:
    lo, hi = pair
    return "" if lo is None or hi is None else f"[{lo * scale:.1f}, {hi * scale:.1f}]"


def score_tables(res: dict[str, Any], suffix: str) -> list[Table]:
    """Unified scores (with intervals), process components and the ranking of one `evaluation.evaluate` result."""
    ranks = {r["method"]: r["rank"] for r in res["ranking"]}
    rows = []
    for name, r in [*res["methods"].items(), *([("overall", res["overall"])] if res["overall"] else [])]:
        rows.append((name, ranks.get(name, ""), _pct(r["auprc"], 100), _ci(r["auprc_ci"], 100),
                     _pct(r["process_score"]), _ci(r["process_ci"]), _pct(r["consistency_score"]),
                     _ci(r["consistency_ci"]), r.get("n_samples", res["n_businesses"])))
    ci = f"{round(100 * res['bootstrap']['ci'])}% CI"
    unified = Table(f"Unified scores {suffix}", ("method", "rank", "AUPRC", f"AUPRC {ci}", "Process", f"Process {ci}",
                                                 "Consistency", f"Consistency {ci}", "businesses"), tuple(rows))
    names = [*res["methods"], *(["overall"] if res["overall"] else [])]
    weights = res["policy"]["process_weights"]
    comp_rows = []
    for c in COMPONENTS:
        vals = [(res["overall"] if n == "overall" else res["methods"][n])["process_components"][c] for n in names]
        comp_rows.append((_LABELS[c], f"{round(100 * weights[c])}%", *[_pct(v, 100) for v in vals]))
    comps = Table(f"Process components {suffix}", ("component", "weight", *names), tuple(comp_rows))
    ranking = Table(f"Ranking {suffix}", ("rank", "method", "mean of the three", "AUPRC", "Process", "Consistency"),
                    tuple((r["rank"], r["method"], f"{r['mean']:.1f}", _pct(r["auprc"], 100), _pct(r["process_score"]),
                           _pct(r["consistency_score"])) for r in res["ranking"]))
    return [unified, comps, ranking]


class VerdictDraws:
    """Verdict agreement of the human-labeled businesses: per method (and the policy on the human incidents) n,
    accuracy and quadratic kappa vs the human verdict, with intervals from draws of those businesses: fed by the
    evaluation's own draws when they are the same (`add`, evaluation.evaluate's `on_draws`), else drawn in `finish`."""

    CHUNK = 64  # resample_counts' default: the draws `finish` makes itself

    def __init__(self, truth: Sequence[AddmSample], policy: Policy) -> None:
        n = self.n = len(truth)
        rows: dict[str, np.ndarray] = {}  # name -> (n,) predicted ordinal, -1 where it has none
        for m in sorted({m for s in truth for m in s.methods}):
            rows[m] = np.array([-1 if (r := s.methods.get(m)) is None or r.error or r.verdict is None else r.verdict
                                for s in truth], dtype=np.int64)
        rows[POLICY_VERDICT] = np.array([policy_verdict(s.incidents, policy) for s in truth], dtype=np.int64)
        human = np.array([s.verdict for s in truth], dtype=np.int64)
        self.out: dict[str, Any] = {}
        self.onehots: dict[str, np.ndarray] = {}
        for name, pred in rows.items():
            keep = pred >= 0
            onehot = np.zeros((n, N_CLASSES * N_CLASSES))
            onehot[np.flatnonzero(keep), human[keep] * N_CLASSES + pred[keep]] = 1.0
            conf = onehot.sum(axis=0).reshape(N_CLASSES, N_CLASSES)
            kappa = float(quadratic_kappa_from_confusion(conf))
            acc = float(np.trace(conf) / conf.sum()) if conf.sum() else math.nan
            self.out[name] = {"n": int(keep.sum()), "accuracy": None if math.isnan(acc) else acc,
                              "weighted_kappa": None if math.isnan(kappa) else kappa,
                              "accuracy_ci": [None, None], "weighted_kappa_ci": [None, None]}
            self.onehots[name] = onehot
        # one pass over the draws, a chunk of replicates at a time for every method: the list of every replicate's
        # weights this kept was 1000 x n floats (0.8 GB at 100k businesses)
        self.parts: dict[str, list[np.ndarray]] = {name: [] for name in self.onehots}
        self.fed = 0

    def add(self, w: np.ndarray) -> None:
        """One chunk of draw counts (reps, n) of the businesses."""
        for name, onehot in self.onehots.items():
            self.parts[name].append(w @ onehot)
        self.fed += w.shape[0]

    def finish(self, n_boot: int, seed: int, ci: float) -> dict[str, Any]:
        """The figures with their intervals from `n_boot` replicates (drawn here unless `add` was given them all)."""
        if not (n_boot > 0 and self.n):
            return self.out
        if self.fed != n_boot:
            self.parts, self.fed = {name: [] for name in self.onehots}, 0
            for w in resample_counts(self.n, n_boot, seed, chunk=self.CHUNK):
                self.add(w)
        for name, res in self.out.items():
            confs = np.concatenate(self.parts.pop(name)).reshape(-1, N_CLASSES, N_CLASSES)
            tot = confs.sum(axis=(1, 2))
            accs = np.divide(np.trace(confs, axis1=1, axis2=2), tot, out=np.full(tot.shape, np.nan), where=tot > 0)
            for key, vals in (("accuracy_ci", accs), ("weighted_kappa_ci", quadratic_kappa_from_confusion(confs))):
                lo, hi = percentile_interval(vals, 1.0 - ci)
                res[key] = [None if math.isnan(lo) else lo, None if math.isnan(hi) else hi]
        return self.out


def verdict_agreement(truth: Sequence[AddmSample], policy: Policy, n_boot: int, seed: int, ci: float) -> dict[str, Any]:
    """Per method (and the policy on the human incidents): n, accuracy and quadratic kappa vs the human verdict."""
    return VerdictDraws(truth, policy).finish(n_boot, seed, ci)


def _fmt(v: float | None) -> str:
    return "N/A" if v is None else f"{v:.3f}"


def agreement_table(agree: dict[str, Any], suffix: str) -> Table:
    rows = tuple((name, a["n"], _fmt(a["weighted_kappa"]), _plain_ci(a["weighted_kappa_ci"]), _fmt(a["accuracy"]),
                  _plain_ci(a["accuracy_ci"])) for name, a in agree.items())
    return Table(f"Verdicts vs the human verdicts {suffix}", ("method", "businesses", "weighted kappa", "kappa CI",
                                                                "accuracy", "accuracy CI"), rows)


def _plain_ci(pair: Sequence[float | None]) -> str:
    lo, hi = pair
    return "" if lo is None or hi is None else f"[{lo:.3f}, {hi:.3f}]"


def report(records: Sequence[AddmSample], labels: Mapping[tuple[str, str], Mapping[str, Any]],
           options: Mapping[str, Any]) -> Report:
    n_boot = int(options.get("n_boot", options.get("bootstrap", DEFAULT_BOOT)))
    seed = int(options.get("seed", 0))
    ci = float(options.get("ci", 0.95))
    truth = human_truth(records, labels)
    tables: list[Table] = []
    data: dict[str, Any] = {"n_businesses": len(records), "n_human": len(truth), "policies": {}, "human": {},
                            "agreement": {}}
    notes = []
    with one_blas_thread():  # the bootstraps' small products (calibration/blas.py)
        for policy in policies(options):
            res = evaluate(records, policy, n_boot=n_boot, seed=seed, ci=ci)
            data["policies"][policy.name] = res
            tables += score_tables(res, f"({policy.name}, record ground truth, {len(records)} businesses)")
            if truth:
                draws = VerdictDraws(truth, policy)  # fed the evaluation's draws of the same businesses
                hres = evaluate(truth, policy, n_boot=n_boot, seed=seed, ci=ci, on_draws=(draws.CHUNK, draws.add))
                agree = draws.finish(n_boot, seed, ci)
                data["human"][policy.name] = hres
                data["agreement"][policy.name] = agree
                suffix = f"({policy.name}, human labels, {len(truth)} businesses)"
                tables += score_tables(hres, suffix)
                tables.append(agreement_table(agree, suffix))
    if truth:
        notes.append(f"human labels on {len(truth)} of {len(records)} businesses: their verdicts and validated "
                     "incidents replace the ground truth in the 'human labels' tables")
    else:
        notes.append("no human verdicts or incidents yet: figures are against the records' ground truth only")
    notes.append(f"intervals: percentile bootstrap over businesses, {n_boot} replicates, seed {seed}, paired across "
                 "methods; AUPRC is ordinal (mean of >=High and >=Critical average precision)")
    notes.append(f"verdicts: {', '.join(VERDICTS)}; '{POLICY_VERDICT}' is the policy's verdict from the "
                 "human-validated incidents (what `concord calibrate --scheme addm` tunes)")
    return Report(SCHEME, tuple(tables), data, tuple(notes))
