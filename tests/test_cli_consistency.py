"""The command line behaves the same everywhere and says what is missing (issue #27 items 7 and 8): help with
examples and a line for every argument, TSV whenever stdout is not a terminal, headers that fit 80 columns on a
terminal, "did you mean", case-insensitive --scheme, swapped PROJECT and FILE, one rule for nothing to work on."""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli import build_parser
from app.cli_suggest import parsers
from tests.cli_inprocess import run_cli

ROOT = Path(__file__).resolve().parents[1]
BOX = re.compile("[\u2500-\u257f]")  # box-drawing characters: rich's table borders


def concord(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with stdout and stderr piped (not a terminal), in this process (tests/cli_inprocess.py): what is
    checked here is the same in a child process; the terminal tests below need one (a pseudo-terminal)."""
    return run_cli(*args, env={"COLUMNS": "80"})


def on_terminal(*args: str, columns: int = 80) -> tuple[int, str]:
    """The CLI in a child process whose stdout is a pseudo-terminal `columns` wide; (exit status, what it showed)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", *args], cwd=ROOT, stdin=slave, stdout=slave,
                            stderr=slave, env=env, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    rc = proc.wait(timeout=300)
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return rc, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)  # colours and styles off


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from app.io.demo import create_demo

    path = tmp_path_factory.mktemp("cli") / "demo.concord"
    create_demo(path).close()
    yield path


# -- help ----------------------------------------------------------------------------------------------------------
def _tree() -> list[tuple[str, argparse.ArgumentParser]]:
    return [(p.prog, p) for p in parsers(build_parser())]


def test_every_command_has_examples_and_every_argument_has_help() -> None:
    tree = _tree()
    assert len(tree) > 20  # every command and sub-command (labels import, traits list, ...) is walked
    for prog, p in tree:
        assert "examples:" in (p.epilog or ""), f"{prog} --help has no examples"
        for action in p._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            assert action.help and action.help.strip(), f"{prog}: {action.option_strings or action.dest} has no help"


def test_help_names_no_issue_numbers_source_files_or_internal_names() -> None:
    for prog, p in _tree():
        text = p.format_help()
        assert not re.search(r"issue #?\d+", text, re.IGNORECASE), prog
        assert "label_items" not in text and "search_problem" not in text, prog
        assert not re.search(r"\b(app|calibration)/[\w/<>.]*", text), f"{prog} --help points at a source path"


def test_objective_lists_the_choices_from_the_registry() -> None:
    from calibration.search.objectives import OBJECTIVES

    text = " ".join(build_parser("calibrate")._subparsers._group_actions[0].choices["calibrate"]  # type: ignore[union-attr]
                    .format_help().split())
    for name in OBJECTIVES:
        assert re.search(rf"\b{name}\b", text), name


# -- slips: did you mean, --scheme case, swapped arguments -------------------------------------------------------
@pytest.mark.parametrize(("argv", "suggestion"), [
    (["calibrate", "p.concord", "--objectve", "f1"], "did you mean --objective?"),
    (["--verison"], "did you mean --version?"),
    (["evalute", "p.concord"], "did you mean evaluate?"),
    (["queue", "p.concord", "--order", "rnadom"], "did you mean random?"),
    (["export", "p.concord", "--name", "x", "--version", "1.0.0", "--dry-rn"], "did you mean --dry-run?"),
])
def test_a_misspelled_option_command_or_choice_gets_a_suggestion(argv: list[str], suggestion: str) -> None:
    proc = concord(*argv)
    assert proc.returncode == 2
    assert suggestion in proc.stderr
    assert proc.stdout == ""


def test_nothing_close_gets_no_suggestion() -> None:
    proc = concord("status", "p.concord", "--zzzzzz")
    assert proc.returncode == 2 and "unrecognized arguments: --zzzzzz" in proc.stderr
    assert "did you mean" not in proc.stderr


def test_scheme_is_case_insensitive(demo: Path) -> None:
    upper = concord("evaluate", str(demo), "--scheme", "RGB", "--bootstrap", "0", "--json")
    lower = concord("evaluate", str(demo), "--scheme", "rgb", "--bootstrap", "0", "--json")
    assert upper.returncode == lower.returncode == 0, upper.stderr
    assert json.loads(upper.stdout) == json.loads(lower.stdout)
    assert set(json.loads(upper.stdout)) == {"schema_version", "rgb"}


