"""Import adapters of schemes whose records need cross-record rules or a store adapter of their own.

A module here is named after its scheme and provides `check(validator, loc, record)` (record may be None when the
record itself had errors), `collect(validator, loc, record)` (a valid record) and optionally `finish(validator)`.
A scheme without one is imported generically (unique ids, then `Project.write_samples`).
Optionally `parse(record) -> Parsed` with `record_id(parsed record) -> str`: how import validates a record, when not
with the scheme's own `parse` (e.g. violations: a record valid as it stands into plain values the store writes).
Optionally also `read_file(path, problems, options, project)`: a file format of the scheme's own (e.g. RGB's data
and prediction files), returned as an app.io.formats.Source of records, or None when `path` is not one; the
importer asks every adapter before its generic readers (app.io.imports._scheme_source).
Optionally `default_dataset(path) -> str | None`: the dataset name when --dataset is not given (e.g. trace:
`covidqa/test.parquet` -> `covidqa-test`), and `export_extra(project, records, labels) -> {dataset: rows}`: datasets
a split carries besides the records and labels of a scheme exported through the registry (app/io/export_generic.py).
A scheme with a store adapter of its own provides `prepare(validated, line_hashes)` (what a streamed JSONL chunk writes, made in
the worker process that validated it; cheap to pickle: it crosses a pipe), `write_prepared(project, prepared,
dataset_id, line_hashes) -> WriteCounts`; app.io.parallel and app.io.imports call them.
"""
