"""Concurrency: 4 writer and 4 reader threads (then asyncio tasks) on one memory for a bounded time, and two
processes on one data directory.

Checked: no exception anywhere, no lost write (every acknowledged memory is in the graph with its acknowledged
content, per-tenant counts match), no read ever returns another tenant's memory, and the structural invariants of
``reliability_support.check_consistency`` hold both on the live memory and after a reopen.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
from reliability_support import (
    SEED,
    ForkServer,
    Model,
    check_consistency,
    check_model,
    check_searchable,
    count,
    graph_memories,
    stop_embedded_server,
)
from reliability_support import Expected as Exp

from neusym import NeuSymMemory, RecordNotFoundError

pytestmark = pytest.mark.slow

USERS = ["alice", "bob", "carol", "dave", "erin"]
WORDS = [
    "amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
    "kelp", "lagoon", "maple", "nectar", "olive",
]


class Shared:
    """The acknowledged state, written by the writers under a lock (the model the final check compares with)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.model = Model()
        self.stable: list[tuple[str, str]] = []  # (id, user): never mutated by writers, safe to read any time
        self.errors: list[str] = []
        self.reads = 0
        self.writes = 0
        self.foreign = 0

    def error(self, where: str) -> None:
        with self.lock:
            self.errors.append(f"{where}: {traceback.format_exc()}")


def _writer(mem: NeuSymMemory, shared: Shared, wid: int, deadline: float, seed: int) -> None:
    rng = random.Random(seed)
    mine: list[tuple[str, str]] = []
    i = 0
    while time.monotonic() < deadline:
        i += 1
        user = rng.choice(USERS)
        tok = f"w{wid}n{i}"
        try:
            roll = rng.random()
            if roll < 0.55:
                text = f"I like {rng.choice(WORDS)} {rng.choice(WORDS)} {tok}."
                res = mem.add(text, user_id=user, infer=rng.random() < 0.5)
                with shared.lock:
                    for r in res:
                        shared.model.items[r.id] = Exp(user, r.content, [r.content])
                        (shared.stable if i % 3 == 0 else mine).append((r.id, user))
            elif roll < 0.65:
                items = [{"content": f"Batch note {tok}x{j}: {rng.choice(WORDS)}.", "user_id": rng.choice(USERS)}
                         for j in range(rng.randint(2, 6))]
                res = mem.add_batch(items, infer=False)
                with shared.lock:
                    for r in res:
                        shared.model.items[r.id] = Exp(r.scope.user_id or "", r.content, [r.content])
                        mine.append((r.id, r.scope.user_id or ""))
            elif roll < 0.72:
                res = mem.add(f"I live in {rng.choice(['Porto', 'Lisbon', 'Oslo', 'Lima', 'Quito'])}.", user_id=user)
                with shared.lock:
                    for r in res:
                        shared.model.items[r.id] = Exp(user, r.content, [r.content])
            elif roll < 0.85 and mine:
                mid, owner = rng.choice(mine)
                text = f"Edited note {tok}: {rng.choice(WORDS)}."
                rec = mem.update(mid, text, user_id=owner)
                with shared.lock:
                    e = shared.model.items[mid]
                    e.content = rec.content
                    e.contents.append(rec.content)
            elif roll < 0.93 and mine:
                mid, owner = mine.pop(rng.randrange(len(mine)))
                rep = mem.forget(mid, user_id=owner)
                with shared.lock:
                    if mid in rep.ids:
                        shared.model.items[mid].state = "archived"
            elif mine:
                mid, owner = mine.pop(rng.randrange(len(mine)))
                mem.delete(mid, user_id=owner)
                with shared.lock:
                    shared.model.items[mid].state = "gone"
            with shared.lock:
                shared.writes += 1
        except Exception:  # noqa: BLE001 - collected and asserted empty by the test
            shared.error(f"writer {wid}")


