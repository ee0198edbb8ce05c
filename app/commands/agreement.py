"""`concord agreement PROJECT [--scheme S] [--iou T] [--json]`: how far the annotators agree with each other.

Per scheme and label kind: Cohen's kappa per annotator pair, Fleiss' kappa and Krippendorff's alpha (over the items
the annotators labeled: sentences, buckets, decisions); for span labels (a curated ground truth) pairwise precision/recall/F1 with greedy one-to-one
matching on character IoU > T and Krippendorff's unitizing alpha. Each with a 95% bootstrap interval over samples.
Then the annotators: labels, units, agreement with the others, seconds per unit (from the app's work log).
--annotators adds each annotator's agreement with the adjudicated or majority label of the others, their drift,
seconds per decision and flags; --over time [--window day|week|N] (--window alone implies it) adds kappa, alpha
and span F1 per window, a drop whose interval lies below the previous window's flagged; --over version the same per
guideline version of each scheme (each label under the version it was given under). --guideline-version N: only
the labels valid under that version (default: the current one; `concord guideline`).
After `assign-work --overlap adaptive` rounds, the kappa between each unit's first two annotators weighted to all
units (post-stratified by the signals the rounds chose on) is printed beside the pooled kappa over the units as
labeled, which leans low because the uncertain units got their second annotator more often.
--json keys: schema_version, overall.kappa, overall.alpha, overall.span_f1 (each {estimate, low, high, n_valid}
or null), schemes, pairs, annotators, guideline, adaptive_overlap (docs/json.md).
"""
from __future__ import annotations

import argparse

from app.cli_options import add_guideline_version, non_negative_int, scheme_name
from app.figures import fmt_estimate as fmt
from app.json_outputs import dumps
from app.names import terminal_safe

EPILOG = """examples:
  concord agreement brand.concord
  concord agreement brand.concord --annotators --over time --window week
  concord agreement brand.concord --over version --guideline-version 2
  concord agreement brand.concord --scheme violations --iou 0.5 --json | jq .overall.span_f1.estimate
"""


def _iou(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {value}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("agreement", help="inter-annotator agreement: kappa, alpha, span F1, per annotator",
                              description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--scheme", action="append", metavar="NAME", type=scheme_name, help="only this scheme (repeatable)")
    p.add_argument("--iou", type=_iou, default=0.0, metavar="T", help="spans match when IoU > T (default 0)")
    p.add_argument("--bootstrap", type=non_negative_int, default=1000, metavar="N", help="bootstrap replicates (0: none)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--json", action="store_true", help="print every figure as JSON")
    from app.commands.agreement_quality import add_options  # --annotators, --over, --window (issue #29)

    add_options(p)
    add_guideline_version(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from app.cli_tables import print_table
    from app.services.agreement import agreement
    from app.services.guidelines import notes, valid_labels
    from app.store import Project

    with Project.open(args.project) as project, valid_labels(project, args.scheme, args.guideline_version) as guide:
        out = agreement(project, schemes=args.scheme, iou=args.iou, n_boot=args.bootstrap, seed=args.seed,
                        concurrent=True)  # the labels read ahead in a forked worker where one pays off
        from app.commands.agreement_quality import add_figures, adaptive_figures, print_adaptive, print_tables

        out["adaptive_overlap"] = adaptive_figures(project, args, out)
        add_figures(project, args, out)
    out["guideline"] = guide
    if args.json:
        print(dumps("agreement", out, indent=2, default=str))
        return 0
    console = Console()
    for line in notes(guide):
        console.print(f"note: {terminal_safe(line)}", markup=False, highlight=False, soft_wrap=True)
    if not out["schemes"]:
        print("no labels by two or more annotators to compare")
        print_tables(console, out, fmt)
        return 0
    t = Table(title=f"agreement per scheme and label kind (95% bootstrap intervals over samples, {args.bootstrap} draws)")
    for col in ("scheme", "kind", "items/spans", "Fleiss' kappa", "Krippendorff's alpha", f"span F1 (IoU > {args.iou:g})",
                "unitizing alpha"):
        t.add_column(col)
    for scheme, kinds in out["schemes"].items():
        for kind, r in kinds.items():
            ov = r.get("overall", {})
            size = r.get("n_items", r.get("n_spans", r.get("n_labels", 0)))
            if "note" in r:  # one annotator only: nothing to compare
                t.add_row(scheme, kind, str(size), r["note"], "", "", "")
                continue
            t.add_row(scheme, kind, str(size), fmt(ov.get("kappa")), fmt(ov.get("alpha")), fmt(ov.get("span_f1")),
                      fmt(ov.get("u_alpha")))
    ov = out["overall"]
    t.add_row("all", "pooled", "", fmt(ov.get("kappa")), fmt(ov.get("alpha")), fmt(ov.get("span_f1")), fmt(ov.get("u_alpha")))
    print_table(console, t)
    print_adaptive(out["adaptive_overlap"], fmt)
    t = Table(title="annotator pairs (pooled over kinds)")
    for col in ("a", "b", "items", "Cohen's kappa", "span P", "span R", "span F1"):
        t.add_column(col)
    for p in out["pairs"]:
        t.add_row(Text(terminal_safe(p["a"])), Text(terminal_safe(p["b"])), str(p.get("n_items", "-")), fmt(p.get("kappa")), fmt(p.get("span_precision")),
                  fmt(p.get("span_recall")), fmt(p.get("span_f1")))
    print_table(console, t)
    t = Table(title="annotators")
    for col in ("annotator", "labels", "units", "mean kappa with others", "span F1 with others", "seconds per unit"):
        t.add_column(col)
    for a in out["annotators"]:
        t.add_row(Text(terminal_safe(a["annotator"])), str(a["n_labels"]), str(a["n_units"]), fmt(a.get("mean_kappa")),
                  fmt(a.get("span_f1_with_others")), fmt(a.get("seconds_per_unit")))
    print_table(console, t)
    print_tables(console, out, fmt)
    return 0
