"""What help texts say about the `violations` scheme (base.SchemeInfo), readable without importing the scheme's code:
this module imports nothing heavy. scheme.py takes its title, unit noun and these descriptions from here."""
from __future__ import annotations

from calibration.schemes.base import GENERIC_SUFFIXES, SchemeInfo

MANIFEST = SchemeInfo(
    name="violations",
    title="Violations",
    unit_noun="checker",
    accepts=("violations records: a text, its ground-truth violations and each checker's (name@version|model) "
             "predicted violations (span or quote, rule, category, explanation, correction)"),
    file_suffixes=GENERIC_SUFFIXES,
    llm_run="",
)
