"""Issue #28 (violations `evaluate`, its own part): each faster path gives exactly what the code it replaced gave, on
generated data. The old code is copied here verbatim as the reference."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from calibration.schemes.violations import Violation, ViolationSample
from calibration.schemes.violations.config import PRESETS
from calibration.schemes.violations.pairs import PairTable, build_pair_table

TEXT = "The cat sat on the mat. It was red and tall."
CHECKERS = ("c1@1|m", "c2@1|m", "c3@2|m")


def _samples(rng: np.random.Generator, n: int) -> list[ViolationSample]:
    def violations(k: int) -> tuple[Violation, ...]:
        return tuple(Violation(f"r{int(rng.integers(0, 3))}", 4 * j % 40, 4 * j % 40 + int(rng.integers(1, 6)))
                     for j in range(k))

    return [ViolationSample(f"s{i}", TEXT, violations(int(rng.integers(0, 4))),
                            {c: violations(int(rng.integers(0, 5))) for c in CHECKERS if rng.random() < 0.8})
            for i in range(n)]


def _labels(rng: np.random.Generator, table: PairTable, n: int) -> dict[tuple[str, str], dict[str, Any]]:
    """Resolved labels as `scheme_labels` gives them: matches (some empty, some on units the table lacks, pairs out of
    order, repeated, out of range), other kinds beside them, per-sample kinds under unit ''."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for _ in range(n):
        sid, unit = f"s{int(rng.integers(0, 230))}", str(rng.choice([*CHECKERS, "", "gone@1|m"]))
        kinds: dict[str, Any] = {}
        if rng.random() < 0.5:
            kinds["status"] = "accepted"
        if rng.random() < 0.85:
            kinds["matches"] = [[int(rng.integers(-1, 5)), int(rng.integers(-1, 6))] for _ in range(int(rng.integers(0, 5)))]
        elif rng.random() < 0.5:
            kinds["matches"] = None
        out[(sid, unit)] = kinds
    return out


def _old_human_groups(table: PairTable, labels: Any) -> tuple[list[tuple[int, int, int]], list[int]]:
    """calibration.schemes.violations.evaluation.human_groups before this change."""
    if not labels:
        return [], []
    index = {(str(s), str(c)): g for g, (s, c) in enumerate(zip(table.groups["sample_id"], table.groups["checker"]))}
    matches: list[tuple[int, int, int]] = []
    labeled: list[int] = []
    for (sid, unit), kinds in labels.items():
        g = index.get((str(sid), str(unit)))
        if g is None or kinds.get("matches") is None:
            continue
        labeled.append(g)
        matches.extend((g, int(a), int(b)) for a, b in kinds["matches"])
    return sorted(matches), sorted(labeled)


def _old_proposed_matches(table: PairTable, mask: Any) -> dict[tuple[str, str], dict[str, Any]]:
    """calibration.schemes.violations.evaluation.proposed_matches before this change (given the mask)."""
    out: dict[tuple[str, str], dict[str, Any]] = {
        (str(s), str(c)): {"matches": []} for s, c in zip(table.groups["sample_id"], table.groups["checker"])}
    keys = list(out)
    p = table.pairs.loc[mask]
    for g, gt, pred in zip(p["group"].to_numpy(), p["gt"].to_numpy(), p["pred"].to_numpy()):
        out[keys[int(g)]]["matches"].append([int(gt), int(pred)])
    for v in out.values():
        v["matches"].sort()
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_human_groups_and_their_leaderboard_equal_the_dict_lookup(seed: int) -> None:
    from calibration.schemes.violations.evaluation import (
        human_group_arrays,
        human_groups,
        human_leaderboard,
    )

    rng = np.random.default_rng(seed)
    table = build_pair_table(_samples(rng, 200), "jaccard")
    labels = _labels(rng, table, 500)
    want = _old_human_groups(table, labels)
    assert len(want[1]) > 100 and len(want[0]) > 200
    assert human_groups(table, labels) == want
    matches, labeled = human_group_arrays(table, labels)
    assert human_leaderboard(table, matches, labeled) == human_leaderboard(table, *want)
    assert human_groups(table, {}) == ([], []) and human_groups(table, {("s1", "nope"): {"matches": [[0, 0]]}}) == ([], [])


