"""A manifest's `inputs` (app/schemes/manifest.py): the option builder adds each annotator's own labels only for a
scheme that declares it needs them (the judge scheme's `any`/`majority` references), and a manifest naming an
input nobody builds is refused as declared."""
from __future__ import annotations

from pathlib import Path

from app.corrections import SetLabels
from app.schemes.contracts import problems_of
from app.schemes.manifest import Manifest
from app.services.schemes import scheme_options
from app.store import Change, Project
from calibration.schemes.base import registry


def test_only_a_scheme_that_declares_it_gets_each_annotators_labels(tmp_path: Path) -> None:
    path = tmp_path / "p.concord"
    with Project.create(path) as p:
        p.samples.write_samples("judge", [registry().get("judge").parse(
            {"scheme": "judge", "id": "s1", "text": "t", "judges": {"a": 0.2}}).record], None)
        for who, value in (("ana", True), ("bo", False)):
            p.decisions.record(who, list(SetLabels((Change("s1", "", "label", value),), "test").changes))
        judge = scheme_options(p, registry().get("judge"), {})
        other = scheme_options(p, registry().get("addm"), {})
    assert judge["annotator_labels"] == {"ana": {("s1", ""): {"label": True}}, "bo": {("s1", ""): {"label": False}}}
    assert "annotator_labels" not in other


def test_an_unknown_input_is_refused_as_declared() -> None:
    problems = problems_of(Manifest(name="x", scheme="m:S", inputs=frozenset(("everything",))))
    assert problems and "unknown inputs everything" in problems[0]
