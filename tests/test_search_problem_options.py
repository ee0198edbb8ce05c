"""A search problem's optional members are declared with their defaults (calibration.search.problem.ProblemOptions)
and read in one place, `options(problem)`: the engine never probes a problem with getattr (issue #25)."""
from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

from calibration.search.problem import OPTIONAL_MEMBERS, ProblemOptions, nouns, options, suggested_objective

SEARCH = Path(__file__).resolve().parent.parent / "calibration" / "search"


def test_undeclared_members_take_their_defaults() -> None:
    found = options(SimpleNamespace())
    assert found == ProblemOptions()
    assert (found.stats, found.threaded, found.scheme) == (None, False, None)
    assert suggested_objective(SimpleNamespace()) == "kappa" and nouns(SimpleNamespace()) == ("group", "stratum")


def test_declared_members_are_read() -> None:
    def stats(configs, cell_of_item, n_cells, tick):  # noqa: ANN001, ANN202
        return None

    p = SimpleNamespace(objective="weighted_kappa", group_noun="business", stratum_noun="method", stats=stats,
                        threaded=True, scheme="addm")
    found = options(p)
    assert (found.objective, found.stats, found.threaded, found.scheme) == ("weighted_kappa", stats, True, "addm")
    assert suggested_objective(p) == "weighted_kappa" and nouns(p) == ("business", "method")


@pytest.mark.parametrize(("member", "value", "message"), [
    ("stats", 3, "problem.stats: must be callable"),
    ("threaded", "yes", "problem.threaded: must be True or False"),
    ("scheme", 7, "problem.scheme: must be a string"),
])
def test_a_member_of_the_wrong_type_is_named(member: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        options(SimpleNamespace(**{member: value}))


def test_the_engine_reads_no_optional_member_with_getattr() -> None:
    """Outside problem.py, no `getattr(problem, "<optional member>", ...)` in calibration/search/."""
    bad = []
    for path in sorted(SEARCH.glob("*.py")):
        if path.name == "problem.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
                    and node.args[1].value in OPTIONAL_MEMBERS):
                bad.append(f"{path.name}:{node.lineno} {node.args[1].value}")
    assert bad == []
