"""Hard forget leaves no trace: secrets added in several ways, hard-forgotten, then looked for everywhere.

Per case: the ops run (plain add, chat messages, batch, an edit, a supersession, a quarantined tool output, a merged
duplicate, a reflection that quotes the secret, a whole-tenant erasure), then ``forget(..., hard=True)`` /
``delete`` / ``forget_tenant``. Where we look, in order:

1. every read API of the tenant while the memory is open (search with every status, ``valid_at``, ``query``,
   ``get``/``get_many``/``history`` of every id the case ever saw, ``audit_log``, ``review_queue``,
   ``forget_preview``, ``build_context``, ``facts_at``, ``fact_history`` of every predicate the adds produced,
   ``stats``, ``query(entity=secret)``);
2. after ``close()``: every file in the data directory, raw and case-folded, inside zip/gzip members and inside the
   LZF-compressed strings of Redis/FalkorDB RDB files (the AOF base), plus ``neusym export --all-tenants``;
3. after reopening: the read APIs again and a guarded ``cypher`` scan of every node and relationship property
   (``all_tenants=True``), then ``close()`` and the files once more;
4. reopened a last time: searches, ``forget_preview``, ``build_context`` and ``query(entity=...)`` with the secret
   itself as the query. These run last because a query string can land on disk by itself (the graph server keeps
   slow queries with their parameters), which would be a trace the benchmark caused, not the forget.

Steps 1-3 never put a secret into a call: searches use the case's own texts with the secrets blanked out.

A *trace* is the whole secret (case-insensitive) found somewhere; traces are counted per (secret, place), a place
being an API, the export, graph properties or a file (whatever the phase, the decoding or the AOF generation). A *partial* is only half of it (>= 6 characters,
at least one letter) in a file: tokenised or stemmed index entries; reported apart, not counted as traces.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from benchmarks.governance.harness import ALL_STATUSES, Harness, now

_DECODING = re.compile(r"\s\[[^\]]*\]$")
_AOF_GENERATION = re.compile(r"\.aof\.\d+\.")
_COUNT = re.compile(r" \(\d+\)$")


def place(entry: str) -> str:
    """``"s0 closed:file appendonlydir/appendonly.aof.5.base.rdb [raw]"`` -> ``"s0 file appendonlydir/appendonly.aof.N.base.rdb"``:
    the same secret in the same place counts once, whichever phase, decoding or AOF generation found it."""
    secret, _, rest = entry.partition(" ")
    where = rest.split(":", 1)[1] if ":" in rest.split(" ", 1)[0] else rest
    where = _AOF_GENERATION.sub(".aof.N.", _COUNT.sub("", _DECODING.sub("", where)))
    return f"{secret} {where}"


# ----------------------------------------------------------------------------------------------- the case's ops


def _map_batch(keys: list[str], items: list[str], records: list[Any]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {k: set() for k in keys}
    for r in records:
        for k, text in zip(keys, items, strict=True):
            if text[:24].casefold() in r.content.casefold() or r.content.casefold() in text.casefold():
                out[k].add(r.id)
    return out


def prepare(h: Harness, case: dict[str, Any]) -> dict[str, Any]:
    """Run the case's ops and its forget; return what later checks need (ids per key, every id, predicates)."""
    uid = h.uid(case["id"])
    keys: dict[str, set[str]] = {}
    all_ids: set[str] = set()
    predicates: set[str] = set()

    def remember(key: str | None, records: Iterable[Any]) -> None:
        for r in records:
            all_ids.add(r.id)
            predicates.update(t.predicate for t in r.triples)
            if key:
                keys.setdefault(key, set()).add(r.id)

    for op in case["ops"]:
        kind = op["op"]
        if kind == "add":
            remember(op.get("key"), h.mem.add(op["text"], user_id=uid, origin=op.get("origin", "user"),
                                              session_id=op.get("session")))
        elif kind == "add_messages":
            msgs = [{"role": r, "content": t} for r, t in op["messages"]]
            remember(op.get("key"), h.mem.add(msgs, user_id=uid, session_id=op.get("session")))
        elif kind == "add_batch":
            res = list(h.mem.add_batch(op["items"], user_id=uid))
            remember(None, res)
            for k, ids in _map_batch(op["keys"], op["items"], res).items():
                keys.setdefault(k, set()).update(ids)
        elif kind == "update":
            for mid in sorted(keys.get(op["key"], ())):
                h.mem.update(mid, op["content"], user_id=uid)
        elif kind == "search":
            h.mem.search(op["query"], user_id=uid, k=5)
        elif kind == "reflect":
            refl = h.mem.reflection.reflect(user_id=uid, session_id=op.get("session"), extractive=True)
            rec = getattr(refl, "record", None) or getattr(refl, "memory", None)
            if rec is not None and getattr(rec, "id", None):
                all_ids.add(rec.id)
        else:
            raise ValueError(f"unknown op {kind!r}")

    fg = case["forget"]
    mode = fg["mode"]
    target = sorted({mid for k in fg.get("keys", []) for mid in keys.get(k, ())})
    if mode == "ids":
        report: Any = h.mem.forget(target, user_id=uid, hard=True, confirm=True)
    elif mode == "query":
        report = h.mem.forget(query=fg["query"], user_id=uid, hard=True, confirm=True)
    elif mode == "delete":
        report = h.mem.delete(target, user_id=uid)
    elif mode == "tenant":
        report = h.mem.governance.forget_tenant(uid)
    else:
        raise ValueError(f"unknown forget mode {mode!r}")
    all_ids.update(getattr(report, "ids", []) or [])
    return {"uid": uid, "keys": {k: sorted(v) for k, v in keys.items()}, "ids": sorted(all_ids),
            "predicates": sorted(predicates), "forget_report": repr(report)[:300]}


