"""Build and start the throwaway Neo4j 5.26 server (``Neo4jTestServer.java``) that NeuSym's Neo4j tests talk to.

Why a JVM child process and not docker or a tarball: this project can reach package registries only, and the
official ``neo4j-harness`` on Maven Central is a complete Neo4j Community server we can run in-process.

Usage::

    python tests/neo4j_server/launcher.py --build-only     # CI prebuild: mvn package (offline first, then online)
    python tests/neo4j_server/launcher.py                  # start, print NEO4J_URI/USERNAME/PASSWORD, run until Ctrl-C

From Python::

    server = start_neo4j()
    ...  # server.uri, server.username, server.password
    server.stop()

The server stops by itself when this process goes away (it watches the stdin pipe we hold), so a crashed or killed
test run never leaves a JVM behind. Auth is on: user ``neo4j``, password :data:`DEFAULT_PASSWORD`.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

__all__ = [
    "DEFAULT_PASSWORD",
    "USERNAME",
    "Neo4jServerError",
    "Neo4jTestServer",
    "build",
    "needs_build",
    "start_neo4j",
]

HERE = Path(__file__).resolve().parent
TARGET = HERE / "target"
JAR = TARGET / "neusym-neo4j-test-server.jar"
_STAMP = TARGET / ".build-ok"  # written only after a complete build, so an interrupted copy of lib/ is rebuilt
# Class-data-sharing archive of the classes a start loads, recorded by one training start after each build. It cuts
# the CPU a start needs by about a third; the JVM ignores it (and says so on stderr) if the jars or the JDK changed.
CDS_ARCHIVE = TARGET / "neusym-neo4j-test-server.jsa"
_URI_PREFIX = "NEO4J_URI="

USERNAME = "neo4j"
DEFAULT_PASSWORD = "neusym-test-password"  # must match Neo4jTestServer.DEFAULT_PASSWORD; >= 8 chars for Neo4j

# Startup is CPU-bound (class loading and JIT): C1 only (TieredStopAtLevel=1) halves the CPU a start takes, which
# matters on a 2-core machine; test queries are short, so C2's peak speed is not missed (benchmarks: pass jvm_args).
# The capped heap and SerialGC keep a couple of parallel test workers comfortable.
DEFAULT_JVM_ARGS: tuple[str, ...] = (
    "-Xms256m",
    "-Xmx1g",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:+ExitOnOutOfMemoryError",
)
# JVM warnings (e.g. a stale CDS archive) go to stderr, the server log, never to the stdout the launcher parses.
_JVM_LOGGING = ("-Xlog:disable", "-Xlog:all=warning:stderr")


class Neo4jServerError(RuntimeError):
    """The test server could not be built or started; the message carries the tail of the build or server log."""


def _sources() -> list[Path]:
    return [HERE / "pom.xml", *sorted((HERE / "src").rglob("*.java"))]


def needs_build() -> bool:
    """True when the jar is missing, half-built, or older than the pom or any Java source."""
    if not (JAR.exists() and _STAMP.exists()):
        return True
    built = _STAMP.stat().st_mtime
    return any(p.stat().st_mtime > built for p in _sources())


@contextlib.contextmanager
def _build_lock() -> Iterator[None]:
    """Serialise builds across processes (pytest-xdist workers would otherwise run mvn on one target/ at once)."""
    TARGET.mkdir(exist_ok=True)
    with open(TARGET / ".build.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def build(*, force: bool = False, timeout: float = 900.0) -> Path:
    """Build the server jar (and ``target/lib``) if needed; return the jar path.

    Offline first (``mvn -o``): with a warm ``~/.m2`` that needs no network and takes seconds. If the cache is cold or
    incomplete, the same build runs online against Maven Central.
    """
    with _build_lock():
        if not force and not needs_build():
            return JAR
        mvn = shutil.which("mvn")
        if mvn is None:
            raise Neo4jServerError("Maven ('mvn') is not on PATH; it builds the Neo4j test server")
        _STAMP.unlink(missing_ok=True)
        output = ""
        for offline in (True, False):
            cmd = [mvn, "-B", "-q", *(["-o"] if offline else []), "package"]
            try:
                proc = subprocess.run(
                    cmd, cwd=HERE, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
                )
            except subprocess.TimeoutExpired as err:
                raise Neo4jServerError(f"{' '.join(cmd)} did not finish in {timeout:.0f}s") from err
            if proc.returncode == 0:
                _STAMP.write_text(" ".join(cmd) + "\n")
                _train_cds_archive()
                return JAR
            output = (proc.stdout + proc.stderr)[-4000:]
        raise Neo4jServerError(f"building the Neo4j test server failed (mvn package, offline then online):\n{output}")


def _train_cds_archive(timeout: float = 300.0) -> None:
    """Record the CDS archive with one start/stop. Optional: on any failure starts simply stay slower."""
    CDS_ARCHIVE.unlink(missing_ok=True)
    partial = CDS_ARCHIVE.with_suffix(".jsa.tmp")
    partial.unlink(missing_ok=True)
    try:
        server = _spawn(_find_java(), (*DEFAULT_JVM_ARGS, f"-XX:ArchiveClassesAtExit={partial}"), 0, DEFAULT_PASSWORD,
                        timeout)
        server.stop(timeout=timeout)  # the archive is written as the JVM exits
        if server.process.returncode == 0 and partial.exists():
            partial.replace(CDS_ARCHIVE)
    except Neo4jServerError as err:
        print(f"note: no CDS archive for the Neo4j test server (starts will be slower): {err}", file=sys.stderr)
    finally:
        partial.unlink(missing_ok=True)


@dataclass
class Neo4jTestServer:
    """A running test server. ``stop()`` is idempotent; the server also stops when this process exits."""

    uri: str
    username: str
    password: str
    process: subprocess.Popen[bytes] = field(repr=False)
    log_path: Path = field(repr=False)
    startup_seconds: float = 0.0

    @property
    def port(self) -> int:
        return int(self.uri.rsplit(":", 1)[1])

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 30.0) -> None:
        """Close the stdin pipe (the server's cue to shut down cleanly), then escalate to SIGTERM and SIGKILL."""
        proc = self.process
        if proc.stdin is not None and not proc.stdin.closed:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        if proc.poll() is None:
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
        if proc.stdout is not None:
            with contextlib.suppress(OSError):
                proc.stdout.close()
        self.log_path.unlink(missing_ok=True)

    def __enter__(self) -> Neo4jTestServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _pump(stream: IO[bytes], lines: queue.Queue[str | None]) -> None:
    """Forward stdout lines to the waiting thread; keep draining afterwards so the pipe can never fill up."""
    for raw in iter(stream.readline, b""):
        lines.put(raw.decode("utf-8", "replace").strip())
    lines.put(None)


def _tail(path: Path, chars: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:] or "(empty server log)"
    except OSError:
        return "(no server log)"


def start_neo4j(
    timeout: float = 120.0,
    *,
    port: int = 0,
    password: str = DEFAULT_PASSWORD,
    java: str | None = None,
    jvm_args: Sequence[str] = DEFAULT_JVM_ARGS,
    build_timeout: float = 900.0,
) -> Neo4jTestServer:
    """Build if needed, start the server and wait until Bolt accepts connections.

    Args:
        timeout: seconds to wait for the JVM to report ready (building has its own ``build_timeout``).
        port: Bolt port on 127.0.0.1; 0 lets the OS pick a free one.
        password: password of user ``neo4j`` (at least 8 characters).
        java: the ``java`` executable; defaults to ``$NEUSYM_NEO4J_JAVA``, ``$JAVA_HOME/bin/java``, ``java`` on PATH.
    """
    build(timeout=build_timeout)
    args = tuple(jvm_args)
    if CDS_ARCHIVE.exists() and not any(a.startswith("-XX:SharedArchiveFile") for a in args):
        args += (f"-XX:SharedArchiveFile={CDS_ARCHIVE}",)
    return _spawn(java or _find_java(), args, port, password, timeout)


def _spawn(java: str, jvm_args: Sequence[str], port: int, password: str, timeout: float) -> Neo4jTestServer:
    # Server stderr lives in target/logs: deleted on a clean stop, kept for a post-mortem when the test run crashed.
    (TARGET / "logs").mkdir(parents=True, exist_ok=True)
    log_fd, log_name = tempfile.mkstemp(prefix="server-", suffix=".log", dir=TARGET / "logs")
    log_path = Path(log_name)
    cmd = [java, *_JVM_LOGGING, *jvm_args, "-jar", str(JAR), "--port", str(port), "--password", password]
    began = time.monotonic()
    try:
        # start_new_session: a Ctrl-C aimed at pytest must not kill the server under tests still tearing down;
        # the stdin pipe (closed when we exit, however we exit) is what ends it.
        proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_fd, start_new_session=True
        )
    except OSError as err:
        log_path.unlink(missing_ok=True)
        raise Neo4jServerError(f"cannot run {java}: {err}") from err
    finally:
        os.close(log_fd)
    assert proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_pump, args=(proc.stdout, lines), name="neo4j-test-server-stdout", daemon=True).start()
    deadline = began + timeout
    while True:
        remaining = deadline - time.monotonic()
        try:
            line = lines.get(timeout=max(0.0, min(remaining, 0.5)))
        except queue.Empty:
            line = ""
        if line is None or (line == "" and proc.poll() is not None):
            code = proc.wait()
            tail = _tail(log_path)
            log_path.unlink(missing_ok=True)
            raise Neo4jServerError(f"Neo4j test server exited with code {code} before it was ready:\n{tail}")
        if line.startswith(_URI_PREFIX):
            uri = line[len(_URI_PREFIX) :]
            return Neo4jTestServer(uri, USERNAME, password, proc, log_path, time.monotonic() - began)
        if remaining <= 0:
            server = Neo4jTestServer("", USERNAME, password, proc, log_path)
            tail = _tail(log_path)
            server.stop(timeout=5)
            raise Neo4jServerError(f"Neo4j test server was not ready within {timeout:.0f}s:\n{tail}")


