"""Shared machinery of the reliability suite: counts, the fork-server client, the acknowledgement model and the
invariant checks every crash / concurrency / fault test runs after reopening a memory."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neusym import NeuSymMemory
from neusym.retrieval.derived import _INDEXED_STATUSES

FULL = os.environ.get("NEUSYM_FULL", "").strip().lower() not in ("", "0", "false", "no")
"""``NEUSYM_FULL=1 pytest tests/reliability -m slow`` runs the full counts; CI runs the reduced ones."""

SEED = int(os.environ.get("NEUSYM_RELIABILITY_SEED", "0"))
"""Offset added to every random seed of the suite (default 0: CI is reproducible; change it to explore)."""

WORKER = Path(__file__).with_name("crash_worker.py")
ALL_ROWS = 10**7


def count(ci: int, full: int) -> int:
    return full if FULL else ci


def worker_env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for var in ("NEO4J_URI", "NEO4J_URL", "NEUSYM_BACKEND", "NEUSYM_DATA_DIR", "NEUSYM_GRAPH", "FALKORDB_HOST"):
        env.pop(var, None)  # the spec says which backend to use, never the environment
    return env


# ---------------------------------------------------------------------------------------------- fork server
class ForkServer:
    """Client of ``crash_worker.py serve``: one import of NeuSym, then a cheap ``fork`` per trial."""

    def __init__(self, workdir: Path) -> None:
        self.stderr = open(workdir / "forkserver.stderr", "ab")  # noqa: SIM115 - lives as long as the server
        self.proc = subprocess.Popen([sys.executable, str(WORKER), "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, env=worker_env(), text=True,
                                     bufsize=1)
        assert self._read(120.0).get("ready"), "fork server did not start"

    def _read(self, timeout: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError(f"fork server silent for {timeout}s")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"fork server exited (code {self.proc.poll()})")
        return dict(json.loads(line))

    def _send(self, cmd: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()

    def start(self, spec: dict[str, Any]) -> int:
        self._send({"cmd": "start", "spec": spec})
        return int(self._read(60.0)["pid"])

    def wait(self, pid: int, timeout: float = 300.0) -> int:
        """Exit status of a trial: negative = killed by that signal, 3 = raised (see ``<log>.err``)."""
        self._send({"cmd": "wait", "pid": pid})
        try:
            return int(self._read(timeout)["status"])
        except TimeoutError:
            kill(pid)
            return int(self._read(30.0)["status"])

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self._send({"cmd": "exit"})
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.stderr.close()


def kill(pid: int, sig: int = signal.SIGKILL) -> bool:
    try:
        os.kill(pid, sig)
        return True
    except ProcessLookupError:
        return False


def alive(pid: int) -> bool:
    """True for a running process; a zombie (killed, not yet reaped by its parent) counts as gone."""
    from neusym.symbolic.executors.watchdog import pid_alive

    return pid_alive(pid)


def wait_for_line(path: Path, prefix: str, timeout: float = 60.0) -> bool:
    """Poll a worker log until a line starting with ``prefix`` appears (e.g. ``R`` = memory open)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and any(line.startswith(prefix) for line in path.read_text().splitlines()):
            return True
        time.sleep(0.01)
    return False


def embedded_server_pid(data_dir: Path) -> int | None:
    try:
        pid = json.loads((data_dir / "falkordb.lock").read_text()).get("pid")
    except (OSError, ValueError):
        return None
    return pid if isinstance(pid, int) else None


def stop_embedded_server(data_dir: Path) -> None:
    """Stop the embedded server a test's workers started in ``data_dir`` (the lock file names its pid)."""
    pid = embedded_server_pid(data_dir)
    if pid is None:
        return
    if kill(pid, signal.SIGTERM):
        for _ in range(500):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.01)
        else:
            kill(pid)


# ---------------------------------------------------------------------------------------------- the model
@dataclass
class Expected:
    user: str
    content: str
    contents: list[str]
    state: str = "live"  # live | archived | gone
    reflection: bool = False


