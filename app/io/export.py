"""Export curated, versioned evaluation splits: `OUT/NAME@X.Y.Z/` with data files, manifest.json and README.md.

Guarantees (issue 7):
- deterministic: the same selection gives byte-identical data files (see export_write);
- immutable: NAME@X.Y.Z is recorded in the project with a content hash; different content under a recorded
  name and version is refused (bump the version), the same content exports again;
- safe: everything is written into a temporary directory beside the target and renamed into place, so a failure
  leaves no half-written split; an existing directory is only replaced with `force`; no environment secrets are
  ever written (the files are checked for the values of secret-looking environment variables).
`preview_split` computes the same selection and counts without writing (for --dry-run and the GUI dialog).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.errors import UsageError, os_error_message
from app.io.export_manifest import build_manifest, clean, counts, readme
from app.services.guidelines import under_version
from app.io.export_select import STRATIFY_KEYS, Filters, Selection, normalize_filters, select
from app.io.export_write import FORMATS, content_sha256, serialise, sha256, to_jsonl
from app.progress import Progress, check
from app.store import STATUSES, Project

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
VERSION_RE = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.IGNORECASE)


@dataclass(frozen=True)
class ExportResult:
    name: str
    version: str
    path: Path
    files: dict[str, str]  # file name -> sha256 (data files only)
    content_sha256: str
    counts: dict[str, Any]
    manifest: dict[str, Any]
    already_recorded: bool  # the project already held this exact split (same content)
    unchanged: bool = False  # DIR/NAME@X.Y.Z already held this exact export: nothing was written
    # scheme -> the ref of its parameters this export documents (export_select.Filters.params); when `unchanged`,
    # the manifest on disk may document others (a version is immutable)
    params: dict[str, str] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


def validate_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise UsageError(
            f"--name: {name!r} is not a valid split name; use letters, digits, '_' and '-' (starting with a letter "
            "or digit, at most 128 characters), e.g. jaegermeister_curated_split"
        )
    return name


def validate_version(version: str) -> str:
    if not isinstance(version, str) or not VERSION_RE.fullmatch(version):
        raise UsageError(f"--version: {version!r} is not a semantic version X.Y.Z (e.g. 0.3.2, no leading zeros)")
    return version


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".")) if VERSION_RE.fullmatch(v) else (-1,)


def next_version(project: Project, name: str, version: str | None = None) -> str:
    """The patch after the newest version recorded under this name (and `version`); 0.1.0 for a new name.

    Used in the message of a refused export and as the version a dialog proposes.
    """
    known = [r["version"] for r in project.artifacts.splits() if r["name"] == name] + ([version] if version else [])
    keys = [_version_key(v) for v in known if _version_key(v) != (-1,)]
    if not keys:
        return "0.1.0"
    major, minor, patch = max(keys)
    return f"{major}.{minor}.{patch + 1}"


def _filters(project: Project, statuses: Sequence[str] | None, checkers: Sequence[str] | None, stratify: str | None,
             sample: int | None, seed: int, config_ref: str | None, schemes: Sequence[str] | None = None) -> Filters:
    return normalize_filters(project, Filters(
        None if statuses is None else tuple(statuses), None if checkers is None else tuple(checkers),
        stratify, sample, seed, config_ref, None if schemes is None else tuple(schemes),
    ))


def _datasets(sel: Selection) -> dict[str, list[dict[str, Any]]]:
    """Dataset name -> records: every scheme's part (export_select.select merges datasets two parts share)."""
    return sel.datasets


def _canonical(sel: Selection) -> dict[str, bytes]:
    """Each dataset as canonical JSONL: the content hash, the secret check and the JSONL files all use these bytes."""
    return {name: to_jsonl(records) for name, records in _datasets(sel).items()}


def _conflict(project: Project, name: str, version: str, content: str) -> dict[str, Any] | None:
    """The recorded split this export would contradict, or None (not recorded, or the same content)."""
    rec = project.artifacts.split_record(name, version)
    if rec is not None and rec["content_sha256"] != content:
        return rec
    return None


def _conflict_message(project: Project, name: str, version: str, rec: dict[str, Any]) -> str:
    return (
        f"split {name}@{version} was already exported on {str(rec['created_at'])[:10]} with different content "
        f"(content sha256 {rec['content_sha256'][:12]}…); a version is immutable: bump the version "
        f"(e.g. --version {next_version(project, name, version)})"
    )