def _reader(mem: NeuSymMemory, shared: Shared, rid: int, deadline: float, seed: int) -> None:
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        user = rng.choice(USERS)
        try:
            roll = rng.random()
            if roll < 0.5:
                hits = mem.search(f"{rng.choice(WORDS)} {rng.choice(WORDS)}", user_id=user, k=rng.choice([1, 5, 20]))
                foreign = [h.id for h in hits if h.memory.scope.user_id != user]
            elif roll < 0.75:
                recs = mem.query(user_id=user, limit=rng.choice([5, 50]))
                foreign = [r.id for r in recs if r.scope.user_id != user]
            else:
                with shared.lock:
                    pick = rng.choice(shared.stable) if shared.stable else None
                foreign = []
                if pick is not None:
                    mid, owner = pick
                    assert mem.get(mid, user_id=owner).id == mid
                    other = rng.choice([u for u in USERS if u != owner])
                    try:
                        mem.get(mid, user_id=other)
                        foreign = [mid]
                    except RecordNotFoundError:
                        pass
            with shared.lock:
                shared.reads += 1
                shared.foreign += len(foreign)
        except Exception:  # noqa: BLE001
            shared.error(f"reader {rid}")


def _verify(mem: NeuSymMemory, shared: Shared) -> list[str]:
    problems = check_consistency(mem) + check_model(mem, shared.model, None)
    graph = graph_memories(mem)
    for user in USERS:
        expected = sum(1 for e in shared.model.items.values() if e.user == user and e.state != "gone")
        actual = sum(1 for r in graph.values() if r["user_id"] == user)
        if expected != actual:
            problems.append(f"tenant {user}: {actual} memories in the graph, {expected} acknowledged")
    sample = random.Random(SEED).sample([i for i, _ in shared.stable], min(len(shared.stable), 25))
    return problems + check_searchable(mem, shared.model, sample)


def _report(capsys: pytest.CaptureFixture[str], name: str, shared: Shared, seconds: float) -> None:
    with capsys.disabled():
        print(f"\n[{name}] {seconds:.0f}s: {shared.writes} writes, {shared.reads} reads, "
              f"{len(shared.model.items)} memories, {len(shared.errors)} errors, {shared.foreign} foreign results")


def test_threads_four_writers_four_readers(make_memory: Callable[..., NeuSymMemory],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    mem = make_memory()
    shared = Shared()
    seconds = count(4, 30)
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=_writer, args=(mem, shared, w, deadline, SEED + w)) for w in range(4)]
    threads += [threading.Thread(target=_reader, args=(mem, shared, r, deadline, SEED + 100 + r)) for r in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 120)
    assert not any(t.is_alive() for t in threads), "a worker thread hung"
    _report(capsys, "concurrency/threads", shared, seconds)
    assert not shared.errors, "\n".join(shared.errors[:5])
    assert shared.foreign == 0
    assert shared.writes > 0 and shared.reads > 0
    problems = _verify(mem, shared)
    assert not problems, "\n".join(problems)
    config = mem.config
    mem.close()
    reopened = make_memory(config=config)
    problems = _verify(reopened, shared)
    assert not problems, "after reopen:\n" + "\n".join(problems)


