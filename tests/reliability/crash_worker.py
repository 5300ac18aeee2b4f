"""Worker process for the crash-consistency and multi-process tests (run with ``subprocess``, never imported by
pytest as a test module).

Modes::

    python crash_worker.py run '<spec JSON>'   # one trial in this process
    python crash_worker.py serve               # fork server: imports NeuSym once, then reads commands on stdin
                                               #   {"cmd": "start", "spec": {...}} -> {"pid": N}   (forks a trial)
                                               #   {"cmd": "wait", "pid": N}       -> {"status": S} (waitpid)
                                               #   {"cmd": "exit"}

Why a fork server: importing NeuSym takes seconds on a loaded CI machine (regex tables, numpy, faiss); forking an
already-imported interpreter makes a trial cost what its work costs, so 50+ kill points fit in CI. The fork server
itself never opens a memory, a connection or a thread, so forking it is safe.

A trial opens a :class:`NeuSymMemory`, runs a seeded random mix of operations and appends two lines per operation
to the spec's ``log`` file: ``B <json>`` before it starts and ``A <json>`` after it *returned* (the acknowledgement:
only what was acknowledged must survive). Each line is one ``os.write`` on an ``O_APPEND`` file, so a SIGKILL can
lose the line being written but never tear one.

Kill points (``spec["kill"]``), armed by monkeypatching the engine *in this process only*; the process then SIGKILLs
itself, which is indistinguishable from an external ``kill -9`` at that instant:

* ``none``                 run to the end and close cleanly (the parent may still kill it at a random time)
* ``stmt``                 the ``n``-th graph write statement (optionally only inside operation ``op``), ``when``
                           ``before`` it is sent or ``after`` it returned: mid-supersession, mid-forget, mid-
                           reflection, mid-janitor, mid-batch
* ``create``               right after the ``n``-th graph create returned (graph has it, FAISS/BM25 do not)
* ``save``                 the ``n``-th derived-index save, at ``stage`` ``entry`` / ``faiss`` (lexical file already
                           replaced, FAISS not) / ``replace`` (temp file written, not renamed) / ``fsync``
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any

WORDS = [
    "amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
    "kelp", "lagoon", "maple", "nectar", "olive", "pepper", "quartz", "raven", "saffron", "tundra",
    "umber", "violet", "walnut", "xylem", "yarrow", "zephyr", "anchor", "bramble", "canyon", "dune",
    "estuary", "falcon", "glacier", "heron", "island", "jasper", "kestrel", "lantern", "meadow",
    "nutmeg", "orchid", "pebble", "quill", "ridge", "spruce", "thistle", "upland", "valley", "willow",
    "aspen", "birch", "clover", "daisy", "elm", "fern", "ginger", "hazel", "iris", "jade", "kiwi",
    "lilac", "mango", "nettle", "oak", "peach", "quince", "rose", "sage", "tulip", "ube", "vanilla",
    "wheat", "yam", "zinnia",
]
CITIES = ["Porto", "Lisbon", "Oslo", "Lima", "Quito", "Hanoi", "Accra", "Perth", "Turin", "Nantes", "Bergen", "Cusco"]
TEAS = ["oolong", "sencha", "assam", "rooibos", "darjeeling", "matcha", "chai", "puerh"]
USERS = ["u0", "u1", "u2", "u3", "u4"]


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)  # never reached; SIGKILL is not deliverable late


class Log:
    """Append-only acknowledgement log (one ``os.write`` per line)."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def line(self, kind: str, payload: dict[str, Any]) -> None:
        os.write(self.fd, (kind + " " + json.dumps(payload, ensure_ascii=True) + "\n").encode("ascii"))