@dataclass
class Model:
    """What the acknowledgements promise. Only acknowledged operations constrain the store; the one operation in
    flight when the process died may or may not have happened (its ids are re-synced from the graph)."""

    items: dict[str, Expected] = field(default_factory=dict)
    acked_ops: int = 0

    def live(self) -> list[dict[str, str]]:
        return [{"id": i, "user": e.user} for i, e in self.items.items() if e.state == "live"]

    def apply_log(self, path: Path) -> dict[str, Any] | None:
        """Apply every acknowledged operation of one trial; return the operation in flight (if any)."""
        begun: dict[str, Any] | None = None
        if not path.exists():
            return None
        for line in path.read_text().splitlines():
            kind, _, payload = line.partition(" ")
            if kind == "B":
                begun = json.loads(payload)
            elif kind == "A":
                self._ack(json.loads(payload))
                self.acked_ops += 1
                begun = None
            elif kind == "E":
                begun = None
        return begun

    def _ack(self, a: dict[str, Any]) -> None:
        op = a["op"]
        if op in ("add", "add_fact", "add_batch"):
            for r in a["records"]:
                self.items[r["id"]] = Expected(r["user"], r["content"], [r["content"]])
        elif op == "update":
            e = self.items.get(a["id"])
            if e is not None:
                e.content = a["content"]
                e.contents.append(a["content"])
        elif op == "delete":
            if a["id"] in self.items:
                self.items[a["id"]].state = "gone"
        elif op in ("forget_soft", "forget_hard"):
            for i in a["ids"]:
                if i in self.items:
                    self.items[i].state = "gone" if a["hard"] else "archived"
        elif op == "reflect" and a.get("id"):
            e = self.items.get(a["id"])
            if e is None:
                self.items[a["id"]] = Expected(a["user"], a["content"], [a["content"]], reflection=True)
        elif op == "janitor":
            for i in a["expired"] + a["archived"]:
                if i in self.items and self.items[i].state == "live":
                    self.items[i].state = "archived"
            for i in a["purged"]:
                if i in self.items:
                    self.items[i].state = "gone"


# ---------------------------------------------------------------------------------------------- invariants
def graph_memories(mem: NeuSymMemory) -> dict[str, dict[str, Any]]:
    rows = mem.cypher("MATCH (m:Memory) RETURN m.id AS id, m.nid AS nid, m.seq AS seq, m.status AS status, "
                      "m.user_id AS user_id, m.agent_id AS agent_id, m.session_id AS session_id, "
                      "m.content AS content, m.type AS type, m.expires_at AS expires_at", all_tenants=True, limit=ALL_ROWS)
    return {r["id"]: r for r in rows}


def check_consistency(mem: NeuSymMemory) -> list[str]:
    """Structural invariants between the graph (truth) and the derived indexes, after a catch-up.

    * the watermark equals the graph's write sequence;
    * no orphans: the FAISS ids, the catalog's live nids and the graph's indexed memories are the same set;
    * the catalog agrees with the graph on every memory's tenant and status (no stale scope = no leak);
    * ids and nids are unique, every seq is within the counter, no deleted memory came back (tombstones);
    * no half-applied supersession: no SUPERSEDES edge points at a current (active/pending) memory, and no tenant
      holds two current values of a functional fact;
    * no half-applied edit: every memory's fact keys match its RELATES / MENTIONS edges;
    * every reflection is linked to its sources (DERIVED_FROM).
    """
    problems: list[str] = []
    mem.derived.catch_up(mem.store)
    counter = mem.store.counter()
    if mem.derived.watermark != counter:
        problems.append(f"watermark {mem.derived.watermark} != graph counter {counter}")
    graph = graph_memories(mem)
    nids = [r["nid"] for r in graph.values()]
    if len(set(nids)) != len(nids) or any(n is None for n in nids):
        problems.append("duplicate or missing nids in the graph")
    if any(r["seq"] is None or r["seq"] > counter for r in graph.values()):
        problems.append("a memory's seq is beyond the counter")
    indexed = {int(r["nid"]) for r in graph.values() if r["status"] in _INDEXED_STATUSES}
    faiss_ids = {int(i) for i in mem.derived.faiss.ids()}
    catalog = set(mem.derived.catalog.pos_of)
    if faiss_ids - indexed:
        problems.append(f"FAISS ids without a graph memory: {sorted(faiss_ids - indexed)[:10]}")
    if indexed - faiss_ids:
        problems.append(f"graph memories missing from FAISS: {sorted(indexed - faiss_ids)[:10]}")
    if catalog != indexed:
        problems.append(f"catalog/graph mismatch: extra {sorted(catalog - indexed)[:10]}, "
                        f"missing {sorted(indexed - catalog)[:10]}")
    cat = mem.derived.catalog
    codes = {v: k for k, v in cat.ids.codes.items()}
    status_codes = {v: k for k, v in cat.statuses.codes.items()}
    by_nid = {int(r["nid"]): r for r in graph.values()}
    for nid, pos in cat.pos_of.items():
        r = by_nid.get(nid)
        if r is None:
            continue
        if codes.get(int(cat.user[pos])) != r["user_id"] or status_codes.get(int(cat.status[pos])) != r["status"]:
            problems.append(f"catalog is stale for memory {r['id']}: "
                            f"{codes.get(int(cat.user[pos]))}/{status_codes.get(int(cat.status[pos]))} vs "
                            f"{r['user_id']}/{r['status']}")
    tomb = {int(r["nid"]) for r in mem.cypher("MATCH (t:Tombstone) RETURN t.nid AS nid", all_tenants=True,
                                              limit=ALL_ROWS)}
    if tomb & set(by_nid):
        problems.append(f"deleted memories came back: {sorted(tomb & set(by_nid))[:10]}")
    problems += check_supersession(mem, graph)
    problems += check_fact_links(mem)
    refl = mem.cypher("MATCH (m:Memory {type: 'reflection'}) WHERE NOT (m)-[:DERIVED_FROM]->(:Memory) "
                      "RETURN m.id AS id", all_tenants=True, limit=ALL_ROWS)
    if refl:
        problems.append(f"reflections without sources (half-applied reflection): {[r['id'] for r in refl]}")
    return problems


