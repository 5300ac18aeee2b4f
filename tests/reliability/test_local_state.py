"""Local state (issue 14 §4): private files, no pickle, a lock file never makes us signal a stranger, and no
embedded server outlives the processes that used it.

Every wait here is a poll with a generous bound: what is asserted is that something happens, never how fast.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from reliability_support import alive, embedded_server_pid, kill, stop_embedded_server, worker_env

from neusym import BackendUnavailableError, NeuSymConfig, NeuSymMemory
from neusym.embeddings import HashingEmbedder
from neusym.symbolic.executors import watchdog as wd

pytestmark = pytest.mark.slow

TEXTS = [f"Local state note {i}: the {w} is in the {p}." for i, (w, p) in enumerate(
    [("torch", "van"), ("ladder", "shed"), ("passport", "drawer"), ("charger", "bag"), ("umbrella", "hall")] * 4)]


def _config(data_dir: Path, **kw: Any) -> NeuSymConfig:
    return NeuSymConfig(data_dir=data_dir, graph_name="g", appendfsync="always", **kw)


def _open(data_dir: Path, **kw: Any) -> NeuSymMemory:
    return NeuSymMemory(config=_config(data_dir, **kw), embedder=HashingEmbedder(128))


def _wait(predicate: Any, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for: {what}")
        time.sleep(0.05)


def _all_found(mem: NeuSymMemory, ids: dict[str, str]) -> list[str]:
    """Ids whose memory is missing or not found by a search for its own text."""
    missing = [i for i, text in ids.items() if mem.get_many([i], user_id="u") == []]
    for i, text in list(ids.items())[:8]:
        if i not in {h.id for h in mem.search(text, user_id="u", k=5)}:
            missing.append(i)
    return missing


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "fk"
    yield path
    stop_embedded_server(path)


# ---------------------------------------------------------------------------------------------- permissions
def _loose(root: Path) -> list[str]:
    """Every entry under ``root`` (root included) that group or others can access."""
    out = []
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if mode & 0o077:
            out.append(f"{path.relative_to(root.parent)} {stat.filemode(mode)}")
    return out


def test_data_dir_and_every_file_are_owner_only(data_dir: Path) -> None:
    """The data dir is 0700 and everything in it 0600/0700: our files, the indexes, and what the server writes
    (AOF base/incr/manifest, rewrite output, log), whatever the process umask."""
    old_umask = os.umask(0o022)  # the usual default: files would be world-readable
    try:
        mem = _open(data_dir)
        mem.add_batch(TEXTS, user_id="u", infer=False)
        assert mem.executor.embedded is not None  # type: ignore[attr-defined]
        assert mem.executor.embedded.compact()  # type: ignore[attr-defined]  # the server writes a new base
        assert _loose(data_dir) == []
        mem.close()  # indexes saved, AOF compacted again, server stopped
        assert (data_dir / "indexes" / "g" / "lexical.npz").exists()
        assert _loose(data_dir) == []
        assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    finally:
        os.umask(old_umask)


def test_an_old_world_readable_data_dir_is_tightened(data_dir: Path) -> None:
    mem = _open(data_dir)
    mem.add("Opened by an old version.", user_id="u", infer=False)
    mem.close()
    for path in [data_dir, *data_dir.rglob("*")]:  # what versions before this one left behind
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    assert _loose(data_dir)
    mem = _open(data_dir)
    try:
        assert _loose(data_dir) == []
        assert mem.query(user_id="u", limit=5)
    finally:
        mem.close()


# ---------------------------------------------------------------------------------------------- no pickle
class _Payload:
    """Unpickling this runs code: it creates the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (exec, (f"open({str(self.marker)!r}, 'w').write('pwned')",))


def test_planted_pickles_are_never_executed(data_dir: Path, tmp_path: Path) -> None:
    """A malicious pickle at the old path (``lexical.pkl``) and at the new ones (``lexical.npz`` as a raw pickle,
    as an npz holding an object array, ``vectors.faiss``): opening never runs it, and every memory is still found
    (the indexes are rebuilt from the graph)."""
    mem = _open(data_dir)
    ids = {r.id: r.content for r in mem.add_batch(TEXTS, user_id="u", infer=False)}
    mem.close()
    index_dir = data_dir / "indexes" / "g"
    good = {name: (index_dir / name).read_bytes() for name in ("lexical.npz", "vectors.faiss")}
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Payload(marker))
    obj_npz = tmp_path / "object.npz"
    np.savez(obj_npz, header=np.array([_Payload(marker)], dtype=object))
    plants: list[dict[str, bytes]] = [
        {"lexical.pkl": payload},  # the old path, next to intact new files
        {"lexical.npz": payload},
        {"lexical.npz": obj_npz.read_bytes()},
        {"vectors.faiss": payload},
        {"lexical.pkl": payload, "lexical.npz": payload, "vectors.faiss": payload},
    ]
    for plant in plants:
        for name, data in good.items():
            (index_dir / name).write_bytes(data)
        for name, data in plant.items():
            (index_dir / name).write_bytes(data)
        mem = _open(data_dir)
        try:
            assert not marker.exists(), f"code ran on open with {sorted(plant)}"
            assert not (index_dir / "lexical.pkl").exists()  # the legacy pickle is deleted unread
            assert len(mem.derived.faiss) == len(ids)
            assert _all_found(mem, ids) == [], sorted(plant)
        finally:
            mem.close()
        assert not marker.exists()


