"""What an import reports to its user, as text: the CLI prints it (`concord import`, `concord labels import`) and the
app's File ▸ Import… shows it in its summary dialog (app/gui/import_dialog.py), so both say the same thing."""
from __future__ import annotations

from typing import Any

MAX_WARNINGS = 20


def warning_lines(warnings: list[Any]) -> list[str]:
    """The first MAX_WARNINGS warnings, one line each, and how many more there are."""
    lines = [f"warning: {w}" for w in warnings[:MAX_WARNINGS]]
    if len(warnings) > MAX_WARNINGS:
        lines.append(f"warning: ... and {len(warnings) - MAX_WARNINGS} more warnings")
    return lines


def scheme_lines(schemes: dict[str, dict[str, int]]) -> list[str]:
    """One line per scheme of the counts every surface shows (the import summaries print them after an import)."""
    return [f"  {name}: {c['samples']} samples, {c['units']} units, {c['labeled']} labeled, {c['unlabeled']} unlabeled, "
            f"{c['with_status']} with a status, {c['label_rows']} label rows" for name, c in schemes.items()]


def summary_text(report: Any, counts: dict[str, dict[str, int]]) -> str:
    """What an import added (`ImportReport.summary()`) and what the project now holds (`Project.counts.unit_counts`)."""
    now = scheme_lines(counts)
    return report.summary() + ("\nproject now:\n" + "\n".join(now) if now else "")
