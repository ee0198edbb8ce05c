"""The CLI's `main` run in the test's process, its result shaped like `subprocess.run`'s.

A child process per command costs a second of interpreter start-up and imports; tests that check what a command
prints into a pipe and its exit status (not signals, kills, terminals or process isolation) see the same in
this process: stdout and stderr are captured into strings, neither a terminal, as with a pipe.
"""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
from collections.abc import Mapping
from unittest import mock


def run_cli(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`concord ARGS` with `env` added to the environment while it runs; argparse's refusals and `--help` end in
    the exit status the interpreter would give them."""
    from app.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), mock.patch.dict(os.environ, env or {}):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())
