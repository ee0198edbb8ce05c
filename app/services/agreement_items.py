"""What agreement counts as one label's items, shared by the row tables (app/services/agreement.py) and the coded
ones (app/services/agreement_codes.py): a module of its own so that neither imports the other."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from calibration.schemes.base import COMMON_KINDS

NOT_ITEMS = frozenset(COMMON_KINDS)  # status and note: review state and free text, not judgements to agree on


class _RecordsNotRead(Mapping[str, Any]):
    """The records of a scheme whose `label_items` reads the labels only (Capabilities.items_read_record False):
    every sample's is a placeholder, so no record is parsed for agreement."""

    def __getitem__(self, key: str) -> Any:
        return _NOT_READ

    def __iter__(self) -> Any:
        return iter(())

    def __len__(self) -> int:
        return 0

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return _NOT_READ


_NOT_READ = object()  # not None: `unit_items` skips labels whose sample has no record
NOT_READ = _RecordsNotRead()



def is_span_value(value: Any) -> bool:
    """A list of objects with `start` and `end` (empty lists are spans too: 'marked nothing'); an object whose
    offsets are null (a violation that could not be grounded) is skipped by `grounded_spans`."""
    return isinstance(value, list) and all(isinstance(v, dict) and "start" in v and "end" in v for v in value)


def grounded_spans(value: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    return [(v["start"], v["end"]) for v in value if type(v["start"]) is int and type(v["end"]) is int]


def split_spans(candidates: Mapping[tuple[str, str], Mapping[tuple[str, str], Any]]
                ) -> tuple[dict[tuple[str, str], dict[tuple[str, str], list[tuple[int, int]]]],
                           dict[tuple[str, str], Mapping[tuple[str, str], Any]]]:
    """Per-sample list labels, (scheme, kind) -> (sample, annotator) -> value, split into span sets (every value a
    list of spans, and some span marked: grounded offsets per annotator) and the rest, whose values are items of
    unit '' (the one rule both the row and the coded tables follow)."""
    spans: dict[tuple[str, str], dict[tuple[str, str], list[tuple[int, int]]]] = {}
    rest: dict[tuple[str, str], Mapping[tuple[str, str], Any]] = {}
    for key, sets in candidates.items():
        values = list({id(v): v for v in sets.values()}.values())  # equal values may be one object: each read once
        if all(is_span_value(v) for v in values) and any(values):
            # values equal in their JSON text may be one object (agreement's columns decode each text once): their
            # spans found once
            found: dict[int, list[tuple[int, int]]] = {}
            spans[key] = {k: found[id(vs)] if id(vs) in found else found.setdefault(id(vs), grounded_spans(vs))
                          for k, vs in sets.items()}
        else:
            rest[key] = sets
    return spans, rest


def record_items(scheme: Any, record: Any, unit: str, kind: str, value: Any) -> dict[str, Any]:
    if record is None:
        return {}
    try:
        return scheme.label_items(record, unit, {kind: value})
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return {}  # a value this scheme cannot read as items (`concord check` reports bad labels, not this)


def as_category(value: Any) -> Any:
    """A category as a table holds it: a plain value as it is, anything else by its repr."""
    return value if isinstance(value, (str, int, float, bool)) else repr(value)
