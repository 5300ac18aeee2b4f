"""Two application processes on one graph keep their local indexes consistent by catching up from the graph's
write sequence: a memory added by one is found by the other's search, and a delete in one disappears from the
other. Runs on both backends (``backend``), and on Neo4j also with both processes in vector-index mode.

The second process is a real subprocess (``memory_worker.py``) with its own derived-index directory, alive for the
whole test, so neither process ever reopens: every change reaches the other only through catch-up.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from neusym import NeuSymConfig, NeuSymMemory

WORKER = Path(__file__).with_name("memory_worker.py")


class Worker:
    """The other process. Requests and answers are JSON lines; an error in the worker fails the test."""

    def __init__(self, cfg: NeuSymConfig) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), cfg.model_dump_json()],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        ready = self._read()
        assert ready.get("ready"), ready
        self.neural_backend = ready["neural_backend"]

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise AssertionError(f"worker exited (rc={self.proc.poll()}):\n{err[-3000:]}")
        data: dict[str, Any] = json.loads(line)
        assert "error" not in data, data["error"]
        return data

    def __call__(self, op: str, **kw: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **kw}) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=120)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    stream.close()


@pytest.fixture
def start_worker(tmp_path: Path) -> Iterator[Callable[[NeuSymConfig], Worker]]:
    workers: list[Worker] = []

    def start(cfg: NeuSymConfig) -> Worker:
        w = Worker(cfg)
        workers.append(w)
        return w

    yield start
    for w in workers:
        w.close()


def _two_processes_stay_consistent(here: NeuSymMemory, there: Worker) -> None:
    u = "tenant-1"
    # added here -> found there
    a = here.add("The spare key is under the blue flower pot.", user_id=u, infer=False)[0]
    assert there("search", query="where is the spare key", user_id=u, k=1)["ids"] == [a.id]
    # added there -> found here (dense channel alone too: the vector reached this process's dense index)
    b_id = there("add", text="The wifi password is written on the fridge door.", user_id=u)["id"]
    assert [h.id for h in here.search("wifi password fridge", user_id=u, k=1)] == [b_id]
    assert [h.id for h in here.search("wifi password fridge", user_id=u, k=1, recipe="dense_only")] == [b_id]
    # deleted there -> gone here
    assert there("delete", id=a.id, user_id=u)["deleted"] == 1
    assert a.id not in {h.id for h in here.search("spare key blue flower pot", user_id=u, k=5)}
    assert a.nid not in here.derived.catalog.pos_of
    # deleted here -> gone there
    b_nid = here.get(b_id, user_id=u).nid
    assert here.delete(b_id, user_id=u) == 1
    assert there("search", query="wifi password fridge", user_id=u, k=5)["ids"] == []
    state = there("state")
    assert b_nid not in state["nids"] and a.nid not in state["nids"]
    # both processes end at the graph's current write sequence
    here.search("anything", user_id=u)
    assert state["watermark"] == here.derived.watermark == here.store.counter()
    # another tenant's memory, added there, never shows up in this tenant's search here
    there("add", text="The spare key of tenant two is in the mailbox.", user_id="tenant-2")
    assert here.search("spare key mailbox", user_id=u, k=5) == []
    assert len(here.search("spare key mailbox", user_id="tenant-2", k=5)) == 1


def test_two_processes_share_one_graph(
    make_memory: Callable[..., NeuSymMemory], backend_config: Callable[..., NeuSymConfig],
    start_worker: Callable[[NeuSymConfig], Worker], tmp_path: Path,
) -> None:
    here = make_memory()
    there = start_worker(backend_config(index_path=tmp_path / "worker_index"))
    assert Path(here.config.index_dir) != tmp_path / "worker_index"
    _two_processes_stay_consistent(here, there)


@pytest.mark.neo4j
def test_two_processes_in_vector_index_mode(
    backend: str, make_memory: Callable[..., NeuSymMemory], backend_config: Callable[..., NeuSymConfig],
    start_worker: Callable[[NeuSymConfig], Worker], tmp_path: Path,
) -> None:
    if backend != "neo4j":  # the vector-index mode is Neo4j's; the FalkorDB half checks the refusal instead
        with pytest.raises(ValueError, match="neo4j_vector"):
            make_memory(config_overrides={"neural_backend": "neo4j_vector"})
        return
    here = make_memory(config_overrides={"neural_backend": "neo4j_vector"})
    there = start_worker(backend_config(index_path=tmp_path / "worker_index", neural_backend="neo4j_vector"))
    assert there.neural_backend == "neo4j_vector" and here.dense_search is not None
    _two_processes_stay_consistent(here, there)
    assert len(here.derived.faiss) == 0  # no vector was held in this process
