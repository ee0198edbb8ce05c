"""Store hooks of the `addm` scheme: it keeps no tables of its own (its records are the generic samples' payloads);
its records are read back without re-validating each one (`stored_sample`), which was most of `concord evaluate
--scheme addm` at 10k businesses."""
from __future__ import annotations

from typing import Any

from calibration.schemes.addm.records import AddmSample, stored_sample
from calibration.schemes.addm.scheme import NAME


def load_records(project: Any) -> list[AddmSample]:
    """The records `project.samples.records("addm")` parses back, in import order: each stored payload read as
    `stored_sample`, one it does not recognise (not written by this version's `to_json`) by the scheme's parser."""
    return project.samples.records(NAME, stored=stored_sample)
