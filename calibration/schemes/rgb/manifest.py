"""What help texts say about the `rgb` scheme (base.SchemeInfo), readable without importing the scheme's code:
this module imports nothing heavy. scheme.py takes its title, unit noun and these descriptions from here."""
from __future__ import annotations

from calibration.schemes.base import GENERIC_SUFFIXES, SchemeInfo

MANIFEST = SchemeInfo(
    name="rgb",
    title="RGB",
    unit_noun="model",
    accepts=("RGB records: a query, its answers and passages; RGB's own data files (en.json, zh_int.json, "
             "en_fact.json, ...) and evalue.py prediction files (prediction_*.json, --model)"),
    file_suffixes=(*GENERIC_SUFFIXES, ".json"),
    llm_run=("RGB's LLM-judged checks (--judge: is the question addressed, are factual errors identified), machine"
             " labels llm_judge:MODEL"),
    no_units=("none holds a model's answer yet, and RGB scores answers: import RGB prediction files (evalue.py's "
              "prediction_*.json; --model NAME when the file name does not say the model), or generate answers with "
              "`concord generate PROJECT --model NAME`"),
)
