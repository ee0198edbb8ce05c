"""Import adapter of the `addm` scheme: its records go the generic way; ADDM's `results.json` run files (a run
header plus a per-sample `results` array) are read by `read_file` and attached to the businesses already in the
project, as one method.

`concord import PROJECT results.json [--method NAME]`: the method is named by `--method`, else `method|model` from
the file. Each business of the run that the project holds becomes its record again with the method's results
added (snippets located in the stored reviews), then takes the ordinary path (the scheme's parser, all-or-nothing
write; like any import, the samples are filed under this file's dataset). A business the project does not hold
is reported and skipped; none at all is an error.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any


from app.io.formats import RawRecord, Source, json_document
from app.io.problems import Location, Problems
from calibration import jsontext
from calibration.schemes.addm.records import AddmSample
from calibration.schemes.addm.runfile import attach_run, parse_run
from calibration.schemes.addm.scheme import SCHEME

if TYPE_CHECKING:
    from app.io.records import RecordValidator
    from app.store import Project

NAME = SCHEME.name
RUN_KEYS = frozenset(("run_id", "method", "unified_scores", "policy_id"))


def check(v: "RecordValidator", loc: Location, record: AddmSample | None) -> None:
    """No cross-record rules beyond the generic unique ids."""


def collect(v: "RecordValidator", loc: Location, record: AddmSample) -> None:
    v.out.records.setdefault(NAME, []).append(record)


def read_file(path: str | Path, problems: Problems, options: Mapping[str, Any], project: "Project | None" = None) -> Source | None:
    """The stored businesses of an ADDM run file with its results attached as one method; None when `path` is
    not a run file (a .json object with a `results` array and a run header field)."""
    path = Path(path)
    raw = json_document(path)
    if not (isinstance(raw, dict) and isinstance(raw.get("results"), list) and RUN_KEYS & raw.keys()):
        return None
    whole = Location(str(path), None)
    src = Source(path, "results.json", n_lines=len(raw["results"]))  # entries read (the problems say which failed)
    too_big = jsontext.check(raw)  # nesting and field size (calibration/jsontext.py), with the path of the first excess
    if too_big is not None:
        problems.error(whole, *too_big)
        return src
    method = options.get("method")
    if method is not None and (not isinstance(method, str) or not method.strip()):
        problems.error(whole, "", "--method must be a non-empty name")
        return src
    run, probs = parse_run(raw, method)
    for p in probs:
        (problems.error if p.level == "error" else problems.warn)(whole, p.path, p.message)
    if run is None:
        return src
    stored = project.samples.records(NAME, list(run.results)) if project is not None else []
    if not stored:
        problems.error(whole, "results", f"none of the run's {len(run.results)} businesses is an {NAME} sample in "
                                         f"the project (import the {NAME} records with their reviews first)")
        return src
    attached, probs = attach_run(stored, run)
    for p in probs:
        problems.warn(whole, p.path, p.message)
    src.records = [RawRecord(whole, SCHEME.to_json(s)) for s in attached]
    return src
