"""resources/setup/qt_system_libs.py: missing Qt system libraries are found with ldd, installed as root with apt,
or reported with the exact command (issue #19: `make run` on a clean Debian 12)."""
from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "resources" / "setup" / "qt_system_libs.py"
mod = runpy.run_path(str(SCRIPT), run_name="qt_system_libs")

LDD_XCB = """\
\tlinux-vdso.so.1 (0x00007ffd)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f30)
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-weird.so.9 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f30)
"""


@pytest.fixture
def pyside(tmp_path: Path) -> Path:
    for rel in (*mod["COMMON"], *mod["PLATFORM_FILES"]["xcb"], *mod["PLATFORM_FILES"]["offscreen"]):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"")
    return tmp_path


class FakeMachine:
    def __init__(self, missing_until_install: bool = True, emoji_font: bool = True) -> None:
        self.installed = False
        self.emoji_font = emoji_font
        self.commands: list[list[str]] = []

    def fc(self, args: list[str]) -> str:
        """fc-list ':charset=1f600' family: the fonts covering 🚀 and 🦌 (none until the font package is installed)."""
        assert args[0] == ":charset=1f680 1f98c"
        return "Noto Color Emoji\n" if self.emoji_font else ""

    def ldd(self, args: list[str]) -> str:
        return "" if self.installed or not args[0].endswith(("libqxcb.so", "libQt6XcbQpa.so.6")) else LDD_XCB

    def execute(self, cmd: list[str]) -> int:
        self.commands.append(cmd)
        if "install" in cmd:
            self.installed = True
            self.emoji_font = self.emoji_font or "fonts-noto-color-emoji" in cmd
        return 0


def test_missing_libraries_parsed_and_mapped() -> None:
    libs = mod["missing_libraries"]([SCRIPT], lambda a: LDD_XCB)
    assert libs == ["libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-weird.so.9"]
    assert mod["packages_for"](libs) == (["libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1"], ["libxcb-weird.so.9"])


def test_root_with_apt_updates_once_then_installs(pyside: Path) -> None:
    m = FakeMachine()
    rc = mod["main"](["--platform", "xcb", "--pyside-dir", str(pyside)], run=m.ldd, execute=m.execute, fc=m.fc,
                     is_root=True, has_apt=True)
    assert rc == 0
    assert m.commands == [["apt-get", "update"], ["apt-get", "install", "-y", "--no-install-recommends",
                                                 "libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1"]]


def test_not_root_stops_with_the_exact_command(pyside: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m = FakeMachine()
    rc = mod["main"](["--platform", "xcb", "--pyside-dir", str(pyside)], run=m.ldd, execute=m.execute, fc=m.fc,
                     is_root=False, has_apt=True)
    assert rc == 1 and m.commands == []
    err = capsys.readouterr().err
    assert ("sudo apt-get update && sudo apt-get install -y --no-install-recommends "
            "libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1") in err
    assert "libxcb-weird.so.9" in err


def test_check_never_installs_and_offscreen_needs_less(pyside: Path) -> None:
    m = FakeMachine()
    assert mod["main"](["--check", "--pyside-dir", str(pyside)], run=m.ldd, execute=m.execute, fc=m.fc,
                       is_root=True, has_apt=True) == 1
    assert m.commands == []
    assert mod["main"](["--platform", "offscreen", "--pyside-dir", str(pyside)], run=m.ldd, execute=m.execute, fc=m.fc,
                       is_root=True, has_apt=True) == 0


def test_offscreen_plugin_resolves_here() -> None:
    """`make test` runs this first: the test suite's own platform plugin must have its libraries."""
    proc = subprocess.run([sys.executable, str(SCRIPT), "--platform", "offscreen", "--check"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_makefile_runs_the_check_before_qt() -> None:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    run = text.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    test = text.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "QT_LIBS := $(BIN)/python resources/setup/qt_system_libs.py" in text
    assert "$(QT_LIBS) --platform xcb" in run and run.index("QT_LIBS") < run.index("concord gui")
    assert "$(QT_LIBS) --platform offscreen" in test and test.index("QT_LIBS") < test.index("pytest")


def test_missing_emoji_font_is_installed_with_the_libraries(pyside: Path) -> None:
    """Emoji drawn as empty boxes (issue #27 item 10): no font covers 🚀, so its package joins the install."""
    m = FakeMachine(emoji_font=False)
    rc = mod["main"](["--platform", "xcb", "--pyside-dir", str(pyside)], run=m.ldd, execute=m.execute, fc=m.fc,
                     is_root=True, has_apt=True)
    assert rc == 0 and m.emoji_font
    assert m.commands[-1] == ["apt-get", "install", "-y", "--no-install-recommends", "fonts-noto-color-emoji",
                              "libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1"]


def test_missing_emoji_font_alone_is_advice_not_a_stop(pyside: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m = FakeMachine(emoji_font=False)
    m.installed = True  # every library is there
    rc = mod["main"](["--platform", "offscreen", "--check", "--pyside-dir", str(pyside)], run=m.ldd,
                     execute=m.execute, fc=m.fc, is_root=False, has_apt=True)
    assert rc == 0 and m.commands == []
    err = capsys.readouterr().err
    assert "emoji" in err and "sudo apt-get install -y --no-install-recommends fonts-noto-color-emoji" in err
