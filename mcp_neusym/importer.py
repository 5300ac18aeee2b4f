"""``import_memories``' engine call: text in, memories written into the connection's scope, progress per batch.

The text comes from the model, so nothing in it is trusted: the connection's user (and configured agent) replace any
scope id a line names, and trust fields (``origin``, ``confidence``) are dropped. Parsing reuses the CLI's importers
and is complete before anything is written (a malformed line stops the import with its line number).

TODO(transfer): when the library import (``mem.import_file``, branch ``transfer``) is on main, this whole module
becomes one call with the same rules, and ``neusym.cli.importers`` no longer exists::

    report = mem.import_file(io.StringIO(text), format=fmt, scope=scope, infer=infer, batch=BATCH,
                             progress=progress)
    return ImportOut(format=report.format, items=report.items, turns=report.turns, statements=report.statements,
                     stored=report.stored, decisions=dict(report.decisions),
                     ignored_fields=list(report.ignored_fields), replaced_scope_fields=report.scope_overridden,
                     seconds=report.seconds)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from mcp_neusym.models import ImportOut
from neusym.cli.importers import (
    ImportItem,
    ImportSummary,
    detect_format,
    parse_chat,
    parse_jsonl,
    parse_locomo,
    run_import,
)
from neusym.errors import InvalidInputError
from neusym.facade import NeuSymMemory
from neusym.record import Scope

__all__ = ["BATCH", "MAX_IMPORT_ITEMS", "import_text"]

BATCH = 64  # statements per write: small enough that progress moves on a slow machine
MAX_IMPORT_ITEMS = 50_000
_UNTRUSTED_FIELDS = ("origin", "confidence")  # trust a file (the model's text) must not set for itself
_NAME = "import"  # also the default session name of a chat log without separators


def _parse(text: str, fmt: str, user_id: str, session_id: str | None,
           ignored: set[str]) -> tuple[str, list[ImportItem]]:
    if fmt == "auto":
        fmt = detect_format(Path(_NAME), text)
    if fmt == "jsonl":
        stripped = text.lstrip()
        if stripped.startswith("["):
            try:
                text = "\n".join(json.dumps(x) for x in json.loads(stripped))
            except (ValueError, TypeError, RecursionError) as err:
                raise InvalidInputError(f"not valid JSON ({str(err)[:120]})") from None
        return fmt, parse_jsonl(text, _NAME, ignored)
    if fmt == "chat":
        return fmt, parse_chat(text, _NAME, session=session_id, assistant=None)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise InvalidInputError(f"not valid JSON ({str(err)[:120]})") from None
    return fmt, parse_locomo(data, _NAME, user=user_id)


def _pin_scope(items: list[ImportItem], given: dict[str, str]) -> int:
    """The caller's ids win over the text's; returns how many lines named a different id."""
    replaced = 0
    for it in items:
        replaced += any(it.kwargs.get(k) not in (None, v) for k, v in given.items())
        it.kwargs.update(given)
        for key in _UNTRUSTED_FIELDS:
            it.kwargs.pop(key, None)
    return replaced


def import_text(mem: NeuSymMemory, text: str, *, fmt: str, scope: Scope, infer: bool,
                progress: Callable[[int, int], None]) -> ImportOut:
    """Parse ``text`` completely, then write it into ``scope`` (its set ids replace the text's)."""
    started = time.perf_counter()
    given: dict[str, str] = {k: v for k, v in scope.as_params().items() if v is not None}
    if "user_id" not in given:
        raise InvalidInputError("an import needs the connection's user")
    ignored: set[str] = set()
    fmt, items = _parse(text, fmt, given["user_id"], given.get("session_id"), ignored)
    if not items:
        raise InvalidInputError("nothing to import in that text")
    if len(items) > MAX_IMPORT_ITEMS:
        raise InvalidInputError(f"{len(items)} items; one call imports at most {MAX_IMPORT_ITEMS}")
    replaced = _pin_scope(items, given)
    summary = ImportSummary(file=_NAME, format=fmt, items=len(items), ignored_fields=sorted(ignored))
    summary.turns = sum(1 for i in items if i.turn)
    summary.statements = summary.items - summary.turns
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        progress(done, len(items))

    run_import(mem, items, defaults=dict(given), infer=infer, batch=BATCH, summary=summary, advance=advance)
    return ImportOut(format=fmt, items=summary.items, turns=summary.turns, statements=summary.statements,
                     stored=summary.stored, decisions=dict(summary.decisions), ignored_fields=summary.ignored_fields,
                     replaced_scope_fields=replaced, seconds=round(time.perf_counter() - started, 3))