def test_a_hand_made_index_file_with_bad_contents_is_rebuilt(data_dir: Path) -> None:
    """A well-formed ``lexical.npz`` whose arrays break the index's invariants (postings pointing past the index,
    a catalog naming a memory twice) is detected on load and rebuilt, not trusted until a search fails."""
    mem = _open(data_dir)
    ids = {r.id: r.content for r in mem.add_batch(TEXTS, user_id="u", infer=False)}
    mem.close()
    state = data_dir / "indexes" / "g" / "lexical.npz"
    with np.load(state, allow_pickle=False) as bundle:
        arrays = {k: bundle[k] for k in bundle.files}
    for name, damage in (("lex_pos", lambda a: a + 10**6), ("cat_nid", lambda a: np.zeros_like(a)),
                         ("cat_user", lambda a: a + 1000)):
        bad = dict(arrays)
        bad[name] = damage(arrays[name])
        with open(state, "wb") as fh:
            np.savez(fh, **bad)
        mem = _open(data_dir)
        try:
            assert _all_found(mem, ids) == [], name
        finally:
            mem.close()


# ---------------------------------------------------------------------------------------------- lock file
def _plant_lock(data_dir: Path, pid: int) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "falkordb.lock").write_text(json.dumps({"pid": pid, "socket": str(data_dir / "falkordb.sock")}))


def test_a_lock_naming_a_live_unrelated_process_never_gets_it_killed(data_dir: Path) -> None:
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        _plant_lock(data_dir, sleeper.pid)
        mem = _open(data_dir)
        try:
            mem.add("Opened past a stale lock.", user_id="u", infer=False)
            assert sleeper.poll() is None, "the unrelated process was signalled"
            assert embedded_server_pid(data_dir) not in (None, sleeper.pid)
        finally:
            mem.close()
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_lock_naming_the_caller_or_its_thread_never_signals_it(data_dir: Path) -> None:
    """Pids are reused after a reboot or container restart: a lock may name the opener itself or one of its
    threads. Opening must neither signal it nor wait for it."""
    hold = threading.Event()
    ready = threading.Event()
    tid: list[int] = []

    def park() -> None:
        tid.append(threading.get_native_id())
        ready.set()
        hold.wait(300)

    helper = threading.Thread(target=park, daemon=True)
    helper.start()
    ready.wait(30)
    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: received.append(signum))
    try:
        for pid in (os.getpid(), tid[0]):
            _plant_lock(data_dir, pid)
            mem = _open(data_dir)
            try:
                mem.add(f"Opened past a lock naming {pid}.", user_id="u", infer=False)
            finally:
                mem.close()
            assert helper.is_alive() and received == []
    finally:
        signal.signal(signal.SIGTERM, previous)
        hold.set()


def test_only_a_verified_server_is_ever_signalled() -> None:
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        sock = "/nonexistent/falkordb.sock"
        assert not wd.is_server(sleeper.pid, sock)
        assert not wd.is_server(os.getpid(), sock)
        assert not wd.is_server(1, sock)
        assert not wd.signal_verified(sleeper.pid, signal.SIGKILL, lambda p: wd.is_server(p, sock))
        time.sleep(0.1)
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()


# ---------------------------------------------------------------------------------------------- orphans
_CLIENT = """
import json, sys, time
from pathlib import Path
from neusym import NeuSymConfig, NeuSymMemory
from neusym.embeddings import HashingEmbedder
cfg = NeuSymConfig(data_dir=Path(sys.argv[1]), graph_name="g", appendfsync="always",
                   embedded_idle_grace=float(sys.argv[2]))
mem = NeuSymMemory(config=cfg, embedder=HashingEmbedder(128))
for i in range(int(sys.argv[3])):
    rec = mem.add(f"Client note {i}: the parcel for flat {i} waits at the desk.", user_id="u", infer=False)[0]
    print(json.dumps({"id": rec.id, "content": rec.content}), flush=True)
print("done", flush=True)
time.sleep(3600)
"""


