"""Tests for pushbench.snapshots: the lock file, sha256 checks, atomic extraction, fetching.

Everything is offline except the two tests marked ``network`` (pip fetches the pinned sdist).
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from pushbench import config, snapshots
from pushbench.snapshots import LockEntry, SnapshotError, extract, fetch, fetch_all, read_lock, sha256_of, \
    snapshot_dir, verify


def make_targz(path: Path, members: dict[str, bytes | None], symlinks: dict[str, str] | None = None) -> Path:
    """A .tar.gz with the given files (None: a directory) and symlinks."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.mtime = 1_700_000_000
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
        for name, target in (symlinks or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return path


SDIST = {
    "demo-1.0/": None,
    "demo-1.0/PKG-INFO": b"Name: demo\n",
    "demo-1.0/src/demo/__init__.py": b'"""Demo."""\n',
    "demo-1.0/tests/test_demo.py": b"def test_x(db):\n    pass\n",
}


def entry_for(archive: Path, name: str = "demo", sha: str | None = None) -> LockEntry:
    return LockEntry(name, "demo", "1.0", sha or sha256_of(archive))


def listing(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.fixture
def sdist(tmp_path: Path) -> Path:
    return make_targz(tmp_path / "demo-1.0.tar.gz", SDIST)


# --------------------------------------------------------------------------- the lock file


def test_the_real_lock_pins_three_repositories() -> None:
    lock = read_lock(config.SNAPSHOT_LOCK)
    assert sorted(lock) == ["flask", "pytest", "requests"]
    assert lock["requests"] == LockEntry("requests", "requests", "2.32.3",
                                         "55365417734eb18255590a9ff9eb97e9e1da868d4ccd6402399eaf68af20a760")
    for entry in lock.values():
        assert len(entry.sha256) == 64 and int(entry.sha256, 16) >= 0


def test_read_lock_reports_missing_fields(tmp_path: Path) -> None:
    lock = tmp_path / "lock.yaml"
    lock.write_text("good: {package: g, version: '1.0', sha256: abc}\nbad: {package: b}\n", encoding="utf-8")
    with pytest.raises(SnapshotError, match=r"entry 'bad' lacks \['sha256', 'version'\]"):
        read_lock(lock)
    lock.write_text("empty:\n", encoding="utf-8")
    with pytest.raises(SnapshotError, match=r"entry 'empty' lacks \['package', 'sha256', 'version'\]"):
        read_lock(lock)
    lock.write_text("", encoding="utf-8")
    assert read_lock(lock) == {}


def test_read_lock_reads_entries_in_name_order(tmp_path: Path) -> None:
    lock = tmp_path / "lock.yaml"
    lock.write_text("zz: {package: z, version: '2', sha256: a}\naa: {package: a, version: '1.0.1', sha256: b}\n",
                    encoding="utf-8")
    entries = read_lock(lock)
    assert list(entries) == ["aa", "zz"]
    assert entries["aa"] == LockEntry("aa", "a", "1.0.1", "b")


def test_read_lock_keeps_the_version_text(tmp_path: Path) -> None:
    lock = tmp_path / "lock.yaml"
    lock.write_text("x: {package: x, version: 3.10, sha256: abc}\n", encoding="utf-8")
    try:
        assert read_lock(lock)["x"].version == "3.10"
    except SnapshotError:
        pass  # refusing a non-string version is a fine fix too


def test_read_lock_reports_malformed_entries(tmp_path: Path) -> None:
    lock = tmp_path / "lock.yaml"
    lock.write_text("x: 5\n", encoding="utf-8")
    with pytest.raises(SnapshotError):
        read_lock(lock)


# --------------------------------------------------------------------------- verify


def test_sha256_of(tmp_path: Path) -> None:
    path = tmp_path / "blob"
    path.write_bytes(b"x" * 3_000_000)
    assert sha256_of(path) == hashlib.sha256(b"x" * 3_000_000).hexdigest()


def test_verify_accepts_the_pinned_hash(sdist: Path) -> None:
    verify(sdist, entry_for(sdist))


def test_verify_refuses_a_wrong_hash(sdist: Path) -> None:
    wrong = "0" * 64
    with pytest.raises(SnapshotError) as err:
        verify(sdist, entry_for(sdist, sha=wrong))
    message = str(err.value)
    assert "sha256 mismatch for demo==1.0" in message
    assert wrong in message and sha256_of(sdist) in message and "Refusing to extract" in message


def test_fetch_with_a_wrong_hash_extracts_nothing(sdist: Path, tmp_path: Path) -> None:
    dest_root = tmp_path / "src"
    with pytest.raises(SnapshotError, match="sha256 mismatch"):
        fetch(entry_for(sdist, sha="f" * 64), dest_root, archive=sdist)
    assert not (dest_root / "demo").exists()
    assert not dest_root.exists() or listing(dest_root) == []


def test_fetch_with_the_right_hash_extracts(sdist: Path, tmp_path: Path) -> None:
    tree = fetch(entry_for(sdist), tmp_path / "src", archive=sdist)
    assert tree == tmp_path / "src" / "demo"
    assert (tree / "tests" / "test_demo.py").read_text() == "def test_x(db):\n    pass\n"
    assert snapshot_dir("demo", tmp_path / "src") == tree


# --------------------------------------------------------------------------- extract


def test_extract_strips_the_top_folder(sdist: Path, tmp_path: Path) -> None:
    dest = tmp_path / "out" / "demo"
    extract(sdist, dest)
    assert listing(dest) == ["PKG-INFO", "src", "src/demo", "src/demo/__init__.py", "tests", "tests/test_demo.py"]
    assert listing(dest.parent) == ["demo"] + [f"demo/{p}" for p in listing(dest)]  # no staging left


def test_extract_replaces_an_existing_tree(sdist: Path, tmp_path: Path) -> None:
    dest = tmp_path / "demo"
    (dest / "stale").mkdir(parents=True)
    (dest / "stale" / "old.py").write_text("x = 1\n")
    extract(sdist, dest)
    assert not (dest / "stale").exists() and (dest / "PKG-INFO").is_file()


@pytest.mark.parametrize(("members", "symlinks", "error"), [
    ({"a-1.0/x.py": b"1", "b-1.0/y.py": b"2"}, None, SnapshotError),  # two top-level folders
    ({"x.py": b"1"}, None, SnapshotError),  # a lone file, no folder
    ({"a-1.0/x.py": b"1", "a-1.0/../../escape.py": b"2"}, None, tarfile.FilterError),  # traversal
    ({"a-1.0/x.py": b"1", "/abs/escape.py": b"2"}, None, SnapshotError),  # absolute: stripped, a 2nd top
    ({"a-1.0/x.py": b"1"}, {"a-1.0/link.py": "../../../etc/passwd"}, tarfile.FilterError),  # link out
])
def test_failing_extraction_leaves_no_tree(tmp_path: Path, members, symlinks, error) -> None:
    archive = make_targz(tmp_path / "bad.tar.gz", members, symlinks)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(error):
        extract(archive, out / "demo")
    assert listing(out) == []  # neither the tree nor a staging folder
    assert not (tmp_path / "escape.py").exists() and not Path("/abs/escape.py").exists()


def test_failing_extraction_keeps_the_previous_tree(tmp_path: Path) -> None:
    good = make_targz(tmp_path / "good.tar.gz", SDIST)
    bad = make_targz(tmp_path / "bad.tar.gz", {"a/x.py": b"1", "b/y.py": b"2"})
    dest = tmp_path / "out" / "demo"
    extract(good, dest)
    before = listing(dest)
    with pytest.raises(SnapshotError, match="expected one top-level folder, found 2"):
        extract(bad, dest)
    assert listing(dest) == before
    assert listing(tmp_path / "out") == ["demo"] + [f"demo/{p}" for p in before]


def test_a_corrupt_archive_leaves_no_tree(tmp_path: Path) -> None:
    archive = tmp_path / "corrupt.tar.gz"
    archive.write_bytes(b"\x1f\x8b\x08\x00" + b"not really gzip" * 10)
    out = tmp_path / "out"
    with pytest.raises((tarfile.TarError, EOFError, OSError)):
        extract(archive, out / "demo")
    assert listing(out) == []


# --------------------------------------------------------------------------- fetch_all and snapshot_dir


def test_fetch_all_takes_only_the_named_entries(sdist: Path, tmp_path: Path, monkeypatch) -> None:
    lock = tmp_path / "lock.yaml"
    sha = sha256_of(sdist)
    lock.write_text(f"one: {{package: demo, version: '1.0', sha256: {sha}}}\n"
                    f"two: {{package: demo, version: '1.0', sha256: {sha}}}\n", encoding="utf-8")
    fetched: list[str] = []

    def fake_download(entry: LockEntry, into: Path) -> Path:
        fetched.append(entry.name)
        return sdist

    monkeypatch.setattr(snapshots, "download_sdist", fake_download)
    trees = fetch_all(lock, tmp_path / "src", only=["two"])
    assert trees == [tmp_path / "src" / "two"] and fetched == ["two"]
    assert listing(tmp_path / "src") == ["two"] + [f"two/{p}" for p in listing(trees[0])]
    with pytest.raises(SnapshotError, match=r"not in .*lock.yaml: \['three'\]"):
        fetch_all(lock, tmp_path / "src", only=["two", "three"])
    assert fetched == ["two"]


def test_a_failed_download_raises_snapshot_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(snapshots.subprocess, "run", lambda *a, **k: type(
        "P", (), {"returncode": 1, "stderr": "ERROR: No matching distribution\nWARNING: x is ignored\n"})())
    with pytest.raises(SnapshotError, match="pip could not download demo==1.0") as err:
        snapshots.download_sdist(LockEntry("demo", "demo", "1.0", "0" * 64), tmp_path)
    assert "No matching distribution" in str(err.value) and "is ignored" not in str(err.value)


def test_snapshot_dir_of_a_missing_tree(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="pushbench snapshots fetch"):
        snapshot_dir("requests", tmp_path)


# --------------------------------------------------------------------------- network


@pytest.mark.network
def test_fetch_the_pinned_requests_sdist(tmp_path: Path) -> None:
    entry = read_lock(config.SNAPSHOT_LOCK)["requests"]
    tree = fetch(entry, tmp_path / "src")
    assert tree == tmp_path / "src" / "requests"
    assert (tree / "src" / "requests" / "__init__.py").is_file()
    assert (tree / "tests" / "test_requests.py").is_file()
    assert "__version__" in (tree / "src" / "requests" / "__version__.py").read_text(encoding="utf-8")
    assert listing(tmp_path / "src")[0] == "requests"  # only the tree: no archive, no staging
    assert all(p.startswith("requests") for p in listing(tmp_path / "src"))


@pytest.mark.network
def test_a_wrong_hash_lock_entry_fails_cleanly(tmp_path: Path) -> None:
    pinned = read_lock(config.SNAPSHOT_LOCK)["requests"]
    wrong = LockEntry("requests", pinned.package, pinned.version, "0" * 64)
    with pytest.raises(SnapshotError, match="sha256 mismatch for requests==2.32.3"):
        fetch(wrong, tmp_path / "src")
    assert not (tmp_path / "src" / "requests").exists()
    assert not (tmp_path / "src").exists() or listing(tmp_path / "src") == []
