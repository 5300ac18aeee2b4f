"""Import: JSON Lines, plain chat logs and LoCoMo JSON into memories (``mem.import_file``, ``neusym import``).

Unlike a restore (:mod:`neusym.backup`), an import brings *new* data in, so the file is not trusted:

* **The caller's scope wins.** Every scope id the caller gives (``user_id``/``agent_id``/``session_id``) replaces
  whatever a line says; ids the caller leaves open may come from the file (a chat log's sessions), except the
  tenant: a file may only choose ``user_id`` in an operator import (``all_tenants=True``), never by itself. The
  report counts the lines whose ids were overridden.
* **Trust is not taken from the file.** Everything imported is stored with origin ``import`` (assistant turns
  ``agent``), which governance trusts a little less than the user's own words; a line's trust fields (``origin``
  and ``confidence``: admission scores confidence x source trust) are ignored, and counted, unless the caller
  passes ``trust_file_origin=True``.
* **Parsed completely before anything is written**, so a malformed line stops the import with its line number and
  nothing half-imported. Every item then goes through the normal write path (extraction, governance): conversation
  turns through :meth:`NeuSymMemory.add` one by one (so consecutive turns are linked ``NEXT`` and keep their own
  event time), plain statements through :meth:`NeuSymMemory.add_batch` in chunks.

Formats
    jsonl   one JSON object per line, either a statement ``{"content": ..., "type"?, "tags"?, "metadata"?,
            "importance"?, "confidence"?, "valid_from"?, "ttl"?, "speaker"?, "ref"?, "infer"?, scope ids?}``,
            a chat message ``{"role": "user"|"assistant", "content": ..., "name"?, "valid_from"?, "ref"?,
            scope ids?}``, or ``{"messages": [...], scope ids?}``. Blank lines and ``//`` comments are skipped.
    chat    ``Name: message`` lines, optionally ``[2024-03-01 10:02] Name: message``; a line like
            ``--- session s2 ---`` / ``## session 2`` / ``=== s2 ===`` starts a session; other lines continue the
            previous message; ``# ...`` lines are comments. ``assistant``/``ai``/``bot`` (or ``assistant=``)
            speak as the assistant.
    locomo  the LoCoMo benchmark JSON: one tenant per sample (``user_id`` = sample id in an operator import,
            else the caller's), one session per LoCoMo session, each turn ``Speaker: text`` with the session time
            as ``valid_from`` and the ``dia_id`` as ``source.ref``.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from neusym.errors import InvalidInputError, ScopeError
from neusym.language import regex as rx
from neusym.record import Scope, validate_label, validate_text

if TYPE_CHECKING:
    from neusym.engine import Engine

__all__ = ["FORMATS", "ORIGINS", "ImportItem", "ImportReport", "detect_format", "import_file", "parse_chat",
           "parse_jsonl", "parse_locomo", "parse_text"]

FORMATS = ("auto", "jsonl", "chat", "locomo")
ORIGINS = ("user", "agent", "tool", "import", "reflection", "system")
"""Origins a line may carry when the caller trusts the file's (``trust_file_origin=True``)."""
TRUST_FIELDS = ("origin", "confidence")
"""What a line may claim about its own trustworthiness; ignored unless the caller trusts the file."""

_SCOPE_KEYS = ("user_id", "agent_id", "session_id")
_STATEMENT_KEYS = {"content", "type", "tags", "metadata", "importance", "confidence", "valid_from", "ttl", "speaker",
                   "ref", "infer", "origin", *_SCOPE_KEYS}
_MESSAGE_KEYS = {"role", "content", "name", "speaker", "valid_from", "ref", *_SCOPE_KEYS}
_ALIASES = {"text": "content", "timestamp": "valid_from", "time": "valid_from", "date": "valid_from",
            "id": "ref", "message_id": "ref", "dia_id": "ref"}
_ASSISTANTS = {"assistant", "ai", "bot", "agent", "model", "chatbot"}


@dataclass
class ImportItem:
    """One write: a statement (batched) or a conversation turn (added on its own, chained)."""

    content: str
    kwargs: dict[str, Any]
    turn: bool
    where: str
    role: str = "user"


@dataclass
class ImportReport:
    """What an import read and stored; ``decisions`` counts governance's actions (store, merge, quarantine...)."""

    file: str
    format: str
    items: int = 0
    turns: int = 0
    statements: int = 0
    sessions: int = 0
    tenants: int = 0
    stored: int = 0
    decisions: dict[str, int] = field(default_factory=dict)
    ignored_fields: list[str] = field(default_factory=list)
    scope_overridden: int = 0  # items whose file scope ids were replaced by the caller's
    trust_ignored: int = 0  # items whose origin/confidence were ignored (trust_file_origin=False)
    dry_run: bool = False
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


