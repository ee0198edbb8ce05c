"""`concord splits PROJECT`: list the curated splits exported from a project (name@version, counts, hash, path)."""
from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from app.cli_tables import print_table
from app.json_outputs import dumps
from app.store import Project


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "splits",
        help="list the curated splits exported from a project",
        description="List every NAME@X.Y.Z exported from the project, oldest first, with its counts, content hash "
        "and where it was written.",
        epilog="examples:\n  concord splits brand.concord\n"
        "  concord splits brand.concord --json | jq '.splits[] | .name + \"@\" + .version'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with Project.open(args.project) as project:
        rows = project.splits()
    console = Console()
    if args.json:
        print(dumps("splits", {"splits": [{k: r[k] for k in ("name", "version", "created_at", "content_sha256", "path")} | {
            "samples": r["manifest"].get("counts", {}).get("samples", {})} for r in rows]}, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        console.print("no splits exported yet (concord export PROJECT --name NAME --version X.Y.Z --out DIR)")
        return 0
    table = Table(title=f"exported splits ({len(rows)})")
    for col in ("split", "created", "format", "samples", "labels", "content sha256"):
        table.add_column(col, justify="right" if col in ("samples", "labels") else "left", no_wrap=True)
    for r in rows:
        m = r["manifest"]
        counts = m.get("counts", {})
        table.add_row(f"{r['name']}@{r['version']}", str(r["created_at"])[:10], str(m.get("format", "")),
                      str(counts.get("samples", {}).get("total", "")), str(counts.get("labels", "")),
                      r["content_sha256"][:12])
    print_table(console, table)
    for r in rows:  # paths below the table: long paths would squeeze the columns
        console.print(f"{r['name']}@{r['version']}: {r['path'] or '(path not recorded)'}", markup=False, soft_wrap=True)
    return 0
