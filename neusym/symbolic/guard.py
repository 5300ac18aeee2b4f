"""Guarded read-only Cypher: what :meth:`NeuSymMemory.cypher` / :meth:`SymbolicStore.read_only` let through.

Raw Cypher from an operator (or from an agent given a "query the graph" tool) must not write, read files, call
arbitrary procedures or run forever. Regexes cannot promise that (a backtick identifier holding a quote made the
old guard skip a whole ``LOAD CSV`` clause), so there are four layers, each sufficient for what it targets:

1. **This module's lexical check**, on a real tokenizer (string escapes, backtick identifiers, comments): refuses
   write and admin clauses, ``LOAD CSV``, ``USE``, ``EXPLAIN``/``PROFILE``, several statements, and every ``CALL``
   of a procedure not in :data:`ALLOWED_PROCEDURES`. It gives the clear error messages.
2. **The database's own parse**: the executor EXPLAINs the statement first. Neo4j's plan must be read-only (query
   type ``r``), hold no ``LoadCSV`` and name only allowlisted procedures. FalkorDB's plan must hold no
   ``Load CSV`` and no more procedure calls than layer 1 approved (its plan does not name them). Whatever the
   tokenizer may have misread, the plan is what would run.
3. **Read-only execution enforced by the database**: FalkorDB ``GRAPH.RO_QUERY``; Neo4j ``READ`` access mode in a
   read transaction. A write that got past 1 and 2 fails here.
4. **A timeout and a row cap**: FalkorDB's query ``TIMEOUT``, Neo4j's transaction timeout (both enforced by the
   server), and at most ``limit`` rows returned. The cap is pushed into the statement (:func:`cap_rows`) so the
   database stops after ``limit`` rows: nothing beyond them is produced, sent or decoded (1,000,000 rows with
   ``limit=10`` used to be fetched and decoded whole, +200-340 MB, before the cap was applied).

The embedded server's ``IMPORT_FOLDER`` also points at a directory that does not exist, so even a ``LOAD CSV``
reaching it could open no file.

Allowed: ``MATCH``/``OPTIONAL MATCH``/``WITH``/``UNWIND``/``WHERE``/``RETURN``/``ORDER BY``/``SKIP``/``LIMIT``/
``UNION``, read subqueries (``CALL { ... }``), functions, parameters, ``SHOW INDEXES``/``SHOW CONSTRAINTS`` (Neo4j)
and the procedures in :data:`ALLOWED_PROCEDURES`. A keyword used as a bare variable name (``MATCH (set)``) is refused
too; backtick it (``(`set`)``).
"""

from __future__ import annotations

from dataclasses import dataclass

from neusym.errors import UnsafeQueryError

__all__ = ["ALLOWED_PROCEDURES", "CheckedQuery", "cap_rows", "check_read_only", "procedure_name"]

_ALLOWED = (
    # schema introspection
    "db.labels", "db.relationshipTypes", "db.propertyKeys", "db.indexes", "db.constraints", "db.meta.stats",
    "db.schema.visualization", "db.schema.nodeTypeProperties", "db.schema.relTypeProperties",
    # index lookups (FalkorDB db.idx.*, Neo4j db.index.*)
    "db.idx.fulltext.queryNodes", "db.idx.fulltext.queryRelationships",
    "db.idx.vector.queryNodes", "db.idx.vector.queryRelationships",
    "db.index.fulltext.queryNodes", "db.index.fulltext.queryRelationships",
    "db.index.vector.queryNodes", "db.index.vector.queryRelationships",
)
ALLOWED_PROCEDURES = frozenset(name.lower() for name in _ALLOWED)
"""Procedures a guarded statement may CALL (compared case-insensitively). Everything else (``dbms.*``, plugin procedures,
``algo.*``, index creation...) is refused."""

_REFUSED = frozenset({
    # writes
    "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "FOREACH", "INSERT",
    # file and network access, other databases, statement prefixes the executor adds itself
    "LOAD", "USE", "EXPLAIN", "PROFILE", "CYPHER", "PERIODIC", "TRANSACTIONS",
    # administration
    "GRANT", "DENY", "REVOKE", "ALTER", "RENAME", "TERMINATE", "START", "STOP", "ENABLE", "DEALLOCATE",
    "REALLOCATE",
})
_SHOWABLE = frozenset({"INDEX", "INDEXES", "CONSTRAINT", "CONSTRAINTS"})
# procedures whose output is bounded by the schema (labels, keys, indexes): a standalone CALL of one needs no cap
_BOUNDED = frozenset(name for name in ALLOWED_PROCEDURES if not name.startswith(("db.idx.", "db.index.")))


