"""What `evaluate` reads of many trace records, as columns: per sample its id, subset, sentence keys, labels and
judge scores, and nothing else (no sentence texts, explanations or supporting keys, no validation). A project's
samples arrive so from their stored payloads (app/schemes/trace/store.py: `evaluation_records`, the fields decoded
once); records (tests, a caller holding them) go through `from_records`, the same fields of the parsed record.
"""
from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from calibration.schemes.trace.records import SupportInfo, TraceLabels, TraceRecord


@dataclass
class TraceColumns:
    """One entry per sample, in import order (what `scheme_records` would give, field by field)."""

    ids: list[str] = field(default_factory=list)
    subsets: list[str] = field(default_factory=list)  # meta["subset"] as evaluate names it ("" for none)
    n_documents: list[int] = field(default_factory=list)  # document sentences (listed, not distinct)
    document_keys: list[list[str]] = field(default_factory=list)
    response_keys: list[list[str]] = field(default_factory=list)
    labels: list[TraceLabels] = field(default_factory=list)  # the record's own (annotator's) labels
    judges: dict[str, None] = field(default_factory=dict)  # every judge named, scores or not, in order of appearance
    # (judge, metric) -> (samples, scores): what the judges gave, 16 bytes a score (a dict per sample was 0.6 kB)
    judge_scores: dict[tuple[str, str], tuple[array, array]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def _columns(self) -> list[list[Any]]:
        return [self.ids, self.subsets, self.n_documents, self.document_keys, self.response_keys, self.labels]

    def _add_judges(self, i: int, judges: Mapping[str, Mapping[str, Any]]) -> None:
        for name, scores in judges.items():
            self.judges.setdefault(name)
            for metric, v in scores.items():
                if v is None:
                    continue
                column = self.judge_scores.get((name, metric))
                if column is None:
                    column = self.judge_scores[(name, metric)] = (array("q"), array("d"))
                column[0].append(i)
                column[1].append(float(v))

    def put(self, i: int, other: TraceColumns, j: int) -> None:
        """Sample i becomes `other`'s sample j (a placeholder filled once its record is parsed)."""
        for mine, theirs in zip(self._columns(), other._columns(), strict=True):
            mine[i] = theirs[j]
        for name in other.judges:  # every sample of `other` is put somewhere: its judges are named here
            self.judges.setdefault(name)
        given: dict[str, dict[str, float]] = {}
        for (name, metric), (samples, scores) in other.judge_scores.items():
            for k, v in zip(samples, scores):
                if k == j:
                    given.setdefault(name, {})[metric] = v
        self._add_judges(i, given)

    def drop(self, i: int) -> None:
        """Sample i goes (a placeholder whose record its parser refused: it has no judge scores)."""
        for mine in self._columns():
            del mine[i]
        for key, (samples, scores) in self.judge_scores.items():
            kept = [(k - (k > i), v) for k, v in zip(samples, scores) if k != i]
            self.judge_scores[key] = (array("q", [k for k, _ in kept]), array("d", [v for _, v in kept]))

    @classmethod
    def from_records(cls, records: Iterable[TraceRecord]) -> TraceColumns:
        out = cls()
        for r in records:
            out.add_record(r)
        return out

    def add_record(self, r: TraceRecord) -> None:
        self.ids.append(r.id)
        self.subsets.append(subset_of(r.meta))
        self.n_documents.append(sum([len(d) for d in r.documents_sentences]))
        self.document_keys.append(r.document_keys)
        self.response_keys.append(r.response_keys)
        self._add_judges(len(self.labels), r.judges)
        self.labels.append(r.labels)

    def add_stored(self, sid: str, meta: Mapping[str, Any] | None, documents_sentences: Sequence[Sequence[Any]],
                   response_sentences: Sequence[Any], fields: Sequence[Any], judges: Any,
                   intern: dict[Any, Any]) -> None:
        """One sample from its stored payload's fields (the record's `to_json`, which parsing reads back as they
        are): `fields` are all_relevant_sentence_keys, all_utilized_sentence_keys, sentence_support_information,
        unsupported_response_sentence_keys, adherence_score (None where absent). `intern`: one string per distinct
        sentence key or subset name across samples (keys repeat: "0a", "0b", ...; 0.3 kB a sample at 100k)."""
        rel, utl, support, unsup, adh = fields
        keys = [p[0] for d in documents_sentences for p in d]
        once = intern.setdefault
        subset = subset_of(meta)
        self.ids.append(sid)
        self.subsets.append(once(subset, subset))
        self.n_documents.append(len(keys))
        self.document_keys.append([once(k, k) for k in keys])
        self.response_keys.append([once(p[0], p[0]) for p in response_sentences])
        self.labels.append(TraceLabels(
            None if rel is None else tuple([once(k, k) for k in rel]),
            None if utl is None else tuple([once(k, k) for k in utl]),
            None if support is None else tuple(
                [SupportInfo(once(k := e["response_sentence_key"], k), e.get("fully_supported")) for e in support]),
            None if unsup is None else tuple([once(k, k) for k in unsup]), adh))
        if judges:
            self._add_judges(len(self.labels) - 1, judges)


def subset_of(meta: Mapping[str, Any] | None) -> str:
    """The RAGBench subset a sample's meta names ("" for none): evaluate's per-subset rows."""
    return str((meta or {}).get("subset") or "")