def keep_ok(h: Harness, case: dict[str, Any], state: dict[str, Any]) -> bool:
    """The memories that were not forgotten are still found by their probe (a hard forget is not a wipe)."""
    for k in case.get("keep", []):
        ids = set(state["keys"].get(k["key"], []))
        if not ids or not ids & set(h.search_ids(k["probe"], state["uid"])):
            return False
    return True


# ---------------------------------------------------------------------------------------------------- read APIs


def _masked_queries(case: dict[str, Any]) -> list[str]:
    """The case's own texts with every secret blanked: queries that find a surviving memory by meaning without
    putting the secret into a query (a query string can itself end up on disk, e.g. in the graph server's logs)."""
    texts: list[str] = []
    for op in case["ops"]:
        texts += [op["text"]] if "text" in op else []
        texts += [t for _r, t in op.get("messages", [])] + list(op.get("items", [])) + (
            [op["content"]] if "content" in op else [])
    if case["forget"].get("query"):
        texts.append(case["forget"]["query"])
    out = []
    for t in texts:
        for sec in case["secrets"]:
            t = t.replace(sec, "...")
        out.append(t)
    return list(dict.fromkeys(out))


def api_traces(h: Harness, case: dict[str, Any], state: dict[str, Any], phase: str,
               with_secret_queries: bool = False) -> tuple[list[str], list[str]]:
    """(locations where a secret was found, locations whose call raised) for the tenant's read APIs.

    Without ``with_secret_queries`` no call carries a secret (reads by id, listings, and searches with the case's
    texts masked); with it, the secret itself is the query (run last, after the file scans)."""
    uid, ids, secrets = state["uid"], state["ids"], case["secrets"]
    mem = h.mem
    hits: list[str] = []
    errors: list[str] = []

    def look(where: str, call: Callable[[], Any]) -> None:
        try:
            text = repr(call()).casefold()
        except Exception as exc:  # noqa: BLE001 - a read that raises is reported, not a trace
            if type(exc).__name__ != "RecordNotFoundError":
                errors.append(f"{phase}:{where}: {type(exc).__name__}")
            return
        for i, sec in enumerate(secrets):
            if sec.casefold() in text:
                hits.append(f"s{i} {phase}:{where}")

    queries = list(secrets) if with_secret_queries else _masked_queries(case)
    for q in queries:
        look("search", lambda q=q: mem.search(q, user_id=uid, k=50, touch=False))
        look("search(all statuses)", lambda q=q: mem.search(q, user_id=uid, k=50, touch=False, statuses=ALL_STATUSES))
        look("search(valid_at)", lambda q=q: mem.search(q, user_id=uid, k=50, touch=False, valid_at=now()))
        look("forget_preview", lambda q=q: mem.governance.forget_preview(q, user_id=uid).items)  # not its echo of the query
        look("build_context", lambda q=q: mem.reflection.build_context(q, user_id=uid))
    if with_secret_queries:
        for sec in secrets:
            look("query(entity)", lambda sec=sec: mem.query(user_id=uid, entity=sec, statuses=ALL_STATUSES))
        return sorted(set(hits)), sorted(set(errors))
    look("query(all statuses)", lambda: mem.query(user_id=uid, statuses=ALL_STATUSES, limit=1000))
    for mid in ids:
        look("get", lambda mid=mid: mem.get(mid, user_id=uid))
        look("history", lambda mid=mid: mem.history(mid, user_id=uid))
    if ids:
        look("get_many", lambda: mem.get_many(ids, user_id=uid))
    look("audit_log", lambda: mem.governance.audit_log(user_id=uid, limit=100000))
    look("review_queue", lambda: mem.governance.review_queue(user_id=uid, limit=1000))
    look("facts_at", lambda: mem.governance.facts_at(now(), user_id=uid, limit=1000))
    for p in state["predicates"]:
        look(f"fact_history({p})", lambda p=p: mem.governance.fact_history(p, user_id=uid))
    look("stats", lambda: mem.admin.stats(user_id=uid))
    return sorted(set(hits)), sorted(set(errors))


