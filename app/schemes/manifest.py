"""A scheme's app side, declared: the manifest each scheme package holds (`MANIFEST` in app/schemes/<name>/__init__.py)
and an installed package names in the `concord.schemes` entry-point group. Plain data, cheap to import (the top-level
help lists the schemes' commands from it); what the declared names must provide is app/schemes/contracts.py."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class ContractError(ImportError):
    """A scheme's manifest or contribution does not satisfy its contract (naming the scheme and the member)."""


@dataclass(frozen=True)
class ImportOption:
    """An option of `concord import` that a scheme's own file reader takes (its io `read_file` reads
    `options[name]`). Declared on the io contribution: the CLI offers it, and a file no declaring reader took
    refuses it ("FILE: --model: <refused> (this is not one)")."""

    name: str  # the key in `options`; the flag is --name with '-' for '_'
    help: str  # the flag's --help text
    refused: str  # why another file does not take it, e.g. "only an RGB prediction file takes a model"
    metavar: str | None = "NAME"  # None: a switch (present or not)

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Contribution:
    """One module of a scheme's app side ("pkg.mod", or "pkg.mod:attr" for an object holding the members) and the
    optional hooks it declares (names from its Part's fields in app/schemes/contracts.py); an io contribution with
    `read_file` may declare the import options its reader takes (`options`)."""

    module: str
    provides: frozenset[str] = frozenset()
    options: tuple[ImportOption, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "provides", frozenset(self.provides))


@dataclass(frozen=True)
class Command:
    """A command of the scheme's own: its name and one-line help, listed without importing the module."""

    name: str
    help: str


@dataclass(frozen=True)
class Manifest:
    """A scheme's app side, declared (npe2 style): `scheme` is "module:attr" of its `base.Scheme`; `contributions`
    maps a kind of PARTS to the module providing it. Cheap to build: nothing is imported until used."""

    name: str
    scheme: str
    contributions: Mapping[str, Contribution] = field(default_factory=dict)
    commands: tuple[Command, ...] = ()
    accepts: str = ""  # what `concord import` takes for the scheme, for help texts ("violations records")
    # what the scheme's evaluate and calibrate read from the project besides its records and resolved labels, built
    # by app/services/schemes.py `scheme_options` only for schemes that declare it (contracts.INPUTS)
    inputs: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "inputs", frozenset(self.inputs))

    def load_scheme(self) -> Any:
        """The `base.Scheme` object (the calibration registry calls this for a manifest found by entry point)."""
        import importlib

        module, _, attr = self.scheme.partition(":")
        return getattr(importlib.import_module(module), attr)
