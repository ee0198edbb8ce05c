"""The `judge` scheme: any judge whose output per sample is a score or a label (HHEM, NLI models, LLM judges),
several judges per sample, humans labeling the sample. See README.md in this folder.

Names are loaded on first use (PEP 562), so importing the record types does not pull in scipy.
"""
from __future__ import annotations

from calibration.schemes.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("SCHEME", "JudgeScheme", "PRESETS"), "scheme"),
    **dict.fromkeys(("JudgeRecord", "JudgeOutput"), "records"),
    **dict.fromkeys(("parse_record", "to_json"), "parse"),
    **dict.fromkeys(("JudgeColumns", "judge_columns", "decisions", "vote_share"), "columns"),
    **dict.fromkeys(("judge_figures", "reliability", "expected_calibration_error", "weighted_auroc"), "evaluation"),
    **dict.fromkeys(("search_problem", "ThresholdProblem", "VoteProblem"), "search"),
    **dict.fromkeys(("REFERENCES", "reference_levels", "binary_reference"), "truth"),
}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
