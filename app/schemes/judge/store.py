"""Store hooks of the `judge` scheme: it keeps no tables of its own (its records are the generic samples'
payloads); its records are read back without re-validating each one (`stored_record`)."""
from __future__ import annotations

from typing import Any

from calibration.schemes.judge.parse import stored_record
from calibration.schemes.judge.records import SCHEME, JudgeRecord


def load_records(project: Any) -> list[JudgeRecord]:
    """The records `project.samples.records("judge")` parses back, in import order: each stored payload read as
    `stored_record`, one it does not recognise (not written by this version's `to_json`) by the scheme's parser."""
    return project.samples.records(SCHEME, stored=stored_record)


def item_records(project: Any) -> dict[str, str]:
    """Sample id -> itself, for each judge sample: what the judge's `label_items_many` reads of a record is only
    whether it exists, and its human ceiling's metric side is the report's own (`ceiling.judges`), so the ceiling
    needs no record parsed (`concord evaluate` read them all before forking its ceiling worker)."""
    return {sid: sid for (sid,) in project.conn.execute("SELECT id FROM samples WHERE scheme = ? ORDER BY rowid",
                                                        (SCHEME,))}