def test_human_groups_read_pairs_as_int_did() -> None:
    """Numbers JSON may give (floats, bools) are read as int() read them; a value that is not a pair fails as before."""
    from calibration.schemes.violations.evaluation import human_groups

    table = build_pair_table(_samples(np.random.default_rng(5), 30), "jaccard")
    sid, checker = table.groups["sample_id"][3], table.groups["checker"][3]
    labels = {(sid, checker): {"matches": [[1.0, True], [2, 0]]}}
    assert human_groups(table, labels) == _old_human_groups(table, labels)
    with pytest.raises(ValueError):
        human_groups(table, {(sid, checker): {"matches": [[1, 2, 3]]}})


@pytest.mark.parametrize("seed", [0, 1])
def test_proposed_matches_equal_the_per_pair_build(seed: int) -> None:
    from calibration.schemes.violations.evaluation import proposed_matches
    from calibration.schemes.violations.matching import match

    rng = np.random.default_rng(seed)
    table = build_pair_table(_samples(rng, 300), "jaccard")
    for name in ("std_match", "ha_match"):
        config = PRESETS[name].with_(embedding="jaccard")
        mask = match(table, config, method=config.matching)
        got = proposed_matches(table, config, config.matching, mask=mask)
        assert sum(map(len, (v["matches"] for v in got.values()))) > 100
        assert got == _old_proposed_matches(table, mask) and list(got) == list(_old_proposed_matches(table, mask))
        assert got == proposed_matches(table, config, config.matching)
    rand = rng.random(len(table.pairs)) < 0.4  # any mask, not only a matcher's
    assert proposed_matches(table, PRESETS["std_match"], "greedy", mask=rand) == _old_proposed_matches(table, rand)


def _old_unit_scores(uc: Any) -> list[tuple[str, str, int, int, int, float]]:
    """calibration.schemes.violations.evaluation.unit_scores before this change (given the unit counts)."""
    from calibration.schemes.violations.metrics import prf

    tp, fp, fn = (uc[c].to_numpy() for c in ("tp", "fp", "fn"))
    _, _, f1 = prf(tp, fp, fn)
    return list(zip(uc["sample_id"].astype(str).tolist(), uc["checker"].astype(str).tolist(),
                    tp.astype(np.int64).tolist(), fp.astype(np.int64).tolist(), fn.astype(np.int64).tolist(),
                    np.asarray(f1, dtype=float).tolist()))


def _stored(p: Any, ref: str) -> list[tuple[Any, ...]]:
    return p.conn.execute("SELECT unit_id, score, figures, typeof(score) FROM machine_scores WHERE config_ref = ? "
                          "ORDER BY unit_id", (ref,)).fetchall()


@pytest.mark.parametrize("seed", [0, 1])
def test_unit_scores_as_columns_read_and_store_as_the_rows_did(tmp_path: Any, seed: int) -> None:
    """`UnitScores` reads as the old rows (same values and types), and storing it gives the very rows and texts the
    rows gave, for every headline figure; stored once, the same scores write nothing, changed ones are written."""
    from app.store import Project
    from calibration.schemes.violations.evaluation import unit_scores
    from calibration.schemes.violations.metrics import unit_counts
    from calibration.unit_scores import UnitScores

    rng = np.random.default_rng(seed)
    samples = _samples(rng, 150)
    table = build_pair_table(samples, "jaccard")
    config = PRESETS["ha_match"].with_(embedding="jaccard")
    got, want = unit_scores(table, config, "greedy"), _old_unit_scores(unit_counts(table, config, method="greedy"))
    assert isinstance(got, UnitScores) and len(got) == len(want) > 300
    assert list(got) == want and got[:] == want and got[7] == want[7] and got[-1] == want[-1]
    assert [tuple(map(type, r)) for r in got] == [tuple(map(type, r)) for r in want]
    with Project.create(tmp_path / "p.concord") as p:
        p.store("violations").write_violation_samples(samples)
        for score in ("f1", "tp", "fn", "nope"):
            p.units.set_machine_scores(f"rows-{score}", want, score=score)
            p.units.set_machine_scores(f"cols-{score}", got, score=score)
            assert _stored(p, f"cols-{score}") == _stored(p, f"rows-{score}") != []
        changes = p.conn.total_changes
        p.units.set_machine_scores("cols-f1", unit_scores(table, config, "greedy"))
        assert p.conn.total_changes == changes  # the same scores again: nothing written
        bump = np.arange(len(got)) % 3 == 0  # some figures change, the last units are no longer scored
        other = UnitScores(*(c[:-5] for c in (got.sample_id, got.unit, got.tp + bump, got.fp, got.fn, got.f1 / 2)))
        p.units.set_machine_scores("cols-f1", other)
        p.units.set_machine_scores("rows-f1", list(other))
        assert _stored(p, "cols-f1") == _stored(p, "rows-f1") and len(_stored(p, "cols-f1")) == len(want) - 5