def cypher_traces(h: Harness, secrets: Iterable[str]) -> dict[str, list[str]]:
    """Every node/relationship property of every tenant, read page by page through the guarded ``cypher``."""
    secrets = list(secrets)
    out: dict[str, list[str]] = {}
    for what, stmt in (
        ("node", "MATCH (n) RETURN properties(n) AS p ORDER BY id(n) SKIP $o LIMIT 1000"),
        ("relationship", "MATCH ()-[r]->() RETURN properties(r) AS p ORDER BY id(r) SKIP $o LIMIT 1000"),
    ):
        found: dict[str, int] = {}
        offset = 0
        while True:
            try:
                rows = h.mem.admin.cypher(stmt, {"o": offset}, all_tenants=True, limit=1000)
            except Exception as exc:  # noqa: BLE001 - a dialect gap is reported as an error location
                for s in secrets:
                    out.setdefault(s, []).append(f"cypher {what} error: {type(exc).__name__}")
                break
            for row in rows:
                text = repr(row.get("p")).casefold()
                for s in secrets:
                    if s.casefold() in text:
                        found[s] = found.get(s, 0) + 1
            if len(rows) < 1000:
                break
            offset += 1000
        for s, n in found.items():
            out.setdefault(s, []).append(f"graph {what} property ({n})")
    return out


# ------------------------------------------------------------------------------------------------------- files


def _rdb_length(data: bytes, i: int) -> tuple[int, int] | None:
    if i >= len(data):
        return None
    b = data[i]
    kind = b >> 6
    if kind == 0:
        return b & 0x3F, i + 1
    if kind == 1 and i + 1 < len(data):
        return ((b & 0x3F) << 8) | data[i + 1], i + 2
    if b == 0x80 and i + 4 < len(data):
        return int.from_bytes(data[i + 1:i + 5], "big"), i + 5
    if b == 0x81 and i + 8 < len(data):
        return int.from_bytes(data[i + 1:i + 9], "big"), i + 9
    return None


