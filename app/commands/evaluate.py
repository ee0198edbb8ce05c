"""`concord evaluate PROJECT [--scheme S ...]`: each scheme's evaluation report (registry order): for violations
the checker leaderboard (std_match and ha_match side by side by default), for rubric how the LLM's buckets compare
with the humans', and so on for every scheme with an `evaluate` hook. Tables on a terminal, TSV when piped;
--json prints {"schema_version", scheme: report data} (docs/json.md)."""
from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from app.cli_options import add_guideline_version, embedding_spec, non_negative_int, scheme_name
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

    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.3f}"
    return Text("–" if value is None else str(value))  # data (checker names) is text, never rich markup


def _empty(t: Any) -> bool:
    """No rows, or nothing but dashes and zero counts beyond the first column (e.g. every figure against humans
    before anyone labeled): such a table says less than the sentence printed instead."""
    def blank(c: Any) -> bool:
        if type(c) is int:  # a count: 0 is "nothing"; a figure of 0.0 is a result and keeps its table
            return c == 0
        return c is None or (isinstance(c, float) and math.isnan(c)) or str(c).strip() in ("", "–", "-", "—")

    return all(blank(c) for row in t.rows for c in row[1:])


def print_report(report: Any, console: Any) -> None:
    from rich.table import Table

    from app.cli_tables import print_table

    for t in report.tables:
        if _empty(t):
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
    from app.services.evaluation import evaluate
    from app.services.guidelines import notes, valid_labels
    from app.services.missing import labels_missing, no_samples
    from app.services.schemes import present
    from app.store import Project

    if args.config:
        regular_file(args.config, "config file")  # a FIFO would block the reader
    options = {"presets": [args.preset] if args.preset else None, "config_file": args.config,
               "use": [args.use] if args.use else None, "matching": args.matching, "embedding": args.embedding,
               "n_boot": args.bootstrap, "seed": args.seed, "reference": args.reference}
    # the metric's decisions as labels per (sample, unit), from hooks that offer them (for the human ceiling);
    # sample ids are unique across schemes, so one map serves every scheme
    decided: dict[Any, Any] = {}
    with Project.open(args.project) as project:
        if project.several_annotators():  # else no unit is shared: no ceiling, no decisions to collect
            options["machine_decisions"] = lambda ref, labels: decided.update(labels)
        schemes = present(project, args.scheme)
        if not schemes:
            raise no_samples("evaluate", args.project)
        # the records the evaluation read are those the ceiling reads; the labels those valid under the guideline
        # version asked for (default: the current one), issue #29
        with project.records_once(), valid_labels(project, [s.name for s in schemes], args.guideline_version) as guide:
            with rich_progress(enabled=sys.stderr.isatty()) as bar:
                results = evaluate(project, schemes, options, bar)
            ceilings = human_ceilings(project, [r.scheme.name for r in results if r.report is not None],
                                      args.bootstrap, args.seed, decided,
                                      {r.scheme.name: r.report.data for r in results if r.report})
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


def human_ceilings(project: Any, schemes: list[str], n_boot: int, seed: int,
                   machine: dict[str, Any] | None = None, data: dict[str, Any] | None = None) -> dict[str, Any]:
    """Per scheme with units labeled by two or more people: human-human next to metric-human agreement
    (`machine`: (sample, unit) -> the metric's decisions as labels, collected while the evaluate hooks ran; None:
    each scheme's hook is run for them, as the GUI's chart does; `data`: scheme -> its report's data, for a scheme
    that computes its own metric side, app.services.ceiling.own_ceiling)."""
    from app.services.ceiling import ceiling_with_machine

    out = {}
    for name in schemes:
        c = ceiling_with_machine(project, name, n_boot=n_boot, seed=seed, machine=machine,
                                 data=(data or {}).get(name))
        if c is not None:
            out[name] = c
    return out


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