def check_fact_links(mem: NeuSymMemory) -> list[str]:
    """No half-applied edit: a memory's denormalised fact keys (``predicates``, ``entity_uids``) match its RELATES
    and MENTIONS edges. (A stale RELATES edge makes a later fact supersede the wrong memory.)"""
    problems = []
    keys = {r["id"]: r for r in mem.cypher("MATCH (m:Memory) RETURN m.id AS id, m.predicates AS p, "
                                           "m.entity_uids AS e", all_tenants=True, limit=ALL_ROWS)}
    rel: dict[str, set[str]] = {}
    for r in mem.cypher("MATCH ()-[x:RELATES]->() RETURN x.memory_id AS id, x.predicate AS p", all_tenants=True,
                        limit=ALL_ROWS):
        rel.setdefault(r["id"], set()).add(r["p"])
    men: dict[str, set[str]] = {}
    for r in mem.cypher("MATCH (m:Memory)-[:MENTIONS]->(e:Entity) RETURN m.id AS id, e.uid AS u", all_tenants=True,
                        limit=ALL_ROWS):
        men.setdefault(r["id"], set()).add(r["u"])
    for mid, r in keys.items():
        if set(r["p"] or []) != rel.get(mid, set()):
            problems.append(f"half-applied edit of {mid}: predicates {r['p']} vs facts {sorted(rel.get(mid, []))}")
        if set(r["e"] or []) != men.get(mid, set()):
            problems.append(f"half-applied edit of {mid}: entity keys and MENTIONS differ")
    if set(rel) - set(keys):
        problems.append(f"facts of deleted memories: {sorted(set(rel) - set(keys))[:5]}")
    return problems


def check_supersession(mem: NeuSymMemory, graph: dict[str, dict[str, Any]]) -> list[str]:
    problems = []
    edges = mem.cypher("MATCH (a:Memory)-[:SUPERSEDES]->(b:Memory) RETURN a.id AS a, b.id AS b, b.status AS s",
                       all_tenants=True, limit=ALL_ROWS)
    for e in edges:
        if e["s"] in ("active", "pending"):
            problems.append(f"half-applied supersession: {e['a']} supersedes {e['b']} which is still {e['s']}")
    current = mem.cypher(
        "MATCH (a:Entity)-[r:RELATES]->(b:Entity) WHERE r.predicate IN ['lives_in', 'favourite_tea'] "
        "AND coalesce(r.polarity, true) MATCH (m:Memory {id: r.memory_id}) WHERE m.status = 'active' "
        "WITH m.user_id AS u, a.uid AS s, r.predicate AS p, collect(DISTINCT b.key) AS values, "
        "collect(DISTINCT m.content) AS texts WHERE size(values) > 1 RETURN u, s, p, values, texts",
        all_tenants=True, limit=ALL_ROWS)
    for row in current:  # one subject, one functional predicate, two different current values
        problems.append(f"half-applied supersession: tenant {row['u']} has {len(row['values'])} current "
                        f"{row['p']} values for {row['s']!r}: {row['texts']}")
    return problems


