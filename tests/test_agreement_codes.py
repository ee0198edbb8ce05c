"""`concord agreement`'s item tables as integer codes (app.services.agreement_codes, issue #28) give every figure and
interval end the row tables (`agreement.tables`, `agreement.pooled`) give, per kind and pooled, on generated projects
of each scheme and of several schemes together (some units labeled by one annotator only)."""
from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from app.cli import main
from app.services.agreement import collect_labels, json_finite, pooled, tables
from app.services.agreement_codes import coded_tables, pooled_codes
from app.store import Project
from calibration.annotators import item_agreements
from tests.test_ceiling_columns import _bench


def _project(tmp_path: Path, schemes: tuple[str, ...], seed: int) -> Path:
    path = tmp_path / "p.concord"
    assert main(["init", str(path)]) == 0
    bench = _bench()
    rng = random.Random(seed)
    for scheme in schemes:
        folder = tmp_path / scheme
        folder.mkdir()
        records, labels = bench.write_inputs(scheme, 30, folder, seed)
        lines = labels.read_text(encoding="utf-8").splitlines()
        labels.write_text("".join(f"{x}\n" for x in lines if '"annotator": "ana"' in x or rng.random() < 0.6),
                          encoding="utf-8")
        assert main(["import", str(path), str(records)]) == 0
        assert main(["labels", "import", str(path), str(labels)]) == 0
    return path


@pytest.mark.parametrize("schemes", [("violations",), ("rubric",), ("trace",), ("rgb",), ("addm",), ("judge",),
                                     ("violations", "trace", "rgb"), ("rubric", "addm", "judge")])
def test_coded_tables_give_the_row_tables_figures(tmp_path: Path, schemes: tuple[str, ...]) -> None:
    with Project.open(_project(tmp_path, schemes, len(schemes))) as p:
        scope = collect_labels(p)
        rows, spans = tables(p, scope=scope)
        coded, coded_spans = coded_tables(scope)
    assert coded_spans == spans and sorted(coded) == sorted(rows)
    assert sum(len(t) for t in coded.values()) == sum(len(r) for r in rows.values()) > 50
    keys = sorted(rows)
    want = item_agreements([rows[k] for k in keys] + [pooled(rows)], n_boot=200, seed=7)
    got = item_agreements([coded[k] for k in keys] + [pooled_codes(coded)], n_boot=200, seed=7)
    assert repr(json_finite(got)) == repr(json_finite(want))


def test_category_codes_keep_apart_what_the_names_keep_apart() -> None:
    import numpy as np

    from app.services.agreement_codes import category_codes

    values = [True, 1, "1", 1.0, None, [1], [1], {"a": 1}, False, 0, float("nan"), True]
    codes, distinct = category_codes(np.array(values, dtype=object))
    named = [None if c < 0 else repr(distinct[c]) for c in codes]
    assert named == [None if v is None or (isinstance(v, float) and math.isnan(v)) else repr(v) for v in values]
    assert [repr(d) for d in distinct] == ["True", "1", "'1'", "1.0", "[1]", "{'a': 1}", "False", "0"]
    codes, distinct = category_codes(np.array([1, 0, 1]))
    assert list(codes) == [0, 1, 0] and distinct == [1, 0] and type(distinct[0]) is int
