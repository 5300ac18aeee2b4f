"""A stuck graph server never hangs the caller (issue 14 §6).

The stall is injected with SIGSTOP: the process is alive and its socket accepts connections, but nothing is
answered, exactly like the deadlocked server of the issue (PING unanswered). The embedded server is detected as
stuck once PING stays unanswered for ``graph_stall_timeout`` seconds and restarted once from its AOF: reads go on
transparently, a write in flight is reported as ``BackendUnavailableError``, acknowledged writes are all there, and a
second stall right after the restart is reported instead of restarted again. A remote FalkorDB (nothing to restart)
and Neo4j end a call with a typed error at their timeouts.

Waits are polls with generous bounds: only "it ended with the right outcome" is asserted, never how fast.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from neo4j_server.fixtures import Neo4jConnection
from reliability_support import alive, check_consistency, embedded_server_pid, stop_embedded_server

from neusym import BackendError, BackendUnavailableError, NeuSymConfig, NeuSymMemory
from neusym.embeddings import HashingEmbedder
from neusym.symbolic.executors.embedded import EmbeddedFalkorDB
from neusym.symbolic.executors.falkordb import FalkorDBExecutor

pytestmark = pytest.mark.slow

BOUND = 180.0  # seconds: "did not hang", on a loaded 2-core machine


def _open(data_dir: Path, **kw: Any) -> NeuSymMemory:
    cfg = NeuSymConfig(data_dir=data_dir, graph_name="g", appendfsync="always", graph_stall_timeout=2.0, **kw)
    return NeuSymMemory(config=cfg, embedder=HashingEmbedder(128))


def _bounded(call: Any) -> tuple[Any, BaseException | None]:
    """Run ``call`` in a thread; fail the test (instead of hanging it) if it has not returned within BOUND."""
    out: list[Any] = []
    err: list[BaseException] = []

    def target() -> None:
        try:
            out.append(call())
        except BaseException as e:  # noqa: BLE001 - handed to the test
            err.append(e)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(BOUND)
    assert not t.is_alive(), f"the call hung for more than {BOUND:.0f}s on a stopped server"
    return (out[0] if out else None), (err[0] if err else None)


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "fk"
    yield path
    pid = embedded_server_pid(path)
    if pid is not None and alive(pid):
        os.kill(pid, signal.SIGCONT)
    stop_embedded_server(path)


def test_a_stopped_server_is_restarted_once_and_reads_go_on(data_dir: Path) -> None:
    mem = _open(data_dir)
    try:
        recs = mem.add_batch([f"Stall note {i}: the {c} folder is on shelf {i}." for i, c in
                              enumerate(["red", "blue", "green", "grey"] * 5)], user_id="u", infer=False)
        stuck = embedded_server_pid(data_dir)
        assert stuck is not None
        os.kill(stuck, signal.SIGSTOP)
        hits, err = _bounded(lambda: mem.search("blue folder shelf", user_id="u", k=5))
        assert err is None, f"a read on a restarted server should succeed, got {err!r}"
        assert hits and all("folder" in h.content for h in hits)
        fresh = embedded_server_pid(data_dir)
        assert fresh is not None and fresh != stuck and not alive(stuck)
        assert {r.id for r in mem.get_many([r.id for r in recs], user_id="u")} == {r.id for r in recs}
        later = mem.add("Written after the restart.", user_id="u", infer=False)[0]
        assert mem.get(later.id, user_id="u").content == later.content
        assert check_consistency(mem) == []
    finally:
        mem.close()


def test_a_write_cut_by_a_stall_is_reported_and_nothing_acknowledged_is_lost(data_dir: Path) -> None:
    mem = _open(data_dir)
    try:
        acked = {r.id: r.content for r in mem.add_batch([f"Before the stall {i}." for i in range(10)],
                                                         user_id="u", infer=False)}
        stuck = embedded_server_pid(data_dir)
        assert stuck is not None
        os.kill(stuck, signal.SIGSTOP)
        result, err = _bounded(lambda: mem.add("Written while the server is stopped.", user_id="u", infer=False))
        if err is not None:
            assert isinstance(err, BackendUnavailableError), repr(err)
            assert "may or may not have been applied" in str(err)
        else:  # the stall was detected before the write went out: it went to the new server
            acked[result[0].id] = result[0].content
        after = mem.add("Written after the restart.", user_id="u", infer=False)[0]
        acked[after.id] = after.content
    finally:
        mem.close()
    reopened = _open(data_dir)
    try:
        assert {r.id: r.content for r in reopened.get_many(list(acked), user_id="u")} == acked
        assert check_consistency(reopened) == []
    finally:
        reopened.close()


def test_stuck_again_right_after_a_restart_is_reported_not_restarted(data_dir: Path) -> None:
    mem = _open(data_dir)
    try:
        mem.add("Before two stalls.", user_id="u", infer=False)
        first = embedded_server_pid(data_dir)
        assert first is not None
        os.kill(first, signal.SIGSTOP)
        _, err = _bounded(lambda: mem.query(user_id="u", limit=5))
        assert err is None
        second = embedded_server_pid(data_dir)
        assert second is not None and second != first
        os.kill(second, signal.SIGSTOP)
        _, err = _bounded(lambda: mem.query(user_id="u", limit=5))
        assert isinstance(err, BackendUnavailableError) and "again" in str(err)
        assert embedded_server_pid(data_dir) == second  # not replaced a second time
        os.kill(second, signal.SIGCONT)
        _bounded(mem.close)
    finally:
        mem.close()


def test_a_stopped_remote_falkordb_ends_the_call_at_the_timeout(tmp_path: Path) -> None:
    """Connected by socket/host (not launched by us), the server cannot be restarted: the call ends with a
    typed error at the client's timeout."""
    server = EmbeddedFalkorDB(tmp_path / "remote", appendfsync="always")
    sock = server.start()
    ex = FalkorDBExecutor("g", unix_socket_path=sock, timeout=1.0, stop_on_close=False)
    try:
        ex.run("CREATE (:N {x: 1})")
        pid = server.server_pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        try:
            _, err = _bounded(lambda: ex.run("MATCH (n:N) RETURN n.x AS x", write=False))
            assert isinstance(err, BackendUnavailableError), repr(err)
        finally:
            os.kill(pid, signal.SIGCONT)
    finally:
        ex.close()
        server.stop()


def test_neo4j_transactions_have_a_timeout(neo4j_server: Neo4jConnection) -> None:
    from neusym.symbolic.executors.neo4j import Neo4jExecutor

    ex = Neo4jExecutor(url=neo4j_server.uri, username=neo4j_server.username, password=neo4j_server.password,
                       database=neo4j_server.database, timeout=1.0)
    try:
        long_read = ("UNWIND range(1, 40000) AS a UNWIND range(1, 40000) AS b WITH a, b WHERE (a * b) % 7 = 3 "
                     "RETURN count(*) AS n")
        started = time.monotonic()
        _, err = _bounded(lambda: ex.run(long_read, write=False))
        assert isinstance(err, BackendError), repr(err)
        assert "timed out" in str(err).lower() or "timeout" in str(err).lower(), str(err)
        assert time.monotonic() - started < BOUND
        assert ex.run("RETURN 1 AS one", write=False) == [{"one": 1}]  # the executor is still usable
    finally:
        ex.close()
