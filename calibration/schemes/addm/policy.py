"""The ADDM scoring policy: severity points, modifier bonuses, verdict thresholds and process-score weights.

Everything the spec hard-codes is a parameter here so that calibration can search it; `ADDM_V2` holds the
spec's values. Verdicts are ordinal: 0 Low Risk, 1 High Risk, 2 Critical Risk.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

SEVERITIES: tuple[str, ...] = ("mild", "moderate", "severe")
MODIFIERS: tuple[str, ...] = ("False assurance", "Dismissive staff")
VERDICTS: tuple[str, ...] = ("Low Risk", "High Risk", "Critical Risk")
COMPONENTS: tuple[str, ...] = (
    "incident_precision", "severity_accuracy", "modifier_accuracy", "verdict_support_rate", "snippet_validity")
LOW, HIGH, CRITICAL = 0, 1, 2

_VERDICT_KEYS: dict[str, int] = {}
for _i, _v in enumerate(VERDICTS):
    for _k in (_v, _v.split()[0]):  # "High Risk" and "High"
        _VERDICT_KEYS[_k.casefold()] = _i
_MODIFIER_KEYS = {m.casefold(): m for m in MODIFIERS}


class PolicyError(ValueError):
    """A policy that cannot be used; the message names the field."""


def verdict_ordinal(value: Any) -> int | None:
    """0/1/2 for a verdict name ('High Risk', 'high', 'HIGH_RISK', "'Low Risk'"), None when unknown."""
    if not isinstance(value, str):
        return None
    return _verdict_of(value)


@lru_cache(maxsize=1024)  # pure, on the few spellings a project uses: read back per verdict of every business
def _verdict_of(value: str) -> int | None:
    key = " ".join(value.strip().strip("'\"`").replace("_", " ").split()).casefold()
    return _VERDICT_KEYS.get(key)


@lru_cache(maxsize=1024)  # pure, on the few spellings a project uses: read back per modifier of every incident
def canonical_modifier(name: str) -> str:
    """The spec's spelling of a known modifier (matched ignoring case and spacing); other names unchanged."""
    return _MODIFIER_KEYS.get(" ".join(name.split()).casefold(), name.strip())


@dataclass(frozen=True)
class Policy:
    """Points per severity (SEVERITIES order), bonus per modifier (MODIFIERS order), thresholds, weights."""

    name: str = "addm_v2"
    severity_points: tuple[float, float, float] = (2.0, 5.0, 15.0)
    modifier_points: tuple[float, float] = (5.0, 3.0)
    critical: float = 8.0  # score >= critical -> Critical Risk
    high: float = 4.0  # else score >= high -> High Risk, else Low Risk
    process_weights: tuple[float, float, float, float, float] = (0.35, 0.30, 0.15, 0.15, 0.05)

    def __post_init__(self) -> None:
        for field, values, n in (("severity_points", self.severity_points, 3), ("modifier_points", self.modifier_points, 2),
                                 ("process_weights", self.process_weights, 5)):
            vals = tuple(values)
            if len(vals) != n or not all(_finite(v) for v in vals):
                raise PolicyError(f"{field}: expected {n} finite numbers, got {values!r}")
            object.__setattr__(self, field, tuple(float(v) for v in vals))
        for field in ("critical", "high"):
            if not _finite(getattr(self, field)):
                raise PolicyError(f"{field}: expected a finite number, got {getattr(self, field)!r}")
        if self.high > self.critical:
            raise PolicyError(f"high ({self.high}) must not exceed critical ({self.critical})")
        if any(w < 0 for w in self.process_weights) or sum(self.process_weights) <= 0:
            raise PolicyError(f"process_weights: must be >= 0 with a positive sum, got {self.process_weights}")
        # lookup tables (not fields: no effect on equality, hashing or to_dict); scores call these per incident
        object.__setattr__(self, "_points", dict(zip(SEVERITIES, self.severity_points)))
        object.__setattr__(self, "_bonus", dict(zip(MODIFIERS, self.modifier_points)))

    def points(self, severity: str) -> float:
        """Base points of a severity; 0 for an unknown one."""
        return self._points.get(severity, 0.0)  # type: ignore[attr-defined]

    def bonus(self, modifier: str) -> float:
        """Bonus of a modifier; 0 for one the policy does not know."""
        return self._bonus.get(modifier, 0.0)  # type: ignore[attr-defined]

    def verdict(self, score: float) -> int:
        """Ordinal verdict of a point total."""
        return CRITICAL if score >= self.critical else HIGH if score >= self.high else LOW

    def weights(self) -> dict[str, float]:
        return dict(zip(COMPONENTS, self.process_weights))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["severity_points"] = dict(zip(SEVERITIES, self.severity_points))
        d["modifier_points"] = dict(zip(MODIFIERS, self.modifier_points))
        d["process_weights"] = self.weights()
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Policy":
        """Inverse of `to_dict`; missing entries keep the addm_v2 values."""
        base = ADDM_V2
        return cls(
            name=str(d.get("name", base.name)),
            severity_points=_ordered(d.get("severity_points"), SEVERITIES, base.severity_points, "severity_points"),
            modifier_points=_ordered(d.get("modifier_points"), MODIFIERS, base.modifier_points, "modifier_points"),
            critical=d.get("critical", base.critical),
            high=d.get("high", base.high),
            process_weights=_ordered(d.get("process_weights"), COMPONENTS, base.process_weights, "process_weights"),
        )


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _ordered(value: Any, names: Iterable[str], default: tuple[float, ...], field: str) -> Any:
    if value is None:
        return default
    if isinstance(value, Mapping):
        names = tuple(names)
        unknown = set(value) - set(names)
        if unknown:
            raise PolicyError(f"{field}: unknown names {sorted(unknown)} (expected {list(names)})")
        return tuple(value.get(n, d) for n, d in zip(names, default))
    return tuple(value)


ADDM_V2 = Policy()
PRESETS: dict[str, Policy] = {"addm_v2": ADDM_V2}
