"""FaithBench's annotators' spans as violations ground truth (issue #26 item 2): `concord import P batch_N.json`
also makes each summary a violations sample `<judge id>/spans` whose ground truth per annotator is that annotator's
spans (label lines, as the Label Studio import writes them), so `concord agreement --scheme violations` compares
the annotators' spans. The files are written here in FaithBench's shape, never the real data."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.store import Project
from calibration.schemes.judge import faithbench as fb
from calibration.schemes.violations.curation import spans_to_violations

S0 = "The council approved 40 new homes on Monday after a long debate."
S1 = "Rain fell in the north; the river rose by two metres overnight."
S2 = "A café in Zürich sold 300 cakes 🎂 on Friday, its owner said."


def ann(name: str, start: int, end: int, label: list[str], text: str, quote: str | None = None,
        note: str | None = "checked") -> dict[str, Any]:
    """One FaithBench annotation; `quote` (summary_span) defaults to the text at the offsets."""
    return {"annot_id": 1, "annotator_id": "x", "annotator_name": name, "label": label, "note": note,
            "summary_span": text[start:end] if quote is None else quote, "summary_start": start, "summary_end": end,
            "source_span": None, "source_start": None, "source_end": None}


def sample(i: int, summary: str, annotations: list[dict[str, Any]]) -> dict[str, Any]:
    return {"sample_id": i, "source": f"Article {i}.", "summary": summary, "annotations": annotations,
            "metadata": {"summarizer": "m/x", "raw_sample_id": 100 + i, "hhem-2.1": 0.4, "gpt_4o": 1}}


def batch() -> dict[str, Any]:
    """ana and bo mark sample 0 (one span the same, one bo's own), ana marks sample 2 (after an emoji, so the
    offsets are code points, not UTF-16 units); nobody marks sample 1."""
    cakes = S2.index("300 cakes")
    return {"samples": [
        sample(0, S0, [ann("ana", 21, 23, ["Unwanted", "Unwanted.Intrinsic"], S0),
                       ann("bo", 21, 23, ["Unwanted", "Unwanted.Intrinsic"], S0),
                       ann("bo", 37, 43, ["Questionable", "Unwanted", "Unwanted.Extrinsic"], S0, note=None)]),
        sample(1, S1, []),
        sample(2, S2, [ann("ana", S2.index("Friday"), S2.index("Friday") + 6, ["Benign"], S2),
                       ann("bo", cakes, cakes + 9, ["Unwanted.Extrinsic"], S2)])]}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    path = tmp_path / "fb.concord"
    Project.create(path).close()
    return path


def test_each_annotators_spans_are_their_ground_truth(project: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    data = batch()
    f = _write(tmp_path / "batch_1.json", data)
    assert main(["import", str(project), str(f)]) == 0
    out = capsys.readouterr().out
    assert "violations samples: 3 added" in out and "judge samples: 3 added" in out
    with Project.open(project) as p:
        for i, s in enumerate(data["samples"]):
            judge, spans = p.samples.sample_row(f"faithbench-b1-{i}"), p.samples.sample_row(f"faithbench-b1-{i}/spans")
            assert judge is not None and spans is not None
            assert (judge["scheme"], spans["scheme"]) == ("judge", "violations")
            assert judge["meta"]["spans_sample"] == spans["id"] and spans["meta"]["judge_sample"] == judge["id"]
            assert spans["text"] == s["summary"] and spans["context"] == s["source"]
        truth = {a: {k[0]: v["ground_truth"] for k, v in p.scheme_data.scheme_labels("violations", annotator=a).items()}
                 for a in ("ana", "bo")}
    friday = S2.index("Friday")
    assert truth["ana"] == {
        "faithbench-b1-0/spans": [{"start": 21, "end": 23, "quote": "40", "rule": "Unwanted.Intrinsic",
                                   "category": "Unwanted", "explanation": "checked"}],
        "faithbench-b1-1/spans": [],  # marked nothing here, something elsewhere in the batch: "no violations"
        "faithbench-b1-2/spans": [{"start": friday, "end": friday + 6, "quote": "Friday", "rule": "Benign",
                                   "category": "Benign", "explanation": "checked"}]}
    # a parent label beside its child is dropped; the most serious category comes first and names the category
    assert truth["bo"]["faithbench-b1-0/spans"][1] == {"start": 37, "end": 43, "quote": "Monday",
                                                       "rule": "Unwanted.Extrinsic|Questionable",
                                                       "category": "Unwanted"}
    assert truth["bo"]["faithbench-b1-1/spans"] == []
    # span agreement between the two: the shared "40" matches, bo's "Monday" and the two spans of sample 2 do not
    assert main(["agreement", str(project), "--scheme", "violations", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["schemes"]["violations"]["ground_truth"]
    (pair,) = got["pairs"]
    assert (pair["a"], pair["b"], pair["n_samples"]) == ("ana", "bo", 3)
    assert (pair["matched"], pair["spans_a"], pair["spans_b"]) == (1, 2, 3)
    assert pair["f1"]["estimate"] == pytest.approx(2 * 1 / (2 + 3))


def test_who_read_a_sample_follows_the_batch(project: Path, tmp_path: Path) -> None:
    """cy marked something only in batch 2: no ground truth of theirs on batch 1's samples, [] on batch 2's others."""
    one = _write(tmp_path / "batch_1.json", batch())
    two = _write(tmp_path / "batch_2.json", {"samples": [sample(0, S1, [ann("cy", 0, 4, ["Unwanted"], S1)]),
                                                         sample(1, S0, [])]})
    assert main(["import", str(project), str(one)]) == 0
    assert main(["import", str(project), str(two)]) == 0
    with Project.open(project) as p:
        cy = {k[0]: v["ground_truth"] for k, v in p.scheme_data.scheme_labels("violations", annotator="cy").items()}
        ana = {k[0] for k in p.scheme_data.scheme_labels("violations", annotator="ana")}
    assert sorted(cy) == ["faithbench-b2-0/spans", "faithbench-b2-1/spans"] and cy["faithbench-b2-1/spans"] == []
    assert [v["quote"] for v in cy["faithbench-b2-0/spans"]] == ["Rain"]
    assert ana == {f"faithbench-b1-{i}/spans" for i in range(3)}


def test_a_quote_not_at_its_offsets_is_located_and_warned(project: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    data = batch()
    s0 = data["samples"][0]
    s0["annotations"][0]["summary_start"] += 1  # "0 " no longer holds the quote "40", which occurs at 21..23
    s0["annotations"][0]["summary_end"] += 1
    s0["annotations"].append(ann("ana", 0, 3, ["Unwanted"], S0, quote="not in the summary at all"))
    s0["annotations"].append(ann("ana", 5, 5, ["Benign"], S0))  # an empty span, nothing to locate
    f = _write(tmp_path / "batch_1.json", data)
    assert main(["import", str(project), str(f)]) == 0
    said = capsys.readouterr()
    text = said.out + said.err
    assert f"{f}:sample 1: annotations[0].summary_span:" in text and "placed at 21..23 (exact match)" in text
    assert f"{f}:sample 1: annotations[3].summary_span:" in text and "kept without offsets (ungrounded)" in text
    assert f"{f}:sample 1: annotations[4].summary_span: an empty span at 5..5" in text and "skipped" in text
    with Project.open(project) as p:
        mine = p.scheme_data.scheme_labels("violations", annotator="ana")[("faithbench-b1-0/spans", "")]["ground_truth"]
    assert [(v.get("start"), v.get("end"), v["quote"]) for v in mine] == [
        (21, 23, "40"), (None, None, "not in the summary at all")]


def test_reimport_changes_nothing(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path / "batch_1.json", batch())
    assert main(["import", str(project), str(f)]) == 0
    capsys.readouterr()
    with Project.open(project) as p:
        before = p.scheme_data.scheme_labels("violations")
    assert main(["import", str(project), str(f)]) == 0
    out = capsys.readouterr().out
    assert "nothing changed" in out and "violations samples: 0 added, 0 updated, 3 unchanged" in out
    with Project.open(project) as p:
        assert p.scheme_data.scheme_labels("violations") == before


@pytest.mark.parametrize(("field", "value", "named"), [
    ("summary_span", 7, "samples[2].annotations[1].summary_span"),
    ("summary_end", 10_000, "samples[2].annotations[1]: summary_start/summary_end"),
])
def test_bad_span_exits_2_naming_file_sample_field(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   field: str, value: Any, named: str) -> None:
    good = _write(tmp_path / "batch_1.json", batch())
    assert main(["import", str(project), str(good)]) == 0
    capsys.readouterr()
    before = _sha(project)
    data = batch()
    data["samples"][2]["annotations"][1][field] = value
    f = _write(tmp_path / "batch_2.json", data)
    assert main(["import", str(project), str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and named in err and "Traceback" not in err
    assert _sha(project) == before


def test_span_labels_keep_the_most_specific_most_serious_first() -> None:
    assert fb.span_labels(["Unwanted", "Unwanted.Intrinsic"]) == ["Unwanted.Intrinsic"]
    assert fb.span_labels(["Benign", "Unwanted", "Unwanted.Extrinsic", "Questionable"]) == [
        "Unwanted.Extrinsic", "Questionable", "Benign"]
    assert fb.span_labels(["Other", "Benign"]) == ["Benign", "Other"]
    assert fb.span_labels([]) == []


def test_a_spans_quote_and_note_become_the_violations() -> None:
    got, problems = spans_to_violations([{"start": 0, "end": 2, "label": ["Unwanted.Intrinsic"], "quote": "ab",
                                          "note": "why"}])
    assert problems == [] and got == [{"start": 0, "end": 2, "rule": "Unwanted.Intrinsic", "category": "Unwanted",
                                       "quote": "ab", "explanation": "why"}]
    got, problems = spans_to_violations([{"start": 0, "end": 2, "quote": 5}])
    assert got == [] and [p.field for p in problems] == ["spans[0].quote"]
