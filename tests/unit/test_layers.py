"""The layer order is pinned: every ``neusym`` import (module level, inside functions, under TYPE_CHECKING) points
down or sideways within its layer, never up, and the packages form no import cycle.

    adapters, cli  ->  neusym.facade  ->  services (+ backup, importing)  ->  engine
    ->  governance / reflection components  ->  retrieval  ->  symbolic  ->  extraction  ->  embeddings/neural
    ->  record, errors, config, knowledge (WordNet is-a data; imports nothing of ours), language (the one door
        for patterns over text; imports nothing above it)

Pure: reads the source with ``ast``, imports nothing of ours.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LAYERS: list[set[str]] = [
    {"errors", "record", "config", "_version", "private_files", "llm", "ingest", "regex_gate", "prompting",
     "knowledge", "loading", "cache_files", "language"},
    {"embeddings", "neural"},
    {"extraction"},
    {"symbolic"},
    {"retrieval", "reembed"},
    {"governance", "reflection", "visual"},
    {"engine"},
    {"services", "backup", "importing"},
    {"facade"},
    {"neusym", "adapter_support", "demo", "cli", "__main__"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _group(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "neusym"


def _is_module(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


@functools.cache
def imports(package: str = "neusym") -> dict[str, set[str]]:
    """module -> the neusym modules it imports, anywhere in its source."""
    out: dict[str, set[str]] = defaultdict(set)
    for path in sorted((ROOT / package).rglob("*.py")):
        me = _module(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                out[me].update(a.name for a in node.names if a.name.split(".")[0] == "neusym")
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                    and node.module.split(".")[0] == "neusym":
                for alias in node.names:  # ``from neusym import backup`` imports the module neusym.backup
                    sub = f"{node.module}.{alias.name}"
                    out[me].add(sub if _is_module(sub) else node.module)
    return out


def test_every_package_has_a_layer() -> None:
    groups = {_group(m) for m in imports()}
    assert groups - set(RANK) == set(), "place the new package in LAYERS"


def test_imports_point_down() -> None:
    up = sorted(f"{me} imports {dep}" for me, deps in imports().items() for dep in deps
                if RANK[_group(dep)] > RANK[_group(me)])
    assert up == []


def test_no_cycle_between_packages() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for me, deps in imports().items():
        edges[_group(me)].update(_group(d) for d in deps if _group(d) != _group(me))
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            assert state.get(nxt) != 1, "import cycle: " + " -> ".join([*path, node, nxt])
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for g in sorted(edges):
        if g not in state:
            visit(g, [])


def test_services_and_engine_never_reach_up() -> None:
    """The engine knows no service and no facade; services know no facade; nothing below the facade imports it."""
    graph = imports()
    for me, deps in graph.items():
        if _group(me) == "engine":
            assert not {d for d in deps if _group(d) in ("services", "facade", "backup", "importing")}, me
        if RANK[_group(me)] < RANK["facade"]:
            assert "neusym.facade" not in deps, me


def test_layers_walk_the_adapters_too() -> None:
    """The adapters sit on the facade: they never import the engine's or the services' internals."""
    for package in ("langchain_neusym", "llama_index_neusym", "mcp_neusym"):
        for me, deps in imports(package).items():
            reach = {d for d in deps if _group(d) in ("engine", "services")}
            assert reach == set(), f"{me} imports {sorted(reach)}"
