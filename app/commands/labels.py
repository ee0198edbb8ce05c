"""`concord labels import PROJECT FILE`: record human decisions made outside Concord, as events."""
from __future__ import annotations

import argparse

from rich.console import Console

from app.cli_progress import RichBar
from app.commands.importing import print_warnings

EXAMPLES = """\
examples:
  concord labels import brand.concord decisions.jsonl

One decision per line (JSONL; CSV/Parquet with the same columns, list/object cells as JSON):
  {"sample": "s1", "checker": "careful@2.0|gpt-4o", "annotator": "ana", "matches": [[0, 1], [2, 0]]}
      the human says GT 0 = prediction 1 and GT 2 = prediction 0 (indices from 0); every other pair of
      this sample and checker is "not a match"; [] says nothing matches.
  {"sample": "q7", "trait": "coverage", "annotator": "ana", "buckets": {"tp": [...], "fn": [], "fp": [], "tn": []}}
  {"sample": "s1", "annotator": "ana", "ground_truth": [{"start": 4, "end": 9, "rule": "claim"}]}
      ana's curated ground truth of sample s1 (validated like an imported record's); "spans": [{"start", "end",
      "label"}] (FaithBench's annotations) is read the same way. See docs/annotators.md.
Each line is stored like an "accept" in the app: the matches (or buckets) plus status 'accepted', as events
with origin 'import'. Any problem: nothing is recorded, every problem is listed, exit 2. Importing the same
file again changes nothing."""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("labels", help="human decisions: `concord labels import PROJECT FILE`",
                              description="Work with human decisions (labels) from outside Concord.", epilog=EXAMPLES,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="labels_command", metavar="ACTION")
    sub.required = True
    imp = sub.add_parser(
        "import",
        help="record human decisions (violation matches, rubric buckets) from a file",
        description="Validate every line of FILE against the project's samples, then record all decisions in "
        "one transaction.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    imp.add_argument("project", metavar="PROJECT", help="the .concord project file")
    imp.add_argument("file", metavar="FILE", help="decisions: .jsonl, .csv or .parquet")
    imp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.io.labels import import_labels
    from app.commands.status import print_scheme_counts
    from app.store import Project

    console = Console(stderr=True)
    with Project.open(args.project) as project, RichBar(console, label="recording") as bar:
        project.backup_before("before-labels-import")
        report = import_labels(project, args.file, progress=bar)
        counts = project.counts.unit_counts()["schemes"]
    print_warnings(report.warnings)
    print(report.summary())
    print_scheme_counts(counts)
    return 0
