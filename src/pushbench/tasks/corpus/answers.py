"""Answer normalisation: how a stated answer is compared with the canonical one (exact match after it).

The canonical answer is the dotted name its docstring document's title shows, e.g.
``requests.sessions.Session.request``. Normalising: Unicode NFKC, surrounding whitespace, quotes and
backticks dropped, a trailing call ``()`` dropped, internal whitespace removed around dots and
otherwise collapsed to one space, a ``v`` before a version number dropped, and lower case. So ```Session.request()``` and
``session.request`` are the same answer; ``requests.Session.request`` (another dotted path) is not.
"""

from __future__ import annotations

import re
import unicodedata

_EDGE = "\"'`“”‘’ \t\n"


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", str(text)).strip().strip(_EDGE)
    text = re.sub(r"\(\s*\)$", "", text).strip(_EDGE)
    text = re.sub(r"\s*\.\s*", ".", text)
    text = re.sub(r"(?<![\w.])v(?=\d)", "", text, flags=re.I)  # "flask v2.0.1" is "flask 2.0.1"
    return re.sub(r"\s+", " ", text).lower()


def matches(answer: str, canonical: str) -> bool:
    return bool(normalise(answer)) and normalise(answer) == normalise(canonical)


def normalise_parts(text: str) -> str:
    """A long question's answer (``long.py``): its parts split at ';', each normalised, joined by '; '."""
    parts = [normalise(p) for p in str(text).split(";")]
    return "; ".join(parts) if all(parts) else ""
