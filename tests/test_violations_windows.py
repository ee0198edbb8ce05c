"""Issue #28 item 5: violations `evaluate` over windows of samples gives exactly what the whole project's pair table
gave: every figure and interval end, the humans' figures, the per-unit scores it saves and the matcher's decisions
it hands the human ceiling. The reference is the evaluate_report before windows, copied here."""
from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.store import Change
from calibration.schemes.base import Report
from calibration.schemes.violations import evaluation
from calibration.schemes.violations.columns import ColumnWindows, ViolationColumns
from calibration.schemes.violations.evaluation import (
    configs_from,
    evaluate_report,
    human_group_arrays,
    human_leaderboard,
    leaderboard_table,
    pair_table,
    proposed_matches,
    unit_scores,
)
from calibration.schemes.violations.metrics import evaluate_many
from calibration.schemes.violations.tally import Tally
from tests.test_violations_columns import generated, make


def _old_report(records: Any, labels: Any, options: dict[str, Any]) -> Report:
    """evaluation.evaluate_report before windows (verbatim but for names)."""
    samples = records if isinstance(records, ViolationColumns) else [getattr(r, "sample", r) for r in records]
    configs = configs_from(options)
    n_boot, seed = int(options.get("n_boot", 1000)), int(options.get("seed", 0))
    save = options.get("save_scores")
    tables: dict[str, Any] = {}
    results: dict[str, Any] = {}
    human: dict[str, Any] | None = None
    for config in configs:
        if config.embedding not in tables:
            tables[config.embedding] = pair_table(samples, config.embedding, options)
    methods = [options.get("matching") or c.matching for c in configs]
    done = [(result, mask, counts.units) for result, mask, counts in
            evaluate_many([(tables[c.embedding], c, m) for c, m in zip(configs, methods)], n_boot=n_boot, seed=seed)]
    for config, method, (result, mask, units) in zip(configs, methods, done):
        table = tables[config.embedding]
        results[config.name] = result
        if save is not None:
            save(config.ref, unit_scores(table, config, method, units=units))
        if options.get("machine_decisions") is not None and config is configs[0]:
            options["machine_decisions"](config.ref, proposed_matches(table, config, method, mask=mask))
        if human is None:
            human = human_leaderboard(table, *human_group_arrays(table, labels))
    human = human or {}
    first = next(iter(results.values()))
    notes = ("human F1: F1 from the humans' own matches on the units they labeled.",) if human else ()
    return Report("violations", (leaderboard_table(results, human),),
                  {"checkers": first["checkers"], "configs": results, "human": human}, notes)


def _repeated(n: int) -> list[Any]:
    """`generated` samples repeated under new ids: few classes of per-sample counts (the bootstrap draws class sizes)."""
    base = generated(20, seed=9)
    return [replace(base[i % 20], id=f"s{i:03d}") for i in range(n)]


def _labels(rng: random.Random, n: int) -> dict[tuple[str, str], dict[str, Any]]:
    """Resolved labels as `scheme_labels` gives them: matches (some on units the table lacks), other kinds."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for _ in range(3 * n):
        sid, unit = f"s{rng.randrange(0, n + 5):03d}", rng.choice(["a@2|m", "b@1|m", "c@1|m", "", "gone@1|m"])
        kinds: dict[str, Any] = {"status": "accepted"} if rng.random() < 0.5 else {}
        if rng.random() < 0.8:
            kinds["matches"] = [[rng.randrange(0, 4), rng.randrange(0, 4)] for _ in range(rng.randrange(0, 3))]
        out[(sid, unit)] = kinds
    return out


def _run(report: Any, records: Any, labels: Any, options: dict[str, Any]) -> tuple[Any, ...]:
    saved: list[tuple[str, list[Any]]] = []
    decided: dict[Any, Any] = {}
    opts = {**options, "save_scores": lambda ref, rows: saved.append((ref, list(rows))),
            "machine_decisions": lambda ref, d: decided.update(d)}
    got = report(records, labels, opts)
    return got.data, got.tables, got.notes, saved, decided


@pytest.mark.parametrize(("n", "window", "n_boot", "few"), [(40, 7, 300, False), (40, 1, 0, False), (400, 37, 200, False),
                                                         (400, 400, 200, False), (900, 64, 200, True)])
def test_windows_give_the_whole_tables_figures(monkeypatch: pytest.MonkeyPatch, n: int, window: int, n_boot: int,
                                               few: bool) -> None:
    samples = _repeated(n) if few else generated(n, seed=n + window)
    labels = _labels(random.Random(window), n)
    options = {"embedding": "jaccard", "n_boot": n_boot, "seed": 4, "presets": ["std_match", "ha_match"]}
    want = _run(_old_report, samples, labels, options)
    monkeypatch.setattr(evaluation, "WINDOW", window)
    got = _run(evaluate_report, samples, labels, options)
    assert got[0] == want[0] and got[1:3] == want[1:3]
    assert got[3] == want[3] and [ref for ref, _ in got[3]] == [c.ref for c in configs_from(options)]
    assert got[4] == want[4] and len(got[4]) > 0
    assert want[0]["human"] and want[0]["checkers"]


def test_both_bootstrap_branches_are_met() -> None:
    """Few classes of per-sample counts (class sizes drawn) and many (the matrix resampled): the windows' tally
    takes the branch the whole matrix took (resample_sums_blocks), checked through the figures above."""
    from calibration.agreement import MULTINOMIAL_SHARE

    for samples, many in ((generated(400, seed=1), True), (_repeated(900), False)):
        tally = Tally(1)
        table = pair_table(samples, "jaccard", {})
        config = configs_from({"presets": ["std_match"]})[0]
        from calibration.schemes.violations.matching import match
        from calibration.schemes.violations.metrics import count

        tally.add([count(table, match(table, config))])
        _, _, sample_class, rows = tally.layout()
        assert (len(rows) * MULTINOMIAL_SHARE > sample_class.size) is many


def test_store_windows_give_the_whole_projects_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's windows (by sample rowid, the curated ground truth of each window's samples) evaluate as its one
    window of every sample, and equal the columns of `violation_columns` window by window."""
    with make(tmp_path / "p.concord") as p:
        p.decisions.record("ben", [Change("s003", "b@1|m", "matches", [[0, 0]]), Change("s009", "a@2|m", "matches", [])])
        store = p.store("violations")
        windows = store.violation_windows()
        labels = p.scheme_data.scheme_labels("violations")
        options = {"embedding": "jaccard", "n_boot": 120}
        whole = _run(_old_report, store.violation_columns(), labels, options)
        monkeypatch.setattr(evaluation, "WINDOW", 9)
        assert _run(evaluate_report, windows, labels, options) == whole
        parts = list(windows.windows(9))
        assert len(parts) == 7 and sum(len(w.sample_ids) for w in parts) == 60
        joined = store.violation_columns()
        assert np.concatenate([w.sample_ids for w in parts]).tolist() == joined.sample_ids.tolist()
        assert [len(ViolationColumns.window(joined, lo, lo + 9)) for lo in range(0, 60, 9)] == [len(w) for w in parts]
        assert [w.sample_ids.tolist() for w in ColumnWindows.of(joined).windows(None)] == [joined.sample_ids.tolist()]


