"""Human label rows -> (sample, unit) -> kind -> value, compactly (issue #28: `evaluate` at 1M samples under 1 GB).

Labels repeat a lot (a judge's "pass"/"fail", a status, a handful of match lists): each distinct stored JSON text is
decoded once and every unit holding it gets that one object, and every unit whose kinds and texts are the same gets
one shared per-unit dict; the keys share their sample id and unit name strings. A unit then costs its key and a dict
slot (~150 bytes) instead of a dict of its own and decoded copies (0.6 to 3 kB per sample at 100k samples), and the
decoding runs once per distinct text, not per row. The values and per-unit dicts
are shared: callers treat them as read-only (as `SchemeDataPart.scheme_labels` always asked). No SQL here: the
store's queries hand their rows in.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

Key = tuple[str, str]
Labels = dict[Key, dict[str, Any]]
# (sample_id, unit, kind, value JSON text, annotator), ordered by sample, unit, then event
Row = tuple[str, str, str, str, str]


class SharedUnits:
    """Builds per-unit dicts from (kind, text) pairs, one object per distinct pair sequence and per distinct text."""

    def __init__(self, loads: Callable[[str], Any]) -> None:
        self._loads = loads
        self._values: dict[str, Any] = {}  # JSON text -> its decoded value, decoded once
        self._units: dict[tuple[str, ...], dict[str, Any]] = {}  # kind, text, kind, text, ... -> the shared dict
        self._names: dict[str, str] = {}  # unit name -> its one str object

    def key(self, previous: Key | None, sid: str, unit: str) -> Key:
        """The (sample, unit) key, its strings shared: the sample id with the previous key's (a sample's units come
        together), the unit name with every equal one (units are often a few checker names, repeated per sample)."""
        if previous is not None and previous[0] == sid:
            sid = previous[0]
        return sid, self._names.setdefault(unit, unit)

    def unit(self, pairs: tuple[str, ...]) -> dict[str, Any]:
        """The dict `{kind: loads(text)}` of `pairs` (kind, text, kind, text, ... in event order: a later text of a
        kind replaces the earlier one, the kind keeping its first place, as assigning in a loop does)."""
        shared = self._units.get(pairs)
        if shared is None:
            values = self._values
            shared = {}
            for i in range(0, len(pairs), 2):
                text = pairs[i + 1]
                value = values.get(text, values)  # `values` itself as the "not decoded yet" marker
                if value is values:
                    value = values[text] = self._loads(text)
                shared[pairs[i]] = value
            self._units[pairs] = shared
        return shared


def read_labels(rows: Iterable[Row], excluded: Collection[tuple[str, str, str]], loads: Callable[[str], Any]) -> Labels:
    """(sample, unit) -> kind -> value of `rows` (ordered by sample and unit), leaving out the (sample, unit,
    annotator) of `excluded`: what one dict per row built by `out.setdefault(key, {})[kind] = loads(text)` gives."""
    units = SharedUnits(loads)
    out: Labels = {}
    key: Key | None = None
    pairs: list[str] = []
    for sid, unit, kind, value, who in rows:
        if excluded and (sid, unit, who) in excluded:
            continue
        if key is None or key[0] != sid or key[1] != unit:
            if key is not None:
                out[key] = units.unit(tuple(pairs))
            key, pairs = units.key(key, sid, unit), []
        pairs += (kind, value)
    if key is not None:
        out[key] = units.unit(tuple(pairs))
    return out


def read_labels_by_annotator(rows: Iterable[Row], excluded: Collection[tuple[str, str, str]],
                             loads: Callable[[str], Any]) -> dict[str, Labels]:
    """Annotator -> `read_labels` of their rows, from one pass over everyone's rows (ordered by sample and unit);
    annotators in the order of their first row, as the per-row build gives."""
    units = SharedUnits(loads)
    out: dict[str, Labels] = {}
    key: Key | None = None
    pending: dict[str, list[str]] = {}  # annotator -> their pairs of the current (sample, unit)

    def flush() -> None:
        for who, pairs in pending.items():
            out[who][key] = units.unit(tuple(pairs))  # type: ignore[index]
        pending.clear()

    for sid, unit, kind, value, who in rows:
        if excluded and (sid, unit, who) in excluded:
            continue
        if key is None or key[0] != sid or key[1] != unit:
            flush()
            key = units.key(key, sid, unit)
        mine = pending.get(who)
        if mine is None:
            mine = pending[who] = []
            if who not in out:
                out[who] = {}
        mine += (kind, value)
    flush()
    return out
