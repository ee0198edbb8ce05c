"""`span_agreement` of span sets given as columns, a window of samples at a time (issue #28 item 5: `concord agreement`
at 1M samples in bounded memory).

calibration.annotator_spans.span_agreement takes a dict {(sample, annotator): spans} and builds a dozen int64 arrays
per key and per span at once (with the dict itself, about 1 kB per sample: a GB at 1M judged outputs). Here the keys
come as integer columns grouped by sample, each key's spans as an index into a list of distinct span arrays (equal
labels share one), and every per-key and per-span step runs on a window of whole samples: matching, per-sample
counts and the unitizing-alpha pieces are per sample, the rest is sums of integers (exact in any order). The figures
are `span_agreement`'s, bit for bit (tests/test_span_chunks.py).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from calibration.agreement import (
    draw_chunk,
    estimate_interval,
    nan_ratio,
    resample_index_chunks,
)
from calibration.annotator_spans import (
    pair_match_counts,
    span_pair_row,
    u_alpha_from_parts,
    u_alpha_parts,
)
from calibration.annotators import object_values
from calibration.blas import one_blas_thread
from calibration.item_chunks import distinct_rows

WINDOW_KEYS = 1 << 15  # (sample, annotator) keys per window: their per-key and per-span temporaries about 13 MB


def span_agreement_columns(sample: np.ndarray, annotator: np.ndarray, value: np.ndarray,
                           values: Sequence[np.ndarray], annotator_names: Sequence[Any], iou: float = 0.0, *,
                           lengths: np.ndarray | None = None, n_boot: int = 1000, seed: int = 0,
                           ci: float = 0.95) -> dict[str, Any]:
    """`span_agreement({(sample[i], annotator_names[annotator[i]]): values[value[i]]}, iou, lengths=..., ...)`.

    `sample`: each key's sample code, ascending (keys grouped by sample; one key per sample and annotator);
    `values[v]`: a (n, 2) integer array of (start, end) spans in the order listed; `lengths[s]`: sample code s's text
    length (None: no unitizing alpha)."""
    if not 0 <= iou < 1:
        raise ValueError(f"iou must be in [0, 1), got {iou}")
    sample = np.asarray(sample, dtype=np.int64)
    value = np.asarray(value, dtype=np.int64)
    if len(sample) and not (sample[1:] >= sample[:-1]).all():
        raise ValueError("the keys must come grouped by sample, in ascending order")
    sizes_of = np.array([len(v) for v in values], dtype=np.int64)
    _check_spans(value, values)
    used_a = pd.unique(np.asarray(annotator))
    a_new, annotators = pd.factorize(object_values([annotator_names[a] for a in used_a]), sort=True)
    remap = np.full(len(annotator_names), -1, dtype=np.int64)
    remap[used_a] = a_new
    key_a = remap[np.asarray(annotator)]
    n_a = len(annotators)
    new = np.r_[True, sample[1:] != sample[:-1]] if len(sample) else np.zeros(0, dtype=bool)
    key_s = np.cumsum(new) - 1  # samples numbered in order (as factorizing the names in key order)
    n_s = int(new.sum())
    sample_code = sample[new]  # each sample's code, for its length
    del new
    # unitizing alpha: the samples with the modal number (>= 2) of annotators
    per = np.bincount(key_s, minlength=n_s)
    u_m = use = text_len = None
    if lengths is not None and n_s:
        counts = np.bincount(per)
        if len(counts) > 2 and counts[2:].max():
            u_m = int(np.flatnonzero(counts[2:] == counts[2:].max())[-1]) + 2
            use = per == u_m
            text_len = np.asarray(lengths, dtype=np.int64)[sample_code[use]]
    width = int(text_len.max()) + 1 if text_len is not None and len(text_len) else 1
    n_codes = n_a * n_a  # pair (a, b) as a * n_a + b: every possible one, the present ones kept at the end
    cols = 2 + 3 * n_codes
    code_parts: list[np.ndarray] = []  # each sample's distinct row of counts (few distinct: a code, not a row)
    distinct: dict[bytes, int] = {}
    rows: list[np.ndarray] = []
    used_before = 0  # samples of the unitizing alpha in the windows before
    pair_rows = np.zeros(n_codes, dtype=np.int64)
    n_samples_a = np.bincount(key_a, minlength=n_a)
    n_spans_a = np.zeros(n_a, dtype=np.int64)
    mine_m = np.zeros(n_a, dtype=np.int64)
    mine_n = np.zeros(n_a, dtype=np.int64)
    n_spans_total = 0
    parts_l, units_l, gaps_l = [], [], []
    key_lo = 0
    bounds = _cuts(key_s, WINDOW_KEYS)
    for key_hi in bounds:
        s0 = int(key_s[key_lo])
        ks, ka, kv = key_s[key_lo:key_hi] - s0, key_a[key_lo:key_hi], value[key_lo:key_hi]
        n_w = int(ks[-1]) + 1
        sizes = sizes_of[kv]
        sp_s0, sp_a0 = np.repeat(ks, sizes), np.repeat(ka, sizes)
        se = np.concatenate([np.asarray(values[v], dtype=np.int64).reshape(-1, 2) for v in kv.tolist()]) \
            if sizes.sum() else np.zeros((0, 2), dtype=np.int64)
        order = np.lexsort((se[:, 1], se[:, 0], sp_a0, sp_s0))
        sp_s, sp_a, start, end = sp_s0[order], sp_a0[order], se[order, 0], se[order, 1]
        del sp_s0, sp_a0, se, order
        n_spans_total += len(start)
        got = _window(ks, ka, sp_s, sp_a, start, end, n_w, n_a, iou)
        block, rows_per_pair, n_spans, m_count, na, nb, p_a, p_b = got
        found, inverse = distinct_rows(block)
        local = np.empty(len(found), dtype=np.int64)
        for r, row in enumerate(found):
            local[r] = distinct.setdefault(row.tobytes(), len(rows))
            if local[r] == len(rows):
                rows.append(row)
        code_parts.append(local[inverse].astype(np.int32))
        del block, found, inverse
        pair_rows += rows_per_pair
        n_spans_a += n_spans.reshape(n_w, n_a).sum(0)
        for a in range(n_a):
            mine = (p_a == a) | (p_b == a)
            mine_m[a] += int(m_count[mine].sum())
            mine_n[a] += int((na + nb)[mine].sum())
        if use is not None:
            w_use = use[s0:s0 + n_w]
            if w_use.any():
                new_id = np.cumsum(w_use) - 1
                sel = w_use[sp_s]
                w_len = text_len[used_before:used_before + int(w_use.sum())]
                used_before += int(w_use.sum())
                parts, units, gaps = u_alpha_parts(u_m, new_id[sp_s[sel]], sp_a[sel], start[sel], end[sel],
                                                    int(w_use.sum()), w_len)
                parts_l.append(parts)
                units_l.append(_widened(units, width))
                gaps_l.append(_widened(gaps, width))
        key_lo = key_hi
    pair_code = np.flatnonzero(pair_rows)
    take = np.concatenate([[0, 1], *([2 + 3 * c, 3 + 3 * c, 4 + 3 * c] for c in pair_code.tolist())]).astype(np.int64)
    codes = np.concatenate(code_parts) if code_parts else np.zeros(0, dtype=np.int32)
    table = np.array(rows, dtype=np.int64).reshape(len(rows), cols)[:, take]
    overall: dict[str, Any] = {"u_alpha": None, "u_alpha_samples": 0, "u_alpha_annotators": 0}
    u_alpha = None
    if use is not None:
        from scipy import sparse

        u_alpha = (u_m, use, np.concatenate(parts_l), sparse.vstack(units_l, format="csr"),
                   sparse.vstack(gaps_l, format="csr"))
    reps = u_reps = None
    if n_boot > 0:  # one draw of samples for every statistic
        reps, u_list = np.empty((n_boot, table.shape[1])), []
        right = table.astype(np.float64)
        if u_alpha is not None:  # each sample's number among the unitizing alpha's, the others one past them
            m, use_, parts, units, gaps = u_alpha
            u_id = np.where(use_, np.cumsum(use_) - 1, int(use_.sum()))
            units_t, gaps_t = units.T.tocsr(), gaps.T.tocsr()
        lo = 0
        # per replicate its draws counted per distinct row (and per unitizing sample): no (replicates, samples)
        # matrix of counts (two of 64 MB at 1M samples); integer sums, so the same bits as those products
        with one_blas_thread(n_boot * len(table) * table.shape[1]):
            for idx in resample_index_chunks(n_s, n_boot, seed, draw_chunk(n_s)):
                wc = np.empty((idx.shape[0], len(table)))
                for r in range(idx.shape[0]):
                    wc[r] = np.bincount(codes[idx[r]], minlength=len(table))
                reps[lo:lo + len(wc)] = wc @ right
                lo += len(wc)
                if u_alpha is not None:
                    got_p, got_u, got_g = [], [], []
                    for r in range(idx.shape[0]):
                        c = np.bincount(u_id[idx[r]], minlength=len(parts) + 1)[:len(parts)].astype(np.float64)
                        got_p.append(c @ parts)
                        got_u.append(units_t @ c)
                        got_g.append(gaps_t @ c)
                    u_list.append(u_alpha_from_parts(m, np.array(got_p), np.array(got_u), np.array(got_g)))
        u_reps = np.concatenate(u_list) if u_list else None
    if u_alpha is not None:
        m, use_, parts, units, gaps = u_alpha
        est = u_alpha_from_parts(m, parts.sum(0), np.asarray(units.sum(0)).ravel(), np.asarray(gaps.sum(0)).ravel())
        overall.update(u_alpha=estimate_interval(float(est), u_reps, ci), u_alpha_samples=int(use_.sum()),
                       u_alpha_annotators=m)
    totals = (np.bincount(codes, minlength=len(table)) @ table).astype(float)
    f1 = lambda s: nan_ratio(2 * s[..., 0], s[..., 1])
    pairs = []
    for j, code in enumerate(pair_code.tolist()):
        t = totals[2 + 3 * j: 5 + 3 * j]
        r = None if reps is None else reps[:, 2 + 3 * j: 5 + 3 * j]
        pairs.append(span_pair_row(annotators[code // n_a], annotators[code % n_a], int(pair_rows[code]), t, r, ci))
    people = []
    for a, name in enumerate(annotators):
        people.append({"annotator": name, "n_samples": int(n_samples_a[a]), "n_spans": int(n_spans_a[a]),
                       "f1_with_others": float(nan_ratio(2 * mine_m[a], mine_n[a]))})
    overall.update(span_f1=estimate_interval(float(f1(totals[:2])), None if reps is None else f1(reps[:, :2]), ci),
                   matched=int(totals[0]), spans_compared=int(totals[1]))
    overall = {k: overall[k] for k in ("span_f1", "matched", "spans_compared", "u_alpha", "u_alpha_samples",
                                       "u_alpha_annotators")}
    return {"iou": iou, "n_samples": n_s, "n_spans": n_spans_total, "n_boot": n_boot, "overall": overall,
            "pairs": pairs, "annotators": people}


def _check_spans(value: np.ndarray, values: Sequence[np.ndarray]) -> None:
    """`_span_table`'s refusal, with its message: the first faulty span, keys in order, spans as listed."""
    bad = [i for i, v in enumerate(values) if len(v) and (np.asarray(v).dtype.kind not in "iu"
                                                          or (np.asarray(v)[:, 0] < 0).any()
                                                          or (np.asarray(v)[:, 0] >= np.asarray(v)[:, 1]).any())]
    if not bad:
        return
    faulty = np.isin(value, bad)
    if not faulty.any():
        return
    v = np.asarray(values[int(value[int(np.argmax(faulty))])])
    for s, e in v.tolist():
        if type(s) is not int or type(e) is not int or not 0 <= s < e:
            raise ValueError(f"a span needs integer offsets 0 <= start < end, got {(s, e)!r}")


