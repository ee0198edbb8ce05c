"""CSV and Parquet import: one column per field, list/object cells as JSON, same samples as the JSONL form."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from app.io.imports import import_file
from app.io.problems import ImportErrors
from app.store import Project

CHECKER = "paraphraser@0.9|claude-3-haiku"
TEXTS = [
    "Zero sugar, zero guilt, 100% happiness 😋 in every can.",
    "Line one.\nLine two says: the #1 drink in Europe, guaranteed.",
    "Kein Zucker, keine Reue – jetzt kaufen!",
]


def records() -> list[dict[str, Any]]:
    out = []
    for i, text in enumerate(TEXTS):
        quote = text.split()[1]
        start = text.index(quote)
        out.append({
            "id": f"00{i}",
            "text": text,
            "ground_truth": [{"start": start, "end": start + len(quote), "quote": quote, "rule": "No absolute claims",
                              "category": "compliance"}],
            "predictions": {CHECKER: [{"quote": quote, "rule": "Avoid absolutes"}]},
            "split": "test" if i == 2 else "train",
            "meta": {"channel": "social", "i": i},
        })
    return out


def as_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    json_cols = ("ground_truth", "predictions", "meta")
    return pd.DataFrame([{k: (json.dumps(v, ensure_ascii=False) if k in json_cols else v) for k, v in r.items()}
                         for r in rows])


@pytest.fixture
def project(tmp_path: Path) -> Project:
    p = Project.create(tmp_path / "t.concord")
    yield p
    p.close()


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_csv_and_parquet_hold_the_same_samples_as_jsonl(project: Project, tmp_path: Path) -> None:
    rows = records()
    first = import_file(project, jsonl(tmp_path / "data.jsonl", rows))
    assert first.counts["violations"].added == 3
    stored = project.store("violations").violation_samples()
    as_table(rows).to_csv(tmp_path / "data.csv", index=False)
    as_table(rows).to_parquet(tmp_path / "data.parquet", index=False)
    for name in ("data.csv", "data.parquet"):
        report = import_file(project, tmp_path / name)
        assert (report.format, report.counts["violations"].unchanged, report.changed) == (name.split(".")[1], 3, False)
    assert project.store("violations").violation_samples() == stored
    assert [s.id for s in stored] == ["000", "001", "002"]  # CSV ids stay strings ("000", not 0)
    assert stored[1].text == TEXTS[1]  # a quoted multi-line cell


def test_csv_import_into_fresh_project(project: Project, tmp_path: Path) -> None:
    as_table(records()).to_csv(tmp_path / "fresh.csv", index=False)
    report = import_file(project, tmp_path / "fresh.csv", dataset="csv-set")
    assert report.counts["violations"].added == 3 and report.facts["violations"].grounding == {"offsets": 3, "exact": 3}
    s = project.store("violations").violation_sample("002")
    assert s is not None and s.split == "test" and s.predictions[CHECKER][0].quote == "Zucker,"
    assert project.samples.sample_row("002")["meta"] == {"channel": "social", "i": 2}  # type: ignore[index]
    assert project.samples.dataset("csv-set") is not None


def test_parquet_with_native_nested_columns(project: Project, tmp_path: Path) -> None:
    rows = records()
    for r in rows:
        del r["meta"]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "nested.parquet")
    report = import_file(project, tmp_path / "nested.parquet")
    assert report.counts["violations"].added == 3
    s = project.store("violations").violation_sample("001")
    assert s is not None and s.ground_truth[0].quote == "one." and s.ground_truth[0].category == "compliance"
    # Missing struct fields come back as nulls and mean "absent", so the prediction is still located by quote.
    assert s.predictions[CHECKER][0].start == TEXTS[1].index("one.")


def test_csv_problems_name_the_spreadsheet_row_and_column(project: Project, tmp_path: Path) -> None:
    df = as_table(records())
    df.loc[1, "ground_truth"] = "[{'start': 1}]"  # Python repr, not JSON
    df.loc[2, "predictions"] = json.dumps({CHECKER: [{"start": 0, "end": 999, "rule": "x"}]})
    path = tmp_path / "bad.csv"
    df.to_csv(path, index=False)
    with pytest.raises(ImportErrors) as exc:
        import_file(project, path)
    got = [str(p) for p in exc.value.problems]
    assert got[0].startswith(f"{path}:row 3: ground_truth: invalid JSON in this column")
    assert got[1] == (f'{path}:row 4: predictions["{CHECKER}"][0].end: 999 is past the end of the text '
                      f"(its length is {len(TEXTS[2])} code points)")
    assert len(got) == 2 and project.table_counts()["samples"] == 0


def test_missing_columns_are_one_problem_each(project: Project, tmp_path: Path) -> None:
    as_table(records()).drop(columns=["predictions"]).to_csv(tmp_path / "nopred.csv", index=False)
    with pytest.raises(ImportErrors) as exc:
        import_file(project, tmp_path / "nopred.csv")
    assert [str(p) for p in exc.value.problems] == [f"{tmp_path / 'nopred.csv'}: predictions: missing column"]
    pd.DataFrame({"name": ["x"], "value": [1]}).to_parquet(tmp_path / "other.parquet")
    with pytest.raises(ImportErrors) as exc:
        import_file(project, tmp_path / "other.parquet")
    msgs = [str(p) for p in exc.value.problems]
    assert any("needs the columns of one scheme's records" in m and "'text' (violations records)" in m
               and "'documents', 'question', 'response' (trace records)" in m for m in msgs)
    assert any(m.endswith("id: missing column") for m in msgs)


def test_rubric_csv(project: Project, tmp_path: Path) -> None:
    trait = {"name": "coverage", "evaluation_mode": "full_matrix", "metrics": ["recall", "specificity"],
             "tp_instructions": ["Mentions the price"], "tn_instructions": ["Claims it is free"]}
    df = pd.DataFrame([{"id": "r1", "question": "How much?", "response": "It costs 5 euros.",
                        "traits": json.dumps([trait]), "buckets": json.dumps({"coverage": {"tp": ["5 euros"]}})}])
    df.to_csv(tmp_path / "rubric.csv", index=False)
    report = import_file(project, tmp_path / "rubric.csv")
    assert report.counts["rubric"].added == 1
    assert project.store("rubric").get_trait("coverage")["tn_instructions"] == ["Claims it is free"]  # type: ignore[index]
    got = project.store("rubric").bucket_assignment("r1", "coverage", "import")
    assert got is not None and got["buckets"] == {"tp": ["5 euros"], "fn": [], "fp": [], "tn": []}
