"""The Project class, assembled from the store's generic parts and the built-in schemes' store mixins (their
store contributions' MIXINS, supplied by app/schemes/loader.py). A module of its own, reached through
`app.store.Project`, so that a scheme's store module can import the store's submodules without a cycle."""
from __future__ import annotations

from app.schemes.loader import store_mixins
from app.store.artifacts import ArtifactsMixin
from app.store.assignments import AssignmentsMixin
from app.store.bulk import BulkMixin
from app.store.caches import CachesMixin
from app.store.decisions import DecisionsMixin
from app.store.guidelines import GuidelinesMixin
from app.store.project import ProjectBase
from app.store.samples import SamplesMixin, SchemeDataMixin
from app.store.units import UnitsMixin


class Project(*store_mixins(), SchemeDataMixin, SamplesMixin, BulkMixin, DecisionsMixin, UnitsMixin,  # type: ignore[misc]
              CachesMixin, ArtifactsMixin, AssignmentsMixin, GuidelinesMixin, ProjectBase):
    """A Concord project file. Open one per thread. The store mixins of the built-in schemes that keep tables of
    their own come first, from their manifests, so the store names no scheme; a scheme's record type comes from its
    module."""
