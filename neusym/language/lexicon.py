"""Word lists as data files, one folder per language (``neusym/language/data/<lang>/<name>.txt``).

Adding a language means adding its folder; no code names a language's words. Files are read on first use and kept
(nothing is loaded at import time: ``import neusym`` stays cheap). A file holds one entry per line; ``#`` starts a
comment line.
"""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["DATA", "languages", "text", "words"]

DATA = Path(__file__).resolve().parent / "data"


@functools.cache
def languages() -> tuple[str, ...]:
    """The languages that have data files, English first (it wins ties wherever languages are compared)."""
    found = sorted(p.name for p in DATA.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    return tuple(sorted(found, key=lambda lang: lang != "en"))


@functools.cache
def _lines(lang: str, name: str) -> tuple[str, ...]:
    path = DATA / lang / f"{name}.txt"
    if not path.is_file():
        return ()
    return tuple(line.strip() for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip() and not line.lstrip().startswith("#"))


def words(lang: str, name: str) -> frozenset[str]:
    """The entries of ``<lang>/<name>.txt`` (empty when the language has no such list)."""
    return frozenset(_lines(lang, name))


def text(lang: str, name: str) -> str:
    """The entries of ``<lang>/<name>.txt`` joined into one string (for character sets)."""
    return "".join(_lines(lang, name))
