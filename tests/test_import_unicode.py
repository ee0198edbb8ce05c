"""Offsets are code points: emoji, combining marks and right-to-left text keep their spans through import."""
from __future__ import annotations

import json
import unicodedata
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.io.imports import import_file
from app.io.problems import ImportErrors
from app.store import Project
from tests.jsonl_files import write_jsonl

CHECKER = "careful@2.0|gpt-4o"
# An emoji outside the BMP (2 UTF-16 units), a ZWJ family (7 code points, one glyph), a flag (2 regional
# indicators), decomposed "é" (e + U+0301), Hebrew and Arabic (RTL).
TEXT = ("Glow 🌟 like 👨‍👩‍👧 families in 🇫🇷! Cre\u0301me brûlée. "
        "שלום עולם — تخفيضات كبيرة الآن 50٪ — limited offer")
QUOTES = ["🌟", "👨‍👩‍👧", "🇫🇷", "Cre\u0301me", "שלום עולם", "تخفيضات كبيرة", "limited offer"]


def cp_span(text: str, quote: str) -> tuple[int, int]:
    start = text.index(quote)  # str.index counts code points
    return start, start + len(quote)


def write(path: Path, rows: list[dict]) -> Path:
    return write_jsonl(path, rows, ensure_ascii=False)  # non-ASCII text as UTF-8, not escapes


@pytest.fixture
def project(tmp_path: Path) -> Project:
    p = Project.create(tmp_path / "u.concord")
    yield p
    p.close()


def test_code_point_offsets_survive_import(project: Project, tmp_path: Path) -> None:
    gt = [{"start": s, "end": e, "quote": q, "rule": f"r{i}"} for i, q in enumerate(QUOTES) for s, e in [cp_span(TEXT, q)]]
    # The same spans as UTF-16 offsets (what a JavaScript or Qt producer might send) disagree with the quotes.
    utf16_start = len(TEXT[: TEXT.index("families")].encode("utf-16-le")) // 2
    assert utf16_start == TEXT.index("families") + 4
    rec = {"id": "u1", "text": TEXT, "ground_truth": gt,
           "predictions": {CHECKER: [{"quote": q, "rule": "by quote"} for q in QUOTES]}}
    report = import_file(project, write(tmp_path / "u.jsonl", [rec]))
    assert report.facts["violations"].grounding == {"offsets": len(QUOTES), "exact": len(QUOTES)}
    s = project.store("violations").violation_sample("u1")
    assert s is not None and s.text == TEXT
    for v, q in zip(s.ground_truth, QUOTES):
        assert (v.start, v.end) == cp_span(TEXT, q) and s.text[v.start:v.end] == q
    for v, q in zip(s.predictions[CHECKER], QUOTES):
        assert (v.start, v.end) == cp_span(TEXT, q), q  # located quotes get code-point offsets too

    bad = dict(rec, id="u2", ground_truth=[{"start": utf16_start, "end": utf16_start + 8, "quote": "families",
                                            "rule": "r"}], predictions={})
    with pytest.raises(ImportErrors) as exc:
        import_file(project, write(tmp_path / "utf16.jsonl", [bad]))
    (problem,) = exc.value.problems
    start = TEXT.index("families")
    assert problem.field == "ground_truth[0].quote"
    assert f"the quote occurs at {start}..{start + 8}" in problem.message


def test_normalization_is_not_applied(project: Project, tmp_path: Path) -> None:
    """A decomposed text stays decomposed: offsets into NFC would point elsewhere."""
    nfc = unicodedata.normalize("NFC", TEXT)
    assert nfc != TEXT
    start, end = cp_span(TEXT, "brûlée")
    rec = {"id": "n", "text": TEXT, "ground_truth": [{"start": start, "end": end, "rule": "r"}], "predictions": {}}
    import_file(project, write(tmp_path / "n.jsonl", [rec]))
    s = project.store("violations").violation_sample("n")
    assert s is not None and s.text == TEXT and s.text[s.ground_truth[0].start:s.ground_truth[0].end] == "brûlée"


def test_case_insensitive_location_keeps_original_offsets(project: Project, tmp_path: Path) -> None:
    """'İ' lower-cases to two code points; the located span must still index the original text."""
    text = "İstanbul deals: ÇOK UCUZ today 🌟 ΣΊΣΥΦΟΣ"
    rec = {"id": "c", "text": text, "ground_truth": [],
           "predictions": {CHECKER: [{"quote": "çok ucuz", "rule": "r"}, {"quote": "σίσυφος", "rule": "r"}]}}
    report = import_file(project, write(tmp_path / "c.jsonl", [rec]))
    assert report.facts["violations"].grounding == {"casefold": 2}
    preds = project.store("violations").violation_sample("c").predictions[CHECKER]  # type: ignore[union-attr]
    assert text[preds[0].start:preds[0].end] == "ÇOK UCUZ"
    assert text[preds[1].start:preds[1].end] == "ΣΊΣΥΦΟΣ"


unicode_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=60
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=unicode_text, data=st.data())
def test_any_span_of_any_text_round_trips(tmp_path: Path, text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    rec = {"id": "h", "text": text, "ground_truth": [{"start": start, "end": end, "quote": text[start:end], "rule": "r"}],
           "predictions": {}}
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(rec, ensure_ascii=data.draw(st.booleans())) + "\n", encoding="utf-8")
    db = tmp_path / f"h-{uuid.uuid4().hex}.concord"  # a fresh file per example: never delete a project file
    with Project.create(db) as p:
        import_file(p, path)
        s = p.store("violations").violation_sample("h")
        assert s is not None and s.text == text
        v = s.ground_truth[0]
        assert (v.start, v.end, v.quote) == (start, end, text[start:end])
