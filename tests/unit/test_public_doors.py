"""The memory's public surface is pinned, and the adapters and the CLI go through its public doors only.

Like langchain-neo4j's ``test_imports.py`` pins ``__all__``: an accidental new public name on ``NeuSymMemory`` (a
forward that should live in a namespace) fails here. The adapters (``langchain_neusym``, ``llama_index_neusym``,
``mcp_neusym``) and the CLI are read with ``ast``: they may not import the engine, the services, the graph store or
the vector index, may not touch the storage parts (``._engine``, ``.store``, ``.executor``, ``.derived``,
``.governor``), and may not call a memory by a deprecated name (``mem.stats()`` is ``mem.admin.stats()``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from neusym import AsyncNeuSymMemory, NeuSymMemory
from neusym.facade import DEPRECATED
from neusym.services import Admin, Governance, ReflectionService

ROOT = Path(__file__).resolve().parents[2]

MEMORY_NAMES = [
    "add", "add_batch", "admin", "aio", "atomic", "close", "config", "delete", "forget", "get", "get_many",
    "governance", "history", "query", "reflection", "scope_for", "search", "update",
]
ASYNC_NAMES = [
    "add", "add_batch", "admin", "close", "delete", "forget", "get", "get_many", "governance", "history", "open",
    "query", "reflection", "search", "sync", "update",
]
ADMIN_NAMES = [
    "cypher", "default_scope", "default_user_id", "embedder", "embedder_identity", "export", "extractor", "graph",
    "import_file", "last_reembed", "last_timings", "llm", "on_event", "reembed", "reindex", "reranker", "restore",
    "retrieval", "stats",
]

ADAPTERS = ["langchain_neusym", "llama_index_neusym", "mcp_neusym", "neusym/cli", "neusym/adapter_support.py",
            "neusym/demo.py"]
FORBIDDEN_PACKAGES = ("neusym.engine", "neusym.services", "neusym.symbolic", "neusym.neural")
STORAGE_PARTS = {"_engine", "engine", "store", "executor", "derived", "governor", "dense_search"}
MEMORY_HOLDERS = {"mem", "memory", "_memory"}  # how the adapters name the NeuSymMemory they hold


def public_names(cls: type) -> list[str]:
    """Every public name a class shows: methods and properties, and annotated instance attributes."""
    names = {n for n in dir(cls) if not n.startswith("_")}
    names.update(n for n in getattr(cls, "__annotations__", {}) if not n.startswith("_"))
    return sorted(names)


def test_memory_public_names_are_pinned() -> None:
    assert public_names(NeuSymMemory) == MEMORY_NAMES
    assert len(MEMORY_NAMES) <= 20


def test_async_twin_and_admin_are_pinned() -> None:
    assert public_names(AsyncNeuSymMemory) == ASYNC_NAMES
    assert public_names(Admin) == ADMIN_NAMES


def test_old_names_are_aliases_not_public_names() -> None:
    """The deprecated names resolve through one table, not through methods that would count as public."""
    assert not set(DEPRECATED) & set(dir(NeuSymMemory))
    assert not set(DEPRECATED) & set(MEMORY_NAMES)
    doors = {"governance": Governance, "reflection": ReflectionService, "admin": Admin, "aio": AsyncNeuSymMemory}
    for old, new in DEPRECATED.items():
        head, _, rest = new.partition(".")
        if head == "_engine":
            continue  # the engine's parts are instance attributes: resolved on an open memory in the integration test
        holder: type = doors[head]
        if head == "aio" and "." in rest:  # aio.governance.forget_preview -> the async namespace's method
            door, _, rest = rest.partition(".")
            holder = {"governance": Governance, "reflection": ReflectionService, "admin": Admin}[door]
        assert rest in public_names(holder), f"{old} -> {new}: {holder.__name__} has no {rest}"


def _sources() -> list[Path]:
    out: list[Path] = []
    for place in ADAPTERS:
        path = ROOT / place
        out.extend([path] if path.is_file() else sorted(path.rglob("*.py")))
    return out


def _holder(node: ast.expr) -> bool:
    """``mem``, ``memory``, ``self.memory``, ``state.memory``, ``self._memory``: an expression naming the memory."""
    if isinstance(node, ast.Name):
        return node.id in MEMORY_HOLDERS
    return isinstance(node, ast.Attribute) and node.attr in MEMORY_HOLDERS


def violations(tree: ast.AST, *, user_code: bool = False) -> list[str]:
    """What a module does that an adapter may not: import the engine's packages, reach a storage part, or call the
    memory by a deprecated name. ``user_code`` (the README, the cookbook): imports are free (an own executor is a
    documented use) and only the memory's own storage parts count (LangGraph's ``runtime.store`` is not ours)."""
    bad: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            if user_code:
                continue
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if isinstance(node, ast.ImportFrom) and node.module == "neusym":
                names += [f"neusym.{a.name}" for a in node.names]
            bad += [f"line {node.lineno}: imports {n}" for n in names if n.startswith(FORBIDDEN_PACKAGES)]
        elif isinstance(node, ast.Attribute):
            if node.attr in STORAGE_PARTS and (not user_code or _holder(node.value)):
                bad.append(f"line {node.lineno}: reaches .{node.attr}")
            elif node.attr in DEPRECATED and _holder(node.value):
                bad.append(f"line {node.lineno}: .{node.attr} is deprecated, use .{DEPRECATED[node.attr]}")
    return bad


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_adapters_use_public_doors_only(path: Path) -> None:
    assert violations(ast.parse(path.read_text(encoding="utf-8"))) == []


def _readme_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


@pytest.mark.parametrize("path", sorted((ROOT / "cookbook").glob("*.py")), ids=lambda p: p.name)
def test_the_cookbook_uses_public_doors_only(path: Path) -> None:
    assert violations(ast.parse(path.read_text(encoding="utf-8")), user_code=True) == []


def test_the_readme_uses_public_doors_only() -> None:
    """What users copy: no block calls a deprecated name or reaches a storage part (an own executor may be
    imported: ``NeuSymMemory(executor=Neo4jExecutor(driver=...))`` is the documented way to share a driver)."""
    blocks = _readme_blocks()
    assert len(blocks) >= 8
    assert [(i, v) for i, b in enumerate(blocks) for v in violations(ast.parse(b), user_code=True)] == []


def test_the_scan_refuses_what_the_adapters_did_before() -> None:
    """Not vacuous: the calls the CLI, MCP and LangChain adapters made before the doors are each refused."""
    before = ("from neusym.symbolic.store import RELATIONS\n"
              "links = mem.store.relations_among([rid], RELATIONS, sc)\n"
              "n = state.memory.stats(user_id='u')\n"
              "x = self.memory.aadd('hi')\n"
              "ok = mem.admin.stats(user_id='u')\n")
    assert sorted(violations(ast.parse(before))) == [
        "line 1: imports neusym.symbolic.store", "line 2: reaches .store",
        "line 3: .stats is deprecated, use .admin.stats", "line 4: .aadd is deprecated, use .aio.add"]
