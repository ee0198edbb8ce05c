"""Grounding TP/FP excerpts in the response: offsets for highlighting and the ungrounded count."""
from __future__ import annotations

from calibration.schemes.rubric import ground_buckets

RESPONSE = "BCL2 is an anti-apoptotic gene that helps cells survive and is important in cancer. It is located on chromosome 1."


def test_exact_casefold_fuzzy_and_ungrounded() -> None:
    buckets = {
        "tp": ["BCL2 is an anti-apoptotic gene", "HELPS CELLS SURVIVE", "is importent in cancer"],
        "fn": ["States BCL2 is on chromosome 18"],  # instruction text: never grounded or counted
        "fp": ["BCL2 causes hair loss"],
        "tn": [],
    }
    report = ground_buckets(RESPONSE, buckets)
    by_text = {e.text: e for e in report.excerpts}
    assert [e.bucket for e in report.excerpts] == ["tp", "tp", "tp", "fp"]
    exact = by_text["BCL2 is an anti-apoptotic gene"]
    assert (exact.start, exact.end, exact.how) == (0, 30, "exact")
    cf = by_text["HELPS CELLS SURVIVE"]
    assert cf.how == "casefold" and RESPONSE[cf.start : cf.end] == "helps cells survive"
    fz = by_text["is importent in cancer"]
    assert fz.how == "fuzzy" and "important in cancer" in RESPONSE[fz.start : fz.end]
    bad = by_text["BCL2 causes hair loss"]
    assert not bad.grounded and bad.how == "ungrounded" and bad.start is None
    assert report.total == 4 and report.ungrounded == 1
    assert report.snippet_validity == 3 / 4
    assert [e.text for e in report.ungrounded_excerpts()] == ["BCL2 causes hair loss"]


def test_offsets_are_code_points_and_empty_report() -> None:
    text = "Émile 🧬 said: BCL2 matters."
    report = ground_buckets(text, {"tp": ["bcl2 matters"]})
    e = report.excerpts[0]
    assert text[e.start : e.end] == "BCL2 matters" and e.start == 14
    empty = ground_buckets(text, {"fn": ["Mentions BCL2"]})
    assert empty.total == 0 and empty.ungrounded == 0 and empty.snippet_validity is None


def test_threshold_controls_fuzzy_acceptance() -> None:
    buckets = {"tp": ["is importent in cancer"]}
    assert ground_buckets(RESPONSE, buckets, fuzzy_threshold=99.0).ungrounded == 1
    assert ground_buckets(RESPONSE, buckets, fuzzy_threshold=80.0).ungrounded == 0
