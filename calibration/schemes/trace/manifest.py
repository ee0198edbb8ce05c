"""What help texts say about the `trace` scheme (base.SchemeInfo), readable without importing the scheme's code:
this module imports nothing heavy. scheme.py takes its title, unit noun and these descriptions from here."""
from __future__ import annotations

from calibration.schemes.base import GENERIC_SUFFIXES, Reference, SchemeInfo

MANIFEST = SchemeInfo(
    name="trace",
    title="TRACe",
    unit_noun="judge",
    accepts=("TRACe records: a question, documents and a response with sentence-level relevance, utilization and "
             "support labels; RAGBench rows as released (e.g. <subset>/test.parquet)"),
    file_suffixes=GENERIC_SUFFIXES,
    llm_run="the sentence-level TRACe annotation (relevant, utilized, supported sentences), machine labels llm:MODEL",
    references=(Reference("human", "the annotator's labels as the humans corrected them (human-labeled samples)"),
                Reference("annotator", "the records' own released annotator labels (e.g. RAGBench's)", released=True)),
)
