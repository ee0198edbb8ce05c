"""What help texts say about the `rubric` scheme (base.SchemeInfo), readable without importing the scheme's code:
this module imports nothing heavy. scheme.py takes its title, unit noun and these descriptions from here."""
from __future__ import annotations

from calibration.schemes.base import GENERIC_SUFFIXES, SchemeInfo

MANIFEST = SchemeInfo(
    name="rubric",
    title="Rubric",
    unit_noun="trait",
    accepts=("rubric records: a question, a response, metric traits and the LLM's TP/FN/FP/TN excerpt buckets per "
             "trait"),
    file_suffixes=GENERIC_SUFFIXES,
    llm_run=("TP/FN/FP/TN excerpt buckets for a metric trait (--trait NAME), machine labels bucket-"
             "assigner@VERSION|MODEL"),
)
