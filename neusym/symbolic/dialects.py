"""Every difference between the Cypher of FalkorDB and Neo4j, as pure functions of a :class:`Dialect`.

Nothing else in NeuSym branches on the backend. Each function returns a statement (or a list of statements) that the
schema setup or the symbolic store runs with parameters; they are unit-tested as strings.
"""

from __future__ import annotations

import re
from enum import StrEnum

from neusym.language import regex as rx

__all__ = [
    "Dialect",
    "fulltext_index_statements",
    "fulltext_query_call",
    "fulltext_query_text",
    "index_statements",
    "is_duplicate_schema_error",
    "vector_index_dimension_query",
    "vector_index_ready_statement",
    "vector_index_statement",
    "vector_query_call",
    "vector_similarity_expr",
]


class Dialect(StrEnum):
    FALKORDB = "falkordb"
    NEO4J = "neo4j"


# (label, property) pairs with an exact-match/range index; ids and keys are unique by construction (MERGE on them).
_INDEXED: tuple[tuple[str, str], ...] = (
    ("Memory", "id"),
    ("Memory", "nid"),
    ("Memory", "seq"),
    ("Memory", "user_id"),
    ("Memory", "content_hash"),
    ("Memory", "status"),
    ("Memory", "chain_tail"),  # the last turn of each conversation session (CREATE_MEMORIES chains to it)
    ("Memory", "purge_at"),  # set only between the two statements of a hard delete (cypher.PURGE_MARK)
    ("Memory", "relink_at"),  # set only between the two statements of an edit (cypher.UPDATE_UNLINK)
    ("Entity", "uid"),
    ("Entity", "key"),
    ("Entity", "user_id"),
    ("Tombstone", "seq"),
    ("Counter", "name"),
    ("Audit", "memory_id"),
    ("Audit", "user_id"),
)
_UNIQUE: tuple[tuple[str, str], ...] = (
    ("Memory", "id"), ("Memory", "nid"), ("Entity", "uid"), ("Counter", "name"),
)


def index_statements(dialect: Dialect) -> list[str]:
    """Idempotent DDL for the range indexes (and, on Neo4j, uniqueness constraints)."""
    out: list[str] = []
    if dialect is Dialect.NEO4J:
        for label, prop in _UNIQUE:
            out.append(
                f"CREATE CONSTRAINT neusym_{label.lower()}_{prop}_unique IF NOT EXISTS "
                f"FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE"
            )
        for label, prop in _INDEXED:
            if (label, prop) in _UNIQUE:
                continue
            out.append(f"CREATE INDEX neusym_{label.lower()}_{prop} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})")
        return out
    # FalkorDB has no IF NOT EXISTS; "already indexed" errors are ignored by the schema setup.
    return [f"CREATE INDEX FOR (n:{label}) ON (n.{prop})" for label, prop in _INDEXED]


def fulltext_index_statements(dialect: Dialect) -> list[str]:
    if dialect is Dialect.NEO4J:
        return [
            "CREATE FULLTEXT INDEX neusym_memory_content IF NOT EXISTS FOR (m:Memory) ON EACH [m.content]",
        ]
    return ["CALL db.idx.fulltext.createNodeIndex('Memory', 'content')"]


def is_duplicate_schema_error(message: str) -> bool:
    """True for the error a backend raises when an index or constraint already exists."""
    msg = message.lower()
    return "already indexed" in msg or "already exists" in msg or "equivalent" in msg


_WORD = rx.compile(r"[\w']+", re.UNICODE)


def fulltext_query_text(dialect: Dialect, text: str, *, max_terms: int = 32) -> str:
    """Turn free text into a safe OR-query for the backend's fulltext engine (RediSearch or Lucene syntax).

    Only word characters survive, so no user text can reach the query parser as syntax.
    """
    terms = [t.strip("'") for t in _WORD.findall(text)]
    terms = [t for t in terms if t][:max_terms]
    if not terms:
        return ""
    if dialect is Dialect.NEO4J:
        # Lucene reads upper-case AND/OR/NOT as operators ("cats AND" is a parse error); the index's analyzer
        # lower-cases anyway, so lower-casing the terms changes nothing else.
        return " OR ".join(t.lower() for t in terms)
    return "|".join(v for t in terms for v in _case_variants(t))


