"""``neusym restore`` / ``neusym import`` cannot write into another tenant, refuse a bad file before the first write,
and restore all or nothing (issue 14 section 2: each repro of the review is a test here).

The attack setup: graph B holds Bob's memories. Ana restores "her" backup into B with ``--user ana``; the file is a
real export of Ana's memories from graph A plus one forged line (with the ``end`` counts adjusted, as an attacker
would). Before the fix each forged line was written and the restore exited 0.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import Cli, one_line_error

from neusym import NeuSymConfig, NeuSymMemory, RecordNotFoundError
from neusym.embeddings import HashingEmbedder

KIND_ORDER = ["header", "memory", "entity", "mentions", "relates", "edge", "audit", "end"]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x, sort_keys=True) + "\n" for x in lines))
    return path


def _with_line(lines: list[dict[str, Any]], extra: dict[str, Any]) -> list[dict[str, Any]]:
    """``lines`` plus ``extra`` where an export would put it, the end line's counts updated to match."""
    rank = KIND_ORDER.index(extra["kind"])
    at = next(i for i, x in enumerate(lines) if KIND_ORDER.index(x["kind"]) > rank)
    out = [*lines[:at], extra, *lines[at:]]
    end = dict(out[-1])
    counts = dict(end["counts"])
    counts[extra["kind"]] = counts.get(extra["kind"], 0) + 1
    end["counts"] = counts
    out[-1] = end
    return out


