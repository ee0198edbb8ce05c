"""Agreement's bootstrap sums are exact counts (issue #28): the same replicates as the float product of the draw
counts, the same figures as the per-unit formulas, and the same bits whatever the BLAS thread count."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from calibration.agreement import percentile_interval, resample_counts
from calibration.annotators import (
    alpha_from_coincidence,
    fleiss_from_sums,
    boot_sums,
    boot_sums_shared,
    item_agreement,
    item_agreements,
    kappa_from_confusion,
)


def _float_product(x: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """The replicate sums as every draw counts them: draw counts times the rows, one replicate at a time."""
    return np.concatenate([np.stack([wr @ x.astype(float) for wr in w]) for w in resample_counts(len(x), n_boot, seed)])


@pytest.mark.parametrize("distinct", [3, 40, 400])
def test_counted_sums_equal_the_float_product(distinct: int) -> None:
    rng = np.random.default_rng(distinct)
    patterns = rng.integers(-3, 9, size=(distinct, 7))
    patterns[:, 2] = 0  # a column no sample uses
    x = patterns[rng.integers(0, distinct, size=500)]
    got = boot_sums(x.astype(np.int32), 130, seed=5)
    assert np.array_equal(got, _float_product(x, 130, 5))
    assert np.array_equal(boot_sums(x.astype(float), 130, seed=5), got)
    # shared draws: each matrix gets the sums its own call gives
    y = rng.integers(0, 4, size=(500, 3))
    both = boot_sums_shared([x, y], 130, seed=5)
    assert np.array_equal(both[0], got) and np.array_equal(both[1], boot_sums(y, 130, 5))


def test_non_integer_sums_keep_the_float_product() -> None:
    rng = np.random.default_rng(3)
    x = rng.random((200, 4))
    want = np.concatenate([w @ x for w in resample_counts(200, 70, 9)])
    assert np.array_equal(boot_sums(x, 70, 9), want)


def _old_per_unit(rows: list[tuple], n_boot: int, seed: int) -> tuple[list[float], list[float]]:
    """Fleiss' kappa and nominal alpha (estimate, low, high) the way they were summed before: per-unit fractions
    p_u, q_u and coincidences o_u summed per sample, then the draw counts times them."""
    samples = sorted({r[0] for r in rows})
    units = sorted({(r[0], r[1]) for r in rows})
    cats = sorted({r[3] for r in rows})
    k = len(cats)
    counts = np.zeros((len(units), k))
    for s, i, _a, c in rows:
        counts[units.index((s, i)), cats.index(c)] += 1
    m = counts.sum(1)
    keep = m >= 2
    per = np.zeros((len(samples), 2 + k + k * k))
    for u, (s, _i) in enumerate(units):
        if keep[u]:
            c = counts[u]
            o = (np.outer(c, c) - np.diag(c)) / (m[u] - 1)
            per[samples.index(s)] += np.concatenate([[(c * (c - 1)).sum() / (m[u] * (m[u] - 1)), 1.0], c / m[u],
                                                     o.ravel()])
    # the samples in the order the table first names them (the order the bootstrap draws index)
    order = list(dict.fromkeys(r[0] for r in rows))
    per = per[[samples.index(s) for s in order]]

    def stats(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        o = sums[..., 2 + k:].reshape(*sums.shape[:-1], k, k)
        return (fleiss_from_sums(sums[..., 0], sums[..., 2:2 + k], sums[..., 1]),
                alpha_from_coincidence(o, "nominal", np.arange(k, dtype=float)))

    reps = stats(_float_product(per, n_boot, seed))
    est = stats(per.sum(0))
    return ([float(est[0]), *percentile_interval(reps[0])], [float(est[1]), *percentile_interval(reps[1])])


def _random_rows(seed: int, n_samples: int = 40, annotators: int = 4, k: int = 3) -> list[tuple]:
    rng = np.random.default_rng(seed)
    rows = []
    for s in rng.permutation(n_samples):
        for i in range(int(rng.integers(1, 4))):
            truth = int(rng.integers(0, k))
            for a in range(annotators):
                if rng.random() < 0.7:  # some units get one rating (not pairable), most 2-4
                    v = truth if rng.random() < 0.7 else int(rng.integers(0, k))
                    rows.append((f"s{s}", f"i{i}", f"a{a}", f"c{v}"))
    return rows


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fleiss_and_alpha_equal_the_per_unit_sums(seed: int) -> None:
    rows = _random_rows(seed)
    out = item_agreement(rows, n_boot=150, seed=seed)
    fleiss, alpha = _old_per_unit(rows, 150, seed)
    got_f = [out["overall"]["kappa"][x] for x in ("estimate", "low", "high")]
    got_a = [out["overall"]["alpha"][x] for x in ("estimate", "low", "high")]
    assert got_f == pytest.approx(fleiss, rel=1e-12, abs=1e-13)
    assert got_a[1:] == pytest.approx(alpha[1:], rel=1e-12, abs=1e-13)
    assert got_a[0] == pytest.approx(alpha[0], rel=1e-9)  # the krippendorff package's own estimate


def test_fleiss_estimate_is_the_exact_fraction_rounded() -> None:
    """Sums of counts, divided once: the estimate is within a few units in the last place of the exact value."""
    rows = _random_rows(4, n_samples=300, annotators=3)
    units: dict[tuple, dict[str, int]] = {}
    for s, i, _a, c in rows:
        units.setdefault((s, i), {}).setdefault(c, 0)
        units[(s, i)][c] += 1
    cats = sorted({r[3] for r in rows})
    p_sum, n, q = Fraction(0), 0, {c: Fraction(0) for c in cats}
    for counts in units.values():
        m = sum(counts.values())
        if m >= 2:
            n += 1
            p_sum += Fraction(sum(v * (v - 1) for v in counts.values()), m * (m - 1))
            for c, v in counts.items():
                q[c] += Fraction(v, m)
    p_e = sum((qc / n) ** 2 for qc in q.values())
    exact = (p_sum / n - p_e) / (1 - p_e)
    got = item_agreement(rows, n_boot=0)["overall"]["kappa"]["estimate"]
    assert abs(Fraction(got) - exact) <= 8 * np.spacing(float(exact))


def test_pair_kappas_and_shared_draws_match_single_calls() -> None:
    a, b = _random_rows(5), _random_rows(6)
    together = item_agreements([a, b], n_boot=120, seed=2)
    assert together == [item_agreement(a, n_boot=120, seed=2), item_agreement(b, n_boot=120, seed=2)]
    # pair kappa replicates: confusion counts, as before
    pair = together[0]["pairs"][0]
    x = [r for r in a if r[2] in (pair["a"], pair["b"])]
    assert pair["kappa"]["estimate"] == item_agreement(x, n_boot=0)["pairs"][0]["kappa"]["estimate"]
    assert np.isfinite(kappa_from_confusion(np.ones((2, 2)), 1 - np.eye(2)))


def test_figures_do_not_depend_on_the_blas_thread_count() -> None:
    rows = _random_rows(7, n_samples=400)
    with threadpool_limits(1, user_api="blas"):
        one = item_agreement(rows, n_boot=200)
    with threadpool_limits(2, user_api="blas"):
        two = item_agreement(rows, n_boot=200)
    assert one == two


def test_schemes_whose_items_skip_the_record_never_read_it() -> None:
    """A scheme declaring items_read_record False gives the same items with the record as with a placeholder (every
    demo label of it), so agreement may skip parsing its records; a non-bool flag is refused."""
    import json
    from pathlib import Path

    from calibration.schemes.base import SchemeError, capabilities, registry

    demo = Path(__file__).resolve().parents[1] / "resources" / "demo"
    lines = [json.loads(x) for f in demo.glob("*labels.jsonl") for x in f.read_text(encoding="utf-8").splitlines()
             if x.strip()]
    checked = 0
    for scheme in registry():
        if capabilities(scheme).items_read_record:
            continue
        records = {}
        for f in demo.glob("*.jsonl"):
            for x in f.read_text(encoding="utf-8").splitlines():
                raw = json.loads(x) if x.strip() else {}
                if raw.get("scheme") == scheme.name and "id" in raw:
                    rec = scheme.parse(raw).record
                    records[scheme.record_id(rec)] = rec
        for line in lines:
            if line.get("scheme") != scheme.name or line.get("sample") not in records:
                continue
            unit = str(line.get("unit") or line.get("checker") or line.get("trait") or "")
            for kind in scheme.label_kinds:
                if line.get(kind) is not None:
                    with_record = scheme.label_items(records[line["sample"]], unit, {kind: line[kind]})
                    assert scheme.label_items(object(), unit, {kind: line[kind]}) == with_record
                    checked += 1
    assert checked > 20

    class Bad:
        name = "bad"
        items_read_record = "no"

    with pytest.raises(SchemeError, match="items_read_record"):
        capabilities(Bad())  # type: ignore[arg-type]


def test_trace_item_records_read_the_keys_parsing_gives(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Agreement reads trace's sentence keys from the stored payloads (app/schemes/trace/store.py): the same keys
    the parsed records have, for records stored with keyed sentences and for one whose sentences are split at parse
    time (parsed as before)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    from app.io.demo import create_demo
    from app.schemes.trace.store import SentenceKeys, item_records
    from calibration.schemes.base import registry

    root = Path(__file__).resolve().parents[1]
    path = tmp_path / "demo.concord"
    create_demo(path).close()
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"scheme": "trace", "id": "unkeyed-1", "question": "Q?",
                                 "documents": ["First fact here. Second fact here."],
                                 "response": "One claim. Another claim."}) + "\n", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "app.cli", "import", str(path), str(plain)], cwd=root, check=True,
                   capture_output=True)
    import sqlite3

    with sqlite3.connect(path) as conn:  # as a project written before import stored the split sentences
        conn.execute("UPDATE samples SET payload = json_remove(payload, '$.documents_sentences', "
                     "'$.response_sentences') WHERE id = 'unkeyed-1'")
    conn.close()
    from app.store import Project

    with Project.open(path) as project:
        light = item_records(project)
        scheme = registry().get("trace")
        parsed = {scheme.record_id(r): r for r in project.scheme_data.scheme_records("trace")}
    assert light.keys() == parsed.keys() and len(parsed) > 10
    for sid, rec in parsed.items():
        assert (light[sid].document_keys, light[sid].response_keys) == (rec.document_keys, rec.response_keys)
    assert isinstance(light[next(s for s in parsed if s != "unkeyed-1")], SentenceKeys)
    assert not isinstance(light["unkeyed-1"], SentenceKeys) and light["unkeyed-1"].document_keys


def test_large_draws_in_smaller_chunks_are_the_same_replicates() -> None:
    """Above 125k samples the counted sums draw fewer replicates per chunk (bounded memory): the generator gives
    the same stream however the draws are split, so the sums equal those of the 64-replicate chunks."""
    from calibration.agreement import _DRAWS_PER_CHUNK

    n = _DRAWS_PER_CHUNK // 64 * 2 + 1  # chunks of 31 replicates
    rng = np.random.default_rng(11)
    x = rng.integers(0, 3, size=(n, 2))
    want = np.concatenate([w @ x.astype(float) for w in resample_counts(n, 70, 4)])
    assert np.array_equal(boot_sums(x, 70, 4), want)
    from calibration.agreement import draw_chunk

    assert draw_chunk(n) < 64
    assert np.array_equal(np.concatenate(list(resample_counts(n, 70, 4, draw_chunk(n)))),
                          np.concatenate(list(resample_counts(n, 70, 4))))


def test_pooled_names_keep_equal_values_of_other_types_apart() -> None:
    """The pooled table's joined names are made once per name, and True, 1 and 1.0 stay three categories."""
    from app.services.agreement import _pooled

    rows = _pooled({("s", "k"): [("x", "u|i", "a", True), ("x", "u|i", "b", 1), ("x", "u|i", "c", 1.0)]})
    assert [r[3] for r in rows] == ["k=True", "k=1", "k=1.0"]
    assert rows[0][0] is rows[1][0] and rows[0][1] is rows[2][1]
