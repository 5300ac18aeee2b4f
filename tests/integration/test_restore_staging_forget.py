"""What a restore killed mid-way leaves staged (content and vectors under the Restore* labels) never outlives a forget
or an open (issue #27 item 8).

A real kill: a subprocess restores an export and exits (``os._exit``, no cleanup at all) from its progress callback
after the first batch is staged. Then, in this process: ``forget_tenant`` and a hard forget remove the staged copies
of what they forget, every open sweeps a dead restore's staging (a committed run's at once), and so does the janitor.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from neusym import NeuSymConfig, NeuSymMemory
from neusym.embeddings import HashingEmbedder
from neusym.symbolic.staging import RESTORE_RUN, STAGED_LABELS

DIM = 16
ROOT = Path(__file__).resolve().parents[2]


def _open(data_dir: Path) -> NeuSymMemory:
    return NeuSymMemory(config=NeuSymConfig(data_dir=data_dir, graph_name="g", appendfsync="everysec"),
                        embedder=HashingEmbedder(DIM))


def _staged(mem: NeuSymMemory, where: str = "true") -> int:
    return sum(int(mem.admin.cypher(f"MATCH (n:{label}) WHERE {where} RETURN count(n) AS n", all_tenants=True)[0]["n"])
               for label in (*STAGED_LABELS, RESTORE_RUN))


def _killed_restore(tmp_path: Path, user: str, n: int) -> list[str]:
    """Export ``n`` memories of ``user``, forget them, then restore the export in a subprocess killed after its
    first staged batch. Returns the ids of the export."""
    mem = _open(tmp_path)
    try:
        vecs = np.random.default_rng(5).standard_normal((n, DIM)).astype(np.float32)
        ids = [r.id for r in mem.add_batch([f"Ana{i} Silva lives in Porto{i % 7}." for i in range(n)],
                                           vectors=vecs, user_id=user)]
        mem.admin.export(tmp_path / "u.jsonl", user_id=user)
        mem.governance.forget_tenant(user)
    finally:
        mem.close()
    script = textwrap.dedent(f"""
        import os
        from pathlib import Path
        from neusym import NeuSymConfig, NeuSymMemory
        from neusym.embeddings import HashingEmbedder

        mem = NeuSymMemory(config=NeuSymConfig(data_dir=Path({str(tmp_path)!r}), graph_name="g",
                                               appendfsync="everysec"), embedder=HashingEmbedder({DIM}))

        def killed(done, total):
            os._exit(9)  # mid-restore: nothing is cleaned up

        mem.restore(Path({str(tmp_path / "u.jsonl")!r}), user_id={user!r}, progress=killed)
        os._exit(0)
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "NEUSYM_EMBEDDED_IDLE_GRACE": "600"}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 9, proc.stderr[-2000:]
    return ids


@pytest.mark.parametrize("how", ["forget_tenant", "hard_forget"])
def test_a_forget_removes_what_a_killed_restore_staged(tmp_path: Path, how: str) -> None:
    ids = _killed_restore(tmp_path, "u", 450)
    mem = _open(tmp_path)
    try:
        # the dead restore's heartbeat is recent: an open does not take it for dead yet
        assert _staged(mem, "n.user_id = 'u'") >= 200
        assert _staged(mem) > 0 and not mem.get_many(ids, all_tenants=True)
        mem.add("Bob likes tea.", user_id="v", infer=False)
        if how == "forget_tenant":
            mem.governance.forget_tenant("u")
        else:  # the staged copies of exactly these ids, and with them the whole dead restore
            mem.forget(ids[:3], user_id="u", hard=True)
        assert _staged(mem) == 0
        assert mem.admin.cypher("MATCH (n) WHERE n.user_id = 'u' AND NOT n:Audit AND NOT n:Tombstone "
                          "RETURN count(n) AS n", all_tenants=True)[0]["n"] == 0
        assert mem.admin.stats(user_id="v")["memories"] == 1
    finally:
        mem.close()


def test_an_open_sweeps_a_dead_restore_and_a_committed_runs_leftovers(tmp_path: Path) -> None:
    _killed_restore(tmp_path, "u", 450)
    mem = _open(tmp_path)
    try:
        assert _staged(mem) > 0
        # the restore is silent for more than the stale time (an hour): the next open removes it
        mem._engine.executor.run(f"MATCH (r:{RESTORE_RUN}) SET r.heartbeat = $old", {"old": time.time() - 7200})
    finally:
        mem.close()
    mem = _open(tmp_path)
    try:
        assert _staged(mem) == 0
        # a run that committed but whose cleanup did not run: its staged copies go at once
        mem._engine.executor.run(f"CREATE (:{RESTORE_RUN} {{id: 'r1', heartbeat: $now, committed_at: $now}}) "
                         f"CREATE (:{STAGED_LABELS[0]} {{id: 'x', user_id: 'w', content: 'left', restore_id: 'r1'}})",
                         {"now": time.time()})
    finally:
        mem.close()
    mem = _open(tmp_path)
    try:
        assert _staged(mem) == 0
    finally:
        mem.close()


def test_the_janitor_sweeps_a_dead_restore(tmp_path: Path) -> None:
    _killed_restore(tmp_path, "u", 450)
    mem = _open(tmp_path)
    try:
        assert _staged(mem) > 0
        mem.governance.run_janitor(all_tenants=True)
        assert _staged(mem) > 0  # still within its heartbeat: perhaps alive
        mem._engine.executor.run(f"MATCH (r:{RESTORE_RUN}) SET r.heartbeat = $old", {"old": time.time() - 7200})
        mem.governance.run_janitor(all_tenants=True)
        assert _staged(mem) == 0
    finally:
        mem.close()