def test_windows_after_a_hash_collision_give_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """A window whose rows' hashes collide (never seen) finds its classes column by column: the same figures."""
    from calibration import agreement

    samples, labels = _repeated(300), _labels(random.Random(2), 300)
    options = {"embedding": "jaccard", "n_boot": 100, "seed": 1}
    want = _run(_old_report, samples, labels, options)
    monkeypatch.setattr(evaluation, "WINDOW", 41)
    monkeypatch.setattr(agreement, "hashed_block_rows", lambda blocks: None)
    assert _run(evaluate_report, samples, labels, options) == want


def _old_digest(scores: Any, score: str) -> str | None:
    """UnitScores.digest before it fed the texts a chunk at a time (verbatim)."""
    import hashlib

    h = hashlib.blake2b(b"UnitScores/1\x00" + repr(score).encode(), digest_size=16)
    h.update(len(scores).to_bytes(8, "little"))
    for texts in (scores.sample_id, scores.unit):
        try:
            joined = "\x00".join(texts.tolist())
        except TypeError:
            return None
        encoded = joined.encode("utf-8", "surrogatepass")
        h.update(len(encoded).to_bytes(8, "little"))
        h.update(encoded)
        h.update(np.fromiter(map(len, texts.tolist()), dtype=np.int64, count=len(texts)).tobytes())
    for numbers in (scores.tp, scores.fp, scores.fn, scores.f1):
        h.update(np.ascontiguousarray(numbers).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("chunk", [1, 3, 7, 1 << 16])
def test_unit_scores_digest_in_chunks_is_the_whole_texts(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    import calibration.unit_scores as unit_scores_module
    from calibration.schemes.violations.columns import object_array
    from calibration.unit_scores import UnitScores

    monkeypatch.setattr(unit_scores_module, "_DIGEST_CHUNK", chunk)
    rng = random.Random(chunk)
    alphabet = ["a", "b", "\x00", "é", "\ud800", "名", ""]
    for n in (0, 1, 2, 5, 17, 40):
        ids = object_array(["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 4))) for _ in range(n)])
        units = object_array([rng.choice(["c@1|m", "ä@2|m", "x\x00"]) for _ in range(n)])
        counts = [np.array([rng.randrange(0, 4) for _ in range(n)], dtype=np.int64) for _ in range(3)]
        scores = UnitScores(ids, units, *counts, np.array([rng.random() for _ in range(n)]))
        assert scores.digest("f1") == _old_digest(scores, "f1")
    bad = UnitScores(object_array(["a", 3]), object_array(["u", "v"]), [1, 1], [0, 0], [0, 0], [1.0, 1.0])
    assert bad.digest("f1") is None and _old_digest(bad, "f1") is None


def test_store_windows_read_one_snapshot(tmp_path: Path) -> None:
    """A write by another connection between two windows is not seen by the later windows (one read transaction),
    and the transaction ends with the last window, so evaluate may write its scores after."""
    import sqlite3

    with make(tmp_path / "p.concord") as p:
        windows = p.store("violations").violation_windows(curated=False).windows(20)
        first = next(windows)
        assert p.conn.in_transaction
        other = sqlite3.connect(tmp_path / "p.concord")
        other.execute("DELETE FROM violations WHERE sample_id >= 's040'")
        other.commit()
        rest = list(windows)
        assert not p.conn.in_transaction
        other.close()
        seen = sum(len(w) for w in [first, *rest])
        assert seen > sum(len(w) for w in p.store("violations").violation_windows(curated=False).windows(20))
