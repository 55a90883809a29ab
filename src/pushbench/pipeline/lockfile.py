"""One stage's ``dvc.lock`` entry written in place, with the bytes DVC's own ``Stage.dump`` writes.

DVC records a finished stage by re-reading the whole ``dvc.lock`` with ruamel's round-trip YAML
parser, replacing the stage's entry and dumping the whole document again: about 1.3 s of CPU per
stage on this project's lock (about 250 KB), more than most stage commands take. A DVC-written lock
is a ``stages:`` mapping in block style whose entries are independent blocks, so this writes only
the stage's own entry (DVC's dumper on ``to_lockfile``'s data, at the same indentation) over its old
block, or after the last entry when the stage is new, as ruamel's ``update`` places it. Anything
else (no lock yet, a layout it does not recognise) goes through DVC's ``Stage.dump``. The file is
replaced atomically (DVC's own write truncates and rewrites it in place).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

HEADER = "stages:\n"


def entry_block(stage_data: dict[str, Any]) -> str:
    """The lines of one stage's entry as DVC dumps them under ``stages:`` (the key line first)."""
    from dvc.utils.serialize import dumps_yaml

    text = dumps_yaml({"stages": stage_data})
    assert text.startswith(HEADER), text[:80]
    return text[len(HEADER):]


def spliced(text: str, block: str) -> str | None:
    """``text`` with the entry ``block`` in place of the same stage's entry, or appended to the
    ``stages:`` mapping when it has none; None when ``text`` is not laid out as DVC writes it."""
    lines = text.splitlines(keepends=True)
    key = block.splitlines(keepends=True)[0]
    if HEADER not in lines or not _is_key(key):
        return None
    start = lines.index(HEADER) + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith(" ")), len(lines))
    if any(lines[i].strip() and not lines[i].startswith("  ") for i in range(start, end)):
        return None
    at = next((i for i in range(start, end) if lines[i] == key), None)
    if at is None:
        return "".join(lines[:end]) + block + "".join(lines[end:])
    after = next((i for i in range(at + 1, end) if _is_key(lines[i])), end)
    return "".join(lines[:at]) + block + "".join(lines[after:])


def _is_key(line: str) -> bool:
    """A stage's key line under ``stages:`` (two spaces, then the name)."""
    return line.startswith("  ") and not line[2:3].isspace() and line.rstrip("\n").endswith(":")


def dump_stage(stage: Any) -> None:
    """Record ``stage`` in its ``dvc.lock`` as ``stage.dump(update_pipeline=False)`` would."""
    from dvc.stage.serialize import to_lockfile

    lockfile = stage.dvcfile._lockfile
    path = Path(lockfile.path)
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    new = spliced(old, entry_block(to_lockfile(stage))) if old else None
    if new is None:
        stage.dump(update_pipeline=False)
        return
    if new != old:
        _replace(path, new)
        stage.repo.scm_context.track_file(lockfile.relpath)


def _replace(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
