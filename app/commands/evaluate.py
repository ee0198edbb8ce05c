"""`concord evaluate PROJECT [--scheme S ...]`: each scheme's evaluation report (registry order): for violations
the checker leaderboard (std_match and ha_match side by side by default), for rubric how the LLM's buckets compare
with the humans', and so on for every scheme with an `evaluate` hook. Tables on a terminal, TSV when piped;
--json prints {"schema_version", scheme: report data} (docs/json.md)."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from app.cli_options import add_guideline_version, embedding_spec, non_negative_int, scheme_name
from app.figures import empty_table, fmt_cell
from app.json_outputs import dumps

EPILOG = """examples:
  concord evaluate demo/demo.concord
  concord evaluate demo/demo.concord --scheme violations --preset ha_match --matching optimal --json
  concord evaluate demo/demo.concord --config resources/configs/ha_match.toml
  concord evaluate demo/demo.concord --use calibrated@1.0.0
  concord evaluate demo/demo.concord --scheme trace --reference human
  concord evaluate brand.concord --scheme violations --guideline-version 2
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("evaluate", help="evaluate every scheme of a project (checker leaderboard, rubric agreement, ...)",
                              description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--scheme", action="append", metavar="NAME", type=scheme_name,
                   help="only this scheme (repeat for several; default: every scheme with samples in the project)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--preset", metavar="NAME", help="one of a scheme's presets instead of its defaults (e.g. ha_match)")
    src.add_argument("--config", metavar="FILE", help="a parameter file (violations: a match config TOML file)")
    src.add_argument("--use", metavar="NAME[@VERSION]", help="parameters stored in the project (e.g. from calibrate --apply)")
    p.add_argument("--matching", choices=["greedy", "optimal"], default=None, help="violations: override the config's matching")
    p.add_argument("--embedding", type=embedding_spec, default=None, metavar="SPEC",
                   help="violations: override the rule/explanation similarity: sentence-transformers:<name|path>, openai:<model>, jaccard")
    p.add_argument("--bootstrap", type=non_negative_int, default=1000, metavar="N", help="bootstrap replicates for the 95%% intervals")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--reference", metavar="NAME", default=None,
                   help="the reference labels for judge figures where a scheme has a choice (trace: annotator or "
                   "human; default: the scheme's own); schemes without a choice ignore it")
    p.add_argument("--json", action="store_true", help="print JSON {scheme: report data} instead of tables")
    add_guideline_version(p)
    p.set_defaults(func=run)


def _cell(value: Any) -> Any:
    from rich.text import Text

    return Text(fmt_cell(value))  # data (checker names) is text, never rich markup


def print_report(report: Any, console: Any) -> None:
    from rich.table import Table

    from app.cli_tables import print_table

    for t in report.tables:
        if empty_table(t.rows):
            continue
        table = Table(title=t.title)
        for i, col in enumerate(t.columns):
            table.add_column(col, justify="left" if i == 0 else "right", no_wrap=i == 0)
        for row in t.rows:
            table.add_row(*(_cell(c) for c in row))
        print_table(console, table)
    for note in report.notes:
        console.print(note, markup=False, highlight=False, soft_wrap=True)  # piped: one line, never cut at 80


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from app.cli_progress import rich_progress
    from app.errors import UsageError
    from app.files import regular_file
    from app.services.guidelines import notes, valid_labels
    from app.services.ceiling import evaluate_with_ceilings
    from app.services.missing import labels_missing, no_samples
    from app.services.schemes import present
    from app.store import Project

    if args.config:
        regular_file(args.config, "config file")  # a FIFO would block the reader
    options = {"presets": [args.preset] if args.preset else None, "config_file": args.config,
               "use": [args.use] if args.use else None, "matching": args.matching, "embedding": args.embedding,
               "n_boot": args.bootstrap, "seed": args.seed, "reference": args.reference}
    with Project.open(args.project) as project:
        schemes = present(project, args.scheme)
        if not schemes:
            raise no_samples("evaluate", args.project)
        # the labels those valid under the guideline version asked for (default: the current one), issue #29
        with valid_labels(project, [s.name for s in schemes], args.guideline_version) as guide:
            with rich_progress(enabled=sys.stderr.isatty()) as bar:
                results, ceilings = evaluate_with_ceilings(project, schemes, options, bar, concurrent=True)
    for r in results:
        if r.report is None:
            print(f"note: {r.note}", file=sys.stderr)
    if all(r.report is None for r in results):  # the one rule: nothing to work on is exit 2 with a sentence
        raise UsageError(f"nothing to evaluate in {args.project} yet (see the notes above)")
    if args.json:
        out = {r.scheme.name: r.report.data for r in results if r.report is not None}
        for name, c in ceilings.items():  # issue #15: the human ceiling beside the metric
            out[name] = {**out[name], "human_ceiling": c}
        for name, g in guide.items():  # issue #29: the guideline version whose labels it used
            if name in out:
                out[name] = {**out[name], "guideline": g}
        print(dumps("evaluate", out, indent=2, sort_keys=True, default=float))
        return 0
    console = Console()
    for line in notes(guide):
        console.print(f"note: {line}", markup=False, highlight=False, soft_wrap=True)
    for r in results:
        if r.report is not None:
            if len(results) > 1:
                console.print(f"[bold]{r.scheme.title}[/]", highlight=False)
            print_report(r.report, console)
            if not r.human_labels:
                console.print(labels_missing(r.scheme, args.project), markup=False, highlight=False, soft_wrap=True)
    print_ceilings(ceilings, console)
    return 0


def print_ceilings(ceilings: dict[str, Any], console: Any) -> None:
    from rich.table import Table

    from app.cli_tables import print_table
    from app.services.ceiling import ceiling_rows

    for name, c in ceilings.items():
        t = Table(title=f"{name}: the human ceiling (units labeled by 2+ people; 95% bootstrap intervals)")
        for col in ("agreement", "estimate [95% CI]", "on"):
            t.add_column(col)
        for row in ceiling_rows(c):
            t.add_row(*row)
        print_table(console, t)
        if c.get("note"):
            console.print(f"note: {c['note']}", markup=False, highlight=False)
