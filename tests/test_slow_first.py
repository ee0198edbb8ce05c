"""The order parallel runs hand tests out in (tests/slow_first.py): the longest first, a file's tests together."""
from __future__ import annotations

from tests.slow_first import _plain, slow_first


def test_files_by_their_longest_test_then_tests_longest_first() -> None:
    ids = ["tests/a.py::t1", "tests/a.py::t2", "tests/b.py::t1", "tests/b.py::t2", "tests/c.py::t1"]
    seconds = {"tests/a.py::t2": 3.0, "tests/b.py::t2": 9.0, "tests/b.py::t1": 1.0}
    assert [ids[i] for i in slow_first(ids, seconds)] == [
        "tests/b.py::t2", "tests/b.py::t1", "tests/a.py::t2", "tests/a.py::t1", "tests/c.py::t1"]


def test_without_a_record_files_keep_their_collection_order() -> None:
    ids = ["tests/b.py::t1", "tests/a.py::t1", "tests/b.py::t2", "tests/a.py::t2"]
    assert slow_first(ids, {}) == [0, 2, 1, 3]  # a file's tests come together, files in order of first sight


def test_xdist_group_suffix_is_not_part_of_the_record_key() -> None:
    assert _plain("tests/a.py::t1@timing") == "tests/a.py::t1"
    assert _plain("tests/a.py::t[x@y]") == "tests/a.py::t[x@y]"  # an @ inside a parameter id stays
    ids = ["tests/a.py::fast", "tests/a.py::slow@torch"]
    assert slow_first(ids, {"tests/a.py::slow": 5.0}) == [1, 0]