def check_model(mem: NeuSymMemory, model: Model, inflight: dict[str, Any] | None) -> list[str]:
    """Every acknowledged write is present with its acknowledged content and status; acknowledged deletes stay
    deleted. Ids touched by the operation in flight are re-synced from the graph instead of asserted."""
    problems: list[str] = []
    graph = graph_memories(mem)
    uncertain: set[str] = set()
    if inflight is not None:
        if inflight.get("id"):
            uncertain.add(inflight["id"])
        if inflight["op"] == "janitor":
            uncertain.update(model.items)  # a janitor pass may archive or purge any memory
    for mid, e in model.items.items():
        r = graph.get(mid)
        if mid in uncertain:
            if r is None:
                if e.state != "gone" and inflight and inflight["op"] not in ("forget_hard", "delete", "janitor"):
                    problems.append(f"acknowledged memory {mid} vanished during an unrelated {inflight['op']}")
                e.state = "gone"
            else:
                if r["content"] in e.contents:
                    e.content = r["content"]
                elif inflight and inflight.get("content") == r["content"]:
                    e.content = r["content"]
                    e.contents.append(r["content"])
                else:
                    problems.append(f"memory {mid} holds unacknowledged content {r['content']!r}")
                if r["status"] == "archived" and e.state == "live":
                    e.state = "archived"
            continue
        if e.state == "gone":
            if r is not None:
                problems.append(f"acknowledged delete of {mid} did not reach the graph (status {r['status']})")
            continue
        if r is None:
            problems.append(f"acknowledged memory {mid} ({e.content[:40]!r}) is lost")
            continue
        if r["content"] != e.content:
            problems.append(f"memory {mid} content {r['content'][:60]!r} != acknowledged {e.content[:60]!r}")
        if r["user_id"] != e.user:
            problems.append(f"memory {mid} moved from tenant {e.user} to {r['user_id']}")
        if e.state == "archived" and r["status"] != "archived":
            problems.append(f"acknowledged forget of {mid} not applied (status {r['status']})")
        if e.state == "live" and r["status"] == "archived":
            problems.append(f"memory {mid} was archived without an acknowledged forget or janitor pass")
    return problems


def check_searchable(mem: NeuSymMemory, model: Model, ids: Iterable[str]) -> list[str]:
    """Each memory is found by a search for its own text in its own tenant, with its current status."""
    problems = []
    graph = graph_memories(mem)
    for mid in ids:
        e, r = model.items[mid], graph.get(mid)
        if r is None or r["status"] not in _INDEXED_STATUSES or (r["expires_at"] or 1e18) <= time.time():
            continue  # expired memories are out of every search by design (the janitor archives them)
        hits = mem.search(r["content"], user_id=e.user, k=10, statuses=[r["status"]], touch=False)
        if mid not in {h.id for h in hits} and (r["expires_at"] or 1e18) <= time.time():
            continue  # it expired during the search (the workers add 1-second TTLs): excluded by design
        if mid not in {h.id for h in hits}:
            problems.append(f"acknowledged memory {mid} ({r['status']}) is not searchable by its own text")
    return problems


def check_purged(mem: NeuSymMemory, mid: str, user: str, contents: Iterable[str]) -> list[str]:
    """A completed hard forget leaves no node, no content in the audit trail and no orphaned entity behind."""
    problems = []
    if mem.cypher("MATCH (m:Memory {id: $id}) RETURN m.id AS id", {"id": mid}, all_tenants=True):
        problems.append(f"hard-forgotten {mid} is still in the graph")
    rows = mem.cypher("MATCH (a:Audit {memory_id: $id}) RETURN a.reason AS reason, a.details_json AS d",
                      {"id": mid}, all_tenants=True, limit=ALL_ROWS)
    for text in contents:
        if any(text in (r["reason"] or "") or text in (r["d"] or "") or json.dumps(text)[1:-1] in (r["d"] or "")
               for r in rows):
            problems.append(f"hard-forgotten {mid}: the audit trail still quotes {text[:40]!r}")
    orphans = mem.cypher("MATCH (e:Entity {user_id: $u}) WHERE NOT (e)<-[:MENTIONS]-(:Memory) "
                         "RETURN e.name AS name", {"u": user}, all_tenants=True, limit=ALL_ROWS)
    if orphans:
        problems.append(f"hard forget left orphaned entities in tenant {user}: {[r['name'] for r in orphans][:10]}")
    return problems
