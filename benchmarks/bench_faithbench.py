"""Hand-run: FaithBench's eight detectors against its annotators, through the judge scheme and directly from the
files with scikit-learn (the two must match), plus the human-human kappa on the summary label.

    python benchmarks/bench_faithbench.py [DIR] [--bootstrap 1000] [--seed 0]

DIR holds batch_*.json as released (CC BY-NC-SA 4.0; read only, never copied into the repository); default
../shared/data/faithbench relative to the repository. Reference: a summary is hallucinated when any annotator who
read its batch marked a span labeled Unwanted*. Detector scores are consistency (1 = consistent), so AUROC for
detecting hallucinations is roc_auc_score(hallucinated, 1 - score), samples without a score left out.
The direct interval draws the same samples (calibration.agreement.resample_index_chunks, same seed) and calls
roc_auc_score on each replicate.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.metrics import cohen_kappa_score, roc_auc_score

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchresult import emit, skip  # noqa: E402
from calibration.agreement import percentile_interval, resample_index_chunks  # noqa: E402
from calibration.guarantee import score_band  # noqa: E402
from calibration.schemes.judge import faithbench  # noqa: E402
from calibration.schemes.judge.scheme import SCHEME  # noqa: E402


def direct(directory: Path) -> tuple[list[str], np.ndarray, dict[str, np.ndarray], dict[str, dict[str, int]]]:
    """From the files with plain loops: sample ids, the any-annotator label, detector scores, annotator labels."""
    ids, y, scores = [], [], defaultdict(list)
    per: dict[str, dict[str, int]] = defaultdict(dict)
    for path in sorted(directory.glob("batch_*.json"), key=lambda p: int(p.stem.split("_")[1])):
        batch = path.stem.split("_")[1]
        samples = json.loads(path.read_text(encoding="utf-8"))["samples"]
        readers = {a["annotator_name"] for s in samples for a in s["annotations"]}
        for s in samples:
            sid = f"faithbench-b{batch}-{s['sample_id']}"
            ids.append(sid)
            bad = {a["annotator_name"] for a in s["annotations"] if any(x.startswith("Unwanted") for x in a["label"])}
            y.append(int(bool(bad)))
            for name in readers:
                per[name][sid] = int(name in bad)
            for d in faithbench.DETECTORS:
                v = s["metadata"].get(d)
                scores[d].append(np.nan if v is None else float(v))
    return ids, np.array(y), {d: np.array(v) for d, v in scores.items()}, per


SIDES = ("both", "positive", "negative")


def guaranteed(y: np.ndarray, scores: dict[str, np.ndarray], seed: int, delta: float = 0.05,
               splits: int = 200) -> None:
    """Each detector's guaranteed band (threshold 0.5; two-sided, or only its hallucination / only its consistent
    calls, Bonferroni over the three) on all summaries at targets 0.9 and 0.7, and over `splits` random halves
    (calibration / test): how often the test agreement on the decided summaries falls below the target, and the
    mean coverage."""
    rng = np.random.default_rng(seed)
    print(f"\nguaranteed agreement (delta {delta}, threshold 0.5, sides {'/'.join(SIDES)}; {splits} random "
          "calibration/test halves):")
    print(f"  {'detector':18} {'target':>6} {'coverage (all)':>15} {'side':>9} {'test below target':>18} "
          f"{'mean test coverage':>19}")
    for d in faithbench.DETECTORS:
        ok = ~np.isnan(scores[d])
        s, h = scores[d][ok], y[ok]
        for target in (0.9, 0.7):
            whole = score_band(s, h, threshold=0.5, high_means_positive=False, target=target, delta=delta, sides=SIDES)
            below, cover = 0, []
            for _ in range(splits):
                perm = rng.permutation(s.size)
                cal, test = perm[: s.size // 2], perm[s.size // 2:]
                band = score_band(s[cal], h[cal], threshold=0.5, high_means_positive=False, target=target, delta=delta,
                                  sides=SIDES)
                decided = test[band.decides_scores(s[test])]
                cover.append(decided.size / test.size)
                if decided.size:
                    below += np.mean((s[decided] < 0.5) == (h[decided] == 1)) < target
            side = whole.side if whole.certified else "-"
            print(f"  {d:18} {target:6.1f} {whole.coverage:15.3f} {side:>9} {below / splits:18.3f} "
                  f"{np.mean(cover):19.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path, nargs="?", default=ROOT.parent / "shared" / "data" / "faithbench")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not args.directory.is_dir():
        print(f"no FaithBench data at {args.directory}: skipped")
        skip("no data")
        return
    t0, c0 = time.perf_counter(), time.process_time()
    raw, lines = faithbench.load(args.directory)
    records = [SCHEME.parse(r).record for r in raw]
    ann = {a: {(ln["sample"], ""): {"label": ln["label"]} for ln in ls} for a, ls in lines.items()}
    rep = SCHEME.evaluate(records, {}, {"annotator_labels": ann, "n_boot": args.bootstrap, "seed": args.seed})
    t_scheme, c_scheme = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    ids, y, scores, per = direct(args.directory)
    assert ids == [r.id for r in records], "sample order differs"
    draws = [idx for chunk in resample_index_chunks(len(ids), args.bootstrap, args.seed) for idx in chunk]
    print(f"FaithBench: {len(ids)} summaries, {len(per)} annotators, {int(y.sum())} hallucinated (any annotator, "
          f"Unwanted*); {args.bootstrap} bootstrap replicates over summaries, seed {args.seed}")
    print(f"{'detector':18} {'n':>4}  {'AUROC (scheme) [95% CI]':28} {'AUROC (sklearn) [95% CI]':28} match")
    all_match, t_ref, c_ref = True, 0.0, 0.0
    for d in faithbench.DETECTORS:
        s = scores[d]
        ok = ~np.isnan(s)
        est = roc_auc_score(y[ok], 1 - s[ok])
        reps = []
        for idx in draws:
            yy, ss = y[idx], s[idx]
            keep = ~np.isnan(ss)
            reps.append(roc_auc_score(yy[keep], 1 - ss[keep]) if 0 < yy[keep].sum() < keep.sum() else np.nan)
        lo, hi = percentile_interval(np.array(reps))
        t_ref, c_ref = time.perf_counter() - t0, time.process_time() - c0  # files read + every detector's AUROCs
        f = rep.data["judges"][d]["auroc"]
        match = all(math.isclose(a, b, abs_tol=1e-9) for a, b in ((f["estimate"], est), (f["low"], lo), (f["high"], hi)))
        all_match &= match
        print(f"{d:18} {int(ok.sum()):4}  {f['estimate']:.4f} [{f['low']:.4f}, {f['high']:.4f}]"
              f"{'':7} {est:.4f} [{lo:.4f}, {hi:.4f}]{'':7} {'yes' if match else 'NO'}")
    c = rep.data["ceiling"]
    fk = c["fleiss_kappa"]
    print(f"\nhuman-human on the summary label (hallucinated or not), {c['annotators']} annotators, "
          f"{c['samples']} summaries:")
    print(f"  Fleiss' kappa {fk['estimate']:.3f} [{fk['low']:.3f}, {fk['high']:.3f}], Krippendorff's alpha "
          f"{c['alpha']['estimate']:.3f} [{c['alpha']['low']:.3f}, {c['alpha']['high']:.3f}], mean pairwise "
          f"Cohen's kappa {c['mean_pair_kappa']:.3f}")
    print("  pairs (Cohen's kappa through the scheme | sklearn from the files):")
    for p in c["pairs"]:
        common = sorted(set(per[p["a"]]) & set(per[p["b"]]))
        direct_k = cohen_kappa_score([per[p["a"]][s] for s in common], [per[p["b"]][s] for s in common])
        k = p["kappa"]
        print(f"    {p['a']:>11} ~ {p['b']:<11} n={p['n']:3}  {k['estimate']:.3f} [{k['low']:.3f}, {k['high']:.3f}]"
              f" | {direct_k:.3f}")
    print("\nmean Cohen's kappa of each detector (at 0.5) against each annotator (the ceiling is the humans' "
          f"{c['mean_pair_kappa']:.3f}):")
    print("  " + ", ".join(f"{d} {k:.3f}" for d, k in c["judges"].items()))
    guaranteed(y, scores, args.seed)
    print(f"\nscheme evaluate: {t_scheme:.1f} s; all AUROCs and intervals match: {'yes' if all_match else 'NO'}")
    emit(f"judge evaluate, FaithBench, {args.bootstrap} boot (ref: files + sklearn AUROCs)", t_scheme, c_scheme, t_ref,
         c_ref, all_match)
    if not all_match:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
