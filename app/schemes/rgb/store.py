"""Store hooks of the `rgb` scheme: it keeps no tables of its own (its records are the generic samples' payloads);
its records are read back without re-validating each one (`stored_record`), a fifth of `concord evaluate --scheme
rgb` at 100k records."""
from __future__ import annotations

from typing import Any

from calibration.schemes.rgb.records import RGBRecord, stored_record
from calibration.schemes.rgb.scheme import NAME


def load_records(project: Any) -> list[RGBRecord]:
    """The records `project.samples.records("rgb")` parses back, in import order: each stored payload read as
    `stored_record`, one it does not take (not as `record_to_json` writes it) by the scheme's parser."""
    return project.samples.records(NAME, stored=stored_record)