async def test_asyncio_four_writers_four_readers(make_memory: Callable[..., NeuSymMemory],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    mem = make_memory()
    shared = Shared()
    seconds = count(3, 20)
    deadline = time.monotonic() + seconds

    async def writer(wid: int) -> None:
        rng = random.Random(SEED + wid)
        i = 0
        while time.monotonic() < deadline:
            i += 1
            user = rng.choice(USERS)
            try:
                res = await mem.aadd(f"Async note a{wid}n{i}: {rng.choice(WORDS)} {rng.choice(WORDS)}.", user_id=user,
                                     infer=False)
                for r in res:
                    shared.model.items[r.id] = Exp(user, r.content, [r.content])
                    shared.stable.append((r.id, user))
                if i % 7 == 0 and shared.stable:
                    mid, owner = shared.stable[rng.randrange(len(shared.stable))]
                    rec = await mem.aupdate(mid, f"Async edit a{wid}n{i}: {rng.choice(WORDS)}.", user_id=owner)
                    shared.model.items[mid].content = rec.content
                    shared.model.items[mid].contents.append(rec.content)
                shared.writes += 1
            except Exception:  # noqa: BLE001
                shared.error(f"async writer {wid}")

    async def reader(rid: int) -> None:
        rng = random.Random(SEED + 100 + rid)
        while time.monotonic() < deadline:
            user = rng.choice(USERS)
            try:
                hits, recs = await asyncio.gather(mem.asearch(rng.choice(WORDS), user_id=user, k=10),
                                                  mem.aquery(user_id=user, limit=20))
                shared.foreign += sum(h.memory.scope.user_id != user for h in hits)
                shared.foreign += sum(r.scope.user_id != user for r in recs)
                shared.reads += 2
            except Exception:  # noqa: BLE001
                shared.error(f"async reader {rid}")

    await asyncio.gather(*[writer(w) for w in range(4)], *[reader(r) for r in range(4)])
    _report(capsys, "concurrency/asyncio", shared, seconds)
    assert not shared.errors, "\n".join(shared.errors[:5])
    assert shared.foreign == 0 and shared.writes > 0 and shared.reads > 0
    problems = await asyncio.to_thread(_verify, mem, shared)
    assert not problems, "\n".join(problems)


def _servers_for(data_dir: Path) -> list[int]:
    """redis-server processes serving ``data_dir`` (two would share one AOF: the race this test looks for)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmd and b"redis-server" in cmd[0] and str(data_dir).encode() in b" ".join(cmd):
            pids.append(int(proc.name))
    return pids


def test_two_processes_share_one_data_directory(fork_server: ForkServer, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Two processes open the same (empty) data directory at the same instant: exactly one embedded server starts,
    both write, each finds everything the other acknowledged, and a reopen sees a consistent store."""
    from neusym import NeuSymConfig
    from neusym.embeddings import HashingEmbedder

    data_dir = tmp_path / "shared"
    config = {"data_dir": str(data_dir), "graph_name": "g", "appendfsync": "everysec", "save_every": 3}
    logs = [tmp_path / "p0.log", tmp_path / "p1.log"]
    rounds = count(2, 6)
    model = Model()
    try:
        for rnd in range(rounds):
            for log in logs:
                log.unlink(missing_ok=True)
            specs = [{"trial": 1000 * rnd + i, "seed": SEED + 31 * rnd + i, "config": config, "log": str(logs[i]),
                      "peer": str(logs[1 - i]), "ops": count(20, 60), "ttl_rate": 0.0,
                      "weights": {"add": 50, "add_batch": 15, "add_fact": 10, "search": 10, "update": 0,
                                  "forget_soft": 0, "forget_hard": 0, "delete": 0, "reflect": 0, "janitor": 0},
                      "kill": {"point": "none"}} for i in range(2)]
            pids = [fork_server.start(s) for s in specs]
            servers = set()
            deadline = time.monotonic() + 300
            while any(not (log.exists() and "\nD " in "\n" + log.read_text()) for log in logs) \
                    and time.monotonic() < deadline and not any(Path(f"{log}.err").exists() for log in logs):
                servers.update(_servers_for(data_dir))
                time.sleep(0.02)
            statuses = [fork_server.wait(p) for p in pids]
            errs = [Path(str(log) + ".err") for log in logs]
            assert statuses == [0, 0], "\n".join(e.read_text() for e in errs if e.exists())
            assert len(servers) <= 1, f"round {rnd}: {len(servers)} embedded servers on one data directory"
            for log in logs:
                assert model.apply_log(log) is None
                verdict = [json.loads(line[2:]) for line in log.read_text().splitlines() if line.startswith("V ")]
                assert verdict and verdict[0].get("missing") == [], verdict
        mem = NeuSymMemory(config=NeuSymConfig(**config), embedder=HashingEmbedder(256))
        try:
            problems = check_consistency(mem) + check_model(mem, model, None)
            problems += check_searchable(mem, model, list(model.items))
        finally:
            mem.close()
        assert not problems, "\n".join(problems)
        with capsys.disabled():
            print(f"\n[concurrency/two processes] {rounds} rounds, {model.acked_ops} acknowledged operations, "
                  f"{len(model.items)} memories, one server per data directory")
    finally:
        stop_embedded_server(data_dir)
        for pid in _servers_for(data_dir):
            from reliability_support import kill

            kill(pid)
