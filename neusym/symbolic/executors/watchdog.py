"""The embedded server's watchdog process, and the few Redis commands NeuSym sends without a client library.

Why a watchdog: a client killed before ``close()`` (or a data directory deleted under an open memory, as test
suites and short-lived workers do) used to leave its redis-server running for good. The launcher
(:class:`~neusym.symbolic.executors.embedded.EmbeddedFalkorDB`) therefore starts this file as a *script*
(``python watchdog.py SPEC``: standard library only, no NeuSym import, so it starts in tens of milliseconds and holds
a few MB), and the watchdog starts redis-server as its own child and ends it when nobody needs it:

* **Leases.** Every user of the server (each ``EmbeddedFalkorDB.start()``, i.e. each open memory, in any process)
  holds a shared ``flock`` on ``falkordb.clients`` until it closes. The kernel drops a lock when its process dies,
  however it dies, so a SIGKILLed client stops counting at once. When nobody has held a lease for ``grace``
  seconds, the watchdog takes the lock exclusively (clients arriving meanwhile wait for it), rewrites the AOF into
  one snapshot (so the next start loads fast), shuts the server down and exits.
* **Data directory gone or replaced** (or the socket file removed): nobody can reach this server any more, so it is
  stopped at once.
* **Watchdog killed:** the kernel sends the server SIGTERM (``PR_SET_PDEATHSIG`` on Linux), a clean Redis shutdown.
* **Server gone** (SHUTDOWN by the last client, a crash, a kill): the watchdog removes the lock file if it still
  names this server, and exits.

The helpers above the ``main`` section are also imported by ``embedded.py``: one implementation of the wire
protocol, the AOF compaction and the "is this pid really our server" check.
"""

from __future__ import annotations

# Only what the watchdog needs before it has started the server: everything else is imported where used (the
# launching client has those modules loaded already; the watchdog loads them after the server is on its way).
import contextlib
import fcntl
import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

SOCKET = "falkordb.sock"
LOCK = "falkordb.lock"
LEASES = "falkordb.clients"
LOG = "falkordb.log"
DAMAGED = "falkordb.damaged"  # written when the store's files were found damaged: they are never compacted while it is


# ---------------------------------------------------------------------------------------------- wire protocol
class ReplyError(Exception):
    """The server answered a command with an error (``-ERR ...``, ``-LOADING ...``)."""


def command(sock_path: str | os.PathLike[str], *args: str, timeout: float = 5.0) -> str:
    """Send one command and return its reply as text: just enough RESP (simple, integer and bulk replies) to manage
    the server without a client library.

    Raises:
        ReplyError: the server answered with an error.
        OSError: no server on the socket, it closed the connection, or it did not answer within ``timeout``.
    """
    import socket

    request = f"*{len(args)}\r\n" + "".join(f"${len(a.encode())}\r\n{a}\r\n" for a in args)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(os.fspath(sock_path))
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
                raise ReplyError(text)
            if kind != b"$":
                return text
            size = int(text)
            if size < 0:
                return ""
            if len(rest) >= size + 2:
                return rest[:size].decode(errors="replace")


def ping(sock_path: str | os.PathLike[str], timeout: float = 0.5) -> bool:
    """True if a server answers on the socket and has finished loading its data."""
    if not os.path.exists(sock_path):
        return False
    try:
        return command(sock_path, "PING", timeout=timeout) == "PONG"
    except (OSError, ReplyError, ValueError):
        return False


def responsive(sock_path: str | os.PathLike[str], timeout: float) -> bool:
    """True if the server answers at all within ``timeout``, even with an error: a server still loading its AOF
    answers ``-LOADING`` and is alive, a deadlocked one answers nothing."""
    try:
        command(sock_path, "PING", timeout=timeout)
    except ReplyError:
        return True
    except (OSError, ValueError):
        return False
    return True