def _client(data_dir: Path, grace: float, n: int) -> tuple[subprocess.Popen[str], dict[str, str]]:
    proc = subprocess.Popen([sys.executable, "-c", _CLIENT, str(data_dir), str(grace), str(n)],
                            stdout=subprocess.PIPE, text=True, env=worker_env())
    acked: dict[str, str] = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == "done":
            break
        row = json.loads(line)
        acked[row["id"]] = row["content"]
    return proc, acked


def test_a_server_whose_only_client_was_killed_stops_after_its_grace(data_dir: Path) -> None:
    """SIGKILL the only client: its lease dies with it, the watchdog compacts the AOF and stops the server within
    the grace period, and the next open finds every acknowledged write."""
    proc, acked = _client(data_dir, grace=2.0, n=12)
    server, watchdog = embedded_server_pid(data_dir), wd.read_lock(data_dir).get("watchdog")
    assert server is not None and isinstance(watchdog, int) and alive(server)
    kill(proc.pid)
    proc.wait()
    _wait(lambda: not alive(server) and not alive(watchdog), "the orphaned server and its watchdog to exit")
    assert not (data_dir / "falkordb.lock").exists()
    incr = [p for p in (data_dir / "appendonlydir").iterdir() if ".incr." in p.name]
    assert sum(p.stat().st_size for p in incr) == 0  # compacted before stopping: the next start loads a snapshot
    mem = _open(data_dir)
    try:
        assert _all_found_texts(mem, acked) == []
    finally:
        mem.close()


def _all_found_texts(mem: NeuSymMemory, acked: dict[str, str]) -> list[str]:
    return [i for i, text in acked.items() if [r.content for r in mem.get_many([i], user_id="u")] != [text]]


def test_a_shared_server_outlives_a_killed_client_while_another_holds_it(data_dir: Path) -> None:
    """Two processes share one server: killing one must not stop it under the other (even past the grace), and
    the last clean close stops it at once."""
    mem = _open(data_dir, embedded_idle_grace=1.0)
    try:
        proc, acked = _client(data_dir, grace=1.0, n=5)
        server = embedded_server_pid(data_dir)
        assert server is not None
        kill(proc.pid)
        proc.wait()
        time.sleep(4.0)  # several grace periods: a lease is still held, so the server must still be there
        assert alive(server)
        assert _all_found_texts(mem, acked) == []
        mem.add("Still writing after the other client died.", user_id="u", infer=False)
    finally:
        mem.close()
    assert server is not None
    _wait(lambda: not alive(server), "the last close to stop the server")


def test_deleting_the_data_dir_stops_its_server_at_once(data_dir: Path) -> None:
    """The directory is gone (a test suite's tmp dir, a worker's scratch space): the server exits without waiting
    for its grace period, and the open memory reports the loss instead of restarting an empty graph."""
    import shutil

    mem = _open(data_dir, embedded_idle_grace=3600.0, graph_stall_timeout=2.0)
    try:
        mem.add("Written just before the directory vanished.", user_id="u", infer=False)
        server = embedded_server_pid(data_dir)
        assert server is not None
        shutil.rmtree(data_dir)
        _wait(lambda: not alive(server), "the server of a deleted data directory to exit")
        with pytest.raises(BackendUnavailableError, match="deleted"):
            mem.add("After the directory vanished.", user_id="u", infer=False)
        assert not data_dir.exists()  # not recreated as an empty store
    finally:
        mem.close()


def test_hard_forget_after_a_reopen_removes_the_words_from_the_index_file(data_dir: Path) -> None:
    """After a reopen the BM25 postings are the loaded arrays, not lists: a hard forget must still take the
    forgotten words out of them and out of ``lexical.npz``."""
    mem = _open(data_dir)
    secret = mem.add("My locker code is quokkazebra 4417.", user_id="u", infer=False)[0]
    mem.add("I like quiet trains.", user_id="u", infer=False)
    mem.close()
    mem = _open(data_dir)
    try:
        report = mem.forget(secret.id, user_id="u", hard=True, confirm=True)
        assert report.applied
        assert mem.derived.lexical.postings("quokkazebra").size == 0
        mem.derived.save()
        assert b"quokkazebra" not in (data_dir / "indexes" / "g" / "lexical.npz").read_bytes()
        assert mem.search("quiet trains", user_id="u", k=1)
    finally:
        mem.close()