@dataclass(frozen=True)
class CheckedQuery:
    """A statement that passed the lexical check, with the procedures it calls (lower-cased, in order)."""

    text: str
    procedures: tuple[str, ...]


@dataclass(frozen=True)
class _Token:
    kind: str  # word | quoted (backtick identifier) | string | number | param | punct
    value: str
    at: int


def procedure_name(text: str) -> str:
    """The procedure name of a plan's ``ProcedureCall`` details (``db.labels() :: (label :: STRING)``)."""
    return text.split("(", 1)[0].strip().replace("`", "").lower()


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise UnsafeQueryError("unterminated /* comment */ in the Cypher statement")
            i = end + 2
        elif c in "'\"":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise UnsafeQueryError("unterminated string literal in the Cypher statement")
            out.append(_Token("string", text[i + 1 : j], i))
            i = j + 1
        elif c == "`":
            j = i + 1
            while True:
                end = text.find("`", j)
                if end < 0:
                    raise UnsafeQueryError("unterminated `identifier` in the Cypher statement")
                if text.startswith("``", end):  # a doubled backtick is an escaped one
                    j = end + 2
                    continue
                break
            out.append(_Token("quoted", text[i + 1 : end].replace("``", "`"), i))
            i = end + 1
        elif c == "$":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            out.append(_Token("param", text[i + 1 : j], i))
            i = j
        elif c.isalpha() or c == "_":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            out.append(_Token("word", text[i:j], i))
            i = j
        elif c.isdigit():
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "._"):
                j += 1
            out.append(_Token("number", text[i:j], i))
            i = j
        else:
            out.append(_Token("punct", c, i))
            i += 1
    return out


def _is_keyword(tokens: list[_Token], i: int) -> bool:
    """A bare word is a clause keyword unless it is a property key (``n.set``), a label or relationship type
    (``:Create``), or a map key (``{set: 1}``)."""
    if i and tokens[i - 1].kind == "punct" and tokens[i - 1].value in ".:":
        return False
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    return not (nxt is not None and nxt.kind == "punct" and nxt.value == ":")


def _procedure(tokens: list[_Token], i: int) -> tuple[str | None, int]:
    """The dotted procedure name after the CALL at ``i`` (None for a subquery), and the index after it."""
    j = i + 1
    if j >= len(tokens) or (tokens[j].kind == "punct" and tokens[j].value in "{("):
        return None, j
    parts: list[str] = []
    while j < len(tokens) and tokens[j].kind in ("word", "quoted"):
        parts.append(tokens[j].value)
        j += 1
        if j < len(tokens) and tokens[j].kind == "punct" and tokens[j].value == ".":
            j += 1
            continue
        break
    if not parts:
        raise UnsafeQueryError("CALL must name a procedure or open a subquery")
    return ".".join(parts).lower(), j


def check_read_only(cypher: str) -> CheckedQuery:
    """Refuse (:class:`UnsafeQueryError`) anything but a single read-only statement calling only allowlisted
    procedures. This is layer 1 of the module docstring: the executor still has the database check the plan and
    run it read-only with a timeout."""
    if not isinstance(cypher, str) or not cypher.strip():
        raise UnsafeQueryError("cypher must be a non-empty string")
    if "\x00" in cypher:
        raise UnsafeQueryError("the Cypher statement contains a NUL character")
    tokens = _tokens(cypher)
    procedures: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind == "punct" and tok.value == ";" and any(t.kind != "punct" or t.value != ";"
                                                            for t in tokens[i + 1 :]):
            raise UnsafeQueryError("only one Cypher statement is allowed")
        if tok.kind != "word" or not _is_keyword(tokens, i):
            i += 1
            continue
        word = tok.value.upper()
        if word in _REFUSED:
            what = "LOAD CSV" if word == "LOAD" else word
            raise UnsafeQueryError(f"{what} is not allowed in read-only Cypher (only reads of the graph)")
        if word == "SHOW" and not any(t.kind == "word" and t.value.upper() in _SHOWABLE for t in tokens[i + 1 : i + 4]):
            raise UnsafeQueryError("only SHOW INDEXES / SHOW CONSTRAINTS are allowed in read-only Cypher")
        if word == "CALL":
            name, i = _procedure(tokens, i)
            if name is not None:
                if name not in ALLOWED_PROCEDURES:
                    raise UnsafeQueryError(f"procedure {name} is not allowed in read-only Cypher (allowed: "
                                           f"{', '.join(_ALLOWED)})")
                procedures.append(name)
            continue
        i += 1
    return CheckedQuery(cypher, tuple(procedures))


