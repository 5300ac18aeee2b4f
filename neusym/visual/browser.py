"""Headless Chromium helpers: render a graph page to a PNG, or dump the DOM after its script ran.

Used by ``neusym graph --png`` and by the browser test. Each call gets a fresh throw-away profile and the flags
that keep Chromium from reaching the network (the page itself never asks for anything).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from neusym.errors import BackendUnavailableError, NeuSymError
from neusym.private_files import write_private

__all__ = ["CHROMIUM_FLAGS", "dump_dom", "find_chromium", "screenshot"]

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
    "--disable-extensions", "--mute-audio",
)
_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_chromium() -> str | None:
    """``NEUSYM_CHROMIUM`` if set, else the first Chromium/Chrome on ``PATH``."""
    env = os.environ.get("NEUSYM_CHROMIUM")
    if env:
        return shutil.which(env) or (env if Path(env).is_file() else None)
    for name in _NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    exe = find_chromium()
    if exe is None:
        raise BackendUnavailableError("no Chromium found (install Debian's 'chromium' package or set NEUSYM_CHROMIUM)")
    with tempfile.TemporaryDirectory(prefix="neusym-chromium-") as profile:
        cmd = [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as err:
            raise NeuSymError(f"chromium did not finish within {timeout:.0f}s") from err
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise NeuSymError(f"chromium failed (exit {proc.returncode}): {tail}")
    return proc


def dump_dom(page: str | os.PathLike[str], *, fragment: str = "", timeout: float = 120.0,
             budget_ms: int = 5000) -> str:
    """The page's DOM after load (its scripts have run), as HTML text; ``fragment`` is appended as ``#...``."""
    uri = Path(page).resolve().as_uri() + (f"#{fragment}" if fragment else "")
    return _run(["--dump-dom", f"--virtual-time-budget={budget_ms}", uri], timeout).stdout


def screenshot(page: str | os.PathLike[str], png: str | os.PathLike[str], *, width: int = 1400, height: int = 900,
               timeout: float = 120.0, budget_ms: int = 5000) -> Path:
    """Render ``page`` to ``png`` at ``width`` x ``height``; returns the PNG path.

    Chromium writes into a private temporary directory; the picture (every memory of the scope, drawn) then
    becomes ``png`` as every NeuSym output does (:func:`neusym.private_files.write_private`: 0600, atomic, never
    through a symbolic link)."""
    out = Path(png).expanduser().absolute()
    uri = Path(page).resolve().as_uri()
    with tempfile.TemporaryDirectory(prefix="neusym-shot-") as tmp:
        shot = Path(tmp) / "shot.png"
        _run([f"--screenshot={shot}", f"--window-size={width},{height}", f"--virtual-time-budget={budget_ms}", uri],
             timeout)
        if not shot.is_file() or shot.stat().st_size == 0:
            raise NeuSymError(f"chromium wrote no screenshot for {out}")
        return write_private(out, shot.read_bytes())