def test_unit_scores_digest_tells_rows_apart() -> None:
    """Equal digests only for equal rows: ids split differently, a value's type or sign, the headline's name."""
    from calibration.unit_scores import UnitScores

    def scores(sids: list[Any], units: list[str], f1: list[float], tp: int = 1) -> UnitScores:
        from calibration.schemes.violations.columns import object_array

        n = len(sids)
        return UnitScores(object_array(sids), object_array(units), [tp] * n, [0] * n, [0] * n, f1)

    base = scores(["a\x00", "b"], ["u", "u"], [0.5, 0.0])
    digests = {base.digest("f1"), scores(["a", "\x00b"], ["u", "u"], [0.5, 0.0]).digest("f1"),
               scores(["a\x00", "b"], ["u", "u"], [0.5, -0.0]).digest("f1"), base.digest("tp"),
               scores(["a\x00", "b"], ["u", "u"], [0.5, 0.0], tp=2).digest("f1"),
               scores(["a\x00", "b"], ["u", "uu"], [0.5, 0.0]).digest("f1")}
    assert len(digests) == 6 and base.digest("f1") == scores(["a\x00", "b"], ["u", "u"], [0.5, 0.0]).digest("f1")
    assert scores([1, "b"], ["u", "u"], [0.5, 0.0]).digest("f1") is None  # not str: digested row by row


def _old_distinct_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """calibration.agreement._distinct_rows before this change (column by column)."""
    import pandas as pd

    codes = np.zeros(x.shape[0], dtype=np.int64)
    for column in x.T:
        col_codes, distinct = pd.factorize(column)
        codes, _ = pd.factorize(codes * len(distinct) + col_codes)
    rows = np.empty((int(codes.max(initial=-1)) + 1, x.shape[1]), dtype=x.dtype)
    rows[codes] = x
    return rows, codes


def _matrices() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    counts = rng.poisson(0.7, (3000, 40))
    zeros = counts.astype(np.float64)
    zeros[5, 3] = -0.0  # equal to 0.0, other bits
    nan = counts.astype(np.float64)
    nan[[7, 9], 2] = np.nan
    return [counts, counts.astype(np.float64), zeros, nan, counts.astype(np.int8), rng.random((500, 3)),
            np.repeat(counts[:4], 50, axis=0), counts[:, :1], np.zeros((0, 4)), np.zeros((6, 0))]


@pytest.mark.parametrize("i", range(10))
def test_distinct_rows_by_row_hashes_equal_them_column_by_column(i: int) -> None:
    from calibration.agreement import _distinct_rows

    x = _matrices()[i]
    (rows, codes), (want_rows, want_codes) = _distinct_rows(x), _old_distinct_rows(x)
    assert np.array_equal(codes, want_codes) and codes.dtype == want_codes.dtype
    assert rows.dtype == want_rows.dtype and rows.shape == want_rows.shape
    assert np.array_equal(rows.view(np.uint8), want_rows.view(np.uint8))  # every bit (-0.0 and NaN included)


def test_distinct_rows_by_hash_only_where_bits_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hash path serves 64-bit numbers without NaN or -0.0; a collision hands over to the column path."""
    from calibration import agreement

    counts, as_float, zeros, nan, small = _matrices()[:5]
    assert agreement._hashed_rows(counts) is not None and agreement._hashed_rows(as_float) is not None
    assert agreement._hashed_rows(zeros) is None and agreement._hashed_rows(nan) is None
    assert agreement._hashed_rows(small) is None
    monkeypatch.setattr(agreement, "_HASH_CHUNK", 64)  # several chunks
    assert np.array_equal(agreement._hashed_rows(counts)[1], _old_distinct_rows(counts)[1])
    monkeypatch.setattr(agreement.np.random, "default_rng", lambda seed: _Zero())  # every row hashes to 0
    assert agreement._hashed_rows(counts) is None
    assert np.array_equal(agreement._distinct_rows(counts)[1], _old_distinct_rows(counts)[1])


class _Zero:
    def integers(self, low: int, high: int, size: int, dtype: Any) -> np.ndarray:
        return np.zeros(size, dtype=dtype)


@pytest.mark.parametrize("seed", [0, 3])
def test_evaluate_many_equals_each_config_evaluated_alone(seed: int) -> None:
    """The configs' counts written into one matrix give every figure and interval end evaluate() gives alone."""
    from calibration.schemes.violations.metrics import evaluate, evaluate_many

    table = build_pair_table(_samples(np.random.default_rng(seed), 400), "jaccard")
    configs = [PRESETS[n].with_(embedding="jaccard") for n in ("std_match", "ha_match")]
    got = evaluate_many([(table, c, m) for c in configs for m in ("greedy", "optimal")], n_boot=200, seed=seed)
    want = [evaluate(table, c, m, n_boot=200, seed=seed) for c in configs for m in ("greedy", "optimal")]
    assert repr([g[0] for g in got]) == repr(want)