def test_swapped_project_and_file_get_a_hint(demo: Path, tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    shutil.copy(ROOT / "resources" / "demo" / "rgb.jsonl", data)
    before = data.read_bytes()
    for command in (["import"], ["labels", "import"]):
        proc = concord(*command, str(data), str(tmp_path / "proj.concord"))
        assert proc.returncode == 2
        assert "look swapped" in proc.stderr
        assert f"concord {' '.join(command)} {tmp_path / 'proj.concord'} {data}" in proc.stderr
    assert data.read_bytes() == before and not (tmp_path / "proj.concord").exists()
    proc = concord("import", str(demo), str(tmp_path / "missing.jsonl"))  # the right order: no hint
    assert proc.returncode == 2 and "look swapped" not in proc.stderr


def test_demo_lists_the_warnings_it_counts(tmp_path: Path) -> None:
    proc = concord("demo", str(tmp_path / "demo.concord"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    counted = [(i, int(m.group(1))) for i, line in enumerate(lines) if (m := re.search(r"(\d+) warning\(s\)", line))]
    assert counted, "the demo data has warnings; the summary should count them"
    start = 0
    for i, n in counted:  # each summary's warnings are listed above it, after the previous summary
        listed = [line for line in lines[start:i] if line.startswith("warning: ")]
        assert len(listed) == n, lines[start:i + 1]
        start = i + 1


# -- tables: TSV when piped, fitted on a terminal -----------------------------------------------------------------
def test_every_table_is_tsv_when_piped(demo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "demo.concord"
    shutil.copy(demo, copy)
    runs = {
        "calibrate": ["calibrate", str(copy), "--embedding", "jaccard", "--step", "0.5", "--bootstrap", "20",
                      "--top", "3", "--curve"],
        "queue": ["queue", str(copy), "--limit", "5"],
        "status": ["status", str(copy)],
        "evaluate": ["evaluate", str(copy), "--embedding", "jaccard", "--bootstrap", "20"],
        "agreement": ["agreement", str(copy), "--bootstrap", "20"],
        "export": ["export", str(copy), "--name", "x", "--version", "1.0.0", "--dry-run"],
    }
    for name, argv in runs.items():
        proc = concord(*argv)
        assert proc.returncode == 0, (name, proc.stderr)
        assert not BOX.search(proc.stdout), f"{name} printed a boxed table into a pipe"
        assert re.search(r"^# .+\n[^\n]*\t", proc.stdout, re.MULTILINE), f"{name}: no '# title' + TSV header"
    top = concord(*runs["calibrate"]).stdout
    assert re.search(r"^# Top 3 of [\d,]+ configs[^\n]*\nrank\t", top, re.MULTILINE)
    assert re.search(r"^# Learning curve", top, re.MULTILINE)


def test_tables_are_boxed_on_a_terminal(demo: Path) -> None:
    rc, shown = on_terminal("queue", str(demo), "--limit", "3")
    assert rc == 0
    assert BOX.search(shown) and "\t" not in shown


def test_status_headers_fit_80_columns(demo: Path) -> None:
    rc, shown = on_terminal("status", str(demo), columns=80)
    assert rc == 0
    table = [line for line in shown.splitlines() if BOX.search(line)]
    assert table and all(len(line) <= 80 for line in table), max(map(len, table))
    header = " ".join(" ".join(line.replace("┃", " ").split()) for line in table
                      if line.startswith("┃"))  # the header rows (the heavy head)
    for word in ("scheme", "checker", "trait", "predicted", "units", "labeled", "unlabeled", "with", "status"):
        assert re.search(rf"\b{word}\b", header), (word, header)
    assert "…" not in header


def test_wide_tables_fit_80_columns_without_cutting_a_header_or_a_value(demo: Path) -> None:
    """The checker leaderboard (long checker ids) and the rubric table (nine columns) on an 80-column terminal: every
    line fits, and nothing is cut to an ellipsis (headers wrap between words, ids fold)."""
    rc, shown = on_terminal("evaluate", str(demo), "--scheme", "violations", "--scheme", "rubric", "--bootstrap", "20",
                            "--embedding", "jaccard", columns=80)
    assert rc == 0
    lines = [line for line in shown.splitlines() if "working" not in line and line.strip()]
    assert max(map(len, lines)) <= 80
    assert not any("…" in line for line in lines), [line for line in lines if "…" in line]
    text = " ".join(shown.split())
    for header in ("precision", "recall", "checked", "kappa", "std_match", "human"):
        assert re.search(rf"\b{header}\b", text), header


# -- nothing to work on: one rule, and what is missing ------------------------------------------------------------
def test_an_empty_project_is_refused_alike(tmp_path: Path) -> None:
    project = tmp_path / "empty.concord"
    assert concord("init", str(project)).returncode == 0
    for command in ("evaluate", "calibrate", "queue"):
        proc = concord(command, str(project))
        assert proc.returncode == 2, command
        assert f"nothing to {command}: {project} has no samples yet" in proc.stderr
        assert f"concord import {project} FILE" in proc.stderr
        assert proc.stdout == ""


@pytest.fixture(scope="module")
def rgb_without_answers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """RGB queries as RGB's data files give them: passages, no model answers, hence no units."""
    folder = tmp_path_factory.mktemp("rgb")
    data = folder / "queries.jsonl"
    with data.open("w", encoding="utf-8") as out:
        for line in (ROOT / "resources" / "demo" / "rgb.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            for key in ("responses", "response", "model"):
                record.pop(key, None)
            out.write(json.dumps({**record, "docs": []}) + "\n")
    project = folder / "rgb.concord"
    assert concord("init", str(project)).returncode == 0
    proc = concord("import", str(project), str(data))
    assert proc.returncode == 0, proc.stderr
    return project


def test_rgb_without_answers_says_how_to_get_them(rgb_without_answers: Path) -> None:
    project = str(rgb_without_answers)
    evaluate = concord("evaluate", project)
    assert evaluate.returncode == 2
    assert "none holds a model's answer yet" in evaluate.stderr and "concord generate" in evaluate.stderr
    assert "prediction" in evaluate.stderr
    assert not re.search(r"^# ", evaluate.stdout, re.MULTILINE)  # no empty tables
    queue = concord("queue", project)
    assert queue.returncode == 0
    assert "none holds a model's answer yet" in queue.stdout and "concord generate" in queue.stdout
    assert "# Next" not in queue.stdout and "no calibration run yet" not in queue.stdout
    calibrate = concord("calibrate", project)
    assert calibrate.returncode == 2 and "concord generate" in calibrate.stderr


def test_evaluate_without_human_labels_says_what_to_label_first(tmp_path: Path) -> None:
    project = tmp_path / "unlabeled.concord"
    assert concord("init", str(project)).returncode == 0
    assert concord("import", str(project), str(ROOT / "resources" / "demo" / "trace.jsonl")).returncode == 0
    proc = concord("evaluate", str(project), "--bootstrap", "20")
    assert proc.returncode == 0, proc.stderr
    assert "TRACe: no human labels yet" in proc.stdout
    assert f"concord queue {project} --scheme trace" in proc.stdout
    assert "# Mean scores (ragbench, annotator labels)" in proc.stdout  # what needs no human is still shown
    assert "Annotator vs human" not in proc.stdout  # tables of dashes and zero counts are left out


def test_no_command_prints_a_rich_table_itself() -> None:
    """Every table goes through app.cli_tables.print_table (TSV when piped): no module outside it and the GUI hands a
    name bound to `Table(...)` to a console's `print`."""
    import ast

    offenders = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        if "gui" in path.parts or path.name == "cli_tables.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            tables = {t.id for node in ast.walk(fn) if isinstance(node, ast.Assign)
                      and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "Table"
                      for t in node.targets if isinstance(t, ast.Name)}
            for node in ast.walk(fn):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "print"
                        and any(isinstance(a, ast.Name) and a.id in tables for a in node.args)):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
