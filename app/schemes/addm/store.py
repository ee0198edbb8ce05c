"""Store hooks of the `addm` scheme: it keeps no tables of its own (its records are the generic samples' payloads);
its records are read back here without re-validating each one (`stored_sample`), which was most of `concord
evaluate --scheme addm` at 10k businesses."""
from __future__ import annotations

import json
from typing import Any

import orjson

from calibration.schemes.addm.records import AddmSample, stored_sample
from calibration.schemes.addm.scheme import NAME, SCHEME


def _loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # what orjson refuses (NaN, integers past 64 bits) json reads as before
        return json.loads(text)


def load_records(project: Any) -> list[AddmSample]:
    """The records `project.records("addm")` parses back, in import order: each stored payload read as
    `stored_sample`, one it does not recognise (not written by this version's `to_json`) by the scheme's parser."""
    out = []
    for sid, split, meta, payload in project.conn.execute(
            "SELECT id, split, meta, payload FROM samples WHERE scheme = ? ORDER BY rowid", (NAME,)):
        data = {"scheme": NAME, "id": sid, **_loads(payload)}
        if split is not None:
            data["split"] = split
        if meta is not None:
            data["meta"] = _loads(meta)
        try:
            out.append(stored_sample(data))
        except (ValueError, KeyError, TypeError, AttributeError):
            parsed = SCHEME.parse(data)
            if parsed.record is not None:
                out.append(parsed.record)
    return out
