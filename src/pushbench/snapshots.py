"""Pinned repository snapshots: fetch sdists with pip, check their sha256, extract atomically.

The lock file (``snapshots/lock.yaml``) maps a repository name to ``package``, ``version`` and
``sha256``. Each snapshot is extracted into ``snapshots/src/<name>/`` with the archive's top-level
folder stripped. A failed download or a wrong hash raises ``SnapshotError`` and leaves no tree.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from pushbench import config


class SnapshotError(RuntimeError):
    """A snapshot could not be fetched, verified or extracted."""


@dataclass(frozen=True)
class LockEntry:
    name: str
    package: str
    version: str
    sha256: str


def read_lock(path: Path = config.SNAPSHOT_LOCK) -> dict[str, LockEntry]:
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    entries = {}
    for name, spec in sorted(data.items()):
        spec = {} if spec is None else spec
        if not isinstance(spec, dict):
            raise SnapshotError(f"{path}: entry {name!r} must be a mapping with package, version, sha256")
        if not isinstance(spec.get("version", ""), str):
            raise SnapshotError(f"{path}: entry {name!r} has version {spec['version']!r} as a number; "
                                "quote it (YAML reads 3.10 as 3.1)")
        missing = {"package", "version", "sha256"} - set(spec or {})
        if missing:
            raise SnapshotError(f"{path}: entry {name!r} lacks {sorted(missing)}")
        entries[name] = LockEntry(name, spec["package"], str(spec["version"]), spec["sha256"])
    return entries


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_sdist(entry: LockEntry, into: Path) -> Path:
    """Fetch the source distribution with pip, by name and version only."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           "--disable-pip-version-check", "-q", "-d", str(into), f"{entry.package}=={entry.version}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    archives = sorted(into.glob("*.tar.gz"))
    if proc.returncode != 0 or not archives:
        tail = "\n".join(line for line in proc.stderr.splitlines() if "is ignored" not in line)[-2000:]
        raise SnapshotError(f"pip could not download {entry.package}=={entry.version}:\n{tail}")
    return archives[0]


def verify(archive: Path, entry: LockEntry) -> None:
    actual = sha256_of(archive)
    if actual != entry.sha256:
        raise SnapshotError(
            f"sha256 mismatch for {entry.package}=={entry.version}: lock says {entry.sha256}, "
            f"archive has {actual}. Refusing to extract."
        )


def extract(archive: Path, dest: Path) -> None:
    """Extract ``archive`` into ``dest`` (top folder stripped); all or nothing."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(staging, filter="data")
        tops = [p for p in staging.iterdir()]
        if len(tops) != 1 or not tops[0].is_dir():
            raise SnapshotError(f"{archive.name}: expected one top-level folder, found {len(tops)}")
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tops[0], dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def fetch(entry: LockEntry, dest_root: Path = config.SNAPSHOT_SRC, archive: Path | None = None) -> Path:
    """Fetch (or take ``archive``), verify and extract one snapshot; returns its tree."""
    dest = dest_root / entry.name
    with tempfile.TemporaryDirectory(prefix="pushbench-sdist-") as tmp:
        path = archive or download_sdist(entry, Path(tmp))
        verify(path, entry)
        extract(path, dest)
    return dest


def fetch_all(lock: Path = config.SNAPSHOT_LOCK, dest_root: Path = config.SNAPSHOT_SRC,
              only: list[str] | None = None) -> list[Path]:
    entries = read_lock(lock)
    unknown = set(only or []) - set(entries)
    if unknown:
        raise SnapshotError(f"not in {lock}: {sorted(unknown)}")
    return [fetch(e, dest_root) for name, e in entries.items() if not only or name in only]


def snapshot_dir(name: str, root: Path = config.SNAPSHOT_SRC) -> Path:
    path = root / name
    if not path.is_dir():
        raise SnapshotError(f"snapshot {name!r} is not extracted at {path}; run `pushbench snapshots fetch`")
    return path


if __name__ == "__main__":
    try:
        for tree in fetch_all():
            print(f"extracted {tree.name}")
    except SnapshotError as err:
        sys.exit(f"error: {err}")
