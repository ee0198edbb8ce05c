#!/usr/bin/env python3
"""Find the system libraries Qt (PySide6 wheels) needs but this machine lacks, and install them if we can.

PySide6 wheels bundle Qt itself, not the X11/xcb/GL/font libraries the platform plugins link against. On a
fresh Debian 12 the xcb plugin (the desktop window) fails with "Could not load the Qt platform plugin xcb"
because libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1, ... are missing; slim images may lack even the
libraries the offscreen plugin (tests, screenshots) needs. This script runs `ldd` on the Qt libraries and the
chosen platform plugin, maps every "not found" library to its Debian package and then:

- nothing missing: exits 0 silently;
- root with apt-get: runs `apt-get update` once and `apt-get install -y --no-install-recommends PKGS`, checks
  again, exits 0 if everything resolves now;
- otherwise: prints the exact command to run (sudo apt-get ...) and exits 1, so `make` stops before Qt aborts.

Fonts too: without an emoji font Qt draws the emoji in sample texts as empty boxes, so a machine where `fc-list`
finds no font covering 🚀 and 🦌 (U+1F680, U+1F98C) gets fonts-noto-color-emoji (Debian/Ubuntu) the same way;
a missing font alone is reported (with the command) but never stops `make`.

Usage: python resources/setup/qt_system_libs.py [--platform xcb|offscreen] [--check]
(--check: report only, never install). Run it with the venv's python (it locates PySide6 without importing it).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

# soname -> Debian 12 (bookworm) package; also right for Ubuntu 22.04+ except where noted by apt itself.
DEBIAN_PACKAGES = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-glx.so.0": "libxcb-glx0",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libXext.so.6": "libxext6",
    "libXrender.so.1": "libxrender1",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libOpenGL.so.0": "libopengl0",
    "libGLX.so.0": "libglx0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libgobject-2.0.so.0": "libglib2.0-0",
    "libdbus-1.so.3": "libdbus-1-3",
    "libpng16.so.16": "libpng16-16",
    "libz.so.1": "zlib1g",
    "libgssapi_krb5.so.2": "libgssapi-krb5-2",
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
    "libwayland-egl.so.1": "libwayland-egl1",
}

COMMON = ("Qt/lib/libQt6Core.so.6", "Qt/lib/libQt6Gui.so.6", "Qt/lib/libQt6Widgets.so.6", "Qt/lib/libQt6DBus.so.6",
          "QtCore.abi3.so", "QtGui.abi3.so", "QtWidgets.abi3.so")
PLATFORM_FILES = {
    "xcb": ("Qt/plugins/platforms/libqxcb.so", "Qt/lib/libQt6XcbQpa.so.6"),
    "offscreen": ("Qt/plugins/platforms/libqoffscreen.so",),
}
# a font package -> a code point it must cover (checked with fontconfig's fc-list)
FONT_PACKAGES = {"fonts-noto-color-emoji": "1f680 1f98c"}  # 🚀 🦌: DejaVu Sans has 😀, not these
_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)

Runner = Callable[[list[str]], str]


def pyside_dir() -> Path | None:
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def ldd(args: list[str]) -> str:
    proc = subprocess.run(["ldd", *args], capture_output=True, text=True, check=False)
    return proc.stdout


def missing_libraries(files: Iterable[Path], run: Runner = ldd) -> list[str]:
    """Sonames that `ldd` reports as "not found" for any of `files` (sorted, unique)."""
    out: set[str] = set()
    for f in files:
        if f.exists():
            out.update(_NOT_FOUND.findall(run([str(f)])))
    return sorted(out)


def fc_list(args: list[str]) -> str:
    proc = subprocess.run(["fc-list", *args], capture_output=True, text=True, check=False)
    return proc.stdout


def missing_font_packages(run: Runner = fc_list) -> list[str]:
    """Font packages whose code point no installed font covers (none when fontconfig's fc-list is absent: then
    Qt's fontconfig is missing too, and ldd reports libfontconfig)."""
    if run is fc_list and shutil.which("fc-list") is None:
        return []
    return sorted(pkg for pkg, point in FONT_PACKAGES.items() if not run([f":charset={point}", "family"]).strip())


def packages_for(sonames: Iterable[str]) -> tuple[list[str], list[str]]:
    """(Debian packages to install, sonames with no known package)."""
    pkgs = sorted({DEBIAN_PACKAGES[s] for s in sonames if s in DEBIAN_PACKAGES})
    unknown = sorted(s for s in sonames if s not in DEBIAN_PACKAGES)
    return pkgs, unknown


def install_command(pkgs: list[str], root: bool) -> list[list[str]]:
    sudo = [] if root else ["sudo"]
    return [[*sudo, "apt-get", "update"], [*sudo, "apt-get", "install", "-y", "--no-install-recommends", *pkgs]]


def shell(cmds: list[list[str]]) -> str:
    return " && ".join(" ".join(c) for c in cmds)


def main(argv: list[str] | None = None, run: Runner = ldd, execute: Callable[[list[str]], int] | None = None,
         is_root: bool | None = None, has_apt: bool | None = None, fc: Runner = fc_list) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platform", choices=sorted(PLATFORM_FILES), default="xcb",
                    help="xcb: the desktop window (make run); offscreen: tests and screenshots (make test)")
    ap.add_argument("--check", action="store_true", help="only report; never install")
    ap.add_argument("--pyside-dir", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if not sys.platform.startswith("linux"):
        return 0  # macOS and Windows wheels need no extra system libraries
    if shutil.which("ldd") is None and run is ldd:
        print("qt_system_libs: ldd not found; cannot check Qt's system libraries", file=sys.stderr)
        return 0
    base = args.pyside_dir or pyside_dir()
    if base is None:
        print("qt_system_libs: PySide6 is not installed in this Python (run it with .venv/bin/python)", file=sys.stderr)
        return 1
    files = [base / f for f in (*COMMON, *PLATFORM_FILES[args.platform])]
    missing = missing_libraries(files, run)
    fonts = missing_font_packages(fc)
    if not missing and not fonts:
        return 0
    pkgs, unknown = packages_for(missing)
    pkgs = sorted({*pkgs, *fonts})
    root = os.geteuid() == 0 if is_root is None else is_root
    apt = shutil.which("apt-get") is not None if has_apt is None else has_apt
    if missing:
        print(f"Qt's {args.platform} platform plugin needs system libraries this machine lacks: {', '.join(missing)}",
              file=sys.stderr)
    if fonts:
        print(f"no installed font draws emoji (Qt shows them as empty boxes); the font package: {', '.join(fonts)}",
              file=sys.stderr)
    if unknown:
        print(f"  no known package for {', '.join(unknown)}: find it with `apt-file search NAME` "
              "(or your distribution's equivalent)", file=sys.stderr)
    if not pkgs:
        return 1
    failed = 1 if missing else 0  # a missing font is worth a word, not a stop: the app works, emoji show as boxes
    cmds = install_command(pkgs, root)
    if args.check or not root or not apt:
        what = "Install them with" if apt else "On Debian/Ubuntu the packages are"
        print(f"{what}:\n  {shell(cmds) if apt else ' '.join(pkgs)}", file=sys.stderr)
        return failed
    print(f"installing: {shell(cmds)}", file=sys.stderr)
    execute = execute or (lambda cmd: subprocess.run(cmd, check=False, env=os.environ | {"DEBIAN_FRONTEND": "noninteractive"}).returncode)
    for cmd in cmds:
        if execute(cmd) != 0:
            print(f"qt_system_libs: `{' '.join(cmd)}` failed; run it yourself, then try again", file=sys.stderr)
            return failed
    still = missing_libraries(files, run)
    if still or missing_font_packages(fc):
        print(f"qt_system_libs: still missing after installing: {', '.join(still + missing_font_packages(fc))}",
              file=sys.stderr)
        return 1 if still else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
