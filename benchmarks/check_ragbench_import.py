"""Hand-run acceptance check on the real RAGBench release, as a user would: `concord import` every
<subset>/<split>.parquet into a new temporary project (no conversion), evaluate the trace scheme through its
`evaluate` hook, and compare each subset's judge AUROC/RMSE with the same figures computed from the files with the
dataset's own columns (relevance_score, utilization_score, adherence_score; as check_ragbench.py does).

    python benchmarks/check_ragbench_import.py /path/to/ragbench [--split test]

Exit 0 when every figure is equal to 1e-12.
"""
from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.store import Project  # noqa: E402
from calibration.schemes.base import get  # noqa: E402
from calibration.schemes.trace import given_scores, judge_report, parse_ragbench_row  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("--split", default="test")
    args = ap.parse_args(argv)
    files = sorted(args.data_dir.glob(f"*/{args.split}.parquet"))
    concord = str(Path(sys.executable).with_name("concord"))
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        project = f"{tmp}/ragbench.concord"
        subprocess.run([concord, "init", project], check=True, capture_output=True)
        for f in files:
            r = subprocess.run([concord, "import", project, str(f)], capture_output=True, text=True)
            print(r.stdout.strip().splitlines()[0] if r.returncode == 0 else r.stderr[-2000:])
            if r.returncode:
                return 1
        with Project.open(project) as p:
            records = p.samples.records("trace")
        report = get("trace").evaluate(records, {}, {"n_boot": 0, "variants": ["ragbench"]})
    mine = report.data["judges"]["ragbench"]
    print(f"{len(records)} samples imported; subset judge figure: project (evaluate) vs files (dataset columns)")
    for f in files:
        subset = f.parent.name
        recs = [p.record for p in (parse_ragbench_row(r) for r in pd.read_parquet(f).to_dict("records")) if p.ok]
        given = pd.DataFrame([given_scores(r.meta, r.labels.adherence) for r in recs], index=[r.id for r in recs])
        theirs = judge_report(recs, given)
        for judge, row in theirs.iterrows():
            for col in ("hallucination_auroc", "relevance_rmse", "utilization_rmse"):
                a = mine.get(subset, {}).get(judge, {}).get(col, (math.nan,))[0]
                b = float(row[col])
                same = (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12
                bad += not same
                if not math.isnan(b):
                    print(f"  {subset:11s} {judge:8s} {col:20s} {a:.6f} {b:.6f} {'ok' if same else 'DIFFERENT'}")
    print("all equal" if not bad else f"{bad} figures differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
