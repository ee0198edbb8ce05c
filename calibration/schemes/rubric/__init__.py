"""The `rubric` scheme: metric traits whose TP/FN/FP/TN buckets an LLM fills and whose metrics are deterministic."""
from calibration.schemes.rubric.buckets import (
    BucketError,
    Buckets,
    bucket_counts,
    compute_trait_metrics,
    dedupe,
    effective_buckets,
    empty_buckets,
    metrics_from_counts,
    normalize_excerpt,
    validate_buckets,
)
from calibration.schemes.rubric.grounding import EXCERPT_BUCKETS, GroundedExcerpt, GroundingReport, ground_buckets
from calibration.schemes.rubric.traits import (
    BUCKET_NAMES,
    EVALUATION_MODES,
    METRIC_REQUIREMENTS,
    VALID_METRICS,
    MetricTrait,
    TraitError,
)

__all__ = [
    "BUCKET_NAMES",
    "EVALUATION_MODES",
    "EXCERPT_BUCKETS",
    "METRIC_REQUIREMENTS",
    "VALID_METRICS",
    "BucketError",
    "Buckets",
    "GroundedExcerpt",
    "GroundingReport",
    "MetricTrait",
    "TraitError",
    "bucket_counts",
    "compute_trait_metrics",
    "dedupe",
    "effective_buckets",
    "empty_buckets",
    "ground_buckets",
    "metrics_from_counts",
    "normalize_excerpt",
    "validate_buckets",
]