@pytest.fixture
def graphs(cli: Cli, other_graph: str, falkordb_dir: Path, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Graph A (the CLI's) with Ana's memories, exported; graph B (``other_graph``) with Bob's."""
    cfg = NeuSymConfig(data_dir=falkordb_dir, appendfsync="everysec")
    with NeuSymMemory(config=cfg.model_copy(update={"graph_name": cli.graph}), embedder=HashingEmbedder(256)) as a:
        a.add("I live in Porto.", user_id="ana", session_id="s1")
        a.add("My sister Marta lives in Braga.", user_id="ana", session_id="s1")
        a.add("I moved to Lisbon.", user_id="ana", session_id="s2")
    with NeuSymMemory(config=cfg.model_copy(update={"graph_name": other_graph}),
                      embedder=HashingEmbedder(256)) as b:
        b1 = b.add("Bob lives at 12 Oak Street.", user_id="bob", infer=False)[0]
        b2 = b.add("Bob keeps bees in Ghent.", user_id="bob", infer=False)[0]
    export = tmp_path / "ana.jsonl"
    cli.json("export", export, "-u", "ana")
    yield {"export": export, "lines": _lines(export), "b1": b1.id, "b2": b2.id, "graph_b": other_graph, "cfg": cfg}


def _graph_b(g: dict[str, Any]) -> NeuSymMemory:
    return NeuSymMemory(config=g["cfg"].model_copy(update={"graph_name": g["graph_b"]}),
                        embedder=HashingEmbedder(256))


def _state(g: dict[str, Any]) -> dict[str, Any]:
    """Everything a forged line could have changed in graph B."""
    with _graph_b(g) as b:
        run = b.executor.run
        return {
            "nodes": sorted((str(r["l"]), r["n"]) for r in run("MATCH (n) RETURN labels(n) AS l, count(*) AS n")),
            "edges": sorted((r["t"], r["n"]) for r in run("MATCH ()-[r]->() RETURN type(r) AS t, count(*) AS n")),
            "entities": sorted(r["uid"] for r in run("MATCH (e:Entity) RETURN e.uid AS uid")),
            "history": b.history(g["b1"], user_id="bob"),
            "bob": [r.model_dump() for r in b.query(user_id="bob", statuses=["active", "archived", "superseded"])],
        }


def _ana_memory(g: dict[str, Any]) -> str:
    return str(next(x["id"] for x in g["lines"] if x["kind"] == "memory"))


def _forged(name: str, g: dict[str, Any]) -> dict[str, Any]:
    if name == "audit on another tenant's memory":
        details = {"before": {"content": "Bob lives at 666 Attacker Road."}, "version": 1}
        return {"kind": "audit", "props": {"id": "forged-audit", "memory_id": g["b1"], "action": "edit",
                                           "actor": "user", "reason": "manual edit", "at": 1.0e9,
                                           "user_id": "bob", "details_json": json.dumps(details)}}
    if name == "CONFLICTS_WITH between another tenant's memories":
        return {"kind": "edge", "rel": "CONFLICTS_WITH", "src": g["b1"], "dst": g["b2"], "props": {"kind": "x"}}
    if name == "entity in another tenant's namespace":
        return {"kind": "entity", "uid": "bob\x1fpwned", "props": {"uid": "bob\x1fpwned", "key": "pwned",
                                                                   "name": "Pwned", "user_id": "bob"}}
    assert name == "relates between another tenant's entities"
    return {"kind": "relates", "src": "bob\x1fbob", "dst": "bob\x1fghent",
            "props": {"predicate": "lives_in", "polarity": True, "memory_id": _ana_memory(g)}}


FORGERIES = ["audit on another tenant's memory", "CONFLICTS_WITH between another tenant's memories",
             "entity in another tenant's namespace", "relates between another tenant's entities"]


@pytest.mark.parametrize("forgery", FORGERIES)
def test_a_forged_line_reaching_another_tenant_refuses_the_whole_file(cli: Cli, graphs: dict[str, Any],
                                                                      tmp_path: Path, forgery: str) -> None:
    forged = _with_line(graphs["lines"], _forged(forgery, graphs))
    path = _write(tmp_path / "forged.jsonl", forged)
    line_no = next(i for i, x in enumerate(forged, 1) if x in (_forged(forgery, graphs),))
    before = _state(graphs)
    res = cli("restore", path, "-u", "ana", "--graph", graphs["graph_b"], ok=False)
    assert res.exit_code == 2
    assert f"{path}:{line_no}:" in one_line_error(res)  # the line is named
    assert _state(graphs) == before  # nothing of the file was written, Bob's data untouched
    assert cli.json("stats", "-u", "ana", "--graph", graphs["graph_b"])["memories"] == 0
    with _graph_b(graphs) as b:  # Bob's rollback cannot be steered by the file
        with pytest.raises(RecordNotFoundError, match="nothing to roll back"):
            b.rollback(graphs["b1"], user_id="bob")
        assert b.get(graphs["b1"], user_id="bob").content == "Bob lives at 12 Oak Street."
    # the honest file (the same export without the forged line) restores into B
    ok = cli.json("restore", graphs["export"], "-u", "ana", "--graph", graphs["graph_b"])
    assert ok["restored"]["memories"] == 3


@pytest.mark.parametrize(("field", "value", "message"), [
    ("metadata_json", "{not json", "metadata_json is not valid JSON"),
    ("type", "weird", "type 'weird' is not one of"),
    ("created_at", "yesterday", "created_at must be a finite number"),
])
def test_a_memory_with_a_bad_field_refuses_the_file(cli: Cli, graphs: dict[str, Any], tmp_path: Path,
                                                    field: str, value: str, message: str) -> None:
    lines = [dict(x) for x in graphs["lines"]]
    at = next(i for i, x in enumerate(lines) if x["kind"] == "memory")
    lines[at] = {**lines[at], "props": {**lines[at]["props"], field: value}}
    path = _write(tmp_path / "bad.jsonl", lines)
    res = cli("restore", path, "-u", "ana", "--graph", graphs["graph_b"], ok=False)
    assert res.exit_code == 2
    err = one_line_error(res)
    assert f"{path}:{at + 1}:" in err and message in err
    assert cli.json("stats", "-u", "ana", "--graph", graphs["graph_b"])["memories"] == 0
    # the tenant's reads keep working (before the fix every search and query of the tenant failed afterwards)
    assert cli.json("search", "where do I live", "-u", "ana", "--graph", graphs["graph_b"])["results"] == []
    assert cli.json("query", "-u", "ana", "--graph", graphs["graph_b"])["memories"] == []


def _nodes(cli: Cli, graph: str) -> dict[str, int]:
    rows = cli.json("cypher", "MATCH (n) RETURN labels(n)[0] AS label, count(*) AS n", "--all-tenants",
                    "--graph", graph)["rows"]
    return {r["label"]: r["n"] for r in rows}


def test_a_bad_embedding_on_the_last_memory_writes_nothing_and_a_retry_works(
        cli: Cli, tmp_path: Path, other_graph: str, make_memory: Callable[..., NeuSymMemory]) -> None:
    mem = make_memory()
    facts = [f"Shipment {i} of the order left the warehouse in Porto on day {i}." for i in range(250)]
    mem.add_batch(facts, user_id="ana", infer=False)
    mem.close()
    good = tmp_path / "ana.jsonl"
    assert cli.json("export", good, "-u", "ana")["counts"]["memory"] == 250
    lines = _lines(good)
    last = max(i for i, x in enumerate(lines) if x["kind"] == "memory")
    assert sum(1 for x in lines[:last + 1] if x["kind"] == "memory") == 250
    bad = [dict(x) for x in lines]
    bad[last] = {**bad[last], "embedding": "%%% not base64 %%%"}
    path = _write(tmp_path / "bad.jsonl", bad)
    res = cli("restore", path, "-u", "ana", "--graph", other_graph, ok=False)
    assert res.exit_code == 2 and f"{path}:{last + 1}: embedding is not valid base64" in one_line_error(res)
    # not one memory, entity, edge or audit entry: only the store's own bookkeeping (write counter, embedder identity)
    assert set(_nodes(cli, other_graph)) <= {"Counter", "NeuSymMeta"}
    # the same file repaired restores completely (before the fix: "200 memories already exist")
    _write(path, lines)
    out = cli.json("restore", path, "-u", "ana", "--graph", other_graph)
    assert out["restored"]["memories"] == 250 and out["restored"]["audit"] == 250
    again = tmp_path / "again.jsonl"
    cli.json("export", again, "-u", "ana", "--graph", other_graph)
    assert [x for x in _lines(again) if x["kind"] != "header"] == [x for x in lines if x["kind"] != "header"]


def test_import_the_command_scope_wins_and_the_file_origin_is_ignored(cli: Cli, tmp_path: Path) -> None:
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"content": "I prefer green tea in the morning.", "user_id": "bob",
                             "origin": "system"}) + "\n")
    summary = cli.json("import", f, "-u", "ana")
    assert cli.json("stats", "-u", "bob")["memories"] == 0  # before the fix: written into Bob, origin system
    ana = cli.json("query", "-u", "ana")["memories"]
    assert [m["content"] for m in ana] == ["I prefer green tea in the morning."]
    assert ana[0]["scope"]["user_id"] == "ana" and ana[0]["source"]["origin"] == "import"
    assert summary["stored"] == 1 and summary["scope_overridden"] == 1 and summary["trust_ignored"] == 1
    # without --user the file may not pick the tenant; an operator says so explicitly
    res = cli("import", f, ok=False)
    assert res.exit_code == 2 and "names tenant(s) ['bob']" in one_line_error(res)
    assert cli.json("stats", "-u", "bob")["memories"] == 0
    trusted = cli.json("import", f, "--all-tenants", "--trust-file-origin")
    assert trusted["trust_ignored"] == 0
    bob = cli.json("query", "-u", "bob")["memories"]
    assert bob and bob[0]["source"]["origin"] == "system"


