"""The TRACe scheme's store reads: what agreement's items need of its records (the sentence keys), read from the
payloads without parsing every record (parsing was most of `concord agreement --scheme trace`)."""
from __future__ import annotations

from typing import Any, NamedTuple

SCHEME = "trace"


class SentenceKeys(NamedTuple):
    """What the scheme's `label_items` reads of a record: its document and response sentence keys."""

    document_keys: list[str]
    response_keys: list[str]


def _keys(pairs: Any) -> list[str] | None:
    """The keys of well-formed [[key, sentence], ...] pairs (what parsing keeps as they are), else None."""
    if not isinstance(pairs, list):
        return None
    keys = []
    for p in pairs:
        if not (type(p) is list and len(p) == 2 and type(p[0]) is str and p[0] and type(p[1]) is str):
            return None
        keys.append(p[0])
    return keys


def item_records(project: Any) -> dict[str, Any]:
    """Sample id -> its sentence keys, from the stored keyed sentences; a sample stored without them (sentences
    split at parse time) or in RAGBench's release format is parsed as `records` does."""
    import orjson

    from calibration.schemes.trace.ragbench import is_ragbench_row
    from calibration.schemes.trace.scheme import SCHEME as TRACE

    out: dict[str, Any] = {}
    parse: list[str] = []
    for sid, payload in project.conn.execute("SELECT id, payload FROM samples WHERE scheme = ? ORDER BY rowid",
                                             (SCHEME,)):
        data = orjson.loads(payload) if payload else {}
        docs = data.get("documents_sentences")
        per_doc = [_keys(d) for d in docs] if isinstance(docs, list) else [None]
        response = _keys(data.get("response_sentences"))
        if response is None or any(k is None for k in per_doc) or is_ragbench_row(data):
            parse.append(sid)
            continue
        out[sid] = SentenceKeys([k for keys in per_doc for k in keys], response)  # type: ignore[union-attr]
    for record in project.samples.records(SCHEME, ids=parse) if parse else ():
        out[TRACE.record_id(record)] = record
    return out