class Killer:
    """Arms one kill point (see the module docstring) by wrapping engine methods."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.point = spec.get("point", "none")
        self.n = int(spec.get("n", 1))
        self.when = spec.get("when", "after")
        self.op = spec.get("op")
        self.stage = spec.get("stage", "entry")
        self.count = 0
        self.current_op: str | None = None
        self.armed = False

    def tick(self) -> bool:
        self.count += 1
        return self.count == self.n

    def install_early(self) -> None:
        """Patches that must be in place before the memory opens (saves during recovery are kill points too)."""
        if self.point != "save":
            return
        from neusym.neural import index as index_mod
        from neusym.retrieval import derived as derived_mod

        killer = self
        orig_save = derived_mod.DerivedIndexes.save
        orig_faiss_save = index_mod.FaissIndex.save
        state = {"in_save": False, "hit": False}

        def save(self: Any) -> None:
            if killer.tick():
                state["hit"] = True
                if killer.stage == "entry":
                    die()
            state["in_save"] = True
            try:
                orig_save(self)
            finally:
                state["in_save"] = False
                state["hit"] = False

        def faiss_save(self: Any, *args: Any, **kwargs: Any) -> None:
            if state["hit"] and killer.stage == "faiss":
                die()  # lexical.npz already replaced, vectors.faiss not: the watermarks now differ
            orig_faiss_save(self, *args, **kwargs)

        real_replace, real_fsync = os.replace, os.fsync

        def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            if state["hit"] and killer.stage == "replace":
                die()  # a temp file is complete and fsynced but not renamed into place
            real_replace(src, dst, *args, **kwargs)

        def fsync(fd: int) -> None:
            if state["hit"] and killer.stage == "fsync":
                die()  # mid-write of a temp file
            real_fsync(fd)

        derived_mod.DerivedIndexes.save = save  # type: ignore[method-assign]
        index_mod.FaissIndex.save = faiss_save  # type: ignore[method-assign]
        os.replace = replace  # type: ignore[assignment]
        os.fsync = fsync  # type: ignore[assignment]

    def install(self, mem: Any) -> None:
        killer = self
        if self.point == "stmt":
            orig_run = mem.executor.run

            def run(cypher: str, params: Any = None, *, write: bool = True) -> Any:
                hit = write and killer.armed and (killer.op is None or killer.op == killer.current_op) \
                    and killer.tick()
                if hit and killer.when == "before":
                    die()
                out = orig_run(cypher, params, write=write)
                if hit:
                    die()
                return out

            mem.executor.run = run
        elif self.point == "create":
            orig_create = mem.store.create

            def create(*args: Any, **kwargs: Any) -> Any:
                out = orig_create(*args, **kwargs)
                if killer.armed and (killer.op is None or killer.op == killer.current_op) and killer.tick():
                    die()
                return out

            mem.store.create = create
        self.armed = True


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _content(rng: random.Random, tok: str) -> str:
    kind = rng.randrange(5)
    if kind == 0:
        return f"I like {_words(rng, 2)} {tok}."
    if kind == 1:
        return f"Remember that the {_words(rng, 1)} locker code is {tok}."
    if kind == 2:
        return f"The {_words(rng, 2)} meeting with Dana is about {tok} and {_words(rng, 2)}."
    if kind == 3:
        return f"Note {tok}: {_words(rng, 4)}."
    return f"My {rng.choice(['sister', 'brother', 'cousin'])} enjoys {_words(rng, 2)} {tok}."


def _recs(result: Any) -> list[dict[str, Any]]:
    return [{"id": r.id, "user": r.scope.user_id, "content": r.content, "status": r.status.value,
             "ttl": r.expires_at is not None} for r in result]


def trial(spec: dict[str, Any]) -> None:
    from neusym import NeuSymConfig, NeuSymMemory
    from neusym.embeddings import HashingEmbedder
    from neusym.errors import NeuSymError

    log = Log(spec["log"])
    rng = random.Random(spec["seed"])
    killer = Killer(spec.get("kill") or {})
    killer.install_early()
    cfg = NeuSymConfig(**spec["config"])
    log.line("O", {"pid": os.getpid()})
    mem = NeuSymMemory(config=cfg, embedder=HashingEmbedder(256))
    log.line("R", {"pid": os.getpid()})
    killer.install(mem)
    pool: dict[str, list[str]] = {u: [] for u in USERS}
    for item in spec.get("live", []):
        pool.setdefault(item["user"], []).append(item["id"])
    weights = {"add": 30, "add_fact": 10, "add_batch": 10, "update": 8, "forget_soft": 6, "forget_hard": 6,
               "delete": 5, "reflect": 5, "janitor": 5, "search": 5}
    weights.update(spec.get("weights") or {})
    names = list(weights)
    trial_id = spec["trial"]
    users = spec.get("users") or USERS
    for i in range(int(spec.get("ops", 25))):
        op = rng.choices(names, [weights[n] for n in names])[0]
        user = rng.choice(users)
        tok = f"k{trial_id}q{i}"
        killer.current_op = op
        try:
            if op == "add":
                text = _content(rng, tok)
                ttl = 1.0 if rng.random() < spec.get("ttl_rate", 0.1) else None
                log.line("B", {"op": op, "user": user, "content": text})
                res = mem.add(text, user_id=user, infer=rng.random() < 0.7, ttl=ttl)
                log.line("A", {"op": op, "records": _recs(res)})
                pool[user].extend(r.id for r in res)
            elif op == "add_fact":
                text = rng.choice([f"I live in {rng.choice(CITIES)}.", f"My favourite tea is {rng.choice(TEAS)}."])
                log.line("B", {"op": op, "user": user, "content": text})
                res = mem.add(text, user_id=user)
                log.line("A", {"op": op, "records": _recs(res)})
                pool[user].extend(r.id for r in res)
            elif op == "add_batch":
                items = [{"content": _content(rng, f"{tok}b{j}"), "user_id": rng.choice(users)}
                         for j in range(rng.randint(3, 9))]
                log.line("B", {"op": op, "items": items})
                res = mem.add_batch(items, infer=False)
                log.line("A", {"op": op, "records": _recs(res)})
                for r in res:
                    pool.setdefault(r.scope.user_id or "", []).append(r.id)
            elif op in ("update", "forget_soft", "forget_hard", "delete"):
                if not pool.get(user):
                    continue
                mid = rng.choice(pool[user])
                if op == "update":
                    text = _content(rng, tok + "u")
                    log.line("B", {"op": op, "id": mid, "user": user, "content": text})
                    rec = mem.update(mid, text, user_id=user)
                    log.line("A", {"op": op, "id": mid, "content": rec.content})
                elif op == "delete":
                    log.line("B", {"op": op, "id": mid, "user": user})
                    n = mem.delete(mid, user_id=user)
                    log.line("A", {"op": op, "id": mid, "n": n})
                    pool[user].remove(mid)
                else:
                    hard = op == "forget_hard"
                    log.line("B", {"op": op, "id": mid, "user": user, "hard": hard})
                    rep = mem.forget(mid, user_id=user, hard=hard)
                    log.line("A", {"op": op, "id": mid, "ids": rep.ids, "hard": hard})
                    pool[user].remove(mid)
            elif op == "reflect":
                log.line("B", {"op": op, "user": user})
                ref = mem.reflect(user_id=user, extractive=True, limit=40)
                log.line("A", {"op": op, "user": user, "id": ref.id, "content": ref.memory.content
                               if ref.memory is not None else None, "sources": ref.source_ids})
                if ref.id:
                    pool[user].append(ref.id)
            elif op == "janitor":
                log.line("B", {"op": op})
                rep = mem.run_janitor(all_tenants=True)
                log.line("A", {"op": op, "expired": rep.expired, "archived": rep.archived, "purged": rep.purged})
            elif op == "search":
                q = _words(rng, 3)
                log.line("B", {"op": op, "user": user})
                hits = mem.search(q, user_id=user, k=5)
                bad = [h.id for h in hits if h.memory.scope.user_id != user]
                log.line("A", {"op": op, "n": len(hits), "foreign": bad})
        except NeuSymError as err:  # typed refusals (nothing to reflect, not found) are part of the workload
            log.line("E", {"op": op, "error": type(err).__name__, "message": str(err)[:300]})
    if spec.get("peer"):
        _check_peer(mem, log, spec["peer"])
    killer.current_op = "close"
    mem.close()
    log.line("C", {"pid": os.getpid()})


def _check_peer(mem: Any, log: Log, peer: str) -> None:
    """Two processes on one data directory: once both finished writing, each must find every write the other
    acknowledged (the graph is shared; this process's indexes catch up from it)."""
    log.line("D", {"pid": os.getpid()})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if os.path.exists(peer) and any(line.startswith("D ") for line in Path(peer).read_text().splitlines()):
            break
        time.sleep(0.05)
    else:
        log.line("V", {"error": "peer never finished"})
        return
    records = [r for line in Path(peer).read_text().splitlines() if line.startswith("A ")
               for r in json.loads(line[2:]).get("records", [])]
    missing = []
    for r in records:
        try:
            hits = mem.search(r["content"], user_id=r["user"], k=10, statuses=["active", "pending", "superseded"])
        except Exception as err:  # noqa: BLE001 - reported to the parent
            missing.append(f"{r['id']}: {type(err).__name__}: {err}")
            continue
        if r["id"] not in {h.id for h in hits}:
            missing.append(r["id"])
    log.line("V", {"checked": len(records), "missing": missing})


def _run_child(spec: dict[str, Any]) -> None:
    try:
        trial(spec)
        code = 0
    except BaseException:  # noqa: BLE001 - report everything, the parent decides
        with open(spec["log"] + ".err", "a") as fh:
            fh.write(traceback.format_exc())
        code = 3
    sys.stdout.flush()
    os._exit(code)


def serve() -> None:
    import neusym  # noqa: F401 - the point of the fork server: import once
    import neusym.embeddings  # noqa: F401
    import neusym.facade  # noqa: F401

    out = sys.stdout
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for raw in sys.stdin:
        cmd = json.loads(raw)
        if cmd["cmd"] == "start":
            pid = os.fork()
            if pid == 0:
                os.setpgid(0, 0)
                _run_child(cmd["spec"])
            out.write(json.dumps({"pid": pid}) + "\n")
        elif cmd["cmd"] == "wait":
            _, status = os.waitpid(int(cmd["pid"]), 0)
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            out.write(json.dumps({"status": code}) + "\n")
        elif cmd["cmd"] == "exit":
            return
        out.flush()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve()
    elif sys.argv[1] == "run":
        spec = json.loads(sys.argv[2])
        trial(spec)
    else:
        raise SystemExit(f"unknown mode {sys.argv[1]!r}")
