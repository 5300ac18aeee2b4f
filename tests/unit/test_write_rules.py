"""No Cypher statement NeuSym builds both deletes and creates (FalkorDB 4.16 reuses deleted ids within a statement;
see neusym.symbolic.write_rules), and every node deletion removes the node's labels first.

Static: every string the package could send is found three ways, then checked: (1) every module-level string (and
tuple/list of strings) of every ``neusym`` and ``mcp_neusym`` module, after import, so constants built by
concatenation are whole; (2) every string literal and f-string in their source, read with ``ast`` (statements built
inline in a function); (3) the statement builders, called with every variant. A new statement that mixes the two
fails here, and at run time the executors refuse it (:func:`check_write`).
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import neusym
from neusym.symbolic import cypher as q
from neusym.symbolic import transfer
from neusym.symbolic.write_rules import (
    MixedWriteError,
    check_write,
    creates,
    deletes,
    mixes_delete_and_create,
)

ROOT = Path(__file__).resolve().parents[2]
_CYPHER = re.compile(r"\b(?:MATCH|MERGE|CREATE|DELETE|UNWIND|RETURN|FOREACH)\b")


@pytest.mark.parametrize(("stmt", "mixed"), [
    ("MATCH (m) DETACH DELETE m", False),
    ("CREATE (m:Memory) SET m.x = 1", False),
    ("MATCH (m) CREATE (t:Tombstone) WITH m DETACH DELETE m", True),
    ("MATCH (m) FOREACH (x IN [1] | MERGE (a)-[:R]->(b)) WITH m DELETE m", True),
    ("MATCH ()-[r]->() DELETE r WITH 1 AS one MERGE (c:Counter {name: 'seq'})", True),
    ("match (m) create (t) delete m", True),  # keywords in any case
    ("MATCH (m) SET m.note = 'CREATE this, DELETE that' RETURN m", False),  # inside a string literal
    ("MATCH (m) WHERE m.deleted_at > $delete SET m.`created` = 1 RETURN m", False),  # names, not clauses
    ("CREATE INDEX FOR (n:Memory) ON (n.id)", False),
    ("CALL db.idx.fulltext.createNodeIndex('Memory', 'content')", False),
])
def test_the_rule_reads_clauses_not_words(stmt: str, mixed: bool) -> None:
    assert mixes_delete_and_create(stmt) is mixed
    if mixed:
        with pytest.raises(MixedWriteError):
            check_write(stmt)
    else:
        check_write(stmt)


def _modules() -> Iterator[str]:
    """The modules whose source names a clause (the others cannot build a statement); imports nothing."""
    for pkg in ("neusym", "mcp_neusym"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if _CYPHER.search(path.read_text(encoding="utf-8")):
                parts = list(path.relative_to(ROOT).with_suffix("").parts)
                yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_strings() -> Iterator[tuple[str, str]]:
    for name in _modules():
        try:
            mod = importlib.import_module(name)
        except ImportError:  # an optional extra (the mcp SDK) missing here: its source is still scanned below
            continue
        for attr, value in vars(mod).items():
            if attr.startswith("__"):  # the docstring, the file name...
                continue
            items = value if isinstance(value, tuple | list) else (value,)
            for item in items:
                if isinstance(item, str):
                    yield f"{name}.{attr}", item


def _literal(node: ast.AST) -> str | None:
    """A literal's text; an f-string's with every placeholder as ``x``; a ``+`` chain of those joined."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "x"
                       for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        return (left or " ") + (right or " ") if (left or right) else None
    return None


def _source_strings() -> Iterator[tuple[str, str]]:
    for pkg in ("neusym", "mcp_neusym"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docs = {id(n.body[0].value) for n in ast.walk(tree)
                    if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                    and n.body and isinstance(n.body[0], ast.Expr)}
            for node in ast.walk(tree):
                if id(node) in docs:
                    continue
                text = _literal(node)
                if text is not None:
                    yield f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}", text


def _builders() -> Iterator[tuple[str, str]]:
    kinds = ["entities", "memories", "audit", *transfer.LINK_TYPES]
    yield "transfer._commit_statement(all)", transfer._commit_statement(kinds)
    for kind in kinds:
        yield f"transfer._commit_statement({kind})", transfer._commit_statement([kind])
    yield "store.set_props(bump_version)", q.SET_PROPS.replace(
        "SET m += r.props,", "SET m += r.props, m.version = coalesce(m.version, 1) + 1,")


@functools.cache
def _all_statements() -> list[tuple[str, str]]:
    found = [*_module_strings(), *_source_strings(), *_builders()]
    return [(where, text) for where, text in found if _CYPHER.search(text)]


def test_no_statement_the_package_builds_both_deletes_and_creates() -> None:
    statements = _all_statements()
    assert len(statements) > 150  # the scan does see the package's Cypher
    # the statements this rule split are among those scanned
    texts = {t for _, t in statements}
    for stmt in (q.PURGE_MARK, q.PURGE_DELETE, q.UPDATE_UNLINK, q.RELINK, q.APPLY_CHANGES, q.UNLINK_PENDING):
        assert stmt in texts
    mixed = sorted(where for where, text in statements if mixes_delete_and_create(text))
    assert mixed == []


_NODE_DELETE = re.compile(r"(?:DETACH\s+)?DELETE\s+(\w+)", re.I)


def test_every_node_deletion_removes_the_labels_first() -> None:
    """FalkorDB 4.16 can keep a deleted node's label-matrix entry (issue #27 item 1): every statement that deletes
    a node variable bound to a label removes that label earlier in the same statement."""
    offenders = []
    for where, text in _all_statements():
        if not deletes(text):
            continue
        for var in set(_NODE_DELETE.findall(text)):
            labels = re.findall(rf"\(\s*{var}\s*:\s*(\w+)", text)
            if not labels:
                continue  # a relationship variable (or a node matched without a label)
            removed = set(re.findall(rf"REMOVE\s+{var}\s*:\s*(\w+)", text))
            if not set(labels) <= removed:
                offenders.append(f"{where}: DELETE {var} without REMOVE {var}:{','.join(sorted(set(labels)))}")
    assert sorted(set(offenders)) == []


def test_the_split_statements_keep_to_their_side() -> None:
    for stmt in (q.PURGE_MARK, q.RELINK, q.APPLY_CHANGES):
        assert creates(stmt) and not deletes(stmt)
    for stmt in (q.PURGE_DELETE, q.UPDATE_UNLINK, q.UNLINK_PENDING, q.DELETE_ORPHAN_ENTITIES):
        assert deletes(stmt) and not creates(stmt)
    assert neusym.GraphIntegrityError.__mro__[1] is neusym.BackendError
