"""Tool writes that cannot half-happen: encode first, then replace the file atomically.

``write_text_atomic`` encodes the whole new text before touching anything (a lone surrogate raises
``UnencodableText`` and the file stays as it was), writes it to a temporary file in the target's
own folder with the target's mode, and ``os.replace``s the target with it. A reader (or a crash)
sees the old bytes or the new ones, never a truncated file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class UnencodableText(ValueError):
    """Text that has no UTF-8 encoding (e.g. a lone surrogate such as ``\\ud800``)."""


def encode_text(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as err:
        bad = text[err.start:err.end]
        raise UnencodableText(f"the text cannot be written as UTF-8: {bad!r} at character {err.start} "
                              "is a lone surrogate or otherwise unencodable; nothing was changed") from None


def write_text_atomic(path: Path, text: str, mtime_ns: int | None = None) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically, keeping its mode; optionally set its mtime."""
    write_bytes_atomic(path, encode_text(text), mtime_ns)


def write_bytes_atomic(path: Path, data: bytes, mtime_ns: int | None = None) -> None:
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        if mtime_ns is not None:
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
