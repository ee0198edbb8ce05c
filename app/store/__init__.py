"""The project file. The only package that contains SQL."""
from __future__ import annotations

from app.store.artifacts import ArtifactsMixin
from app.store.assignments import AssignmentsMixin
from app.store.caches import CachesMixin
from app.store.decisions import KINDS, STATUSES, Change, DecisionsMixin
from app.store.project import ProjectBase
from app.store.samples import SamplesMixin, SchemeDataMixin, WriteCounts
from app.store.schema import LATEST as SCHEMA_VERSION
from app.store.schemes import ADAPTERS
from app.store.bulk import BulkMixin
from app.store.units import UnitFilter, UnitsMixin


class Project(*ADAPTERS, SchemeDataMixin, SamplesMixin, BulkMixin, DecisionsMixin, UnitsMixin,  # type: ignore[misc]
              CachesMixin, ArtifactsMixin, AssignmentsMixin, ProjectBase):
    """A Concord project file. Open one per thread. The store adapters of the schemes that keep tables of their own
    (app/store/schemes/) come first, so this package names no scheme; a scheme's record type comes from its module."""


__all__ = ["Project", "Change", "UnitFilter", "WriteCounts", "KINDS", "STATUSES", "SCHEMA_VERSION"]
