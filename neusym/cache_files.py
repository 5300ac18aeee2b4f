"""One-time derived data kept on disk, keyed by the hash of everything it is derived from.

Some data NeuSym needs is the same on every start and costs a model pass to make (the attribute-slot description
vectors the update model compares memories with: ~300 texts, a third of a second of MiniLM on two cores). It is
computed once, on first need, and kept under the cache directory named by the sha256 of its inputs (the model's
content key and the exact texts), so a change to either simply misses the cache: there is nothing to invalidate.

Where: ``NEUSYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/neusym``, else ``~/.cache/neusym``; ``NEUSYM_CACHE_DIR=off``
disables it. Files are owner-only (:mod:`neusym.private_files`) and written atomically (a temporary file renamed
into place), so two processes filling the same entry at once both succeed and a reader never sees half a file.
A file that cannot be read back (truncated, another numpy, a disk error) is recomputed and replaced; a directory
that cannot be written only costs the recomputation. Nothing in the cache is a user's data: only package
constants and their vectors.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from neusym.private_files import PRIVATE_FILE, private_dir

__all__ = ["CACHE_ENV", "cache_dir", "cached_array", "content_digest"]

log = logging.getLogger(__name__)

CACHE_ENV = "NEUSYM_CACHE_DIR"
_OFF = {"off", "0", "false", "no", "none"}


def cache_dir() -> Path | None:
    """The cache directory (not created here), or ``None`` when caching is off."""
    raw = os.environ.get(CACHE_ENV, "").strip()
    if raw and raw.lower() in _OFF:
        return None
    if raw:
        return Path(raw).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "neusym"


def content_digest(parts: Iterable[str]) -> str:
    """sha256 over ``parts``, each length-prefixed (so ``["ab", "c"]`` and ``["a", "bc"]`` differ)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def cached_array(kind: str, digest: str, compute: Callable[[], np.ndarray], *,
                 shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``compute()``'s array, read from ``<cache>/<kind>/<digest>.npy`` when present (and of ``shape``, when
    given), else computed and written there. ``kind`` is a fixed name of ours, never user input."""
    root = cache_dir()
    if root is None:
        return compute()
    path = root / kind / f"{digest}.npy"
    try:
        arr = np.load(path, allow_pickle=False)
        if shape is None or tuple(arr.shape) == shape:
            return np.asarray(arr)
        log.warning("cached %s %s has shape %s, expected %s: recomputing", kind, path.name, arr.shape, shape)
    except FileNotFoundError:
        pass
    except (OSError, ValueError, EOFError) as err:  # truncated or foreign file: recompute and replace it
        log.warning("could not read cached %s %s (%s): recomputing", kind, path, err)
    arr = np.asarray(compute())
    _write(path, arr)
    return arr


def _write(path: Path, arr: np.ndarray) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        private_dir(path.parent, tighten=False)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, arr, allow_pickle=False)
        os.replace(tmp, path)
    except OSError as err:  # a read-only home, a full disk: the cache is an optimisation, never a requirement
        log.info("could not cache %s: %s", path, err)
        with contextlib.suppress(OSError):
            tmp.unlink()