def persistence_info(sock_path: str | os.PathLike[str]) -> dict[str, str]:
    """``INFO persistence`` as a dict (``aof_rewrite_in_progress``, ``aof_last_bgrewrite_status``, ...)."""
    text = command(sock_path, "INFO", "persistence")
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line and not line.startswith("#"))


def _wait_rewrite(sock_path: str | os.PathLike[str], deadline: float) -> bool:
    """Wait for the running or scheduled AOF rewrite to be done (its manifest written); False at the deadline."""
    while True:
        info = persistence_info(sock_path)
        if info.get("aof_rewrite_in_progress") == "0" and info.get("aof_rewrite_scheduled") == "0":
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def compact(sock_path: str | os.PathLike[str], timeout: float) -> str | None:
    """Rewrite the AOF into one snapshot (BGREWRITEAOF) and wait until the new manifest is in place.

    Afterwards the AOF is a base RDB holding everything and an empty incr file, so the next start loads a snapshot
    instead of replaying every statement. Safe to interrupt: until the rewrite completes, the manifest still lists
    the old base and all incr files (Redis' multi-part AOF). A rewrite already running (an automatic one) is waited
    for and followed by ours, since it misses the writes made after it started.

    Returns None on success, else why not (the AOF stays as valid as it was).
    """
    deadline = time.monotonic() + timeout
    try:
        for attempt in range(2):
            try:
                command(sock_path, "BGREWRITEAOF")
                break
            except ReplyError as err:  # "already in progress": let it finish, then rewrite its tail too
                if "in progress" not in str(err) or attempt or not _wait_rewrite(sock_path, deadline):
                    return str(err)
        if not _wait_rewrite(sock_path, deadline):
            return "the AOF rewrite was still running at the timeout"
        status = persistence_info(sock_path).get("aof_last_bgrewrite_status")
    except (OSError, ValueError, ReplyError) as err:
        return str(err)
    return None if status == "ok" else f"the AOF rewrite failed (status {status})"


def shutdown(sock_path: str | os.PathLike[str]) -> None:
    """Ask the server to exit cleanly (flushes and fsyncs the AOF). It closes the connection instead of replying."""
    with contextlib.suppress(OSError, ReplyError, ValueError):
        command(sock_path, "SHUTDOWN", timeout=30.0)


