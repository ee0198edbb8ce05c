"""`concord report PROJECT --out report.html`: one self-contained HTML page with every scheme's figures and their
intervals, the newest calibration run's verdict and gain, the human ceiling, reliability diagrams and coverage
curves, to read in a browser or share. The page holds its charts (PNG) and styles: it opens offline."""
from __future__ import annotations

import argparse
import sys

from app.cli_options import non_negative_int, scheme_name

EPILOG = """examples:
  concord report demo/demo.concord --out report.html
  concord report demo/demo.concord --scheme judge --out judge.html --bootstrap 2000 --seed 1

The calibration section shows the newest run stored by `concord calibrate` for each scheme (run it first); the
evaluation figures are computed now, as `concord evaluate` computes them.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    # app/services/report.py gathers, app/io/report_html.py draws
    p = subparsers.add_parser("report", help="write a self-contained HTML report of every scheme's figures",
                              description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--out", metavar="FILE", required=True, help="the HTML file to write (replaced if it exists)")
    p.add_argument("--scheme", action="append", metavar="NAME", type=scheme_name,
                   help="only this scheme (repeat for several; default: every scheme with samples in the project)")
    p.add_argument("--bootstrap", type=non_negative_int, default=1000, metavar="N",
                   help="bootstrap replicates for the 95%% intervals (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import shlex
    from pathlib import Path

    from app.cli_progress import rich_progress
    from app.files import regular_file, write_text_atomically
    from app.io.report_html import render
    from app.services.missing import no_samples
    from app.services.report import build
    from app.store import Project

    regular_file(args.out, "--out", missing_ok=True)  # before the work: a FIFO or a directory is refused at once
    with Project.open(args.project) as project:
        with rich_progress(enabled=sys.stderr.isatty()) as bar:
            report = build(project, args.scheme, n_boot=args.bootstrap, seed=args.seed, progress=bar)
    if not report.schemes:
        raise no_samples("report", args.project)
    command = "concord report " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if len(sys.argv) > 2 else "concord report"
    out = Path(args.out)
    write_text_atomically(out, render(report, command))
    print(f"wrote {out} ({out.stat().st_size:,} bytes; {len(report.schemes)} scheme(s))")
    return 0
