"""One scheme's share of a curated split, and the hooks a scheme's export adapter implements.

The export (app/io/export.py) loops over schemes: a scheme whose io adapter (app/schemes/<name>/io.py) has
`EXPORT`, a `SchemeExport`, keeps its own curated export (violations: human-validated ground truth; rubric: buckets
with their metrics); every other scheme with samples in the project is exported through the registry
(app/io/export_generic.py). Sampling is shared: each part offers its candidate samples with a stratum, one draw
over all of them picks the split (export_select.select), then each part writes the records of the picked ones.

Hooks, in the order the export calls them (the base class's defaults do nothing):
  params_ref(project, ref) -> str                           the exact ref of the parameters the split is documented
                                                             with (only when `params_name` is set; see below)
  candidates(project, filters, skipped, progress) -> Part    the units a human decided on, per sample a stratum
  export_rows(project, part, keep)                           fill part.datasets (dataset -> records) for `keep`
  manifest_counts(part) / manifest_agreement(...) / manifest_fields()   entries merged into counts / agreement /
                                                             the manifest's top level
  manifest_params(project, ref) / card_params(manifest)     how the manifest and the data card document `ref`
  card_* and count_tables/overview_rows                      the README data card and the CLI's count tables
Two parts may write the same dataset (violations and rubric share `labels`): their records are merged in sample
order (each part sorts its own), so the split's bytes do not depend on the order parts are visited in.

Parameters: what a scheme's parameters mean to its split is the adapter's business. An adapter that documents them
sets `params_name` (violations: "match config"); the export picks a ref per such scheme through the registry
(export_select.normalize_filters: the one `--config` names for app.services.configs.config_scheme(), else
app.services.configs.default_params_ref), the adapter checks it (`params_ref`) and writes it into the manifest and
the data card. Every other adapter's split depends on no parameters and names none.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from calibration.schemes.base import Table

if TYPE_CHECKING:
    from app.io.export_select import Filters
    from app.progress import Progress
    from app.store import Project

NO_SPLIT = "(none)"


@dataclass
class Part:
    """A scheme's share of the split. `strata`: candidate sample id -> stratum (under --stratify; one stratum
    "all" without it). After `export_rows`: `datasets`, `annotators`, `by_split` (records per split value),
    `n_units` (decided units written), `unit_keys` (which ones) and `n_labels` (label rows written)."""

    scheme: str
    adapter: "SchemeExport"
    strata: dict[str, str] = field(default_factory=dict)
    datasets: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    annotators: set[str] = field(default_factory=set)
    by_split: dict[str, int] = field(default_factory=dict)
    n_units: int = 0
    n_labels: int = 0
    unit_keys: set[tuple[str, str]] = field(default_factory=set)  # (sample, unit) of the units written
    n_labeled: int = 0  # of those, the labeled ones (app/store/counts.py's rule; set by export_select.select)
    state: Any = None  # the adapter's own (selected units, curated ground truth, ...)

    @property
    def records(self) -> list[dict[str, Any]]:
        """The part's records (its dataset named after the scheme)."""
        return self.datasets.get(self.scheme, [])

    @property
    def labels(self) -> list[dict[str, Any]]:
        return self.datasets.get(f"{self.scheme}_labels", [])

    @property
    def units(self) -> int:
        return self.n_units


def count_splits(records: list[dict[str, Any]]) -> dict[str, int]:
    by_split: Counter[str] = Counter(r.get("split") or NO_SPLIT for r in records)
    return dict(sorted(by_split.items()))


class SchemeExport:
    """Base of a scheme's export adapter. Every part is counted alike (export_manifest.counts): samples, units,
    labeled units and label rows per scheme and per split; an adapter adds entries of its own (`manifest_counts`)."""

    scheme: str = ""
    columns: Mapping[str, tuple[str, ...]] = {}  # dataset -> its fixed CSV/Parquet column order (else the keys)

    params_name: str | None = None  # what the scheme's parameters are called in messages; None: none documented

    def params_ref(self, project: "Project", ref: str) -> str:
        """`ref` (a preset, a stored `name@version`, or a name for its newest version) as the exact ref the split
        is documented with; an unknown ref is a UsageError. Called only when `params_name` is set."""
        raise NotImplementedError

    def candidates(self, project: "Project", f: "Filters", skipped: Counter[str], progress: "Progress | None") -> Part:
        raise NotImplementedError

    def export_rows(self, project: "Project", part: Part, keep: set[str]) -> None:
        raise NotImplementedError

    def manifest_counts(self, part: Part) -> dict[str, Any]:
        return {}

    def manifest_agreement(self, project: "Project", part: Part, config_ref: str | None) -> dict[str, Any]:
        """`config_ref`: the ref of the scheme's parameters the split is documented with (None: it names none)."""
        return {}

    def manifest_fields(self) -> dict[str, Any]:
        return {}

    def manifest_params(self, project: "Project", ref: str) -> dict[str, Any]:
        """Top-level manifest entries documenting the parameters `ref` (what `params_ref` returned)."""
        return {}

    def documented_ref(self, manifest: Mapping[str, Any]) -> str | None:
        """The ref of the scheme's parameters an existing split's manifest documents (None: none)."""
        return None

    # -- the README data card (app/io/export_manifest.readme), in the order it is written -----------------------
    def card_files(self, ext: str) -> list[str]:
        """Bullets describing the part's data files."""
        return []

    def card_label_line(self) -> str | None:
        """How the part's lines in the shared `labels` file read (joined with the other parts' by ", and ")."""
        return None

    def card_notes(self, manifest: Mapping[str, Any]) -> list[str]:
        return []

    def card_counts(self, counts: Mapping[str, Any]) -> list[str]:
        """Bullets after "- samples: ..." in the Counts section."""
        return []

    def card_tables(self, manifest: Mapping[str, Any], ext: str) -> list[str]:
        return []

    def card_agreement(self, manifest: Mapping[str, Any]) -> list[str]:
        return []

    def card_params(self, manifest: Mapping[str, Any]) -> list[str]:
        """Bullets of the Provenance section naming the parameters the split is documented with."""
        return []

    # -- the CLI's count tables (app/commands/export.counts_tables) -----------------------------------------------
    def overview_rows(self, counts: Mapping[str, Any]) -> list[tuple[str, str]]:
        return []

    def count_tables(self, counts: Mapping[str, Any]) -> list[Table]:
        return []
