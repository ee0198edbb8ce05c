"""Prompts for the `rubric` scheme's bucket assigner (app/schemes/rubric/llm_assigner.py). The instruction lists are the
spec; the prompt only explains the buckets.

Any change here changes the cache key, so old cached answers are not reused for a different prompt.
"""
from __future__ import annotations

from calibration.schemes.rubric import MetricTrait

SYSTEM_PROMPT = """You are a meticulous evaluator. You read a question, a response to it and a checklist of \
instructions, and you sort content into confusion-list buckets. You never judge overall quality, style or \
helpfulness: you only decide, item by item, what the checklist says. You answer with a single JSON object and \
nothing else."""

_TP_ONLY_RULES = """Buckets (this trait uses tp_only mode):
- "tp": excerpts of the response that correctly satisfy a TP instruction.
- "fn": TP instructions (copied verbatim) that the response does not satisfy.
- "fp": excerpts of the response that try to answer one of the checklist's slots but are wrong for it \
(not every extra sentence: only candidate matches that should not count).
- "tn": always an empty list in this mode."""

_FULL_MATRIX_RULES = """Buckets (this trait uses full_matrix mode):
- "tp": excerpts of the response that correctly satisfy a TP instruction.
- "fn": TP instructions (copied verbatim) that the response does not satisfy.
- "fp": excerpts of the response that match a TN instruction, i.e. content that should not be present.
- "tn": TN instructions (copied verbatim) whose content is correctly absent from the response."""

_FORMAT = """Rules:
- Excerpts in "tp" and "fp" must be copied character for character from the response (short, one claim each).
- Each response excerpt goes into at most one bucket; each instruction is satisfied by at most one "tp" excerpt.
- Answer with exactly this JSON shape and nothing else:
{"tp": ["..."], "fn": ["..."], "fp": ["..."], "tn": ["..."]}"""


def _numbered(items: tuple[str, ...]) -> str:
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1))


def user_prompt(trait: MetricTrait, question: str, response: str) -> str:
    parts = [f"Trait: {trait.name}"]
    if trait.description:
        parts.append(f"Scope: {trait.description}")
    parts.append(f"Question:\n<<<\n{question}\n>>>")
    parts.append(f"Response:\n<<<\n{response}\n>>>")
    parts.append(f"TP instructions (content that should be present):\n{_numbered(trait.tp_instructions)}")
    if trait.evaluation_mode == "full_matrix":
        parts.append(f"TN instructions (content that should NOT be present):\n{_numbered(trait.tn_instructions)}")
        parts.append(_FULL_MATRIX_RULES)
    else:
        parts.append(_TP_ONLY_RULES)
    parts.append(_FORMAT)
    return "\n\n".join(parts)


def build_messages(trait: MetricTrait, question: str, response: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user_prompt(trait, question, response)},
    ]