def _old_count(pair_table: PairTable, matched: np.ndarray) -> Any:
    """calibration.schemes.violations.metrics.count before this change (np.add.at)."""
    import pandas as pd

    from calibration.schemes.violations.metrics import Counts, _category_names

    groups, pairs = pair_table.groups, pair_table.pairs
    G = len(groups)
    matched = np.asarray(matched, dtype=bool)
    mg = pairs["group"].to_numpy(dtype=np.int64)[matched]
    tp = np.bincount(mg, minlength=G).astype(np.int64)
    n_gt = groups["n_gt"].to_numpy(dtype=np.int64)
    n_pred = groups["n_pred"].to_numpy(dtype=np.int64)
    units = groups.copy()
    units["tp"], units["fp"], units["fn"] = tp, n_pred - tp, n_gt - tp
    s_idx, samples = pd.factorize(groups["sample_id"], sort=False)
    c_idx, checkers = pd.factorize(groups["checker"], sort=True)
    S, C = len(samples), len(checkers)
    by_sample = np.zeros((S, C, 3), dtype=np.int64)
    run_on = np.zeros((S, C), dtype=bool)
    if G:
        np.add.at(by_sample, (s_idx, c_idx), units[["tp", "fp", "fn"]].to_numpy(dtype=np.int64))
        run_on[s_idx, c_idx] = True
    gt_hit = np.zeros(len(pair_table.gt_items), dtype=bool)
    pred_hit = np.zeros(len(pair_table.pred_items), dtype=bool)
    gt_hit[pair_table.gt_offsets[mg] + pairs["gt"].to_numpy(dtype=np.int64)[matched]] = True
    pred_hit[pair_table.pred_offsets[mg] + pairs["pred"].to_numpy(dtype=np.int64)[matched]] = True
    gcat, pcat = (_category_names(pair_table.gt_items["category"]), _category_names(pair_table.pred_items["category"]))
    codes, categories = pd.factorize(np.concatenate([gcat, pcat]), sort=True)
    gk, pk = codes[: gcat.size], codes[gcat.size :]
    K = len(categories)
    by_cat = np.zeros((S, C, K, 3), dtype=np.int64)
    gg = pair_table.gt_items["group"].to_numpy(dtype=np.int64)
    pg = pair_table.pred_items["group"].to_numpy(dtype=np.int64)
    np.add.at(by_cat, (s_idx[gg[gt_hit]], c_idx[gg[gt_hit]], gk[gt_hit], 0), 1)
    np.add.at(by_cat, (s_idx[pg[~pred_hit]], c_idx[pg[~pred_hit]], pk[~pred_hit], 1), 1)
    np.add.at(by_cat, (s_idx[gg[~gt_hit]], c_idx[gg[~gt_hit]], gk[~gt_hit], 2), 1)
    return Counts(units, [str(s) for s in samples], [str(c) for c in checkers], [str(k) for k in categories],
                  by_sample, by_cat, run_on)


def _categorised(rng: np.random.Generator, n: int) -> list[ViolationSample]:
    """Samples whose violations carry categories (some missing, some differing in case and spaces)."""
    cats = ["Health", " health ", "Legal", None, "tone"]
    out = []
    for s in _samples(rng, n):
        def cat(vs: tuple[Violation, ...]) -> tuple[Violation, ...]:
            return tuple(Violation(v.rule, v.start, v.end, category=cats[int(rng.integers(0, 5))]) for v in vs)

        out.append(ViolationSample(s.id, s.text, cat(s.ground_truth), {c: cat(vs) for c, vs in s.predictions.items()}))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_count_equals_its_add_at_formulation(seed: int) -> None:
    from calibration.schemes.violations.metrics import count

    rng = np.random.default_rng(seed)
    table = build_pair_table(_categorised(rng, 300), "jaccard")
    for matched in (rng.random(len(table.pairs)) < 0.3, np.zeros(len(table.pairs), dtype=bool)):
        got, want = count(table, matched), _old_count(table, matched)
        assert got.by_sample_cat.sum() > 100 and len(got.categories) >= 3
        for f in ("samples", "checkers", "categories"):
            assert getattr(got, f) == getattr(want, f)
        for f in ("by_sample", "by_sample_cat", "run_on"):
            assert np.array_equal(getattr(got, f), getattr(want, f)) and getattr(got, f).dtype == getattr(want, f).dtype
        assert got.units.equals(want.units)