# ---------------------------------------------------------------------------------------------- processes
def pid_alive(pid: int) -> bool:
    """True for a running (or stopped) process; False for none or a zombie (a zombie holds no socket or file)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def process_title(pid: int) -> str | None:
    """The process' command line as one string (arguments joined by spaces), or None if there is no such process.

    Redis rewrites its title (``--proc-title-template``, set by the launcher to name the socket), which is what
    ``/proc/PID/cmdline`` and ``ps`` show. Only used to recognise our own processes, never parsed further.
    """
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read()
        return " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)
    except FileNotFoundError:
        if os.path.exists("/proc/self"):
            return None
    except OSError:
        pass
    import subprocess

    try:  # no procfs (macOS)
        out = subprocess.run(["ps", "-ww", "-o", "args=", "-p", str(pid)], capture_output=True, text=True,
                             timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def own_ids() -> set[int]:
    """This process' pid and its threads' ids: a lock file must never make us signal ourselves."""
    ids = {os.getpid()}
    with contextlib.suppress(OSError, ValueError):
        ids.update(int(t) for t in os.listdir("/proc/self/task"))
    return ids


def is_server(pid: int, sock_path: str | os.PathLike[str]) -> bool:
    """True only for a live redis-server whose command line names this socket (the launcher puts it in the title).

    A lock file can name anything: a pid reused after a reboot or container restart, a forged value, the caller
    itself. Only a process passing this check is ever signalled.
    """
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 1 or pid in own_ids() or not pid_alive(pid):
        return False
    title = process_title(pid)
    if not title:
        return False
    program = os.path.basename(title.split(" ", 1)[0])
    return program == "redis-server" and os.fspath(sock_path) in title


def is_watchdog(pid: int, data_dir: str | os.PathLike[str]) -> bool:
    """True only for a live watchdog (this script) started for ``data_dir``."""
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 1 or pid in own_ids() or not pid_alive(pid):
        return False
    title = process_title(pid) or ""
    return os.path.basename(__file__) in title and os.fspath(data_dir) in title


def signal_verified(pid: int, sig: int, verify: Callable[[int], bool]) -> bool:
    """Send ``sig`` to ``pid`` only if ``verify(pid)`` holds. Where the OS has pidfds, the process is pinned first
    and checked through the pin, so the pid cannot be recycled between the check and the signal."""
    import signal

    pidfd = getattr(os, "pidfd_open", None)
    if pidfd is not None:
        try:
            fd = pidfd(pid)
        except OSError:
            fd = -1
        if fd >= 0:
            try:
                if not verify(pid):
                    return False
                signal.pidfd_send_signal(fd, sig)
                return True
            except OSError:
                return False
            finally:
                os.close(fd)
    if not verify(pid):
        return False
    try:
        os.kill(pid, sig)
    except OSError:
        return False
    return True


def read_lock(data_dir: str | os.PathLike[str]) -> dict[str, object]:
    import json

    try:
        with open(os.path.join(data_dir, LOCK)) as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_private(path: str, text: str) -> None:
    """Atomically replace ``path`` with ``text``, readable by the owner only."""
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)


class Lease:
    """One shared ``flock`` on ``falkordb.clients``: held by a user of the server for as long as it uses it.

    ``flock`` (not POSIX ``lockf``) because its locks belong to the open file, not the process: two memories in one
    process hold two independent leases, and closing one never drops the other's.
    """

    def __init__(self, data_dir: str | os.PathLike[str]) -> None:
        self.path = os.path.join(data_dir, LEASES)
        self.fd = -1

    def _open(self) -> None:
        if self.fd >= 0:
            try:  # someone deleted or replaced the file: a lock on the old inode protects nothing
                if os.fstat(self.fd).st_ino == os.stat(self.path).st_ino:
                    return
            except OSError:
                pass
            self.close()
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)

    def acquire(self, exclusive: bool, timeout: float) -> bool:
        """Take the lock (shared or exclusive), polling until ``timeout``; False if it was not granted in time."""
        deadline = time.monotonic() + timeout
        while True:
            self._open()
            try:
                fcntl.flock(self.fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.01)

    def release(self) -> None:
        if self.fd >= 0:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the file (and so drop its lock)."""
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1


# ---------------------------------------------------------------------------------------------- main
def _spawn(argv: list[str]) -> int:
    """Fork and exec the server (no ``subprocess``: it is not imported yet). The child inherits the watchdog's
    stdout/stderr (the server log, opened by the launcher) and stdin (/dev/null); on Linux the kernel sends it
    SIGTERM, a clean Redis shutdown, should the watchdog die."""
    prctl: Callable[..., int] | None = None
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            prctl = ctypes.CDLL(None).prctl
        except (ImportError, OSError, AttributeError):
            prctl = None
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: nothing but syscalls until exec
        try:
            if prctl is not None:
                prctl(1, 15)  # PR_SET_PDEATHSIG, SIGTERM
            if os.getppid() != parent:  # the watchdog died before prctl took effect
                os._exit(1)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    return pid


