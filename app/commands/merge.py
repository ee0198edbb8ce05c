"""`concord merge OUT.concord A.concord B.concord ...`: union the events of copies of one project.

Annotators label their own copies offline; the merge adds every event OUT does not hold yet (events are identified
by their uid), numbers the events in time order and derives the labels again. The samples must be the same in
every file (checked by content hash: otherwise nothing is written, exit 2). Conflicts (the same annotator's newest
label differs between files) are listed; both events are kept and the newer one counts. Merging again changes
nothing. OUT is created from the first input when it does not exist.

All or nothing: every file is checked before anything is written (a Concord project, not from a newer Concord,
healthy, the same samples, OUT not among the inputs under any name); otherwise exit 2 and nothing is written. An
existing OUT is backed up to OUT.backups/ and then gets the whole merge in one transaction; a new OUT is built in
a temporary file beside it and renamed into place when complete. A killed merge leaves OUT as it was (or absent).
The inputs are only read: one from an older Concord is upgraded in a temporary copy, never in place.
"""
from __future__ import annotations

import argparse
import json

from app.errors import UsageError
from app.json_outputs import dumps


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("merge", help="merge annotators' copies of a project (union of their events)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                              epilog="examples:\n  concord merge team.concord ana.concord ben.concord\n"
                                     "  concord merge team.concord cy.concord --json")
    p.add_argument("out", metavar="OUT", help="the merged project (created when missing)")
    p.add_argument("inputs", metavar="INPUT", nargs="+", help="project files to merge in")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run, project=None)


def run(args: argparse.Namespace) -> int:
    from app.store.merge import MergeError, merge

    try:
        report = merge(args.out, args.inputs)
    except MergeError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(dumps("merge", report.to_json(), indent=2, ensure_ascii=False))
        return 0
    for src, n in report.added_events.items():
        print(f"{src}: {n} new event(s)")
    if not report.changed:
        print("nothing changed")
    for c in report.conflicts:
        print(f"conflict: {c['annotator']} on {c['sample']} / {c['unit'] or '(sample)'} / {c['kind']}: "
              f"{json.dumps(c['output'])} in {args.out} vs {json.dumps(c['input_value'])} in {c['input']}; "
              f"kept the newer ({c['kept']})")
    print(f"{args.out}: merged {len(report.inputs)} file(s), {len(report.conflicts)} conflict(s)")
    return 0
