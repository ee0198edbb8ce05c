"""`concord queue PROJECT [--order ORDER] [--limit N] [--json]`: the unlabeled units in the order worth labeling
next. disagreement: the best configs of the last calibration run disagree on them (ties: nearest the
decision threshold); boundary: nearest the chosen config's thresholds; metric-vs-llm: the machine label and the
calibrated metric disagree; annotators: annotators disagree and nobody adjudicated; deferred: the units the
guaranteed-agreement band of the last `calibrate --guarantee` run defers to a human; random: seeded (honest
estimates); stratified: balanced over units (checker, judge, ...) and schemes; list: the review list's order.
Labeled units whose labels predate a change of the guideline part that affects them (`concord guideline`) are
queued again, with the reason ("labeled under v2; rule R7 changed in v3")."""
from __future__ import annotations

import argparse
import sys

from app.cli_options import positive_int, scheme_name
from app.json_outputs import dumps

ORDERS = ("disagreement", "boundary", "metric-vs-llm", "annotators", "deferred", "random", "stratified", "list")

EPILOG = """examples:
  concord queue demo/demo.concord
  concord queue demo/demo.concord --order random --seed 3 --limit 20 --json
  concord queue project.concord --scheme trace --order boundary
  concord queue project.concord --scheme judge --order deferred
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("queue", help="the unlabeled units worth labeling next (disagreement-first, ...)",
                              description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--order", choices=ORDERS, default="disagreement", help="the queue's order (default disagreement)")
    p.add_argument("--scheme", metavar="NAME", action="append", default=None, type=scheme_name, help="only this scheme's units (repeatable)")
    p.add_argument("--limit", type=positive_int, default=20, help="units to print (default 20)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random order and of every tie-break")
    p.add_argument("--json", action="store_true", help="print the queue as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.services.missing import no_samples
    from app.services.queue import build
    from app.store import Project

    with Project.open(args.project) as project:
        if not project.counts.sample_counts():  # the one rule of evaluate, calibrate and queue (the app shows an empty list)
            raise no_samples("queue", args.project)
        queue = build(project, args.order, schemes=args.scheme, seed=args.seed, limit=args.limit)
    if args.json:
        print(dumps("queue", queue.to_dict(), indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from app.cli_tables import print_table
    from app.names import terminal_safe

    console = Console(width=None if sys.stdout.isatty() else 140)
    for note in queue.notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False, soft_wrap=True)
    if not queue.entries:
        console.print("nothing to label next: " + ("no unit is unlabeled" if not queue.notes else "see the notes above"),
                      highlight=False)
        return 0
    again = f" and {queue.n_requeued} re-queued by a guideline change" if queue.n_requeued else ""
    t = Table(title=f"Next {len(queue.entries)} of {queue.n_unlabeled} unlabeled units{again}, order {queue.order}")
    why = any(e.reason for e in queue.entries)
    for col in ("#", "scheme", "sample", "unit", "score", *(("why",) if why else ())):
        t.add_column(col, justify="right" if col in ("#", "score") else "left")
    for i, e in enumerate(queue.entries, 1):
        t.add_row(str(i), e.scheme, e.sample_id, e.unit or "–", "–" if e.score is None else f"{e.score:.3f}",
                  *((Text(terminal_safe(e.reason or "")),) if why else ()))
    print_table(console, t)
    return 0