def _cuts(key_s: np.ndarray, per_window: int) -> list[int]:
    """End of each window of about `per_window` keys, cut between samples."""
    out, lo, n = [], 0, len(key_s)
    while lo < n:
        hi = min(lo + per_window, n)
        if hi < n:
            hi = int(np.searchsorted(key_s, key_s[hi - 1], side="right"))
        out.append(hi)
        lo = hi
    return out


def _widened(hist: Any, width: int) -> Any:
    """A window's (samples, w) length histogram as (samples, width) (w <= width: the window's longest text)."""
    from scipy import sparse

    hist = hist.tocsr()
    return sparse.csr_matrix((hist.data, hist.indices, hist.indptr), shape=(hist.shape[0], width))


def _window(ks: np.ndarray, ka: np.ndarray, sp_s: np.ndarray, sp_a: np.ndarray, start: np.ndarray, end: np.ndarray,
            n_w: int, n_a: int, iou: float) -> tuple[np.ndarray, ...]:
    """`span_agreement`'s matching and per-sample counts on one window of samples: (per-sample counts over every
    pair code, (sample, pair) rows per pair code, spans per (sample, annotator), and per (sample, a < b) row its
    matches, spans of a and of b, a and b)."""
    n_spans, p_sample, p_a, p_b, m_count, na, nb = pair_match_counts(ks, ka, sp_s, sp_a, start, end, n_w, n_a, iou)
    code = p_a * n_a + p_b
    cols = 2 + 3 * n_a * n_a
    flat = np.concatenate([p_sample * cols, p_sample * cols + 1, p_sample * cols + 2 + 3 * code,
                           p_sample * cols + 3 + 3 * code, p_sample * cols + 4 + 3 * code])
    weights = np.concatenate([m_count, na + nb, m_count, na, nb]).astype(np.int64)
    block = np.bincount(flat, weights=weights, minlength=n_w * cols).reshape(n_w, cols)
    block = np.rint(block).astype(np.int64)  # counts summed as floats by bincount: whole numbers
    return block, np.bincount(code, minlength=n_a * n_a), n_spans, m_count, na, nb, p_a, p_b
