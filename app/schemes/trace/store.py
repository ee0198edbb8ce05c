"""The TRACe scheme's store reads: what agreement's items need of its records (the sentence keys), and what evaluate
reads of them (calibration.schemes.trace.columns), from the payloads without parsing every record (parsing was most
of `concord agreement --scheme trace`, and of `concord evaluate --scheme trace`)."""
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


def _document_keys(docs: Any) -> list[str] | None:
    """Every document's `_keys` joined in order, else None (one loop over the pairs: no call per document)."""
    if not isinstance(docs, list):
        return None
    keys = []
    for pairs in docs:
        if not isinstance(pairs, list):
            return None
        for p in pairs:
            if not (type(p) is list and len(p) == 2 and type(p[0]) is str and p[0] and type(p[1]) is str):
                return None
            keys.append(p[0])
    return keys


def item_records(project: Any) -> dict[str, Any]:
    """Sample id -> its sentence keys, from the stored keyed sentences (equal ones one object); a sample stored
    without them (sentences split at parse time) or in RAGBench's release format is parsed as `records` does."""
    import orjson

    from calibration.schemes.trace.ragbench import is_ragbench_row
    from calibration.schemes.trace.scheme import SCHEME as TRACE

    out: dict[str, Any] = {}
    parse: list[str] = []
    # samples with the same keys share one object: agreement draws the items of equal labels of one record object
    # once (app/services/agreement_codes.py's `distinct_labels`), and samples share a few layouts (0a, 0b, 1a, ...)
    shared: dict[tuple[str | None, ...], SentenceKeys] = {}
    for sid, payload in project.conn.execute("SELECT id, payload FROM samples WHERE scheme = ? ORDER BY rowid",
                                             (SCHEME,)):
        data = orjson.loads(payload) if payload else {}
        document = _document_keys(data.get("documents_sentences"))
        response = _keys(data.get("response_sentences"))
        if response is None or document is None or is_ragbench_row(data):
            parse.append(sid)
            continue
        layout = (*document, None, *response)  # None: no key, so the two sides stay apart
        got = shared.get(layout)
        if got is None:
            got = shared[layout] = SentenceKeys(document, response)
        out[sid] = got
    for record in project.samples.records(SCHEME, ids=parse) if parse else ():
        out[TRACE.record_id(record)] = record
    return out


# what evaluate reads of a payload
_EVALUATED = ("documents_sentences", "response_sentences", "all_relevant_sentence_keys", "all_utilized_sentence_keys",
              "sentence_support_information", "unsupported_response_sentence_keys", "adherence_score", "judges")


def evaluation_records(project: Any) -> Any:
    """Every sample as evaluate reads it (`TraceColumns`, import order), from the payload fields it uses (each
    payload decoded by orjson and let go: SQLite's json_extract of those fields cost more); a sample stored without
    keyed sentences (split at parse time) is parsed as `records` does, in its place."""
    import orjson

    from calibration.schemes.trace.columns import TraceColumns

    out = TraceColumns()
    intern: dict[str, str] = {}
    parse: dict[str, int] = {}
    for sid, meta, payload in project.conn.execute(
            "SELECT id, meta, payload FROM samples WHERE scheme = ? ORDER BY rowid", (SCHEME,)):
        data = orjson.loads(payload) if payload else {}
        docs, response, *labels, judges = [data.get(name) for name in _EVALUATED]
        if type(docs) is not list or type(response) is not list:
            parse[sid] = len(out)
            out.add_stored(sid, None, [], [], [None] * 5, None, intern)  # its place, filled below
            continue
        out.add_stored(sid, None if meta is None else orjson.loads(meta), docs, response, labels, judges, intern)
    if parse:
        parsed = TraceColumns.from_records(project.samples.records(SCHEME, ids=list(parse)))
        for j, sid in enumerate(parsed.ids):
            out.put(parse[sid], parsed, j)
        # a payload its parser refuses has no record (as `records` leaves it out)
        for i in sorted(set(parse.values()) - {parse[sid] for sid in parsed.ids}, reverse=True):
            out.drop(i)
    return out


def load_records(project: Any) -> list[Any]:
    """The records `project.samples.records("trace")` parses back, in import order: each stored payload read as
    `stored_record` (decoded by orjson), one it does not recognise (not written by `to_json`: sentences split at
    parse time, another shape) by the scheme's parser, in its place."""
    import orjson

    from calibration.schemes.trace.parse import stored_record

    out: list[Any] = []
    parse: dict[str, int] = {}
    for sid, split, meta, payload in project.conn.execute(
            "SELECT id, split, meta, payload FROM samples WHERE scheme = ? ORDER BY rowid", (SCHEME,)):
        try:
            data = {"scheme": SCHEME, "id": sid, **orjson.loads(payload)}
            if split is not None:
                data["split"] = split
            if meta is not None:
                data["meta"] = orjson.loads(meta)
            out.append(stored_record(data))
        except (ValueError, KeyError, TypeError, AttributeError):  # orjson.JSONDecodeError is a ValueError
            parse[sid] = len(out)
            out.append(None)
    if parse:
        for record in project.samples.records(SCHEME, ids=list(parse)):
            out[parse[record.id]] = record
    return [r for r in out if r is not None]  # a payload its parser refuses has no record, as `records` has it
