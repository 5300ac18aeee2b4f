"""``import_memories``' engine call: text in, memories written into the connection's scope, progress per batch.

The text comes from the model, so nothing in it is trusted; the library import (:mod:`neusym.importing`) has the
rules: the connection's user (and configured agent) replace any scope id a line names, and trust fields
(``origin``, ``confidence``) are dropped. Parsing is complete before anything is written (a malformed line stops
the import with its line number).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp_neusym.models import ImportOut
from neusym.errors import InvalidInputError
from neusym.record import Scope

if TYPE_CHECKING:
    from neusym.facade import NeuSymMemory

__all__ = ["BATCH", "MAX_IMPORT_ITEMS", "import_text"]

BATCH = 64  # statements per write: small enough that progress moves on a slow machine
MAX_IMPORT_ITEMS = 50_000


def import_text(mem: NeuSymMemory, text: str, *, fmt: str, scope: Scope, infer: bool,
                progress: Callable[[int, int], None]) -> ImportOut:
    """Parse ``text`` completely, then write it into ``scope`` (its set ids replace the text's)."""
    if scope.user_id is None:
        raise InvalidInputError("an import needs the connection's user")
    report = mem.import_file(io.StringIO(text), format=fmt, scope=scope, infer=infer, batch=BATCH,
                             max_items=MAX_IMPORT_ITEMS, progress=progress)
    return ImportOut(format=report.format, items=report.items, turns=report.turns, statements=report.statements,
                     stored=report.stored, decisions=dict(report.decisions),
                     ignored_fields=list(report.ignored_fields), replaced_scope_fields=report.scope_overridden,
                     seconds=report.seconds)
