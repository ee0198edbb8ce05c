"""What help texts say about the `addm` scheme (base.SchemeInfo), readable without importing the scheme's code:
this module imports nothing heavy. scheme.py takes its title, unit noun and these descriptions from here."""
from __future__ import annotations

from calibration.schemes.base import GENERIC_SUFFIXES, SchemeInfo

MANIFEST = SchemeInfo(
    name="addm",
    title="ADDM",
    unit_noun="method",
    accepts=("ADDM records: a business's reviews with each method's claimed incidents, verdict and risk score; "
             "ADDM run files (results.json, --method)"),
    file_suffixes=(*GENERIC_SUFFIXES, ".json"),
    llm_run="",
)