def _exited(pid: int) -> bool:
    """Reap the server if it has exited."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done == pid


def _terminate(pid: int) -> None:
    """SIGTERM (Redis flushes its AOF and exits), SIGCONT in case it is stopped, SIGKILL if it does not go."""
    import signal

    for sig in (signal.SIGTERM, signal.SIGCONT):
        with contextlib.suppress(OSError):
            os.kill(pid, sig)
    deadline = time.monotonic() + 15.0
    while not _exited(pid):
        if time.monotonic() > deadline:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return
        time.sleep(0.02)


def _same_dir(data_dir: str, ident: tuple[int, int]) -> bool:
    try:
        st = os.stat(data_dir)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == ident


def _log(message: str) -> None:
    sys.stderr.write(f"neusym watchdog {os.getpid()}: {message}\n")
    sys.stderr.flush()


def main(argv: list[str]) -> int:
    """``watchdog.py DATA_DIR SOCKET GRACE REWRITE_TIMEOUT -- REDIS_ARGV...``: run the server for DATA_DIR until
    nobody needs it (see the module docstring)."""
    os.umask(0o077)  # every file the server writes (AOF, temp files) is the owner's only
    data_dir, sock = argv[0], argv[1]
    grace, rewrite_timeout = float(argv[2]), float(argv[3])
    if argv[4] != "--":
        raise SystemExit("usage: watchdog.py DATA_DIR SOCKET GRACE REWRITE_TIMEOUT -- REDIS_ARGV...")
    st = os.stat(data_dir)
    ident = (st.st_dev, st.st_ino)
    server = _spawn(argv[5:])
    # The server is starting: from here on nothing delays the launcher, which waits for the server's PING.
    import json
    import signal

    watched = {signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP}
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    wait_signal = getattr(signal, "sigtimedwait", None)
    stop_requested: list[int] = []
    if wait_signal is not None:  # sleep until the poll interval passes or a watched signal arrives
        signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    else:  # pragma: no cover - no sigtimedwait (macOS): poll more often
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda signum, _frame: stop_requested.append(signum))
    poll = 0.5 if wait_signal is not None else 0.05
    lock_path = os.path.join(data_dir, LOCK)
    write_private(lock_path, json.dumps({"pid": server, "watchdog": os.getpid(), "socket": sock, "dir": data_dir}))
    lease = Lease(data_dir)
    idle_since: float | None = None
    seen_socket = False
    try:
        while True:
            if wait_signal is not None:
                got = wait_signal(watched, poll)
                if got is not None and got.si_signo in (signal.SIGTERM, signal.SIGHUP):
                    stop_requested.append(got.si_signo)
            else:
                time.sleep(poll)
            if _exited(server):
                break  # the server exited: SHUTDOWN by the last client, a crash or a kill
            if stop_requested:
                _terminate(server)
                break
            if not _same_dir(data_dir, ident):
                _log(f"data directory {data_dir} is gone: stopping the server")
                _terminate(server)
                break
            if os.path.exists(sock):
                seen_socket = True
            elif seen_socket:
                _log(f"socket {sock} was removed: stopping the server nobody can reach")
                _terminate(server)
                break
            try:
                idle = lease.acquire(exclusive=True, timeout=0)
            except OSError:  # the directory vanished between the checks: the next round stops the server
                continue
            if not idle:
                idle_since = None
                continue
            now = time.monotonic()
            if idle_since is None:
                idle_since = now
            if now - idle_since < grace:
                lease.release()
                continue
            # Nobody has used the server for the grace period. The exclusive lease is kept until the server is
            # gone: a client opening now waits, then finds no server and starts a new one.
            if os.path.exists(os.path.join(data_dir, DAMAGED)):  # keep the evidence as it is
                _log(f"{DAMAGED} is present: AOF not compacted before the idle stop")
            else:
                why = compact(sock, rewrite_timeout)
                if why:
                    _log(f"AOF not compacted before the idle stop ({why}); the AOF stays valid")
            shutdown(sock)
            deadline = time.monotonic() + 60.0
            while not _exited(server):
                if time.monotonic() > deadline:
                    _terminate(server)
                    break
                time.sleep(0.02)
            break
    finally:
        if read_lock(data_dir).get("watchdog") == os.getpid():
            with contextlib.suppress(OSError):
                os.unlink(lock_path)
        lease.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