def _case_variants(term: str) -> list[str]:
    """RediSearch folds only ASCII letters to lower case, at index and at query time, so "übermaß" would miss a
    stored "Übermaß" (Lucene on Neo4j folds all of Unicode). Searching the usual spellings of a non-ASCII term
    (as given, lower, capitalised, upper) makes FalkorDB's fulltext as case-insensitive as Neo4j's in practice."""
    if term.isascii():
        return [term]
    return list(dict.fromkeys([term, term.lower(), term[:1].upper() + term[1:].lower(), term.upper()]))


def fulltext_query_call(dialect: Dialect) -> str:
    """A CALL clause yielding ``node`` and ``score`` for the fulltext query in ``$ft_query``."""
    if dialect is Dialect.NEO4J:
        return "CALL db.index.fulltext.queryNodes('neusym_memory_content', $ft_query) YIELD node, score"
    return "CALL db.idx.fulltext.queryNodes('Memory', $ft_query) YIELD node, score"


def vector_index_statement(dialect: Dialect, dimension: int) -> str:
    """Native vector index over ``Memory.embedding_vec`` (the scale-out neural stage)."""
    if dialect is Dialect.NEO4J:
        return (
            "CREATE VECTOR INDEX neusym_memory_embedding IF NOT EXISTS FOR (m:Memory) ON (m.embedding_vec) "
            f"OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dimension)}, `vector.similarity_function`: 'cosine'}}}}"
        )
    return (
        "CREATE VECTOR INDEX FOR (m:Memory) ON (m.embedding_vec) "
        f"OPTIONS {{dimension: {int(dimension)}, similarityFunction: 'cosine'}}"
    )


def vector_index_dimension_query(dialect: Dialect) -> str | None:
    """A read query returning one row ``{dimension}`` for the existing vector index, or no row if there is none.

    Needed on Neo4j because ``CREATE VECTOR INDEX ... IF NOT EXISTS`` silently keeps an index of another dimension,
    after which vectors of the new size are skipped by the index without any error. ``None`` where the backend
    offers no such query.
    """
    if dialect is Dialect.NEO4J:
        return (
            "SHOW VECTOR INDEXES YIELD name, options WHERE name = 'neusym_memory_embedding' "
            "RETURN options.indexConfig.`vector.dimensions` AS dimension"
        )
    return None


def vector_index_ready_statement(dialect: Dialect) -> str | None:
    """A statement that returns once a just-created vector index is ONLINE (Neo4j populates indexes in the
    background and refuses to query one that is still populating). ``None`` where creation is synchronous."""
    if dialect is Dialect.NEO4J:
        return "CALL db.awaitIndex('neusym_memory_embedding', 300)"
    return None


def vector_similarity_expr(dialect: Dialect, var: str = "m") -> str:
    """Cosine similarity in [-1, 1] between ``{var}.embedding_vec`` and ``$vector``, computed exactly.

    The same number FAISS reports (inner product of unit vectors), so graph-side and in-process dense scores are
    interchangeable. Neo4j's ``vector.similarity.cosine`` is rescaled to [0, 1] as ``(1 + cos) / 2``; undo that.
    """
    if dialect is Dialect.NEO4J:
        return f"(2.0 * vector.similarity.cosine({var}.embedding_vec, $vector) - 1.0)"
    return f"(1.0 - vec.cosineDistance({var}.embedding_vec, vecf32($vector)))"


def vector_query_call(dialect: Dialect) -> str:
    """A CALL clause yielding ``node`` and ``score`` (cosine similarity in [-1, 1], higher is closer) for the
    ``$top`` approximate nearest neighbours of ``$vector``.

    On Neo4j the index's own score is a rescaled similarity (and coarse for negative cosines), so the score is
    recomputed exactly for the ``$top`` nodes with :func:`vector_similarity_expr`: ranks and numbers then match
    an exact search and FAISS.
    """
    if dialect is Dialect.NEO4J:
        return (
            "CALL db.index.vector.queryNodes('neusym_memory_embedding', $top, $vector) YIELD node "
            f"WITH node, {vector_similarity_expr(dialect, 'node')} AS score"
        )
    return (
        "CALL db.idx.vector.queryNodes('Memory', 'embedding_vec', $top, vecf32($vector)) YIELD node, score "
        "WITH node, 1.0 - score AS score"
    )
