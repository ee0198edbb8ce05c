"""`concord check PROJECT [--repair]`: is the project file healthy? Recover what can be read into a new file."""
from __future__ import annotations

import argparse
import sys

from app.json_outputs import dumps

EPILOG = """examples:
  concord check brand.concord                   # exit 0: healthy; exit 2: problems found (listed)
  concord check brand.concord --json
  concord check brand.concord --repair          # writes brand-recovered.concord; brand.concord is not changed
  concord check brand.concord --repair --out /tmp/brand-fixed.concord

What is checked: SQLite's integrity check (every page, record and index), the foreign keys, and the labels
table against the labels derived again from the events (the audit trail). The file is opened read-only.
--repair copies every row SQLite can still read into a NEW file (tables row by row, skipping damaged pages),
adds the rows left on pages SQLite cannot reach (a truncated file, a damaged schema), rebuilds the indexes and
the derived labels, checks that file and reports rows recovered against rows expected; the original is never
written. A hot journal left by a writer killed mid-transaction is rolled back first. Automatic backups, made
before every migration and hourly by the app, are in the `<name>.backups/` folder beside it."""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "check",
        help="check a project file's integrity; --repair recovers what is readable into a new file",
        description="Check a project file: SQLite integrity and foreign keys, and the labels derived from the "
        "events. Exit status 0 when healthy, 2 when problems were found.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--repair", action="store_true",
                   help="when problems are found, recover what SQLite can read into a new file (see --out)")
    p.add_argument("--out", metavar="FILE", default=None,
                   help="where --repair writes (default: PROJECT's name with -recovered; never overwritten)")
    p.add_argument("--quick", action="store_true", help="SQLite's quick_check instead of the full integrity check")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.store.backup import backup_file
    from app.store.health import integrity_report
    from app.store.recover import recover

    report = integrity_report(args.project, full=not args.quick)
    recovery = None
    if args.repair and not report.ok:
        backup_file(args.project, "before-repair")  # best effort (issue #24); the repair never writes the file
        recovery = recover(args.project, args.out)
    if args.json:
        data = report.to_dict()
        data["project_schema_version"] = data.pop("schema_version")  # the output's own version takes the name
        if recovery is not None:
            data["recovered"] = {"path": str(recovery.dest), "tables": {k: vars(v) for k, v in recovery.tables.items()},
                                 "integrity": recovery.integrity, "foreign_keys": recovery.foreign_keys}
        print(dumps("check", data, indent=2))
    else:
        if report.ok:
            print(f"{args.project}: ok (schema {report.schema_version}; "
                  + ", ".join(f"{n} {t}" for t, n in report.counts.items() if t in ("samples", "events", "labels"))
                  + ")")
        else:
            print(f"{args.project}: {len(report.problems)} problem(s) found:", file=sys.stderr)
            for line in report.problems:
                print(f"  {line}", file=sys.stderr)
            if recovery is not None:
                for line in recovery.lines():
                    print(line)
                print(f"check it with `concord check {recovery.dest}`, then use it in place of {args.project}")
            else:
                print(f"recover what is readable with `concord check --repair {args.project}` "
                      f"(or restore a backup from {args.project}.backups/)", file=sys.stderr)
    return 0 if report.ok else 2