def existing_identical(target: Path, content: str, fmt: str | None) -> dict[str, Any] | None:
    """The manifest of `target` if it already holds this export's data (same content hash and format, every data
    file intact), else None. The manifest is kept as it is: a version is immutable, even its documentation (the
    parameters it names, its creation time)."""
    try:
        manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (not isinstance(manifest, dict) or manifest.get("content_sha256") != content
            or (fmt is not None and manifest.get("format") != fmt)):
        return None
    for fname, meta in (manifest.get("files") or {}).items():
        try:
            if sha256((target / fname).read_bytes()) != (meta or {}).get("sha256"):
                return None
        except OSError:
            return None
    return manifest


def _exists_message(target: Path) -> str:
    return (f"{target} already exists with other content (data or format); use force (--force) to "
            "replace it, or export under another version")


def preview_split(project: Project, *, statuses: Sequence[str] | None = ("accepted", "corrected"),
                  checkers: Sequence[str] | None = None, stratify: str | None = None, sample: int | None = None,
                  seed: int = 0, config_ref: str | None = None, name: str | None = None,
                  version: str | None = None, out_dir: str | Path | None = None, force: bool = False,
                  progress: Progress | None = None, schemes: Sequence[str] | None = None,
                  guideline_version: int | None = None) -> dict[str, Any]:
    """Counts of what `export_split` would write, without writing anything.

    `guideline_version`: only the labels valid under that version of each scheme's guideline are exported (None:
    the current version; app/services/guidelines.py), and the manifest and data card name it (issue #29).

    `config_ref`: the parameters of app.services.configs.config_scheme() the split is documented with (None: that
    scheme's default; every other scheme's export uses its default, see export_select.choose_params).
    Returns {"filters", "counts", "content_sha256", "problems", "datasets"} (`datasets`: the data files' names
    without the format's extension): `problems` lists, as messages, whatever would make
    the export fail for the given name/version/out_dir (invalid name, a recorded version with other content, an
    existing directory without force), so a dialog can show them before the user presses Export. Bad filters
    raise UsageError, as export_split does.
    """
    f = _filters(project, statuses, checkers, stratify, sample, seed, config_ref, schemes)
    stale, guide = under_version(project, f.schemes, guideline_version)
    with project.guidelines.excluding_labels(stale):
        sel = select(project, f, progress)
    content = content_sha256(_canonical(sel))
    problems: list[str] = []
    for value, validate in ((name, validate_name), (version, validate_version)):
        if value is not None:
            try:
                validate(value)
            except UsageError as exc:
                problems.append(str(exc))
    if not problems and name is not None and version is not None:
        rec = _conflict(project, name, version, content)
        if rec is not None:
            problems.append(_conflict_message(project, name, version, rec))
        target = None if out_dir is None else Path(out_dir) / f"{name}@{version}"
        if (target is not None and target.exists() and not force
                and existing_identical(target, content, None) is None):
            problems.append(_exists_message(target))
    if sel.empty:
        problems.append("nothing to export: no unit matches the filters (see counts.skipped_units)")
    return clean({"filters": f.to_dict(), "counts": counts(sel), "content_sha256": content, "problems": problems,
                  "datasets": sorted(ds for ds, records in _datasets(sel).items() if records),
                  "guideline": _in_split(guide, sel)})


def _in_split(guide: dict[str, Any], sel: Any) -> dict[str, Any]:
    """The guideline summaries of the schemes the split holds."""
    held = set(counts(sel).get("schemes") or {})
    return {k: v for k, v in guide.items() if k in held}


def pretty_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2, allow_nan=False)


def _secret_values() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if SECRET_NAME.search(k) and len(v.strip()) >= 8}


def _check_no_secrets(blobs: dict[str, bytes]) -> None:
    """Refuse to write a file that contains the value of a secret-looking environment variable."""
    for var, value in sorted(_secret_values().items()):
        needle = value.encode("utf-8")
        for fname, data in blobs.items():
            if needle in data:
                raise UsageError(
                    f"refusing to export: {fname} would contain the value of the environment variable {var} "
                    "(a secret); remove it from the project data first"
                )


def _write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _fresh_dir(parent: Path, prefix: str) -> Path:
    """A new hidden directory beside the target (same file system, so the final rename is atomic), umask mode."""
    while True:
        path = parent / f"{prefix}{uuid.uuid4().hex[:12]}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue


def _missing_parents(path: Path) -> list[Path]:
    """The folders `mkdir(parents=True)` would create for `path`, deepest first (removed again on failure)."""
    out = []
    while not path.exists() and path != path.parent:
        out.append(path)
        path = path.parent
    return out


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _install(tmp: Path, target: Path, force: bool) -> Path | None:
    """Move the finished temp dir to `target`; an existing target is moved aside first. Returns the moved-aside dir."""
    old: Path | None = None
    if target.exists():
        if not force:
            raise UsageError(f"{target} already exists; use force (--force) to replace it")
        old = _fresh_dir(target.parent, f".{target.name}.old-")
        os.replace(target, old / target.name)
    try:
        os.replace(tmp, target)
    except BaseException:
        if old is not None:
            os.replace(old / target.name, target)
            shutil.rmtree(old, ignore_errors=True)
        raise
    return old