def _top_level(tokens: list[_Token]) -> list[tuple[int, str]]:
    """(index, upper-cased word) of the clause keywords outside every bracket, parenthesis and subquery."""
    out: list[tuple[int, str]] = []
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.kind == "punct":
            if tok.value in "([{":
                depth += 1
            elif tok.value in ")]}":
                depth -= 1
                if depth < 0:
                    raise UnsafeQueryError(f"unbalanced {tok.value!r} in the Cypher statement")
        elif tok.kind == "word" and depth == 0 and _is_keyword(tokens, i):
            out.append((i, tok.value.upper()))
    if depth:
        raise UnsafeQueryError("unbalanced brackets in the Cypher statement")
    return out


def cap_rows(query: CheckedQuery, limit: int, params: dict[str, object] | None = None) -> CheckedQuery:
    """``query`` rewritten so the database itself returns at most ``limit`` rows (layer 4 of the module docstring).

    A statement ending in ``RETURN`` without ``LIMIT`` gets ``LIMIT limit`` appended; a final ``LIMIT`` of a number
    or an integer parameter becomes the smaller of it and ``limit`` (written in its place); one ending in a computed
    ``LIMIT``, or a ``UNION``, is wrapped: ``CALL { ... } RETURN * LIMIT limit``. ``SHOW ...`` and
    standalone calls of schema procedures are bounded by the schema and run unchanged; a standalone index query
    (``CALL db.idx.fulltext.queryNodes(...)`` without ``YIELD ... RETURN``) cannot be capped and is refused.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise UnsafeQueryError(f"the row cap must be a non-negative int, got {limit!r}")
    tokens = _tokens(query.text)
    text = query.text
    while tokens and tokens[-1].kind == "punct" and tokens[-1].value == ";":  # the guard allows trailing ';'
        text = text[: tokens[-1].at]
        tokens = tokens[:-1]
    words = _top_level(tokens)
    if not words or words[0][1] == "SHOW":
        return CheckedQuery(text, query.procedures)
    names = [w for _, w in words]
    returns = [i for i, w in words if w == "RETURN"]
    if not returns:
        unbounded = [p for p in query.procedures if p not in _BOUNDED]
        if unbounded:
            raise UnsafeQueryError(f"a standalone CALL of {unbounded[0]} cannot be capped at {limit} rows: "
                                   "name its columns (CALL ... YIELD node, score RETURN node.id AS id, score)")
        return CheckedQuery(text, query.procedures)
    if "UNION" not in names:
        limits = [i for i, w in words if w == "LIMIT" and i > returns[-1]]
        if not limits:
            return CheckedQuery(f"{text}\nLIMIT {int(limit)}", query.procedures)
        after = tokens[limits[-1] + 1 :]
        if len(after) == 1:
            known = _known_int(after[0], params)
            if known is not None:  # a number (or an int parameter): the smaller of it and the cap, in its place
                tok = after[0]
                end = tok.at + len(tok.value) + (1 if tok.kind == "param" else 0)
                return CheckedQuery(f"{text[: tok.at]}{min(known, int(limit))}{text[end:]}", query.procedures)
    # the newlines keep a trailing // comment from swallowing the closing brace
    return CheckedQuery(f"CALL {{\n{text}\n}}\nRETURN * LIMIT {int(limit)}", query.procedures)


def _known_int(tok: _Token, params: dict[str, object] | None) -> int | None:
    """A LIMIT argument's value when it is a plain number or an integer parameter; None when computed."""
    if tok.kind == "number" and tok.value.isdigit():
        return int(tok.value)
    if tok.kind == "param" and params is not None:
        value = params.get(tok.value)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None
