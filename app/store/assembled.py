"""The Project class: the project file (ProjectBase: connection, transactions, migrations, meta, backups) composed
with the store's parts, each built once per project on first use (issue #25: composition, not mixins). A part holds
the project and uses its connection and transactions, so its writes join a caller's transaction; a part that needs
another goes through `self.project.<part>`. A scheme's own tables are its store part, `project.store(name)`.
A module of its own, reached through `app.store.Project`, so that a scheme's store module can import the store's
submodules without a cycle."""
from __future__ import annotations

from functools import cached_property
from typing import Any

from app.store.artifacts import ArtifactsPart
from app.store.assignments import AssignmentsPart
from app.store.bulk import BulkPart
from app.store.caches import CachesPart
from app.store.counts import CountsPart
from app.store.decisions import DecisionsPart
from app.store.guidelines import GuidelinesPart
from app.store.project import ProjectBase
from app.store.reveals import RevealsPart
from app.store.samples import SamplesPart, SchemeDataPart, store_adapter
from app.store.units import UnitsPart


class Project(ProjectBase):
    """A Concord project file. Open one per thread. Its queries are its parts': `project.decisions.record(...)`,
    `project.units.unit_page(...)`, ...; a scheme's queries of its own tables are `project.store(name)`'s."""

    samples = cached_property(SamplesPart)  # datasets, samples, machine labels
    scheme_data = cached_property(SchemeDataPart)  # any scheme's records, human labels and applied parameters
    counts = cached_property(CountsPart)  # what status, status bar and exports count
    decisions = cached_property(DecisionsPart)  # human decisions (events) and the labels derived from them
    units = cached_property(UnitsPart)  # the review list and machine scores
    assignments = cached_property(AssignmentsPart)  # who labels which unit; blind mode
    reveals = cached_property(RevealsPart)  # machine labels hidden until an annotator's own decision
    guidelines = cached_property(GuidelinesPart)  # guideline versions
    caches = cached_property(CachesPart)  # embeddings and LLM responses
    artifacts = cached_property(ArtifactsPart)  # calibration runs and exported splits
    bulk = cached_property(BulkPart)  # what a large import needs

    def store(self, scheme_name: str) -> Any:
        """The scheme's store part (composition: its store contribution's PART, built with this project once; its
        `create_tables` runs then: tables of its own are made on first use, those of the released migrations need
        nothing). A KeyError for a scheme without one."""
        parts: dict[str, Any] = self.__dict__.setdefault("_store_parts", {})
        if scheme_name not in parts:
            cls = store_adapter(scheme_name).part
            if cls is None:
                raise KeyError(f"scheme {scheme_name!r} keeps no tables of its own")
            part = cls(self)
            part.create_tables()  # no write transaction here: reading a part must not wait for another writer
            parts[scheme_name] = part
        return parts[scheme_name]
