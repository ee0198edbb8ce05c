"""Every scheme's `label_items_many` (base.Capabilities, issue #28) is `label_items` of each row, as the ceiling
reads it (app.services.agreement.record_items): rows in order, items in label_items' order, equal categories, each
item's code one-to-one with its key; on the demo's records with the demo's label values, values changed, and
values label_items cannot read (no record, wrong types)."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.services.agreement import record_items
from app.store import Project
from calibration.schemes.base import capabilities, registry

DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo"
ODD = [None, True, 0, "0a", [[1]], {"0a": 1}, [], [None], ["0a", "0a"], [1.5], "x"]


def _schemes() -> list[str]:
    return [s.name for s in registry() if capabilities(s).label_items_many is not None]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.concord"
    assert main(["init", str(path)]) == 0
    files = sorted(DEMO.glob("*.jsonl"))
    for records in [f for f in files if not f.stem.endswith("labels")]:
        assert main(["import", str(path), str(records)]) == 0
    for labels in [f for f in files if f.stem.endswith("labels")]:
        assert main(["labels", "import", str(path), str(labels)]) == 0
    return path


def _rows(p: Project, scheme: str, rng: random.Random) -> list[tuple[str, str, str, Any]]:
    labels = [(r["sample_id"], r["unit"], r["kind"], r["value"]) for r in
              p.decisions.label_rows(list(registry().get(scheme).label_kinds), every_annotator=True)]
    ids = [r[0] for r in p.conn.execute("SELECT id FROM samples WHERE scheme = ?", (scheme,))]
    kinds = sorted(registry().get(scheme).label_kinds)
    units = sorted({u for _, u, _, _ in labels}) or [""]
    rows = []
    for _ in range(600):
        roll = rng.random()
        if roll < 0.4 and labels:
            rows.append(rng.choice(labels))
        elif roll < 0.8 and labels:  # a label's value on another sample, unit or kind
            _sid, unit, kind, value = rng.choice(labels)
            rows.append((rng.choice(ids + ["no-such-sample"]), rng.choice([unit, *units]), rng.choice([kind, *kinds]),
                         value))
        else:
            rows.append((rng.choice(ids), rng.choice(units), rng.choice(kinds), rng.choice(ODD)))
    return rows


@pytest.mark.parametrize("scheme", _schemes())
def test_label_items_many_is_label_items_of_each_row(demo: Path, scheme: str) -> None:
    rng = random.Random(scheme)
    with Project.open(demo) as p:
        s = registry().get(scheme)
        records = p.scheme_data.scheme_item_records(scheme)
        rows = _rows(p, scheme, rng)
    row, item, category = capabilities(s).label_items_many(records, rows)
    want = [(i, key, cat) for i, (sid, unit, kind, value) in enumerate(rows)
            for key, cat in record_items(s, records.get(sid), unit, kind, value).items()]
    assert len(want) > (20 if scheme == "addm" else 100)  # the addm demo labels a few businesses only
    assert [int(r) for r in row] == [w[0] for w in want]
    got_cats = [c.item() if hasattr(c, "item") else c for c in category]
    assert [repr(c) for c in got_cats] == [repr(w[2]) for w in want]
    code_of: dict[Any, Any] = {}
    key_of: dict[Any, Any] = {}
    for code, (_, key, _) in zip(item.tolist(), want):
        assert code_of.setdefault(key, code) == code and key_of.setdefault(code, key) == key
