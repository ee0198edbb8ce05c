"""A chat model's JSON answer, read the one way every LLM annotator reads it (rubric buckets, TRACe labels).

Models wrap JSON in a Markdown fence now and then; the fence is dropped. The messages name what is wrong, for the
run's failure record.
"""
from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def answer_json(content: str | None, error: type[Exception] = ValueError) -> Any:
    """The JSON value of an answer, or `error(message)`: empty answer, or not valid JSON (with line and column)."""
    if content is None or not content.strip():
        raise error("empty answer")
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:  # (a model's answer is data too: nesting beyond the interpreter's stack is refused)
        raise error("not valid JSON (nested too deeply to read)") from None
