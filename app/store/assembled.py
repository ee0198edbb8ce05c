"""The Project class, assembled from the store's generic parts. A scheme's own tables are not mixed in: its store
part is composed (`project.store(name)`, app/store/samples.py). A module of its own, reached through
`app.store.Project`, so that a scheme's store module can import the store's submodules without a cycle."""
from __future__ import annotations

from app.store.artifacts import ArtifactsMixin
from app.store.assignments import AssignmentsMixin
from app.store.bulk import BulkMixin
from app.store.caches import CachesMixin
from app.store.decisions import DecisionsMixin
from app.store.guidelines import GuidelinesMixin
from app.store.project import ProjectBase
from app.store.reveals import RevealsMixin
from app.store.samples import SamplesMixin, SchemeDataMixin
from app.store.units import UnitsMixin


class Project(SchemeDataMixin, SamplesMixin, BulkMixin, DecisionsMixin, UnitsMixin, CachesMixin, ArtifactsMixin,
              AssignmentsMixin, RevealsMixin, GuidelinesMixin, ProjectBase):
    """A Concord project file. Open one per thread. A scheme's queries of its own tables are its store part,
    `project.store(name)`; the project inherits no scheme's class."""