# ---------------------------------------------------------------------------------------------------- helpers
def _when(value: Any, where: str) -> datetime | float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidInputError(f"{where}: valid_from must be a time, got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError as err:
            raise InvalidInputError(f"{where}: valid_from {value!r} is not ISO-8601 or epoch seconds") from err
        return dt if dt.tzinfo else dt.replace(tzinfo=UTC)
    raise InvalidInputError(f"{where}: valid_from must be ISO-8601 text or epoch seconds")


def _scope_value(obj: dict[str, Any], key: str, where: str) -> str | None:
    v = obj.get(key)
    if v is None:
        return None
    if not isinstance(v, str) or not v.strip():
        raise InvalidInputError(f"{where}: {key} must be a non-empty string")
    return _label(v, where, key)


def _label(value: Any, where: str, what: str) -> str:
    """A file's id for something (a scope id, a message id kept as ``source.ref``): one printable line, bounded
    (:func:`neusym.record.validate_label`), so it can be shown or logged as it is."""
    try:
        return validate_label(str(value), what)
    except InvalidInputError as err:
        raise InvalidInputError(f"{where}: {err}") from err


def _role(name: str | None, assistant: str | None) -> str:
    low = (name or "").strip().lower()
    if low in _ASSISTANTS or (assistant is not None and low == assistant.strip().lower()):
        return "assistant"
    if low == "system":
        return "system"
    return "user"


# ---------------------------------------------------------------------------------------------------- jsonl
def parse_jsonl(text: str, name: str, ignored: set[str]) -> list[ImportItem]:
    items: list[ImportItem] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        where = f"{name}:{n}"
        if not line or line.startswith("//"):
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as err:  # RecursionError: nested deeper than the parser goes
            raise InvalidInputError(f"{where}: not valid JSON ({_json_error(err)})") from err
        if not isinstance(obj, dict):
            raise InvalidInputError(f"{where}: expected a JSON object")
        if obj.get("kind") == "header" and obj.get("format") == "neusym-export":
            raise InvalidInputError(f"{where}: this is a NeuSym export; use `neusym restore`")
        obj = {_ALIASES.get(k, k): v for k, v in obj.items()}
        scope: dict[str, Any] = {}
        for key in _SCOPE_KEYS:
            value = _scope_value(obj, key, where)
            if value is not None:
                scope[key] = value
        if "messages" in obj:
            msgs = obj["messages"]
            if not isinstance(msgs, list) or not msgs:
                raise InvalidInputError(f"{where}: messages must be a non-empty list")
            for i, m in enumerate(msgs):
                if not isinstance(m, dict):
                    raise InvalidInputError(f"{where}: message {i} must be an object")
                merged: dict[str, Any] = dict(scope)
                merged.update({str(_ALIASES.get(str(k), str(k))): v for k, v in m.items()})
                items.append(_message(merged, f"{where} message {i}", ignored))
            ignored.update(k for k in obj if k not in {"messages", *_SCOPE_KEYS})
        elif "role" in obj:
            items.append(_message(obj, where, ignored))
        else:
            items.append(_statement(obj, where, ignored))
    return items


def _message(obj: dict[str, Any], where: str, ignored: set[str]) -> ImportItem:
    text = validate_text(obj.get("content"), field=f"{where} content")
    role = str(obj.get("role") or "user").lower()
    role = {"human": "user", "ai": "assistant", "model": "assistant", "bot": "assistant"}.get(role, role)
    if role not in ("user", "assistant", "system", "tool"):
        raise InvalidInputError(f"{where}: unknown role {obj.get('role')!r}")
    name = obj.get("name") or obj.get("speaker")
    if name is not None and not isinstance(name, str):
        raise InvalidInputError(f"{where}: name must be a string")
    kwargs: dict[str, Any] = {k: obj[k] for k in _SCOPE_KEYS if obj.get(k) is not None}
    kwargs["valid_from"] = _when(obj.get("valid_from"), where)
    if obj.get("ref") is not None:
        kwargs["ref"] = _label(obj["ref"], where, "ref")
    kwargs["name"] = name or role
    ignored.update(k for k in obj if k not in _MESSAGE_KEYS)
    return ImportItem(text, kwargs, True, where, role)


def _statement(obj: dict[str, Any], where: str, ignored: set[str]) -> ImportItem:
    text = validate_text(obj.get("content"), field=f"{where} content")
    kwargs: dict[str, Any] = {k: v for k, v in obj.items() if k in _STATEMENT_KEYS and k != "content"
                              and v is not None}
    if "valid_from" in kwargs:
        kwargs["valid_from"] = _when(kwargs["valid_from"], where)
    if "tags" in kwargs and (not isinstance(kwargs["tags"], list)
                             or not all(isinstance(t, str) for t in kwargs["tags"])):
        raise InvalidInputError(f"{where}: tags must be a list of strings")
    if "metadata" in kwargs and not isinstance(kwargs["metadata"], dict):
        raise InvalidInputError(f"{where}: metadata must be an object")
    for key in ("importance", "confidence", "ttl"):
        if key in kwargs and (isinstance(kwargs[key], bool) or not isinstance(kwargs[key], int | float)):
            raise InvalidInputError(f"{where}: {key} must be a number")
    if "ref" in kwargs:
        kwargs["ref"] = _label(kwargs["ref"], where, "ref")
    ignored.update(k for k in obj if k not in _STATEMENT_KEYS)
    return ImportItem(text, kwargs, False, where)


# ---------------------------------------------------------------------------------------------------- chat
_SEPARATOR = rx.compile(r"^\s*(?:-{3,}|={3,}|#{2,})\s*(?:session\b\s*[:#]?\s*)?(?P<sid>.*?)\s*(?:-{3,}|={3,})?\s*$",
                        re.IGNORECASE)
_TURN = rx.compile(r"^\s*(?:\[(?P<ts>[^\]]{4,40})\]\s*)?(?P<name>[^\s:\[\]][^:\[\]]{0,39}?)\s*:\s+(?P<text>\S.*)$")


def parse_chat(text: str, name: str, *, session: str | None, assistant: str | None) -> list[ImportItem]:
    items: list[ImportItem] = []
    stem = Path(name).stem or "chat"
    current = session or stem
    count = 0
    cur: ImportItem | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        where = f"{name}:{n}"
        if not raw.strip():
            continue
        sep = _SEPARATOR.match(raw)
        if sep:
            count += 1
            sid = sep.group("sid").strip() or f"{stem}-{count}"
            current = f"{session}/{sid}" if session else sid
            cur = None
            continue
        if raw.lstrip().startswith("#"):
            continue
        m = _TURN.match(raw)
        if m:
            speaker = m.group("name").strip()
            role = _role(speaker, assistant)
            ts = m.group("ts")
            when: datetime | float | None = None
            if ts:
                try:
                    when = _when(ts.strip().replace(" ", "T", 1) if rx.match(r"^\d{4}-\d\d-\d\d \d", ts.strip())
                                 else ts, where)
                except InvalidInputError:
                    when = None
            low = speaker.lower()
            label = speaker if low not in ("user", "human", *_ASSISTANTS) else role
            cur = ImportItem(m.group("text").strip(), {"session_id": current, "valid_from": when, "name": label},
                             True, where, role)
            items.append(cur)
        elif cur is not None:
            cur.content = f"{cur.content}\n{raw.strip()}"
        else:
            raise InvalidInputError(f"{where}: expected 'Name: message' (or a '--- session ---' line)")
    for it in items:
        it.content = validate_text(it.content, field=f"{it.where} message")
    return items


# ---------------------------------------------------------------------------------------------------- locomo
_LOCOMO_SESSION = rx.compile(r"^session_(\d+)$")


def _locomo_when(text: Any, where: str) -> datetime:
    """LoCoMo session stamps look like ``1:56 pm on 8 May, 2023``."""
    try:
        return datetime.strptime(str(text).strip().upper().replace("  ", " "),
                                 "%I:%M %p ON %d %B, %Y").replace(tzinfo=UTC)
    except ValueError as err:
        raise InvalidInputError(f"{where}: cannot read the session time {text!r}") from err


def parse_locomo(data: Any, name: str, *, user: str | None) -> list[ImportItem]:
    samples = data if isinstance(data, list) else [data]
    items: list[ImportItem] = []
    for k, rec in enumerate(samples):
        where = f"{name}: sample {k}"
        if not isinstance(rec, dict) or not isinstance(rec.get("conversation"), dict):
            raise InvalidInputError(f"{where}: not a LoCoMo sample (no 'conversation' object)")
        sid = _label(rec.get("sample_id") or f"conv-{k}", where, "sample_id")
        conv = rec["conversation"]
        sessions = sorted((int(m.group(1)), key) for key in conv if (m := _LOCOMO_SESSION.match(key)))
        for n, key in sessions:
            turns = conv.get(key) or []
            if not turns:
                continue
            if not isinstance(turns, list):
                raise InvalidInputError(f"{where}: {key} must be a list of turns")
            start = _locomo_when(conv.get(f"{key}_date_time"), f"{where} {key}")
            for i, t in enumerate(turns):
                tw = f"{where} {key} turn {i}"
                if not isinstance(t, dict) or not t.get("speaker"):
                    raise InvalidInputError(f"{tw}: a turn needs a speaker and text")
                text = str(t.get("text") or "").strip()
                if t.get("blip_caption"):
                    text = f"{text} [image: {t['blip_caption']}]".strip()
                if not text:
                    continue
                kwargs: dict[str, Any] = {"user_id": user or sid, "session_id": f"{sid}/S{n}",
                                          "valid_from": start + timedelta(seconds=i), "name": str(t["speaker"])}
                if t.get("dia_id"):
                    kwargs["ref"] = _label(t["dia_id"], tw, "dia_id")
                items.append(ImportItem(validate_text(text, field=tw), kwargs, True, tw, "user"))
    return items


# ---------------------------------------------------------------------------------------------------- entry points
def detect_format(path: Path, text: str) -> str:
    """By extension first, then by content."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    head = text.lstrip()[:4096]
    if suffix == ".json" or head.startswith("["):
        return "locomo" if '"conversation"' in text[:200_000] else "jsonl"
    if head.startswith("{"):
        first = head.splitlines()[0] if head else ""
        try:
            json.loads(first)
            return "jsonl"
        except RecursionError:
            return "jsonl"  # an object per line after all; parse_jsonl says what is wrong with it
        except ValueError:
            return "locomo" if '"conversation"' in text[:200_000] else "jsonl"
    return "chat"


def parse_text(text: str, name: str, fmt: str, *, session: str | None = None, user: str | None = None,
               assistant: str | None = None, ignored: set[str] | None = None) -> tuple[str, list[ImportItem]]:
    """Parse ``text`` (named ``name`` in messages) as ``fmt`` (``auto`` detects it); returns (format, items)."""
    ignored = ignored if ignored is not None else set()
    if fmt not in FORMATS:
        raise InvalidInputError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt == "auto":
        fmt = detect_format(Path(name), text)
    if fmt == "jsonl":
        stripped = text.lstrip()
        if stripped.startswith("["):  # a JSON array of the same objects is accepted too
            try:
                arr = json.loads(stripped)
            except (ValueError, RecursionError) as err:
                raise InvalidInputError(f"{name}: not valid JSON ({_json_error(err)})") from err
            text = "\n".join(json.dumps(x) for x in arr)
        return fmt, parse_jsonl(text, name, ignored)
    if fmt == "chat":
        return fmt, parse_chat(text, name, session=session, assistant=assistant)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise InvalidInputError(f"{name}: not valid JSON ({_json_error(err)})") from err
    return fmt, parse_locomo(data, name, user=user)


def _json_error(err: BaseException) -> str:
    if isinstance(err, RecursionError):
        return "nested too deeply: JSON values may nest at most about 1,000 levels"
    return str(err)[:120]


def _read(source: str | os.PathLike[str] | IO[str]) -> tuple[str, str]:
    if isinstance(source, str | os.PathLike):
        path = Path(source).expanduser()
        if not path.is_file():
            raise InvalidInputError(f"no such file: {source}")
        try:
            return path.read_text(encoding="utf-8"), str(source)
        except UnicodeDecodeError as err:
            raise InvalidInputError(f"{source} is not UTF-8 text: {err}") from err
    return source.read(), str(getattr(source, "name", None) or "import")


def _origin(value: Any, where: str) -> str:
    if value not in ORIGINS:
        raise InvalidInputError(f"{where}: origin must be one of {', '.join(ORIGINS)}, got {value!r}"[:300])
    return str(value)


def import_file(mem: Engine, source: str | os.PathLike[str] | IO[str], *, scope: Scope | None,
                all_tenants: bool = False, fmt: str = "auto", infer: bool = True, batch: int = 256,
                assistant: str | None = None, trust_file_origin: bool = False, dry_run: bool = False,
                max_items: int | None = None, progress: Callable[[int, int], None] | None = None) -> ImportReport:
    """Parse ``source`` completely, then write its items into ``scope`` (see the module docstring for the rules).

    ``scope`` holds the ids the caller gave (``None``/empty: none); with ``all_tenants`` the file's ``user_id``
    values are kept where the caller gives none (an operator loading several tenants), otherwise a file naming a
    tenant the caller did not is refused before anything is written. ``max_items`` refuses a larger file, also
    before anything is written.
    """
    started = time.perf_counter()
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= 10_000:
        raise InvalidInputError("batch must be an int between 1 and 10000")
    given = {k: v for k, v in (scope.as_params() if scope is not None else {}).items() if v is not None}
    text, name = _read(source)
    ignored: set[str] = set()
    fmt, items = parse_text(text, name, fmt.lower(), session=given.get("session_id"), user=given.get("user_id"),
                            assistant=assistant, ignored=ignored)
    if not items:
        raise InvalidInputError(f"{name}: nothing to import")
    if max_items is not None and len(items) > max_items:
        raise InvalidInputError(f"{name}: {len(items)} items; at most {max_items} per import")
    report = ImportReport(file=name, format=fmt, items=len(items), dry_run=dry_run, ignored_fields=sorted(ignored))
    if "user_id" not in given and not all_tenants:
        named = sorted({str(it.kwargs["user_id"]) for it in items if it.kwargs.get("user_id")})
        if named:
            raise ScopeError(f"{name} names tenant(s) {named[:5]}; pass user_id to import everything into one tenant, "
                             "or all_tenants=True (operators) to keep the file's tenants")
        if fmt == "locomo":
            raise ScopeError("a LoCoMo file holds one tenant per sample; pass user_id, or all_tenants=True to keep "
                             "the sample ids as tenants")
        # the memory's configured default tenant (a ScopeError where there is none), so a line that names only a
        # session or an agent never becomes a memory without a tenant
        given["user_id"] = str(mem.scope(None, what="import").user_id)
    for it in items:
        if any(k in given and it.kwargs.get(k) not in (None, given[k]) for k in _SCOPE_KEYS):
            report.scope_overridden += 1
        it.kwargs.update(given)
        if trust_file_origin:
            if "origin" in it.kwargs:
                it.kwargs["origin"] = _origin(it.kwargs["origin"], it.where)
        elif any(k in it.kwargs for k in TRUST_FIELDS):
            report.trust_ignored += 1
            for key in TRUST_FIELDS:
                it.kwargs.pop(key, None)
        if all_tenants and "user_id" not in given and not it.kwargs.get("user_id"):
            raise ScopeError(f"{it.where}: no user_id; an operator import keeps each line's tenant, so each line "
                             "needs one (or pass user_id)")
    report.turns = sum(1 for i in items if i.turn)
    report.statements = report.items - report.turns
    scopes = {(i.kwargs.get("user_id"), i.kwargs.get("session_id")) for i in items}
    report.sessions = len({s for _, s in scopes if s})
    report.tenants = len({u for u, _ in scopes})
    if not dry_run:
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n
            if progress is not None:
                progress(done, len(items))

        _write(mem, items, infer=infer, batch=batch, report=report, advance=advance)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _write(mem: Engine, items: Sequence[ImportItem], *, infer: bool, batch: int, report: ImportReport,
           advance: Callable[[int], None]) -> None:
    """Write ``items`` in order (each item's kwargs already carry its final scope ids and origin)."""
    decisions: Counter[str] = Counter()
    chunk: list[dict[str, Any]] = []

    def flush() -> None:
        if not chunk:
            return
        res = mem.add_batch(list(chunk))
        report.stored += len(res)
        decisions.update(d.action.value for d in res.decisions)
        advance(len(chunk))
        chunk.clear()

    for it in items:
        if not it.turn:
            chunk.append({"infer": infer, "origin": "import", **it.kwargs, "content": it.content})
            if len(chunk) >= batch:
                flush()
            continue
        flush()
        kw = {k: v for k, v in it.kwargs.items() if k != "name" and v is not None}
        scope = {k: kw.pop(k) for k in _SCOPE_KEYS if k in kw}
        res = mem.add([{"role": it.role, "content": it.content, "name": it.kwargs.get("name")}], infer=infer,
                      origin="import", scope=scope, **kw)
        report.stored += len(res)
        decisions.update(d.action.value for d in res.decisions)
        advance(1)
    flush()
    report.decisions = dict(sorted(decisions.items()))