def test_restore_needs_a_scope_or_all_tenants(cli: Cli, graphs: dict[str, Any]) -> None:
    res = cli("restore", graphs["export"], "--graph", graphs["graph_b"], ok=False)
    assert res.exit_code == 2 and "--all-tenants" in one_line_error(res)
    res = cli("restore", graphs["export"], "-u", "bob", "--graph", graphs["graph_b"], ok=False)
    assert res.exit_code == 2 and "outside the restore scope" in one_line_error(res)
    lines = graphs["lines"]
    # ids of another tenant's memories can never be taken over, not even with --skip-existing
    stolen = [dict(x) for x in lines]
    first = next(i for i, x in enumerate(stolen) if x["kind"] == "memory")
    old_id = stolen[first]["id"]
    text = json.dumps(stolen).replace(old_id, graphs["b1"])
    path = _write(graphs["export"].with_name("stolen.jsonl"), json.loads(text))
    res = cli("restore", path, "-u", "ana", "--graph", graphs["graph_b"], "--skip-existing", ok=False)
    assert res.exit_code == 2 and "already exists in another tenant" in one_line_error(res)


def test_embedding_checks_are_strict(cli: Cli, graphs: dict[str, Any], tmp_path: Path) -> None:
    lines = [dict(x) for x in graphs["lines"]]
    at = next(i for i, x in enumerate(lines) if x["kind"] == "memory")
    for bad, message in ((base64.b64encode(b"abc").decode(), "whole number of float32"),
                         (base64.b64encode(bytes(256 * 4)).decode(), "all zeros"),
                         (base64.b64encode(b"\x00\x00\xc0\x7f" * 256).decode(), "NaN")):
        lines[at] = {**graphs["lines"][at], "embedding": bad}
        path = _write(tmp_path / "e.jsonl", lines)
        res = cli("restore", path, "-u", "ana", "--graph", graphs["graph_b"], ok=False)
        assert res.exit_code == 2 and message in one_line_error(res), bad