def export_split(project: Project, name: str, version: str, out_dir: str | Path, *, fmt: str = "jsonl",
                 statuses: Sequence[str] | None = ("accepted", "corrected"), checkers: Sequence[str] | None = None,
                 stratify: str | None = None, sample: int | None = None, seed: int = 0, force: bool = False,
                 config_ref: str | None = None, progress: Progress | None = None,
                 schemes: Sequence[str] | None = None, guideline_version: int | None = None) -> ExportResult:
    """Write `out_dir/NAME@VERSION/` and record the split in the project (see the module docstring); `config_ref`
    and `guideline_version` as in `preview_split`."""
    validate_name(name)
    validate_version(version)
    if fmt not in FORMATS:
        raise UsageError(f"--format: must be one of {', '.join(FORMATS)}, got {fmt!r}")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} is not a directory")
    target = out / f"{name}@{version}"
    f = _filters(project, statuses, checkers, stratify, sample, seed, config_ref, schemes)
    stale, guide = under_version(project, f.schemes, guideline_version)
    total = 6
    if progress is not None:
        progress.update(0, total, "selecting samples")
    with project.guidelines.excluding_labels(stale):
        sel = select(project, f, progress)
    if sel.empty:
        raise UsageError("nothing to export: no unit matches the filters (check --status and --checker)")
    datasets = _datasets(sel)
    total = len(datasets) + 3  # select, one step per dataset, install, done
    jsonl = _canonical(sel)
    content = content_sha256(jsonl)
    rec = project.artifacts.split_record(name, version)
    if rec is not None and rec["content_sha256"] != content:
        raise UsageError(_conflict_message(project, name, version, rec))
    if target.exists() and not force:
        same = existing_identical(target, content, fmt)
        if same is None:
            raise UsageError(_exists_message(target))
        if rec is None:  # written by this tool from another copy of the project: record it here too
            project.artifacts.record_split(name, version, content, same, str(target.resolve()))
        return ExportResult(name, version, target, {k: v["sha256"] for k, v in same.get("files", {}).items()},
                            content, same.get("counts", {}), same, rec is not None, unchanged=True,
                            params=dict(f.params))

    blobs: dict[str, bytes] = {}
    canonical: dict[str, bytes] = {}
    for i, ds in enumerate(datasets, start=1):
        check(progress)
        if progress is not None:
            progress.update(i, total, f"serialising {ds}")
        if datasets[ds]:
            blobs[f"{ds}.{fmt}"] = jsonl[ds] if fmt == "jsonl" else serialise(ds, datasets[ds], fmt, sel.columns.get(ds))
            canonical[f"{ds}.{fmt}"] = jsonl[ds]
    files = {fname: sha256(data) for fname, data in blobs.items()}
    with project.guidelines.excluding_labels(stale):
        manifest = build_manifest(project, name, version, fmt, f, sel, files, content, _in_split(guide, sel))
    extra = {"manifest.json": (pretty_json(manifest) + "\n").encode("utf-8"),
             "README.md": readme(manifest, [p.adapter for p in sel.parts]).encode("utf-8")}
    _check_no_secrets({**canonical, **extra})

    made = _missing_parents(out)
    tmp: Path | None = None
    old: Path | None = None
    try:
        out.mkdir(parents=True, exist_ok=True)
        tmp = _fresh_dir(out, f".{target.name}.tmp-")
        for fname, data in {**blobs, **extra}.items():
            check(progress)
            _write_file(tmp / fname, data)
        if progress is not None:
            progress.update(total - 1, total, "installing")
        old = _install(tmp, target, force)
        try:
            project.artifacts.record_split(name, version, content, manifest, str(target.resolve()))
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            if old is not None:
                os.replace(old / target.name, target)
            raise
    except OSError as exc:  # a full disk, a read-only place: one sentence naming the split's folder
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        _remove_empty(made)
        bare = OSError(exc.errno, exc.strerror)  # the temp file's name would only confuse
        raise UsageError(os_error_message(bare, target) or f"{target}: cannot write the split: {exc}") from None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    if progress is not None:
        progress.update(total, total, "done")
    return ExportResult(name, version, target, files, content, manifest["counts"], manifest, rec is not None,
                        params=dict(f.params))


__all__ = ["FORMATS", "STATUSES", "STRATIFY_KEYS", "ExportResult", "export_split", "next_version", "preview_split",
           "validate_name", "validate_version"]
