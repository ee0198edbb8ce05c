"""`concord agreement --annotators` and `--over time|version` (issue #29): the options, the figures they add to --json, and
their tables (rich on a terminal, TSV through app/cli_tables.py when piped). Kept apart from
app/commands/agreement.py, which only calls `add_options`, `add_figures` and `print_tables` (lazily)."""
from __future__ import annotations

import argparse
import unicodedata
from typing import Any

from rich.text import Text


def _window(text: str) -> str | int:
    from calibration.agreement_windows import parse_window

    try:
        return parse_window(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_options(p: argparse.ArgumentParser) -> None:
    from calibration.agreement_windows import OVER

    p.add_argument("--annotators", action="store_true",
                   help="per annotator: agreement with the adjudicated or majority label of the others, drift, "
                        "seconds per decision, flags for patterns worth a look")
    p.add_argument("--over", choices=OVER, metavar="time|version",
                   help="agreement per time window, or per guideline version of each scheme (kappa, alpha, span F1 "
                        "with intervals; a drop whose interval lies below the previous one's flagged), e.g. --over version")
    p.add_argument("--window", type=_window, metavar="day|week|N",
                   help="the windows of --over time (given alone, implies it): a calendar day or ISO week (UTC), or N "
                        "labelled units (default: day)")


def add_figures(project: Any, args: argparse.Namespace, out: dict[str, Any]) -> None:
    """The figures `--annotators` and `--over` ask for, under `annotator_quality` and `over_time` of `out`."""
    from app.services.agreement import agreement_over_time, annotator_quality, collect_labels

    over = args.over or ("time" if args.window is not None else None)
    if over == "version" and args.window is not None:
        from app.errors import UsageError

        raise UsageError("--window goes with --over time (a guideline version is its own window)")
    if not (args.annotators or over):
        return
    scope = collect_labels(project, args.scheme) if args.annotators or over == "time" else {}
    if args.annotators:
        out["annotator_quality"] = annotator_quality(project, n_boot=args.bootstrap, seed=args.seed, scope=scope)
    if over == "time":
        out["over_time"] = agreement_over_time(project, window=args.window or "day", iou=args.iou,
                                               n_boot=args.bootstrap, seed=args.seed, scope=scope)
    elif over == "version":  # every label, each under the version it was given under (not --guideline-version's)
        with project.guidelines.every_label():
            out["over_version"] = agreement_over_time(project, iou=args.iou, n_boot=args.bootstrap, seed=args.seed,
                                                      scope=collect_labels(project, args.scheme), over="version")


def adaptive_figures(project: Any, args: argparse.Namespace, out: dict[str, Any]) -> dict[str, Any] | None:
    """After adaptive-overlap rounds: the kappa between each unit's first two annotators weighted to all units
    (post-stratified by the signals the rounds chose on) beside the plain pooled kappa over the units as labeled;
    None for a project without adaptive rounds."""
    from app.services.overlap import post_stratified

    res = post_stratified(project, schemes=args.scheme, n_boot=args.bootstrap, seed=args.seed)
    if res is None:
        return None
    return {"kappa_weighted": res.pop("kappa"), "kappa_as_labeled": out["overall"]["kappa"], **res}


def print_adaptive(res: dict[str, Any] | None, fmt: Any) -> None:
    if res is None:
        return
    print(f"adaptive overlap: the uncertain units got a second annotator more often, so the pooled kappa over the "
          f"units as labeled leans low\n  kappa weighted to all units (first two annotators, post-stratified over "
          f"{res['strata']} strata of the signals the rounds chose on; {res['pairs']} pairs of {res['units']} units): "
          f"{fmt(res['kappa_weighted'])}\n  kappa over the units as labeled (Fleiss, pooled, as above): "
          f"{fmt(res['kappa_as_labeled'])}")
    if res["strata_unobserved"]:
        print(f"  {res['strata_unobserved']} stratum/strata without a pair are left out of the weights (--audit "
              "gives confident units a second label too)")


def cell(value: Any) -> Text:
    """User data (names, categories) as a table cell: never markup, control characters written as escapes."""
    s = str(value)
    return Text("".join(f"\\x{ord(c):02x}" if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in s))


def _num(v: Any, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def print_tables(console: Any, out: dict[str, Any], fmt: Any) -> None:
    from rich.table import Table

    from app.cli_tables import print_table

    people = out.get("annotator_quality")
    if people is not None:
        t = Table(title="annotator quality: against the adjudicated or majority label of the others (95% intervals "
                        "over samples); drift = last half minus first half of their decisions")
        for col in ("annotator", "compared", "agreement", "kappa", "drift", "accepted", "seconds per decision: median (p10, p90)",
                    "seconds from", "flags"):
            t.add_column(col)
        for a in people:
            d, s = a.get("drift"), a["seconds"]
            secs = "-" if s["median"] is None else f"{s['median']:.1f} [{s['p10']:.1f}, {s['p90']:.1f}]"
            accepted = "-" if a["accept_share"] is None else f"{a['accept_share']:.0%} of {a['n_status']}"
            flags = "; ".join(f["detail"] for f in a["flags"]) or "-"
            t.add_row(cell(a["annotator"]), str(a["n_compared"]), fmt(a["agreement"]), fmt(a["kappa"]),
                      "-" if d is None else fmt(d["change"]), accepted, secs, s["source"] or "-", cell(flags))
        print_table(console, t)
    over = out.get("over_time") or out.get("over_version")
    if over is not None:
        what = f"{over['window']} window" if over["over"] == "time" else "guideline version"
        t = Table(title=f"agreement per {what} (95% intervals over samples; DROP: the interval lies below the "
                        + ("previous window's)" if over["over"] == "time" else "same scheme's previous version's)"))
        for col in ("window", "first", "last", "items", "Fleiss' kappa", "Krippendorff's alpha", "span F1", "drop"):
            t.add_column(col)
        for w in over["windows"]:
            t.add_row(w["window"], w["first"], w["last"], "-" if w["n_items"] is None else str(w["n_items"]),
                      fmt(w["kappa"]), fmt(w["alpha"]), fmt(w["span_f1"]),
                      "DROP: " + ", ".join(w["drops"]) if w["drops"] else "")
        print_table(console, t)
        if not over["windows"]:
            print("no unit labelled by two or more annotators yet: no window to show")
