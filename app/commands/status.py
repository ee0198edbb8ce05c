"""`concord status PROJECT [--json]`: what a project holds and how much of it humans have decided."""
from __future__ import annotations

import argparse
from typing import Any

from app.io.import_summary import scheme_lines  # (shared with the app's import summary)
from app.json_outputs import dumps


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "status",
        help="print counts: samples and units per scheme, labeled and unlabeled units, events",
        description="Summarise a project: samples per scheme and what a scheme counts of its own (the violations: "
        "ground-truth and predicted violations per checker, ungrounded quotes), units (sample x checker or trait) "
        "with and without a human decision, events and annotators. A unit counts as labeled once a human has given it a label other than a status or a note, "
        "to the unit itself or to its whole sample (a label kind the scheme declares per sample).",
        epilog="examples:\n  concord status brand.concord\n  concord status brand.concord --json | jq .units",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--json", action="store_true", help="print the counts as JSON (for scripts)")
    p.set_defaults(func=run)


def collect(project: Any) -> dict[str, Any]:
    counts = project.counts.status_counts()  # units and schemes: the one definition (app/store/counts.py)
    return {"project": str(project.path), "project_schema_version": project.schema_version, **counts}


def print_scheme_counts(schemes: dict[str, dict[str, int]]) -> None:
    """After an import: what the project now holds (`Project.counts.unit_counts`), counted as `concord status` counts it."""
    lines = scheme_lines(schemes)
    if lines:
        print("project now:\n" + "\n".join(lines))


def scheme_texts(own: dict[str, Any]) -> dict[str, Any]:
    """scheme -> how its store part prints its own counts (`status_text`: app.schemes.contracts.StatusText)."""
    from app.schemes import loader

    out = {}
    for scheme, counts in sorted(own.items()):
        hook = loader.store(scheme).status_text
        if hook is not None:
            out[scheme] = hook(counts)
    return out


def run(args: argparse.Namespace) -> int:
    from app.store import Project

    with Project.open(args.project) as project:
        data = collect(project)
    if args.json:
        print(dumps("status", data, indent=2, ensure_ascii=False))
        return 0
    _print(data)
    return 0


def _print(data: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from app.cli_tables import print_table

    console = Console()
    samples = data["samples"]
    console.print(f"[bold]{data['project']}[/] (schema {data['project_schema_version']})", highlight=False)
    line = "samples: " + (", ".join(f"{n} {scheme}" for scheme, n in sorted(samples.items())) or "none")
    predicted: dict[tuple[str, str], int] = {}  # (scheme, unit) -> machine items, from the schemes' own counts
    for scheme, text in scheme_texts(data["scheme_counts"]).items():
        line += text.note
        predicted.update(((scheme, unit), n) for unit, n in text.predicted.items())
    console.print(line, highlight=False, markup=False, soft_wrap=True)  # piped: one line, never cut at 80 columns
    if data["units"]:
        table = Table(title="units (sample x checker or trait)", title_justify="left")
        for col, justify in (("scheme", "left"), ("checker / trait", "left"), ("predicted", "right"),
                             ("units", "right"), ("labeled", "right"), ("unlabeled", "right"), ("with status", "right")):
            table.add_column(col, justify=justify, no_wrap=col == "scheme", overflow="fold")  # type: ignore[arg-type]
        for u in data["units"]:
            key = (u["scheme"], u["unit"])
            pred = str(predicted[key]) if key in predicted else ""
            table.add_row(u["scheme"], u["unit"] or "(no predictions)", pred, str(u["total"]), str(u["labeled"]),
                          str(u["unlabeled"]), str(u["with_status"]))
        print_table(console, table)
    if data.get("schemes"):
        table = Table(title="per scheme", title_justify="left")
        cols = (("scheme", "scheme"), ("samples", "samples"), ("units", "units"), ("labeled", "labeled"),
                ("unlabeled", "unlabeled"), ("with status", "with_status"), ("label rows", "label_rows"),
                ("machine-labeled", "machine_labeled"))
        for col, _ in cols:
            table.add_column(col, justify="left" if col == "scheme" else "right", no_wrap=True)
        for name, c in data["schemes"].items():
            table.add_row(name, *(str(c[key]) for _, key in cols[1:]))
        print_table(console, table)
    console.print(f"decisions: {data['events']} events by {data['annotators']} annotator(s)", highlight=False)
