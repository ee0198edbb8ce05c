"""`concord splits PROJECT`: list the curated splits exported from a project (name@version, counts, hash, path)."""
from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table

from app.cli_tables import print_table
from app.json_outputs import dumps
from app.store import Project


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "splits",
        help="list the curated splits exported from a project",
        description="List every NAME@X.Y.Z exported from the project, oldest first, with each scheme's samples,\n"
        "labeled units and labels (as the export wrote them in its manifest), content hash and where it was written.",
        epilog="examples:\n  concord splits brand.concord\n"
        "  concord splits brand.concord --json | jq '.splits[] | .name + \"@\" + .version'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def split_schemes(manifest: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Scheme -> {samples, units, labeled, labels} of a split, as its export wrote them in its manifest
    (`counts.schemes`; a manifest written before every scheme was listed there gives the rest from `samples`)."""
    counts = manifest.get("counts") or {}
    out = {name: {k: int(v.get(k) or 0) for k in ("samples", "units", "labeled", "labels")}
           for name, v in (counts.get("schemes") or {}).items()}
    for name, n in (counts.get("samples") or {}).items():
        if name != "total" and name not in out:
            out[name] = {"samples": int(n), "units": 0, "labeled": 0, "labels": 0}
    return out


def run(args: argparse.Namespace) -> int:
    with Project.open(args.project) as project:
        rows = project.artifacts.splits()
    console = Console()
    if args.json:
        out = []
        for r in rows:
            schemes = split_schemes(r["manifest"])
            out.append({k: r[k] for k in ("name", "version", "created_at", "content_sha256", "path")} | {
                "samples": r["manifest"].get("counts", {}).get("samples", {}), "schemes": schemes,
                "labels": sum(v["labels"] for v in schemes.values())})
        print(dumps("splits", {"splits": out}, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        console.print("no splits exported yet (concord export PROJECT --name NAME --version X.Y.Z --out DIR)")
        return 0
    table = Table(title=f"exported splits ({len(rows)})")
    for col in ("split", "created", "format", "scheme", "samples", "labeled units", "labels", "content sha256"):
        table.add_column(col, justify="right" if col in ("samples", "labeled units", "labels") else "left",
                         no_wrap=True)
    for r in rows:
        m = r["manifest"]
        head = [f"{r['name']}@{r['version']}", str(r["created_at"])[:10], str(m.get("format", ""))]
        for i, (name, v) in enumerate(split_schemes(m).items() or [("", None)]):
            cells = ["", "", ""] if i else head
            figures = ("", "", "") if v is None else (str(v["samples"]), str(v["labeled"]), str(v["labels"]))
            table.add_row(*cells, name, *figures, "" if i else r["content_sha256"][:12])
    print_table(console, table)
    for r in rows:  # paths below the table: long paths would squeeze the columns
        console.print(f"{r['name']}@{r['version']}: {r['path'] or '(path not recorded)'}", markup=False, soft_wrap=True)
    return 0