def test_the_store_still_imports_without_numpy() -> None:
    """Machine scores as columns are recognised without putting numpy on `import app.store`'s path."""
    import subprocess
    import sys
    from pathlib import Path

    code = "import sys, app.store; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "False"


def _blocks(kind: str) -> list[np.ndarray]:
    rng = np.random.default_rng(len(kind))
    few = [rng.poisson(0.3, (4000, 12)), rng.poisson(0.1, (4000, 30)), rng.poisson(0.2, (4000, 0))]
    if kind == "few":  # per-sample counts: few distinct rows (the multinomial branch)
        return few
    if kind == "many":  # mostly distinct rows (resample_sums' other branches)
        return [rng.integers(0, 1000, (300, 4)), rng.integers(0, 1000, (300, 3))]
    if kind == "float":  # a NaN: the column-by-column path
        out = [few[0].astype(np.float64), few[1]]
        out[0][3, 1] = np.nan
        return out
    return [np.zeros((0, 3), dtype=np.int64), np.zeros((0, 2), dtype=np.int64)]


@pytest.mark.parametrize("kind", ["few", "many", "float", "empty"])
def test_resample_sums_of_blocks_equal_those_of_the_joined_matrix(kind: str) -> None:
    from calibration.agreement import resample_sums, resample_sums_blocks

    blocks = _blocks(kind)
    want = resample_sums(np.hstack(blocks).astype(np.float64), 300, 5, 64)
    got = resample_sums_blocks(blocks, 300, 5, 64)
    assert got.shape == want.shape and np.array_equal(got, want, equal_nan=True)
    assert kind == "empty" or want.any()


def test_resample_sums_of_blocks_after_a_collision(monkeypatch: pytest.MonkeyPatch) -> None:
    from calibration import agreement

    blocks = _blocks("few")
    want = agreement.resample_sums(np.hstack(blocks).astype(np.float64), 200, 1)
    monkeypatch.setattr(agreement.np.random, "default_rng", _collide_then(agreement.np.random.default_rng))
    assert np.array_equal(agreement.resample_sums_blocks(blocks, 200, 1), want)


def _collide_then(real: Any) -> Any:
    """default_rng whose first generator hashes every row to 0 (a collision everywhere), then the real ones."""
    calls = []

    def rng(seed: Any = None) -> Any:
        calls.append(seed)
        return _Zero() if len(calls) == 1 else real(seed)

    return rng


def test_proposed_matches_share_one_value_per_distinct_list() -> None:
    """Units with the same matches get one (read-only) value; its lists are each unit's pairs sorted."""
    from calibration.schemes.violations.evaluation import proposed_matches
    from calibration.schemes.violations.matching import match

    rng = np.random.default_rng(7)
    table = build_pair_table(_samples(rng, 400), "jaccard")
    config = PRESETS["std_match"].with_(embedding="jaccard")
    mask = match(table, config, method="greedy")
    got = proposed_matches(table, config, "greedy", mask=mask)
    by_list: dict[str, Any] = {}
    for value in got.values():
        assert by_list.setdefault(repr(value["matches"]), value) is value
        assert value["matches"] == sorted(value["matches"])
    assert 1 < len(by_list) < len(got) / 4
    assert got == _old_proposed_matches(table, mask)


@pytest.mark.parametrize("base", [2, 7, 2**31])
def test_distinct_rows_by_number_equal_numpys_unique(base: int) -> None:
    """Rows read as numbers (or sorted when they would not fit) give the distinct rows and each row's index."""
    from calibration.schemes.violations.evaluation import _distinct_rows

    rng = np.random.default_rng(base)
    for k in (0, 1, 2, 3, 5):
        rows = rng.integers(0, min(base, 4), size=(500, k))
        inverse, distinct = _distinct_rows(rows, base)
        assert len({tuple(r) for r in distinct.tolist()}) == len(distinct) == len(np.unique(rows, axis=0))
        assert np.array_equal(distinct[inverse], rows)
