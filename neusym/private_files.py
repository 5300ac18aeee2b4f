"""Owner-only files: what NeuSym keeps on disk is users' memories, so nobody else on the machine may read it.

Directories NeuSym creates are 0700 and files 0600, whatever the process umask (the embedded server gets a 0077
umask of its own, see :mod:`neusym.symbolic.executors.watchdog`). A data directory left group/world-readable by an
older version is tightened when it is opened, with a warning; a directory that does not look like NeuSym's (a home
directory passed as ``data_dir`` by mistake) is never chmod-ed, only the files and subdirectories created in it are
private.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

__all__ = ["PRIVATE_DIR", "PRIVATE_FILE", "open_private", "private_dir", "tighten_tree"]

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
    """``os.open`` with 0600 for a file it creates; an existing file keeps its inode but loses group/other bits."""
    fd = os.open(path, flags, PRIVATE_FILE)
    try:
        mode = os.fstat(fd).st_mode
        if mode & 0o077 and os.fstat(fd).st_uid == os.geteuid():
            os.fchmod(fd, stat.S_IMODE(mode) & 0o700)
    except OSError:
        os.close(fd)
        raise
    return fd


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
