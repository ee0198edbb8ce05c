"""The versions of every `concord ... --json` output, in one place (issue #25 item 5).

Scripts read these outputs, so a shape change must never be silent: each output kind carries a top-level
`"schema_version"` (an integer per kind, below), its shape is a JSON Schema in
resources/schema/output/<kind>.schema.json, documented in docs/json.md, and tests/test_json_outputs.py runs every
command with --json and validates the output. Changing a shape means: bump the kind's number here, update its
schema file and docs/json.md, and add a line to CHANGELOG.md.

Numbering: a kind's version counts the shapes it has had, the unversioned ones of earlier releases included, so
outputs that already changed shape once without notice start at 2.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "resources" / "schema" / "output"

VERSIONS: dict[str, int] = {
    "status": 3,  # 3: a scheme's own counts under "scheme_counts"; 2: the project file's version moved to "project_schema_version"
    "evaluate": 4,  # 4: a scheme's "guideline" (the version its labels were valid under); 2: {scheme: report data} (1 was one report); 3: trace's "means"
    "calibrate": 5,  # 5: guarantee (with --guarantee) and reference (with --reference); 4: "guideline"; 3: gain (and forced with --apply) added; 2: the presets' scores under "baselines" (1: "defaults")
    "agreement": 5,  # 5: adaptive_overlap added; 4: guideline, over_version added; 3: annotator_quality, over_time added; 2: overall.span_f1 an interval (1: a number)
    "queue": 2,  # 2: n_requeued, and each unit's reason (units back after a guideline change)
    "splits": 2,  # 2: an object {"splits": [...]} (1: a bare list)
    "merge": 1,
    "check": 2,  # 2: the project file's version moved from "schema_version" to "project_schema_version"
    "config": 2,
    "assign-work": 2,  # 2: "adaptive" added (the adaptive overlap's round, null with a fixed overlap)
    "export": 2,  # 2: guideline (the guideline versions of the split's labels)
    "plan": 1,
}


def versioned(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` with `"schema_version"` first. A payload that has the key already is a bug (it would be lost)."""
    if "schema_version" in payload:
        raise ValueError(f"{kind}: the payload already has a 'schema_version' key")
    return {"schema_version": VERSIONS[kind], **payload}


def dumps(kind: str, payload: dict[str, Any], **options: Any) -> str:
    """The output text: `versioned(kind, payload)` through json.dumps with the command's own options."""
    return json.dumps(versioned(kind, payload), **options)


def schema_path(kind: str) -> Path:
    return SCHEMA_DIR / f"{kind}.schema.json"
