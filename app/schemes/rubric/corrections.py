"""The rubric scheme's correction: a trait's buckets (tp/fn/fp/tn) as an app.corrections.SetLabels command."""
from __future__ import annotations

from app.corrections import SetLabels
from app.store import Change


def set_buckets(sample_id: str, trait: str, buckets: dict[str, list[str]], status: str = "corrected", text: str = "edit buckets") -> SetLabels:
    clean = {k: list(buckets.get(k, [])) for k in ("tp", "fn", "fp", "tn")}
    return SetLabels((Change(sample_id, trait, "buckets", clean), Change(sample_id, trait, "status", status)), text)