def _lzf_decompress(data: bytes, expected: int) -> bytes | None:
    out = bytearray()
    i, n = 0, len(data)
    try:
        while i < n:
            ctrl = data[i]
            i += 1
            if ctrl < 32:
                length = ctrl + 1
                if i + length > n:
                    return None
                out += data[i:i + length]
                i += length
            else:
                length = ctrl >> 5
                ref = len(out) - ((ctrl & 0x1F) << 8) - 1
                if length == 7:
                    length += data[i]
                    i += 1
                ref -= data[i]
                i += 1
                length += 2
                if ref < 0:
                    return None
                for _ in range(length):
                    out.append(out[ref])
                    ref += 1
            if len(out) > expected:
                return None
    except IndexError:
        return None
    return bytes(out) if len(out) == expected else None


def rdb_lzf_strings(data: bytes) -> list[bytes]:
    """Every LZF-compressed string (encoding byte 0xC3, then compressed and plain lengths) that decodes cleanly."""
    out: list[bytes] = []
    start = 0
    while (i := data.find(b"\xc3", start)) >= 0:
        start = i + 1
        clen = _rdb_length(data, i + 1)
        if clen is None:
            continue
        ulen = _rdb_length(data, clen[1])
        if ulen is None or not (0 < clen[0] <= len(data) - ulen[1]) or not (0 < ulen[0] < 64 * 1024 * 1024):
            continue
        blob = _lzf_decompress(data[ulen[1]:ulen[1] + clen[0]], ulen[0])
        if blob is not None:
            out.append(blob)
    return out


def _blobs(path: Path) -> list[tuple[str, bytes]]:
    data = path.read_bytes()
    blobs = [("raw", data)]
    if data[:5] == b"REDIS" or b"REDIS" in data[:64]:
        blobs += [("rdb-lzf", b) for b in rdb_lzf_strings(data)]
    if data[:2] == b"\x1f\x8b":
        with contextlib.suppress(OSError):
            blobs.append(("gzip", gzip.decompress(data)))
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                blobs += [(f"zip:{name}", z.read(name)) for name in z.namelist()]
        except zipfile.BadZipFile:
            pass
    return blobs


def _halves(secret: str) -> list[bytes]:
    s = secret.lower()
    mid = len(s) // 2
    return [p.encode() for p in (s[:mid], s[mid:]) if len(p) >= 6 and any(c.isalpha() for c in p)]


def scan_files(root: Path, secrets: Iterable[str]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(full traces, partial traces) per secret: ``file [how]`` strings relative to ``root``."""
    full: dict[str, list[str]] = {}
    partial: dict[str, list[str]] = {}
    secrets = list(secrets)
    for dirpath, _dirs, files in os.walk(root):
        for name in sorted(files):
            path = Path(dirpath) / name
            try:
                blobs = _blobs(path)
            except OSError:
                continue
            rel = str(path.relative_to(root))
            for how, blob in blobs:
                low = blob.lower()
                for s in secrets:
                    if s.lower().encode() in low:
                        full.setdefault(s, []).append(f"{rel} [{how}]")
                    elif any(half in low for half in _halves(s)):
                        partial.setdefault(s, []).append(f"{rel} [{how}]")
    return ({k: sorted(set(v)) for k, v in full.items()}, {k: sorted(set(v)) for k, v in partial.items()})


def export_traces(data_dir: Path, embedder_spec: str, secrets: Iterable[str]) -> tuple[dict[str, list[str]], str]:
    """Run ``neusym export --all-tenants`` (the documented backup path) on the closed data dir and scan its output."""
    with tempfile.TemporaryDirectory(prefix="neusym-govexport-") as tmp:
        out = Path(tmp) / "export.jsonl"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")])
        proc = subprocess.run(
            [sys.executable, "-m", "neusym", "export", str(out), "--all-tenants", "--data-dir", str(data_dir),
             "--embedder", embedder_spec, "--no-progress"],
            capture_output=True, text=True, env=env, timeout=600, check=False)
        status = f"exit {proc.returncode}" + (f": {proc.stderr.strip()[-300:]}" if proc.returncode else "")
        if not out.exists():
            return {}, status + " (no file)"
        text = out.read_text(encoding="utf-8", errors="replace").casefold()
    return {s: ["export"] for s in secrets if s.casefold() in text}, status
