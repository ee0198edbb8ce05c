"""Counts, agreement figures, manifest.json and the README data card of a curated split.

The manifest says what the split holds and how it was made (filters, the parameters each scheme's export documents
-- violations: its match config --, annotators, hashes) so a split found on disk can be checked and trusted without
the project that produced it.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np

from app.io.export_annotators import card_lines, inter_annotator
from app.io.export_parts import SchemeExport
from app.io.export_select import Filters, Selection
from app.io.markdown import cell
from app.store import Project

MANIFEST_FORMAT = 1


def clean(value: Any) -> Any:
    """JSON-safe copy: NaN/inf become null, numpy scalars become Python numbers, tuples become lists."""
    if isinstance(value, Mapping):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def counts(sel: Selection) -> dict[str, Any]:
    """What the preview shows, the manifest records and `concord splits` reads, the same for every scheme: samples
    per scheme and per split, label rows, and under `schemes` each scheme's samples, units, labeled units (the
    store's rule, app/store/counts.py), label rows and samples per split; plus each part's own entries (per
    checker, category, trait, ...)."""
    parts = [p for p in sel.parts if p.records]
    samples = {p.scheme: len(p.records) for p in parts}
    by_split: dict[str, Counter[str]] = defaultdict(Counter)
    for p in parts:
        for k, n in p.by_split.items():
            by_split[k][p.scheme] += n
    out: dict[str, Any] = {
        "samples": {**samples, "total": sum(samples.values())},
        "by_split": {k: {p.scheme: v[p.scheme] for p in parts} for k, v in sorted(by_split.items())},
        "labels": sum(p.n_labels for p in parts),
        "skipped_units": sel.skipped,
        "strata": sel.strata,
        "schemes": {p.scheme: {"samples": len(p.records), "units": p.n_units, "labeled": p.n_labeled,
                               "labels": p.n_labels, "by_split": p.by_split} for p in parts},
    }
    for p in sel.parts:
        out.update(p.adapter.manifest_counts(p))
    return out


def agreement(project: Project, sel: Selection, filters: Filters) -> dict[str, Any]:
    """Each part's machine-vs-human figures under its own parameters (violations: unit F1 when scores for its match
    config exist; rubric: buckets)."""
    out: dict[str, Any] = {}
    for p in sel.parts:
        out.update(p.adapter.manifest_agreement(project, p, filters.params_ref(p.scheme)))
    return clean(out)


def build_manifest(project: Project, name: str, version: str, fmt: str, filters: Filters, sel: Selection,
                   files: dict[str, str], content: str, guideline: dict[str, Any] | None = None) -> dict[str, Any]:
    """`guideline`: per scheme of the split with a stored guideline, the version whose valid labels it holds
    (app/services/guidelines.py `under_version`); recorded only when there is one, so a split of a project
    without guidelines is as before."""
    annotators = sorted({a for p in sel.parts for a in p.annotators})
    fields: dict[str, Any] = {}
    for p in sel.parts:
        fields.update(p.adapter.manifest_fields())
        ref = filters.params_ref(p.scheme)
        if ref is not None:
            fields.update(p.adapter.manifest_params(project, ref))
    return clean({
        "manifest_format": MANIFEST_FORMAT,
        "split": f"{name}@{version}",
        "name": name,
        "version": version,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "source_project_id": project.project_id,
        "format": fmt,
        "files": {k: {"sha256": v} for k, v in sorted(files.items())},
        "content_sha256": content,
        "filters": filters.to_dict(),
        **fields,
        "annotators": annotators,
        "counts": counts(sel),
        "agreement": agreement(project, sel, filters),
        "inter_annotator": inter_annotator(project, sel),  # issue #15: every annotator's labels and their agreement
        **({"guideline": guideline} if guideline else {}),  # issue #29: the guideline versions of its labels
    })


def readme(manifest: dict[str, Any], adapters: Sequence[SchemeExport]) -> str:
    """The data card: what is in the split, how it was made, how to load and verify it. `adapters`: the split's
    parts' export adapters, in the order the export visited them (each writes its own paragraphs)."""
    c = manifest["counts"]
    f = manifest["filters"]
    ext = manifest["format"]
    schemes = list(c.get("schemes") or {})  # the schemes the split holds, in the order the export visited them
    sampling = "all selected samples" if f["sample"] is None else f"{f['sample']} samples drawn with seed {f['seed']}"
    lines = [
        f"# {manifest['split']}",
        "",
        "A curated evaluation split exported by Concord from human-validated samples. It is immutable: any change "
        "of content is published under a new version.",
        "",
        "## Contents",
        "",
        "| file | sha256 |",
        "|---|---|",
        *[f"| `{k}` | `{v['sha256']}` |" for k, v in manifest["files"].items()],
        "",
    ]
    for a in adapters:
        lines += a.card_files(ext)
    label_lines = [line for a in adapters if (line := a.card_label_line())]
    if label_lines:
        lines.append(f"- `labels.{ext}`: the human decisions: " + ", and ".join(label_lines) + ".")
    example = schemes[0] if schemes else (adapters[0].scheme if adapters else "DATA")
    lines += [
        "",
        "CSV and Parquet hold nested fields as JSON strings. The files use Concord's import formats: "
        f"`concord import PROJECT {example}.jsonl` and `concord labels import PROJECT labels.jsonl` load a split.",
        "",
    ]
    for a in adapters:
        lines += a.card_notes(manifest)
    lines += [
        "## Counts",
        "",
        "- samples: " + ", ".join(f"{c['samples'].get(name, 0)} {name}" for name in schemes),
    ]
    for a in adapters:
        lines += a.card_counts(c)
    lines += [
        f"- labels (every annotator's): {c['labels']}",
        "",
        "| scheme | samples | units | labeled units | labels |",
        "|---|---|---|---|---|",
        *[f"| {cell(k)} | {v['samples']} | {v['units']} | {v.get('labeled', '–')} | {v['labels']} |"
          for k, v in c["schemes"].items()],
        "",
        "| split | " + " | ".join(cell(name) for name in schemes) + " |",
        "|---|" + "---|" * len(schemes),
        *[f"| {cell(k)} | " + " | ".join(str(v.get(name, 0)) for name in schemes) + " |" for k, v in c["by_split"].items()],
        "",
    ]
    for a in adapters:
        lines += a.card_tables(manifest, ext)
    for a in adapters:
        lines += a.card_agreement(manifest)
    lines += card_lines(manifest.get("inter_annotator"))
    lines += [
        "## Provenance",
        "",
        f"- source project: `{manifest['source_project_id']}`",
        *[line for a in adapters for line in a.card_params(manifest)],
        *_guideline_lines(manifest.get("guideline") or {}),
        f"- annotators: {', '.join(manifest['annotators']) or 'none'}",
        f"- statuses: {', '.join(f['statuses']) if f['statuses'] else 'any with a human decision'}; "
        f"checkers/traits: {', '.join(f['checkers']) if f['checkers'] else 'all'}",
        f"- sampling: {sampling}{'' if not f['stratify'] else ', stratified by ' + f['stratify']}",
        *([f"- schemes: {', '.join(f['schemes'])}"] if f.get("schemes") else []),
        f"- content sha256 (over canonical JSONL, format-independent): `{manifest['content_sha256']}`",
        f"- created: {manifest['created_at']}",
        "",
        "Verify: `sha256sum` each file and compare with the table above or `manifest.json`.",
        "",
    ]
    return "\n".join(lines)


def _guideline_lines(guideline: dict[str, Any]) -> list[str]:
    """The data card's provenance lines naming the guideline versions of the split's labels (issue #29)."""
    out = []
    for scheme, g in guideline.items():
        current = "the current one" if g["version"] == g["current"] else f"the current one is v{g['current']}"
        line = (f"- {cell(scheme)} guideline: labels valid under v{g['version']} ({current}); its labels were given under: "
                f"{', '.join(g['label_versions']) or 'no version'}")
        if g["n_set_aside"]:
            line += f"; {g['n_set_aside']} annotator-unit labels set aside (" + "; ".join(
                f"{n} {cell(why)}" for why, n in g["set_aside"].items()) + ")"
        out.append(line)
    return out
