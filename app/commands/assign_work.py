"""`concord assign-work PROJECT --annotators ana,ben,cy --overlap 2|adaptive [--seed S]`: spread units over annotators.

Each unit gets `--overlap` annotators, stratified by scheme and checker (trait, judge, ...), so agreement can be
measured in every stratum. Units already assigned keep their annotators (new imports can be assigned later) unless
`--replace`. Blind mode turns on with the first assignment (`concord config PROJECT --blind off` turns it off).
`--overlap adaptive` (run it again as labels come in): every unit gets one annotator; a unit whose annotators have
all decided gets one more while its confidence is below `--target` (the share of annotators expected to agree with
its majority, the machine counting as one more vote: one human alone 2/3, with the machine agreeing 3/4, against it
1/2, two who disagree 1/2), up to `--max-overlap` annotators, the least confident first, plus an
`--audit` share of the confident ones (so agreement stays estimable), within `--budget` annotators beyond the first.
"""
from __future__ import annotations

import argparse

from app.cli_options import annotators, non_negative_int, positive_int, scheme_name
from app.errors import UsageError
from app.json_outputs import dumps

EXAMPLES = """\
examples:
  concord assign-work brand.concord --annotators ana,ben,cy --overlap 2
  concord assign-work brand.concord --annotators ana,ben --overlap 1 --seed 7 --replace --json
  concord assign-work brand.concord --annotators ana,ben,cy --overlap adaptive --budget 200
  concord assign-work brand.concord --annotators ana,ben,cy --overlap adaptive --target 0.8 --max-overlap 3 --audit 0.2
  concord assign-work brand.concord --annotators ana,ben,cy --overlap adaptive --scheme judge --json"""


def _overlap(text: str) -> int | str:
    """A positive number of annotators, or `adaptive`."""
    if text.strip().lower() == "adaptive":
        return "adaptive"
    return positive_int(text)


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {value}")
    return value


def _target(text: str) -> float:
    value = _share(text)
    if value <= 0.5:
        raise argparse.ArgumentTypeError(f"must be above 0.5 (a majority), got {value}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "assign-work", help="spread units over annotators with an overlap (for agreement); turns blind mode on",
        description=__doc__.splitlines()[0].split(": ", 1)[1] + "\n\n" + "\n".join(__doc__.splitlines()[2:]),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--annotators", required=True, type=annotators, metavar="NAMES",
                   help="comma-separated annotator names")
    p.add_argument("--overlap", type=_overlap, default=2, metavar="N|adaptive",
                   help="annotators per unit (default 2), or `adaptive`: one, more only where the unit is uncertain")
    p.add_argument("--budget", type=non_negative_int, metavar="N",
                   help="adaptive: at most N annotators beyond the first per unit, over all runs (default: no limit)")
    p.add_argument("--target", type=_target, metavar="C",
                   help="adaptive: the per-unit confidence at which a unit needs no more annotators (default 0.75)")
    p.add_argument("--max-overlap", type=positive_int, metavar="K",
                   help="adaptive: at most K annotators per unit (default 3)")
    p.add_argument("--audit", type=_share, metavar="S",
                   help="adaptive: share of the confident single-label units given a second annotator anyway, for an "
                        "unbiased agreement estimate (default 0.1)")
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
    adaptive = args.overlap == "adaptive"
    if not adaptive and args.overlap > len(names):
        raise UsageError(f"--overlap {args.overlap}: more than the {len(names)} annotator(s) given")
    if not adaptive:
        for option in ("budget", "target", "max_overlap", "audit"):
            if getattr(args, option) is not None:
                raise UsageError(f"--{option.replace('_', '-')} applies to --overlap adaptive only")
    elif args.replace:
        raise UsageError("--replace with --overlap adaptive would drop the assignments its decisions rest on")
    with Project.open(args.project) as project:
        warning = case_warning(case_twins(names, project.decisions.annotators()))
        if warning:
            print(f"warning: {warning}", file=sys.stderr)
        if adaptive:
            from app.services.overlap import decide

            more, summary, signals = decide(project, target=0.75 if args.target is None else args.target,
                                   max_overlap=3 if args.max_overlap is None else args.max_overlap,
                                   budget=args.budget, audit=0.1 if args.audit is None else args.audit,
                                   seed=args.seed, schemes=args.scheme)
            out = project.assignments.assign_adaptive(names, more, seed=args.seed, schemes=args.scheme, signals=signals)
            summary.update(more=out.pop("more"), no_annotator_left=out.pop("no_annotator_left"))
            out["adaptive"] = summary
        else:
            out = project.assignments.assign_work(names, args.overlap, seed=args.seed, replace=args.replace, schemes=args.scheme)
            out["adaptive"] = None
        out["blind"] = project.assignments.blind()
        out["totals"] = project.assignments.assignment_counts()
    if args.json:
        print(dumps("assign-work", out, indent=2))
        return 0
    if adaptive:
        a = out["adaptive"]
        budget = "no budget" if a["budget"] is None else f"{a['budget_left']} of the budget of {a['budget']} left"
        why = ", ".join(f"{r}: {n}" for r, n in a["reasons"].items()) or "none"
        print(f"{out['units']} unit(s) given a first annotator; {a['more']} given one more (of {a['uncertain']} "
              f"below confidence {a['target']:g}; {why}); {a['waiting']} waiting for a label; {budget}; "
              f"blind mode {'on' if out['blind'] else 'off'}")
        if a["no_annotator_left"]:
            print(f"  {a['no_annotator_left']} uncertain unit(s) had no named annotator left to give")
    else:
        print(f"{out['units']} unit(s) assigned in {out['strata']} stratum/strata, {args.overlap} annotator(s) each; "
              f"blind mode {'on' if out['blind'] else 'off'}")
    for name, n in sorted(out["totals"].items()):
        print(f"  {terminal_safe(name)}\t{n} unit(s) in queue")
    return 0