def _find_java() -> str:
    """``NEUSYM_NEO4J_JAVA`` (an explicit java binary), then ``$JAVA_HOME/bin/java``, then ``java`` on PATH."""
    explicit = os.environ.get("NEUSYM_NEO4J_JAVA")
    if explicit:
        return explicit
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise Neo4jServerError("no 'java' on PATH (Java 17+ runs the Neo4j test server)")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--build-only", action="store_true", help="build the server jar and exit")
    parser.add_argument("--force", action="store_true", help="rebuild even if the jar is up to date")
    parser.add_argument("--port", type=int, default=0, help="Bolt port (default: a free one)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the server")
    args = parser.parse_args(argv)
    began = time.monotonic()
    if args.build_only:
        jar = build(force=args.force)
        print(f"built {jar} in {time.monotonic() - began:.1f}s", file=sys.stderr)
        return 0
    if args.force:
        build(force=True)
    server = start_neo4j(args.timeout, port=args.port)
    print(f"NEO4J_URI={server.uri}\nNEO4J_USERNAME={server.username}\nNEO4J_PASSWORD={server.password}", flush=True)
    print(f"ready in {time.monotonic() - began:.1f}s; Ctrl-C or SIGTERM stops it", file=sys.stderr)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    while not stop.is_set() and server.alive():
        stop.wait(0.5)
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
