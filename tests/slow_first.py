"""Parallel runs start the longest tests first (a plugin that tests/conftest.py loads).

pytest-xdist hands tests to its workers in collection order, a couple at a time; a 20-second test collected near
the end runs alone while the other workers have nothing left to do. So each worker sorts its collection by the
durations the last runs recorded (pytest's cache: `.pytest_cache`, kept by `make test`): files by their longest
test, longest first, and within a file its tests longest first. A file's tests stay together, so its
module-scoped fixtures (a demo project, a Dask cluster, a loaded model) are not built again after an excursion to
another file. Every worker reads the same record, so all of them collect the same order, as xdist requires.
Without a record (a fresh checkout, `-p no:cacheprovider`) the tests named in `KNOWN_SLOW` count as the slow
ones, in its order. A run in one process keeps the collection order.
"""
from __future__ import annotations

from collections.abc import Mapping

import pytest

KEY = "concord/durations"
# the slowest tests (setup + call) of a full run, slowest first: the order when the cache holds no record yet
KNOWN_SLOW = (
    "tests/test_similarity_onnx.py::test_onnx_vectors_equal_sentence_transformers_on_varied_texts",
    "tests/test_violations_kernel.py::test_fused_kernel_equals_numpy_passes",
    "tests/test_user_isolation.py::test_a_run_that_writes_the_users_settings_fails[xdist-worker]",
    "tests/test_similarity_onnx.py::test_demo_decisions_identical_to_torch",
    "tests/test_gui_app_details.py::test_model_loading_in_the_helper_process_prints_nothing",
    "tests/test_violations_kernel.py::test_big_components_take_the_sorted_greedy_and_agree",
    "tests/test_similarity_onnx.py::test_default_path_never_imports_torch",
    "tests/test_cli_consistency.py::test_every_table_is_tsv_when_piped",
    "tests/test_search_engines.py::test_dask_cluster_gives_exactly_the_local_results[spearman]",
    "tests/test_similarity_embeddings.py::test_real_embeddings_are_semantic",
    "tests/test_user_isolation.py::test_a_run_that_writes_the_users_settings_fails[one-process]",
    "tests/test_search_engines.py::test_dask_cluster_gives_exactly_the_local_results[kappa]",
    "tests/test_gui_readable.py::test_no_text_is_cut_in_any_view[default]",
    "tests/test_search_engines.py::test_a_generic_item_objective_problem_on_dask_equals_local",
    "tests/test_calibrate_engines_cli.py::test_dask_engine_prints_and_stores_the_local_result",
    "tests/test_search_evaluate.py::test_grid_counts_equal_scalar_reference",
    "tests/test_readme_session.py::test_readme_session_runs_verbatim_after_make_run",
    "tests/test_violations_properties.py::test_records_to_matches_agree_with_reference",
    "tests/test_search_gain.py::test_paired_bootstrap_equals_a_plain_resampling_loop_item_objective",
    "tests/test_violations_properties.py::test_optimal_total_is_the_brute_force_maximum_and_never_below_greedy",
    "tests/test_violations_properties.py::test_scores_are_bit_identical_to_reference",
    "tests/test_addm_search.py::test_process_weights_problem_and_planted_weights",
    "tests/test_gui_readable.py::test_no_text_is_cut_in_any_view[1280x800]",
    "tests/test_store_locks.py::test_second_open_in_process_keeps_other_processes_writes",
    "tests/test_violations_properties.py::test_optimal_matches_reference_on_random_pair_tables",
    "tests/test_violations_properties.py::test_greedy_matches_reference_on_random_pair_tables",
    "tests/test_search_evaluate.py::test_optimal_grid_counts_equal_scalar_reference",
    "tests/test_trace_properties.py::test_completeness_and_adherence_in_unit_interval_for_ragbench",
    "tests/test_gui_calibration_gain.py::test_the_verdict_comes_first_and_apply_asks_when_not_better",
    "tests/test_violations_plain_record.py::test_plain_record_accepts_only_what_parse_record_finds_nothing_wrong_with",
    "tests/test_gui_errors.py::test_automatic_backups_at_most_once_per_hour",
    "tests/test_report.py::test_report_of_the_demo_has_each_scheme_the_stored_verdict_counts_and_real_charts",
)

_measured: dict[str, float] = {}


def _plain(nodeid: str) -> str:
    """The test's id without the `@group` suffix xdist's loadgroup adds (the rule of xdist's _split_scope)."""
    return nodeid.rsplit("@", 1)[0] if nodeid.rfind("@") > nodeid.rfind("]") else nodeid


def _recorded(config: pytest.Config) -> dict[str, float]:
    cache = getattr(config, "cache", None)
    got = cache.get(KEY, None) if cache is not None else None
    if isinstance(got, dict) and got:
        return got
    return {nodeid: float(len(KNOWN_SLOW) - rank) for rank, nodeid in enumerate(KNOWN_SLOW)}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not hasattr(config, "workerinput"):  # the controller (it collects nothing) or a run in one process
        return
    items[:] = [items[i] for i in slow_first([item.nodeid for item in items], _recorded(config))]


def slow_first(nodeids: list[str], seconds: Mapping[str, float]) -> list[int]:
    """Positions of `nodeids` in run order: files by their longest test, then a file's tests longest first; ties
    (tests without a record) keep their collection order."""
    took = [float(seconds.get(_plain(n), 0.0)) for n in nodeids]
    files = [n.split("::", 1)[0] for n in nodeids]
    longest: dict[str, float] = {}
    for f, t in zip(files, took):
        longest[f] = max(longest.get(f, 0.0), t)
    first_seen = {f: i for i, f in reversed(list(enumerate(files)))}
    return sorted(range(len(nodeids)), key=lambda i: (-longest[files[i]], first_seen[files[i]], -took[i]))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Setup, call and teardown of each test, as the process that reports the run sees them (xdist: the
    controller receives every worker's reports)."""
    key = _plain(report.nodeid)
    _measured[key] = _measured.get(key, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Kept for the next run, merged over the last record (a run of a few files keeps the others' durations)."""
    config = session.config
    cache = getattr(config, "cache", None)
    if hasattr(config, "workerinput") or cache is None or not _measured:
        return
    old = cache.get(KEY, None)
    merged = {**(old if isinstance(old, dict) else {}), **{k: round(v, 2) for k, v in _measured.items()}}
    cache.set(KEY, merged)
