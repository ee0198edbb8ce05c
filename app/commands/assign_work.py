"""`concord assign-work PROJECT --annotators ana,ben,cy --overlap 2 [--seed S]`: spread units over annotators.

Each unit gets `--overlap` annotators, stratified by scheme and checker (trait, judge, ...), so agreement can be
measured in every stratum. Units already assigned keep their annotators (new imports can be assigned later) unless
`--replace`. Blind mode turns on with the first assignment (`concord config PROJECT --blind off` turns it off).
"""
from __future__ import annotations

import argparse

from app.cli_options import annotators, non_negative_int, positive_int, scheme_name
from app.errors import UsageError
from app.json_outputs import dumps

EXAMPLES = """\
examples:
  concord assign-work brand.concord --annotators ana,ben,cy --overlap 2
  concord assign-work brand.concord --annotators ana,ben --overlap 1 --seed 7 --replace --json"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "assign-work", help="spread units over annotators with an overlap (for agreement); turns blind mode on",
        description=__doc__.splitlines()[0].split(": ", 1)[1], epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--annotators", required=True, type=annotators, metavar="NAMES",
                   help="comma-separated annotator names")
    p.add_argument("--overlap", type=positive_int, default=2, help="annotators per unit (default 2)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="shuffling seed (default 0)")
    p.add_argument("--scheme", action="append", type=scheme_name, metavar="NAME", help="only units of this scheme (repeatable)")
    p.add_argument("--replace", action="store_true", help="drop existing assignments first")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from app.names import case_twins, case_warning, terminal_safe
    from app.store import Project

    names = args.annotators  # checked and NFC-normalised by the option's type (app.cli_options.annotators)
    if args.overlap > len(names):
        raise UsageError(f"--overlap {args.overlap}: more than the {len(names)} annotator(s) given")
    with Project.open(args.project) as project:
        warning = case_warning(case_twins(names, project.annotators()))
        if warning:
            print(f"warning: {warning}", file=sys.stderr)
        out = project.assign_work(names, args.overlap, seed=args.seed, replace=args.replace, schemes=args.scheme)
        out["blind"] = project.blind()
        out["totals"] = project.assignment_counts()
    if args.json:
        print(dumps("assign-work", out, indent=2))
        return 0
    print(f"{out['units']} unit(s) assigned in {out['strata']} stratum/strata, {args.overlap} annotator(s) each; "
          f"blind mode {'on' if out['blind'] else 'off'}")
    for name, n in sorted(out["totals"].items()):
        print(f"  {terminal_safe(name)}\t{n} unit(s) in queue")
    return 0
