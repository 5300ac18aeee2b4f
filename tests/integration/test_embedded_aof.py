"""The embedded server's append-only file: a clean stop compacts it into one snapshot, so a reopen loads the
snapshot instead of replaying every statement; an interrupted compaction loses nothing."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import redis

from neusym import NeuSymConfig, NeuSymMemory
from neusym.embeddings import HashingEmbedder
from neusym.symbolic.executors.embedded import EmbeddedFalkorDB


def _open(data_dir: Path) -> NeuSymMemory:
    cfg = NeuSymConfig(data_dir=data_dir, graph_name="g", appendfsync="everysec")
    return NeuSymMemory(config=cfg, embedder=HashingEmbedder(64))


def _aof(data_dir: Path) -> dict[str, list[Path]]:
    """The files the AOF manifest lists, by type: ``b`` base, ``i`` incr (``h`` history)."""
    aof_dir = data_dir / "appendonlydir"
    out: dict[str, list[Path]] = {}
    for line in next(aof_dir.glob("*.manifest")).read_text().splitlines():
        fields = line.split()
        meta = dict(zip(fields[2::2], fields[3::2], strict=False))
        out.setdefault(meta["type"], []).append(aof_dir / fields[1])
    return out


def _fill(mem: NeuSymMemory, n: int, tag: str) -> dict[str, str]:
    added = mem.add_batch([f"{tag} note {i}: the parcel for flat {i} waits at the front desk" for i in range(n)],
                          user_id="ana", infer=False)
    return {r.id: r.content for r in added}


def _assert_all_back(data_dir: Path, expected: dict[str, str]) -> None:
    mem = _open(data_dir)
    try:
        assert {mid: mem.get(mid, user_id="ana").content for mid in expected} == expected
        assert mem.search("parcel front desk", user_id="ana", k=3)
    finally:
        mem.close()


def test_clean_close_leaves_one_snapshot_and_an_empty_log(tmp_path: Path) -> None:
    data_dir = tmp_path / "fk"
    mem = _open(data_dir)  # starts (and so owns) the server of data_dir
    expected = _fill(mem, 150, "first")
    mem.close()  # the last client: the server is stopped, after rewriting its AOF

    files = _aof(data_dir)
    (base,) = files["b"]
    assert base.name.endswith(".rdb") and base.read_bytes()[:5] == b"REDIS"  # a snapshot, not a statement log
    assert sum(p.stat().st_size for p in files["i"]) == 0  # nothing left to replay: every write is in the base
    assert "h" not in files and not list(data_dir.glob("temp-rewriteaof*"))
    _assert_all_back(data_dir, expected)  # the reopen read everything back from the snapshot


def test_compact_on_a_running_server_waits_for_a_rewrite_in_progress(tmp_path: Path) -> None:
    data_dir = tmp_path / "fk"
    server = EmbeddedFalkorDB(data_dir, appendfsync="everysec")
    server.start()
    mem = _open(data_dir)  # reuses the server above
    try:
        expected = _fill(mem, 60, "busy")
        client = redis.Redis(unix_socket_path=str(server.socket_path))
        client.config_set("rdb-key-save-delay", 200_000)  # microseconds per key: this rewrite is still running...
        client.bgrewriteaof()
        assert server.compact()  # ...when compact() asks for one: it waits, then rewrites what came after
        client.config_set("rdb-key-save-delay", 0)
        client.close()
        files = _aof(data_dir)
        assert len(files["b"]) == 1 and sum(p.stat().st_size for p in files["i"]) == 0
    finally:
        mem.close()
        server.stop()
    _assert_all_back(data_dir, expected)


def test_server_killed_in_the_middle_of_a_rewrite_loses_nothing(tmp_path: Path) -> None:
    """Redis' multi-part AOF: a rewrite only replaces the manifest once its new base is complete, so killing the
    server (and the rewriting child) halfway leaves the old base and every incr file listed and loadable."""
    data_dir = tmp_path / "fk"
    server = EmbeddedFalkorDB(data_dir, appendfsync="always")
    server.start()
    assert server.process is not None and server.server_pid is not None
    group = os.getpgid(server.server_pid)  # the watchdog's session: watchdog, server and the rewriting child
    mem = _open(data_dir)
    try:
        expected = _fill(mem, 80, "kept")
        before = _aof(data_dir)
        client = redis.Redis(unix_socket_path=str(server.socket_path))
        client.config_set("rdb-key-save-delay", 60_000_000)  # the rewrite cannot finish before the kill
        client.bgrewriteaof()
        assert client.info("persistence")["aof_rewrite_in_progress"] == 1
        client.close()
        deadline = time.monotonic() + 60  # a sync point, not a timing assertion: the child has begun writing
        while not list(data_dir.glob("temp-rewriteaof-*.aof")) and time.monotonic() < deadline:
            time.sleep(0.01)
        os.killpg(group, signal.SIGKILL)  # the server and its rewriting child (same process group)
        server.process.wait(timeout=30)
    finally:
        mem.close()
        server.stop(force=True)
    after = _aof(data_dir)
    assert after["b"] == before["b"] and set(before["i"]) <= set(after["i"])  # the old base and log still listed
    assert list(data_dir.glob("temp-rewriteaof-*.aof"))  # the killed rewrite's partial snapshot...
    _assert_all_back(data_dir, expected)  # reopen replays them: nothing lost
    assert not list(data_dir.glob("temp-rewriteaof-*.aof"))  # ...is removed by the next launch
    # and the next clean close compacts as usual
    mem = _open(data_dir)
    more = _fill(mem, 10, "later")
    mem.close()
    assert sum(p.stat().st_size for p in _aof(data_dir)["i"]) == 0
    _assert_all_back(data_dir, {**expected, **more})


def test_a_close_stops_the_server_only_when_it_was_the_last_holder(tmp_path: Path) -> None:
    """Closing tells "other clients hold the server" from "the watchdog is polling" by a shared lock: with another
    holder the server keeps running (at once, no retry loop), and the last holder's close stops it."""
    from neusym.symbolic.executors import watchdog as wd

    data_dir = tmp_path / "fk"
    first = EmbeddedFalkorDB(data_dir, appendfsync="everysec")
    first.start()
    second = EmbeddedFalkorDB(data_dir, appendfsync="everysec")
    second.start()  # attaches to the running server: a second shared lease
    try:
        second.stop()
        assert wd.responsive(first.socket_path, 5.0)  # the first still holds it: still running
    finally:
        first.stop()
    assert not wd.responsive(first.socket_path, 1.0)  # the last holder's close stopped it
