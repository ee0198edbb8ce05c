"""What help texts say about the `judge` scheme (base.SchemeInfo), readable without importing the scheme's code:
this module imports nothing heavy. scheme.py takes its title, unit noun and these descriptions from here."""
from __future__ import annotations

from calibration.schemes.base import GENERIC_SUFFIXES, Reference, SchemeInfo

MANIFEST = SchemeInfo(
    name="judge",
    title="Judges",
    unit_noun="judge",
    accepts=("judge records: a judged text (and its context) with each judge's score or label; FaithBench's "
             "released batch_N.json files (the summaries, each detector's score, each annotator's label and spans)"),
    file_suffixes=(*GENERIC_SUFFIXES, ".json"),
    llm_run="",
    references=(Reference("any", "positive when any annotator said positive (FaithBench's own aggregation)"),
                Reference("majority", "positive when more than half of the annotators said positive"),
                Reference("adjudicated", "the resolved human label (adjudicated, else majority, else newest)")),
)
