"""Owner-only files: what NeuSym keeps on disk is users' memories, so nobody else on the machine may read it.

Directories NeuSym creates are 0700 and files 0600, whatever the process umask (the embedded server gets a 0077
umask of its own, see :mod:`neusym.symbolic.executors.watchdog`). A data directory left group/world-readable by an
older version is tightened when it is opened, with a warning; a directory that does not look like NeuSym's (a home
directory passed as ``data_dir`` by mistake) is never chmod-ed, only the files and subdirectories created in it are
private.

Every file the library writes goes through here: :func:`write_private` / :func:`atomic_private` for whole files
(exports, ``neusym graph`` outputs, the reflection queue: written to a private temporary file in the same directory
and renamed into place, so a reader never sees half a file), :func:`open_private` for files kept open (locks, the
server log). None of them writes through a symbolic link: a link at the target is refused (an
:class:`~neusym.errors.InvalidInputError` naming it), never followed, so a link planted where an output will go
cannot redirect memories into another file.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import logging
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, cast

from neusym.errors import InvalidInputError

__all__ = ["PRIVATE_DIR", "PRIVATE_FILE", "atomic_private", "open_private", "private_dir", "tighten_tree",
           "write_private"]

log = logging.getLogger(__name__)

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def private_dir(path: str | os.PathLike[str], *, tighten: bool = True) -> Path:
    """Create ``path`` and any missing parents as 0700 directories and return it.

    ``Path.mkdir(mode=..., parents=True)`` applies the mode to the last level only (and through the umask), so each
    missing level is created here. An existing ``path`` with group/other bits is tightened when ``tighten`` is set
    and the process owns it; existing parents are left alone.
    """
    target = Path(path).expanduser()
    missing: list[Path] = []
    probe = target
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for level in reversed(missing):
        try:
            level.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:  # created concurrently by another process: tightened below if it is the target
            continue
        os.chmod(level, PRIVATE_DIR)  # mkdir's mode went through the umask
    if tighten and not missing:
        _tighten(target)
    return target


def open_private(path: str | os.PathLike[str], flags: int) -> int:
    """``os.open`` with 0600 for a file it creates; an existing file keeps its inode but loses group/other bits.
    A symbolic link at ``path`` is refused (``O_NOFOLLOW``), never opened through."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW, PRIVATE_FILE)
    except OSError as err:
        if err.errno == errno.ELOOP and os.path.islink(path):
            raise _linked(Path(path)) from err
        raise
    try:
        mode = os.fstat(fd).st_mode
        if mode & 0o077 and os.fstat(fd).st_uid == os.geteuid():
            os.fchmod(fd, stat.S_IMODE(mode) & 0o700)
    except OSError:
        os.close(fd)
        raise
    return fd


def _linked(path: Path) -> InvalidInputError:
    return InvalidInputError(f"{path} is a symbolic link: NeuSym never writes through one (remove it, or write to "
                             "another path)")


@contextlib.contextmanager
def atomic_private(path: str | os.PathLike[str], *, compress: bool = False) -> Iterator[IO[str]]:
    """A text handle (UTF-8) whose content becomes ``path`` only when the block ends without an error: written to a
    0600 temporary file next to ``path`` (missing parent directories are created 0700), synced, renamed into
    place. ``compress``: gzip what is written. A symbolic link at ``path`` is refused before anything is written
    (and the rename replaces a link that appeared meanwhile, never what it points to)."""
    with _atomic_bytes(Path(path).expanduser(), compress=compress) as sink:
        text = io.TextIOWrapper(sink, encoding="utf-8", newline="")
        try:
            yield text
        finally:
            text.flush()
            text.detach()


@contextlib.contextmanager
def _atomic_bytes(target: Path, *, compress: bool = False) -> Iterator[IO[bytes]]:
    if target.is_symlink():
        raise _linked(target)
    parent = private_dir(target.parent, tighten=False)
    tmp = parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    raw = os.fdopen(open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb")
    try:
        with raw:
            if compress:
                with gzip.GzipFile(fileobj=raw, mode="wb", filename="") as packed:
                    yield cast(IO[bytes], packed)
            else:
                yield raw
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def write_private(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` as :func:`atomic_private` does: 0600, atomic, never through a
    symbolic link. Returns the path written."""
    target = Path(path).expanduser()
    with _atomic_bytes(target) as sink:
        sink.write(data.encode("utf-8") if isinstance(data, str) else data)
    return target


def tighten_tree(root: str | os.PathLike[str], names: tuple[str, ...]) -> int:
    """Make ``root`` 0700 and the listed entries in it (recursively for directories) owner-only; returns how many
    modes changed. For data directories written by versions that created them 0755 with 0644 files."""
    base = Path(root)
    changed = int(_tighten(base))
    for name in names:
        entry = base / name
        if entry.is_symlink() or not entry.exists():
            continue
        if entry.is_dir():
            changed += _tighten(entry)
            for dirpath, dirnames, filenames in os.walk(entry):
                for d in dirnames:
                    changed += _tighten(Path(dirpath) / d)
                for f in filenames:
                    changed += _tighten(Path(dirpath) / f)
        else:
            changed += _tighten(entry)
    return changed


def _tighten(path: Path) -> bool:
    """Drop the group/other bits of a file or directory the process owns (never follows symlinks)."""
    try:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode) or st.st_uid != os.geteuid() or not st.st_mode & 0o077:
            return False
        os.chmod(path, stat.S_IMODE(st.st_mode) & 0o700)
    except OSError as err:
        log.warning("could not make %s private: %s", path, err)
        return False
    return True
