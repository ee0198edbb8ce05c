"""`concord plan PROJECT [--target-halfwidth 0.05] [--json]`: how many more labels until the figures are sure enough.

From the labels so far: how many more samples (labeled by as many annotators per item as now) bring the 95%
interval of the annotators' agreement (Fleiss' kappa, or Krippendorff's alpha, pooled as `concord agreement` pools
it) to a half-width of at most the target; and, per scheme with a stored calibration run, how many labeled units
would make the gain's interval exclude 0 if the present gain holds. Method: the 1/sqrt(n) scaling of the bootstrap
half-width, checked by the half-widths of subsamples (n/4, n/2, n); the fitted exponent is printed and a slower
shrinking is flagged. (Resampling at a larger n from the labels so far would give the same 1/sqrt(n) shrinking of
the same plug-in distribution at more cost; what can fail is the scaling itself, which the subsamples show.)
--json keys: schema_version, target_halfwidth, agreement.samples_needed, agreement.more_labels, gain (docs/json.md).
"""
from __future__ import annotations

import argparse

from app.cli_options import non_negative_int, scheme_name
from app.json_outputs import dumps

EXAMPLES = """\
examples:
  concord plan brand.concord
  concord plan brand.concord --target-halfwidth 0.03 --statistic alpha
  concord plan brand.concord --scheme judge --bootstrap 2000 --seed 7
  concord plan brand.concord --json | jq .agreement.more_labels"""


def _halfwidth(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {value}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "plan", help="how many more labels until agreement and the calibration gain are sure enough",
        description=__doc__.splitlines()[0].split(": ", 1)[1] + "\n\n" + "\n".join(__doc__.splitlines()[2:]),
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("project", metavar="PROJECT", help="the .concord project file (read only)")
    p.add_argument("--target-halfwidth", type=_halfwidth, default=0.05, metavar="H",
                   help="the agreement interval's half-width to reach (default 0.05)")
    p.add_argument("--statistic", choices=("kappa", "alpha"), default="kappa",
                   help="Fleiss' kappa (default) or Krippendorff's alpha")
    p.add_argument("--scheme", action="append", type=scheme_name, metavar="NAME", help="only this scheme (repeatable)")
    p.add_argument("--bootstrap", type=non_negative_int, default=1000, metavar="N",
                   help="bootstrap replicates per interval (default 1000; 0: no interval, no plan)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="bootstrap and subsampling seed (default 0)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.services.planner import plan
    from app.store import Project

    with Project.open(args.project) as project:
        out = plan(project, args.target_halfwidth, statistic=args.statistic, schemes=args.scheme,
                   n_boot=args.bootstrap, seed=args.seed)
    if args.json:
        print(dumps("plan", out, indent=2))
        return 0
    from app.names import terminal_safe
    from app.services.planner import describe

    for line in describe(out):
        print(terminal_safe(line))
    return 0

